"""The part of the package metadata pyproject.toml cannot state: the `test` extra.

`pip install -e ".[test]"` installs the test tools, torch 2.13 (the reference oracle of the
conformance tests; the library never imports it) and the example external backend
examples/torchdev (issue 6). A local project can only be a dependency through a direct
reference with an absolute ``file://`` URL, so it is computed here from this file's location.
Everything else is in pyproject.toml.
"""

from pathlib import Path

from setuptools import setup

EXAMPLES = Path(__file__).resolve().parent / "examples"

TEST = [
    "pytest>=7.4",
    "hypothesis>=6.80",
    "torch==2.13.0",
    "expecttest",
    f"torchdev @ {(EXAMPLES / 'torchdev').as_uri()}",
]

setup(extras_require={"test": TEST})
