"""The range factories' one hops: arange's for its hand-written binding (ops/bindings.py):
``td.arange(10)`` straight to the range the full dispatch's composite kernel would compute,
when it is known to be exactly that (Note [One-hop factory bindings] in composite_fast.py,
the arange paragraph); linspace's (session 8) for its generated binding, through
``composite_fast.linspace``. Split from composite_fast.py (session 7). Must not change what
any call computes, raises or shows: it only skips hops whose outcome it has checked.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tensordispatch.backends import composite_direct as _direct
from tensordispatch.backends.composite_fast import (
    _BELOW_AD_WORD,
    _DI,
    _DTYPE,
    _DX,
    _NO,
    _ST,
    _Hop,
    _is_cpu,
)
from tensordispatch.tensor import dtypes as _dt
from tensordispatch.tensor.tensor import Tensor, new_cpu_tensor

__all__ = ["ArangeHop", "arange", "linspace"]

_default_dtype = _dt.get_default_dtype


class ArangeHop(_Hop):
    """Whether ``name`` (``arange.start`` or ``arange.start_step``) called by the arange
    binding now, under the default words with no layout, device or pin_memory, would run our
    BackendSelect kernel, then our composite kernel at CPU, and whether that kernel would
    take its direct branch (``composite_layout._direct``: the ``empty`` operators and
    ``arange.start_out`` known to run our CPU kernels), so that the whole call is
    ``arange_cpu`` (Note [One-hop factory bindings], the arange paragraph). Memoized per
    published state of the five operators involved. linspace's hop asks the same of
    ``linspace`` with ``linspace.out`` and composite_layout's ``_LINSPACE_OUT`` (``out_name``,
    ``out_kernel``).

    >>> ArangeHop("arange.start", "arange_start").ready()
    True
    """

    __slots__ = ("backend_select", "out", "out_kernel", "out_name", "out_state")

    def __init__(
        self,
        name: str,
        backend_select: str,
        out_name: str = "arange.start_out",
        out_kernel: str = "_ARANGE_OUT",
    ) -> None:
        # entries: the operator's, then empty.memory_format's, empty_strided's, fill_'s (the
        # three the composite's direct test reads); out: the out= operator's (out_name), whose
        # kernel must be composite_layout's KnownOutKernel named out_kernel
        super().__init__(name)
        self.backend_select = backend_select
        self.out_name, self.out_kernel = out_name, out_kernel
        self.out: Any = None
        self.out_state: Any = None

    def ready(self) -> bool:
        """True when the one hop is exactly what the full dispatch would run."""
        words = _ST.__dict__
        if words["excluded"] is not _DX or words["included"] is not _DI:
            return False
        e, m, out = self.entries, self.memo, self.out
        if (
            e is not None and e[0].state is m[0] and e[1].state is m[1]
            and e[2].state is m[2] and e[3].state is m[3] and out.state is self.out_state
        ):  # fmt: skip
            return m[4]
        return self._check()

    def _check(self) -> bool:
        from tensordispatch.backends import (
            composite,  # before composite_layout (a cycle)
            composite_layout,
        )
        from tensordispatch.backends.aten import backend_select_keyset, op
        from tensordispatch.generated import registrations as gen
        from tensordispatch.tensor.device import CPU

        _load_arange()
        e = self.entries = (op(self.name)._entry, *(_direct._ENTRIES or _direct._entries()))
        self.out = out = op(self.out_name)._entry
        states = (e[0].state, e[1].state, e[2].state, e[3].state)
        state, out_state = states[0], out.state
        answer = (
            state.tracer is None
            and out_state.tracer is None
            and state.lookup(_BELOW_AD_WORD, _DI, 0)
            is getattr(gen, f"backend_select_{self.backend_select}")
            and state.entry_for(backend_select_keyset(None, None, None))
            is composite.COMPOSITE_KERNELS[self.backend_select]
            and _direct._check(e[1:])[4] != 0  # the composite's direct_cpu_kernels()
            and out_state.lookup(_BELOW_AD_WORD, _DI, CPU._key_set)
            is getattr(composite_layout, self.out_kernel).kernel
        )
        self.memo = (*states, answer)
        self.out_state = out_state  # last: a reader matching every state sees this answer
        return answer


_arange_length: Any = None
_arange_cpu: Any = None


def _load_arange() -> None:
    global _arange_length, _arange_cpu
    from tensordispatch.backends.cpu.layout import arange_cpu
    from tensordispatch.backends.meta.layout import arange_length

    _arange_length, _arange_cpu = arange_length, arange_cpu


_ARANGE = ArangeHop("arange", "arange")
_ARANGE_START = ArangeHop("arange.start", "arange_start")
_ARANGE_START_STEP = ArangeHop("arange.start_step", "arange_start_step")
_INT64, _F32, _F64 = _dt.int64, _dt.float32, _dt.float64


def arange(args: tuple[Any, ...], dtype: Any) -> Tensor | None:
    """``td.arange(*args, dtype=dtype)`` (None: no dtype given; no other option) by one hop,
    or None: the binding takes the full path. Takes 1 to 3 plain ints (int64's range) or
    floats and no dtype or a dtype object, when the composite kernel would compute an int64
    or floating range directly (Note [One-hop factory bindings]); anything that could fail
    or warn differently is left to the full path.

    >>> import tensordispatch as td
    >>> arange((5,), None), arange((1, 2.5, 0.5), None), arange((3,), td.float64).dtype
    (tensor([0, 1, 2, 3, 4]), tensor([1.0000, 1.5000, 2.0000]), tensordispatch.float64)
    >>> arange((True,), None), arange((3,), td.int32), arange((2**63,), None)
    (None, None, None)
    """
    if len(args) == 1:  # the common arange(end): one type test
        start, end, step, hop = 0, args[0], 1, _ARANGE
        t = type(end)
        if t is float:
            floats = True
        elif t is int and -9223372036854775808 <= end <= 9223372036854775807:
            floats = False
        else:
            return None
    else:
        n = len(args)
        if n == 2:
            start, end, step, hop = args[0], args[1], 1, _ARANGE_START
        elif n == 3:
            start, end, step, hop = args[0], args[1], args[2], _ARANGE_START_STEP
        else:
            return None
        floats = False
        for v in args:
            t = type(v)
            if t is float:
                floats = True
            elif t is not int or not -9223372036854775808 <= v <= 9223372036854775807:
                return None
    if dtype is None:  # the composite's _number_dtype for plain numbers
        dt = _default_dtype() if floats else _INT64
    elif type(dtype) is _DTYPE and (dtype is _INT64 or dtype.is_floating_point):
        dt = dtype
    else:
        return None
    if not hop.ready():  # first: its first check loads _arange_length and _arange_cpu
        return None
    try:
        return _arange_direct(start, end, step, floats, dt)
    except Exception:  # noqa: BLE001 - the full path raises it, in torch's words
        return None


_EXACT = 2**24  # float32 holds every integer up to here
_NP_INT64 = np.dtype(np.int64)
_ONE = (1,)
_np_arange = np.arange
_ceil = math.ceil


def _arange_direct(start: Any, end: Any, step: Any, floats: bool, dt: Any) -> Tensor | None:
    """``arange_cpu(start, end, step, arange_length(start, end, step, dt), dt)`` for plain
    numbers (``floats``: one is a float), with the common cases inline: the length of a
    range whose sign agrees with the step (arange_length's int formula, or for a floating
    ``dt`` arange_size's double one on finite bounds; nan fails the sign test), an int64 range
    of ints as NumPy's int64 arange (what arange_cpu calls), and ``0, 1, 2, ...`` in float32
    or float64 made in that dtype (exact below 2**24, so equal to arange_cpu's float64
    values cast); everything else through the two functions themselves.

    >>> from tensordispatch.tensor import float32, int64
    >>> _arange_direct(0, 7, 3, False, int64), _arange_direct(0, 3.0, 1, True, float32)
    (tensor([0, 3, 6]), tensor([0., 1., 2.]))
    """
    size = -1
    if (step > 0 and end >= start) or (step < 0 and end <= start):
        if not floats:
            size = -((start - end) // step)
        elif dt is not _INT64 and start - start == 0 and end - end == 0:  # finite bounds
            size = _ceil((end - start) / step)
    if size < 0:
        size = _arange_length(start, end, step, dt)
    r: Any
    if dt is _INT64 and not floats:
        r = _np_arange(start, start + size * step, step, dtype=_NP_INT64)
        if r.shape[0] != size:
            return None
    elif start == 0 and step == 1 and size <= _EXACT and (dt is _F32 or dt is _F64):
        r = _np_arange(size, dtype=dt._numpy)
    else:
        return _arange_cpu(start, end, step, size, dt)  # type: ignore[no-any-return]
    return new_cpu_tensor(r, (size,), _ONE, dt)


# -- linspace (session 8) ----------------------------------------------------------------------

_LINSPACE = ArangeHop("linspace", "linspace", "linspace.out", "_LINSPACE_OUT")
_linspace_cpu: Any = None


def linspace(start: Any, end: Any, steps: Any, dtype: Any, device: Any = _NO) -> Tensor | None:
    """``td.linspace(start, end, steps, dtype=dtype, device=device)`` by one hop, or None
    (the binding takes the full path). Taken when the composite kernel would take its direct
    branch (checked as arange's, with ``linspace.out``) and call ``linspace_cpu`` (cpu/
    linspace.py, Note [linspace from both ends by plan]), whose result it is: plain int or
    float bounds, a plain int ``steps``, no dtype (the default dtype, the composite's for
    real bounds) or a real floating dtype object, no device or the CPU device. Anything
    ``linspace_cpu`` declines (bounds out of range, 0, 1 or over 2049 steps) is None.

    >>> import tensordispatch as td
    >>> linspace(0, 1, 3, _NO), linspace(0, 1, 3, td.int64), linspace(0, 1j, 3, _NO)
    (tensor([0.0000, 0.5000, 1.0000]), None, None)
    """
    if type(steps) is not int:
        return None
    for v in (start, end):
        t = type(v)
        if t is not float and t is not int:
            return None
    if dtype is _NO:
        dt = _default_dtype()
    elif type(dtype) is _DTYPE and dtype.is_floating_point:
        dt = dtype
    else:
        return None
    if device is not _NO and not _is_cpu(device):
        return None
    if not _LINSPACE.ready():
        return None
    hop = _linspace_cpu
    if hop is None:
        hop = _bind_linspace_cpu()
    return hop(start, end, steps, dt)  # type: ignore[no-any-return]


def _bind_linspace_cpu() -> Any:
    global _linspace_cpu
    from tensordispatch.backends.cpu.linspace import linspace_cpu

    _linspace_cpu = linspace_cpu
    return linspace_cpu
