"""A queue whose items can be added after a delay, like client-go's delaying_queue.go.

``add_after(item, seconds)``: seconds <= 0 adds at once; when the item is already waiting for
its time, the earlier of the two times wins. One timer thread waits on a heap of due times (no
polling); it exits when the queue shuts down.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Hashable
from typing import TypeVar

from samplecontroller.workqueue.metrics import MetricsProvider
from samplecontroller.workqueue.queue import Queue

T = TypeVar("T", bound=Hashable)


class DelayingQueue(Queue[T]):
    """A ``Queue`` with ``add_after``."""

    def __init__(self, name: str = "", *, metrics_provider: MetricsProvider | None = None,
                 clock: Clock | None = None) -> None:
        super().__init__(name, metrics_provider=metrics_provider)
        self._clock = clock or Clock()
        self._timer_cond = threading.Condition(threading.Lock())
        self._heap: list[tuple[float, int, T]] = []
        self._ready_at: dict[T, float] = {}
        self._seq = itertools.count()
        self._stopped = False
        self._thread = threading.Thread(target=self._waiting_loop, name=f"workqueue-{name or 'delaying'}-timer",
                                        daemon=True)
        self._thread.start()

    def add_after(self, item: T, seconds: float) -> None:
        """Add ``item`` once ``seconds`` have passed (at once when seconds <= 0)."""
        if self.shutting_down():
            return
        if seconds <= 0:
            self.add(item)
            return
        ready = self._clock.now() + seconds
        with self._timer_cond:
            previous = self._ready_at.get(item)
            if previous is not None and previous <= ready:
                return
            self._ready_at[item] = ready
            heapq.heappush(self._heap, (ready, next(self._seq), item))
            self._timer_cond.notify()

    def shut_down(self) -> None:
        super().shut_down()
        self._stop_timer()

    def shut_down_with_drain(self) -> None:
        self._stop_timer()
        super().shut_down_with_drain()

    def _stop_timer(self) -> None:
        with self._timer_cond:
            self._stopped = True
            self._timer_cond.notify_all()

    def _waiting_loop(self) -> None:
        while True:
            due: list[T] = []
            with self._timer_cond:
                if self._stopped:
                    return
                now = self._clock.now()
                while self._heap and self._heap[0][0] <= now:
                    ready, _, item = heapq.heappop(self._heap)
                    if self._ready_at.get(item) == ready:  # skip entries superseded by an earlier time
                        del self._ready_at[item]
                        due.append(item)
                if not due:
                    timeout = self._heap[0][0] - now if self._heap else None
                    self._timer_cond.wait(timeout)
                    continue
            for item in due:
                self.add(item)


class Clock:
    """Monotonic time; tests may substitute a fake with the same method."""

    def now(self) -> float:
        return time.monotonic()
