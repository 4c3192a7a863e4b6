"""Backward formulas: torch's derivatives.yaml text compiled to Python, and its helpers.

Owns compiling one formula (C++ expression syntax, as written in ops/derivatives.yaml, read
as Python by formula_text.py) into a Python function, and the helper functions formulas call
(``maybe_multiply``, ``sum_backward``, ``mm_mat1_backward``, ...), written here in terms of
aten operators so that backward formulas are themselves differentiable (create_graph).
Must not build graphs or know about the engine.

Note [Formula translation] (formula_text.py) reads a formula as Python text; this module
compiles it against the helpers.

Note [NumPy fast paths]
The helpers of the hottest formulas (matrix products, sum_to, threshold and log_softmax
backward) compute on the NumPy arrays directly when nothing would observe the aten calls:
grad mode off (no create_graph), no dispatch mode or extra included key, plain CPU tensors
(``_data`` a NumPy array, so no functional, lazy or batched wrapper) of one dtype. The
arithmetic is the CPU kernels' own (np.matmul, np.sum), so results are the same.

Note [Complex gradients]
torch's convention: the gradient of a real loss L with respect to a complex z = a + ib is
dL/da + i dL/db (the conjugate Wirtinger derivative, times 2), and a node maps an output
gradient to input gradients with the conjugates of the holomorphic derivatives. Its
formulas say so with ``.conj()`` (``grad * other.conj()``), and ``handle_r_to_c`` keeps the
real part for a real input whose gradient came out complex. ``conj`` here is a function
(identity on real tensors and numbers) that materializes the conjugate of a complex tensor,
differentiably (view_as_real, a sign flip, view_as_complex), since the library has no
conjugate views. The helpers below that multiply by a derivative (``mul_tensor_backward``,
``mm_mat1_backward`` ...) conjugate it as torch's C++ helpers do.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from tensordispatch.autograd.formula_text import _KEYWORDS, REWRITES, saved_names, translate
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import keyset_raw
from tensordispatch.dispatch.tls import local_state
from tensordispatch.ops.deferred import deferred_op as _deferred_op
from tensordispatch.tensor import Tensor
from tensordispatch.tensor.device import CPU
from tensordispatch.tensor.values import resolved_values

__all__ = ["HELPERS", "REWRITES", "compile_formula", "saved_names", "sum_to", "translate"]

_zeros = _deferred_op(globals(), "_zeros", "zeros")
_zeros_like = _deferred_op(globals(), "_zeros_like", "zeros_like")
_mul = _deferred_op(globals(), "_mul", "mul.Tensor")
_mul_scalar = _deferred_op(globals(), "_mul_scalar", "mul.Scalar")
_div = _deferred_op(globals(), "_div", "div.Tensor")
_neg = _deferred_op(globals(), "_neg", "neg")
_sum_dim = _deferred_op(globals(), "_sum_dim", "sum.dim_IntList")
_select = _deferred_op(globals(), "_select", "select.int")
_slice = _deferred_op(globals(), "_slice", "slice.Tensor")
_copy_ = _deferred_op(globals(), "_copy_", "copy_")
_permute = _deferred_op(globals(), "_permute", "permute")
_pow = _deferred_op(globals(), "_pow", "pow.Tensor_Scalar")
_where = _deferred_op(globals(), "_where", "where.self")
_view_as_real = _deferred_op(globals(), "_view_as_real", "view_as_real")
_view_as_complex = _deferred_op(globals(), "_view_as_complex", "view_as_complex")
_abs = _deferred_op(globals(), "_abs", "abs")
_conj_physical = _deferred_op(globals(), "_conj_physical", "_conj_physical")


_ST = local_state()
_MATH_BITS_RAW = keyset_raw(DispatchKey.Conjugate) | keyset_raw(DispatchKey.Negative)
_CPU_KS = CPU._key_set
_PLAIN_INCLUDED = _ST.included


def numpy_ok(*ts: Any) -> bool:
    """Whether a helper may compute on the NumPy arrays directly (Note [NumPy fast paths])."""
    st = _ST
    if st.grad_enabled or st.modes or st.included != _PLAIN_INCLUDED:
        return False
    for t in ts:
        if type(getattr(t, "_data", None)) is not np.ndarray:
            return False
        ks = t._key_set  # a conjugate / negative view's array holds the unresolved values
        if ks is not _CPU_KS and ks & _MATH_BITS_RAW:  # (identity first: a cheap common case)
            return False
    return True


_ndarray = np.ndarray
_multiply = np.multiply
_asarray = np.asarray
_wrap_numpy = Tensor._wrap_numpy


def _wrap(array: Any, like: Tensor) -> Tensor:
    return Tensor._wrap_numpy(np.asarray(array, dtype=like._data.dtype), like.dtype)


def compile_formula(python_formula: str, names: list[str], where: str) -> Callable[..., Any]:
    """Compile ``def formula(*names): return <python_formula>`` against HELPERS."""
    source = f"def formula({', '.join(names)}):\n    return {python_formula}\n"
    ns: dict[str, Any] = dict(HELPERS)
    try:
        # The formula text is data from our own YAML file (Note [Formula translation]).
        exec(compile(source, f"<derivative {where}>", "exec"), ns)  # noqa: S102
    except SyntaxError as e:
        raise ValueError(
            f"{where}: the derivative formula {python_formula!r} is not valid Python after "
            f"translation ({e.msg}); rewrite the formula or add a rewrite to REWRITES"
        ) from None
    unknown = sorted(
        w
        for w in set(re.findall(r"(?<![.\w])([A-Za-z_]\w*)\s*\(", python_formula))
        if w not in ns and w not in names and w not in dir(builtins) and w not in _KEYWORDS
    )
    if unknown:
        raise ValueError(
            f"{where}: the derivative formula {python_formula!r} calls {', '.join(unknown)}, "
            "which autograd/formulas.py does not define; add it to HELPERS"
        )
    fn: Callable[..., Any] = ns["formula"]
    return fn


# -- helpers called by formulas (torch's FunctionsManual names) --------------------------------


def handle_r_to_c(self_scalar_type: Any, grad: Tensor) -> Tensor:
    """Real input, complex gradient: take the real part (Note [Complex gradients])."""
    if type(grad) is Tensor and not grad.dtype.is_complex:  # a real gradient: as it is
        return grad
    if getattr(self_scalar_type, "is_complex", True) or not isinstance(grad, Tensor):
        return grad
    if not grad.dtype.is_complex:
        return grad
    if numpy_ok(grad):
        return Tensor._wrap_numpy(np.ascontiguousarray(grad._data.real), grad.dtype.to_real())
    real: Tensor = _select(_view_as_real(grad), -1, 0)
    return real


def conj(t: Any) -> Any:
    """The complex conjugate, as a new tensor (Note [Complex gradients]); real tensors and
    numbers are returned as they are.

    >>> import tensordispatch as td
    >>> conj(td.tensor([1 + 2j])), conj(2.0), conj(3j)
    (tensor([1.-2.j]), 2.0, -3j)
    """
    if type(t) is int:  # e.g. add's alpha
        return t
    if not isinstance(t, Tensor):
        return t.conjugate() if isinstance(t, complex) else t
    if not t.dtype.is_complex or t.numel() == 0:  # an empty gradient may be stride-0
        return t
    if numpy_ok(t):
        return Tensor._wrap_numpy(np.conj(t._data), t.dtype)
    if t._key_set & _MATH_BITS_RAW:  # view_as_real refuses a conjugate view
        physical: Tensor = _conj_physical(t)
        return physical
    from tensordispatch.tensor import tensor

    flip = tensor([1.0, -1.0], dtype=t.dtype.to_real())
    result: Tensor = _view_as_complex(_view_as_real(t) * flip)
    return result


def maybe_multiply(t: Tensor, s: Any) -> Tensor:
    """``t * s``, skipping the multiplication when ``s`` is 1."""
    if type(s) is int and s == 1:  # add's and sub's default alpha: one test
        return t
    if isinstance(s, (bool, int, float)) and s == 1:
        return t
    return _mul_scalar(t, s) if not isinstance(s, Tensor) else _mul(t, s)


def mul_tensor_backward(grad: Tensor, other: Any, self_st: Any) -> Tensor:
    dt = grad.dtype
    # complex: the general path below (conj, handle_r_to_c)
    if type(other) is Tensor and type(grad) is Tensor and dt is other.dtype and not dt.is_complex:
        a, b = grad._data, other._data
        ks = other._key_set  # (a saved operand may be a negative view: see numpy_ok)
        if (
            type(a) is _ndarray
            and type(b) is _ndarray
            and (ks is _CPU_KS or not ks & _MATH_BITS_RAW)
        ):
            st = _ST  # numpy_ok, inlined (the hottest formula)
            if not (st.grad_enabled or st.modes) and st.included == _PLAIN_INCLUDED:
                r = _multiply(a, b)
                if type(r) is not _ndarray:  # 0-dim operands give a NumPy scalar
                    r = _asarray(r, dtype=a.dtype)
                return _wrap_numpy(r, dt)
    return handle_r_to_c(self_st, grad * conj(other))


def _broadcast_view(data: Any, shape: tuple[int, ...]) -> Any:
    """A stride-0 view of ``data`` (same rank, size-1 dims widened) with the shape
    ``shape``: ``np.broadcast_to``'s layout without its Python-level overhead. Writable, as
    the expand op's result is (and torch's ``expand(...).numpy()``): in-place kernels refuse
    a written-to tensor with internal overlap (backends/overlap.py, torch's error), and
    setting NumPy's read-only flag would cost more than the view (~0.35 us)."""
    if not data.flags.c_contiguous:
        return np.broadcast_to(data, shape)
    strides = tuple(
        0 if n == 1 and m != 1 else st for n, m, st in zip(data.shape, shape, data.strides)
    )
    return np.ndarray(shape, data.dtype, data, 0, strides)


# All-zero strides per rank: torch's expand of a 0-dim tensor gives stride 0 in every dim,
# size-1 dims included (inferExpandGeometry: a missing dim takes the stride of the dims after
# it, which are all 0 here).
_ZERO_STRIDES = [(0,) * n for n in range(65)]


def expand_grad(grad: Tensor, sizes: Any) -> Tensor:
    """``grad.expand(sizes)`` (sum's and mean's backward); on the NumPy fast path a stride-0
    view of the gradient's array (``_broadcast_view``), as torch's expand is."""
    st = _ST
    if (
        type(grad) is Tensor
        and type(grad._data) is _ndarray
        and not (st.grad_enabled or st.modes)
        and st.included == _PLAIN_INCLUDED
    ):  # numpy_ok(grad), inlined
        shape = sizes if type(sizes) is tuple else tuple(sizes)
        if shape == grad._shape:
            return grad
        data = grad._data
        if not data.ndim and len(shape) < 65:  # a full reduction's gradient: stride 0
            view = _ndarray(shape, data.dtype, data, 0, _ZERO_STRIDES[len(shape)])
            return _wrap_numpy(view, grad.dtype)
        if data.ndim != len(shape):  # leading dims (expand's rule): as size-1 dims
            data = data.reshape((1,) * (len(shape) - data.ndim) + data.shape)
        return Tensor._wrap_numpy(_broadcast_view(data, shape), grad.dtype)
    result: Tensor = grad.expand(sizes)
    return result


def div_tensor_self_backward(
    grad: Tensor, other: Any, self_st: Any, rounding_mode: str | None = None
) -> Tensor:
    if rounding_mode is not None:
        return _zeros_like(grad)
    return handle_r_to_c(self_st, grad / conj(other))


def div_tensor_other_backward(
    grad: Tensor, self: Tensor, other: Tensor, rounding_mode: str | None = None
) -> Tensor:
    if rounding_mode is not None:
        return _zeros_like(grad)
    return handle_r_to_c(other.dtype, -grad * conj((self / other) / other))


def mm_mat1_backward(
    grad: Tensor, mat2: Tensor, sizes: Any, strides: Any, layout: Any, alpha: Any
) -> Tensor:
    if alpha == 1 and grad.dtype == mat2.dtype and numpy_ok(grad, mat2):
        return _wrap(np.matmul(grad._data, conj_array(mat2._data).T), grad)
    return maybe_multiply(grad.mm(conj(mat2.t())), conj(alpha))


def mm_mat2_backward(
    grad: Tensor, mat1: Tensor, sizes: Any, strides: Any, layout: Any, alpha: Any
) -> Tensor:
    if alpha == 1 and grad.dtype == mat1.dtype and numpy_ok(grad, mat1):
        return _wrap(np.matmul(conj_array(mat1._data).T, grad._data), grad)
    return maybe_multiply(conj(mat1.t()).mm(grad), conj(alpha))


def conj_array(a: Any) -> Any:
    """``a``'s conjugate if it is a complex NumPy array, else ``a`` (for the fast paths)."""
    return a.conj() if a.dtype.kind == "c" else a


_add_reduce = np.add.reduce


def _dims(dims: Any, ndim: int) -> list[int]:
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(ndim))
    if isinstance(dims, int):
        dims = [dims]
    return sorted(d % ndim if ndim else 0 for d in dims)


def sum_backward(grad: Tensor, sizes: Any, dims: Any, keepdim: bool) -> Tensor:
    """Expand a reduced gradient back to ``sizes``."""
    sizes = list(sizes)
    if numpy_ok(grad):
        kept = list(grad._shape)
        if not keepdim and len(sizes) > 0:
            for d in _dims(dims, len(sizes)):
                kept.insert(d, 1)
        data = grad._data
        data = data.reshape(kept) if keepdim or not sizes else _unsqueezed(data, kept, dims)
        shape = tuple(sizes)
        # np.broadcast_to zeroes size-1 dims' strides; torch's expand to the same shape keeps them
        view = data if data.shape == shape else _broadcast_view(data, shape)
        return Tensor._wrap_numpy(view, grad.dtype)
    if not keepdim and len(sizes) > 0:
        for d in _dims(dims, len(sizes)):
            grad = grad.unsqueeze(d)
    return grad.expand(sizes)


def _unsqueezed(data: Any, kept: list[int], dims: Any) -> Any:
    """``data`` reshaped to ``kept`` with the strides torch's ``unsqueeze`` gives the inserted
    size-1 dims (the stride of the dim it precedes times its size; the item size at the end),
    which survive the expand as the gradient's strides (a hook sees them)."""
    r = data.reshape(kept)
    strides = list(data.strides)
    shape = list(data.shape)
    for d in _dims(dims, len(kept)):
        strides.insert(d, shape[d] * strides[d] if d < len(shape) else data.itemsize)
        shape.insert(d, 1)
    if tuple(strides) == r.strides:
        return r
    return np.lib.stride_tricks.as_strided(r, kept, strides)


def mean_backward(grad: Tensor, sizes: Any, dims: Any, numel: int, keepdim: bool) -> Tensor:
    sizes = list(sizes)
    n = numel
    if sizes and dims is not None and not (isinstance(dims, (list, tuple)) and len(dims) == 0):
        n = 1
        for d in _dims(dims, len(sizes)):
            n *= sizes[d]
    return sum_backward(grad, sizes, dims, keepdim) / n


def sum_to(grad: Tensor, sizes: Any) -> Tensor:
    """Sum ``grad`` down to ``sizes`` (the inverse of broadcasting)."""
    sizes = tuple(sizes)
    shape = tuple(grad._shape)
    if shape == sizes:
        return grad
    lead = len(shape) - len(sizes)
    dims = list(range(lead))
    dims += [lead + i for i, s in enumerate(sizes) if s == 1 and shape[lead + i] != 1]
    if numpy_ok(grad):
        # the ufunc's reduce: what ndarray.sum calls, without its Python wrapper
        data = _add_reduce(grad._data, axis=tuple(dims), keepdims=True) if dims else grad._data
        return _wrap(data.reshape(sizes), grad)
    if dims:
        grad = _sum_dim(grad, dims, True)
    if lead:
        grad = grad.view(list(sizes))
    return grad


def select_backward(grad: Tensor, sizes: Any, dim: int, index: int) -> Tensor:
    out = _zeros(list(sizes), dtype=grad.dtype, device=grad.device)
    _copy_(_select(out, dim, index), grad)
    return out


def slice_backward_wrapper(
    grad: Tensor, sizes: Any, dim: int, start: Any, end: Any, step: int
) -> Tensor:
    out = _zeros(list(sizes), dtype=grad.dtype, device=grad.device)
    _copy_(_slice(out, dim, start, end, step), grad)
    return out


def unsqueeze_to(grad: Tensor, dim: Any, sizes: Any = None) -> Tensor:
    """``grad`` with the dims squeezed away restored: all size-1 dims of ``sizes``, or
    those of ``dim`` (an int or a list) that had size 1."""
    if sizes is None:  # unsqueeze_to(grad, sizes): every size-1 dim
        return grad.reshape(list(dim))
    sizes = list(sizes)
    if not sizes:
        return grad
    dims = [dim] if isinstance(dim, int) else list(dim)
    for d in sorted(x % len(sizes) for x in dims):
        if sizes[d] == 1:
            grad = grad.unsqueeze(d)
    return grad


def sgn(t: Tensor) -> Tensor:
    """The sign of ``t``: for real dtypes a constant (its derivative is zero almost
    everywhere); for complex ``t / |t|`` (0 at 0), differentiable.

    >>> import tensordispatch as td
    >>> sgn(td.tensor([3 + 4j, 0j]))
    tensor([0.6000+0.8000j, 0.0000+0.0000j])
    """
    if not t.dtype.is_complex:  # a negative view's array holds the unresolved values
        return Tensor._wrap_numpy(np.sign(resolved_values(t._data, t._key_set)), t.dtype)
    if numpy_ok(t):
        a = np.abs(t._data)
        return Tensor._wrap_numpy(t._data / np.where(a == 0, 1, a), t.dtype)
    a = _abs(t)
    return t / _where(a == 0, _zeros_like(a) + 1, a)


def ger(a: Tensor, b: Tensor) -> Tensor:
    return a.unsqueeze(1) * b.unsqueeze(0)


def zeros_like(t: Tensor) -> Tensor:
    return _zeros_like(t)


def not_implemented(name: str) -> Tensor:
    """torch's stand-in formula for a derivative nobody wrote yet: fails at backward with
    NotImplementedError (torch's TORCH_CHECK_NOT_IMPLEMENTED; a RuntimeError subclass)."""
    raise NotImplementedError(f"the derivative for '{name}' is not implemented.")


def log1p_backward(grad: Tensor, self: Tensor) -> Tensor:
    return grad / conj(self + 1)


def permute_backwards(grad: Tensor, dims: Any) -> Tensor:
    n = len(dims)
    inverse = [0] * n
    for i, d in enumerate(dims):
        inverse[d % n] = i
    result: Tensor = _permute(grad, inverse)
    return result


def pow_backward(grad: Tensor, self: Tensor, exponent: Any) -> Tensor:
    if exponent == 0:
        return _zeros_like(grad)
    return handle_r_to_c(self.dtype, grad * conj(exponent * _pow(self, exponent - 1)))


def sigmoid_backward(grad: Tensor, result: Tensor) -> Tensor:
    return grad * conj((1 - result) * result)


def tanh_backward(grad: Tensor, result: Tensor) -> Tensor:
    return grad * conj(1 - result * result)


def where(condition: Tensor, a: Any, b: Any) -> Tensor:
    """``where`` with a literal 0 branch (torch's formulas pass the number 0)."""
    like = a if isinstance(a, Tensor) else b
    a = _zeros_like(like) if not isinstance(a, Tensor) else a
    b = _zeros_like(like) if not isinstance(b, Tensor) else b
    result: Tensor = _where(condition, a, b)
    return result


def threshold_backward(grad: Tensor, self: Tensor, threshold: Any) -> Tensor:
    if grad.dtype == self.dtype and numpy_ok(grad, self):
        return _wrap(np.where(self._data <= threshold, 0, grad._data), grad)
    return where(self <= threshold, 0, grad)


def _log_softmax_backward_data(grad: Tensor, output: Tensor, dim: int, dtype: Any) -> Tensor:
    if grad.dtype == output.dtype and numpy_ok(grad, output):
        g = grad._data
        return _wrap(g - np.exp(output._data) * _add_reduce(g, axis=dim, keepdims=True), grad)
    return grad - output.exp() * _sum_dim(grad, [dim], True)


def _softmax_backward_data(grad: Tensor, output: Tensor, dim: int, dtype: Any) -> Tensor:
    return output * (grad - _sum_dim(grad * output, [dim], True))


def _helpers(namespace: dict[str, Any]) -> dict[str, Any]:
    return {
        name: fn
        for name, fn in namespace.items()
        if (
            name in ("M_PI", "M_LN2")
            or (getattr(fn, "__module__", None) or "").startswith("tensordispatch.autograd")
        )
        and (not name.startswith("_") or name.endswith(("_backward_data", "_to_copy_backward")))
        and name
        not in {
            "compile_formula",
            "saved_names",
            "translate",
            "op",
            "Tensor",
            "Options",
            "numpy_ok",
            "local_state",
            "register_helpers",
        }
        and not isinstance(fn, type)
    }


HELPERS: dict[str, Any] = _helpers(globals())


def register_helpers(namespace: dict[str, Any]) -> None:
    """Add a helper module's functions to HELPERS; functions_manual and functions_nn call it
    on their last line, so HELPERS is complete whichever of the three is imported first."""
    HELPERS.update(_helpers(namespace))


# functions_manual, functions_more and functions_nn import this module: they come last (each registers its
# helpers when it finishes; when one of them is being imported, that import finishes it)
from tensordispatch.autograd import functions_manual, functions_more, functions_nn  # noqa: F401
