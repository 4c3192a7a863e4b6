"""FunctionalTensor's ``+ - * /`` over lazy tensors with the whole traced call inlined.

Owns `inline_method`: the method `shortcut.install_methods` installs for one operator. It
does, in one generated function, what the shortcut's fast method (shortcut.py, Note [Fast
operator methods]) does through the tracer, `from_value` and the wrapper constructors, for
the calls that repeat in a traced loop. Everything else goes to that method.

Note [Inlined operator methods]
A call ``y + 0.5`` is inlined when, besides the fast method's conditions (default dispatch
state, no keyword, a lazy wrapper up to date and not needing grad), everything the tracer
would compute from the call is known without tracing:

* the thread's dispatch state is the default one (Note [The default-state test]);
* the operator's published dispatch state was validated by the fast method for these
  operand key sets (a wrapper over a lazy tensor with a Python number, or with another
  such wrapper: ``_Records.validate``, taken from the fast method's ``checked`` cell);
* the right operand's scalar Value (a Python float or int, not 0, -0.0 or NaN) and the
  default Scalars' Values (``alpha=1``) were recorded from an earlier traced node and are
  still the scalar cache's entries (ir.SCALAR_DEPENDENTS: the records are dropped whenever
  the scalar cache evicts, so a number evicted there misses here too);
* the output shapes: for floating operands of one Shape (or a Shape and Python numbers)
  of an operator of shape.py's SAME_SHAPE_POINTWISE, that Shape (`Shape.same`, Note
  [Same-shape pointwise shapes]); otherwise recorded from an earlier traced node, keyed
  by the operand Shapes' identities (the records keep those Shapes alive).

Then the method takes each operand's IR as the tracer does (uploading a value that has
none, after every check that could send the call elsewhere), builds the node (same class,
arguments, operands, shapes and hash as the tracer), the LazyTensor (its own value:
tensor.py Note [LazyData]) and the wrapper (its FunctionalStorage made on first use)
inline, and counts the call (the ``lazy::`` counter is brought up to date when counters are
read). Otherwise it calls the
fast method, and when that traced the call, records what the call taught
(`_Records.learn`). tests/lazy/test_lazy_inline_methods.py compares the nodes, graphs and
counters with the dispatcher path.

Note [The default-state test]
The dispatcher routes a call by the thread's include / exclude words and the operands'
keys, and by nothing else: the mode stack is only consulted through the Python keys those
words include (a pushed mode includes them), inference mode changes both words, and vmap
includes its mode key while the vmapped function runs. The transform stack itself routes
nothing: only the vmap and grad kernels read it, and they run for batched operands or
operands that need grad, which the method never takes (a grad level over operands that
need no grad leaves them to the same kernels as no level; a test compares the two). So the
method's first test is the words' identity with the default words (`tls.py` and the guards
keep the canonical objects: a guard restores the object it saved, the mode stack the
canonical word): two C-level tests, no comparison. A forced fallback is not tested per call: when a thread starts
forcing (config.py counts the threads that force), every method's validated state is
dropped, and none is recorded while any thread forces, so calls go to the fast method,
which reads the calling thread's setting. When the first test fails, the fields are
compared by value (an equal word that is another object, inference mode switched off), so
nothing that is default in value is sent to the slow path for long, and nothing the
dispatcher would route differently passes. Grad mode is not tested: it changes nothing for
operands that need no grad.
"""

from __future__ import annotations

import inspect
import itertools
import math
from collections.abc import Callable
from typing import Any

from tensordispatch.backends.aten import wrap_number
from tensordispatch.dispatch.tls import (
    DEFAULT_EXCLUDED_RAW,
    DEFAULT_INCLUDED_RAW,
    LocalState,
    local_state,
)
from tensordispatch.lazy import config, metrics
from tensordispatch.lazy import tensor as lazy_tensor
from tensordispatch.lazy.ir import NUMBER_DTYPES, SCALAR_CACHE, SCALAR_DEPENDENTS, operand
from tensordispatch.lazy.shape import SAME_SHAPE_POINTWISE
from tensordispatch.lazy.tensor import LAZY, LazyTensor
from tensordispatch.transforms.functionalize.wrapper import (
    _KEEP,
    FUNCTIONALIZE_BIT,
    FunctionalTensor,
)

__all__ = ["forget", "inline_method"]


class _Records:
    """What earlier traced calls of one operator taught its inlined method: the scalar
    Values of right-hand numbers (per type) and of the default Scalars, and output shapes
    per operand Shapes (Note [Inlined operator methods])."""

    __slots__ = (
        "calls", "counter", "floats", "ints", "namespace", "number_shapes", "tail", "taken",
        "tensor_shapes",
    )  # fmt: skip

    def __init__(self, counter: str) -> None:
        self.counter = counter  # the operator's lazy:: counter
        # each inlined call takes a number (atomic, and cheaper than a ``+= 1``); the
        # numbers taken otherwise or already counted are ``taken`` (`pending`)
        self.calls = itertools.count()
        self.taken = 0
        # the inlined method's globals: VALID_NUMBER / VALID_TENSOR are the operator's
        # dispatch state last validated (by the fast method) for a wrapper over a lazy tensor
        # with a Python number / another such wrapper (globals: one load each per call)
        self.namespace: dict[str, Any] = {"VALID_NUMBER": None, "VALID_TENSOR": None}
        self.floats: dict[float, Any] = {}
        self.ints: dict[int, Any] = {}
        self.tail: dict[int, Any] = {}
        # id(left Shape) -> (left Shape, None, entry), per number type, where an entry is
        # (the node's shapes, its output's hash, sizes, strides, dtype, its output Shape), as
        # `Shape.same`
        self.number_shapes: dict[type, dict[int, tuple[Any, ...]]] = {float: {}, int: {}}
        self.tensor_shapes: dict[tuple[int, int], tuple[Any, ...]] = {}
        SCALAR_DEPENDENTS.extend([self.floats, self.ints, self.tail])
        _RECORDS.append(self)

    def validate(self, number: Any, tensor: Any) -> None:
        """Record the validated dispatch states (None: not validated)."""
        self.namespace["VALID_NUMBER"] = number
        self.namespace["VALID_TENSOR"] = tensor

    def pending(self) -> int:
        """The inlined calls not yet added to the operator's counter (taking a number
        itself, which `taken` accounts for)."""
        n = next(self.calls)  # the calls took 0 .. n - 1
        self.taken += 1
        return n - self.taken + 1

    def learn(
        self, self_: Any, other: Any, result: Any, node_class: Any, tail: tuple[Any, ...]
    ) -> None:
        """Record what the traced call ``self_ <op> other`` -> ``result`` shows, if it went
        through the tracer with the expected argument layout (else nothing)."""
        inner = getattr(result, "_data", None)
        if result.__class__ is not FunctionalTensor or inner.__class__ is not LazyTensor:
            return
        node: Any = inner.ir
        if node is None or node.__class__ is not node_class or len(node.operands) != 2 + len(tail):
            return
        left = self_._data
        if node.operands[0] is not left.ir or node.shapes[0] is not inner.lazy_shape:
            return
        for i, default in enumerate(tail):  # still the scalar cache's entries
            value = node.operands[2 + i]
            if SCALAR_CACHE.get(_scalar_key(default)) is not value:
                return
            self.tail[i] = value
        kind = other.__class__
        out = node.shapes[0]
        entry = (node.shapes, out._hash, inner._shape, inner._strides, inner.dtype, out)
        if kind is float or kind is int:
            if not other or (kind is float and math.isnan(other)):
                return
            value = node.operands[1]
            if SCALAR_CACHE.get(_scalar_key(other)) is not value:
                return
            (self.floats if kind is float else self.ints)[other] = value
            self.number_shapes[kind][id(left.lazy_shape)] = (left.lazy_shape, None, entry)
        elif kind is FunctionalTensor:
            right = other._data
            if node.operands[1] is not right.ir:
                return
            key = (id(left.lazy_shape), id(right.lazy_shape))
            self.tensor_shapes[key] = (left.lazy_shape, right.lazy_shape, entry)


_RECORDS: list[_Records] = []
#: How many fields a thread's dispatch state holds before any layer sets its own (what a
#: fresh state's ``__init__`` sets): while a thread has no more, inference mode is off
#: (forced fallbacks are not read here: Note [The default-state test]).
_BASE_FIELDS = len(LocalState().__dict__)


def _flush() -> None:
    """Add the inlined calls counted since the last flush to their ``lazy::`` counters
    (metrics.SETTLE runs this before counters are read or reset)."""
    for records in _RECORDS:
        calls = records.pending()
        if calls:
            records.taken += calls
            metrics.COUNTERS[records.counter] += calls


metrics.SETTLE.append(_flush)


def _forcing_started() -> None:
    """A thread started forcing an operator onto the fallback: every inlined method
    validates again (through its fast method, which reads the thread's setting)."""
    for records in _RECORDS:
        records.validate(None, None)


config.FORCING_STARTED.append(_forcing_started)


def _scalar_key(value: Any) -> tuple[Any, ...]:
    """The scalar cache's key of a Python number (ir.scalar_node's, for the numbers kept)."""
    return (NUMBER_DTYPES[value.__class__], value.__class__, value)


_TEMPLATE = """
def method(self, other{signature}):
{keywords}    inner = self._data
    if (inner.__class__ is not LT or self.__class__ is not FT
            or self._autograd_meta is not None or inner._autograd_meta is not None):
        return fast(self, other)
    d = ST.__dict__
    if (d["included"] is not DI or d["excluded"] is not DX) and (
            d["included"] != DI or d["excluded"] != DX
            or (len(d) > BASE_FIELDS and d.get("autograd_inference_mode", False))):
        return fast(self, other)
    if ((self._fs is not None and self._generation != self._fs.generation)
            or self._key_set != WRAPPER_KEYS):
        return fast(self, other)
    s0 = inner.lazy_shape
{tail_values}    kind = other.__class__
    if kind is float:
        v1 = FLOATS.get(other)
    elif kind is int:
        v1 = INTS.get(other)
    else:
        v1 = None
    if v1 is not None:
        if VALID_NUMBER is not ENTRY.state:
            return learn(self, other)
{number_shapes}        shapes, h, sizes, strides, dtype, shape = e
        v0 = inner.ir or inner.ir_value()
        node = NODE()  # ir.IrNode: no constructor arguments; op, returns, data: class constants
        node.args = ARGS_NUMBER
        node.hash = hash((HEAD_NUMBER, v0.hash, v1.hash{tail_hash}, h))
    elif kind is FT:
        b = other._data
        if (b.__class__ is not LT or other._autograd_meta is not None
                or b._autograd_meta is not None
                or (other._fs is not None and other._generation != other._fs.generation)):
            return fast(self, other)
        if other._key_set != WRAPPER_KEYS:
            return fast(self, other)
        if VALID_TENSOR is not ENTRY.state:
            return learn(self, other)
        s1 = b.lazy_shape
{tensor_shapes}        shapes, h, sizes, strides, dtype, shape = e
        v0 = inner.ir or inner.ir_value()
        v1 = b.ir or b.ir_value()
        node = NODE()
        node.args = ARGS_TENSOR
        node.hash = hash((HEAD_TENSOR, v0.hash, v1.hash{tail_hash}, h))
    elif kind is float or kind is int:  # a number not seen yet
        return learn(self, other)
    else:
        return fast(self, other)
    next(CALLS)  # counted: `_Records.pending`
    node.overload = OP
    node.operands = (v0, v1{tail_operands})
    node.shapes = shapes
    t = LT()  # Note [No-argument tensor constructors] (tensor.py)
    t.lazy_shape = shape
    t.ir = node  # its own Value
    t.handle = None
    t.tensor_data = None
    t.id = i = next(IDS)
    LIVE_APPEND(t)  # tensor.py Note [Strong entries for pending values]
    t._key_set = LAZY_KEYS
    t._shape = sizes
    t._strides = strides
    t._offset = 0
    t.dtype = dtype
    t.device = LAZY
    t._storage = None
    t._vc = None
    t._base = None
    t._wrapped_number = False
    t._autograd_meta = None
    if i >= TRIM_AT[0]:
        TM.made_many(t)
    w = FT()
    w._key_set = WRAPPER_KEYS
    w._shape = sizes
    w._strides = strides
    w._offset = 0
    w.dtype = dtype
    w.device = LAZY
    w._data = t
    w._storage = None
    w._vc = None
    w._base = None
    w._wrapped_number = False
    w._autograd_meta = None
    w._fs = None
    w._view_metas = ()
    w._generation = 0
    w._has_metadata_mutation = False
    w._shadow = None
    return w
"""


def _source(tail: int, keywords: tuple[str, ...], same_shape: bool) -> str:
    """The inlined method's source for an operator with ``tail`` default Scalars after its
    two Tensor operands (add's ``alpha``) whose Tensor method takes the keyword-only
    arguments ``keywords`` (defaults ``K0``, ``K1``... in the namespace: "not given")."""
    signature = "".join(f", {k}=K{i}" for i, k in enumerate(keywords))
    if keywords:
        signature = ", *" + signature
        given = " or ".join(f"{k} is not K{i}" for i, k in enumerate(keywords))
        passed = ", ".join(f"{k}={k}" for k in keywords)
        checks = f"    if {given}:\n        return fast(self, other, {passed})\n"
    else:
        checks = ""
    values = "".join(
        f"    v{2 + i} = TAIL.get({i})\n    if v{2 + i} is None:\n"
        "        return learn(self, other)\n"
        for i in range(tail)
    )
    learnt = (
        "if e is None or e[0] is not s0{also}:\n{i}    return learn(self, other)\n{i}e = e[2]\n"
    )
    if same_shape:  # Note [Same-shape pointwise shapes]: the rule first, records else
        number = (
            "        e = s0.same\n        if e is None:\n"
            "            e = (FSHAPES if kind is float else ISHAPES).get(id(s0))\n"
            "            " + learnt.format(also="", i="            ")
        )
        tensor = (
            "        e = s0.same if s1 is s0 else None\n        if e is None:\n"
            "            e = TSHAPES.get((id(s0), id(s1)))\n"
            "            " + learnt.format(also=" or e[1] is not s1", i="            ")
        )
    else:
        number = (
            "        e = (FSHAPES if kind is float else ISHAPES).get(id(s0))\n"
            "        " + learnt.format(also="", i="        ")
        )
        tensor = "        e = TSHAPES.get((id(s0), id(s1)))\n        " + learnt.format(
            also=" or e[1] is not s1", i="        "
        )
    operands = "".join(f", v{2 + i}" for i in range(tail))
    hashes = "".join(f", v{2 + i}.hash" for i in range(tail))
    return _TEMPLATE.format(
        signature=signature,
        keywords=checks,
        tail_values=values,
        tail_operands=operands,
        tail_hash=hashes,
        number_shapes=number,
        tensor_shapes=tensor,
    )


_CODE: dict[tuple[int, tuple[str, ...], bool], Any] = {}


def _keywords(slow: Callable[..., Any]) -> tuple[tuple[str, ...], tuple[Any, ...]] | None:
    """The keyword-only arguments of the Tensor method ``slow`` and their defaults, if its
    signature is ``(self, other, *, keyword=default, ...)``; else None."""
    try:
        params = list(inspect.signature(slow).parameters.values())
    except (TypeError, ValueError):
        return None
    plain = inspect.Parameter.POSITIONAL_OR_KEYWORD
    if len(params) < 2 or any(p.kind is not plain for p in params[:2]):
        return None
    rest = params[2:]
    if any(p.kind is not inspect.Parameter.KEYWORD_ONLY or p.default is p.empty for p in rest):
        return None
    return tuple(p.name for p in rest), tuple(p.default for p in rest)


def inline_method(
    built: tuple[Any, Callable[..., Any], Callable[..., Any], tuple[Any, ...]],
    fast: Callable[..., Any],
    slow: Callable[..., Any],
    checked: list[Any],
) -> Callable[..., Any]:
    """The inlined method (Note [Inlined operator methods]) of the operator of ``built``
    (shortcut's record: plan, tracer, kernel, defaults) in front of its fast method
    ``fast``, which shares the validation cell ``checked``; ``slow`` is the Tensor method
    (its signature is kept; one it cannot keep means ``fast`` itself is returned).

    >>> import tensordispatch as td, tensordispatch.lazy as lazy
    >>> handle = lazy.init()
    >>> x = td.ones(2).to("lazy") + 1.0  # traced: pending IR
    >>> y = x * 2.0; z = x * 2.0  # the first call teaches the second
    >>> type(x).__mul__.__name__, z.tolist(), y._data.ir.hash == z._data.ir.hash
    ('lazy_fast_mul', [4.0, 4.0], True)
    >>> handle.remove()
    """
    from tensordispatch.lazy.tracegen import generated

    plan, _, _, defaults = built
    tail = tuple(defaults[2:])
    found = generated(plan)
    keywords = _keywords(slow)
    if found is None or keywords is None:
        return fast
    node_class = found[0]
    same_shape = plan.name in SAME_SHAPE_POINTWISE and all(
        d.__class__ is int or d.__class__ is float for d in tail
    )
    records = _Records(plan.counter)
    shape = (len(tail), keywords[0], same_shape)
    code = _CODE.get(shape)
    if code is None:
        code = _CODE[shape] = compile(_source(*shape), "<lazy inline method>", "exec")

    wrapper_keys = (LAZY._key_set & _KEEP) | FUNCTIONALIZE_BIT
    number_keys = wrap_number(1.0)._key_set

    def learn(self: Any, other: Any) -> Any:
        result = fast(self, other)
        state, self_keys, other_keys = checked  # what ``fast`` validated last
        if state is plan.op._entry.state and self_keys == wrapper_keys:
            with config.FORCING_LOCK:  # Note [The default-state test]: none while forcing
                if not config.FORCING[0] and other_keys == number_keys:
                    records.namespace["VALID_NUMBER"] = state
                elif not config.FORCING[0] and other_keys == wrapper_keys:
                    records.namespace["VALID_TENSOR"] = state
        records.learn(self, other, result, node_class, tail)
        return result

    scalars = tuple(operand(2 + i, "scalar") for i in range(len(tail)))
    args_number = (operand(0), operand(1, "wrapped"), *scalars)
    args_tensor = (operand(0), operand(1), *scalars)
    namespace = records.namespace
    namespace.update({
        "fast": fast, "learn": learn, "ST": local_state(), "DI": DEFAULT_INCLUDED_RAW,
        "DX": DEFAULT_EXCLUDED_RAW, "ENTRY": plan.op._entry,
        "LT": LazyTensor, "FT": FunctionalTensor,
        "FLOATS": records.floats, "INTS": records.ints, "TAIL": records.tail,
        "FSHAPES": records.number_shapes[float], "ISHAPES": records.number_shapes[int],
        "TSHAPES": records.tensor_shapes,
        "ARGS_NUMBER": args_number, "HEAD_NUMBER": hash((plan.name, args_number)),
        "ARGS_TENSOR": args_tensor, "HEAD_TENSOR": hash((plan.name, args_tensor)),
        "CALLS": records.calls, "NODE": node_class, "NAME": plan.name, "OP": plan.op,
        "IDS": lazy_tensor._IDS, "LIVE_APPEND": lazy_tensor._LIVE_APPEND,
        "TRIM_AT": lazy_tensor.TRIM_AT, "TM": lazy_tensor, "LAZY": LAZY,
        "BASE_FIELDS": _BASE_FIELDS,
        "LAZY_KEYS": LAZY._key_set, "WRAPPER_KEYS": wrapper_keys,
    })  # fmt: skip
    namespace.update({f"K{i}": default for i, default in enumerate(keywords[1])})
    exec(code, namespace)  # noqa: S102 - our own generated source
    method: Callable[..., Any] = namespace["method"]
    method.__name__ = method.__qualname__ = fast.__name__
    method.records = records  # type: ignore[attr-defined]
    return method


def forget(method: Callable[..., Any] | None) -> None:
    """Stop keeping the scalar records of an inlined ``method`` that is being removed."""
    records = getattr(method, "records", None)
    if records is not None:
        _flush()
        _RECORDS[:] = [r for r in _RECORDS if r is not records]
        for d in (records.floats, records.ints, records.tail):
            if any(d is dependent for dependent in SCALAR_DEPENDENTS):
                SCALAR_DEPENDENTS[:] = [x for x in SCALAR_DEPENDENTS if x is not d]
