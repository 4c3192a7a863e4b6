"""`tensordispatch tour`, the README's main job, runs and shows the live dispatch path."""

from __future__ import annotations

import subprocess
import sys


def test_tour_runs_and_shows_the_cpu_kernel_hop_and_the_result() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tensordispatch", "tour"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    text = out.stdout
    # The trace reaches the CPU kernel of add.Tensor with the key set torch's CPU kernel sees.
    assert "aten::add.Tensor DispatchKeySet(CPU) -> CPU:" in text
    # All three structured variants ran, on CPU and on meta.
    for op in ("aten::add_.Tensor", "aten::add.out", "DispatchKeySet(Meta) -> Meta"):
        assert op in text
    assert "returned the out tensor itself: True" in text
    # 1 + 10 * 1 = 11 ... : the printed result is the real computation.
    assert "tensor([[11., 12.],\n        [13., 14.]])" in text


def test_tour_shows_the_functionalized_program() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tensordispatch", "tour"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    text = out.stdout
    # The mutation of a view became a select_scatter; the input is written back at the end.
    assert "select_scatter = tensordispatch.ops.aten.select_scatter.default(" in text
    assert "copy_ = tensordispatch.ops.aten.copy_.default(x_1, view_copy_2)" in text
    assert "tensor([ 1., 11.,  3.,  4.])   (x is now [0.0, 10.0, 2.0, 3.0]: written back)" in text


def test_func_functionalize_show_prints_both_modes() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tensordispatch", "func", "functionalize", "--show"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert "remove='mutations')" in out.stdout and "remove='mutations_and_views')" in out.stdout
    assert "    view = tensordispatch.ops.aten.view.default(x_1, [2, 2])" in out.stdout
