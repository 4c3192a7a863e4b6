"""Code generation from native_functions.yaml to Python entry points and registrations."""
