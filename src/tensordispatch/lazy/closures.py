"""Step closures (torch._lazy.add_step_closure / run_step_closures): functions queued to run
right after the next `mark_step`, when every live lazy tensor holds device data.

Owns the two queues (run in the calling thread, or on a background thread) and the
background runner. Must not trace or sync: `mark_step` calls `run_step_closures` after its
step, outside the executor's lock, so a closure may read tensors or trace freely.

Note [Step closures]
Reading a lazy tensor (``.cpu()``, printing) inside a training step syncs its graph on its
own; a closure queued with `add_step_closure` runs after the step instead, when the value is
already data, so reporting costs no extra graph run. As torch's:

* closures run in the order queued, each once: a step takes the whole queue first, so a
  closure that queues another defers it to the next step;
* an exception from a closure run in the calling thread propagates out of `mark_step`; the
  closures queued after it in the same step are dropped (torch drops them too);
* ``run_async=True`` closures go to one background thread, in order; the queue holds at most
  ``LTC_MAX_ASYNC_QUEUE`` (default 100) waiting closures, so a producer faster than the
  closures blocks; the thread ends after 3 s without work. An exception stops it, and the
  next async closure handed over raises ``RuntimeError`` from it ("Cannot run asynchronous
  closure due to previously raised exception").
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["add_step_closure", "run_step_closures"]

_LOCK = threading.Lock()
_STEP: list[Callable[[], Any]] = []
_ASYNC: list[Callable[[], Any]] = []
#: how long the background thread waits for work before it ends (torch's: 3 s)
IDLE_SECONDS = 3.0


def add_step_closure(
    closure: Callable[..., Any], args: Sequence[Any] = (), run_async: bool = False
) -> None:
    """Queue ``closure(*args)`` to run after the next `mark_step` (Note [Step closures]); the
    arguments (tensors, typically) are kept alive until then, so they are synced by it.

    >>> import tensordispatch as td, tensordispatch.lazy as lazy
    >>> handle = lazy.init()
    >>> y = td.ones(2).to("lazy") * 3.0
    >>> seen = []
    >>> lazy.add_step_closure(lambda t: seen.append(t.cpu().tolist()), args=(y,))
    >>> len(seen)
    0
    >>> lazy.mark_step(); seen
    [[3.0, 3.0]]
    >>> handle.remove()
    """
    if not callable(closure):
        raise TypeError(f"add_step_closure: closure must be callable, got {type(closure).__name__}")
    bound = tuple(args)

    def call() -> Any:
        return closure(*bound)

    with _LOCK:
        (_ASYNC if run_async else _STEP).append(call)


def run_step_closures() -> None:
    """Run the queued closures: the asynchronous ones are handed to the background thread
    first, then the others run here, in order (`mark_step` calls this after its step)."""
    with _LOCK:
        later, now = _ASYNC[:], _STEP[:]
        _ASYNC.clear()
        _STEP.clear()
    for call in later:
        _RUNNER.submit(call)
    for call in now:
        call()


class _AsyncRunner:
    """One background thread running handed-over closures in order (Note [Step closures])."""

    def __init__(self) -> None:
        self._queue: queue.Queue[Callable[[], Any]] = queue.Queue(
            int(os.environ.get("LTC_MAX_ASYNC_QUEUE", "100"))
        )
        self._errors: queue.Queue[BaseException] = queue.Queue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def submit(self, call: Callable[[], Any]) -> None:
        with self._lock:
            self._queue.put(call)
            if self._thread is None or not self._thread.is_alive():
                try:
                    error = self._errors.get_nowait()
                except queue.Empty:
                    self._thread = threading.Thread(
                        target=self._loop, name="lazy-step-closures", daemon=True
                    )
                    self._thread.start()
                else:
                    raise RuntimeError(
                        "Cannot run asynchronous closure due to previously raised exception"
                    ) from error

    def _loop(self) -> None:
        while True:
            try:
                call = self._queue.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with self._lock:  # `submit` holds it while putting: nothing is missed
                    if self._queue.empty():
                        return
                continue
            try:
                call()
            except BaseException as error:  # noqa: BLE001 - handed to the next submit
                self._errors.put(error)
                return
            finally:
                self._queue.task_done()

    def join(self) -> None:
        """Wait until the closures handed over have run, or the thread has stopped (tests)."""
        while self._queue.unfinished_tasks:
            thread = self._thread
            if thread is None or not thread.is_alive():
                return
            thread.join(0.01)


_RUNNER = _AsyncRunner()
