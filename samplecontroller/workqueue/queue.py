"""The basic work queue, like client-go's util/workqueue/queue.go.

Guarantees:
- an item is processed by at most one worker at a time;
- adding an item that is already waiting is a no-op (items are de-duplicated);
- adding an item that is being processed marks it dirty: it is queued again when ``done`` is called;
- ``get`` blocks until an item is available, and reports ``shutdown=True`` only once the queue is
  shutting down and has nothing left to hand out;
- ``shut_down_with_drain`` waits until every item handed out has been marked done.
Items must be hashable. Order is FIFO among waiting items.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Hashable
from typing import Generic, TypeVar

from samplecontroller.workqueue.metrics import MetricsProvider, QueueMetrics

T = TypeVar("T", bound=Hashable)

UNFINISHED_WORK_UPDATE_PERIOD = 0.5


class Queue(Generic[T]):
    """A de-duplicating FIFO of hashable items; safe for any number of threads."""

    def __init__(self, name: str = "", *, metrics_provider: MetricsProvider | None = None) -> None:
        self.name = name
        self._cond = threading.Condition(threading.Lock())
        self._queue: deque[T] = deque()
        self._dirty: set[T] = set()
        self._processing: set[T] = set()
        self._shutting_down = False
        self._drain = False
        self._metrics: QueueMetrics[T] = QueueMetrics(name, metrics_provider)
        if self._metrics.enabled:
            threading.Thread(target=self._update_unfinished_work_loop, name=f"workqueue-{name}-metrics",
                             daemon=True).start()

    def add(self, item: T) -> None:
        """Mark ``item`` as needing processing. A no-op after shutdown."""
        with self._cond:
            if self._shutting_down or item in self._dirty:
                return
            self._metrics.add(item)
            self._dirty.add(item)
            if item in self._processing:
                return
            self._queue.append(item)
            self._cond.notify()

    def __len__(self) -> int:
        with self._cond:
            return len(self._queue)

    def len(self) -> int:
        """Number of items waiting (not counting those being processed)."""
        return len(self)

    def get(self) -> tuple[T, bool]:
        """Block until an item is available; ``(item, False)``, or ``(None, True)`` on shutdown."""
        with self._cond:
            while not self._queue and not self._shutting_down:
                self._cond.wait()
            if not self._queue:
                return None, True  # type: ignore[return-value]
            item = self._queue.popleft()
            self._metrics.get(item)
            self._processing.add(item)
            self._dirty.discard(item)
            return item, False

    def done(self, item: T) -> None:
        """Mark ``item`` as processed; if it was added meanwhile it is queued again."""
        with self._cond:
            self._metrics.done(item)
            self._processing.discard(item)
            if item in self._dirty:
                self._queue.append(item)
                self._cond.notify()
            elif not self._processing:
                self._cond.notify_all()  # wakes a draining shut_down_with_drain

    def shut_down(self) -> None:
        """Stop accepting items; ``get`` hands out what is left, then reports shutdown."""
        with self._cond:
            self._drain = False
            self._shutting_down = True
            self._cond.notify_all()

    def shut_down_with_drain(self) -> None:
        """Like ``shut_down`` but block until every item handed out has been marked done."""
        with self._cond:
            self._drain = True
            self._shutting_down = True
            self._cond.notify_all()
            while self._processing and self._drain:
                self._cond.wait()

    def shutting_down(self) -> bool:
        with self._cond:
            return self._shutting_down

    def _update_unfinished_work_loop(self) -> None:
        while True:
            with self._cond:
                if self._shutting_down:
                    return
                self._metrics.update_unfinished_work()
            threading.Event().wait(UNFINISHED_WORK_UPDATE_PERIOD)
