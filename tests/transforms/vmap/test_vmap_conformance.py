"""vmap of every operator with torch OpInfo samples, for every placement of the batch dim on
every tensor argument (JAX's all_bdims), against a Python loop over the batch and against
torch.func.vmap on the same inputs.

For each operator of the library that has an OpInfo, the first samples (float32, or the
first dtype of ours it supports) are turned into batches of three different entries (each
entry a permutation of the sample's values, so index arguments stay valid); each tensor
argument gets in_dim None or any dim position. vmap's result must equal the loop's
(values, shape, dtype); when the loop raises, vmap must raise too; torch.func.vmap on the
same batch must give the same result when it succeeds.

Collection stays cheap: the case labels come from conformance_cases.json (checked against
op_db by test_manifest_lists_every_case; regenerate it with
`python tests/transforms/vmap/test_vmap_conformance.py`), and op_db with its samples is
loaded once, by the first test that needs it.
"""

from __future__ import annotations

import functools
import itertools
import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch.transforms.vmap import vmap

pytestmark = pytest.mark.filterwarnings("ignore:There is a performance drop")

BATCH = 3
SAMPLES_PER_OP = 2
MAX_PLACEMENTS = 10

# Not vmappable by design (random, no tensor input, data-dependent shape, raw storage,
# dtype conversions covered by _to_copy's rule).
SKIP = {
    "arange",
    "empty",
    "empty_like",
    "new_empty",  # uninitialized values, as empty_like
    "new_empty_strided",
    "empty_strided",
    "eye",
    "full",
    "linspace",
    "ones",
    "zeros",
    "randint",
    "randn",
    "rand_like",
    "randn_like",
    "nonzero",
    "masked_select",
    "item",
    "as_strided",  # per-sample offsets follow the batch stride (test_vmap_rules_index.py)
    "as_strided_copy",
    "as_strided_scatter",
    "diagonal_scatter",
    "select_scatter",
    "__getitem__",
    "to",
    "bool",
    "cdouble",
    "cfloat",
    "double",
    "float",
    "half",
    "int",
    "long",
    "short",
    "view_as_complex",
    "zero_",
    "resize_",
    "resize_as_",  # change a tensor's own metadata in place: not batchable
}


# td.max(a, b) / td.min(a, b) have no binary overload in the library yet (they reach
# max.dim / min.dim): a difference of the operator library, not of vmap.
SKIP_VARIANTS = {("max", "binary"), ("min", "binary")}


# Tensor properties with an OpInfo: the "operator" is the attribute access.
PROPERTIES = {"T", "H", "mT", "mH", "real", "imag"}

# Real gaps of the operator library (not of vmap), reported to the lead; strict, so they
# fail loudly once the library grows the missing piece.
XFAIL_INPLACE = {
}
XFAIL_NESTED: dict[str, str] = {}

MANIFEST = Path(__file__).with_name("conformance_cases.json")


def _ours(name: str) -> Callable[..., Any] | None:
    if name in PROPERTIES:
        return (lambda x: getattr(x, name)) if hasattr(td.Tensor, name) else None
    if name == "where":  # the OpInfo's operator takes (self, condition, other)
        return lambda x, c, o: td.where(c, x, o)
    fn = getattr(td, name, None)
    if fn is not None:
        return fn  # type: ignore[no-any-return]
    if hasattr(td.Tensor, name):
        return lambda x, *a, **k: getattr(x, name)(*a, **k)
    return None


def _theirs(name: str) -> Callable[..., Any]:
    if name in PROPERTIES:
        return lambda x: getattr(x, name)
    if name == "where":
        return lambda x, c, o: torch.where(c, x, o)
    fn = getattr(torch, name, None)
    if fn is not None:
        return fn  # type: ignore[no-any-return]
    return lambda x, *a, **k: getattr(x, name)(*a, **k)


def _pick_dtype(op: Any) -> torch.dtype | None:
    supported = op.supported_dtypes("cpu")
    for d in (torch.float32, torch.int64, torch.bool):
        if d in supported:
            return d
    return None


def _cases() -> list[tuple[str, Any]]:
    from torch.testing._internal.common_methods_invocations import op_db

    cases = []
    for op in op_db:
        if "." in op.name or op.name in SKIP or _ours(op.name) is None:
            continue
        if (op.name, op.variant_test_name) in SKIP_VARIANTS:
            continue
        dtype = _pick_dtype(op)
        if dtype is None:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            samples = list(itertools.islice(op.sample_inputs("cpu", dtype), SAMPLES_PER_OP))
        for i, s in enumerate(samples):
            if not _leaves((s.input, *s.args)):
                continue  # no tensor argument to map over
            label = f"{op.name}{'-' + op.variant_test_name if op.variant_test_name else ''}-{i}"
            cases.append((label, (_ours(op.name), _theirs(op.name), s.input, s.args, s.kwargs)))
    return cases + _extra_cases()


def _extra_cases() -> list[tuple[str, Any]]:
    """Library operators torch's op_db has no OpInfo for under the same name."""
    import torch.nn.functional as F

    g = torch.Generator().manual_seed(0)

    def r(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g)

    idx = torch.tensor([[0, 2], [1, 1]])
    rows: list[tuple[str, Any, Any, torch.Tensor, tuple[Any, ...], dict[str, Any]]] = [
        ("linear", td.nn.functional.linear, F.linear, r(3, 4), (r(5, 4), r(5)), {}),
        ("layer_norm", td.layer_norm, F.layer_norm, r(3, 4), ([4], r(4), r(4)), {}),
        ("embedding", td.embedding, torch.embedding, r(5, 3), (idx,), {}),
        ("conv2d", td.conv2d, torch.conv2d, r(1, 2, 5, 5), (r(3, 2, 3, 3),), {}),
        (
            "cross_entropy",
            td.ops.aten.cross_entropy_loss.default,
            F.cross_entropy,
            r(4, 3),
            (torch.tensor([0, 2, 1, 1]),),
            {},
        ),
        ("dropout-eval", td.dropout, torch.dropout, r(3, 4), (0.5, False), {}),
        ("squeeze-all", lambda x: x.squeeze(), lambda x: x.squeeze(), r(3, 1, 4, 1), (), {}),
        ("index", lambda x, i: x[i], lambda x, i: x[i], r(4, 3), (torch.tensor([3, 0, 0]),), {}),
        ("softmax-last", td.softmax, torch.softmax, r(2, 5), (-1,), {}),
        (
            "scatter-add",
            td.scatter_add,
            torch.scatter_add,
            r(3, 4),
            (1, idx.repeat(1, 2)[:, :3], r(2, 3)),
            {},
        ),
    ]
    return [(label, (ours, theirs, x, args, kw)) for label, ours, theirs, x, args, kw in rows]


@functools.cache
def _case_table() -> dict[str, Any]:
    """Every case by label, built from op_db on first use (not at collection)."""
    return dict(_cases())


@functools.cache
def _inplace_table() -> dict[str, Any]:
    return dict(_inplace_cases())


def _manifest() -> dict[str, list[str]]:
    if not MANIFEST.exists():  # being regenerated
        return {"cases": [], "inplace": []}
    data: dict[str, list[str]] = json.loads(MANIFEST.read_text())
    return data


def _write_manifest() -> None:
    labels = list(_case_table())
    data = {"cases": labels, "inplace": list(_inplace_table())}
    MANIFEST.write_text(json.dumps(data, indent=0) + "\n")


def _params(labels: list[str], xfail: dict[str, str]) -> list[Any]:
    return [
        pytest.param(
            label,
            id=label,
            marks=[pytest.mark.xfail(strict=True, reason=xfail[label])] if label in xfail else [],
        )
        for label in labels
    ]


CASE_LABELS = _manifest()["cases"]
INPLACE_LABELS = _manifest()["inplace"]
NESTED_LABELS = [label for label in CASE_LABELS if label.endswith("-0")]


def test_manifest_lists_every_case() -> None:
    assert {"cases": list(_case_table()), "inplace": list(_inplace_table())} == _manifest(), (
        "conformance_cases.json is out of date with op_db or the library: regenerate it with "
        "`python tests/transforms/vmap/test_vmap_conformance.py`"
    )


def _to_td(x: Any) -> Any:
    if isinstance(x, torch.Tensor):
        return (
            td.from_numpy(x.detach().numpy().copy())
            if x.dim()
            else td.tensor(x.item(), dtype=getattr(td, str(x.dtype).split(".")[-1]))
        )
    if isinstance(x, tuple | list):
        return type(x)(_to_td(v) for v in x)
    if isinstance(x, torch.dtype):
        return getattr(td, str(x).split(".")[-1])
    return x


def _variant(t: torch.Tensor, k: int) -> torch.Tensor:
    if t.numel() == 0:
        return t.clone()
    v = t.flatten().roll(k).reshape(t.shape).clone()
    if t.is_floating_point():
        v = v * (1.0 + 0.25 * k)
    return v


def _leaves(args: tuple[Any, ...]) -> list[tuple[tuple[int, ...], torch.Tensor]]:
    """(path, tensor) of every tensor in the positional args (one level of lists)."""
    out = []
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor):
            out.append(((i,), a))
        elif isinstance(a, list | tuple):
            out.extend(((i, j), t) for j, t in enumerate(a) if isinstance(t, torch.Tensor))
    return out


def _placements(leaves: list[tuple[tuple[int, ...], torch.Tensor]]) -> list[tuple[Any, ...]]:
    choices = [[None, *range(t.dim() + 1)] for _, t in leaves]
    combos = [c for c in itertools.product(*choices) if any(d is not None for d in c)]
    if len(combos) <= MAX_PLACEMENTS:
        return combos
    step = len(combos) / MAX_PLACEMENTS
    return [combos[int(i * step)] for i in range(MAX_PLACEMENTS)]


def _replace(
    args: tuple[Any, ...], paths: list[tuple[int, ...]], values: list[Any]
) -> tuple[Any, ...]:
    out = [list(a) if isinstance(a, list | tuple) else a for a in args]
    for path, v in zip(paths, values, strict=True):
        if len(path) == 1:
            out[path[0]] = v
        else:
            out[path[0]][path[1]] = v
    return tuple(type(a)(o) if isinstance(a, tuple) else o for a, o in zip(args, out, strict=True))


def _in_dims(args: tuple[Any, ...], paths: list[tuple[int, ...]], dims: tuple[Any, ...]) -> Any:
    tree: list[Any] = [
        [None] * len(a)
        if isinstance(a, list)
        else (None,) * len(a)
        if isinstance(a, tuple)
        else None
        for a in args
    ]
    for path, d in zip(paths, dims, strict=True):
        if len(path) == 1:
            tree[path[0]] = d
        else:
            node = list(tree[path[0]])
            node[path[1]] = d
            tree[path[0]] = type(args[path[0]])(node)
    return tuple(tree)


def _same(ours: Any, ref: Any, where: str) -> None:
    if isinstance(ref, torch.Tensor):
        assert isinstance(ours, td.Tensor), f"{where}: got {type(ours)}"
        assert tuple(ours.shape) == tuple(ref.shape), f"{where}: shape {ours.shape} != {ref.shape}"
        assert ours.dtype.name == str(ref.dtype).split(".")[-1], f"{where}: dtype {ours.dtype}"
        np.testing.assert_allclose(
            np.asarray(ours.numpy()),
            ref.detach().numpy(),
            rtol=1e-4,
            atol=1e-5,
            equal_nan=True,
            err_msg=where,
        )
    elif isinstance(ref, tuple | list):
        assert len(ours) == len(ref), where
        for o, r in zip(ours, ref, strict=True):
            _same(o, r, where)
    else:
        assert ours == ref, where


def _to_torch(x: Any) -> Any:
    if isinstance(x, td.Tensor):
        return torch.from_numpy(np.array(x.numpy()))
    if isinstance(x, tuple | list):
        return type(x)(_to_torch(v) for v in x)
    return x


def _stack_results(results: list[Any]) -> Any:
    first = results[0]
    if isinstance(first, tuple | list):
        return type(first)(_stack_results([r[j] for r in results]) for j in range(len(first)))
    return td.stack(results, 0)


@pytest.mark.parametrize("label", _params(CASE_LABELS, {}))
def test_vmap_matches_loop_and_torch(label: str) -> None:
    ours, theirs, first, rest, kwargs = _case_table()[label]
    name = getattr(ours, "__name__", "op")
    assert ours is not None
    args_t = (first, *rest)
    kwargs_t = dict(kwargs)
    kwargs_td = {k: _to_td(v) for k, v in kwargs_t.items()}
    leaves = _leaves(args_t)
    assert leaves, "cases without a tensor argument are left out of the manifest"
    paths = [p for p, _ in leaves]
    for dims in _placements(leaves):
        where = f"{name} in_dims={dims}"
        variants = [[_variant(t, k) for k in range(BATCH)] for _, t in leaves]
        batched_t = [
            t if d is None else torch.stack(vs, d) for (_, t), vs, d in zip(leaves, variants, dims)
        ]
        in_dims = _in_dims(args_t, paths, dims)
        # the Python loop over the batch, in tensordispatch
        try:
            per_entry = []
            for k in range(BATCH):
                entry = [t if d is None else vs[k] for (_, t), vs, d in zip(leaves, variants, dims)]
                per_entry.append(ours(*_to_td(_replace(args_t, paths, entry)), **kwargs_td))
            expected: Any = _stack_results(per_entry)
        except Exception as e:  # noqa: BLE001 - the loop's exception is the expected result
            expected = e
        batched_args = _to_td(_replace(args_t, paths, batched_t))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if isinstance(expected, Exception):
                with pytest.raises(Exception):  # noqa: B017 - any error, as the loop
                    vmap(lambda *a: ours(*a, **kwargs_td), in_dims=in_dims)(*batched_args)
                continue
            try:
                ref = torch.func.vmap(lambda *a: theirs(*a, **kwargs_t), in_dims=in_dims)(
                    *_replace(args_t, paths, batched_t)
                )
            except Exception as e:  # noqa: BLE001 - torch declines some placements
                ref = e
            try:
                got = vmap(lambda *a: ours(*a, **kwargs_td), in_dims=in_dims)(*batched_args)
            except Exception:
                if isinstance(ref, Exception):
                    continue  # torch.func.vmap refuses the same placement (e.g. view)
                raise
            _same(got, _to_torch(expected), f"{where} vs loop")
            if not isinstance(ref, Exception):
                _same(got, ref, f"{where} vs torch.func.vmap")


# -- in-place variants: self batched (any dim), other tensors in every placement --------------


def _inplace_cases() -> list[tuple[str, Any]]:
    out = []
    for label, case in _case_table().items():
        _, _, first, rest, kwargs = case
        name = label.rsplit("-", 1)[0].split("-")[0]
        if not isinstance(first, torch.Tensor) or not first.is_floating_point():
            continue
        if not hasattr(td.Tensor, name + "_") or not hasattr(torch.Tensor, name + "_"):
            continue
        out.append((label, (name + "_", first, rest, kwargs)))
    return out


@pytest.mark.parametrize("label", _params(INPLACE_LABELS, XFAIL_INPLACE))
def test_inplace_variant_matches_loop_and_torch(label: str) -> None:
    name, first, rest, kwargs = _inplace_table()[label]
    kwargs_td = {k: _to_td(v) for k, v in kwargs.items()}
    args_t = (first, *rest)
    leaves = _leaves(args_t)
    paths = [p for p, _ in leaves]
    plain = _to_td(args_t)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            getattr(first.clone(), name)(*rest, **kwargs)
    except RuntimeError:  # not valid in place (e.g. self would have to broadcast)
        with pytest.raises(RuntimeError):
            getattr(plain[0], name)(*plain[1:], **kwargs_td)
        return
    getattr(plain[0], name)(*plain[1:], **kwargs_td)
    for dims in _placements(leaves):
        variants = [[_variant(t, k) for k in range(BATCH)] for _, t in leaves]
        batched_t = [
            t if d is None else torch.stack(vs, d)
            for (_, t), vs, d in zip(leaves, variants, dims, strict=True)
        ]
        in_dims = _in_dims(args_t, paths, dims)

        def ours(x: Any, *a: Any) -> Any:
            return getattr(x, name)(*a, **kwargs_td)

        def theirs(x: Any, *a: Any) -> Any:
            return getattr(x, name)(*a, **kwargs)

        batched_td = _to_td(_replace(args_t, paths, batched_t))  # copies, before torch writes
        try:
            ref = torch.func.vmap(theirs, in_dims=in_dims)(*_replace(args_t, paths, batched_t))
        except Exception as e:  # noqa: BLE001 - torch's refusal is compared below
            ref = e
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                got = vmap(ours, in_dims=in_dims)(*batched_td)
            except Exception as e:  # noqa: BLE001
                got = e
        where = f"{name} in_dims={dims}"
        if isinstance(ref, Exception):
            assert isinstance(got, Exception), f"{where}: torch raised {ref!r}, we returned"
            continue
        assert not isinstance(got, Exception), f"{where}: torch returned, we raised {got!r}"
        _same(got, ref, f"{where} vs torch.func.vmap")
        # the written argument is the caller's tensor (for an in-place view op: its geometry
        # too, with the batch dim where the caller mapped it, as torch)
        if dims[0] is not None:
            _same(batched_td[0], batched_t[0], f"{where}: the batched self was written")


# -- nested vmap: every tensor argument mapped at two levels -----------------------------------


@pytest.mark.parametrize("label", _params(NESTED_LABELS, XFAIL_NESTED))
def test_nested_vmap_matches_torch(label: str) -> None:
    ours, theirs, first, rest, kwargs = _case_table()[label]
    kwargs_td = {k: _to_td(v) for k, v in kwargs.items()}
    args_t = (first, *rest)
    leaves = _leaves(args_t)
    paths = [p for p, _ in leaves]
    ours(*_to_td(args_t), **kwargs_td)  # the library runs the plain sample
    # outer level maps dim 0 of every tensor, inner level the last dim of the first only
    inner = tuple(-1 if i == 0 else None for i in range(len(leaves)))
    outer = tuple(0 for _ in leaves)
    batched_t = []
    for i, (_, t) in enumerate(leaves):
        entries = [_variant(t, k) for k in range(2)]
        if i == 0:
            entries = [torch.stack([_variant(e, k) for k in range(BATCH)], -1) for e in entries]
        batched_t.append(torch.stack(entries, 0))
    in_inner, in_outer = _in_dims(args_t, paths, inner), _in_dims(args_t, paths, outer)
    try:
        ref = torch.func.vmap(
            torch.func.vmap(lambda *a: theirs(*a, **kwargs), in_dims=in_inner), in_dims=in_outer
        )(*_replace(args_t, paths, batched_t))
    except Exception:  # noqa: BLE001 - torch refuses this nesting: so must we
        with pytest.raises(Exception):  # noqa: B017 - any error, as torch
            vmap(vmap(lambda *a: ours(*a, **kwargs_td), in_dims=in_inner), in_dims=in_outer)(
                *_to_td(_replace(args_t, paths, batched_t))
            )
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = vmap(vmap(lambda *a: ours(*a, **kwargs_td), in_dims=in_inner), in_dims=in_outer)(
            *_to_td(_replace(args_t, paths, batched_t))
        )
    _same(got, ref, "nested vmap vs torch.func.vmap")


if __name__ == "__main__":
    _write_manifest()
    print(f"wrote {MANIFEST}")
