"""The Functionalize kernels of view operators (spec 1.3): a view of a wrapper runs the
view (remove='mutations') or its ``*_copy`` (remove='mutations_and_views') on the inner
tensor and records a ViewMeta; an in-place view operator (``transpose_`` ...) appends a
ViewMeta to the wrapper itself. Unobserved, the view is taken on the parent's shadow and
the child's place recorded (Note [Shadow views] in shadow.py).

Owns only these kernel factories; kernels.py registers them. Must not know the view rules
themselves (view_metas.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.transforms.functionalize.shadow import dense_copy, parent_shadow, place_of
from tensordispatch.transforms.functionalize.wrapper import (
    _PLAIN_CPU_KS,
    _SKIPPING,
    _ST,
    BELOW_NO_GRAD,
    FunctionalTensor,
    ViewMeta,
    _make_wrapper,
    below,
    replace_,
    sync,
    wrap_view,
)

__all__ = ["make_inplace_view_kernel", "make_view_kernel"]

_FT = FunctionalTensor
_new_tuple = tuple.__new__  # ViewMeta(...) without the NamedTuple's Python-level __new__


def make_view_kernel(rule: Any) -> Callable[..., Any]:
    view_op = op(rule.view_op)
    copy_op = op(rule.copy_op) if rule.copy_op is not None else view_op
    multi = rule.multi_output
    # Note [Shadow views]: exact views that keep the dtype and the values (a conjugate or
    # negative view's values are not its place's: a shadow would read them unresolved)
    shadowed = rule.exact and rule.name not in (
        "view_as_real", "view_as_complex", "_conj", "_neg_view"
    )  # fmt: skip

    def kernel(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self.__class__ is not _FT:
            return below(view_op, self, *args, **kwargs)
        reapply = _ST.functionalize_reapply_views
        generation = 0
        # unobserved(self._data), inline (set before any kernel is registered)
        fast = _SKIPPING[0] and self._data._key_set == _PLAIN_CPU_KS[0] and not _ST.modes
        if fast:  # Note [Skipping unobserved replays]
            if self._fs is not None and self._generation != self._fs.generation:
                sync(self)
            generation = self._generation
            parent = parent_shadow(self, reapply) if shadowed else None
            if parent is not None:
                d = _ST.__dict__  # the view of the shadow, below, without grad
                saved = d["excluded"]
                d["excluded"] = saved | BELOW_NO_GRAD
                try:
                    out = view_op(parent, *args, **kwargs)
                except RuntimeError:  # e.g. view of a transposed shadow: no shadow
                    out = None
                finally:
                    d["excluded"] = saved
                if out is None:
                    pass
                elif multi:
                    return _wrap_shadowed(self, out, rule, args, kwargs, reapply)
                else:  # _wrap_shadowed's single-output case, inline (the common view)
                    t = _make_wrapper(
                        out if reapply else dense_copy(out),
                        self._fstorage,
                        (*self._view_metas, _new_tuple(ViewMeta, (rule, args, kwargs, reapply, 0))),
                        generation,
                    )
                    t._has_metadata_mutation = self._has_metadata_mutation
                    t._shadow = (out._shape, out._strides, out._offset, out._data.strides)
                    return t
        if fast and not reapply:
            tmp = below(rule.run, self._data, args, kwargs, False)
        else:
            tmp = below(view_op if reapply else copy_op, self._data, *args, **kwargs)
        if multi:
            return [
                wrap_view(t, self, ViewMeta(rule, args, kwargs, reapply, i), generation)
                for i, t in enumerate(tmp)
            ]
        meta = _new_tuple(ViewMeta, (rule, args, kwargs, reapply, 0))
        return wrap_view(tmp, self, meta, generation)

    return kernel


def _wrap_shadowed(
    self: FunctionalTensor, out: Any, rule: Any, args: Any, kwargs: Any, reapply: bool
) -> Any:
    """The view wrapper(s) of ``self`` from the view's shadow(s) ``out`` (Note [Shadow
    views]): the shadow itself under remove='mutations', else a dense copy (the
    ``*_copy``)."""
    storage = self._fstorage
    chain = self._view_metas
    if not rule.multi_output:
        t = _make_wrapper(
            out if reapply else dense_copy(out),
            storage,
            (*chain, _new_tuple(ViewMeta, (rule, args, kwargs, reapply, 0))),
            self._generation,
        )
        t._has_metadata_mutation = self._has_metadata_mutation
        t._shadow = place_of(out)
        return t
    views = []
    for i, s in enumerate(out):
        meta = ViewMeta(rule, args, kwargs, reapply, i)
        t = wrap_view(s if reapply else dense_copy(s), self, meta, self._generation)
        t._shadow = place_of(s)
        views.append(t)
    return views


def make_inplace_view_kernel(mut: Any, rule: Any) -> Callable[..., Any]:
    def kernel(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self.__class__ is not _FT:
            return below(mut, self, *args, **kwargs)
        meta = ViewMeta(rule, args, kwargs, _ST.functionalize_reapply_views, 0)
        self._view_metas = (*self._view_metas, meta)
        self._has_metadata_mutation = True
        self._shadow = None
        replace_(self, meta.forward(self._data), from_regenerate=True)
        return self

    return kernel
