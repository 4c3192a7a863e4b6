"""BatchedTensor and the transform levels: the data model of vmap.

Owns the wrapper tensor of the FuncTorchBatched key, the per-thread stack of transform levels
(vmap and grad, innermost last, kept in the dispatcher's thread-local ``transform_stack``)
and the small physical-layout helpers every batching rule uses. Must not know about any
operator: rules live in rules*.py, the for-loop fallback in fallback.py.

Note [Batch dim at the front]
A BatchedTensor at level L wraps one inner tensor (its ``_data``, the payload of wrapper
tensors in DESIGN.md) whose dim 0 is the batch dim of level L; the wrapper's own shape,
strides and dtype are the inner tensor's without that dim: the logical tensor the user's
function sees. torch keeps the batch dim wherever it happens to be (``bdim``) and moves it
when a rule needs it; we move it to the front once, when vmap wraps an input (a permute,
which is a view), so every rule can rely on it and ``bdim`` is always 0. The inner tensor
may itself be a BatchedTensor of a lower level (nested vmap): rules call operators on the
inner tensors through the dispatcher, so the lower level's rules run next.

Note [Levels]
Each vmap or grad call pushes a level onto the thread's transform stack; its number is the
stack depth (as torch's functorch interpreter levels: ``vmap(vmap(f))`` has levels 1 and 2,
``vmap(grad(vmap(f)))`` 1, 2, 3). A batching kernel works on the highest level among its
arguments: arguments batched at that level are unwrapped, every other argument is an
ordinary (unbatched) value at that level, even a BatchedTensor of a lower level.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import DispatchKeySet
from tensordispatch.dispatch.tls import local_state
from tensordispatch.tensor.inference import mark_inference, watch_inference_count
from tensordispatch.tensor.tensor import Tensor

__all__ = [
    "BATCHED_RAW",
    "BatchedTensor",
    "GradLevel",
    "VmapLevel",
    "current_levels",
    "is_batched",
    "maybe_level",
    "move_to_front",
    "physical",
    "pop_level",
    "push_level",
    "wrap",
]

BATCHED_RAW: int = DispatchKeySet(DispatchKey.FuncTorchBatched).raw

_new_object = object.__new__
_INFERENCE_ACTIVE = 0  # open inference_mode blocks (inference.py Note [Inference tensors])
watch_inference_count(globals())


@dataclass(frozen=True, slots=True)
class VmapLevel:
    """One active vmap: its level number, batch size and randomness mode.

    ``sources`` maps ``id(batched)`` to ``(batched, caller's tensor, in_dim)`` for the inputs
    mapped along a dim other than 0: an in-place view op acts on the caller's tensor
    there, as in torch (Note [In-place views keep the caller's batch dim] in rules_index.py).
    """

    level: int
    batch_size: int
    randomness: str
    sources: dict[int, tuple[Any, Tensor, int]] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True)
class GradLevel:
    """One active grad/vjp transform (counted in the level numbers, Note [Levels])."""

    level: int


def current_levels() -> list[Any]:
    """The thread's transform stack (VmapLevel / GradLevel objects, innermost last)."""
    stack: list[Any] = local_state().transform_stack
    return stack


def push_level(make: Any, *args: Any) -> Any:
    """Push ``make(level, *args)`` with the next level number; returns the level object."""
    stack = local_state().transform_stack
    lvl = make(len(stack) + 1, *args)
    stack.append(lvl)
    return lvl


def pop_level(lvl: Any) -> None:
    """Pop ``lvl`` (must be innermost; restores the stack after an exception too)."""
    stack = local_state().transform_stack
    while stack:
        if stack.pop() is lvl:
            return


class BatchedTensor(Tensor):
    """A tensor inside vmap: one logical sample of a batch at one level.

    Made by ``vmap``; ``_data`` is the inner tensor whose dim 0 is the batch dim (Note [Batch
    dim at the front]), ``_level`` the vmap level. Shape, strides and dtype are logical.

    >>> import tensordispatch as td
    >>> from tensordispatch.transforms.vmap import vmap
    >>> def show(x):
    ...     print(type(x).__name__, tuple(x.shape), x.level, tuple(x.value.shape))
    ...     return x
    >>> _ = vmap(show)(td.ones(5, 3))
    BatchedTensor (3,) 1 (5, 3)
    """

    __slots__ = ("_level",)

    _level: int

    @property
    def level(self) -> int:
        """The vmap level this tensor is batched at."""
        return self._level

    @property
    def bdim(self) -> int:
        """The batch dim in the inner tensor (always 0, Note [Batch dim at the front])."""
        return 0

    @property
    def value(self) -> Tensor:
        """The inner tensor (batch dim first)."""
        inner: Tensor = self._data
        return inner

    @property
    def requires_grad(self) -> bool:  # type: ignore[override]
        inner: Tensor = self._data
        return inner.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._data.requires_grad = value

    @property
    def grad_fn(self) -> Any:  # type: ignore[override]
        return self._data.grad_fn

    @property
    def is_leaf(self) -> bool:
        inner: Tensor = self._data
        return bool(inner.is_leaf)

    def detach(self) -> BatchedTensor:
        """The same batch outside the autograd graph (detaches the inner tensor)."""
        inner: Tensor = self._data
        return wrap(inner.detach(), self._level)

    def detach_(self) -> BatchedTensor:
        self._data.detach_()
        return self

    def requires_grad_(self, requires_grad: bool = True) -> BatchedTensor:
        self._data.requires_grad_(requires_grad)
        return self

    def _is_view(self) -> bool:
        inner: Tensor = self._data
        return inner._is_view()

    def item(self) -> Any:
        raise RuntimeError(
            "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
            "calling .item() on a Tensor, please try to rewrite what you're doing with other "
            "operations. If error is occurring somewhere inside PyTorch internals, please file "
            "a bug report."
        )

    def _one_element(self, kind: str, error: type[Exception]) -> Any:
        return self.item()

    def __bool__(self) -> bool:
        raise RuntimeError(
            "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
            "control flow. We don't support that yet, please file an issue at "
            "https://github.com/pytorch/pytorch/issues ."
        )

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> Any:
        return self.numpy()

    def tolist(self) -> Any:
        raise RuntimeError(
            "vmap: tolist() is not supported on a BatchedTensor (its values differ per batch "
            "entry); return the tensor from the vmapped function and convert it outside vmap"
        )

    def numpy(self, *, force: bool = False) -> Any:
        raise RuntimeError(
            "vmap: numpy() is not supported on a BatchedTensor (its values differ per batch "
            "entry); return the tensor from the vmapped function and convert it outside vmap"
        )

    def _values_for_print(self) -> Any:
        return None

    def __repr__(self) -> str:
        inner = repr(self._data).replace("\n", "\n    ")
        return f"BatchedTensor(lvl={self._level}, bdim=0, value=\n    {inner}\n)"

    __str__ = __repr__


def wrap(inner: Tensor, level: int) -> BatchedTensor:
    """A BatchedTensor of ``level`` over ``inner`` (its dim 0 is the batch dim)."""
    t = _new_object(BatchedTensor)
    t._key_set = inner._key_set | BATCHED_RAW
    t._shape = inner._shape[1:]
    t._strides = inner._strides[1:]
    t._offset = inner._offset
    t.dtype = inner.dtype
    t.device = inner.device
    t._data = inner
    t._storage = None
    t._vc = None
    t._base = None
    t._wrapped_number = False
    t._autograd_meta = None
    t._level = level
    if _INFERENCE_ACTIVE:  # made in inference_mode: an inference tensor, as torch's wrapper
        mark_inference(t)
    return t


def maybe_level(x: Any) -> int:
    """The level ``x`` is batched at, or 0 (not a BatchedTensor)."""
    return x._level if type(x) is BatchedTensor else 0


def is_batched(x: Any, level: int) -> bool:
    """Whether ``x`` is a BatchedTensor of exactly ``level``."""
    return type(x) is BatchedTensor and x._level == level


def physical(x: Tensor) -> Tensor:
    """The innermost plain tensor under every level of wrapping."""
    while type(x) is BatchedTensor:
        x = x._data
    return x


def move_to_front(x: Tensor, dim: int) -> Tensor:
    """``x`` with dim ``dim`` (already wrapped to >= 0) moved to the front, as a view."""
    if dim == 0:
        return x
    order = [dim, *range(dim), *range(dim + 1, x.dim())]
    result: Tensor = x.permute(order)
    return result


def move_from_front(x: Tensor, dim: int) -> Tensor:
    """``x`` with dim 0 moved to position ``dim`` (already wrapped to >= 0), as a view."""
    if dim == 0:
        return x
    n = x.dim()
    order = [*range(1, dim + 1), 0, *range(dim + 1, n)]
    result: Tensor = x.permute(order)
    return result
