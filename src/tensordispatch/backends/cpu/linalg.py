"""CPU (NumPy/LAPACK) impls of the linear-algebra decompositions: ``_linalg_svd.U``.

NumPy's ``linalg.svd`` calls LAPACK's gesdd, as torch's CPU default does; singular values
agree to rounding, singular vectors may differ from torch's by a sign (a phase for complex)
where LAPACK builds differ.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensordispatch.backends.common import scalar_type_name
from tensordispatch.tensor.tensor import Tensor

__all__ = ["LINALG_CPU_KERNELS"]


def _linalg_svd_out(
    pre: Any, A: Tensor, full_matrices: bool, compute_uv: bool, driver: Any,
    U: Tensor, S: Tensor, Vh: Tensor,
) -> None:  # fmt: skip
    """Write A's SVD into the outputs the meta function laid out (batches of matrices)."""
    if A.dtype.itemsize < 4 and A.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"linalg_svd_cpu\" not implemented for '{scalar_type_name(A.dtype)}'"
        )
    data = A._data
    if data.size == 0:  # LAPACK refuses empty matrices: nothing to write but zeros in U/Vh
        if compute_uv:
            U._data[...] = 0
            Vh._data[...] = 0
            if full_matrices:  # identity completions, as torch's
                U._data[...] = np.eye(U._shape[-1], dtype=U._data.dtype)
                Vh._data[...] = np.eye(Vh._shape[-1], dtype=Vh._data.dtype)
        return
    if not compute_uv:
        np.copyto(S._data, np.linalg.svd(data, compute_uv=False), casting="unsafe")
        return
    u, s, vh = np.linalg.svd(data, full_matrices=full_matrices)
    np.copyto(U._data, u, casting="unsafe")
    np.copyto(S._data, s, casting="unsafe")
    np.copyto(Vh._data, vh, casting="unsafe")


LINALG_CPU_KERNELS: dict[str, Any] = {"_linalg_svd_out": _linalg_svd_out}
