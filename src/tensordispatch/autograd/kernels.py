"""Autograd and ADInplaceOrView kernels for the aten operators, built from derivatives.yaml.

Owns torch's VariableType (one kernel per differentiable operator, registered under the
Autograd alias key) and ADInplaceOrView (version-counter bumps for in-place and out=
operators), built at import from ops/derivatives.yaml and the operators' schemas. Must not
run graphs (engine.py).

Note [The autograd kernel]
Every kernel is a RAW_KEYSET kernel ``k(raw, op, *args, **kwargs)``. If no differentiable
input has autograd metadata that requires grad, or grad mode is off, it redispatches with
``raw & AFTER_AUTOGRAD`` and returns: that is the whole no-grad cost. Otherwise it builds
the node (named like torch's, e.g. MulBackward0), saves what the formulas of the inputs
that require grad read (tensors as SavedTensor with their version), runs the operator below
autograd, and links the output (grad_fn, output_nr, requires_grad). In-place variants
share their functional entry's formulas and node name, check torch's leaf rule, save a
clone of ``self`` when a formula reads the pre-update ``self``, and rebase ``self``'s
history; on a view they rebase the view's root through CopySlices (views.py). out=
variants raise torch's error when an input requires grad.

Note [Fresh outputs at version 0]
torch runs every autograd kernel's redispatch below ADInplaceOrView, so the in-place steps
of a composite kernel (``zeros_like`` = ``empty_like`` + ``fill_``) do not bump the version
of the tensor it is building: a new tensor comes out at version 0. Our no-grad path skips
that guard (it is the hot path); instead, a functional non-view operator's output whose
version counter moved (and that is not one of its inputs) is reset to version 0, which is
what torch's users observe. The recording path runs below ADInplaceOrView, as torch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensordispatch.autograd.ad_inplace import (  # noqa: F401 - re-exported
    _ad_inplace_entry,
    _below_ad_inplace_or_view,
    _bump_written,
    _make_ad_inplace_kernel,
)
from tensordispatch.autograd.derivatives import DifferentiabilityInfo, load_derivatives
from tensordispatch.autograd.entries import InlineRecord, autograd_entry
from tensordispatch.autograd.formulas import HELPERS
from tensordispatch.autograd.functions_manual import Options
from tensordispatch.autograd.graph import (
    Node,
    SavedTensor,
    TensorMeta,
    collect_next_edges,
    meta_of,
)
from tensordispatch.autograd.node_apply import make_apply
from tensordispatch.autograd.views import check_view_inplace, differentiable_base, mark_view
from tensordispatch.dispatch.dispatcher import DISPATCHER, RegistrationHandle
from tensordispatch.dispatch.kernel import KernelFunction, KernelKind
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import (
    AFTER_AUTOGRAD_RAW,
    AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW,
    keyset_raw,
)
from tensordispatch.dispatch.tls import local_state
from tensordispatch.schema.model import FunctionSchema
from tensordispatch.tensor import Tensor
from tensordispatch.tensor.tensor import VersionCounter

__all__ = [
    "HANDLES",
    "INFOS",
    "NODE_CLASSES",
    "FormulaNode",
    "check_inplace",
    "register_all",
    "unregister_all",
]

_ST = local_state()
_AFTER = AFTER_AUTOGRAD_RAW
# below a functional operator's autograd kernel ADInplaceOrView is skipped (Note [Versions of
# results made from inference tensors] in inference_versions.py; else a fallthrough there)
_AFTER_FN = AFTER_AUTOGRAD_RAW & ~keyset_raw(DispatchKey.ADInplaceOrView)
_BELOW_ADIOV = AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
LEAF_VIEW_INPLACE = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)


class FormulaNode(Node):
    """A node whose backward is the formulas of one DifferentiabilityInfo."""

    __slots__ = ("_layout", "_needed", "_saved")
    info: DifferentiabilityInfo
    _needed: tuple[bool, ...]
    _saved: dict[str, Any]
    # Per formula: its edges, as (first edge, count or -1 for a single tensor) per input name;
    # None while every formula has one plain tensor input (edge i = formula i).
    _layout: tuple[tuple[tuple[int, int], ...], ...] | None

    def apply(self, grads: list[Tensor | None]) -> tuple[Tensor | None, ...]:
        grad = grads[0]
        formulas = self.info.formulas
        if grad is None:
            return tuple(None for _ in formulas)
        env = self._env()
        env["grad"] = grad
        out: list[Tensor | None] = []
        for f, needed in zip(formulas, self._needed, strict=True):
            out.append(f.fn(*[env[n] for n in f.names]) if needed else None)
        return tuple(out)

    def _env(self) -> dict[str, Any]:
        env: dict[str, Any] = {}
        for name, value in self._saved.items():
            if type(value) is SavedTensor:
                env[name] = value.unpack(self)
            elif type(value) is list and value and type(value[0]) is SavedTensor:
                env[name] = [v.unpack(self) for v in value]
            else:
                env[name] = value
        if self._released:
            from tensordispatch.autograd.graph import FREED_MESSAGE

            raise RuntimeError(FREED_MESSAGE)
        return env

    def release(self) -> None:
        self._released = True
        self._saved = {}


class GeneralFormulaNode(FormulaNode):
    """A node of an operator with several outputs, Tensor[] or Tensor? inputs, or formulas
    for several inputs (Note [Entry keys] in derivatives.py)."""

    __slots__ = ("_n_outputs",)
    _n_outputs: int

    def apply(self, grads: list[Tensor | None]) -> tuple[Tensor | None, ...]:
        needed = self._needed
        out: list[Tensor | None] = [None] * len(needed)
        if all(g is None for g in grads):
            return tuple(out)
        info = self.info
        padded = list(grads) + [None] * (self._n_outputs - len(grads))
        env = self._env()
        env["grad"] = padded[0] if padded else None
        env["grads"] = padded
        for name, g in zip(info.outputs, padded, strict=False):
            env[f"grad_{name}"] = g
        for f, slots in zip(info.formulas, self._layout or (), strict=True):
            masks = [any(needed[a : a + max(n, 1)]) if n != 0 else False for a, n in slots]
            if not any(masks):
                continue
            env["grad_input_mask"] = masks
            value = f.fn(*[env[n] for n in f.names])
            values = value if len(slots) > 1 else (value,)
            for (start, count), v, m in zip(slots, values or (None,) * len(slots), masks):
                if not m or v is None:
                    continue
                if count < 0:
                    out[start] = v
                else:
                    for i, item in enumerate(v):
                        if needed[start + i]:
                            out[start + i] = item
        return tuple(out)


def _node_class(info: DifferentiabilityInfo, name: str) -> type[FormulaNode]:
    base = FormulaNode if info.simple else GeneralFormulaNode
    body: dict[str, Any] = {"__slots__": (), "info": info, "__module__": __name__}
    if info.simple:
        apply = _generated_apply(info)
        if apply is not None:
            body["apply"] = apply
    return type(name, (base,), body)


def _generated_apply(info: DifferentiabilityInfo) -> Callable[..., Any] | None:
    """The node's apply generated from its formulas (node_apply.py, Note [Generated apply])."""
    plain = {a.name for a in info.schema.arguments if str(a.type) == "Tensor" and a.default is None}
    saves = tuple(
        (
            name,
            "any" if attr is None and arg not in plain else "tensor" if attr is None else "value",
            readers,
        )
        for name, arg, attr, readers in _inline_saves(info)
    )
    result = info.outputs[0] if info.uses_result else None
    formulas = tuple(f.names for f in info.formulas)
    functions = tuple(f.fn for f in info.formulas)
    inline = (tuple(f.python for f in info.formulas), HELPERS)
    return make_apply(saves, formulas, functions, result, info.node_name, inline)


_Getter = Callable[[tuple[Any, ...], dict[str, Any]], Any]
_ATTR_OF: dict[str, Callable[[Any], Any]] = {
    "sym_sizes": lambda t: t._shape,
    "sym_numel": lambda t: t.numel(),
    "sym_strides": lambda t: t._strides,
    "scalar_type": lambda t: t.dtype,
    "layout": lambda t: None,  # strided only
    "options": lambda t: Options(t.dtype, t.device),
    "geometry": lambda t: (tuple(t._shape), tuple(t._strides), t._offset),
    "args_sizes": lambda ts: [tuple(t._shape) for t in ts],
    "args_scalartypes": lambda ts: [t.dtype for t in ts],
}


def _arg_getter(schema: FunctionSchema, name: str) -> _Getter:
    """How to read argument ``name`` from a call's (args, kwargs), defaults filled in."""
    for i, a in enumerate(schema.arguments):
        if a.name != name:
            continue
        default = a.default_value if a.default is not None else None
        if a.kwarg_only:
            return lambda args, kw: kw.get(name, default)
        return lambda args, kw: args[i] if i < len(args) else kw.get(name, default)
    for base in (a.name for a in schema.arguments):
        kind = name[len(base) + 1 :]
        if name.startswith(base + "_") and kind in _ATTR_OF:
            get, attr = _arg_getter(schema, base), _ATTR_OF[kind]

            return _attr_reader(get, attr)
    raise KeyError(f"{schema.name}: a formula reads {name!r}, which is no argument of it")


def _attr_reader(get: _Getter, attr: Callable[[Any], Any]) -> _Getter:
    def read(args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
        value = get(args, kw)
        return None if value is None else attr(value)

    return read


def _save_plan(info: DifferentiabilityInfo) -> tuple[tuple[tuple[str, _Getter], ...], ...]:
    """Per formula, the (name, getter) of each value it reads except gradients and outputs."""
    return tuple(
        tuple(
            (n, _arg_getter(info.schema, n))
            for n in f.names
            if not n.startswith("grad") and n not in info.outputs
        )
        for f in info.formulas
    )


def _save(
    plan: tuple[tuple[tuple[str, _Getter], ...], ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    needed: tuple[bool, ...],
) -> dict[str, Any]:
    """What the formulas of the inputs that require grad read (torch saves no more)."""
    saved: dict[str, Any] = {}
    for n, get in _flat_plan(plan, needed):
        v = get(args, kwargs)
        if v is None or type(v) in _PLAIN_VALUES:  # most non-tensor arguments, one test
            saved[n] = v
        elif isinstance(v, Tensor):
            saved[n] = SavedTensor(v, False)
        elif (
            type(v) in (list, tuple)
            and v
            and isinstance(v[0], Tensor)
            and all(isinstance(t, Tensor) for t in v)
        ):  # a Tensor[] (a Tensor?[] with holes is kept as it is)
            saved[n] = [SavedTensor(t, False) for t in v]
        else:
            saved[n] = v
    return saved


_PLAIN_VALUES = frozenset({int, float, bool, str})
_FLAT: dict[tuple[int, tuple[bool, ...]], tuple[tuple[str, _Getter], ...]] = {}


def _flat_plan(
    plan: tuple[tuple[tuple[str, _Getter], ...], ...], needed: tuple[bool, ...]
) -> tuple[tuple[str, _Getter], ...]:
    """The deduplicated items of the formulas whose input is needed (memoized)."""
    key = (id(plan), needed)
    flat = _FLAT.get(key)
    if flat is None:
        seen: dict[str, _Getter] = {}
        for items, need in zip(plan, needed, strict=True):
            if need:
                for n, get in items:
                    seen.setdefault(n, get)
        flat = _FLAT[key] = tuple(seen.items())
    return flat


def _requires_grad(t: Any) -> bool:
    m = getattr(t, "_autograd_meta", None)
    return m is not None and m.requires_grad


def _make_functional_kernel(
    info: DifferentiabilityInfo, node_cls: type[FormulaNode], positions: tuple[int, ...]
) -> Callable[..., Any]:
    plan = _save_plan(info)
    uses_result = info.uses_result
    view = mark_view if _aliases(info.schema) else None

    def record(raw: int, op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        inputs = [args[i] for i in positions]
        needed = tuple([_requires_grad(t) for t in inputs])
        node = node_cls()
        node.next_functions = collect_next_edges(inputs)  # type: ignore[arg-type]
        node._input_meta = tuple([(t._shape, t.dtype) for t in inputs])
        node._needed = needed
        node._saved = _save(plan, args, kwargs, needed)
        result = _below_ad_inplace_or_view(op, raw & _AFTER_FN, args, kwargs)
        m = meta_of(result)
        m.requires_grad = True
        m.grad_fn = node
        m.output_nr = 0
        if result._base is not None:
            m.view_version = result._version
        if uses_result:
            node._saved["result"] = SavedTensor(result, True)
        if view is not None:
            view(result, inputs[0])
        return result

    inline = InlineRecord(node_cls, _inline_saves(info), uses_result, _ATTR_OF)
    return _fast_path(positions, record, view is None, inline, view)


def _inline_saves(
    info: DifferentiabilityInfo,
) -> tuple[tuple[str, str, str | None, tuple[int, ...]], ...]:
    """The saved values of ``info`` for generated recording (entries.py, Note [Inline
    recording]): (name, argument, attribute or None, formulas reading it), in the order
    ``_save`` stores them."""
    arguments = [a.name for a in info.schema.arguments]
    readers: dict[str, list[int]] = {}
    for k, f in enumerate(info.formulas):
        for n in f.names:
            if not n.startswith("grad") and n not in info.outputs:
                readers.setdefault(n, []).append(k)
    saves = []
    for n, ks in readers.items():
        if n in arguments:
            saves.append((n, n, None, tuple(ks)))
            continue
        base = next(b for b in arguments if n.startswith(b + "_") and n[len(b) + 1 :] in _ATTR_OF)
        saves.append((n, base, n[len(base) + 1 :], tuple(ks)))
    return tuple(saves)


def _aliases(schema: FunctionSchema) -> bool:
    return any(r.alias_info is not None for r in schema.returns)


def fresh_version(result: Tensor, args: tuple[Any, ...]) -> None:
    """A new tensor leaves an operator at version 0 (Note [Fresh outputs at version 0])."""
    if result._base is None and type(result._vc) is VersionCounter:
        for a in args:
            if a is result:
                return
        result._vc.version = 0


def _fast_path(
    positions: tuple[int, ...],
    record: Callable[..., Any],
    fresh: bool = False,
    inline: InlineRecord | None = None,
    view: Callable[..., Any] | None = None,
) -> Callable[..., Any]:
    """The kernel: redispatch unless grad mode is on and an input requires grad (``view``: a
    view op's ``mark_view``, views.py).

    The generic kernel (``op.redispatch`` callers, boxed calls) looks the redispatch up per
    call; the dispatcher's cached entry is the specialized one (``_specializer``), which
    holds the backend's entry for its key set (Note [The no-grad path]).
    """

    after = _AFTER_FN if fresh or view is not None else _AFTER  # functional: no bump below

    def kernel(raw: int, op: Any, *args: Any, **kwargs: Any) -> Any:
        if _ST.grad_enabled:
            for i in positions:
                if _requires_grad(args[i]):
                    return record(raw, op, args, kwargs)
        r = op.redispatch(raw & after, *args, **kwargs)
        if fresh and getattr(r, "_vc", None) is not None:
            fresh_version(r, args)
        elif view is not None and not _ST.grad_enabled:
            view(r, args[positions[0]])
        return r

    special = _specializer(positions, record, fresh, inline, view)
    kernel._td_specialize = special  # type: ignore[attr-defined]
    kernel._td_plain_no_grad = True  # type: ignore[attr-defined]  # ops/indexing_fast.py
    return kernel


def _specializer(
    positions: tuple[int, ...],
    record: Callable[..., Any],
    fresh: bool,
    inline: InlineRecord | None,
    view: Callable[..., Any] | None = None,
) -> Callable[[Any, int], Callable[..., Any] | None]:
    """``specializer(op, raw)`` for the dispatcher (kernel.py): the generated entry of ``op``
    for key set ``raw`` (entries.py, Notes [The no-grad path], [Inline recording])."""
    reset = fresh_version if fresh else None
    return lambda op, raw: autograd_entry(op, raw, positions, record, reset, inline, False, view)


def _make_inplace_kernel(
    info: DifferentiabilityInfo, node_cls: type[FormulaNode], positions: tuple[int, ...]
) -> Callable[..., Any]:
    from tensordispatch.autograd.views import rebase_history

    plan = _save_plan(info)
    reads_self = any("self" in f.names for f in info.formulas)
    uses_result = info.uses_result

    def record(raw: int, op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self = args[0]
        check_inplace(self)
        inputs = tuple(args[i] for i in positions)
        needed = tuple(_requires_grad(t) for t in inputs)
        node = node_cls()
        node.next_functions = collect_next_edges(inputs)
        node._input_meta = tuple((t._shape, t.dtype) for t in inputs)
        node._needed = needed
        # A formula reading `self` needs its value before the write (torch's original_self).
        save_args = (_clone_below(self), *args[1:]) if reads_self and any(needed) else args
        node._saved = _save(plan, save_args, kwargs, needed)
        result = _below_ad_inplace_or_view(op, raw & _AFTER, args, kwargs)
        rebase_history(self, node)
        if uses_result:
            node._saved["result"] = SavedTensor(self, True)
        return result

    return _fast_path(positions, record)


def check_inplace(self: Tensor) -> None:
    """torch's rule: no in-place op on a leaf that requires grad, or on a view of one, or on
    an output of a function returning several views."""
    check_view_inplace(self)  # views.py, Note [View creation meta]
    m = self._autograd_meta
    if type(m) is TensorMeta and m.multi_output_of is not None and m.requires_grad:
        raise RuntimeError(
            f"Output {m.output_nr} of {m.multi_output_of} is a view and is being modified "
            "inplace. This view is the output of a function that returns multiple views. Such "
            "functions do not allow the output views to be modified inplace. You should "
            "replace the inplace operation by an out-of-place one."
        )
    base = differentiable_base(self)  # views.py: a detached view counts as no view
    if m is not None and m.requires_grad and m.grad_fn is None and base is None:
        raise RuntimeError(LEAF_INPLACE)
    if base is not None:
        bm = base._autograd_meta
        if bm is not None and bm.requires_grad and bm.grad_fn is None:
            raise RuntimeError(LEAF_VIEW_INPLACE)


def _clone_below(t: Tensor) -> Tensor:
    """torch's ``original_self``: a recorded clone of ``self`` before the write, so the
    formulas reading it are differentiable (double backward through an in-place op)."""
    from tensordispatch.backends.aten import op

    c: Tensor = op("clone")(t)
    return c


def _out_kernel(raw: int, op: Any, *args: Any, **kwargs: Any) -> Any:
    """out= variants: torch refuses to record them when an input requires grad."""
    if _ST.grad_enabled:
        schema = op._schema
        outs = {a.name for a in schema.arguments if a.is_write}
        given = dict(zip(_names(op), args, strict=False))
        given.update(kwargs)
        if any(_requires_grad(v) for k, v in given.items() if k not in outs):
            raise RuntimeError(
                f"{schema.name.name.base}(): functions with out=... arguments don't support "
                "automatic differentiation, but one of the arguments requires grad."
            )
    return op.redispatch(raw & _AFTER, *args, **kwargs)


def _names(op: Any) -> list[str]:
    return [a.name for a in op._schema.arguments]


INFOS: dict[str, DifferentiabilityInfo] = {}
NODE_CLASSES: dict[str, type[FormulaNode]] = {}
HANDLES: list[RegistrationHandle] = []


def _register(name: str, key: DispatchKey, fn: Callable[..., Any]) -> None:
    qualified, _, overload = name.partition(".")
    module = fn.__code__.co_filename.rpartition("/")[2]
    debug = f"registered at tensordispatch/autograd/{module}:{fn.__code__.co_firstlineno}"
    special = getattr(fn, "_td_specialize", None)
    kernel = KernelFunction(fn, KernelKind.RAW_KEYSET, debug, None, special)
    HANDLES.append(DISPATCHER.register_impl(f"aten::{qualified}", overload, key, kernel))


def _differentiable_positions(info: DifferentiabilityInfo) -> tuple[int, ...]:
    args = [a.name for a in info.schema.arguments]
    return tuple(args.index(f.input_name) for f in info.formulas)


def _signature(schema: FunctionSchema) -> tuple[tuple[str, str], ...]:
    return tuple((str(a.type), a.name) for a in schema.arguments)


def _inplace_variants() -> dict[tuple[str, tuple[tuple[str, str], ...]], str]:
    """(functional base name, argument signature) -> the in-place operator's name: torch pairs
    them by signature (``pow_.Tensor`` is the in-place ``pow.Tensor_Tensor``)."""
    out = {}
    for entry in DISPATCHER.live_entries():
        schema = entry.schema
        if schema is None or not entry.qualified_name.startswith("aten::"):
            continue
        name = entry.qualified_overload_name.split("::")[1]
        base = name.partition(".")[0]
        written = bool(schema.arguments) and schema.arguments[0].is_write
        if base.endswith("_") and not base.endswith("__") and written:
            out[(base[:-1], _signature(schema))] = name
    return out


def _make_kernel(
    info: DifferentiabilityInfo, cls: type[FormulaNode], inplace: bool
) -> Callable[..., Any]:
    if not info.simple:
        from tensordispatch.autograd.kernels_general import make_general_kernel

        return make_general_kernel(info, cls, inplace)
    positions = _differentiable_positions(info)
    make = _make_inplace_kernel if inplace else _make_functional_kernel
    return make(info, cls, positions)


def unregister_all() -> None:
    """Remove every kernel register_all added (benchmarks compare with and without)."""
    while HANDLES:
        HANDLES.pop().remove()
    INFOS.clear()
    NODE_CLASSES.clear()


def register_all() -> None:
    """Register every autograd and ADInplaceOrView kernel (idempotent)."""
    if HANDLES:
        return
    from tensordispatch.autograd.manual import register_manual

    INFOS.update(load_derivatives())
    inplace_of = _inplace_variants()
    for name, info in INFOS.items():
        qualified, _, overload = name.partition(".")
        defined = DISPATCHER.find(f"aten::{qualified}", overload)
        if defined is None or defined.schema is None:
            continue  # the yaml may name an operator the library does not define (yet)
        if not info.formulas:
            continue  # no differentiable output (comparisons): the Autograd fallback
        cls = _node_class(info, info.node_name)
        NODE_CLASSES[info.node_name] = cls
        base, _, overload = name.partition(".")
        _register(name, DispatchKey.Autograd, _make_kernel(info, cls, base.endswith("_")))
        inplace = inplace_of.get((base, _signature(info.schema)))
        if inplace is not None and not base.endswith("_") and inplace not in INFOS:
            _register(inplace, DispatchKey.Autograd, _make_kernel(info, cls, True))
    for entry in list(DISPATCHER.live_entries()):
        schema = entry.schema
        if schema is None or entry.qualified_name.split("::")[0] != "aten":
            continue
        name = entry.qualified_overload_name.split("::")[1]
        if any(a.is_write for a in schema.arguments):
            _register(name, DispatchKey.ADInplaceOrView, _make_ad_inplace_kernel(schema))
            if schema.is_out_fn() and name not in INFOS:
                _register(name, DispatchKey.Autograd, _out_kernel)
    register_manual(_register)
