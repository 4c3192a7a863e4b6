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
