"""``tensordispatch.library``: torch.library's registration API (Library, impl, define).

>>> from tensordispatch.library import Library, fallthrough_kernel
>>> lib = Library("doc_toplib", "DEF")
>>> lib.define("f(Tensor x) -> Tensor")
'f'
>>> lib._destroy()
"""

from __future__ import annotations

from tensordispatch.dispatch.dispatcher import RegistrationHandle
from tensordispatch.dispatch.kernel import fallthrough_kernel
from tensordispatch.dispatch.library import Library, define, impl

__all__ = ["Library", "RegistrationHandle", "define", "fallthrough_kernel", "impl"]
