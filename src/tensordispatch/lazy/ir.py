"""The lazy IR: shapes, nodes, values, device data, and the structural hash (spec 3.1, 3.3).

Owns what a traced operator call leaves behind: a `Node` holding the operator, its operands
(producer values, held strongly), its non-tensor arguments by value, one `Shape` per output
(from the meta functions, shape.py) and a structural hash. Must not run anything: executing
a graph is executor.py's and lowering.py's job.

Note [Node hashes]
A node's hash combines the operator's name, its non-tensor arguments (with `Operand`
markers where operands go), the hashes of its operands in order and its output shapes. A
`device_data` node hashes its op and shape only, never the data, so a graph is reusable for
new input values; which device buffers a graph reads is added by the graph hash
(executor.py: the parameter sequence), as LTC does. The hashed tuple is flat: (the hash of
``(op, args)``, each operand Value's ``hash`` in order, each output Shape's precomputed
hash); the markers in ``args`` say how many operands there are, so nothing is ambiguous, and
the generated kernels build it without a tuple per operand or a Python-level Shape hash. A
Value's hash is its node's for a single-output node and ``hash((node hash, index))`` for an
`Output`, so two outputs of one node differ, and differ from any single-output node. The
head ``hash((op, args))`` is a constant of a call site whose arguments are all operands
(inline_methods.py computes it once per operator and argument layout).

Note [Scalars are device data]
Python numbers passed to operators (Scalar arguments such as ``alpha`` and wrapped numbers
such as the ``2`` of ``x * 2``) become `device_data` nodes over a cached `BackendData`
(keyed by dtype and value, `DeviceDataCacheMiss` on a new one), so ``a*2+3`` and ``a*3+5``
trace to the same graph. Equal scalars share one buffer and parameters are deduplicated by
buffer, so ``a*2+1`` (the 1 equals alpha=1) differs from ``a*3+5``: measured on torch 2.13.

Note [Values]
A Value (an operand, a LazyTensor's pending ``ir``) is one output of a node, read through
``value.node``, ``value.index``, ``value.shape`` and ``value.hash``. A single-output node
(``returns == "one"``, nearly every traced call) is its own Value: ``node.node`` is a
property returning the node (no slot referring to itself: that would be a reference cycle,
kept alive until the cyclic collector runs), ``node.index`` is 0. The outputs of a
multi-output node are `Output` objects made by `Node.output` on demand, equal (and hashing
alike as dict keys) when they name the same output of the same node; the node never keeps
them, so there is no cycle either. Nodes themselves compare and hash by identity. A traced
call makes one GC-tracked object fewer this way (no ``(node, 0)`` tuple). The operands stay a
tuple: keeping them in per-arity slots instead saved no measurable trace time and made every
step-time read of ``operands`` a property call (docs/LAZY.md, Session 6: IR layout).

Note [Constant node fields]
Every node of a generated `IrNode` class has the same ``op``, ``returns`` and ``data``
(None), so the class holds them (gen_lazy.py writes them as class attributes, which shadow
`Node`'s slots of those names: reads are unchanged, the instance's own slots stay empty) and
the traced call stores three fields fewer. Readers must therefore never write these fields
after construction (nodes are immutable anyway), and generic construction goes through
`Node.make`, which checks the given values against the class's.

Nodes are plain `__slots__` classes rather than frozen dataclasses: one is built per traced
operator call and dataclass construction costs several times more. They are never mutated
after construction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from tensordispatch.lazy import metrics
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.geometry import contiguous_strides

__all__ = [
    "DEVICE_DATA",
    "NUMBER_DTYPES",
    "SCALAR_CACHE",
    "SCALAR_DEPENDENTS",
    "BackendData",
    "IrNode",
    "Node",
    "Operand",
    "Output",
    "Shape",
    "Value",
    "argument_property",
    "device_data_node",
    "operand",
    "scalar_node",
    "type_name",
]

DEVICE_DATA = "lazy_tensors::device_data"
_new = object.__new__

_TYPE_NAMES = {
    "float16": "Half", "float32": "Float", "float64": "Double", "int64": "Long",
    "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble", "bfloat16": "BFloat16",
    "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
}  # fmt: skip


def type_name(dtype: Any) -> str:
    """torch's ScalarType name of a dtype (``Float`` for float32).

    >>> type_name(_dt.int64)
    'Long'
    """
    return _TYPE_NAMES.get(dtype.name, dtype.name)


@dataclass(frozen=True, slots=True)
class Shape:
    """An output's dtype and sizes (no strides: lazy tensors are always contiguous).

    >>> str(Shape(_dt.float32, (2, 3)))
    'Float[2,3]'
    """

    dtype: Any
    sizes: tuple[int, ...]
    _hash: int = field(init=False, repr=False, compare=False)
    #: For a floating dtype, what a same-shape pointwise operator's output of this Shape
    #: needs (shape.py Note [Same-shape pointwise shapes]; read by inline_methods.py):
    #: (the node's shapes ``(self,)``, this hash, sizes, contiguous strides, dtype, this Shape);
    #: else None.
    same: tuple[Any, ...] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.dtype, self.sizes)))
        same = None
        if getattr(self.dtype, "is_floating_point", False):
            strides = contiguous_strides(self.sizes)
            same = ((self,), self._hash, self.sizes, strides, self.dtype, self)
        object.__setattr__(self, "same", same)

    def __hash__(self) -> int:  # computed once: shapes are hashed on every traced call
        return self._hash

    @staticmethod
    def of(dtype: Any, sizes: tuple[int, ...]) -> Shape:
        """The shared Shape of ``dtype`` and ``sizes``: equal shapes are one object, so the
        dict lookups of tracing compare them by identity. (Equality stays by value.)

        >>> Shape.of(_dt.float32, (2,)) is Shape.of(_dt.float32, (2,))
        True
        """
        key = (dtype, sizes)
        shape = _SHAPES.get(key)
        if shape is None:
            if len(_SHAPES) >= _SHAPES_SIZE:
                _SHAPES.clear()
            shape = _SHAPES[key] = Shape(dtype, sizes)
        return shape

    def __str__(self) -> str:
        return f"{type_name(self.dtype)}[{','.join(map(str, self.sizes))}]"


_SHAPES: dict[tuple[Any, tuple[int, ...]], Shape] = {}
_SHAPES_SIZE = 65536


@dataclass(frozen=True, slots=True, eq=False)
class Operand:
    """Marks, inside a node's argument tuple, where operand ``index`` goes. ``kind`` says
    how the lowering passes it: ``"tensor"``, ``"wrapped"`` (a wrapped Python number, which
    type promotion treats as a number) or ``"scalar"`` (a Scalar argument, passed as a
    Python number). Markers are shared (`operand()`), so identity is equality and hashing
    is the builtin identity hash: they are hashed on every traced call."""

    index: int
    kind: str = "tensor"


_OPERANDS: dict[tuple[int, str], Operand] = {}


def operand(index: int, kind: str = "tensor") -> Operand:
    """The (shared) Operand marker for ``index`` and ``kind``."""
    marker = _OPERANDS.get((index, kind))
    if marker is None:
        marker = _OPERANDS[(index, kind)] = Operand(index, kind)
    return marker


class BackendData:
    """A device buffer: a NumPy array, or a Python number for scalar device data.
    ``tensor_id``: the id of the lazy tensor whose value it became (-1: none, e.g. a
    constant), as computation.get_tensors_ts_device_data_node reports it."""

    __slots__ = ("__weakref__", "shape", "tensor_id", "value")

    def __init__(self, value: Any, shape: Shape, tensor_id: int = -1) -> None:
        self.value = value
        self.shape = shape
        self.tensor_id = tensor_id

    def __repr__(self) -> str:
        return f"BackendData({self.shape})"


class Node:
    """One operator call in the IR (immutable after construction, Note [Node hashes]).

    ``op`` is the qualified name (``aten::add.Tensor``), ``overload`` the OpOverload to run
    for lowerings that call a kernel (None for device data), ``operands`` a tuple of
    `Value`s (Note [Values]), ``args`` the boxed argument list with `Operand` markers,
    ``shapes`` one Shape per output, ``returns`` how the outputs are returned (``"one"``,
    ``"tuple"``, ``"list"``), ``data`` the BackendData of a device-data node.
    """

    __slots__ = ("args", "data", "hash", "op", "operands", "overload", "returns", "shapes")

    op: str
    overload: Any
    operands: tuple[Value, ...]
    args: tuple[Any, ...]
    shapes: tuple[Shape, ...]
    returns: str
    data: BackendData | None
    hash: int

    def __init__(
        self,
        op: str,
        overload: Any,
        operands: tuple[Value, ...],
        args: tuple[Any, ...],
        shapes: tuple[Shape, ...],
        returns: str = "one",
        data: BackendData | None = None,
    ) -> None:
        self._fill(op, overload, operands, args, shapes, returns, data)

    @classmethod
    def make(
        cls,
        op: str,
        overload: Any,
        operands: tuple[Value, ...],
        args: tuple[Any, ...],
        shapes: tuple[Shape, ...],
        returns: str = "one",
        data: BackendData | None = None,
    ) -> Node:
        """A node of this class: what ``Node(...)`` makes, for every node class (the
        generated `IrNode` classes are made this way: they take no constructor arguments)."""
        node: Node = _new(cls)
        node._fill(op, overload, operands, args, shapes, returns, data)
        return node

    def _fill(
        self,
        op: str,
        overload: Any,
        operands: tuple[Value, ...],
        args: tuple[Any, ...],
        shapes: tuple[Shape, ...],
        returns: str,
        data: BackendData | None,
    ) -> None:
        self.op = op
        self.returns = returns
        self.data = data
        self._fill_rest(op, overload, operands, args, shapes, data)

    def _fill_rest(
        self,
        op: str,
        overload: Any,
        operands: tuple[Value, ...],
        args: tuple[Any, ...],
        shapes: tuple[Shape, ...],
        data: BackendData | None,
    ) -> None:
        self.overload = overload
        self.operands = operands
        self.args = args
        self.shapes = shapes
        if data is not None:  # the Shapes' precomputed hashes: no Python-level __hash__
            self.hash = hash((op, *[s._hash for s in shapes]))
        else:
            flat: list[Any] = [hash((op, args))]
            flat += [v.hash for v in operands]
            flat += [s._hash for s in shapes]
            self.hash = hash(tuple(flat))

    #: As a Value (Note [Values]): a single-output node is its own output 0.
    index: ClassVar[int] = 0

    @property
    def node(self) -> Node:
        """This node, as the node of the Value it is (Note [Values])."""
        return self

    @property
    def shape(self) -> Shape:
        """The Shape of output 0 (of this node as a Value)."""
        return self.shapes[0]

    def output(self, index: int) -> Value:
        """Output ``index`` as a Value: the node itself when it has one output.

        >>> n = device_data_node(BackendData(1.0, Shape.of(_dt.float32, ())))
        >>> n.output(0) is n
        True
        """
        if self.returns == "one":
            if index != 0:
                raise IndexError(f"{self.op}: a single-output node has no output {index}")
            return self
        return Output(self, index)

    @property
    def is_device_data(self) -> bool:
        return self.data is not None

    def __repr__(self) -> str:
        return f"Node({self.op}, {', '.join(map(str, self.shapes))})"


class Output:
    """Output ``index`` of a multi-output node as a Value (Note [Values]); equal outputs
    (same node, same index) compare and hash alike.

    >>> n = Node("aten::x", None, (), (), (Shape.of(_dt.float32, ()),) * 2, "tuple")
    >>> n.output(1) == Output(n, 1), n.output(1) == n.output(0), str(n.output(1).shape)
    (True, False, 'Float[]')
    """

    __slots__ = ("hash", "index", "node", "shape")

    def __init__(self, node: Node, index: int) -> None:
        self.node = node
        self.index = index
        self.shape = node.shapes[index]
        self.hash = hash((node.hash, index))

    def __eq__(self, other: object) -> bool:
        return type(other) is Output and other.node is self.node and other.index == self.index

    def __hash__(self) -> int:
        return self.hash

    def __repr__(self) -> str:
        return f"Output({self.node!r}, {self.index})"


#: A node output (Note [Values]): a single-output Node itself, or an `Output`.
Value = Node | Output


def _resolve(node: Node, value: Any) -> Any:
    if type(value) is Operand:
        return node.operands[value.index]
    if type(value) is tuple and any(type(v) is Operand for v in value):
        return tuple([node.operands[v.index] if type(v) is Operand else v for v in value])
    return value


class IrNode(Node):
    """Base of the generated node classes (codegen/backend_stubs/gen_lazy.py: one per
    ``full_codegen`` / ``ir_gen`` operator of a lazy backend yaml, torchgen's LazyIr.h).

    A subclass names its operator (``OP_NAME``, ``SCHEMA``), its arguments (``ARGUMENTS``:
    name, kind) and its kernel kind (``TRACER``); each argument is readable by name
    (`argument`, or the generated property of the same name): an operand gives its `Value`
    (a tensor list a tuple of them), an attribute the value stored in the node, by value
    (lazy_kernels.py Note [Attributes by value]). Same slots and hash as `Node`: lowerings
    read ``op``, ``args`` and ``operands`` as before.

    A generated class also names its node's constant fields as class attributes, ``op``
    (its OP_NAME), ``returns`` and ``data`` (None): they shadow the inherited slots, so a
    traced call stores none of them (Note [Constant node fields]); `make` checks that what
    it is given agrees with them.

    Made with `Node.make` (``Neg.make(...)``), or blank by the generated kernels, which set
    every other slot: the class takes no constructor arguments (its ``__init__`` is object's), so
    ``Neg()`` is the interpreter's cheapest way to make an instance (~20 ns less than
    ``object.__new__(Neg)``, once per traced call).
    """

    __slots__ = ()
    __init__ = object.__init__  # type: ignore[assignment]
    OP_NAME: ClassVar[str] = ""
    SCHEMA: ClassVar[str] = ""
    #: (argument name, "tensor" / "tensor_list" / "scalar" / "attribute"), schema order
    ARGUMENTS: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: "static" / "dynamic": the generated kernel's kind; None: hand-written (ir_gen)
    TRACER: ClassVar[str | None] = None

    def _fill(
        self,
        op: str,
        overload: Any,
        operands: tuple[Value, ...],
        args: tuple[Any, ...],
        shapes: tuple[Shape, ...],
        returns: str,
        data: BackendData | None,
    ) -> None:
        if "op" not in type(self).__dict__:  # no constant fields (a hand-made subclass)
            Node._fill(self, op, overload, operands, args, shapes, returns, data)
            return
        if op != self.op or returns != self.returns or data is not None:
            raise ValueError(
                f"{type(self).__name__}: a node of this class is {self.op} returning "
                f"{self.returns!r} without data, but was given {op} returning {returns!r}"
                + (" with data" if data is not None else "")
                + "; make it with Node.make (or the class of that operator)"
            )
        self._fill_rest(op, overload, operands, args, shapes, data)

    def argument(self, name: str) -> Any:
        """The argument ``name`` of this call: an operand's Value or an attribute's value.

        >>> x = device_data_node(BackendData(1.0, Shape.of(_dt.float32, ())))
        >>> class Neg(IrNode):
        ...     __slots__ = ()
        ...     ARGUMENTS = (("self", "tensor"),)
        >>> Neg.make("aten::neg", None, (x,), (operand(0),), x.shapes).argument("self") is x
        True
        """
        for i, (arg, _) in enumerate(self.ARGUMENTS):
            if arg == name:
                return _resolve(self, self.args[i])
        known = ", ".join(a for a, _ in self.ARGUMENTS)
        raise AttributeError(
            f"{type(self).__name__}: {self.OP_NAME} has no argument {name!r} (its arguments: "
            f"{known})"
        )

    def attributes(self) -> dict[str, Any]:
        """The non-tensor arguments by name (what LTC's node ToString lists)."""
        return {a: self.args[i] for i, (a, kind) in enumerate(self.ARGUMENTS)
                if kind == "attribute"}  # fmt: skip

    def __repr__(self) -> str:
        attrs = "".join(f", {k}={v!r}" for k, v in self.attributes().items())
        return f"{type(self).__name__}({', '.join(map(str, self.shapes))}{attrs})"


def argument_property(index: int, name: str) -> property:
    """A generated node class's read-only property for argument ``index`` (named ``name``).

    >>> class Flip(IrNode):
    ...     __slots__ = ()
    ...     dims = argument_property(1, "dims")
    >>> node = Flip.make("aten::flip", None, (), (operand(0), (0, 1)), ())
    >>> node.dims
    (0, 1)
    """

    def get(node: Node) -> Any:
        return _resolve(node, node.args[index])

    get.__name__ = name
    return property(get, doc=f"argument {name!r} of the call")


def device_data_node(data: BackendData) -> Node:
    """A ``device_data`` node reading ``data`` (a graph parameter): what
    ``Node(DEVICE_DATA, None, (), (), (data.shape,), data=data)`` builds, built inline (the
    first operator on each value a step computed makes one).

    >>> n = device_data_node(BackendData(1.0, Shape.of(_dt.float32, ())))
    >>> m = Node(DEVICE_DATA, None, (), (), n.shapes, data=n.data)
    >>> (n.hash, n.shapes, n.returns, n.is_device_data) == (m.hash, m.shapes, "one", True)
    True
    """
    shape = data.shape
    node = _new(Node)
    node.op = DEVICE_DATA
    node.overload = None
    node.operands = ()
    node.args = ()
    node.shapes = (shape,)
    node.returns = "one"
    node.data = data
    node.hash = hash((DEVICE_DATA, shape._hash))
    return node


_SCALAR_CACHE: dict[tuple[Any, ...], Node] = {}
_SCALAR_CACHE_SIZE = 128
_SCALAR_DTYPES = {bool: _dt.bool, int: _dt.int64, float: _dt.float64, complex: _dt.complex128}
#: For generated kernels (lazy_kernels.py Note [Inline scalar cache]): the scalar cache,
#: keyed (dtype, type, value), and the dtype of each Python number type.
SCALAR_CACHE = _SCALAR_CACHE
NUMBER_DTYPES = _SCALAR_DTYPES
#: Caches holding Values of scalar device-data nodes outside SCALAR_CACHE (the fast operator
#: methods, shortcut.py): cleared whenever an entry leaves SCALAR_CACHE, so none of them
#: outlives its cache entry and a number evicted here misses (DeviceDataCacheMiss) everywhere.
SCALAR_DEPENDENTS: list[dict[Any, Any]] = []


def scalar_node(value: Any, dtype: Any = None) -> Node:
    """The cached device-data node of a Python number (Note [Scalars are device data]).

    The dtype is the number's own (int -> Long, float -> Double) unless given.

    >>> scalar_node(2).shapes[0].dtype, scalar_node(2) is scalar_node(2)
    (tensordispatch.int64, True)
    """
    kind = type(value)
    if dtype is None:
        dtype = _SCALAR_DTYPES.get(kind)
        if dtype is None:  # a NumPy scalar: its Python value
            value = value.item()
            kind = type(value)
            dtype = _SCALAR_DTYPES[kind]
    key: tuple[Any, ...] = (dtype, kind, value)
    if kind is float and (value == 0.0 or math.isnan(value)):
        key = (dtype, kind, repr(value))  # -0.0 differs from 0.0; nan equals itself here
    node = _SCALAR_CACHE.get(key)
    if node is None:
        metrics.bump("DeviceDataCacheMiss")
        if len(_SCALAR_CACHE) >= _SCALAR_CACHE_SIZE:
            del _SCALAR_CACHE[next(iter(_SCALAR_CACHE))]
            for dependent in SCALAR_DEPENDENTS:
                dependent.clear()
        node = _SCALAR_CACHE[key] = device_data_node(BackendData(value, Shape.of(dtype, ())))
    return node
