"""The ADInplaceOrView kernel of mutating operators, and the redispatch below it.

Owns ``_make_ad_inplace_kernel`` (torch's ADInplaceOrView kernel for in-place and out=
operators: run below the key, then bump the version of each written tensor), its
per-(operator, key set) entry (Note [The ADInplaceOrView entry]) and
``_below_ad_inplace_or_view`` (torch's AutoDispatchBelowADInplaceOrView, used by the autograd
kernels too). Split from kernels.py, which registers these kernels and re-exports the names.
Must not record graphs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tensordispatch.dispatch.keyset import (
    AFTER_AD_INPLACE_OR_VIEW_RAW,
    AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW,
)
from tensordispatch.dispatch.tls import local_state
from tensordispatch.tensor import Tensor
from tensordispatch.tensor.tensor import VersionCounter

if TYPE_CHECKING:
    from tensordispatch.schema.model import FunctionSchema

_ST = local_state()
_BELOW_ADIOV = AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW
_Tensor, _VersionCounter = Tensor, VersionCounter


def _below_ad_inplace_or_view(
    op: Any, raw: int, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """Redispatch with the autograd keys and ADInplaceOrView excluded for nested calls
    (torch's AutoDispatchBelowADInplaceOrView; the guard class, inlined for speed)."""
    st = _ST
    saved = st.excluded
    st.excluded = saved | _BELOW_ADIOV
    state = op._entry.state  # OpOverload.redispatch's lookup, inlined
    try:
        try:
            entry = state.redispatch_cache[raw]
        except KeyError:
            entry = state.redispatch_miss(raw)
        return entry(*args, **kwargs)
    finally:
        st.excluded = saved


def _make_ad_inplace_kernel(schema: FunctionSchema) -> Callable[..., Any]:
    """ADInplaceOrView for a mutating operator: run below it, then bump each written tensor
    (Note [The ADInplaceOrView entry])."""
    written = tuple((i, a.name) for i, a in enumerate(schema.arguments) if a.is_write)
    self_only = written == ((0, "self"),)

    def kernel(raw: int, op: Any, *args: Any, **kwargs: Any) -> Any:
        # Nested calls (composite kernels) must not bump again.
        result = _below_ad_inplace_or_view(op, raw & AFTER_AD_INPLACE_OR_VIEW_RAW, args, kwargs)
        _bump_written(written, args, kwargs)
        return result

    def specialize(op: Any, raw: int) -> Callable[..., Any] | None:
        return _ad_inplace_entry(op, raw, written, self_only)

    kernel._td_specialize = specialize  # type: ignore[attr-defined]
    # ops/indexing_fast recognises it: it runs below and bumps the written tensors, nothing more
    kernel._td_plain_inplace = True  # type: ignore[attr-defined]
    return kernel


def _bump_written(
    written: tuple[tuple[int, str], ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    """Bump the version of each written tensor argument, given positionally or by name (each
    tensor of a written ``Tensor(a!)[]``, as torch's ``increment_version`` of a list)."""
    n = len(args)
    for i, name in written:
        t = args[i] if i < n else kwargs.get(name)
        if isinstance(t, Tensor):
            t._bump_version()
        elif type(t) in (list, tuple):
            for e in t:
                if isinstance(e, Tensor):
                    e._bump_version()


def _ad_inplace_entry(
    op: Any, raw: int, written: tuple[tuple[int, str], ...], self_only: bool
) -> Callable[..., Any] | None:
    """The ADInplaceOrView entry of ``op`` for final key set ``raw`` (the kernel's specializer).

    Note [The ADInplaceOrView entry]
    Called through the generic RAW_KEYSET convention, the kernel pays a ``partial``, the
    packing of ``*args``, the redispatch lookup and a loop over the written arguments per
    call (~1 us of a 4x4 ``add_``). The entry does the same steps with the backend entry of
    ``raw & AFTER_AD_INPLACE_OR_VIEW`` bound once: it is the redispatch entry of the same
    published state, and any registration republishes the state, whose caches (holding this
    entry) start empty (operator.py, Note [Published dispatch state]). The common
    ``self``-only operators (``add_``, ``copy_``) bump ``self`` without the loop, inline when
    it is a plain Tensor with a counter already. None (the
    generic kernel) when the lookup raises: the call then raises it, in order.
    """
    state = op._entry.state
    after = raw & AFTER_AD_INPLACE_OR_VIEW_RAW
    try:
        below = state.redispatch_cache.get(after) or state.redispatch_miss(after)
    except Exception:  # noqa: BLE001 - the generic kernel raises it at the call
        return None
    st, excluding = _ST, _BELOW_ADIOV

    if self_only:

        def entry(*args: Any, **kwargs: Any) -> Any:
            saved = st.excluded
            st.excluded = saved | excluding
            try:
                result = below(*args, **kwargs)  # (one tuple: a `self` parameter costs more)
            finally:
                st.excluded = saved
            self = args[0] if args else kwargs.get("self")
            if type(self) is _Tensor:  # self._bump_version(), inlined for the common case
                root = self._base
                vc = (self if root is None else root)._vc
                if type(vc) is _VersionCounter:
                    vc.version += 1
                    return result
            if isinstance(self, Tensor):  # a new counter, an inference tensor, a subclass
                self._bump_version()
            return result

        return entry

    def entry_many(*args: Any, **kwargs: Any) -> Any:
        saved = st.excluded
        st.excluded = saved | excluding
        try:
            result = below(*args, **kwargs)
        finally:
            st.excluded = saved
        _bump_written(written, args, kwargs)
        return result

    return entry_many
