"""torch's private functionalization functions (``torch._to_functional_tensor``,
``torch._enable_functionalization``, ``torch._functionalize_sync``, ...), exported at the
top level under the same names, for code written against them (AOTAutograd-style tracers).

Owns only the translation to this package's functionalization (wrapper.py): each function
is one of its operations under torch's name, argument names and errors. Must not add
behaviour of its own.

Note [torch's functionalization names]
torch exposes its functionalization machinery as underscore functions of ``torch``. The
ones here keep torch's results on the same programs (tests compare them):

* `_to_functional_tensor` / `_from_functional_tensor` wrap and unwrap (unwrapping does not
  sync); `_is_functional_tensor` / `_is_functional_tensor_base` (a wrapper that is no view);
* `_enable_functionalization(reapply_views=False)` / `_disable_functionalization()` include
  or drop the Functionalize key in this thread's dispatch state (what
  ``torch.func.functionalize`` does around its function), and
  `_functionalize_enable_reapply_views` sets the flag alone, returning the previous one;
* `_functionalize_sync`, `_functionalize_replace`, `_functionalize_commit_update`: the
  wrapper operations of spec 1.2 (`replace` takes a plain tensor, as torch's);
* `_functionalize_has_data_mutation` (a write to the alias group was committed),
  `_functionalize_mutation_counter` (how many values were written into it),
  `_functionalize_has_metadata_mutation` (a metadata-changing in-place op such as
  ``unsqueeze_`` ran on this wrapper), `_functionalize_is_multi_output_view` (the last view
  step picks one output of split/unbind/chunk).

Each refuses a tensor that is not functional with a RuntimeError, where torch fails an
internal assert (or crashes).
"""

from __future__ import annotations

from typing import Any

from tensordispatch.dispatch.tls import DEFAULT_INCLUDED_RAW, local_state
from tensordispatch.tensor.tensor import Tensor
from tensordispatch.transforms.functionalize.wrapper import (
    FUNCTIONALIZE_BIT,
    FunctionalTensor,
    commit_update,
    from_functional,
    is_functional,
    replace_,
    storage_of,
    sync,
    to_functional,
)

__all__ = [
    "_disable_functionalization",
    "_enable_functionalization",
    "_from_functional_tensor",
    "_functionalize_commit_update",
    "_functionalize_enable_reapply_views",
    "_functionalize_has_data_mutation",
    "_functionalize_has_metadata_mutation",
    "_functionalize_is_multi_output_view",
    "_functionalize_mutation_counter",
    "_functionalize_replace",
    "_functionalize_sync",
    "_is_functional_tensor",
    "_is_functional_tensor_base",
    "_to_functional_tensor",
]


def _wrapper(t: Any, name: str) -> FunctionalTensor:
    if not isinstance(t, FunctionalTensor):
        what = f"a {type(t).__name__}" + (
            f" on device '{t.device}'" if isinstance(t, Tensor) else ""
        )
        raise RuntimeError(  # noqa: TRY004 - torch fails a RuntimeError assert here
            f"{name}: expected a functional tensor (made by _to_functional_tensor), got {what}"
        )
    return t


def _to_functional_tensor(t: Tensor) -> FunctionalTensor:
    """``t`` wrapped for functionalization (a new alias group whose base is ``t``).

    >>> import tensordispatch as td
    >>> f = td._to_functional_tensor(td.ones(2)); td._is_functional_tensor(f), f
    (True, _to_functional_tensor(tensor([1., 1.])))
    """
    return to_functional(t)


def _from_functional_tensor(t: Tensor) -> Tensor:
    """The value a wrapper holds now, without syncing it (`_functionalize_sync` first)."""
    return from_functional(_wrapper(t, "_from_functional_tensor"))


def _is_functional_tensor(t: Any) -> bool:
    """Whether ``t`` is a functional wrapper."""
    return is_functional(t)


def _is_functional_tensor_base(t: Any) -> bool:
    """Whether ``t`` is a functional wrapper that is not a view of another one."""
    return isinstance(t, FunctionalTensor) and not t._view_metas


def _enable_functionalization(reapply_views: bool = False) -> None:
    """Functionalize every operator this thread runs on wrappers from now on, factories
    included (their results are wrapped), until `_disable_functionalization`.

    >>> import tensordispatch as td
    >>> f = td._to_functional_tensor(td.zeros(3))
    >>> td._enable_functionalization(reapply_views=False)
    >>> _ = f[1:].add_(1.0); td._functionalize_sync(f)
    >>> td._disable_functionalization(); td._from_functional_tensor(f).tolist()
    [0.0, 1.0, 1.0]
    """
    st = local_state()
    st.included = _canonical(st.included | FUNCTIONALIZE_BIT)
    st.functionalize_reapply_views = bool(reapply_views)


def _disable_functionalization() -> None:
    """Stop `_enable_functionalization` (and drop its reapply-views flag)."""
    st = local_state()
    st.included = _canonical(st.included & ~FUNCTIONALIZE_BIT)
    st.functionalize_reapply_views = False


def _canonical(word: int) -> int:
    """The default include word as its one canonical object when equal to it: the fast paths
    recognise the default thread state by identity (inline_methods.py Note [The
    default-state test], the one-hop bindings), so an equal copy would keep them off."""
    return DEFAULT_INCLUDED_RAW if word == DEFAULT_INCLUDED_RAW else word


def _functionalize_enable_reapply_views(reapply_views: bool = False) -> bool:
    """Set whether views under functionalization run as views (True) or as their ``*_copy``
    operators (False); returns the previous setting."""
    st = local_state()
    previous = bool(st.functionalize_reapply_views)
    st.functionalize_reapply_views = bool(reapply_views)
    return previous


def _functionalize_sync(t: Tensor) -> None:
    """Bring the wrapper up to date with the writes to its alias group."""
    sync(_wrapper(t, "_functionalize_sync"))


def _functionalize_replace(self_: Tensor, other: Tensor) -> None:
    """Make the plain tensor ``other`` ``self_``'s value; the alias group sees it only after
    `_functionalize_commit_update`."""
    w = _wrapper(self_, "_functionalize_replace")
    if isinstance(other, FunctionalTensor) or not isinstance(other, Tensor):
        raise RuntimeError(  # noqa: TRY004 - torch fails a RuntimeError assert here
            "_functionalize_replace: the new value must be a plain tensor, not a functional "
            f"one (got a {type(other).__name__}); unwrap it with _from_functional_tensor"
        )
    replace_(w, other)


def _functionalize_commit_update(t: Tensor) -> None:
    """Queue the wrapper's value as a write to its alias group."""
    commit_update(_wrapper(t, "_functionalize_commit_update"))


def _functionalize_has_data_mutation(t: Tensor) -> bool:
    """Whether a write to the wrapper's alias group was committed since it was made (a
    value replaced but not committed is no data mutation yet, as torch's)."""
    return storage_of(_wrapper(t, "_functionalize_has_data_mutation")).generation > 0


def _functionalize_mutation_counter(t: Tensor) -> int:
    """How many values were written into the wrapper's alias group."""
    return storage_of(_wrapper(t, "_functionalize_mutation_counter")).mutations


def _functionalize_has_metadata_mutation(t: Tensor) -> bool:
    """Whether an in-place operator changed this wrapper's sizes or strides."""
    return bool(_wrapper(t, "_functionalize_has_metadata_mutation")._has_metadata_mutation)


def _functionalize_is_multi_output_view(t: Tensor) -> bool:
    """Whether the wrapper's last view step took one output of a multi-output view."""
    metas = _wrapper(t, "_functionalize_is_multi_output_view")._view_metas
    return bool(metas) and metas[-1].is_multi_output
