"""Root pytest configuration: what the doctest collector must not import as a test module.

`tensordispatch.ops` answers every attribute with an operator namespace, as torch.ops does,
so pytest's probe for a module-level `pytest_plugins` would get a namespace object back.
Its behaviour is tested in tests/dispatch instead.
"""

collect_ignore = ["src/tensordispatch/ops/__init__.py"]
