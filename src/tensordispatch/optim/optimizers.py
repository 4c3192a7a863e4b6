"""Optimizer, SGD, Adam: parameter updates under no_grad (torch's single-tensor formulas)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from tensordispatch.autograd.grad_mode import no_grad
from tensordispatch.tensor import Tensor

__all__ = ["SGD", "Adam", "Optimizer"]


class Optimizer:
    """Holds parameter groups and per-parameter state; subclasses implement ``step``."""

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        self.defaults = defaults
        self.param_groups = [{**defaults, **g, "params": list(g["params"])} for g in groups]
        self.state: dict[Tensor, dict[str, Any]] = {}

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                p.grad = None

    def step(self) -> None:
        raise NotImplementedError


class SGD(Optimizer):
    """Stochastic gradient descent with momentum, dampening, nesterov, weight decay."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    @no_grad()
    def step(self) -> None:
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is None:
                    continue
                d_p = p.grad if not g["maximize"] else -p.grad
                if g["weight_decay"]:
                    d_p = d_p.add(p, alpha=g["weight_decay"])
                if g["momentum"]:
                    state = self.state.setdefault(p, {})
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = d_p.clone()
                    else:
                        buf.mul_(g["momentum"]).add_(d_p, alpha=1 - g["dampening"])
                    d_p = d_p.add(buf, alpha=g["momentum"]) if g["nesterov"] else buf
                if not _add_scaled_numpy(p, d_p, -g["lr"]):
                    p.add_(d_p, alpha=-g["lr"])


def _add_scaled_numpy(p: Any, d_p: Any, alpha: float) -> bool:
    """``p.add_(d_p, alpha=alpha)`` on the NumPy arrays of two plain CPU tensors of one
    shape and dtype (the CPU add kernel's arithmetic); False when the op must run."""
    a, b = p._data, d_p._data
    if (
        type(a) is not np.ndarray
        or type(b) is not np.ndarray
        or p._base is not None
        or p._shape != d_p._shape
        or p.dtype != d_p.dtype
        or not a.flags.writeable
    ):
        return False
    np.add(a, np.multiply(b, np.array(alpha).astype(a.dtype)), out=a)
    p._bump_version()
    return True


class Adam(Optimizer):
    """Adam (Kingma & Ba) with torch's bias corrections and optional weight decay."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    @no_grad()
    def step(self) -> None:
        for g in self.param_groups:
            beta1, beta2 = g["betas"]
            for p in g["params"]:
                if p.grad is None:
                    continue
                grad = p.grad if not g["maximize"] else -p.grad
                state = self.state.setdefault(p, {})
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = p.mul(0)
                    state["exp_avg_sq"] = p.mul(0)
                state["step"] += 1
                step = state["step"]
                if g["weight_decay"]:
                    grad = grad.add(p, alpha=g["weight_decay"])
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                # torch's lerp_ with weight 1 - beta1 < 0.5: self + weight * (end - self)
                exp_avg.add_(grad.sub(exp_avg).mul(1 - beta1))
                exp_avg_sq.mul_(beta2).add_(grad.mul(grad).mul(1 - beta2))
                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                step_size = g["lr"] / bias_correction1
                denom = exp_avg_sq.sqrt().div(math.sqrt(bias_correction2)).add(g["eps"])
                p.add_(exp_avg.div(denom).mul(-step_size))
