"""``tensordispatch.ops.cpu`` / ``.meta`` / ``.compositeexplicitautograd`` / ...: direct calls.

torch's ``at::cpu::add`` calls the CPU kernel of ``add`` without dispatching (no key set, no
table, no autograd). ``ops.<key>.<op>.<overload>`` is the same here: the function the code
generator wrote for that key (generated/direct_<key>.py, codegen/gen_direct.py), with the
schema's exact signature. ``ops.<key>.<op>`` is a packet of those overloads that also
resolves a call to one of them, like ``ops.aten.<op>``. External backends get a namespace
of their own from their generated module (``register_direct``), e.g. ``ops.privateuse1``.

A direct call runs only that kernel: no autograd recording, no device checks beyond the
kernel's own, no modes. Kernels registered later through a Library do not replace it (as
in torch, where the ``at::cpu::`` functions are compiled in).

>>> import tensordispatch as td
>>> x = td.tensor([1.0, 2.0])
>>> td.ops.cpu.add.Tensor(x, x).tolist(), td.ops.cpu.add(x, x, alpha=2).tolist()
([2.0, 4.0], [3.0, 6.0])
>>> td.ops.meta.add.Tensor(x.to("meta"), x.to("meta")).shape
tensordispatch.Size([2])
"""

from __future__ import annotations

import importlib
import inspect
import threading
from collections.abc import Callable, Mapping
from typing import Any

from tensordispatch.dispatch.dispatcher import RegistrationHandle
from tensordispatch.tensor.tensor import Tensor

__all__ = [
    "DIRECT_KEYS",
    "DirectNamespace",
    "DirectPacket",
    "direct_namespace",
    "is_direct",
    "register_direct",
]

#: ``ops.<attribute>`` -> dispatch key, for the keys the code generator writes modules for
#: (mirrors codegen/gen_direct.py's DIRECT_KEYS; the runtime does not import codegen).
DIRECT_KEYS: dict[str, str] = {
    "cpu": "CPU",
    "meta": "Meta",
    "compositeexplicitautograd": "CompositeExplicitAutograd",
    "compositeexplicitautogradnonfunctional": "CompositeExplicitAutogradNonFunctional",
    "compositeimplicitautograd": "CompositeImplicitAutograd",
}

# (function, argument kinds: T tensor, t optional tensor, L tensor list, N other, schema)
Overload = tuple[Callable[..., Any], str, str]


class DirectPacket:
    """The overloads of one operator name with a kernel for one key: ``packet.Tensor`` is a
    function; calling the packet picks the first overload (definition order) whose
    signature accepts the arguments with tensors exactly where the schema has them."""

    __slots__ = ("_attr", "_key", "_name", "_overloads", "_resolved", "_specs")

    def __init__(self, attr: str, key: str, name: str, overloads: Mapping[str, Overload]):
        self._attr = attr
        self._key = key
        self._name = name
        self._overloads = dict(overloads)
        self._specs: dict[str, _CallSpec] = {}
        self._resolved: dict[Any, Callable[..., Any]] = {}

    def __getattr__(self, overload: str) -> Callable[..., Any]:
        try:
            return self._overloads[overload][0]
        except KeyError:
            raise AttributeError(
                f"ops.{self._attr}.{self._name}.{overload}: operator {self._name}."
                f"{overload} has no {self._key} kernel; the {self._key} kernels of "
                f"{self._name} are: {', '.join(self._overloads)}"
            ) from None

    def overloads(self) -> list[str]:
        """The overload names with a kernel for this key, in definition order."""
        return list(self._overloads)

    def __repr__(self) -> str:
        return f"<DirectPacket ops.{self._attr}.{self._name} ({', '.join(self._overloads)})>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # Resolution depends only on the argument count, the keyword names and the
        # arguments' types (Tensor or not, None or not), so it is memoized by those.
        if kwargs:
            key: Any = (*map(type, args), *kwargs, *map(type, kwargs.values()), len(args))
        else:
            key = tuple(map(type, args))
        fn = self._resolved.get(key)
        if fn is None:
            fn = self._resolved[key] = self._resolve(args, kwargs)
        return fn(*args, **kwargs)

    def _resolve(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Callable[..., Any]:
        if len(self._overloads) == 1:
            return next(iter(self._overloads.values()))[0]
        reasons = []
        for overload, (fn, kinds, schema) in self._overloads.items():
            problem = self._declines(overload, fn, kinds, args, kwargs)
            if problem is None:
                return fn
            reasons.append(f"  {schema}: {problem}")
        head = (
            f"ops.{self._attr}.{self._name}: no {self._key} overload accepts the given "
            "arguments; each overload and why it declined:"
        )
        raise TypeError(
            "\n".join(
                [
                    head,
                    *reasons,
                    f"Call an overload directly (ops.{self._attr}.{self._name}.<overload>).",
                ]
            )
        )

    def _declines(
        self, overload: str, fn: Any, kinds: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> str | None:
        spec = self._specs.get(overload)
        if spec is None:
            spec = self._specs[overload] = _CallSpec.of(fn, kinds)
        return spec.declines(args, kwargs)


class _CallSpec:
    """What overload resolution needs from one direct function, computed once: positional
    and keyword-only names, required names, argument kinds by name."""

    __slots__ = ("keyword", "kind", "positional", "required")

    def __init__(self, fn: Any, kinds: str) -> None:
        params = list(inspect.signature(fn).parameters.values())
        kwonly = inspect.Parameter.KEYWORD_ONLY
        self.positional = [p.name for p in params if p.kind is not kwonly]
        self.keyword = {p.name for p in params}
        self.required = [p.name for p in params if p.default is inspect.Parameter.empty]
        self.kind = dict(zip((p.name for p in params), kinds, strict=True))

    @classmethod
    def of(cls, fn: Any, kinds: str) -> _CallSpec:
        """The spec of ``fn`` (a direct function) with its schema's argument kinds."""
        return cls(fn, kinds)

    def declines(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
        """Why a call with these arguments does not fit, or None if it does."""
        if len(args) > len(self.positional):
            return f"takes at most {len(self.positional)} positional arguments, {len(args)} given"
        given = dict(zip(self.positional, args))
        for name, v in kwargs.items():
            if name not in self.keyword or name in given:
                return f"unexpected or repeated argument {name!r}"
            given[name] = v
        for name in self.required:
            if name not in given:
                return f"missing a required argument: {name!r}"
        for name, v in given.items():
            kind = self.kind[name]
            if kind == "T" and not isinstance(v, Tensor):
                return f"argument {name!r} must be a Tensor, not {type(v).__name__}"
            if kind == "t" and v is not None and not isinstance(v, Tensor):
                return f"argument {name!r} must be a Tensor or None, not {type(v).__name__}"
            if kind == "N" and isinstance(v, Tensor):
                return f"argument {name!r} is not a Tensor in this overload"
        return None


class DirectNamespace:
    """``ops.<attr>``: one packet per operator name with a kernel for the namespace's key."""

    # No __slots__: a packet, once made, is stored as an instance attribute, so later
    # lookups do not reach __getattr__.

    def __init__(self, attr: str, key: str, table: Mapping[str, Mapping[str, Overload]]):
        self._attr = attr
        self._key = key
        self._table = table

    def __getattr__(self, name: str) -> DirectPacket:
        overloads = self._table.get(name)
        if overloads is None:
            if name.startswith("__"):
                raise AttributeError(name)
            raise AttributeError(_missing(self._attr, self._key, name))
        packet = DirectPacket(self._attr, self._key, name, overloads)
        setattr(self, name, packet)
        return packet

    def __dir__(self) -> list[str]:
        return sorted(self._table)

    def __repr__(self) -> str:
        return f"<DirectNamespace ops.{self._attr} (dispatch key {self._key})>"


def _missing(attr: str, key: str, name: str) -> str:
    """The AttributeError text for an operator without a kernel for ``key``."""
    others = [a for a in DIRECT_KEYS if a != attr and name in _table(a)]
    for a in sorted(_EXTERNAL):
        if a != attr and name in _EXTERNAL[a][-1][1]:
            others.append(a)
    if others:
        where = ", ".join(f"ops.{a}.{name}" for a in others)
        hint = f"it has direct entry points in {where}"
    else:
        hint = f"no key has a direct entry point for {name}"
    return (
        f"ops.{attr}.{name}: operator {name} has no {key} kernel, so there is no direct "
        f"{key} entry point for it ({hint}); call it through the dispatcher "
        f"(tensordispatch.ops.aten.{name})"
    )


_LOCK = threading.Lock()
_NAMESPACES: dict[str, DirectNamespace] = {}
# ops.<attr> of external backends: a stack of (key, table), the last one served
_EXTERNAL: dict[str, list[tuple[str, Mapping[str, Mapping[str, Overload]]]]] = {}


def _table(attr: str) -> Mapping[str, Mapping[str, Overload]]:
    if attr in _EXTERNAL:
        return _EXTERNAL[attr][-1][1]
    module = importlib.import_module(f"tensordispatch.generated.direct_{attr}")
    table: Mapping[str, Mapping[str, Overload]] = module.OVERLOADS
    return table


def direct_namespace(attr: str) -> DirectNamespace:
    """The namespace ``ops.<attr>`` (a generated key's or a registered external backend's).

    >>> direct_namespace("cpu")
    <DirectNamespace ops.cpu (dispatch key CPU)>
    """
    ns = _NAMESPACES.get(attr)
    if ns is not None:
        return ns
    with _LOCK:
        if attr in _EXTERNAL:
            key, table = _EXTERNAL[attr][-1]
        elif attr in DIRECT_KEYS:
            key, table = DIRECT_KEYS[attr], _table(attr)
        else:
            raise AttributeError(f"ops.{attr}: no direct entry points for {attr}")
        ns = _NAMESPACES[attr] = DirectNamespace(attr, key, table)
    return ns


def register_direct(
    attr: str, key: str, table: Mapping[str, Mapping[str, Overload]]
) -> RegistrationHandle:
    """Serve ``table`` (``name -> overload -> (function, argument kinds, schema)``) as
    ``ops.<attr>``: what an external backend's generated ``register()`` does. Registering
    the same name again shadows the earlier table until the newer handle is removed. The
    handle's ``remove()`` takes exactly this table away.

    >>> h = register_direct("docdev", "PrivateUse1", {"neg": {"default": (abs, "T", "")}})
    >>> import tensordispatch as td
    >>> td.ops.docdev.neg.default is abs
    True
    >>> h.remove()
    """
    if attr in DIRECT_KEYS:
        raise ValueError(
            f"register_direct({attr!r}): ops.{attr} is the generated namespace of dispatch "
            f"key {DIRECT_KEYS[attr]}; pick another name for {key}'s direct entry points"
        )
    item = (key, table)
    with _LOCK:
        _EXTERNAL.setdefault(attr, []).append(item)
        _NAMESPACES.pop(attr, None)

    def undo() -> None:
        with _LOCK:
            stack = _EXTERNAL.get(attr, [])
            if any(x is item for x in stack):
                stack[:] = [x for x in stack if x is not item]
                if not stack:
                    del _EXTERNAL[attr]
                _NAMESPACES.pop(attr, None)

    return RegistrationHandle(undo, f"direct entry points ops.{attr}")


def is_direct(attr: str) -> bool:
    """Whether ``ops.<attr>`` names direct entry points rather than an operator namespace."""
    return attr in DIRECT_KEYS or attr in _EXTERNAL
