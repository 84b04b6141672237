"""A queue whose items can be added after a delay, like client-go's delaying_queue.go.

``add_after(item, seconds)``: seconds <= 0 adds at once; when the item is already waiting for
its time, the earlier of the two times wins (a later one is ignored). Each call counts as a
retry in the metrics (as in Go). One timer thread per queue, started at the first delayed add,
waits on a heap of due times through the queue's clock (no polling) and exits at shutdown;
items still waiting for their time at shutdown are dropped. Items that become due at the same
time are added in the order of their ``add_after`` calls.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Hashable
from typing import Protocol, TypeVar

from samplecontroller.wait.clock import REAL_CLOCK, Clock
from samplecontroller.workqueue.metrics import MetricsProvider
from samplecontroller.workqueue.queue import Interface, Queue

T = TypeVar("T", bound=Hashable)

__all__ = ["DelayingInterface", "DelayingQueue"]


class DelayingInterface(Interface[T], Protocol[T]):
    """A work queue that can add items later (client-go's DelayingInterface)."""

    def add_after(self, item: T, seconds: float) -> None:
        """Add ``item`` once ``duration`` seconds have passed (at once for 0 or less)."""


class DelayingQueue(Queue[T]):
    """A ``Queue`` with ``add_after``; see the module docstring."""

    def __init__(self, name: str = "", metrics_provider: MetricsProvider | None = None, *,
                 clock: Clock = REAL_CLOCK) -> None:
        super().__init__(name, metrics_provider=metrics_provider, clock=clock)
        self._timer_cond = threading.Condition(threading.Lock())
        self._heap: list[tuple[float, int, T]] = []
        self._ready_at: dict[T, tuple[float, int]] = {}  # the live heap entry of each waiting item
        self._seq = itertools.count()
        self._timer_stopped = False
        self._timer: threading.Thread | None = None

    def add_after(self, item: T, seconds: float) -> None:
        """Add ``item`` once ``seconds`` have passed (at once when seconds <= 0)."""
        if self._shutting_down:
            return
        metrics = self._metrics
        if metrics is not None:
            with self._lock:
                metrics.retry()
        if seconds <= 0:
            self.add(item)
            return
        with self._timer_cond:
            if self._timer_stopped:
                return
            ready = self._clock.now() + seconds
            previous = self._ready_at.get(item)
            if previous is not None and previous[0] <= ready:
                return
            seq = next(self._seq)
            self._ready_at[item] = (ready, seq)
            heapq.heappush(self._heap, (ready, seq, item))
            if self._timer is None:
                self._timer = threading.Thread(target=self._waiting_loop, daemon=True,
                                               name=f"workqueue-{self.name or 'delaying'}-timer")
                self._timer.start()
            elif self._heap[0][1] == seq:  # the new earliest: the timer must wait less
                self._timer_cond.notify()

    def next_ready_at(self) -> float | None:
        """The clock time the timer thread waits for next (None when nothing waits)."""
        with self._timer_cond:
            return self._heap[0][0] if self._heap else None

    def waiting_len(self) -> int:
        """Number of items waiting for their time (not yet in the queue)."""
        with self._timer_cond:
            return len(self._ready_at)

    def shut_down(self) -> None:
        super().shut_down()
        self._stop_timer()

    def shut_down_with_drain(self) -> None:
        self._stop_timer()
        super().shut_down_with_drain()

    def shut_down_in_flight(self, timeout: float | None = None) -> bool:
        self._stop_timer()
        return super().shut_down_in_flight(timeout)

    def _stop_timer(self) -> None:
        with self._timer_cond:
            self._timer_stopped = True
            self._heap.clear()
            self._ready_at.clear()
            self._timer_cond.notify_all()
        timer = self._timer
        if timer is not None and timer is not threading.current_thread():
            timer.join(1.0)

    def _waiting_loop(self) -> None:
        cond = self._timer_cond
        heap = self._heap
        ready_at = self._ready_at
        clock = self._clock
        while True:
            due: list[T] = []
            with cond:
                while not due:
                    if self._timer_stopped:
                        return
                    now = clock.now()
                    while heap and heap[0][0] <= now:
                        _, seq, item = heapq.heappop(heap)
                        entry = ready_at.get(item)
                        if entry is not None and entry[1] == seq:  # else superseded by an earlier time
                            del ready_at[item]
                            due.append(item)
                    if not due:
                        clock.wait(cond, heap[0][0] if heap else None)
            for item in due:
                self._add_due(item)

    def _add_due(self, item: T) -> None:
        """Add an item whose time has come (the timer thread); subclasses keep what they noted."""
        self.add(item)
