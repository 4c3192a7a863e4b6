"""FunctionalTensor, FunctionalStorage and the five operations every Functionalize kernel
is built from (wrap, replace_, commit_update, apply_updates, sync).

Owns the data model of functionalization (reference spec 1.1-1.2): a wrapper tensor over an
inner tensor of ANY backend (CPU, Meta, Lazy, ...), one shared storage object per alias
group, and the chain of ViewMetas from the storage's base to each wrapper. Must not
register kernels (kernels.py) nor know which operators exist (view_metas.py holds the view
rules).

Note [Functional storage and generations]
All views of one base share one FunctionalStorage: the base value (a tensor one layer below,
never a wrapper), a FIFO of pending updates ``(new_value, view_metas)`` and a generation
counter bumped by every queued update. A wrapper is up to date when its own generation
equals its storage's. A mutation through any alias queues one update (``commit_update``)
and leaves every other alias stale; a stale wrapper is brought up to date lazily
(``sync``), by applying the queued updates to the base (replay each update's chain forward
to get the intermediate bases, then fold its inverse "scatter" functions backwards) and
replaying the wrapper's own chain forward from the new base. Overlapping views are handled
for free because every regeneration starts from the single updated base. As in torch,
``commit_update`` does not advance the mutated wrapper's generation, so the mutating kernel
syncs it right after (a scatter to the base, then a replay of its chain).

Note [Calling below functionalization]
Every call a wrapper makes on inner tensors runs with Functionalize in the thread-local
exclude set (torch's AutoDispatchSkipFunctionalize), as a fresh call through the whole
dispatcher, so Python dispatch modes (the tracer) see exactly the operators that reach the
layers below. ``below(op, *args)`` is that call; the exclude word is swapped inline rather
than through a guard object because it runs several times per functionalized operator.
The call also re-enables the autograd keys (unless inference mode excluded them): the
wrapper's own autograd kernel excluded them for its redispatch, but inner tensors are a new
layer whose operations must be recorded when they require grad, as across functorch's layer
boundary (``functionalize(f)(x)`` with ``x.requires_grad`` differentiates through the
functional program). Grad mode itself is not a key (no_grad still holds below).
Note [Skipping unobserved replays]
Two steps of torch's algorithm compute values nobody needs: a view of a stale wrapper is
computed from the stale value and replayed again on first use (views start at generation 0),
and a mutated view is regenerated from the base it was just scattered into, which gives back
the value it already holds. Both are observable only as operators reaching the layers below,
so they are skipped when nothing observes those: no Python dispatch mode is active and the
inner tensor is a plain CPU tensor (``unobserved``). A tracer or another backend (lazy,
whose counters are compared with torch's) sees torch's exact sequence. Then a view of a
stale wrapper syncs its parent first and starts up to date, and a mutated wrapper whose
chain replays as exact ``*_copy`` operators (no ``expand``/``as_strided``/``unfold``, whose
replays may differ from the written value) and whose value is contiguous, as such a replay
would be, is marked up to date without the replay. Values, sizes and strides are the same
either way. Most unobserved programs go further, through Note [Shadow views] (shadow.py):
an in-place operator through a chain of exact views writes into a copy of the base, and a
stale view is regenerated from its recorded place in the base, with no scatter and no
replay at all. ``set_replay_skipping(False)`` turns every shortcut off.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import (
    AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW,
    PYTHON_KS_RAW,
    keyset_raw,
)
from tensordispatch.dispatch.tls import local_state, register_field
from tensordispatch.tensor.inference import INFERENCE_VC, watch_inference_count
from tensordispatch.tensor.tensor import Tensor
from tensordispatch.transforms.functionalize.shadow import regenerate_from_shadow

__all__ = [
    "BELOW_NO_GRAD",
    "FUNCTIONALIZE_BIT",
    "FunctionalStorage",
    "FunctionalTensor",
    "ViewMeta",
    "apply_updates",
    "below",
    "commit_update",
    "from_functional",
    "is_functional",
    "regenerate",
    "replace_",
    "set_replay_skipping",
    "storage_of",
    "sync",
    "to_functional",
    "unobserved",
]

FUNCTIONALIZE_BIT: int = keyset_raw(DispatchKey.Functionalize)
# Keys a wrapper does not inherit from its inner tensor (torch drops functorch and Python keys).
_DROPPED = PYTHON_KS_RAW | FUNCTIONALIZE_BIT
for _k in (
    DispatchKey.FuncTorchDynamicLayerBackMode,
    DispatchKey.FuncTorchDynamicLayerFrontMode,
    DispatchKey.FuncTorchBatched,
    DispatchKey.FuncTorchGradWrapper,
):
    _DROPPED |= keyset_raw(_k)
_KEEP = ~_DROPPED

_ST = local_state()
_INFERENCE_ACTIVE = 0  # open inference_mode blocks (inference.py Note [Inference tensors])
watch_inference_count(globals())
# Whether views taken now are replayed as views (remove='mutations') or as *_copy operators
# (remove='mutations_and_views', the default for wrappers made outside functionalize(),
# e.g. by the lazy backend): torch's FunctionalizationReapplyViews TLS.
register_field("functionalize_reapply_views", False)


_AUTOGRAD = AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW_RAW
_NOT_AUTOGRAD = ~_AUTOGRAD


def _requires_grad(values: Any) -> bool:
    """Whether a tensor among ``values`` (lists of tensors included) requires grad."""
    for a in values:
        if isinstance(a, Tensor):
            m = a._autograd_meta
            if m is not None and m.requires_grad:
                return True
        elif (a.__class__ is list or a.__class__ is tuple) and a and a[0].__class__ is not int:
            for x in a:
                if isinstance(x, Tensor):
                    m = x._autograd_meta
                    if m is not None and m.requires_grad:
                        return True
    return False


def _inner_excluded(saved: int, grad: bool = True) -> int:
    """The exclude word for calls on inner tensors (Note [Calling below functionalization]);
    ``grad``: whether a tensor of the call requires grad."""
    if _ST.__dict__.get("autograd_inference_mode", False):  # plain dict read: hot path
        return saved | FUNCTIONALIZE_BIT
    if grad:
        return (saved | FUNCTIONALIZE_BIT) & _NOT_AUTOGRAD
    return saved | FUNCTIONALIZE_BIT | _AUTOGRAD


def below(op: Any, *args: Any, **kwargs: Any) -> Any:
    """Call ``op`` on inner tensors (Note [Calling below functionalization])."""
    d = _ST.__dict__  # the thread's own dict (Note [Reading the thread-local state])
    saved = d["excluded"]
    if d.get("autograd_inference_mode", False):
        d["excluded"] = saved | FUNCTIONALIZE_BIT
    elif _requires_grad(args) or (kwargs and _requires_grad(kwargs.values())):
        d["excluded"] = (saved | FUNCTIONALIZE_BIT) & _NOT_AUTOGRAD
    else:  # nothing to record: skip the autograd hops (Note [Calling below ...])
        d["excluded"] = saved | FUNCTIONALIZE_BIT | _AUTOGRAD
    try:
        return op(*args, **kwargs)
    finally:
        d["excluded"] = saved


# the exclude word's bits for a call below whose tensors do not require grad (in inference
# mode the autograd bits are set already)
BELOW_NO_GRAD = FUNCTIONALIZE_BIT | _AUTOGRAD


# -- ViewMeta ------------------------------------------------------------------------------------


class ViewMeta(NamedTuple):
    """One step of a view chain: how to replay a view from its base and how to undo it.

    ``rule`` is the view operator's entry in ``view_metas.VIEW_RULES``; ``args``/``kwargs``
    are the view call's non-self arguments as the caller gave them; ``reapply_views`` was
    captured when the view was taken (view op vs its ``*_copy``); ``out_index`` picks one
    output of a multi-output view (split, unbind). Immutable data; a NamedTuple rather
    than a frozen dataclass because one is built per view call (0.7 vs 1.8 us).
    """

    rule: Any  # view_metas.ViewRule (kept untyped to avoid an import cycle)
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    reapply_views: bool = False
    out_index: int = 0

    @property
    def name(self) -> str:
        return str(self.rule.name)

    @property
    def is_as_strided(self) -> bool:
        return bool(self.rule.is_as_strided)

    @property
    def is_multi_output(self) -> bool:
        return bool(self.rule.multi_output)

    def forward(self, base: Tensor) -> Tensor:
        """Replay the view on ``base`` (a tensor below functionalization)."""
        return self.rule.forward(base, self)  # type: ignore[no-any-return]

    def replay(self, base: Tensor) -> Tensor:
        """``forward`` with Functionalize already excluded by the caller."""
        return self.rule.replay(base, self)  # type: ignore[no-any-return]

    def reverse(self, base: Tensor, mutated_view: Tensor) -> Tensor:
        """The new base after ``mutated_view`` (a value of this view of ``base``) was written."""
        return self.rule.reverse(base, mutated_view, self)  # type: ignore[no-any-return]


# -- storage -------------------------------------------------------------------------------------


class FunctionalStorage:
    """The shared state of one alias group (Note [Functional storage and generations]).

    >>> import tensordispatch as td
    >>> w = to_functional(td.zeros(2))
    >>> s = storage_of(w); s.generation, len(s.updates), s.base is from_functional(w)
    (0, 0, True)
    """

    __slots__ = ("__weakref__", "base", "dense", "frozen", "generation", "mutations", "updates")

    def __init__(self, base: Tensor) -> None:
        self.base = base
        self.dense: Tensor | None = None  # a base found dense (Note [Shadow views])
        self.updates: list[tuple[Tensor, tuple[ViewMeta, ...]]] = []
        self.generation = 0
        self.frozen = False
        self.mutations = 0

    def __repr__(self) -> str:
        return (
            f"FunctionalStorage(generation={self.generation}, pending={len(self.updates)}, "
            f"base_shape={list(self.base._shape)})"
        )


class FunctionalTensor(Tensor):
    """A tensor whose operators are functionalized: the Functionalize key over an inner
    tensor of any backend (the payload ``_data``), sharing one FunctionalStorage with its
    aliases and carrying the ViewMeta chain from that storage's base.

    Sizes, strides, offset, dtype and device read through to the inner value. Make them
    with ``to_functional`` (or ``tensordispatch.func.functionalize``).

    >>> import tensordispatch as td
    >>> x = to_functional(td.arange(4.0))
    >>> v = x.view(2, 2); _ = v.add_(1)
    >>> from_functional(x).tolist(), x.tolist()  # reading x syncs it first
    ([0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0])
    """

    __slots__ = ("_fs", "_generation", "_has_metadata_mutation", "_shadow", "_view_metas")
    # ``FunctionalTensor()`` makes a wrapper with no slot set, for code that sets them all
    # (lazy's inlined methods, `_make_wrapper`): lazy/tensor.py's Note [No-argument tensor
    # constructors]; any argument is refused
    if TYPE_CHECKING:  # what mypy sees of it (object's __init__ itself confuses it)

        def __init__(self) -> None: ...

    else:
        __init__ = object.__init__

    _fs: FunctionalStorage | None  # None: its own storage, not made yet (`_fstorage`)
    _view_metas: tuple[ViewMeta, ...]
    _generation: int
    _has_metadata_mutation: bool
    _shadow: Any  # its Place in the base, or None (Note [Shadow views], shadow.py)

    @property
    def _fstorage(self) -> FunctionalStorage:
        """The alias group's storage. A wrapper made over a fresh value by a kernel that
        knows nobody else can see it yet (lazy's traced operators) starts without one: its
        own storage, with its current value as the base, is made on first use (before the
        value first changes: `replace_`). Until then the wrapper is up to date (`sync`)."""
        storage = self._fs
        if storage is None:
            storage = self._fs = FunctionalStorage(self._data)
        return storage

    @_fstorage.setter
    def _fstorage(self, storage: FunctionalStorage) -> None:
        self._fs = storage

    # -- reading values: sync first, then read the inner tensor -----------------------------

    def _inner_synced(self) -> Tensor:
        sync(self)
        inner: Tensor = self._data
        while isinstance(inner, FunctionalTensor):
            sync(inner)
            inner = inner._data
        return inner

    def item(self) -> Any:
        return self._inner_synced().item()

    def tolist(self) -> Any:
        return self._inner_synced().tolist()

    def numpy(self, *, force: bool = False) -> Any:
        raise TypeError(
            "numpy(): cannot convert a functional tensor to NumPy (its memory is not shared "
            "with the aliases it stands for); use tensordispatch.transforms.functionalize."
            "from_functional(t).numpy() after sync(t)"
        )

    def _values_for_print(self) -> Any:
        return self._inner_synced()._values_for_print()

    def __bool__(self) -> bool:
        return bool(self._inner_synced())

    def __float__(self) -> float:
        return float(self._inner_synced())

    def __int__(self) -> int:
        return int(self._inner_synced())

    def detach(self) -> Tensor:
        """``aten::detach`` through the dispatcher: a view, so mutations of the result reach
        this tensor (spec 1.3; the plain Tensor method makes a shallow copy instead)."""
        from tensordispatch.backends.aten import op

        return op("detach")(self)  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        """As torch: a wrapper over a lazy/XLA tensor prints as that tensor (functional
        wrappers are invisible there); any other prints as ``_to_functional_tensor(...)``."""
        inner = self._inner_synced()
        if inner.device.type in ("lazy", "xla"):
            return repr(inner)
        return f"_to_functional_tensor({inner!r})"

    __str__ = __repr__


def _make_wrapper(
    value: Tensor, storage: FunctionalStorage | None, metas: tuple[ViewMeta, ...], generation: int
) -> FunctionalTensor:
    t = FunctionalTensor()  # no slot set: every one is set below
    t._key_set = (value._key_set & _KEEP) | FUNCTIONALIZE_BIT
    t._shape = value._shape
    t._strides = value._strides
    t._offset = value._offset
    t.dtype = value.dtype
    t.device = value.device
    t._data = value
    t._storage = None
    t._vc = None
    t._base = None
    t._wrapped_number = False
    t._autograd_meta = None
    t._fs = storage
    t._view_metas = metas
    t._generation = generation
    t._has_metadata_mutation = False
    t._shadow = None
    if _INFERENCE_ACTIVE and not metas and value._vc is INFERENCE_VC:
        t._vc = INFERENCE_VC  # a root over an inference tensor is one (its keys follow)
    return t


def to_functional(t: Tensor) -> FunctionalTensor:
    """Wrap ``t`` (spec 1.2 ``wrap``): a new wrapper with a new storage whose base is ``t``.

    ``t`` must not already be functional; wrapped Python numbers are refused too (kernels
    pass them through unwrapped).

    >>> import tensordispatch as td
    >>> w = to_functional(td.ones(3)); is_functional(w), w.shape, w.device
    (True, tensordispatch.Size([3]), device(type='cpu'))
    """
    if isinstance(t, FunctionalTensor):
        raise RuntimeError(  # noqa: TRY004 - a state error (already wrapped), as torch's assert
            "to_functional: the tensor is already a functional tensor; wrap each tensor once "
            "(unwrap it with from_functional first)"
        )
    if not isinstance(t, Tensor):
        raise TypeError(f"to_functional: expected a Tensor, got {type(t).__name__}")
    if not _INSTALLED:
        _install()
    return _make_wrapper(t, FunctionalStorage(t), (), 0)


_INSTALLED: list[bool] = []


def _install() -> None:
    from tensordispatch.transforms.functionalize.kernels import install

    install()
    _INSTALLED.append(True)


# the key set of a plain CPU tensor (set by kernels.install before it registers anything;
# Note [Skipping unobserved replays])
_PLAIN_CPU_KS: list[int] = []


_SKIPPING: list[bool] = [True]


def unobserved(inner: Tensor) -> bool:
    """Whether operators run on ``inner`` are unobservable (Note [Skipping unobserved
    replays]): no dispatch mode is active and ``inner`` is a plain CPU tensor."""
    return (
        not _ST.modes
        and bool(_PLAIN_CPU_KS)
        and inner._key_set == _PLAIN_CPU_KS[0]
        and _SKIPPING[0]
    )


def set_replay_skipping(enabled: bool) -> bool:
    """Turn Note [Skipping unobserved replays] on or off (on by default); returns the
    previous setting. Off, every call runs torch's exact sequence of operators (used by
    benchmarks/bench_functionalize.py to show both).

    >>> previous = set_replay_skipping(False); set_replay_skipping(previous)
    False
    """
    previous = _SKIPPING[0]
    _SKIPPING[0] = bool(enabled)
    return previous


def wrap_view(
    value: Tensor, base: FunctionalTensor, meta: ViewMeta, generation: int = 0
) -> FunctionalTensor:
    """A wrapper around ``value`` that shares ``base``'s storage, one view step further down
    (generation 0 unless given: a view taken after a mutation starts stale, as in torch)."""
    t = _make_wrapper(value, base._fstorage, (*base._view_metas, meta), generation)
    t._has_metadata_mutation = base._has_metadata_mutation
    return t


def is_functional(t: object) -> bool:
    """Whether ``t`` is a FunctionalTensor (torch's ``_is_functional_tensor``)."""
    return isinstance(t, FunctionalTensor)


def from_functional(t: Tensor) -> Tensor:
    """The current inner value of a wrapper, WITHOUT syncing (torch's
    ``_from_functional_tensor``); call ``sync(t)`` first to see pending mutations."""
    if not isinstance(t, FunctionalTensor):
        raise RuntimeError(  # noqa: TRY004 - torch raises RuntimeError here too
            f"from_functional: expected a functional tensor, got a plain {type(t).__name__} "
            f"on device '{t.device}'; only tensors made by to_functional can be unwrapped"
            if isinstance(t, Tensor)
            else f"from_functional: expected a functional tensor, got {type(t).__name__}"
        )
    inner: Tensor = t._data
    return inner


def storage_of(t: FunctionalTensor) -> FunctionalStorage:
    """The alias group's shared FunctionalStorage of a wrapper."""
    return t._fstorage


# -- the five operations (spec 1.2) ---------------------------------------------------------------


def replace_(w: FunctionalTensor, new: Tensor, from_regenerate: bool = False) -> None:
    """Make ``new`` the wrapper's value (sizes, strides and offset follow); a value of
    another dtype is cast back to the wrapper's with ``_to_copy`` (spec 1.8.6)."""
    if new.dtype is not w.dtype:
        from tensordispatch.backends.aten import op

        new = below(op("_to_copy"), new, dtype=w.dtype)
    storage = None if from_regenerate else w._fstorage  # made while the old value is the base
    w._data = new
    w._shape = new._shape
    w._strides = new._strides
    w._offset = new._offset
    if storage is not None:
        storage.mutations += 1


def commit_update(w: FunctionalTensor) -> None:
    """Queue the wrapper's value as an update of its alias group; bump the generation."""
    storage = w._fstorage
    if storage.frozen:
        raise RuntimeError(
            "functionalize: cannot mutate tensors with frozen storage (the tensor's storage "
            "was replaced by set_); mutate the tensor that now owns it instead"
        )
    metas = w._view_metas
    if len(metas) > 1:
        for i, m in enumerate(metas[1:], 1):
            if m.rule.is_as_strided:
                raise RuntimeError(
                    f"functionalize: encountered a mutation on a view chain of length "
                    f"{len(metas)}, where view {i} was an as_strided() call. as_strided() is "
                    "non-compositional, so the mutation cannot be replayed on an updated "
                    "base. Call as_strided() on the base tensor (first in the chain), or "
                    "clone the view before mutating it"
                )
    storage.updates.append((w._data, metas))
    storage.generation += 1


def _apply_update(update: tuple[Tensor, tuple[ViewMeta, ...]], base: Tensor) -> Tensor:
    new_value, metas = update
    if not metas:
        return new_value
    bases = [base]
    for m in metas[:-1]:
        bases.append(m.rule.replay(bases[-1], m))
    t = new_value
    for i in range(len(metas) - 1, -1, -1):
        m = metas[i]
        t = m.rule.reverse_fn(bases[i], t, m.reapply_views, m.out_index, *m.args, **m.kwargs)
    return t


def apply_updates(storage: FunctionalStorage) -> bool:
    """Fold every queued update into the base, in order; whether anything was applied."""
    updates = storage.updates
    if not updates:
        return False
    st = _ST
    saved = st.excluded
    base = storage.base
    grad = _requires_grad((base, *(u[0] for u in updates)))
    st.excluded = _inner_excluded(saved, grad)
    try:
        for update in updates:
            base = _apply_update(update, base)
        storage.base = base
        updates.clear()
    finally:
        st.excluded = saved
    return True


def regenerate(w: FunctionalTensor) -> None:
    """Replay the wrapper's view chain from its storage's base; the wrapper is up to date."""
    storage = w._fstorage
    if not w._view_metas:  # the base itself: nothing to replay
        replace_(w, storage.base, from_regenerate=True)
        w._generation = storage.generation
        return
    if w._shadow is not None and unobserved(storage.base) and regenerate_from_shadow(w):
        return  # Note [Shadow views] (shadow.py)
    d = _ST.__dict__
    saved = d["excluded"]
    t = storage.base
    grad = t._autograd_meta is not None and t._autograd_meta.requires_grad
    d["excluded"] = _inner_excluded(saved, grad)
    try:
        for m in w._view_metas:
            t = m.rule.replay(t, m)
    finally:
        d["excluded"] = saved
    replace_(w, t, from_regenerate=True)
    w._generation = storage.generation


def sync(t: object) -> None:
    """Bring a wrapper up to date with its alias group (no-op for anything else).

    >>> import tensordispatch as td
    >>> x = to_functional(td.zeros(3)); y = x.view(3)
    >>> _ = y.add_(1); x._generation == storage_of(x).generation
    False
    >>> sync(x); from_functional(x).tolist()
    [1.0, 1.0, 1.0]
    """
    if t.__class__ is not FunctionalTensor:
        return
    w: FunctionalTensor = t  # type: ignore[assignment,unused-ignore]
    storage = w._fs
    if storage is None or w._generation == storage.generation:
        return  # no storage yet: nobody else shares its value
    if storage.updates:
        apply_updates(storage)
    regenerate(w)


def sync_all(tensors: Sequence[object]) -> None:
    """``sync`` each of ``tensors`` (lists of tensors included)."""
    for t in tensors:
        if isinstance(t, list | tuple):
            for x in t:
                sync(x)
        else:
            sync(t)


Unary = Callable[[Tensor], Tensor]
