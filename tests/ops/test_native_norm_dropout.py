"""native_layer_norm and native_dropout with their autogen out= variants (multi-output: the
codegen resizes and copies into every out and returns the tuple of outs), against torch 2.13
on 'cpu' and 'meta'. native_dropout's values are random (streams differ from torch's by
design), so it is compared on shapes/dtypes/strides and checked statistically.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tests.ops.conftest import check_sample, sample_ids

SAMPLES: list[tuple[str, Callable[[Any, str], Any], str]] = []
_RNG = np.random.default_rng(3)
X = _RNG.standard_normal((2, 3, 4)).round(3).tolist()
W = _RNG.standard_normal((3, 4)).round(3).tolist()
B = _RNG.standard_normal((3, 4)).round(3).tolist()


def T(lib: Any, data: Any, dtype: str = "float32", device: str = "cpu") -> Any:
    return lib.tensor(data, dtype=getattr(lib, dtype), device=device)


def A(lib: Any) -> Any:
    return lib.ops.aten


def sample(op: str, fn: Callable[[Any, str], Any], flags: str = "") -> None:
    SAMPLES.append((op, fn, flags))


def _outs(lib: Any, d: str, specs: list[tuple[tuple[int, ...], str]]) -> list[Any]:
    return [lib.empty(s, dtype=getattr(lib, dt), device=d) for s, dt in specs]


def _ln_out(shape: list[int], dtype: str, out_specs: list[tuple[tuple[int, ...], str]]) -> Any:
    def fn(L: Any, d: str) -> Any:
        outs = _outs(L, d, out_specs)
        r = A(L).native_layer_norm.out(
            T(L, X, dtype, d), shape, None, None, 1e-5, out0=outs[0], out1=outs[1], out2=outs[2]
        )
        if not all(a is b for a, b in zip(r, outs)):
            raise AssertionError("native_layer_norm.out did not return its outs")
        return r

    return fn


for _dt in ("float32", "float64"):
    for _shape, _w in (([4], None), ([3, 4], W)):
        sample(
            "native_layer_norm",
            lambda L, d, s=_shape, w=_w, dt=_dt: A(L).native_layer_norm(
                T(L, X, dt, d),
                s,
                None if w is None else T(L, w, dt, d),
                None if w is None else T(L, B, dt, d),
                1e-5,
            ),
        )
    sample(
        "native_layer_norm",
        lambda L, d, dt=_dt: L.native_layer_norm(T(L, X, dt, d), [4], None, None, 0.5),
    )
    # empty outs are resized silently (non-empty ones warn: a test below)
    sample("native_layer_norm.out", _ln_out([4], _dt, [((0,), _dt)] * 3))
    sample(
        "native_layer_norm.out", _ln_out([3, 4], _dt, [((0,), _dt), ((0,), _dt), ((2, 1, 1), _dt)])
    )
    sample(
        "native_layer_norm.out",
        _ln_out([4], _dt, [((2, 3, 4), _dt), ((2, 3, 1), _dt), ((2, 3, 1), _dt)]),
    )
# checks torch raises on cpu: bad normalized_shape / weight shape, out dtype mismatch
sample(
    "native_layer_norm",
    lambda L, d: A(L).native_layer_norm(T(L, X, device=d), [3], None, None, 1e-5),
    "cpu-only",
)
sample(
    "native_layer_norm",
    lambda L, d: A(L).native_layer_norm(T(L, X, device=d), [4], T(L, W, device=d), None, 1e-5),
    "cpu-only",
)
sample("native_layer_norm.out", _ln_out([4], "float32", [((0,), "float64")] * 3), "cpu-only")
sample(
    "native_layer_norm.out",
    _ln_out([4], "float32", [((0,), "float32"), ((0,), "float32"), ((0,), "float16")]),
    "cpu-only",
)


def _dropout_out(p: float, train: Any, out_specs: list[tuple[tuple[int, ...], str]]) -> Any:
    def fn(L: Any, d: str) -> Any:
        out0, out1 = _outs(L, d, out_specs)
        r = A(L).native_dropout.out(T(L, X, device=d), p, train, out0=out0, out1=out1)
        if not (r[0] is out0 and r[1] is out1):
            raise AssertionError("native_dropout.out did not return its outs")
        return r

    return fn


for _p, _train in ((0.5, True), (0.5, None), (0.5, False), (0.0, True), (1.0, True)):
    # eval, p == 0 and p == 1 are deterministic: compare values there
    flags = "" if _train is False or _p in (0.0, 1.0) else "novalues"
    sample(
        "native_dropout",
        lambda L, d, p=_p, t=_train: A(L).native_dropout(T(L, X, device=d), p, t),
        flags,
    )
    sample(
        "native_dropout.out", _dropout_out(_p, _train, [((0,), "float32"), ((0,), "bool")]), flags
    )
sample(
    "native_dropout", lambda L, d: L.native_dropout(T(L, X, "float64", d), 0.2, True), "novalues"
)
sample("native_dropout.out", _dropout_out(0.5, False, [((2, 3, 4), "float32"), ((0,), "bool")]))
sample(
    "native_dropout.out",
    _dropout_out(0.5, True, [((0,), "float32"), ((0,), "float32")]),
    "cpu-only",
)
sample("native_dropout", lambda L, d: A(L).native_dropout(T(L, X, device=d), 1.5, True), "cpu-only")
sample(
    "native_dropout",
    lambda L, d: A(L).native_dropout(T(L, [1, 2], "int64", d), 0.5, True),
    "cpu-only",
)


@pytest.mark.parametrize(("op", "fn", "flags"), SAMPLES, ids=sample_ids(SAMPLES))
def test_cpu_matches_torch(op: str, fn: Any, flags: str, coverage: Any) -> None:
    check_sample(op, fn, "cpu", "novalues" not in flags, coverage)


META = [s for s in SAMPLES if "cpu-only" not in s[2]]


@pytest.mark.parametrize(("op", "fn", "flags"), META, ids=sample_ids(META))
def test_meta_matches_torch(op: str, fn: Any, flags: str, coverage: Any) -> None:
    check_sample(op + "[meta]", fn, "meta", False, coverage)


def test_native_dropout_keeps_about_one_minus_p_scaled_and_masks_agree() -> None:
    td.manual_seed(2024)
    out, mask = td.native_dropout(td.ones(20000, dtype=td.float64), 0.3, True)
    y, m = out.numpy(), mask.numpy()
    # binomial standard deviation sqrt(0.3 * 0.7 / 20000) ~ 0.0032: 5 sigma bounds
    assert abs(m.mean() - 0.7) < 0.017
    assert abs(y.mean() - 1.0) < 0.025
    assert np.array_equal(y != 0, m)
    assert np.allclose(y[m], 1 / 0.7)


def test_native_dropout_out_matches_the_mask_it_writes() -> None:
    td.manual_seed(5)
    x = td.tensor(_RNG.standard_normal(4000) + 3.0)
    out0, out1 = td.empty(0, dtype=td.float64), td.empty(0, dtype=td.bool)
    td.ops.aten.native_dropout.out(x, 0.4, True, out0=out0, out1=out1)
    m = out1.numpy()
    assert out0.shape == x.shape and abs(m.mean() - 0.6) < 0.04
    assert np.allclose(out0.numpy(), x.numpy() * m / 0.6)


def test_native_dropout_is_deterministic_under_manual_seed() -> None:
    td.manual_seed(11)
    a = td.native_dropout(td.ones(64), 0.5, True)[1].numpy()
    td.manual_seed(11)
    b = td.native_dropout(td.ones(64), 0.5, True)[1].numpy()
    assert np.array_equal(a, b)


def test_native_layer_norm_statistics_are_mean_and_rstd_as_in_torch() -> None:
    x = _RNG.standard_normal((4, 5, 6))
    _, mean, rstd = td.native_layer_norm(td.tensor(x), [5, 6], None, None, 1e-5)
    _, tmean, trstd = torch.native_layer_norm(torch.tensor(x), [5, 6], None, None, 1e-5)
    np.testing.assert_allclose(mean.numpy(), tmean.numpy(), rtol=1e-12)
    np.testing.assert_allclose(rstd.numpy(), trstd.numpy(), rtol=1e-10)


def test_native_dropout_out_warns_like_torch_when_resizing_a_non_empty_out(
    capfd: pytest.CaptureFixture[str],
) -> None:
    x = torch.tensor(X)
    torch.ops.aten.native_dropout.out(
        x, 0.5, False, out0=torch.empty(5), out1=torch.empty(0, dtype=torch.bool)
    )
    torch_text = capfd.readouterr().err
    with pytest.warns(UserWarning) as caught:
        r = td.ops.aten.native_dropout.out(
            td.tensor(X), 0.5, False, out0=td.empty(5), out1=td.empty(0, dtype=td.bool)
        )
    expected = (
        "An output with one or more elements was resized since it had shape [5], which does "
        "not match the required output shape [2, 3, 4]. This behavior is deprecated, and in a "
        "future PyTorch release outputs will not be resized unless they have zero elements. "
        "You can explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
        "with t.resize_(0)."
    )
    assert [str(w.message) for w in caught] == [expected]
    assert str(caught[0].message) in torch_text
    np.testing.assert_array_equal(r[0].numpy(), np.array(X, dtype=np.float32))


def test_native_layer_norm_out_warns_once_per_resized_non_empty_out() -> None:
    outs = [td.empty(5), td.empty(0), td.empty(1)]
    with pytest.warns(UserWarning) as caught:
        td.ops.aten.native_layer_norm.out(
            td.tensor(X), [4], None, None, 1e-5, out0=outs[0], out1=outs[1], out2=outs[2]
        )
    assert [str(w.message).split(", which")[0] for w in caught] == [
        "An output with one or more elements was resized since it had shape [5]",
        "An output with one or more elements was resized since it had shape [1]",
    ]
    expected = torch.native_layer_norm(torch.tensor(X), [4], None, None, 1e-5)
    for got, want in zip(outs, expected):
        assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_autogen_out_dtype_mismatch_message_is_torchs() -> None:
    outs = [td.empty(0), td.empty(0, dtype=td.float64), td.empty(0)]
    with pytest.raises(RuntimeError) as info:
        td.ops.aten.native_layer_norm.out(
            td.tensor(X), [4], None, None, 1e-5, out0=outs[0], out1=outs[1], out2=outs[2]
        )
    assert str(info.value) == "Expected out tensor to have dtype float, but got double instead"
