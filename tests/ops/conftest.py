"""Helpers of the operator conformance tests: one namespace per library, conversion, result
comparison against torch, and the coverage table printed at the end of the session."""

from __future__ import annotations

import collections
import types
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch._api as tdapi
import tensordispatch.ops as tdops
import tensordispatch.tensor as tdt

# op label -> [passed, run]
COVERAGE: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])


def _namespace() -> types.SimpleNamespace:
    ns = types.SimpleNamespace()
    for name in tdt.__all__:
        setattr(ns, name, getattr(tdt, name))
    for name in tdapi.__all__:
        setattr(ns, name, getattr(tdapi, name))
    ns.ops = tdops
    ns.Tensor = tdt.Tensor
    return ns


TD = _namespace()
LIBS = {"torch": torch, "td": TD}


def dtype_of(lib: Any, name: str) -> Any:
    return getattr(lib, name)


def same_dtype(t: Any, d: Any) -> bool:
    return str(t.dtype).split(".")[-1] == str(d).split(".")[-1]


_TOL = {
    "float16": (1e-3, 1e-3),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


def assert_same_result(expected: Any, got: Any, *, values: bool = True, where: str = "") -> None:
    """Compare a torch result with a tensordispatch one: type, dtype, shape, strides, values."""
    if isinstance(expected, torch.Tensor):
        assert isinstance(got, tdt.Tensor), f"{where}: expected a Tensor, got {type(got)}"
        name = str(expected.dtype).split(".")[-1]
        assert got.dtype.name == name, f"{where}: dtype {got.dtype} != torch.{name}"
        assert tuple(got.shape) == tuple(expected.shape), f"{where}: shape {got.shape}"
        assert got.stride() == expected.stride(), (
            f"{where}: strides {got.stride()} != {expected.stride()}"
        )
        if values and expected.device.type == "cpu":
            e = expected.detach().resolve_conj().resolve_neg().numpy()  # lazy conj views
            g = np.asarray(got.detach().resolve_conj().resolve_neg().numpy())
            rtol, atol = _TOL.get(name, (0, 0))
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, equal_nan=True, err_msg=where)
        return
    if isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(expected), where
        for e, g in zip(expected, got):
            assert_same_result(e, g, values=values, where=where)
        return
    assert got == expected, f"{where}: {got!r} != {expected!r}"


def run_both(
    fn: Callable[[Any, str], Any], device: str, torch_device: str | None = None
) -> tuple[Any, Any]:
    """(torch result or exception, tensordispatch result or exception) of one sample; torch
    runs on ``torch_device`` when given (the oracle of a check torch's meta path lacks)."""
    results = []
    categories = []
    for lib, dev in ((torch, torch_device or device), (TD, device)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                results.append(fn(lib, dev))
            except Exception as e:  # noqa: BLE001 - the exception is the result compared
                results.append(e)
        categories.append(sorted({w.category.__name__ for w in caught}))
    assert categories[0] == categories[1], f"warnings: torch {categories[0]}, ours {categories[1]}"
    return results[0], results[1]


@pytest.fixture
def coverage() -> dict[str, list[int]]:
    return COVERAGE


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not COVERAGE:
        return
    tr = terminalreporter
    tr.section("operator conformance coverage (samples passed / run)")
    for op in sorted(COVERAGE):
        passed, run = COVERAGE[op]
        tr.write_line(f"  {op:<28} {passed:>3} / {run:<3}")
    total = [sum(v[0] for v in COVERAGE.values()), sum(v[1] for v in COVERAGE.values())]
    tr.write_line(f"  {'total':<28} {total[0]:>3} / {total[1]:<3}")


def sample_ids(samples: list[tuple[str, Any, str]]) -> list[str]:
    """Test ids ``op-1, op-2, ...`` numbering each operator's samples in order."""
    seen: dict[str, int] = {}
    ids = []
    for op, _, _ in samples:
        seen[op] = seen.get(op, 0) + 1
        ids.append(f"{op}-{seen[op]}")
    return ids


def check_sample(
    op: str, fn: Any, device: str, values: bool, cov: Any, torch_device: str | None = None
) -> None:
    """Run one sample on torch and on tensordispatch and compare, counting it in ``cov``.

    Both raise the same exception type, or both return results that agree in dtype, shape,
    strides (and values unless ``values`` is false). ``torch_device`` runs torch's side on
    another device (its meta path checks differently from its CPU kernels for some ops).
    """
    cov[op][1] += 1
    expected, got = run_both(fn, device, torch_device)
    if isinstance(expected, BaseException):
        assert isinstance(got, BaseException), f"torch raised {expected!r}; we returned {got!r}"
        assert isinstance(got, type(expected)), f"torch raised {expected!r}; we raised {got!r}"
    else:
        if isinstance(got, BaseException):
            raise got
        assert_same_result(expected, got, values=values, where=op)
    cov[op][0] += 1
