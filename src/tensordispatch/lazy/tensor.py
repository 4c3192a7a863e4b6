"""LazyTensor: a Tensor on device 'lazy' that holds its own value (spec 3.1).

Owns the per-value state (pending IR value and/or device buffer), the table of live lazy
values that `mark_step` syncs, and the conversions between CPU tensors and lazy values.
Must not trace operators (kernels.py) nor run graphs (executor.py; reached through
`LazyTensor.materialize`).

Note [LazyData]
A lazy tensor's value is either pending (``ir``: a graph output not yet computed), or held
(``handle``: a BackendData whose NumPy array is the value), or both after a single-tensor
sync (``.cpu()`` keeps the IR, as LTC does, so later ops keep extending the same graph).
Using a held value as an operand wraps its handle in a device-data node once and keeps that
node as its IR. A value fresh from CPU (transfers, factories, fallback results) starts as
``tensor_data``, not yet uploaded: used as an operand it becomes a device-data IR without a
handle (so the next step syncs it, `SyncedTensorsWithIR`), and a step uploads the unused
ones (`SyncTensorsToData`), as LTC's LazyTensor::Data does. Device buffers are never
written after they are made: in-place operators on a lazy tensor give it a new IR value or
a new handle, so handles may share arrays freely.
LTC keeps this state in a Data object the tensor points to; here the LazyTensor holds it in
its own slots (``ir``, ``handle``, ``tensor_data``, ``id``, ``lazy_shape``: the value's IR
Shape), and its ``_data`` (the payload slot of other backends' tensors) is a read-only
property giving the tensor itself. No two tensors share a value (functionalization keeps
the aliasing above the lazy backend), and a traced call then makes one object fewer: about
60 ns of the ~1.2 us it costs (session 8).

Note [Live tensors]
Every LazyTensor appends a weak reference to itself to `LIVE` (a list, oldest first) when made
(`CreateLtcTensor`). "Live" means referenced by anything: Python objects, functional
wrappers, autograd's saved tensors. IR-only intermediates die with their tensors and are not
synced as roots. A freed value's entry is not removed when it dies (a Python ``__del__``
costs about as much as the rest of making the value): `purge` drops dead entries and counts
them (`DestroyLtcTensor`) when `live_data` walks the table, when a metric is read, and
whenever the table has doubled since the last purge, so it stays proportional to the live
values. `CreateLtcTensor` is not bumped per value either: every value takes the next id, so
`count_created` adds the ids issued since it last ran whenever counters are read or reset.

Note [Strong entries for pending values]
A value made by tracing (`from_value`, the inlined methods of inline_methods.py) holds only
pending IR, and most such values die within the next operator call. Its LIVE entry is the
LazyTensor itself, not a weak reference (making one cost about a tenth of tracing a call):
the table's own reference is the one a dead value still has, so `_sweep` tells live from
dead by the reference count (`_DEAD_REFS`, measured at import the way `_sweep` counts) and
frees the dead ones then. Survivors of a sweep get weak entries, so a value is held past its
tensor only until the next sweep, and only while it is IR: whatever gives a value device
data outside a step (`sync_tensors`, `LazyTensor.set_handle`) runs `weaken` first, which turns
the strong entries made since the last sweep into weak ones (freeing the dead ones). So does
a buffer entering the IR as device data (`LazyTensor.ir_value`, an uploaded CPU operand): a
dead traced value can reach buffers through its graph, so this bounds what the table keeps
beyond the tensors' lifetime to the buffer that entered the IR last (a loop tracing a fresh
input per iteration without steps frees the previous iteration's at its first operator).
Counting (`DestroyLtcTensor`) and `live_data` are the same for both kinds.
"""

from __future__ import annotations

import itertools
import sys
import threading
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from tensordispatch.lazy import metrics
from tensordispatch.lazy.ir import BackendData, Node, Output, Shape, Value, device_data_node
from tensordispatch.tensor.device import device as Device
from tensordispatch.tensor.geometry import contiguous_strides
from tensordispatch.tensor.inference import mark_inference, watch_inference_count
from tensordispatch.tensor.tensor import Tensor

__all__ = ["LAZY", "LIVE", "LazyTensor", "live_data", "make_lazy", "weaken"]

LAZY = Device("lazy", 0)
_IDS = itertools.count(1)
#: weak references, or the LazyTensor itself for values made by tracing (Note [Strong
#: entries for pending values]); only LIVE[_STRONG_FROM[0]:] may hold the latter
LIVE: list[Any] = []
_STRONG_FROM = [0]
_LIVE_APPEND = LIVE.append
_SWEEPING = threading.Lock()  # one purge at a time (appends need no lock)
_ref = weakref.ref
_COUNTERS = metrics.COUNTERS
_INFERENCE_ACTIVE = 0  # open inference_mode blocks (inference.py Note [Inference tensors])
watch_inference_count(globals())


class LazyTensor(Tensor):
    """A tensor on device 'lazy', which holds its own value (Note [LazyData]): pending IR
    (``ir``), a device buffer (``handle``) or CPU data not yet uploaded (``tensor_data``),
    its IR Shape (``lazy_shape``) and its id.

    Made by `make_lazy`, `from_value` and the inlined methods, which call the class with no
    argument (Note [No-argument tensor constructors]) and then set every slot.
    """

    __slots__ = ("handle", "id", "ir", "lazy_shape", "tensor_data")
    # no __del__: a freed value's LIVE entry is dropped by `purge` (Note [Live tensors])
    # Note [No-argument tensor constructors]: Tensor's __init__ refuses calls (users build
    # tensors with td.tensor / from_numpy); the lazy tracing hot paths make a LazyTensor per
    # traced op, and ``LazyTensor()`` with object's own __init__ is the interpreter's
    # cheapest way to make one (~17 ns less than ``object.__new__(LazyTensor)``, a call
    # through a generic wrapper). Any argument is still refused (object's TypeError); the
    # instance has no slot set, so only code that sets them all calls it.
    if TYPE_CHECKING:  # what mypy sees of it (object's __init__ itself confuses it)

        def __init__(self) -> None: ...

    else:
        __init__ = object.__init__

    lazy_shape: Shape
    ir: Value | None
    handle: BackendData | None
    tensor_data: np.ndarray[Any, Any] | None
    id: int

    @property  # type: ignore[override]
    def _data(self) -> LazyTensor:
        """The payload other backends keep in ``_data`` is this tensor itself (Note
        [LazyData]): read-only, so no code can give a lazy tensor another payload."""
        return self

    def ir_value(self) -> Value:
        """This value as an operand: its pending IR, else its handle as device data, else its
        CPU data uploaded as device data (which leaves it IR without a handle, as LTC's
        GetIrValue does: the next step syncs it)."""
        ir = self.ir
        if ir is None:
            if _STRONG_FROM[0] < len(LIVE):  # `weaken`'s own test, without the call
                weaken()  # a buffer enters IR: Note [Strong entries for pending values]
            handle = self.handle
            if handle is None:
                if self.tensor_data is None:
                    raise RuntimeError(f"lazy tensor {self.id}: no IR and no data")
                handle = BackendData(self.tensor_data, self.lazy_shape, self.id)
                self.tensor_data = None
            ir = self.ir = device_data_node(handle)
        return ir

    def upload(self) -> None:
        """Turn CPU data not yet used into a device buffer (`SyncTensorsToData`)."""
        if self.tensor_data is not None and self.handle is None and self.ir is None:
            self.handle = BackendData(self.tensor_data, self.lazy_shape, self.id)
            self.tensor_data = None

    def set_ir(self, value: Value) -> None:
        """Give this tensor a new pending value (in-place operators); drops the handle."""
        self.ir = value
        self.handle = None
        self.tensor_data = None
        self.lazy_shape = value.shape

    def set_handle(self, handle: BackendData) -> None:
        """Give this tensor computed data (fallback results); drops the IR."""
        weaken()  # Note [Strong entries for pending values]
        handle.tensor_id = self.id
        self.handle = handle
        self.ir = None
        self.tensor_data = None
        self.lazy_shape = handle.shape

    def materialize(self) -> np.ndarray[Any, Any]:
        """The value as a NumPy array, running this tensor's pending graph if needed."""
        if self.handle is None and self.ir is None and self.tensor_data is not None:
            return self.tensor_data
        if self.handle is None:
            from tensordispatch.lazy.executor import sync_tensors

            sync_tensors([self], mark_step=False)
        assert self.handle is not None  # set by sync_tensors
        value = self.handle.value
        if not isinstance(value, np.ndarray):
            value = np.asarray(value, dtype=self.lazy_shape.dtype._numpy)
        return value

    def _view_array(
        self, shape: tuple[int, ...], strides: tuple[int, ...], offset: int, dtype: Any
    ) -> Any:
        raise RuntimeError(
            "lazy tensors: a view of a lazy tensor without functionalization is not "
            "supported (lazy device buffers are immutable); create lazy tensors with "
            "x.to('lazy') or a factory with device='lazy', which wrap them in a functional "
            "tensor that handles views"
        )

    def _storage_nbytes(self) -> int:
        # a lazy value is its own contiguous storage
        return self.numel() * self.dtype.itemsize

    def data_ptr(self) -> int:
        return 0  # device buffers have no address the caller may use

    def _values_for_print(self) -> np.ndarray[Any, Any] | None:
        return self.materialize()

    def numpy(self, *, force: bool = False) -> np.ndarray[Any, Any]:
        """The values as a new NumPy array (syncs this tensor's graph)."""
        if self.requires_grad and not force:
            raise RuntimeError(
                "numpy(): can't call numpy() on a Tensor that requires grad; "
                "use tensor.detach().numpy() instead"
            )
        return np.array(self.materialize(), copy=True)

    def __repr__(self) -> str:
        # torch prints lazy tensors as `tensor(..., device='lazy:0')`: print a plain Tensor
        # over the synced values with this tensor's metadata
        array = self.materialize()
        shown = Tensor._make(
            np.asarray(array).reshape(self._shape), self._shape,
            contiguous_strides(self._shape), 0, self.dtype, self.device,
        )  # fmt: skip
        shown._autograd_meta = self._autograd_meta
        return repr(shown)

    __str__ = __repr__

    def tolist(self) -> Any:
        return self.materialize().tolist()

    def item(self) -> Any:
        if self.numel() != 1:
            raise RuntimeError(
                f"item(): a Tensor with {self.numel()} elements cannot be converted to Scalar"
            )
        return self.materialize().reshape(()).item()


_STRIDES: dict[tuple[int, ...], tuple[int, ...]] = {}
_new = object.__new__
_LAZY_KEY_SET = LAZY._key_set


def make_lazy(
    shape: Shape,
    ir: Value | None,
    handle: BackendData | None,
    tensor_data: np.ndarray[Any, Any] | None = None,
    device: Device = LAZY,
) -> LazyTensor:
    """A new root LazyTensor with value ``ir`` / ``handle`` / ``tensor_data`` of IR Shape
    ``shape`` (contiguous strides, fresh version counter) and a weak LIVE entry
    (`from_value` and the inlined methods make the strong ones).

    >>> import tensordispatch as td
    >>> t = make_lazy(Shape.of(td.float32, (2,)), None, None, np.ones(2, np.float32))
    >>> LIVE[-1]() is t, t.materialize().tolist()
    (True, [1.0, 1.0])
    """
    sizes = shape.sizes
    strides = _STRIDES.get(sizes)
    if strides is None:
        strides = _STRIDES[sizes] = contiguous_strides(sizes)
    t = LazyTensor()  # Note [No-argument tensor constructors]
    t.lazy_shape = shape
    t.ir = ir
    t.handle = handle
    t.tensor_data = tensor_data
    t.id = next(_IDS)  # counted as CreateLtcTensor by `count_created`
    _LIVE_APPEND(_ref(t))  # a plain weak reference: `purge` removes it
    t._key_set = device._key_set
    t._shape = sizes
    t._strides = strides
    t._offset = 0
    t.dtype = shape.dtype
    t.device = device
    t._storage = None
    t._vc = None
    t._base = None
    t._wrapped_number = False
    t._autograd_meta = None
    if _INFERENCE_ACTIVE:  # made in inference_mode: an inference tensor, as torch's
        mark_inference(t)
    return t


def from_array(array: np.ndarray[Any, Any], dtype: Any, device: Device = LAZY) -> LazyTensor:
    """A lazy tensor holding ``array`` as CPU data not yet uploaded (no copy: arrays are
    immutable); used as an operand it becomes device data, at a step it is uploaded."""
    return make_lazy(Shape.of(dtype, tuple(array.shape)), None, None, array, device)


#: Note [Trimming the graph]: every TRIM_EVERY values made (counted by their ids, checked on
#: pending values), if the graph under the value has more than TRIM_NODES nodes, it is
#: computed on its own and its IR cut (LTC's TrimIrGraph, 5000 and 100000 there too), so a
#: loop without mark_step cannot grow a graph without bound. The same check purges LIVE once
#: it has doubled (Note [Live tensors]). ``TRIM_AT[0]``: the id from which the next check
#: runs (set it to 0 to check at the next pending value, e.g. after changing TRIM_EVERY).
#: The walk is skipped while fewer than TRIM_EVERY ids were issued since the last mark_step
#: (``STEPPED_AT[0]``: the newest value live at that step): a step cuts every live value's
#: IR, so such a graph holds only nodes traced since, about one per value made, far below
#: TRIM_NODES; a program stepping every few thousand operators never walks (LTC walks
#: regardless: ~350 us for 1000 nodes here, every 5000 values).
TRIM_EVERY = 5000
TRIM_NODES = 100000
TRIM_AT = [TRIM_EVERY]
STEPPED_AT = [0]
_PURGE_AT = [TRIM_EVERY]


def from_value(value: Value, device: Device = LAZY) -> LazyTensor:
    """A lazy tensor whose value is the pending IR ``value`` (the hot path of tracing: the
    tensor is built inline, as `make_lazy` builds it, with a strong LIVE entry)."""
    # a single-output node is its own Value (ir.py Note [Values]): no property call for it
    node: Any = value
    shape = node.shape if node.__class__ is Output else node.shapes[0]
    sizes = shape.sizes
    strides = _STRIDES.get(sizes)
    if strides is None:
        strides = _STRIDES[sizes] = contiguous_strides(sizes)
    t = LazyTensor()  # Note [No-argument tensor constructors]
    t.lazy_shape = shape
    t.ir = value
    t.handle = None
    t.tensor_data = None
    t.id = i = next(_IDS)
    _LIVE_APPEND(t)  # Note [Strong entries for pending values]
    t._key_set = device._key_set
    t._shape = sizes
    t._strides = strides
    t._offset = 0
    t.dtype = shape.dtype
    t.device = device
    t._storage = None
    t._vc = None
    t._base = None
    t._wrapped_number = False
    t._autograd_meta = None
    if _INFERENCE_ACTIVE:  # made in inference_mode: an inference tensor, as torch's
        mark_inference(t)
    if i >= TRIM_AT[0]:
        made_many(t)
    return t


def made_many(data: LazyTensor) -> None:
    """What a pending value whose id reached ``TRIM_AT[0]`` runs (Note [Trimming the
    graph]): purge LIVE if it has doubled, trim ``data``'s graph if it is too big, and set
    the next check TRIM_EVERY ids later."""
    TRIM_AT[0] = data.id + TRIM_EVERY
    if len(LIVE) >= _PURGE_AT[0]:
        purge()
    if data.id - STEPPED_AT[0] >= TRIM_EVERY:  # else too few nodes since the last step
        _maybe_trim(data)


def _maybe_trim(data: LazyTensor) -> None:
    from tensordispatch.lazy.executor import sync_tensors

    if data.ir is not None and _more_nodes_than(data.ir.node, TRIM_NODES):
        metrics.bump("TrimIrGraph")
        sync_tensors([data], mark_step=True)


def _more_nodes_than(root: Node, limit: int) -> bool:
    """Whether the graph under ``root`` has more than ``limit`` nodes: a plain walk that
    stops as soon as it knows (no order, parameters or hash, as a graph needs)."""
    seen = {root}  # nodes hash by identity
    stack = [root]
    add, push, pop = seen.add, stack.append, stack.pop
    child: Any
    while stack:
        for child in pop().operands:
            if child in seen:  # (an Output is never in it: it is not a node)
                continue
            if child.__class__ is Output:  # else a node is its own Value (Note [Values])
                child = child.node
                if child in seen:
                    continue
            add(child)
            push(child)
        if len(seen) > limit:
            return True
    return False


_WEAK = weakref.ref
_refcount = sys.getrefcount


def _refs_when_dead() -> int:
    """The reference count `_sweep`'s comprehension sees for a value only LIVE holds: the
    table's, the slice's, the loop variable's and the call's (measured the same way, so it
    holds whatever the interpreter counts)."""
    table = [_new(LazyTensor)]
    entries = table[:1]
    counts = [_refcount(e) for e in entries]  # the comprehension `_sweep` runs
    return counts[0]


_DEAD_REFS = _refs_when_dead()


def _sweep() -> list[LazyTensor]:
    """Drop the entries of freed values from LIVE, counting them (`DestroyLtcTensor`); the
    live values, oldest first. A strong entry is dead when only the table holds it; the
    live ones get weak entries (Note [Strong entries for pending values]). Values appended
    meanwhile (other threads) are kept as they are: only the prefix read is replaced, in one
    slice assignment."""
    with _SWEEPING:
        n = len(LIVE)
        entries = LIVE[:n]
        values = [  # dead ones are None
            e() if e.__class__ is _WEAK else (e if _refcount(e) > _DEAD_REFS else None)
            for e in entries
        ]
        kept = [
            e if e.__class__ is _WEAK else _ref(e)
            for e, v in zip(entries, values)
            if v is not None  # (not the tensor's truth: it would sync or raise)
        ]
        LIVE[:n] = kept
        _STRONG_FROM[0] = len(kept)
        del entries  # frees the dead strong entries now, as their weak entries died before
    found: list[LazyTensor] = [v for v in values if v is not None]
    if n > len(kept):
        _COUNTERS["DestroyLtcTensor"] += n - len(kept)
    return found


def purge() -> int:
    """Drop the entries of freed values from LIVE and count them (`DestroyLtcTensor`);
    returns how many live values remain (Note [Live tensors]).

    >>> import numpy as np, tensordispatch as td
    >>> before = purge(); t = from_array(np.ones(2, np.float32), td.float32)
    >>> purge() == before + 1, len(LIVE) == before + 1
    (True, True)
    >>> del t; purge() == before
    True
    """
    _sweep()
    _PURGE_AT[0] = max(2 * len(LIVE), TRIM_EVERY)
    return len(LIVE)


metrics.SETTLE.append(purge)

_COUNTED = [0]  # the last id accounted for in CreateLtcTensor


def count_created() -> None:
    """Bring `CreateLtcTensor` up to date: every LazyTensor takes the next id from ``_IDS``
    and nothing else does, so the values made since the last count are the ids issued since
    then (this call takes one too). Runs before counters are read or reset, so making a
    value costs no counter update (Note [Live tensors]).

    >>> import numpy as np, tensordispatch as td
    >>> before = metrics.counter_value("CreateLtcTensor") or 0
    >>> t = from_array(np.ones(2, np.float32), td.float32)
    >>> metrics.counter_value("CreateLtcTensor") - before
    1
    """
    n = next(_IDS)
    made = n - 1 - _COUNTED[0]
    _COUNTED[0] = n
    if made:
        _COUNTERS["CreateLtcTensor"] += made


metrics.SETTLE.append(count_created)


def weaken() -> None:
    """Give the values made since the last sweep weak LIVE entries (Note [Strong entries for
    pending values]): runs before a value gets device data outside a step, so a freed
    tensor's buffer is never kept by the table. Costs one pass over those entries.

    >>> import tensordispatch as td, tensordispatch.lazy as lazy, weakref
    >>> handle = lazy.init()
    >>> y = td.ones(2).to("lazy") * 2.0  # traced: a strong entry
    >>> LIVE[-1] is y._data
    True
    >>> weaken(); LIVE[-1]() is y._data
    True
    >>> handle.remove()
    """
    if _STRONG_FROM[0] >= len(LIVE):  # no value made since (most calls: cheap)
        return
    with _SWEEPING:
        n = len(LIVE)
        for i in range(_STRONG_FROM[0], n):
            e = LIVE[i]
            if e.__class__ is LazyTensor:
                LIVE[i] = _ref(e)
        _STRONG_FROM[0] = n


def live_data() -> list[LazyTensor]:
    """The live lazy values, oldest first (freed ones are purged on the way)."""
    return _sweep()

