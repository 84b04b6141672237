"""A rate-limiting queue that hands out higher priorities first (controller-runtime's
pkg/controller/priorityqueue, 0.20+).

The same queue as ``RateLimitingQueue`` (de-duplication, one worker per item at a time, dirty
items re-queued at ``done``, ``add_after``, ``add_rate_limited``, the shutdown variants), with
an order: among the items ready, the highest priority first, and within one priority the
order in which they became ready (FIFO). ``add_with_opts(item, priority=, after=,
rate_limited=)`` adds with a priority (default 0); as in Go, adding an item that already waits
keeps the higher of the two priorities (raised, it goes to the end of its new priority) and
the earlier of the two ready times (an item ready stays ready). ``add``/``add_after``/
``add_rate_limited`` are ``add_with_opts`` with priority 0. ``priority_of(item)`` is the
priority an item in flight was handed out with (``GetWithPriority``'s second value), so the
controller requeues it at that priority.

The controller uses it with ``runtime.controller.Options.use_priority_queue`` (on by default,
as in controller-runtime 0.23+): the built-in event handlers add the objects of the informers'
initial list and of resyncs (an update whose resourceVersion did not change) at
``LOW_PRIORITY`` (-100), so a busy controller answers a user's change before it gets through
a restart's or a resync's backlog. Differences from Go: adds are applied under the lock at
once (Go buffers them on a goroutine), and the rate limiter is consulted even when ``after``
is given too (Go takes the smaller delay; so does this).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Hashable, Iterator
from typing import Literal, TypeVar

from samplecontroller.wait.clock import REAL_CLOCK, Clock
from samplecontroller.workqueue.delaying_queue import DelayingQueue
from samplecontroller.workqueue.metrics import MetricsProvider
from samplecontroller.workqueue.queue import Queue
from samplecontroller.workqueue.rate_limiters import ItemExponentialFailureRateLimiter, RateLimiter
from samplecontroller.workqueue.rate_limiting_queue import RateLimitingQueue

T = TypeVar("T", bound=Hashable)

__all__ = ["LOW_PRIORITY", "PriorityQueue"]

LOW_PRIORITY = -100
"""The priority of the initial list's and resyncs' events (controller-runtime's handler.LowPriority)."""


class _Ready:
    """The ready items ordered by (-priority, sequence): the ``deque`` interface ``Queue`` uses
    (``append``, ``popleft``, ``clear``, ``len``) over a heap with lazy deletion. ``append``
    takes the item's pending priority from ``priorities`` (0 when none)."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, T]] = []  # type: ignore[valid-type]
        self._entry: dict[Hashable, tuple[int, int]] = {}  # item -> its live (-priority, seq)
        self._seq = itertools.count()
        self.priorities: dict[Hashable, int] = {}  # priority of items waiting (ready or delayed)

    def append(self, item: Hashable) -> None:
        key = (-self.priorities.get(item, 0), next(self._seq))
        self._entry[item] = key
        heapq.heappush(self._heap, (key[0], key[1], item))

    def raise_priority(self, item: Hashable, priority: int) -> None:
        """Move a ready ``item`` to the end of the higher ``priority``."""
        if item in self._entry:
            self.priorities[item] = priority
            self.append(item)

    def popleft(self) -> Hashable:
        heap = self._heap
        entry = self._entry
        while True:
            neg, seq, item = heapq.heappop(heap)
            if entry.get(item) == (neg, seq):
                del entry[item]
                return item

    def clear(self) -> None:
        self._heap.clear()
        self._entry.clear()
        self.priorities.clear()

    def __len__(self) -> int:
        return len(self._entry)

    def __bool__(self) -> bool:
        return bool(self._entry)

    def __iter__(self) -> Iterator[Hashable]:
        return iter(sorted(self._entry, key=self._entry.__getitem__))


class PriorityQueue(RateLimitingQueue[T]):
    """See the module docstring. ``rate_limiter`` defaults to Go's for this queue: per-item
    exponential 5 ms .. 1000 s, without the overall token bucket."""

    def __init__(self, rate_limiter: RateLimiter[T] | None = None, name: str = "", *,
                 metrics_provider: MetricsProvider | None = None, clock: Clock = REAL_CLOCK) -> None:
        super().__init__(rate_limiter or ItemExponentialFailureRateLimiter(0.005, 1000.0), name,
                         metrics_provider=metrics_provider, clock=clock)
        self._ready_items = _Ready()
        self._queue = self._ready_items  # type: ignore[assignment]
        self._handed_out: dict[Hashable, int] = {}  # item in flight -> its priority

    def add_with_opts(self, item: T, *, priority: int = 0, after: float = 0.0, rate_limited: bool = False) -> None:
        """Add ``item`` at ``priority`` once ``after`` seconds (or the rate limiter's delay,
        the smaller of the two when both are given) have passed; see the module docstring."""
        if rate_limited:
            limited = self.rate_limiter.when(item)
            after = limited if after <= 0 else min(after, limited)
        with self._lock:
            if self._shutting_down:
                return
            ready = self._ready_items
            previous = ready.priorities.get(item)
            if previous is None or priority > previous:
                ready.priorities[item] = priority
                if previous is not None and item in self._dirty and item not in self._processing:
                    ready.raise_priority(item, priority)  # ready: to the end of its new priority
        if after > 0:
            DelayingQueue.add_after(self, item, after)
        else:
            Queue.add(self, item)

    def add(self, item: T) -> None:
        """Add ``item`` now at priority 0 (or the higher one it already waits with)."""
        self.add_with_opts(item)

    def add_after(self, item: T, seconds: float) -> None:
        """Add ``item`` after ``seconds`` at priority 0 (or the higher one it already waits with)."""
        self.add_with_opts(item, after=seconds)

    def add_rate_limited(self, item: T) -> None:
        """Add ``item`` after the limiter's delay for it (priority 0 unless higher already)."""
        self.add_with_opts(item, rate_limited=True)

    def _add_due(self, item: T) -> None:
        Queue.add(self, item)  # a delayed item keeps the priority it was added with

    def _take(self) -> tuple[T, Literal[False]]:
        got = super()._take()
        item = got[0]
        self._handed_out[item] = self._ready_items.priorities.pop(item, 0)
        return got

    def priority_of(self, item: T) -> int:
        """The priority ``item`` was handed out with (0 for an item not in flight)."""
        with self._lock:
            return self._handed_out.get(item, 0)

    def done(self, item: T) -> None:
        with self._lock:
            self._handed_out.pop(item, None)
        super().done(item)

    def waiting_priorities(self) -> list[tuple[Hashable, int]]:
        """The ready items in the order they will be handed out, with their priorities (for tests
        and debugging)."""
        with self._lock:
            ready = self._ready_items
            return [(item, ready.priorities.get(item, 0)) for item in ready]
