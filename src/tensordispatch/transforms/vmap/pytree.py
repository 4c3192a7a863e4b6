"""The pytrees vmap and the function transforms walk: tuples, lists and dicts of leaves.

torch.func flattens inputs and outputs with torch.utils._pytree; we need the same leaf
order, the same "prefix broadcasting" of in_dims/out_dims, and a TreeSpec whose repr is
torch's (it appears in vmap's error messages). None is a leaf, as in torch; dicts keep
insertion order; namedtuples are tuples.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["LEAF", "TreeSpec", "broadcast_prefix", "tree_flatten", "tree_map", "tree_unflatten"]


@dataclass(frozen=True, slots=True)
class TreeSpec:
    """The structure of a pytree: node type (None for a leaf), dict keys, children.

    >>> tree_flatten((1, [2, {"a": 3}]))[1]
    TreeSpec(tuple, None, [*,
      TreeSpec(list, None, [*,
        TreeSpec(dict, ['a'], [*])])])
    """

    type: type | None
    context: Any
    children: tuple[TreeSpec, ...]

    @property
    def is_leaf(self) -> bool:
        return self.type is None

    @property
    def num_leaves(self) -> int:
        return 1 if self.type is None else sum(c.num_leaves for c in self.children)

    def _repr(self, indent: int) -> str:
        if self.type is None:
            return "*"
        text = f"TreeSpec({self.type.__name__}, {self.context!r}, ["
        if self.children:
            indent += 2
            parts = [self.children[0]._repr(indent)]
            parts += ["\n" + " " * indent + c._repr(indent) for c in self.children[1:]]
            text += ",".join(parts)
        return text + "])"

    def __repr__(self) -> str:
        return self._repr(0)


LEAF = TreeSpec(None, None, ())


def _node(tree: Any) -> tuple[type, Any, list[Any]] | None:
    if isinstance(tree, tuple):
        return tuple, None, list(tree)
    if isinstance(tree, list):
        return list, None, list(tree)
    if isinstance(tree, dict):
        return dict, list(tree), list(tree.values())
    return None


def tree_flatten(tree: Any) -> tuple[list[Any], TreeSpec]:
    """Leaves in order and the structure.

    >>> tree_flatten({"b": 1, "a": (2, None)})
    ([1, 2, None], TreeSpec(dict, ['b', 'a'], [*,
      TreeSpec(tuple, None, [*,
        *])]))
    """
    leaves: list[Any] = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree: Any, leaves: list[Any]) -> TreeSpec:
    node = _node(tree)
    if node is None:
        leaves.append(tree)
        return LEAF
    kind, context, children = node
    if kind is tuple and type(tree) is not tuple and hasattr(tree, "_fields"):
        kind = type(tree)  # namedtuple: rebuilt as itself
    return TreeSpec(kind, context, tuple(_flatten(c, leaves) for c in children))


def tree_unflatten(leaves: list[Any], spec: TreeSpec) -> Any:
    """Inverse of tree_flatten.

    >>> tree_unflatten([1, 2], tree_flatten((0, [0]))[1])
    (1, [2])
    """
    it = iter(leaves)
    return _unflatten(it, spec)


def _unflatten(it: Any, spec: TreeSpec) -> Any:
    if spec.type is None:
        return next(it)
    children = [_unflatten(it, c) for c in spec.children]
    if spec.type is dict:
        return dict(zip(spec.context, children, strict=True))
    if spec.type is list:
        return children
    if spec.type is tuple:
        return tuple(children)
    return spec.type(*children)  # namedtuple


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    """``fn`` applied to every leaf, structure kept.

    >>> tree_map(lambda x: x * 2, {"a": [1, 2]})
    {'a': [2, 4]}
    """
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix: Any, spec: TreeSpec) -> list[Any] | None:
    """``prefix`` (a tree whose leaves stand for whole subtrees of ``spec``) flattened to one
    value per leaf of ``spec``; None if the structures disagree (torch's
    ``_broadcast_to_and_flatten``).

    >>> broadcast_prefix((0, None), tree_flatten(([1, 2], 3))[1])
    [0, 0, None]
    """
    out: list[Any] = []
    return out if _broadcast(prefix, spec, out) else None


def _broadcast(prefix: Any, spec: TreeSpec, out: list[Any]) -> bool:
    node = _node(prefix)
    if node is None:
        out.extend([prefix] * spec.num_leaves)
        return True
    if spec.type is None:
        return False
    kind, context, children = node
    spec_kind = tuple if spec.type not in (list, dict) else spec.type
    if kind is not spec_kind or len(children) != len(spec.children):
        return False
    if kind is dict and context != spec.context:
        if set(context) != set(spec.context):
            return False
        children = [prefix[k] for k in spec.context]
    return all(_broadcast(p, c, out) for p, c in zip(children, spec.children, strict=True))
