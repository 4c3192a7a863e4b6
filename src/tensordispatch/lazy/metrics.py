"""Counters of the lazy tensor layer, named and moved like torch._lazy.metrics (LTC).

Owns the process-wide counter table and its report. Counters are created on first use, so
``counter_names()`` lists only those touched since the last ``reset_metrics()``, and
``counter_value(name)`` is None for a counter never touched, as in torch.

Counters (spec 3.5): ``CreateLtcTensor`` / ``DestroyLtcTensor``, ``DeviceDataCacheMiss``,
``SyncedTensorsWithIR``, ``SyncTensorsToData``, ``UncachedCompile`` / ``CachedCompile``,
``MarkStep``, ``lazy::<kernel>`` (per traced operator call) and ``aten::<op>[.<overload>]``
(per eager-fallback call). Value metrics: ``TensorsGraphSize`` (nodes of each compiled graph).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable

__all__ = [
    "counter_names",
    "counter_value",
    "metric_names",
    "metric_values",
    "metrics_report",
    "reset",
    "reset_metrics",
]

# a defaultdict: the tracing hot path bumps counters with one `COUNTERS[name] += 1`
COUNTERS: defaultdict[str, int] = defaultdict(int)
_VALUES: dict[str, list[float]] = {}
_LOCK = threading.Lock()
#: Called before counters are read or reset: counters kept lazily elsewhere bring themselves
#: up to date (tensor.py counts DestroyLtcTensor when it purges freed values).
SETTLE: list[Callable[[], object]] = []


def _settle() -> None:
    for fn in SETTLE:
        fn()


def bump(name: str, n: int = 1) -> None:
    """Add ``n`` to counter ``name`` (created at 0 on first use)."""
    COUNTERS[name] += n


def record(name: str, value: float) -> None:
    """Add one sample to value metric ``name``."""
    with _LOCK:
        _VALUES.setdefault(name, []).append(value)


def counter_names() -> list[str]:
    """The counters touched since the last reset, in first-use order.

    >>> reset_metrics(); bump("MarkStep"); counter_names()
    ['MarkStep']
    """
    _settle()
    return [name for name, value in COUNTERS.items() if value]


def counter_value(name: str) -> int | None:
    """The value of counter ``name``, or None if it was not touched since the last reset.

    >>> reset_metrics(); counter_value("MarkStep") is None
    True
    """
    _settle()
    value = COUNTERS.get(name)
    return value if value else None


def metric_names() -> list[str]:
    """The value metrics recorded since the last reset (``TensorsGraphSize``, ...)."""
    return list(_VALUES)


def metric_values(name: str) -> list[float]:
    """The samples of value metric ``name`` (a copy; empty if none)."""
    with _LOCK:
        return list(_VALUES.get(name, []))


def reset_metrics() -> None:
    """Forget every counter and value metric (torch._lazy.metrics.reset)."""
    _settle()  # values freed before the reset are not counted after it
    with _LOCK:
        COUNTERS.clear()
        _VALUES.clear()


reset = reset_metrics


def metrics_report() -> str:
    """A text report: each value metric (samples, total, last), then each counter.

    >>> reset_metrics(); bump("MarkStep", 2); print(metrics_report())
    Counter: MarkStep
      Value: 2
    """
    lines: list[str] = []
    _settle()
    with _LOCK:
        values = {k: list(v) for k, v in _VALUES.items()}
    for name, samples in values.items():
        lines.append(f"Metric: {name}")
        lines.append(f"  TotalSamples: {len(samples)}")
        lines.append(f"  Accumulator: {sum(samples):g}")
        lines.append(f"  Last: {samples[-1]:g}")
    for name in counter_names():
        lines.append(f"Counter: {name}")
        lines.append(f"  Value: {COUNTERS[name]}")
    return "\n".join(lines)
