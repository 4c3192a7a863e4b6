"""Versions of the results of operators run on inference tensors outside inference mode.

Owns ``RESULT_VERSIONS`` (torch 2.13's numbers, per aten overload) and the ADInplaceOrView
kernel that gives them (``make_result_version_kernel``); registration.py registers it for
each listed overload when the overload is defined. Must not record graphs.

Note [Versions of results made from inference tensors]
torch's CPU kernels make many results by writing into a fresh tensor through the dispatcher:
``mean`` is ``sum.out`` then ``div_``, ``mv`` is ``addmv.out``, ``sort`` copies into its
outputs, ``repeat`` copies into a view of its result, reductions along one dim squeeze their
outputs in place. Each such write passes ADInplaceOrView and bumps the result's version,
unless an autograd kernel ran first: it excludes ADInplaceOrView below it (torch's
AutoDispatchBelowADInplaceOrView), and every normal tensor has the autograd keys, so normal
results stay at version 0. Inference tensors have no autograd keys, and outside inference
mode the thread-local include set holds ADInplaceOrView: a call whose tensor arguments are
all inference tensors reaches ADInplaceOrView first, and torch's result (a normal tensor)
leaves the kernel at the number of writes it made, 1 or 2 (inside inference mode the
result is an inference tensor, with no version).

Our kernels compute with NumPy, without those writes. So each overload whose torch kernel
makes them gets, at ADInplaceOrView, a kernel that runs below the key (nested calls
excluded, as torch's guard would) and then sets each fresh output's version to torch's
count: reached exactly when torch's writes are counted (all tensor arguments inference
tensors, outside inference mode), and never by a normal tensor's call: the recording path
excludes the key (torch's guard) and the no-grad path of a functional operator's autograd
kernel redispatches to the key set without ADInplaceOrView (``_AFTER_FN`` in kernels.py and
entries.py; the key is a fallthrough for every other functional operator), so the per-op
cost of normal calls is unchanged. Operators without an autograd kernel (``nonzero``,
``all``, the ``*_copy`` views) are left out: a normal call would reach the kernel. The counts were measured
on torch 2.13 by calling each overload with inference tensors outside the mode over the
OpInfo samples (tests/autograd/test_inference_result_versions.py compares them); where
torch's count depends on the arguments (an empty result, a dim reduction, keepdim, an
integer dtype, the batch count), a rule computes it. Overloads whose count varied in ways
not captured here (convolution, amin, cumsum of 0-d tensors) are left at 0, as is
``norm.ScalarOpt_dim`` (torch's 1, but torch's ``Tensor.norm`` reaches
``linalg_vector_norm``, 0, where ours reaches it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensordispatch.autograd.ad_inplace import _below_ad_inplace_or_view
from tensordispatch.dispatch.keyset import (
    AFTER_AD_INPLACE_OR_VIEW_RAW,
    AUTOGRAD_DISPATCH_KEYSET_RAW,
)
from tensordispatch.tensor import Tensor
from tensordispatch.tensor.inference import INFERENCE_VC
from tensordispatch.tensor.tensor import VersionCounter

__all__ = ["RESULT_VERSIONS", "make_result_version_kernel"]

_AUTOGRAD_RAW = AUTOGRAD_DISPATCH_KEYSET_RAW
Counts = tuple[int, ...]
Rule = Callable[..., Counts]


def _numel(t: Any) -> int:
    n = 1
    for s in t._shape:
        n *= s
    return n


def _along_dim(one: int) -> Rule:
    """max.dim / min.dim: torch squeezes the kept dim away in place (2 writes), none when
    keepdim; a 0-d input takes 1."""

    def rule(_: Any, self: Any, dim: Any = None, keepdim: bool = False, **k: Any) -> Counts:
        keepdim = k.get("keepdim", keepdim)
        if not self._shape:
            return (1,) * one
        return (0,) * one if keepdim else (2,) * one

    return rule


def _aminmax(_: Any, self: Any, *, dim: Any = None, keepdim: bool = False) -> Counts:
    if dim is None or not self._shape:
        return (1, 1)
    return (0, 0) if keepdim else (2, 2)


def _full_reduction(_: Any, self: Any, dim: Any = None, *a: Any, **k: Any) -> Counts:
    """std / var.correction: 1 for a reduction over every element, 0 along some dims."""
    dims = k.get("dim", dim)
    if dims is None or len(self._shape) <= 1:
        return (1,)
    listed = {d % len(self._shape) for d in (dims if isinstance(dims, (list, tuple)) else [dims])}
    return (1,) if len(listed) == len(self._shape) or not listed else (0,)


def _mm(_: Any, self: Any, mat2: Any) -> Counts:
    return (1,) if self._shape[-1] == 0 else (0,)  # an empty inner dim: zero_() of the result


def _addmm(_: Any, self: Any, mat1: Any, mat2: Any, *a: Any, **k: Any) -> Counts:
    return (0,) if mat1._shape[0] == 0 or mat2._shape[-1] == 0 else (1,)


def _non_empty_result(result: Any, *a: Any, **k: Any) -> Counts:
    """repeat copies into a view of its result: nothing to copy for an empty one."""
    return (0,) if _numel(result) == 0 else (1,)


def _addbmm(
    _: Any, self: Any, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1
) -> Counts:
    """A copy of ``self`` (and a scaling unless beta is 0), then one addmm_ per batch."""
    return (1 + (beta != 0) + max(batch1._shape[0], 1),)


def _integral(_: Any, self: Any, *a: Any, **k: Any) -> Counts:
    """ceil / floor / round of an integer tensor is a clone."""
    return (0,) if self.dtype.is_floating_point or self.dtype.is_complex else (1,)


def _empty_only(_: Any, self: Any, *a: Any, **k: Any) -> Counts:
    """flip / roll of an empty tensor is a clone; otherwise a plain kernel."""
    return (1,) if _numel(self) == 0 else (0,)


ONE, TWO = (1,), (2,)
#: torch 2.13's versions of the outputs, per overload (Note [Versions of results made from
#: inference tensors]): a tuple for every call, or a rule of (result, *args, **kwargs).
#: torch also gives 1 for all / any / logical_* / nonzero / scatter.reduce and the *_copy
#: views, which have no autograd kernel here (left out: see the Note).
RESULT_VERSIONS: dict[str, Counts | Rule] = {
    **dict.fromkeys(
        [
            "_to_copy",
            "abs",
            "amax",
            "baddbmm",
            "clone",
            "dot",
            "fill.Scalar",
            "logsumexp",
            "max",
            "min",
            "mv",
            "prod",
            "prod.dim_int",
            "scatter.src",
            "scatter_add",
            "sum",
            "sum.dim_IntList",
        ],
        ONE,
    ),
    **dict.fromkeys(
        [
            "as_strided_scatter",
            "diagonal_scatter",
            "index_put",
            "masked_fill.Scalar",
            "masked_fill.Tensor",
            "mean",
            "mean.dim",
            "select_scatter",
            "slice_scatter",
        ],
        TWO,
    ),
    "addbmm": _addbmm,
    "sort": (1, 1),
    "sort.stable": (1, 1),
    "nll_loss2d_forward": (0, 1),
    "narrow_copy": (0,),  # torch's own kernel: no copy_ (ours is a clone)
    "max.dim": _along_dim(2),
    "min.dim": _along_dim(2),
    "aminmax": _aminmax,
    "std.correction": _full_reduction,
    "var.correction": _full_reduction,
    "mm": _mm,
    "addmm": _addmm,
    "repeat": _non_empty_result,
    "ceil": _integral,
    "floor": _integral,
    "round": _integral,
    "flip": _empty_only,
    "roll": _empty_only,
}


def _set_versions(result: Any, counts: Counts, args: tuple[Any, ...]) -> None:
    outs = result if type(result) in (tuple, list) else (result,)
    for out, count in zip(outs, counts, strict=False):
        if type(out) in (tuple, list):  # a Tensor[] output (split_with_sizes_copy ...)
            for t in out:
                _set_one(t, count, args)
        else:
            _set_one(out, count, args)


def _set_one(t: Any, count: int, args: tuple[Any, ...]) -> None:
    if not isinstance(t, Tensor):
        return
    root = t if t._base is None else t._base
    for a in args:  # an output aliasing an input keeps the input's counter
        if isinstance(a, Tensor) and (a is root or a._base is root):
            return
    vc = root._vc
    if vc is INFERENCE_VC:
        return
    if vc is None:
        if not count:
            return
        vc = root._vc = t._vc = VersionCounter()
    vc.version = count


def make_result_version_kernel(name: str, counts: Counts | Rule) -> Callable[..., Any]:
    """The ADInplaceOrView kernel giving ``name``'s outputs torch's versions (Note
    [Versions of results made from inference tensors]).

    >>> import tensordispatch as td
    >>> with td.inference_mode():
    ...     a = td.ones(2, 3)
    >>> a.sum()._version, a.mean()._version, td.ones(2, 3).mean()._version
    (1, 2, 0)
    """

    def kernel(raw: int, op: Any, *args: Any, **kwargs: Any) -> Any:
        result = _below_ad_inplace_or_view(op, raw & AFTER_AD_INPLACE_OR_VIEW_RAW, args, kwargs)
        if raw & _AUTOGRAD_RAW:  # a normal tensor among the arguments: torch's guard ran
            return result
        wanted = counts if isinstance(counts, tuple) else counts(result, *args, **kwargs)
        _set_versions(result, wanted, args)
        return result

    kernel.__name__ = kernel.__qualname__ = f"result_versions_{name.replace('.', '_')}"
    return kernel
