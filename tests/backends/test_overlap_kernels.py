"""Memory-overlap errors of kernels with their own checks (not TensorIterator's), vs torch.

cat/stack and index_select refuse any overlap of an input with the out tensor (even exactly
the same memory), gather refuses overlap with self and partial overlap with the index (on
meta tensors too), cumsum refuses partial overlap, softmax and mm refuse an out tensor with
internal overlap, addmm/baddbmm check their copy of self into out as copy_ does. Each case
runs on torch and tensordispatch: same exception type and message, else same values (CPU)
or shape (meta). Cases where torch's values depend on its loop order (aliased operands it
lets through) compare only that no error is raised.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch

td: Any = tensordispatch  # operators are generated attributes


def _base(lib: Any, dev: str) -> Any:
    return lib.arange(1.0, 11.0, device=dev)


def _idx(lib: Any, dev: str, values: list[int]) -> Any:
    return lib.tensor(values, device=dev)


Case = Callable[[Any, str, Any, Any], Any]  # (library, device, base, integer base)

CASES: dict[str, Case] = {
    "cat_partial": lambda L, d, b, ib: L.cat([b[0:2], b[4:5]], out=b[1:4]),
    "cat_full": lambda L, d, b, ib: L.cat([b[0:3]], out=b[0:3]),
    "cat_same_object": lambda L, d, b, ib: L.cat([b], out=b),
    "cat_internal": lambda L, d, b, ib: L.cat(
        [L.ones(2, device=d), L.ones(1, device=d)], out=L.zeros(1, device=d).expand(3)
    ),
    "cat_internal_resized": lambda L, d, b, ib: L.cat(
        [L.ones(2, device=d), L.ones(1, device=d)], out=L.zeros(1, device=d).expand(2)
    ),
    "cat_expanded_input": lambda L, d, b, ib: L.cat([b[0:1].expand(2), b[5:6]], out=b[1:4]),
    "cat_disjoint": lambda L, d, b, ib: L.cat([b[0:2], b[5:6]], out=b[2:5]),
    "cat_resized_partial": lambda L, d, b, ib: L.cat([b[0:2], b[5:6]], out=b[1:2]),
    "cat_strided_out": lambda L, d, b, ib: L.cat([b[1:3], b[3:4]], out=b[0:6:2]),
    "stack_partial": lambda L, d, b, ib: L.stack([b[0:2], b[4:6]], out=b[1:5].view(2, 2)),
    "stack_internal": lambda L, d, b, ib: L.stack(
        [L.ones(2, device=d)], out=L.zeros(1, device=d).expand(1, 2)
    ),
    "index_select_partial": lambda L, d, b, ib: L.index_select(
        b[0:3], 0, _idx(L, d, [0, 1, 2]), out=b[1:4]
    ),
    "index_select_full": lambda L, d, b, ib: L.index_select(
        b[0:3], 0, _idx(L, d, [0, 1, 2]), out=b[0:3]
    ),
    "index_select_internal": lambda L, d, b, ib: L.index_select(
        _base(L, d), 0, _idx(L, d, [0, 1, 2]), out=L.zeros(1, device=d).expand(3)
    ),
    "index_select_internal_resized": lambda L, d, b, ib: L.index_select(
        _base(L, d), 0, _idx(L, d, [0, 1, 2]), out=L.zeros(1, device=d).expand(2)
    ),
    "index_select_disjoint": lambda L, d, b, ib: L.index_select(
        b[0:3], 0, _idx(L, d, [2, 1, 0]), out=b[3:6]
    ),
    "gather_partial": lambda L, d, b, ib: L.gather(b[0:3], 0, _idx(L, d, [0, 1, 2]), out=b[1:4]),
    "gather_full": lambda L, d, b, ib: L.gather(b[0:3], 0, _idx(L, d, [0, 1, 2]), out=b[0:3]),
    "gather_internal": lambda L, d, b, ib: L.gather(
        _base(L, d), 0, _idx(L, d, [0, 1, 2]), out=L.zeros(1, device=d).expand(3)
    ),
    "gather_internal_resized": lambda L, d, b, ib: L.gather(
        _base(L, d), 0, _idx(L, d, [0, 1, 2]), out=L.zeros(1, device=d).expand(2)
    ),
    "gather_index_partial": lambda L, d, b, ib: L.gather(
        L.arange(6, device=d), 0, ib[0:3], out=ib[1:4]
    ),
    "gather_disjoint": lambda L, d, b, ib: L.gather(b[0:3], 0, _idx(L, d, [2, 0, 1]), out=b[3:6]),
    "cumsum_partial": lambda L, d, b, ib: L.cumsum(b[0:3], 0, out=b[1:4]),
    "cumsum_full": lambda L, d, b, ib: L.cumsum(b[0:3], 0, out=b[0:3]),
    "cumsum_same_object": lambda L, d, b, ib: L.cumsum(b, 0, out=b),
    "cumsum_internal": lambda L, d, b, ib: L.cumsum(
        _base(L, d)[:3], 0, out=L.zeros(1, device=d).expand(3)
    ),
    "cumsum_internal_resized": lambda L, d, b, ib: L.cumsum(
        _base(L, d)[:3], 0, out=L.zeros(1, device=d).expand(2)
    ),
    "cumsum_resized_partial": lambda L, d, b, ib: L.cumsum(b[0:3], 0, out=b[2:3]),
    "softmax_internal": lambda L, d, b, ib: L.softmax(
        _base(L, d)[:6], 0, out=L.zeros(1, device=d).expand(6)
    ),
    "log_softmax_internal": lambda L, d, b, ib: L.log_softmax(
        _base(L, d)[:3], 0, out=L.zeros(1, device=d).expand(3)
    ),
    "softmax_internal_resized": lambda L, d, b, ib: L.softmax(
        _base(L, d)[:3], 0, out=L.zeros(1, device=d).expand(2)
    ),
    "softmax_partial": lambda L, d, b, ib: L.softmax(b[0:3], 0, out=b[1:4]),
    "mm_internal": lambda L, d, b, ib: L.mm(
        L.ones(2, 2, device=d), L.ones(2, 2, device=d), out=L.zeros(1, device=d).expand(2, 2)
    ),
    "mm_internal_resized": lambda L, d, b, ib: L.mm(
        L.ones(2, 2, device=d), L.ones(2, 2, device=d), out=L.zeros(1, device=d).expand(2)
    ),
    "addmm_internal": lambda L, d, b, ib: L.addmm(
        L.ones(2, 2, device=d),
        L.ones(2, 2, device=d),
        L.ones(2, 2, device=d),
        out=L.zeros(1, device=d).expand(2, 2),
    ),
    "addmm_inplace_internal": lambda L, d, b, ib: (
        L.zeros(1, device=d).expand(2, 2).addmm_(L.ones(2, 2, device=d), L.ones(2, 2, device=d))
    ),
    "addmm_self_partial": lambda L, d, b, ib: L.addmm(
        b[0:4].view(2, 2), L.ones(2, 2, device=d), L.ones(2, 2, device=d), out=b[1:5].view(2, 2)
    ),
    "addmm_self_full": lambda L, d, b, ib: L.addmm(
        b[0:4].view(2, 2), L.ones(2, 2, device=d), L.ones(2, 2, device=d), out=b[0:4].view(2, 2)
    ),
    "addmm_self_transposed": lambda L, d, b, ib: L.addmm(
        b[0:4].view(2, 2).t(),
        L.ones(2, 2, device=d),
        L.ones(2, 2, device=d),
        out=b[0:4].view(2, 2),
    ),
    "addmm_self_broadcast": lambda L, d, b, ib: L.addmm(
        b[0:2], L.ones(2, 2, device=d), L.ones(2, 2, device=d), out=b[1:5].view(2, 2)
    ),
    "addmm_beta0_self_partial": lambda L, d, b, ib: L.addmm(
        b[0:4].view(2, 2),
        L.ones(2, 2, device=d),
        L.ones(2, 2, device=d),
        beta=0,
        out=b[1:5].view(2, 2),
    ),
    "bmm_internal": lambda L, d, b, ib: L.bmm(
        L.ones(1, 2, 2, device=d),
        L.ones(1, 2, 2, device=d),
        out=L.zeros(1, device=d).expand(1, 2, 2),
    ),
    "baddbmm_internal": lambda L, d, b, ib: L.baddbmm(
        L.ones(1, 2, 2, device=d),
        L.ones(1, 2, 2, device=d),
        L.ones(1, 2, 2, device=d),
        out=L.zeros(1, device=d).expand(1, 2, 2),
    ),
    "baddbmm_inplace_internal": lambda L, d, b, ib: (
        L.zeros(1, device=d)
        .expand(1, 2, 2)
        .baddbmm_(L.ones(1, 2, 2, device=d), L.ones(1, 2, 2, device=d))
    ),
    "baddbmm_self_partial": lambda L, d, b, ib: L.baddbmm(
        b[0:4].view(1, 2, 2),
        L.ones(1, 2, 2, device=d),
        L.ones(1, 2, 2, device=d),
        out=b[1:5].view(1, 2, 2),
    ),
    "sort_values_partial": lambda L, d, b, ib: L.sort(
        b[0:3], out=(b[1:4], L.zeros(3, dtype=L.int64, device=d))
    )[0],
    "sort_values_full": lambda L, d, b, ib: L.sort(
        b[0:3], out=(b[0:3], L.zeros(3, dtype=L.int64, device=d))
    )[0],
    "sort_values_internal": lambda L, d, b, ib: L.sort(
        b[:3], out=(L.zeros(1, device=d).expand(3), L.zeros(3, dtype=L.int64, device=d))
    )[0],
    "sort_indices_internal": lambda L, d, b, ib: L.sort(
        b[:3], out=(L.zeros(3, device=d), ib[:1].expand(3))
    )[1],
    "sort_values_resized_partial": lambda L, d, b, ib: L.sort(
        b[0:3], out=(b[2:3], L.zeros(3, dtype=L.int64, device=d))
    )[0],
    "topk_values_partial": lambda L, d, b, ib: L.topk(
        b[0:3], 2, out=(b[1:3], L.zeros(2, dtype=L.int64, device=d))
    )[0],
    "topk_indices_internal": lambda L, d, b, ib: L.topk(
        b[:3], 2, out=(L.zeros(2, device=d), ib[:1].expand(2))
    )[1],
    "masked_select_partial": lambda L, d, b, ib: L.masked_select(
        b[0:3], L.ones(3, dtype=L.bool, device=d), out=b[1:4]
    ),
    "masked_select_full": lambda L, d, b, ib: L.masked_select(
        b[0:3], L.ones(3, dtype=L.bool, device=d), out=b[0:3]
    ),
    "masked_select_internal_resized": lambda L, d, b, ib: L.masked_select(
        b[0:3], L.ones(3, dtype=L.bool, device=d), out=L.zeros(1, device=d).expand(2)
    ),
    "masked_select_disjoint": lambda L, d, b, ib: L.masked_select(
        b[0:3], L.ones(3, dtype=L.bool, device=d), out=b[3:6]
    ),
    "nonzero_internal_resized": lambda L, d, b, ib: L.nonzero(
        L.ones(3, device=d), out=ib[:1].expand(2, 1)
    ),
    "nonzero_partial": lambda L, d, b, ib: L.nonzero(ib[1:4], out=ib[2:5].view(3, 1)),
}

# Not run on meta: torch has no meta kernel for masked_select.out / nonzero.out, and its meta
# sort into an expanded out fails with a storage-size error of its own (no overlap matter).
CPU_ONLY = {n for n in CASES if n.startswith(("masked_select", "nonzero"))}
CPU_ONLY.add("sort_values_internal")
PARAMS = [(n, d) for n in sorted(CASES) for d in ("cpu", "meta") if d == "cpu" or n not in CPU_ONLY]

# Allowed by torch with operands it reads while writing: its values follow its loop order.
ORDER_DEPENDENT = {
    "cat_strided_out",
    "addmm_self_broadcast",
    "softmax_partial",
    "baddbmm_inplace_internal",
}


def _run(lib: Any, name: str, dev: str) -> tuple[Any, ...]:
    try:
        result = CASES[name](lib, dev, _base(lib, dev), lib.arange(10, device=dev))
    except Exception as e:  # noqa: BLE001 - the exception is the observation
        return ("error", type(e), str(e).split("\n")[0])
    if dev == "meta" or name in ORDER_DEPENDENT:
        return ("ok", tuple(result.shape))
    return ("ok", tuple(result.shape), np.array(result.tolist()))


@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")
@pytest.mark.parametrize(("name", "dev"), PARAMS)
def test_kernel_overlap_matches_torch(name: str, dev: str) -> None:
    expected = _run(torch, name, dev)
    got = _run(td, name, dev)
    assert got[:2] == expected[:2], (got, expected)
    if expected[0] == "error":
        assert got[2] == expected[2]
    elif len(expected) == 3:
        np.testing.assert_allclose(got[2], expected[2], rtol=1e-6)


def test_cat_same_memory_golden() -> None:
    x = td.arange(3.0)
    with pytest.raises(RuntimeError) as info:
        td.cat([x], out=x)
    assert str(info.value) == (
        "unsupported operation: some elements of the input tensor and the written-to tensor "
        "refer to a single memory location. Please clone() the tensor before performing the "
        "operation."
    )


def test_gather_meta_internal_golden() -> None:
    out = td.zeros(1, device="meta").expand(3)
    with pytest.raises(RuntimeError) as info:
        td.gather(td.zeros(5, device="meta"), 0, td.tensor([0, 1, 2], device="meta"), out=out)
    assert str(info.value) == (
        "unsupported operation: more than one element of the written-to tensor refers to a "
        "single memory location. Please clone() the tensor before performing the operation."
    )
