"""Module, Parameter and the layers (torch.nn's names and registration rules)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from tensordispatch.autograd.graph import _shallow_alias
from tensordispatch.nn import functional as F
from tensordispatch.tensor import Tensor

__all__ = ["CrossEntropyLoss", "Linear", "Module", "Parameter", "ReLU", "Sequential"]


class Parameter(Tensor):
    """A leaf tensor that a Module registers as a parameter (requires grad by default).

    >>> import tensordispatch as td
    >>> Parameter(td.ones(2))
    Parameter containing:
    tensor([1., 1.], requires_grad=True)
    """

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:  # noqa: PYI034
        if data is None:
            data = Tensor._wrap_numpy(np.empty(0, np.float32), _float32())
        t = _shallow_alias(data)
        t.__class__ = cls
        t.requires_grad = requires_grad
        return t  # type: ignore[return-value]

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass

    def __repr__(self) -> str:
        plain = _shallow_alias(self)  # printed as a tensor, as torch does
        plain.requires_grad = self.requires_grad
        return f"Parameter containing:\n{plain!r}"

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        """A Parameter again (torch's): a copy of the values, the same requires_grad.

        >>> import copy, tensordispatch as td
        >>> p = Parameter(td.ones(2), requires_grad=False); c = copy.deepcopy(p)
        >>> type(c).__name__, c.requires_grad, c.tolist()
        ('Parameter', False, [1.0, 1.0])
        """
        found = memo.get(id(self))
        if found is None:
            data = self.detach().clone()  # type: ignore[attr-defined]
            found = memo[id(self)] = type(self)(data, self.requires_grad)
        return found  # type: ignore[no-any-return]

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        """Pickled as its values (a tensor) and requires_grad; unpickled as a Parameter."""
        return (_rebuild_parameter, (self.detach(), self.requires_grad))  # type: ignore[attr-defined]


def _rebuild_parameter(data: Tensor, requires_grad: bool) -> Parameter:
    return Parameter(data, requires_grad)


def _float32() -> Any:
    from tensordispatch.tensor import float32

    return float32


class Module:
    """Base class of layers: parameters and submodules register on attribute assignment."""

    _parameters: dict[str, Parameter]
    _modules: dict[str, Module]
    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        object.__setattr__(self, name, value)

    def forward(self, *args: Any) -> Any:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Parameter]]:
        """(name, parameter) pairs, this module's first, then each submodule's, in order."""
        for name, p in self._parameters.items():
            yield prefix + name, p
        for mname, m in self._modules.items():
            yield from m.named_parameters(f"{prefix}{mname}.")

    def parameters(self) -> Iterator[Parameter]:
        for _, p in self.named_parameters():
            yield p

    def children(self) -> Iterator[Module]:
        yield from self._modules.values()

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            p.grad = None

    def train(self, mode: bool = True) -> Module:
        object.__setattr__(self, "training", mode)
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)


class Linear(Module):
    """``y = x @ weight.T + bias`` with torch's default initialisation bounds."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features) if in_features > 0 else 0.0
        rng = np.random.default_rng()
        w = rng.uniform(-bound, bound, (out_features, in_features)).astype(np.float32)
        self.weight = Parameter(Tensor._wrap_numpy(w, _float32()))
        if bias:
            b = rng.uniform(-bound, bound, (out_features,)).astype(np.float32)
            self.bias: Parameter | None = Parameter(Tensor._wrap_numpy(b, _float32()))
        else:
            self.bias = None

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)


class ReLU(Module):
    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input)


class Sequential(Module):
    """Modules applied in order; submodules are named "0", "1", ..."""

    def __init__(self, *modules: Module) -> None:
        super().__init__()
        for i, m in enumerate(modules):
            setattr(self, str(i), m)

    def forward(self, input: Any) -> Any:
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, i: int) -> Module:
        return list(self._modules.values())[i]

    def __len__(self) -> int:
        return len(self._modules)


class CrossEntropyLoss(Module):
    """Cross entropy between logits and class indices (torch.nn.CrossEntropyLoss)."""

    def __init__(
        self,
        weight: Tensor | None = None,
        ignore_index: int = -100,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__()
        self.weight = weight
        self.ignore_index = ignore_index
        self.reduction = reduction
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            input, target, self.weight, self.ignore_index, self.reduction, self.label_smoothing
        )
