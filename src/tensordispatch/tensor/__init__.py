"""Tensor, dtypes, devices, storage with version counters, printing, NumPy/DLPack interop."""
