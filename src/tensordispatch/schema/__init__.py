"""The function-schema language and the native_functions.yaml model (pure data, no dispatch)."""
