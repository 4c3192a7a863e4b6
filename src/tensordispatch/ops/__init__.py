"""The operator library's data (native_functions.yaml) and, later, the `ops.<ns>` namespaces."""
