"""``vmap``: torch.func.vmap's front end (argument checks, wrapping, unwrapping, chunks).

Owns everything between the user's call and the batching kernel: in_dims/out_dims checking
and broadcasting over pytrees (with torch's messages), pushing a level, wrapping inputs
as BatchedTensors (Note [Batch dim at the front]), unwrapping outputs to out_dims, and
chunking. The kernels and rules do the per-operator work.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from tensordispatch.dispatch import DispatchKey
from tensordispatch.dispatch.keyset import DispatchKeySet
from tensordispatch.dispatch.tls import local_state
from tensordispatch.tensor.tensor import Tensor
from tensordispatch.transforms.vmap import kernel as _kernel
from tensordispatch.transforms.vmap.batched import (
    BatchedTensor,
    VmapLevel,
    move_from_front,
    move_to_front,
    pop_level,
    wrap,
)
from tensordispatch.transforms.vmap.pytree import broadcast_prefix, tree_flatten, tree_unflatten
from tensordispatch.transforms.vmap.rules import wrap_dim

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")
_VMAP_MODE_RAW = DispatchKeySet(DispatchKey.FuncTorchVmapMode).raw


def _name(func: Any) -> str:
    return getattr(func, "__name__", None) or repr(func)


def vmap(
    func: Callable[..., Any],
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """Vectorize ``func`` over a dim of its inputs (torch.func.vmap).

    ``in_dims``: an int, or a tuple matching the positional arguments (nested like them),
    each leaf an int (the mapped dim) or None (not mapped). ``out_dims``: where the mapped
    dim goes in each output (None: the output must not depend on the mapped inputs).
    ``randomness``: 'error', 'same' or 'different'. ``chunk_size``: run the batch in chunks
    of at most that many entries. Keyword arguments are passed through unmapped.

    >>> import tensordispatch as td
    >>> x = td.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> vmap(lambda row: (row * row).sum())(x)
    tensor([ 5., 25., 61.])
    >>> vmap(td.dot, in_dims=(0, None))(x, td.tensor([1.0, -1.0]))
    tensor([-1., -1., -1.])
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. "
            f"Got {randomness}"
        )
    if chunk_size is not None and chunk_size < 1:
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not _kernel._LIBS:
            _kernel.install()
        if type(in_dims) is int and len(args) == 1 and chunk_size is None:  # f(x): the commonest
            x = args[0]
            if isinstance(x, Tensor) and -len(x._shape) <= in_dims < len(x._shape):
                size = x._shape[in_dims]
                return _run(func, [x], [in_dims], None, kwargs, size, out_dims, randomness)
        fast = _fast_inputs(args, in_dims) if chunk_size is None else None
        if fast is not None:  # tensors mapped along one int dim: no pytree work
            return _run(func, list(args), fast[0], None, kwargs, fast[1], out_dims, randomness)
        flat_args, spec = tree_flatten(args)
        flat_dims = _check_in_dims(func, in_dims, args, flat_args, spec)
        size = _batch_size(flat_args, flat_dims)
        if chunk_size is None or chunk_size >= size:
            return _run(func, flat_args, flat_dims, spec, kwargs, size, out_dims, randomness)
        return _chunked(
            func, flat_args, flat_dims, spec, kwargs, size, out_dims, randomness, chunk_size
        )

    return wrapped


def _fast_inputs(args: tuple[Any, ...], in_dims: Any) -> tuple[list[Any], int] | None:
    """``(flat_dims, batch size)`` when every argument is a Tensor and ``in_dims`` is one int
    or a flat tuple of ints/None, all valid, with agreeing sizes; None sends the call down
    the general path (which also raises the errors)."""
    if not args:
        return None
    if type(in_dims) is int:
        dims: list[Any] = [in_dims] * len(args)
    elif type(in_dims) is tuple and len(in_dims) == len(args):
        dims = list(in_dims)
    else:
        return None
    size = -1
    for a, d in zip(args, dims, strict=True):
        if not isinstance(a, Tensor):
            return None
        if d is None:
            continue
        if type(d) is not int:
            return None
        n = len(a._shape)
        if not -n <= d < n:
            return None
        s = a._shape[d]
        if size != s:
            if size != -1:
                return None
            size = s
    return (dims, size) if size != -1 else None


def _check_in_dims(
    func: Any, in_dims: Any, args: tuple[Any, ...], flat_args: list[Any], spec: Any
) -> list[Any]:
    name = _name(func)
    if not isinstance(in_dims, int | tuple):
        raise ValueError(  # noqa: TRY004 - torch raises ValueError here
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
            "(potentially nested) tuple matching the structure of inputs, got: "
            f"{type(in_dims)}."
        )
    if not args:
        raise ValueError(
            f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
            "trying to vmap over a function with no inputs. The latter is unsupported."
        )
    flat_dims = broadcast_prefix(in_dims, spec)
    if flat_dims is None:
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with "
            "the structure of `inputs`. in_dims has structure "
            f"{tree_flatten(in_dims)[1]} but inputs has structure {spec}."
        )
    for arg, d in zip(flat_args, flat_dims, strict=True):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(  # noqa: TRY004 - torch raises ValueError here
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input "
                "but in_dim must be either an integer dimension or None."
            )
        if not isinstance(arg, Tensor):
            raise ValueError(  # noqa: TRY004 - torch raises ValueError here
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input "
                f"but the input is of type {type(arg)}. We cannot vmap over non-Tensor "
                "arguments, please use None as the respective in_dim"
            )
        n = arg.dim()
        if not -n <= d < n:
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some "
                f"input, but that input is a Tensor of dimensionality {n} so expected in_dim "
                f"to satisfy -{n} <= in_dim < {n}."
            )
    return flat_dims


def _batch_size(flat_args: list[Any], flat_dims: list[Any]) -> int:
    sizes = [a.shape[d] for a, d in zip(flat_args, flat_dims, strict=True) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got "
            f"sizes {sizes} for the mapped dimension"
        )
    return int(sizes[0])


def _run(
    func: Any,
    flat_args: list[Any],
    flat_dims: list[Any],
    spec: Any,
    kwargs: dict[str, Any],
    size: int,
    out_dims: Any,
    randomness: str,
) -> Any:
    # Note [The vmap frame]: the level push/pop and the FuncTorchVmapMode include are done
    # inline on the thread-local state (what push_level/pop_level and an
    # IncludeDispatchKeyGuard do, without their calls); the common exit (one Tensor batched
    # at this level, out_dims=0) returns the inner tensor, whose batch dim is already at 0.
    st = local_state()
    stack = st.transform_stack
    level = len(stack) + 1
    lvl = VmapLevel(level, size, randomness)
    stack.append(lvl)
    try:
        saved = st.included
        st.included = saved | _VMAP_MODE_RAW
        try:
            batched = []
            for a, d in zip(flat_args, flat_dims, strict=True):
                if d is None:
                    batched.append(a)
                    continue
                if d < 0:
                    d += len(a._shape)
                if d == 0:
                    batched.append(wrap(a, level))
                    continue
                b = wrap(move_to_front(a, d), level)
                lvl.sources[id(b)] = (b, a, d)
                batched.append(b)
            outputs = func(*(batched if spec is None else tree_unflatten(batched, spec)), **kwargs)
        finally:
            st.included = saved
        if type(out_dims) is int:
            if isinstance(outputs, Tensor):
                if out_dims == 0 and type(outputs) is BatchedTensor and outputs._level == level:
                    return outputs._data
                return _remove_batch_dim(_name(func), outputs, out_dims, level, size)
            if type(outputs) is tuple and all(isinstance(o, Tensor) for o in outputs):
                name = _name(func)
                return tuple(_remove_batch_dim(name, o, out_dims, level, size) for o in outputs)
        return _unwrap_outputs(func, outputs, out_dims, level, size)
    finally:
        if stack and stack[-1] is lvl:
            stack.pop()
        else:
            pop_level(lvl)


def _unwrap_outputs(func: Any, outputs: Any, out_dims: Any, level: int, size: int) -> Any:
    name = _name(func)
    flat_out, out_spec = tree_flatten(outputs)
    if not isinstance(out_dims, int | tuple | list | dict | type(None)) or isinstance(
        out_dims, bool
    ):
        raise ValueError(  # noqa: TRY004 - torch raises ValueError here
            f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a "
            "python collection of ints representing where in the outputs the vmapped "
            "dimension should appear."
        )
    flat_dims: list[Any] | None
    if isinstance(outputs, Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            flat_dims = [out_dims]
        elif isinstance(out_dims, tuple) and len(out_dims) == 1:
            flat_dims = list(out_dims)
        else:
            flat_dims = None
    else:
        flat_dims = broadcast_prefix(out_dims, out_spec)
    if flat_dims is None:
        raise ValueError(
            f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with "
            "the structure of `outputs`. out_dims has structure "
            f"{tree_flatten(out_dims)[1]} but outputs has structure {out_spec}."
        )
    result = [
        _remove_batch_dim(name, o, d, level, size) for o, d in zip(flat_out, flat_dims, strict=True)
    ]
    return tree_unflatten(result, out_spec)


def _remove_batch_dim(name: str, out: Any, out_dim: Any, level: int, size: int) -> Any:
    if out_dim is None:
        if type(out) is BatchedTensor and out._level == level:
            raise ValueError(
                f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None"
            )
        return out
    if not isinstance(out, Tensor):
        raise ValueError(  # noqa: TRY004 - torch raises ValueError here
            f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(out)}. Did "
            "you mean to set out_dims= to None for output?"
        )
    if type(out) is BatchedTensor and out._level == level:
        inner = out._data
        return move_from_front(inner, wrap_dim(out_dim, inner.dim(), scalar_ok=False))
    d = wrap_dim(out_dim, out.dim() + 1, scalar_ok=False)
    sizes = list(out.shape)
    sizes.insert(d, size)
    return out.expand(sizes)


def _chunked(
    func: Any,
    flat_args: list[Any],
    flat_dims: list[Any],
    spec: Any,
    kwargs: dict[str, Any],
    size: int,
    out_dims: Any,
    randomness: str,
    chunk_size: int,
) -> Any:
    """Run ``func`` on chunks of the batch and concatenate each output along its out_dim."""
    import tensordispatch as td

    pieces = []
    for start in range(0, size, chunk_size):
        n = min(chunk_size, size - start)
        chunk = [
            a if d is None else a.narrow(d, start, n)
            for a, d in zip(flat_args, flat_dims, strict=True)
        ]
        pieces.append(_run(func, chunk, flat_dims, spec, kwargs, n, out_dims, randomness))
    flat0, out_spec = tree_flatten(pieces[0])
    dims = broadcast_prefix(out_dims, out_spec) or [out_dims] * len(flat0)
    columns = [tree_flatten(p)[0] for p in pieces]
    merged = []
    for j, d in enumerate(dims):
        items = [c[j] for c in columns]
        merged.append(items[0] if d is None else td.cat(items, d))
    return tree_unflatten(merged, out_spec)
