"""The operator library's data (native_functions.yaml) and the ``ops.<ns>`` namespaces.

``tensordispatch.ops.<ns>.<op>.<overload>`` is an OpOverload and ``ops.<ns>.<op>`` an
OpOverloadPacket, as in torch.ops; any attribute that is not a module of this package
names a namespace (resolved through module ``__getattr__``, so data files and submodules
stay ordinary attributes). Except: ``ops.cpu``, ``ops.meta``, ``ops.compositeexplicitautograd``,
``ops.compositeexplicitautogradnonfunctional``, ``ops.compositeimplicitautograd`` and the
names external backends register are per-dispatch-key direct entry points (torch's
``at::cpu::``; see ops/direct.py), not operator namespaces.

>>> from tensordispatch.library import Library
>>> import tensordispatch.ops as ops
>>> lib = Library("doc_ops", "DEF"); _ = lib.define("f(Tensor x) -> Tensor")
>>> ops.doc_ops.f.default
<OpOverload(op='doc_ops.f', overload='default')>
>>> lib._destroy()
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tensordispatch.dispatch.op_overload import OpNamespace, ops_namespace

if TYPE_CHECKING:
    from tensordispatch.ops.direct import DirectNamespace

# Attribute names tools probe modules for (pytest's plugin and fixture hooks, dunders):
# never operator namespaces.
_NOT_NAMESPACES = ("_", "pytest", "setup", "teardown", "setUp", "tearDown")


def __getattr__(name: str) -> OpNamespace | DirectNamespace:
    if name.startswith(_NOT_NAMESPACES):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # the direct namespaces' module is imported on first use (import time, issue 4)
    from tensordispatch.ops.direct import DIRECT_KEYS, direct_namespace, is_direct

    if is_direct(name):
        ns = direct_namespace(name)
        if name in DIRECT_KEYS:  # generated, permanent: later lookups skip __getattr__
            globals()[name] = ns
        return ns
    return ops_namespace(name)
