"""One-hop factory calls for the generated bindings: ``td.zeros(4, 4)`` straight to the work
the full dispatch would do, when it is known to be exactly that work.

Owns the hops of the factory bindings (codegen/gen_python.py's ``ONE_HOP_FACTORIES``): each
is called by the binding with the caller's arguments and returns the result, or None when
it does not apply (then the binding takes the full dispatch, unchanged). Must not change what
any call computes, raises or shows: it only skips hops whose outcome it has checked.

Note [One-hop factory bindings]
A factory binding's full path is: set the thread-local excluded word (Note [Factories run
below ADInplaceOrView]), the operator's entry (argument checks, table lookup), the
generated BackendSelect kernel (key set from dtype/layout/device, redispatch), the kernel
at CPU (our CPU kernel, or a composite kernel that calls our CPU kernels directly, Note
[Composite factories call known kernels directly]), restore the word. For a 4x4 ``zeros``
that is ~1.4 us of dispatch around ~0.6 us of work. Which kernels run is a pure function
of the thread-local words and the operators' published dispatch states (replaced by every
registration, fallback change and while a ``dispatch_trace`` is open: Note [Tracing by
republishing]). So a hop answers from a memo keyed by the identity of its operator's
published state (and, for the composite factories, of the three inner operators' states,
through ``composite_direct``), and only under the default words (no mode, transform,
inference mode, or include/exclude guard). A new state is checked by asking the dispatcher
itself: the lookup under the bindings' words with no tensor arguments must give our
generated BackendSelect kernel, its redispatch to CPU must give the expected kernel, there
must be no tracer, and for the composite factories ``fill_``/``empty`` must be known
(``FILL_TOO``). The hop then does that kernel's work for arguments it can take without
any conversion or check that could fail: a size that is a list or tuple of plain ints of a
shape already seen by ``empty`` (Note [Shapes seen by empty]), dtype absent or a dtype
object, every other option absent. Anything else returns None and takes the full path, so
errors, messages, traces and overrides are the dispatcher's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensordispatch.backends import composite_direct as _direct
from tensordispatch.backends.composite_direct import FILL_TOO
from tensordispatch.backends.cpu.kernels import _SHAPES, _STRIDED
from tensordispatch.backends.cpu.kernels import fill_ as _cpu_fill
from tensordispatch.dispatch.calling import NOT_GIVEN
from tensordispatch.dispatch.keyset import (
    AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW,
    DEFAULT_EXCLUDED_RAW,
    DEFAULT_INCLUDED_RAW,
)
from tensordispatch.dispatch.tls import local_state
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.tensor import Tensor, new_cpu_tensor

__all__ = ["FactoryHop", "empty_memory_format", "empty_strided", "ones", "zeros"]

_ST = local_state()
_DX = DEFAULT_EXCLUDED_RAW
_DI = DEFAULT_INCLUDED_RAW
_BELOW_AD_WORD = DEFAULT_EXCLUDED_RAW | AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW
_DTYPE = type(_dt.float32)
_NO = NOT_GIVEN
_np_zeros = np.zeros
_np_empty = np.empty


class FactoryHop:
    """Whether a call of the factory ``name`` made by its binding now (default words, no
    tensor arguments, no device) would run our BackendSelect kernel ``backend_select`` and
    then ``kernel`` at CPU, with the inner operators known when ``inner`` (Note [One-hop
    factory bindings]). Memoized per published state.

    >>> from tensordispatch.backends.composite import COMPOSITE_KERNELS
    >>> hop = FactoryHop("zeros", "zeros", COMPOSITE_KERNELS["zeros"], inner=True)
    >>> hop.ready()
    True
    """

    __slots__ = ("answer", "backend_select", "entry", "inner", "kernel", "name", "state")

    def __init__(self, name: str, backend_select: str, kernel: Any, inner: bool) -> None:
        self.name, self.backend_select = name, backend_select
        self.kernel, self.inner = kernel, inner
        self.entry: Any = None
        self.state: Any = None
        self.answer = False

    def ready(self) -> bool:
        """True when the one hop is exactly what the full dispatch would run."""
        words = _ST.__dict__
        if words["excluded"] is not _DX or words["included"] is not _DI:
            return False
        entry = self.entry
        if entry is None or entry.state is not self.state:
            return self._check()
        if self.inner:
            memo, inner = _direct._MEMO, _direct._ENTRIES
            if inner is None or not (
                inner[0].state is memo[0] and inner[1].state is memo[1]
                and inner[2].state is memo[2]
            ):  # fmt: skip
                return self._check()
            return self.answer and memo[4] == FILL_TOO
        return self.answer

    def _check(self) -> bool:
        from tensordispatch.backends.aten import backend_select_keyset, op
        from tensordispatch.generated import registrations as gen

        self.entry = entry = op(self.name)._entry
        state = entry.state
        below = backend_select_keyset(None, None, None)
        self.answer = (
            state.tracer is None
            and state.lookup(_BELOW_AD_WORD, _DI, 0)
            is getattr(gen, f"backend_select_{self.backend_select}")
            and state.entry_for(below) is self.kernel
        )
        self.state = state  # after the answer: a reader matching the state sees its answer
        if self.inner:
            _direct._check(_direct._ENTRIES or _direct._entries())
            return self.answer and _direct._MEMO[4] == FILL_TOO
        return self.answer


def _hops() -> tuple[FactoryHop, ...]:
    from tensordispatch.backends.composite import COMPOSITE_KERNELS
    from tensordispatch.backends.cpu.kernels import empty_cpu, empty_strided_cpu

    return (
        FactoryHop("zeros", "zeros", COMPOSITE_KERNELS["zeros"], inner=True),
        FactoryHop("ones", "ones", COMPOSITE_KERNELS["ones"], inner=True),
        FactoryHop("empty.memory_format", "empty_memory_format", empty_cpu, inner=False),
        FactoryHop("empty_strided", "empty_strided", empty_strided_cpu, inner=False),
    )


_ZEROS, _ONES, _EMPTY, _EMPTY_STRIDED = _hops()


def _plan(size: Any) -> Any:
    """The kept (shape, strides) of ``size`` when it is a list or tuple of plain ints of a
    shape seen by empty, else None (Note [Shapes seen by empty])."""
    if type(size) is not list and type(size) is not tuple:
        return None
    for s in size:
        if type(s) is not int:
            return None
    return _SHAPES.get(tuple(size))


def _filled(hop: FactoryHop, size: Any, dtype: Any, value: int | None) -> Tensor | None:
    if dtype is _NO:
        dt = _dt.get_default_dtype()
    elif type(dtype) is _DTYPE:
        dt = dtype
    else:
        return None
    plan = _plan(size)
    if plan is None or not hop.ready():
        return None
    shape = plan[0]
    if value == 0:
        return new_cpu_tensor(_np_zeros(shape, dt._numpy), shape, plan[1], dt)
    t = new_cpu_tensor(_np_empty(shape, dt._numpy), shape, plan[1], dt)
    return t if value is None else _cpu_fill(t, value)


def zeros(size: Any, dtype: Any) -> Tensor | None:
    """``td.zeros(size, dtype=dtype)``'s result by one hop, or None when the binding must
    take the full dispatch (Note [One-hop factory bindings]).

    >>> import tensordispatch as td
    >>> _ = td.zeros(2, 3)  # the shape has been seen
    >>> zeros([2, 3], td.int64), zeros([2.0, 3], td.int64)
    (tensor([[0, 0, 0],
            [0, 0, 0]]), None)
    """
    return _filled(_ZEROS, size, dtype, 0)


def ones(size: Any, dtype: Any) -> Tensor | None:
    """``td.ones(size, dtype=dtype)`` by one hop, or None (Note [One-hop factory bindings]).

    >>> import tensordispatch as td
    >>> _ = td.ones(3)
    >>> ones((3,), td.float64)
    tensor([1., 1., 1.], dtype=tensordispatch.float64)
    """
    return _filled(_ONES, size, dtype, 1)


def empty_memory_format(size: Any, dtype: Any) -> Tensor | None:
    """``td.empty(size, dtype=dtype)`` by one hop, or None (Note [One-hop factory bindings]).

    >>> import tensordispatch as td
    >>> _ = td.empty(2, 2)
    >>> empty_memory_format([2, 2], td.int8).shape, empty_memory_format("2", td.int8)
    (tensordispatch.Size([2, 2]), None)
    """
    return _filled(_EMPTY, size, dtype, None)


def empty_strided(size: Any, stride: Any, dtype: Any) -> Tensor | None:
    """``td.empty_strided(size, stride, dtype=dtype)`` by one hop, or None (Note [One-hop
    factory bindings]).

    >>> import tensordispatch as td
    >>> _ = td.empty_strided((2, 3), (3, 1))
    >>> empty_strided([2, 3], [3, 1], td.float32).stride()
    (3, 1)
    """
    if dtype is _NO:
        dt = _dt.get_default_dtype()
    elif type(dtype) is _DTYPE:
        dt = dtype
    else:
        return None
    if (type(size) is not list and type(size) is not tuple) or (
        type(stride) is not list and type(stride) is not tuple
    ):
        return None
    for s in size:
        if type(s) is not int:
            return None
    for s in stride:
        if type(s) is not int:
            return None
    plan = _STRIDED.get((tuple(size), tuple(stride)))
    if plan is None or not _EMPTY_STRIDED.ready():
        return None
    return new_cpu_tensor(_np_empty(plan[0], dt._numpy), plan[0], plan[1], dt)
