"""The Functionalize key's kernels, generated from the operator YAML model (spec 1.3).

* every mutating operator of a group (``add_``, ``add.out``, ``copy_``, ``normal_`` ...):
  sync and unwrap all tensor arguments, run the group's functional operator below
  functionalization, then ``replace_`` + ``commit_update`` + ``sync`` each written wrapper;
* every view operator with a rule in view_metas.VIEW_RULES: run the view (remove='mutations')
  or its ``*_copy`` (remove='mutations_and_views') on the inner tensor, record a ViewMeta;
* in-place view operators that exist (``transpose_`` ...): append a ViewMeta to the wrapper;
* special kernels: ``resize_``, ``_to_copy``, ``lift``, ``lift_fresh``, ``lift_fresh_copy``;
* everything else: the boxed-style global fallback (sync + unwrap, call below, wrap).

Owns the registrations (one Library, ``install()`` / ``uninstall()``). They are made lazily,
on the first ``to_functional`` / ``functionalize`` call (Note [Lazy registration]), not at
import. Must not implement what operators compute.

Note [Lazy registration]
Registering ~300 kernels republishes ~300 dispatch tables and reads the YAML model: tens of
milliseconds nobody should pay at ``import tensordispatch``. No tensor carries the
Functionalize key before the first wrapper exists, so installing the kernels when the first
wrapper is made is unobservable, and ``install()`` is idempotent.

Note [Inplace errors without a meta run]
torch first runs an in-place operator on meta copies of its arguments, so that errors only
the in-place form raises (a broadcast that would grow ``self``, a result dtype that cannot
be cast into ``self``) still fire. That meta run costs a whole operator call per mutation;
we instead compare the functional result's shape and dtype with ``self`` after the call and
run the meta check only when they disagree, which raises the same error in the cases that
matter and costs nothing otherwise.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from tensordispatch.backends.aten import op
from tensordispatch.dispatch.dispatcher import DISPATCHER
from tensordispatch.dispatch.fallbacks import global_fallback_handle, restore_global_fallback
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.library import Library
from tensordispatch.tensor.device import CPU
from tensordispatch.tensor.dtypes import can_cast
from tensordispatch.tensor.geometry import contiguous_strides
from tensordispatch.tensor.tensor import Tensor
from tensordispatch.transforms.functionalize.shadow import (
    commit_write,
    write_target,
)
from tensordispatch.transforms.functionalize.view_kernels import (
    make_inplace_view_kernel,
    make_view_kernel,
)
from tensordispatch.transforms.functionalize.view_metas import INPLACE_VIEWS, VIEW_RULES
from tensordispatch.transforms.functionalize.wrapper import (
    _PLAIN_CPU_KS,
    _ST,
    BELOW_NO_GRAD,
    FUNCTIONALIZE_BIT,
    FunctionalStorage,
    FunctionalTensor,
    ViewMeta,
    _inner_excluded,
    _make_wrapper,
    _requires_grad,
    apply_updates,
    below,
    commit_update,
    replace_,
    sync,
    unobserved,
)

__all__ = ["FUNCTIONAL_VARIANTS", "install", "installed", "uninstall"]

_LOCK = threading.Lock()
_LIBS: list[Library] = []
# mutating overload name -> functional overload name (filled by install from the YAML model)
FUNCTIONAL_VARIANTS: dict[str, str] = {}
_FT = FunctionalTensor
_new_tuple = tuple.__new__  # ViewMeta(...) without the NamedTuple's Python-level __new__


def _wrap(t: Tensor) -> FunctionalTensor:
    return _make_wrapper(t, FunctionalStorage(t), (), 0)


def _wrap_outputs(result: Any) -> Any:
    if isinstance(result, Tensor):
        return result if result._wrapped_number else _wrap(result)
    if isinstance(result, tuple | list):
        return type(result)(_wrap_outputs(r) for r in result)
    return result


def _unwrap_value(v: Any) -> tuple[Any, bool]:
    """(v with every wrapper synced and unwrapped, whether any was a wrapper)."""
    if v.__class__ is _FT:
        sync(v)
        return v._data, True
    if v.__class__ is list or v.__class__ is tuple:
        found = False
        items = []
        for x in v:
            if x.__class__ is _FT:
                sync(x)
                items.append(x._data)
                found = True
            else:
                items.append(x)
        return (type(v)(items) if found else v), found
    return v, False


# -- the fallback: non-view, non-mutating operators ----------------------------------------------

_ALIASING: dict[Any, bool] = {}


def _has_alias_info(o: Any) -> bool:
    found = _ALIASING.get(o._entry)
    if found is None:
        schema = o._schema
        found = any(a.alias_info is not None for a in schema.arguments) or any(
            r.alias_info is not None for r in schema.returns
        )
        _ALIASING[o._entry] = found
    return found


def _alias_error(o: Any) -> RuntimeError:
    return RuntimeError(
        f"Found a custom (non-ATen) operator whose output has alias annotations: {o._schema}. "
        "We only support functionalizing operators whose outputs do not have alias "
        "annotations (e.g. 'Tensor(a)' is a Tensor with an alias annotation whereas 'Tensor' "
        "is a Tensor without. The '(a)' is the alias annotation). The alias annotation "
        "specifies that the output Tensor shares storage with an input that has the same "
        "annotation. Please check if (1) the output needs to be an output (if not, don't "
        "return it), (2) if the output doesn't share storage with any inputs, then delete "
        "the alias annotation. (3) if the output indeed shares storage with an input, then "
        "add a .clone() before returning it to prevent storage sharing and then delete the "
        "alias annotation. Otherwise, please file an issue on GitHub."
    )


def functionalize_fallback(o: Any, *args: Any, **kwargs: Any) -> Any:
    """Functionalize's global fallback: sync and unwrap every wrapper argument, call the
    operator below functionalization, wrap the tensor outputs if any input was a wrapper or
    there were no tensor inputs (factories)."""
    aliasing = _ALIASING.get(o._entry)
    if aliasing or (aliasing is None and _has_alias_info(o)):
        raise _alias_error(o)
    any_tensor = any_functional = grad = False
    new_args = list(args)
    for i, a in enumerate(args):
        cls = a.__class__
        if cls is _FT:
            if a._fs is not None and a._generation != a._fs.generation:
                sync(a)
            a = new_args[i] = a._data
            any_functional = any_tensor = True
        elif cls is list or cls is tuple:
            v, found = _unwrap_value(a)
            if found:
                new_args[i] = v
                any_functional = True
            any_tensor = any_tensor or any(isinstance(x, Tensor) for x in a)
            grad = grad or _requires_grad(v)
            continue
        elif isinstance(a, Tensor):
            any_tensor = True
        else:
            continue
        m = a._autograd_meta
        if m is not None and m.requires_grad:
            grad = True
    if kwargs:
        for k, a in list(kwargs.items()):
            if isinstance(a, Tensor) or a.__class__ is list or a.__class__ is tuple:
                v, found = _unwrap_value(a)
                if found:
                    kwargs[k] = v
                    any_functional = True
                any_tensor = any_tensor or isinstance(a, Tensor)
        grad = grad or _requires_grad(kwargs.values())
    d = _ST.__dict__  # below(o, ...) with the grad scan done above
    saved = d["excluded"]
    d["excluded"] = _inner_excluded(saved, grad)
    try:
        result = o(*new_args, **kwargs)
    finally:
        d["excluded"] = saved
    if any_functional or not any_tensor:
        if result.__class__ is Tensor and not result._wrapped_number:  # the common case
            return _make_wrapper(result, FunctionalStorage(result), (), 0)
        return _wrap_outputs(result)
    return result


# -- mutating operators ---------------------------------------------------------------------------


def _to_meta(v: Any) -> Any:
    if isinstance(v, Tensor):
        if v._wrapped_number:
            return v
        return Tensor._make_meta(v._shape, v._strides, v.dtype)
    if v.__class__ is list or v.__class__ is tuple:
        return type(v)(_to_meta(x) for x in v)
    return v


def _inplace_check(
    mut: Any, args: tuple[Any, ...], kwargs: dict[str, Any], new: Tensor, self_: Tensor
) -> None:
    """Note [Inplace errors without a meta run]."""
    if new._shape == self_._shape and (
        new.dtype is self_.dtype or can_cast(new.dtype, self_.dtype)
    ):
        return
    meta_args = [_to_meta(a) for a in args]
    meta_kwargs = {k: _to_meta(v) for k, v in kwargs.items()}
    below(mut, *meta_args, **meta_kwargs)  # raises the in-place form's own error


def _make_mutation_kernel(mut: Any, functional: Any) -> Callable[..., Any]:
    schema = mut._schema
    written = [(i, a.name) for i, a in enumerate(schema.arguments) if a.is_write]
    outs = set(schema.boxing_info.out_arg_indices) if schema.is_out_fn() else set()
    out_names = {schema.arguments[i].name for i in outs}
    inplace = not outs
    single = len(schema.returns) == 1
    # A factory's out= variant has no TensorOptions; its functional does: pass the out
    # tensor's dtype and device, as torch's generated kernel passes out.options() (else a
    # lazy out would be computed on CPU).
    own = {a.name for a in schema.arguments}
    options = [
        a.name
        for a in functional._schema.arguments
        if a.name in ("dtype", "device") and a.name not in own
    ]
    kernel_general = _make_mutation_kernel_general(
        mut, functional, written, outs, out_names, options
    )

    if inplace and single and [i for i, _ in written] == [0]:
        return _make_inplace_kernel(mut, functional, kernel_general)

    return kernel_general


def _make_mutation_kernel_general(
    mut: Any,
    functional: Any,
    written: list[tuple[int, str]],
    outs: set[int],
    out_names: set[str],
    options: list[str],
) -> Callable[..., Any]:
    inplace = not outs
    single = len(mut._schema.returns) == 1

    def kernel(*args: Any, **kwargs: Any) -> Any:
        nargs = len(args)
        mutated = [args[i] if i < nargs else kwargs.get(name) for i, name in written]
        unwrapped = list(args)
        any_functional_read = False
        for i, a in enumerate(args):
            v, found = _unwrap_value(a)
            if found:
                unwrapped[i] = v
                if i not in outs:
                    any_functional_read = True
        ukwargs = dict(kwargs)
        for k, a in kwargs.items():
            v, found = _unwrap_value(a)
            if found:
                ukwargs[k] = v
                if k not in out_names:
                    any_functional_read = True
        if not all(m.__class__ is _FT for m in mutated if m is not None):
            if any_functional_read:
                raise RuntimeError(
                    f"{mut}: mutating a non-functional tensor with a functional tensor is not "
                    "allowed. Please ensure that all of your inputs are wrapped inside of a "
                    "functionalize() call."
                )
            return below(mut, *args, **kwargs)
        if outs:
            fargs = [a for i, a in enumerate(unwrapped) if i not in outs]
            fkwargs = {k: v for k, v in ukwargs.items() if k not in out_names}
            if options:
                first = mutated[0]._data  # type: ignore[union-attr]
                fkwargs.update({name: getattr(first, name) for name in options})
        else:
            fargs, fkwargs = unwrapped, ukwargs
        result = below(functional, *fargs, **fkwargs)
        news = [result] if isinstance(result, Tensor) else list(result)
        extra = len(news) - len(mutated)
        m: FunctionalTensor
        for m, new in zip(mutated, news[extra:], strict=True):  # type: ignore[assignment]
            if inplace:
                _inplace_check(mut, tuple(unwrapped), ukwargs, new, m._data)
            replace_(m, new)
            commit_update(m)
            sync(m)
        if single:
            return mutated[0] if not extra else _wrap_outputs(news[0])
        return (*(_wrap_outputs(x) for x in news[:extra]), *mutated)

    return kernel


def _make_inplace_kernel(
    mut: Any, functional: Any, general: Callable[..., Any]
) -> Callable[..., Any]:
    """The kernel of an in-place operator that writes only ``self`` (``add_``, ``mul_``,
    ``zero_`` ...), the common case: the general kernel's steps without its bookkeeping
    for several written or out= arguments. Calls it does not handle go to ``general``."""

    # Note [Shadow views]: written through a copy of the base unless the op draws random
    # numbers (their order over a strided target is not promised to be the functional's)
    through = "nondeterministic_seeded" not in mut.tags

    def kernel(*args: Any, **kwargs: Any) -> Any:
        self_ = args[0] if args else None
        if self_.__class__ is not _FT:
            return general(*args, **kwargs)
        if self_._fs is not None and self_._generation != self_._fs.generation:
            sync(self_)
        unwrapped = [self_._data]
        for a in args[1:]:
            if a.__class__ is _FT:
                if a._fs is not None and a._generation != a._fs.generation:
                    sync(a)
                unwrapped.append(a._data)
            elif a.__class__ is list or a.__class__ is tuple:
                unwrapped.append(_unwrap_value(a)[0])
            else:
                unwrapped.append(a)
        if kwargs:
            kwargs = {k: _unwrap_value(v)[0] for k, v in kwargs.items()}
        old = unwrapped[0]
        if (
            through
            and unobserved(old)
            and not _requires_grad(unwrapped)
            and not (kwargs and _requires_grad(kwargs.values()))
        ):
            prepared = write_target(self_)
            if prepared is not None:
                unwrapped[0] = prepared[0]
                _call_no_grad(mut, unwrapped, kwargs)  # raises the in-place form's errors
                commit_write(self_, *prepared)
                return self_
        new = below(functional, *unwrapped, **kwargs)
        if new._shape != old._shape or (
            new.dtype is not old.dtype and not can_cast(new.dtype, old.dtype)
        ):
            _inplace_check(mut, tuple(unwrapped), kwargs, new, old)
        replace_(self_, new)
        commit_update(self_)
        if _replay_unneeded(self_):  # Note [Skipping unobserved replays]
            apply_updates(self_._fstorage)
            self_._generation = self_._fstorage.generation
        else:
            sync(self_)
        return self_

    return kernel


def _call_no_grad(fn: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """``fn(*args, **kwargs)`` below functionalization, for tensors not requiring grad."""
    d = _ST.__dict__
    saved = d["excluded"]
    d["excluded"] = saved | BELOW_NO_GRAD
    try:
        return fn(*args, **kwargs)
    finally:
        d["excluded"] = saved


def _replay_unneeded(w: FunctionalTensor) -> bool:
    """Whether replaying ``w``'s chain after its mutation would give back its value, and no
    one observes the replay (Note [Skipping unobserved replays])."""
    value = w._data
    if not unobserved(value):
        return False
    for m in w._view_metas:
        if m.reapply_views or not m.rule.exact:
            return False
    return value._strides == contiguous_strides(value._shape)


# -- special kernels ------------------------------------------------------------------------------


def _to_copy_kernel(self: Any, **kwargs: Any) -> Any:
    """Sync + unwrap; the result stays functional unless functionalization is not
    TLS-included and the target is neither lazy nor XLA: how ``lazy.cpu()`` leaves it."""
    inner = self
    if self.__class__ is _FT:
        sync(self)
        inner = self._data
    result = below(op("_to_copy"), inner, **kwargs)
    if self.__class__ is not _FT:
        return result
    target = result.device.type
    if _ST.included & FUNCTIONALIZE_BIT or target in ("lazy", "xla"):
        return _wrap(result)
    return result


def _resize_kernel(self: Any, size: Any, **kwargs: Any) -> Any:
    """resize_ (spec 1.3): growing the storage gives a non-view wrapper a brand-new storage
    (views may not grow); shrinking is an in-place ``as_strided`` view (inverse
    ``as_strided_scatter``). The functional ``resize`` runs below either way, as torch."""
    if self.__class__ is not _FT:
        return below(op("resize_"), self, size, **kwargs)
    sync(self)
    inner = self._data
    tmp = below(op("resize"), inner, size, **kwargs)
    numel = 1
    for s in tmp._shape:
        numel *= s
    needed = (self._offset + numel) * self.dtype.itemsize if numel else 0
    if needed > inner._storage_nbytes():
        if self._view_metas:
            raise RuntimeError(
                "Attempted to resize a view tensor to a larger size. This is not allowed in "
                "the functionalization pass"
            )
        self._fstorage = FunctionalStorage(tmp)
        self._generation = 0
        replace_(self, tmp, from_regenerate=True)
        return self
    rule = VIEW_RULES["as_strided"]
    meta = ViewMeta(
        rule, (list(tmp._shape), list(tmp._strides)), {}, _ST.functionalize_reapply_views
    )
    self._view_metas = (*self._view_metas, meta)
    self._has_metadata_mutation = True
    self._shadow = None
    replace_(self, meta.forward(inner), from_regenerate=True)
    return self


def _make_lift_kernel(o: Any) -> Callable[..., Any]:
    def kernel(self: Any) -> Any:
        if self.__class__ is _FT:
            sync(self)
            return _wrap(below(o, self._data))
        return _wrap(below(o, self))

    return kernel


# -- registration ---------------------------------------------------------------------------------

# Mutating operators with a hand-written kernel instead of the generated one (spec 1.3).
_SPECIAL: dict[str, Callable[..., Any]] = {"resize_": _resize_kernel}


def _defined(name: str) -> Any:
    base, _, overload = name.partition(".")
    if DISPATCHER.find(f"aten::{base}", overload) is None:
        return None
    return op(name)


# Mutating members of groups torch 2.13 registers no Functionalize kernel for (checked
# against torch by tests/transforms/functionalize: they reach the fallback, as in torch).
_NOT_FUNCTIONALIZED = frozenset({"lift.out", "randn.out", "resize.out"})


def _tables() -> tuple[dict[str, str], list[str]]:
    """(mutating op -> its group's functional op, CompositeImplicitAutograd view ops) from
    the YAML model. Mutating ops with a CIA kernel decompose before reaching Functionalize
    and get no kernel; CIA view ops get their own decomposition registered for Functionalize
    (torch's Note [Composite view ops in the functionalization pass])."""
    from tensordispatch.schema import load_native_functions

    parsed = load_native_functions()
    table: dict[str, str] = {}
    for g in parsed.groups:
        functional = str(g.functional.func.name)
        for f in (g.inplace, g.out, g.mutable):
            if f is None or f.has_composite_implicit_autograd_kernel:
                continue
            if str(f.func.name) not in _NOT_FUNCTIONALIZED:
                table[str(f.func.name)] = functional
    composite_views = [
        str(f.func.name)
        for vg in parsed.view_groups
        if vg.composite
        for f in vg.functions(include_copy=False)
    ]
    return table, composite_views


def _cia_kernel(name: str) -> Any:
    base, _, overload = name.partition(".")
    entry = DISPATCHER.find(f"aten::{base}", overload)
    kernels = None if entry is None else entry.kernels.get(DispatchKey.CompositeImplicitAutograd)
    return kernels[-1].fn if kernels else None


def installed() -> bool:
    """Whether the Functionalize kernels are registered."""
    return bool(_LIBS)


def install() -> None:
    """Register every Functionalize kernel (idempotent; Note [Lazy registration])."""
    if _LIBS:
        return
    with _LOCK:
        if _LIBS:
            return
        if not _PLAIN_CPU_KS:  # first: the view kernels read it inline (no operator call:
            # a tracer active during the first functionalize call would record it)
            _PLAIN_CPU_KS.append(CPU._key_set)
        table, composite_views = _tables()
        lib = Library("aten", "IMPL", "Functionalize")
        fallback_lib = Library("_", "IMPL")
        with DISPATCHER.batch():
            global_fallback_handle(DispatchKey.Functionalize).remove()
            fallback_lib.fallback(functionalize_fallback, "Functionalize")
            for mut_name, functional_name in sorted(table.items()):
                mut, functional = _defined(mut_name), _defined(functional_name)
                if mut_name in _SPECIAL:
                    lib.impl(mut_name, _SPECIAL[mut_name])
                elif mut is not None and functional is not None:
                    lib.impl(mut_name, _make_mutation_kernel(mut, functional))
            FUNCTIONAL_VARIANTS.update(table)
            for name, rule in VIEW_RULES.items():
                if _defined(name) is not None and (
                    rule.copy_op is None or _defined(rule.copy_op) is not None
                ):
                    lib.impl(name, make_view_kernel(rule))
            for name, view in INPLACE_VIEWS.items():
                mut = _defined(name)
                if mut is not None and view in VIEW_RULES:
                    lib.impl(name, make_inplace_view_kernel(mut, VIEW_RULES[view]))
            for name in composite_views:
                fn = _cia_kernel(name)
                if fn is not None:
                    lib.impl(name, fn)
            if _defined("_to_copy") is not None:
                lib.impl("_to_copy", _to_copy_kernel)
            for name in ("lift", "lift_fresh", "lift_fresh_copy"):
                o = _defined(name)
                if o is not None:
                    lib.impl(name, _make_lift_kernel(o))
        _LIBS.extend([lib, fallback_lib])


def uninstall() -> None:
    """Remove every Functionalize kernel and restore the import-time fallback."""
    with _LOCK:
        while _LIBS:
            _LIBS.pop()._destroy()
        restore_global_fallback(DispatchKey.Functionalize)
        FUNCTIONAL_VARIANTS.clear()
        from tensordispatch.transforms.functionalize import wrapper

        wrapper._INSTALLED.clear()
