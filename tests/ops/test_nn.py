"""nn operators against torch 2.13 on 'cpu' and 'meta': losses, layer_norm, embedding,
one_hot, conv2d/convolution, and dropout's deterministic edge cases. Dropout's random path is
checked statistically and for seed determinism (streams differ from torch's by design).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tests.ops.conftest import assert_same_result, check_sample, sample_ids

SAMPLES: list[tuple[str, Callable[[Any, str], Any], str]] = []


def T(lib: Any, data: Any, dtype: str = "float32", device: str = "cpu") -> Any:
    return lib.tensor(data, dtype=getattr(lib, dtype), device=device)


def sample(op: str, flags: str = "") -> Callable[[Callable[[Any, str], Any]], None]:
    def register(fn: Callable[[Any, str], Any]) -> None:
        SAMPLES.append((op, fn, flags))

    return register


def A(L: Any) -> Any:
    return L.ops.aten


_RNG = np.random.default_rng(0)
X23 = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
X4 = _RNG.standard_normal((2, 3, 2, 2)).round(3).tolist()
X5 = _RNG.standard_normal((2, 3, 2, 2, 2)).round(3).tolist()
X3D = _RNG.standard_normal((2, 3, 4)).round(3).tolist()
W3 = [0.5, 2.0, 1.0]
IMG = _RNG.standard_normal((2, 4, 6, 5)).round(3).tolist()
KER = _RNG.standard_normal((6, 2, 3, 2)).round(3).tolist()
KER1 = _RNG.standard_normal((3, 4, 3, 3)).round(3).tolist()

# -- nll_loss / nll_loss_forward / nll_loss_nd / nll_loss2d -------------------------------------

for _red in (0, 1, 2):

    def _nll(r: int) -> None:
        t = lambda L, d: T(L, [2, -100], "int64", d)
        sample("nll_loss_forward")(
            lambda L, d: A(L).nll_loss_forward(T(L, X23, device=d), t(L, d), None, r, -100)
        )
        sample("nll_loss_forward")(
            lambda L, d: A(L).nll_loss_forward(
                T(L, X23, device=d), t(L, d), T(L, W3, device=d), r, -100
            )
        )
        sample("nll_loss")(
            lambda L, d: A(L).nll_loss(T(L, X23, device=d), T(L, [0, 2], "int64", d), None, r)
        )
        sample("nll_loss")(
            lambda L, d: A(L).nll_loss(T(L, X23[0], device=d), T(L, 1, "int64", d), None, r)
        )
        sample("nll_loss_nd")(
            lambda L, d: A(L).nll_loss_nd(
                T(L, X4, device=d), T(L, [[[0, 1], [2, 1]], [[1, 1], [0, 2]]], "int64", d),
                T(L, W3, device=d), r, 1,
            )
        )  # fmt: skip
        sample("nll_loss_nd")(
            lambda L, d: A(L).nll_loss_nd(
                T(L, X3D, device=d), T(L, [[0, 1, 2, 0], [2, 2, 1, 0]], "int64", d), None, r
            )
        )
        sample("nll_loss_nd")(
            lambda L, d: A(L).nll_loss_nd(
                T(L, X5, device=d), T(L, [[[0, 1], [2, 1]], [[1, 1], [0, 2]]], "int64", d)
                .unsqueeze(-1).expand(2, 2, 2, 2), None, r,
            )
        )  # fmt: skip

    _nll(_red)

sample("nll_loss")(lambda L, d: A(L).nll_loss(T(L, X23, device=d), T(L, [-100, -100], "int64", d)))
sample("nll_loss", "meta-differs")(
    lambda L, d: A(L).nll_loss(T(L, X23, device=d), T(L, [1, 1], "uint8", d))
)
sample("nll_loss", "meta-differs")(
    lambda L, d: A(L).nll_loss(T(L, X23, device=d), T(L, [1, 1], "int32", d))
)
sample("nll_loss", "novalues")(
    lambda L, d: A(L).nll_loss(T(L, X23, device=d), T(L, [1, 5], "int64", d))
)
sample("nll_loss")(lambda L, d: A(L).nll_loss(T(L, X23, device=d), T(L, [1, 0, 1], "int64", d)))
sample("nll_loss", "meta-differs")(
    lambda L, d: A(L).nll_loss(T(L, X23, device=d), T(L, [[1]], "int64", d))
)
sample("nll_loss", "meta-differs")(
    lambda L, d: A(L).nll_loss(T(L, X23, device=d), T(L, [1, 0], "int64", d), T(L, [1.0], device=d))
)
sample("nll_loss", "meta-differs")(
    lambda L, d: A(L).nll_loss(T(L, X3D, device=d), T(L, [1, 0], "int64", d))
)
sample("nll_loss")(
    lambda L, d: A(L).nll_loss.out(
        T(L, X23, device=d), T(L, [1, 0], "int64", d), out=L.empty(0, device=d)
    )
)
sample("nll_loss_nd")(lambda L, d: A(L).nll_loss_nd(T(L, 1.0, device=d), T(L, 1, "int64", d)))
sample("nll_loss_nd")(
    lambda L, d: A(L).nll_loss_nd(T(L, X23, device=d), T(L, [1, 0, 1], "int64", d))
)
sample("nll_loss_nd")(
    lambda L, d: A(L).nll_loss_nd(T(L, X3D, device=d), T(L, [[1, 0, 1], [0, 0, 0]], "int64", d))
)
sample("nll_loss2d", "meta-differs")(
    lambda L, d: A(L).nll_loss2d(T(L, X3D, device=d), T(L, [[1, 0, 1]], "int64", d))
)
sample("nll_loss2d")(
    lambda L, d: A(L).nll_loss2d(T(L, X4, device=d), L.zeros(2, 2, 3, dtype=L.int64, device=d))
)
sample("nll_loss2d")(
    lambda L, d: A(L).nll_loss2d_forward.output(
        T(L, X4, device=d), L.zeros(2, 2, 2, dtype=L.int64, device=d), None, 2, -100,
        output=L.empty(0, device=d), total_weight=L.empty(0, device=d),
    )
)  # fmt: skip

# -- cross_entropy ---------------------------------------------------------------------------

P23 = [[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]]
for _red in (0, 1, 2):

    def _ce(r: int) -> None:
        F = lambda L: A(L).cross_entropy_loss
        sample("cross_entropy")(
            lambda L, d: F(L)(T(L, X23, device=d), T(L, [2, 0], "int64", d), None, r)
        )
        sample("cross_entropy")(
            lambda L, d: F(L)(
                T(L, X23, device=d), T(L, [2, -100], "int64", d), T(L, W3, device=d), r
            )
        )
        sample("cross_entropy")(
            lambda L, d: F(L)(T(L, X23, device=d), T(L, P23, device=d), None, r)
        )
        sample("cross_entropy")(
            lambda L, d: F(L)(
                T(L, X23, device=d), T(L, P23, device=d), T(L, W3, device=d), r, -100, 0.2
            )
        )
        sample("cross_entropy")(
            lambda L, d: F(L)(T(L, X23, device=d), T(L, [2, 0], "int64", d), None, r, -100, 0.3)
        )
        sample("cross_entropy")(
            lambda L, d: F(L)(
                T(L, X23, device=d), T(L, [2, -100], "int64", d), T(L, W3, device=d), r, -100, 0.3
            )
        )
        sample("cross_entropy")(
            lambda L, d: F(L)(
                T(L, X4, device=d), L.zeros(2, 2, 2, dtype=L.int64, device=d), None, r, -100, 0.1
            )
        )
        sample("cross_entropy")(
            lambda L, d: F(L)(T(L, X23[0], device=d), T(L, 1, "int64", d), None, r)
        )

    _ce(_red)
sample("cross_entropy")(
    lambda L, d: A(L).cross_entropy_loss(
        T(L, X23, device=d), T(L, [2, 0], "int64", d), None, 1, -100, 1.5
    )
)
sample("cross_entropy")(
    lambda L, d: A(L).cross_entropy_loss(
        T(L, X23, device=d), T(L, [[1, 0, 2], [0, 1, 1]], "int64", d)
    )
)
sample("cross_entropy")(
    lambda L, d: A(L).cross_entropy_loss(T(L, X23, device=d), T(L, P23, device=d), None, 1, 0)
)
sample("cross_entropy")(
    lambda L, d: A(L).cross_entropy_loss(
        T(L, X23, device=d), T(L, P23, device=d), T(L, [1.0], device=d)
    )
)

# -- layer_norm, embedding, one_hot ------------------------------------------------------------

sample("layer_norm")(lambda L, d: A(L).layer_norm(T(L, X23, device=d), [3]))
sample("layer_norm")(
    lambda L, d: A(L).layer_norm(
        T(L, X3D, device=d), [3, 4], L.ones(3, 4, device=d) * 2, L.ones(3, 4, device=d)
    )
)
sample("layer_norm")(
    lambda L, d: A(L).layer_norm(
        T(L, X3D, device=d), [4], T(L, [1.0, 2, 3, 4], device=d), None, 0.1
    )
)
sample("layer_norm")(lambda L, d: A(L).layer_norm(T(L, X3D, "float64", d).transpose(0, 2), [2]))
sample("layer_norm")(lambda L, d: A(L).layer_norm(T(L, X23, device=d), []))
sample("layer_norm")(lambda L, d: A(L).layer_norm(T(L, X23, device=d), [2]))
sample("layer_norm")(lambda L, d: A(L).layer_norm(T(L, X23, device=d), [3], L.ones(2, device=d)))
sample("layer_norm")(
    lambda L, d: A(L).layer_norm(T(L, X23, device=d), [3], None, L.ones(4, device=d))
)
sample("layer_norm")(lambda L, d: A(L).layer_norm(T(L, X23[0], device=d), [2, 3]))

EMB = [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]
sample("embedding")(lambda L, d: L.embedding(T(L, EMB, device=d), T(L, [3, 0, 3], "int64", d)))
sample("embedding")(
    lambda L, d: L.embedding(T(L, EMB, device=d), T(L, [[3, 0], [1, 1]], "int32", d))
)
sample("embedding")(lambda L, d: L.embedding(T(L, EMB, device=d), T(L, 2, "int64", d)))
sample("embedding")(lambda L, d: L.embedding(T(L, EMB, device=d), T(L, [1, 2], device=d)))
sample("embedding", "meta-differs")(
    lambda L, d: L.embedding(T(L, EMB[0], device=d), T(L, [0], "int64", d))
)
sample("embedding")(
    lambda L, d: A(L).embedding(T(L, EMB, device=d), T(L, [1, 1], "int64", d), 1, True, False)
)
sample("embedding")(
    lambda L, d: A(L).embedding.out(
        T(L, EMB, device=d), T(L, [1], "int64", d), out=L.empty(0, device=d)
    )
)

sample("one_hot")(lambda L, d: A(L).one_hot(T(L, [0, 2, 1], "int64", d), 4))
sample("one_hot")(lambda L, d: A(L).one_hot(T(L, [[0, 2], [1, 1]], "int64", d)))
sample("one_hot")(lambda L, d: A(L).one_hot(T(L, [0, 2], "int32", d), 3))
sample("one_hot")(lambda L, d: A(L).one_hot(T(L, [0, 5], "int64", d), 3))
sample("one_hot")(lambda L, d: A(L).one_hot(T(L, [0, -1], "int64", d), 3))
sample("one_hot")(lambda L, d: A(L).one_hot(L.zeros(0, dtype=L.int64, device=d), 3))
sample("one_hot")(lambda L, d: A(L).one_hot(L.zeros(0, dtype=L.int64, device=d)))

# -- conv2d / convolution ----------------------------------------------------------------------

C = lambda L: A(L).convolution
sample("conv2d")(lambda L, d: L.conv2d(T(L, IMG, device=d), T(L, KER1, device=d)[:, :4]))
sample("conv2d")(
    lambda L, d: L.conv2d(
        T(L, IMG, device=d), T(L, KER, device=d), T(L, [1.0, 2, 3, 4, 5, 6], device=d),
        stride=(2, 1), padding=1, dilation=(1, 2), groups=2,
    )
)  # fmt: skip
sample("conv2d")(lambda L, d: L.conv2d(T(L, IMG, device=d)[0], T(L, KER1, device=d)))
sample("conv2d")(lambda L, d: L.conv2d(T(L, IMG, device=d)[0, 0], T(L, KER1, device=d)))
sample("conv2d")(
    lambda L, d: L.conv2d(
        T(L, IMG, device=d), T(L, KER1, device=d), T(L, [1.0, 2, 3], "float64", d)
    )
)
sample("conv2d")(lambda L, d: L.conv2d(T(L, IMG, device=d), T(L, KER1, device=d), padding="same"))
sample("conv2d")(
    lambda L, d: L.conv2d(T(L, IMG, device=d), T(L, KER, device=d), padding="same", groups=2)
)
sample("conv2d")(
    lambda L, d: L.conv2d(
        T(L, IMG, device=d), T(L, KER, device=d), padding="same", groups=2, dilation=2
    )
)
sample("conv2d")(lambda L, d: L.conv2d(T(L, IMG, device=d), T(L, KER1, device=d), padding="valid"))
sample("conv2d")(
    lambda L, d: L.conv2d(T(L, IMG, device=d), T(L, KER1, device=d), padding="same", stride=2)
)
sample("conv2d")(lambda L, d: L.conv2d(T(L, IMG, device=d), T(L, KER1, device=d), padding="full"))
sample("conv2d")(lambda L, d: L.conv2d(T(L, IMG, device=d), T(L, KER, device=d)))
sample("conv2d")(lambda L, d: L.conv2d(T(L, IMG, device=d), T(L, KER, device=d), groups=3))
sample("conv2d", "meta-differs")(
    lambda L, d: L.conv2d(T(L, IMG, device=d), T(L, KER1, "float64", d))
)
sample("conv2d")(lambda L, d: L.conv2d(T(L, IMG, device=d)[:, :, :2], T(L, KER1, device=d)))
sample("conv2d", "meta-differs")(
    lambda L, d: L.conv2d(T(L, IMG, device=d), T(L, KER1, device=d), stride=0)
)
sample("conv2d", "meta-differs")(
    lambda L, d: L.conv2d(T(L, IMG, device=d), T(L, KER1, device=d), padding=-1)
)
sample("conv2d", "meta-differs")(
    lambda L, d: L.conv2d(T(L, IMG, device=d), T(L, KER1, device=d), T(L, [1.0, 2], device=d))
)
sample("conv2d", "meta-differs")(
    lambda L, d: L.conv2d(
        T(L, IMG, device=d).contiguous(memory_format=L.channels_last), T(L, KER1, device=d)
    )
)
sample("convolution")(
    lambda L, d: C(L)(T(L, IMG, device=d), T(L, KER1, device=d), None, [1], [0], [1], False, [0], 1)
)
sample("convolution")(
    lambda L, d: C(L)(
        T(L, IMG, "int64", d),
        T(L, KER1, "int64", d),
        None,
        [1, 1],
        [1, 0],
        [1, 1],
        False,
        [0, 0],
        1,
    )
)
sample("convolution")(
    lambda L, d: C(L)(
        T(L, IMG, device=d)[0], T(L, KER1, device=d)[:, :, 0], None, [2], [1], [1], False, [0], 1
    )
)
sample("convolution", "meta-differs")(
    lambda L, d: C(L)(
        T(L, IMG, device=d), T(L, KER1, device=d), None, [1, 1], [0, 0], [0, 1], False, [0, 0], 1
    )
)
sample("convolution")(
    lambda L, d: C(L)(
        T(L, IMG, device=d), T(L, KER1, device=d)[0], None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1
    )
)
sample("conv2d")(lambda L, d: L.conv2d(T(L, IMG, device=d), T(L, KER, device=d), groups=4))
sample("convolution")(
    lambda L, d: C(L).out(
        T(L, IMG, device=d), T(L, KER1, device=d), None, [1, 1], [0, 0], [1, 1], False, [0, 0],
        1, out=L.empty(0, device=d),
    )
)  # fmt: skip

# -- dropout: the deterministic cases ----------------------------------------------------------

sample("dropout")(lambda L, d: A(L).dropout(T(L, X23, device=d), 0.0, True))
sample("dropout")(lambda L, d: A(L).dropout(T(L, X23, device=d), 0.7, False))
sample("dropout")(lambda L, d: A(L).dropout(T(L, [float("nan"), 1.0], device=d), 1.0, True))
sample("dropout")(lambda L, d: A(L).dropout(L.ones(0, 3, device=d), 0.5, True))
sample("dropout")(lambda L, d: A(L).dropout(T(L, X23, device=d), 1.5, True))
sample("dropout")(lambda L, d: A(L).dropout(T(L, X23, device=d), -0.1, False))
sample("dropout")(lambda L, d: A(L).dropout(T(L, [1, 2], "int64", d), 0.5, True))
sample("dropout")(lambda L, d: A(L).dropout_(T(L, X23, device=d), 1.0, True))
sample("dropout")(lambda L, d: A(L).dropout_(T(L, X23, device=d), 0.3, False))
sample("dropout", "novalues")(lambda L, d: A(L).dropout(T(L, X23, "float64", d), 0.5, True))


@pytest.mark.parametrize(("op", "fn", "flags"), SAMPLES, ids=sample_ids(SAMPLES))
def test_cpu_matches_torch(op: str, fn: Any, flags: str, coverage: Any) -> None:
    check_sample(op, fn, "cpu", "novalues" not in flags, coverage, None)


@pytest.mark.parametrize(("op", "fn", "flags"), SAMPLES, ids=sample_ids(SAMPLES))
def test_meta_matches_torch(op: str, fn: Any, flags: str, coverage: Any) -> None:
    check_sample(
        op + "[meta]", fn, "meta", False, coverage, "cpu" if "meta-differs" in flags else None
    )


# -- dropout: aliasing, statistics, determinism -------------------------------------------------


def test_dropout_eval_returns_its_input() -> None:
    x = td.ones(3)
    assert td.ops.aten.dropout(x, 0.5, False) is x
    assert td.ops.aten.dropout(x, 0.0, True) is x


def test_dropout_inplace_returns_self_with_zeros_or_scaled_ones() -> None:
    x = td.ones(2000, dtype=td.float64)
    assert td.ops.aten.dropout_(x, 0.25, True) is x
    values = set(np.unique(x.numpy()).round(12).tolist())
    assert values == {0.0, round(1 / 0.75, 12)}


def test_dropout_keeps_about_one_minus_p_and_preserves_the_mean() -> None:
    td.manual_seed(1234)
    y = td.ops.aten.dropout(td.ones(20000), 0.3, True).numpy()
    kept = (y != 0).mean()
    # binomial standard deviation sqrt(0.3 * 0.7 / 20000) ~ 0.0032: 5 sigma bounds
    assert abs(kept - 0.7) < 0.017
    assert abs(y.mean() - 1.0) < 0.025
    assert np.allclose(y[y != 0], 1 / 0.7)


def test_dropout_is_deterministic_under_manual_seed() -> None:
    td.manual_seed(7)
    a = td.ops.aten.dropout(td.ones(64), 0.5, True).numpy()
    td.manual_seed(7)
    b = td.ops.aten.dropout(td.ones(64), 0.5, True).numpy()
    td.manual_seed(8)
    c = td.ops.aten.dropout(td.ones(64), 0.5, True).numpy()
    assert (a == b).all() and not (a == c).all()


def test_dropout_on_meta_keeps_shape_and_dtype() -> None:
    y = td.ops.aten.dropout(td.ones(2, 3, device="meta", dtype=td.float64), 0.5, True)
    assert y.device.type == "meta" and tuple(y.shape) == (2, 3) and y.dtype is td.float64


# -- native_layer_norm / native_dropout kernels (in the tables; not in the yaml until the
#    codegen generates multi-output autogen out= variants) -------------------------------------


def test_native_layer_norm_kernels_match_torch() -> None:
    from tensordispatch.backends.cpu import CPU_KERNELS
    from tensordispatch.backends.meta import META_KERNELS

    x = np.asarray(X3D, np.float32)
    w, b = np.arange(1.0, 5.0, dtype=np.float32), np.full(4, 0.5, np.float32)
    expected = torch.native_layer_norm(
        torch.from_numpy(x), [4], torch.from_numpy(w), torch.from_numpy(b), 1e-5
    )
    got = CPU_KERNELS["native_layer_norm_cpu"](
        td.from_numpy(x), [4], td.from_numpy(w), td.from_numpy(b), 1e-5
    )
    assert_same_result(tuple(expected), got, where="native_layer_norm")
    meta = META_KERNELS["native_layer_norm_meta"](
        td.ones(2, 3, 4, device="meta"), [3, 4], None, None, 1e-5
    )
    theirs = torch.native_layer_norm(torch.ones(2, 3, 4, device="meta"), [3, 4], None, None, 1e-5)
    assert_same_result(tuple(theirs), meta, values=False, where="native_layer_norm[meta]")


def test_native_dropout_kernel_masks_and_scales() -> None:
    from tensordispatch.backends.cpu import CPU_KERNELS

    td.manual_seed(3)
    out, mask = CPU_KERNELS["native_dropout_cpu"](td.ones(4000, dtype=td.float64), 0.25, True)
    m = mask.numpy()
    assert mask.dtype is td.bool and abs(m.mean() - 0.75) < 0.035
    assert np.allclose(out.numpy(), m / 0.75)
    out, mask = CPU_KERNELS["native_dropout_cpu"](td.ones(3), 0.25, False)
    assert mask.numpy().all() and (out.numpy() == 1).all()
