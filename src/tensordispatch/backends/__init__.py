"""Backends: CPU kernels over NumPy, Meta (shape/dtype inference), the boxed CPU fallback."""
