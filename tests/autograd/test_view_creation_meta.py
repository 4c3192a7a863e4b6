"""Views torch forbids writing in place (CreationMeta), against torch 2.13 (views.py, Note
[View creation meta]): made in no_grad mode, by multi-view ops, by custom Functions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensordispatch as td

NO_GRAD = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the no_grad block "
    "(if you don't want the inplace to be tracked) or both outside (if you want the inplace "
    "to be tracked)."
)
MULTI = (
    "This view is the output of a function that returns multiple views. Such functions do "
    "not allow the output views to be modified inplace. You should replace the inplace "
    "operation by an out-of-place one."
)
CUSTOM = (
    "This view was created inside a custom Function (or because an input was returned as-is) "
    "and the autograd logic to handle view+inplace would override the custom backward "
    "associated with the custom Function, leading to incorrect gradients. This behavior is "
    "forbidden. You can fix this by cloning the output of the custom Function."
)


def _outcome(fn: Callable[[Any], Any], lib: Any) -> tuple[str, Any]:
    try:
        return ("ok", fn(lib))
    except RuntimeError as e:
        return ("error", str(e).replace("tensordispatch", "torch"))


def _both(fn: Callable[[Any], Any]) -> tuple[str, Any]:
    """Run ``fn`` with torch and with tensordispatch; the outcomes must be equal."""
    ours, theirs = _outcome(fn, td), _outcome(fn, torch)
    assert ours == theirs
    return ours


def _nonleaf(lib: Any) -> Any:
    return lib.ones(4, requires_grad=True).clone()


def _grad_fn_name(t: Any) -> str | None:
    return None if t.grad_fn is None else type(t.grad_fn).__name__


# --- made in no_grad mode -----------------------------------------------------------------


def test_view_made_in_no_grad_reports_the_roots_requires_grad() -> None:
    def f(lib: Any) -> Any:
        b = _nonleaf(lib)
        with lib.no_grad():
            v = b.narrow(0, 0, 2)
            w = lib.ones(4).narrow(0, 0, 2)
        return v.requires_grad, v.grad_fn is None, v.is_leaf, w.requires_grad

    assert _both(f) == ("ok", (True, True, True, False))


@pytest.mark.parametrize("leaf_root", [True, False])
def test_view_made_in_no_grad_accumulates_no_gradient(leaf_root: bool) -> None:
    def f(lib: Any) -> Any:
        a = lib.ones(4, requires_grad=True)
        b = a if leaf_root else a.clone()
        with lib.no_grad():
            v = b.narrow(0, 0, 2)
        (v * 2).sum().backward()
        return v.grad, a.grad

    assert _both(f) == ("ok", (None, None))


def test_view_made_in_no_grad_written_in_place_with_grad_on() -> None:
    def f(lib: Any) -> Any:
        b = _nonleaf(lib)
        with lib.no_grad():
            v = b.narrow(0, 0, 2)
        v.mul_(2)

    assert _both(f) == ("error", NO_GRAD)


def test_view_of_a_leaf_made_in_no_grad_written_in_place() -> None:
    def f(lib: Any) -> Any:
        b = lib.ones(4, requires_grad=True)
        with lib.no_grad():
            v = b.unsqueeze(0)
        v.mul_(2)

    assert _both(f) == ("error", NO_GRAD)


def test_base_without_grad_and_an_operand_requiring_grad() -> None:
    def f(lib: Any) -> Any:
        b = lib.ones(4)
        with lib.no_grad():
            v = b.narrow(0, 1, 2)
        v.mul_(lib.ones(2, requires_grad=True))

    assert _both(f) == ("error", NO_GRAD)


def test_base_without_grad_and_no_operand_requiring_grad_is_allowed() -> None:
    def f(lib: Any) -> Any:
        b = lib.ones(4)
        with lib.no_grad():
            v = b.narrow(0, 1, 2)
        v.mul_(2)
        return b.tolist(), v.requires_grad, b.grad_fn

    assert _both(f) == ("ok", ([1.0, 2.0, 2.0, 1.0], False, None))


def test_view_and_write_both_in_no_grad_are_allowed() -> None:
    def f(lib: Any) -> Any:
        b = _nonleaf(lib)
        with lib.no_grad():
            v = b.narrow(0, 0, 2)
            v.mul_(3)
        return b.tolist(), _grad_fn_name(b)

    assert _both(f) == ("ok", ([3.0, 3.0, 1.0, 1.0], "CloneBackward0"))


def test_a_detached_view_may_be_written() -> None:
    def f(lib: Any) -> Any:
        b = _nonleaf(lib)
        with lib.no_grad():
            v = b.narrow(0, 0, 2)
        v.detach().mul_(2)
        return b.tolist()

    assert _both(f) == ("ok", [2.0, 2.0, 1.0, 1.0])


def test_no_grad_view_of_a_recorded_view() -> None:
    def f(lib: Any) -> Any:
        b = _nonleaf(lib)
        v = b.narrow(0, 0, 3)
        with lib.no_grad():
            w = v.narrow(0, 0, 2)
        w.add_(1)

    assert _both(f) == ("error", NO_GRAD)


def test_recorded_view_of_a_no_grad_view_inherits_it() -> None:
    def f(lib: Any) -> Any:
        b = _nonleaf(lib)
        with lib.no_grad():
            v = b.narrow(0, 0, 3)
        w = v.narrow(0, 0, 2)
        assert _grad_fn_name(w) is not None
        w.add_(1)

    expected = (
        "Output 0 of Slice is a view of a view which was created in no_grad mode and is being "
        "modified inplace with grad mode enabled. " + NO_GRAD.split("enabled. ", 1)[1]
    )
    assert _both(f) == ("error", expected)


def test_set_grad_enabled_false_marks_like_no_grad() -> None:
    def f(lib: Any) -> Any:
        b = _nonleaf(lib)
        with lib.set_grad_enabled(False):
            v = b.t() if b.dim() == 2 else b.view(2, 2)
        v.mul_(2)

    assert _both(f) == ("error", NO_GRAD)


def test_getitem_view_made_in_no_grad() -> None:
    def f(lib: Any) -> Any:
        b = lib.ones(4)
        with lib.no_grad():
            v = b[:2]
        v.mul_(lib.ones(2, requires_grad=True))

    assert _both(f) == ("error", NO_GRAD)


# --- several views from one op ------------------------------------------------------------


@pytest.mark.parametrize("how", ["unbind", "split", "chunk"])
def test_recorded_multi_output_view_written_in_place(how: str) -> None:
    def f(lib: Any) -> Any:
        b = _nonleaf(lib)
        outs = b.unbind() if how == "unbind" else getattr(b, how)(2)
        outs[1].mul_(2)

    name = "Unbind" if how == "unbind" else "Split"
    expected = f"Output 1 of {name} is a view and is being modified inplace. {MULTI}"
    assert _both(f) == ("error", expected)


def test_unrecorded_multi_output_view_and_an_operand_requiring_grad() -> None:
    def f(lib: Any) -> Any:
        a = lib.ones(4).unbind()[0]
        a.mul_(lib.tensor(2.0, requires_grad=True))

    expected = (
        "A view was created in no_grad mode and is being modified inplace with grad mode "
        f"enabled. {MULTI}"
    )
    assert _both(f) == ("error", expected)


def test_multi_output_view_made_in_no_grad() -> None:
    def f(lib: Any) -> Any:
        b = _nonleaf(lib)
        with lib.no_grad():
            a = b.split(2)[0]
        return a.requires_grad, _outcome(lambda _: a.mul_(2), lib)

    assert _both(f) == ("ok", (True, ("error", NO_GRAD)))


def test_multi_output_view_after_a_write_to_its_base() -> None:
    def f(lib: Any) -> Any:
        b = _nonleaf(lib)
        a = b.unbind()[0]
        b.mul_(2)
        return a.grad_fn

    expected = (
        "Output 0 of Unbind is a view and its base or another view of its base has been "
        f"modified inplace. {MULTI}"
    )
    assert _both(f) == ("error", expected)


# --- custom Function outputs --------------------------------------------------------------


def _functions(lib: Any) -> tuple[Any, Any]:
    class Head(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x.narrow(0, 0, 2)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return lib.cat([g, g.new_zeros(2)])

    class Same(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g

    return Head, Same


def test_custom_function_view_output_written_in_place() -> None:
    def f(lib: Any) -> Any:
        head, _ = _functions(lib)
        v = head.apply(_nonleaf(lib))
        v.mul_(2)

    expected = f"Output 0 of Head is a view and is being modified inplace. {CUSTOM}"
    assert _both(f) == ("error", expected)


def test_custom_function_input_returned_as_is() -> None:
    def f(lib: Any) -> Any:
        _, same = _functions(lib)
        b = _nonleaf(lib)
        h = same.apply(b)
        return h is b, h._base is b, _outcome(lambda _: h.mul_(2), lib)

    expected = f"Output 0 of Same is a view and is being modified inplace. {CUSTOM}"
    assert _both(f) == ("ok", (False, True, ("error", expected)))


def test_custom_function_view_made_in_no_grad() -> None:
    def f(lib: Any) -> Any:
        head, _ = _functions(lib)
        b = _nonleaf(lib)
        with lib.no_grad():
            v = head.apply(b)
        v.mul_(2)

    expected = (
        "A view was created in no_grad mode and is being modified inplace with grad mode "
        f"enabled. {CUSTOM}"
    )
    assert _both(f) == ("error", expected)


def test_custom_function_view_after_a_write_to_its_base() -> None:
    def f(lib: Any) -> Any:
        head, _ = _functions(lib)
        b = _nonleaf(lib)
        v = head.apply(b)
        b.mul_(2)
        return v.grad_fn

    expected = (
        "Output 0 of Head is a view and its base or another view of its base has been "
        f"modified inplace. {CUSTOM}"
    )
    assert _both(f) == ("error", expected)


# --- views of leaves ----------------------------------------------------------------------


def test_view_of_a_leaf_requiring_grad_written_in_place() -> None:
    def f(lib: Any) -> Any:
        v = lib.ones(4, requires_grad=True).narrow(0, 0, 2)
        v.mul_(2)

    expected = (
        "a view of a leaf Variable that requires grad is being used in an in-place operation."
    )
    assert _both(f) == ("error", expected)


def test_recorded_view_written_in_place_still_rebases() -> None:
    def f(lib: Any) -> Any:
        a = lib.ones(4, requires_grad=True)
        b = a.clone()
        b.narrow(0, 0, 2).mul_(3)
        b.sum().backward()
        return _grad_fn_name(b), a.grad.tolist()

    assert _both(f) == ("ok", ("CopySlices", [3.0, 3.0, 1.0, 1.0]))


# --- detached views -------------------------------------------------------------------------


def test_detached_view_written_in_place_gets_its_own_history() -> None:
    def f(lib: Any) -> Any:
        a = lib.ones(4, requires_grad=True)
        b = a.clone()
        w = lib.full((2,), 3.0, requires_grad=True)
        d = b.narrow(0, 0, 2).detach()
        d.mul_(w)
        d.sum().backward()
        return _grad_fn_name(d), _grad_fn_name(b), w.grad.tolist(), a.grad, b.tolist()

    assert _both(f) == (
        "ok",
        ("MulBackward0", "CloneBackward0", [1.0, 1.0], None, [3.0, 3.0, 1.0, 1.0]),
    )


def test_detached_view_of_a_leaf_may_be_written() -> None:
    def f(lib: Any) -> Any:
        a = lib.ones(4, requires_grad=True)
        a.narrow(0, 1, 2).detach().mul_(lib.ones(2, requires_grad=True))
        return a.tolist(), a.grad_fn

    assert _both(f) == ("ok", ([1.0, 1.0, 1.0, 1.0], None))


def test_detached_view_made_a_leaf_requiring_grad() -> None:
    def f(lib: Any) -> Any:
        d = lib.ones(4).narrow(0, 1, 2).detach().requires_grad_()
        d.mul_(2)

    expected = "a leaf Variable that requires grad is being used in an in-place operation."
    assert _both(f) == ("error", expected)
