"""The basic work queue, like client-go's util/workqueue/queue.go.

Guarantees:
- an item is processed by at most one worker at a time (between ``get`` and ``done``);
- adding an item that is already waiting is a no-op (items are de-duplicated);
- adding an item that is being processed marks it dirty: it is queued again at ``done``;
- ``get`` blocks until an item is available (``get_or_notify`` never blocks), and reports ``shutdown=True`` only once the queue is
  shutting down and has nothing left to hand out (items already queued are still handed out);
- ``add`` after shutdown is ignored;
- ``shut_down_with_drain`` blocks until every item handed out has been marked done (or a plain
  ``shut_down`` cancels the drain);
- ``shut_down_in_flight(timeout)`` drops the waiting items (``get`` reports shutdown at once) and
  blocks until the items handed out are done or ``timeout`` seconds have passed.
Items must be hashable. Order is FIFO among waiting items. Not guaranteed: fairness between
workers, or that an item added while in processing runs on the same worker.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Hashable, Iterable
from typing import Generic, Literal, Protocol, TypeAlias, TypeVar

from samplecontroller.wait.clock import REAL_CLOCK, Clock
from samplecontroller.workqueue.metrics import MetricsProvider, QueueMetrics, new_queue_metrics

T = TypeVar("T", bound=Hashable)

__all__ = ["Got", "Interface", "Queue", "shut_down_workers"]

Got: TypeAlias = tuple[T, Literal[False]] | tuple[None, Literal[True]]
"""What ``get`` returns: ``(item, False)``, or ``(None, True)`` once the queue has shut down."""


class Interface(Protocol[T]):
    """What every work queue offers (client-go's workqueue.Interface)."""

    def add(self, item: T) -> None:
        """Queue ``item`` (no-op if it is waiting; re-queued at ``done`` if it is being processed)."""

    def len(self) -> int:
        """How many items wait (not those being processed)."""

    def __len__(self) -> int: ...
    def get(self) -> Got[T]:
        """Block for the next item: ``(item, False)``, or ``(None, True)`` once shut down and empty."""

    def done(self, item: T) -> None:
        """The worker has finished ``item``; re-queue it if it was added meanwhile."""

    def shut_down(self) -> None:
        """Stop accepting items; ``get`` hands out what is queued, then reports shutdown."""

    def shut_down_with_drain(self) -> None:
        """``shut_down``, then block until every item handed out is done."""

    def shutting_down(self) -> bool:
        """True once a shutdown has begun."""


class Queue(Generic[T]):
    """A de-duplicating FIFO of hashable items; safe for any number of threads.

    ``name`` enables metrics (through ``metrics_provider`` or the global provider); ``clock``
    times them.
    """

    def __init__(self, name: str = "", metrics_provider: MetricsProvider | None = None, *,
                 clock: Clock = REAL_CLOCK) -> None:
        self.name = name
        self._clock = clock
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)  # getters wait here
        self._drained = threading.Condition(self._lock)  # shut_down_with_drain waits here
        self._queue: deque[T] = deque()
        self._dirty: set[T] = set()
        self._processing: set[T] = set()
        self._waiting = 0  # getters blocked in _cond.wait (skip notify when none)
        self._on_ready: Callable[[], None] | None = None  # get_or_notify's one-shot callback
        self._shutting_down = False
        self._drain = False
        self._metrics: QueueMetrics[T] | None = new_queue_metrics(name, metrics_provider, self._lock, clock)

    def add(self, item: T) -> None:
        """Mark ``item`` as needing processing. A no-op after shutdown or when already waiting."""
        with self._lock:
            if self._shutting_down or item in self._dirty:
                return
            self._dirty.add(item)
            if self._metrics is not None:
                self._metrics.add(item)
            if item in self._processing:
                return
            self._queue.append(item)
            if self._waiting:
                self._cond.notify()
            self._ready()

    def _ready(self) -> None:
        """Call (once) the callback ``get_or_notify`` left. The caller holds ``self._lock``."""
        callback = self._on_ready
        if callback is not None:
            self._on_ready = None
            callback()

    def __len__(self) -> int:
        return len(self._queue)  # a deque's len is atomic

    def len(self) -> int:
        """Number of items waiting (not counting those being processed)."""
        return len(self._queue)

    def get(self) -> Got[T]:
        """Block until an item is available: ``(item, False)``, or ``(None, True)`` on shutdown.

        The caller must call ``done(item)`` when finished with it. Test the flag on the tuple
        itself so the type checker knows the item is there (unpacking loses that)::

            got = queue.get()
            if got[1]:
                return  # shut down
            item = got[0]
        """
        with self._lock:
            queue = self._queue
            if not queue:
                while not queue and not self._shutting_down:
                    self._waiting += 1
                    try:
                        self._cond.wait()
                    finally:
                        self._waiting -= 1
                if not queue:
                    return None, True
            return self._take()

    def get_or_notify(self, callback: Callable[[], None]) -> Got[T] | None:
        """``get`` without blocking, for an event loop: the item (or the shutdown) at once, else
        None after leaving ``callback`` to be called once, when an item becomes available or the
        queue shuts down (then call again). ``callback`` runs in the thread that adds the item,
        with the queue's lock held: it must only hand over (``loop.call_soon_threadsafe``). A
        later call replaces a callback not yet called. See ``runtime.controller.aio.AsyncGetter``."""
        with self._lock:
            queue = self._queue
            if queue:
                self._on_ready = None
                return self._take()
            if self._shutting_down:
                return None, True
            self._on_ready = callback
            return None

    def _take(self) -> tuple[T, Literal[False]]:
        """Hand out the first waiting item. The caller holds ``self._lock``; the queue is not empty."""
        item = self._queue.popleft()
        if self._metrics is not None:
            self._metrics.get(item)
        self._processing.add(item)
        self._dirty.discard(item)
        return item, False

    def done(self, item: T) -> None:
        """Mark ``item`` as processed; if it was added meanwhile it is queued again."""
        with self._lock:
            if self._metrics is not None:
                self._metrics.done(item)
            processing = self._processing
            processing.discard(item)
            if item in self._dirty:
                self._queue.append(item)
                if self._waiting:
                    self._cond.notify()
                self._ready()
            if self._drain and not processing:
                self._drained.notify_all()

    def shut_down(self) -> None:
        """Stop accepting items; ``get`` hands out what is left, then reports shutdown.

        Also ends a ``shut_down_with_drain`` that is still waiting.
        """
        with self._lock:
            self._begin_shutdown(drain=False)
            self._drained.notify_all()

    def shut_down_with_drain(self) -> None:
        """Like ``shut_down`` but block until every item handed out has been marked done.

        Items still waiting are handed out to workers that keep calling ``get``; callers must
        keep their workers running (and calling ``done``) or this never returns.
        """
        with self._lock:
            self._begin_shutdown(drain=True)
            while self._processing and self._drain:
                self._drained.wait()

    def shut_down_in_flight(self, timeout: float | None = None) -> bool:
        """Shut down for a bounded, prompt stop: accept nothing more, hand out nothing more (the
        waiting items are dropped, so ``get`` reports shutdown at once), and block until every
        item already handed out is marked done, or until ``timeout`` seconds (real time) passed.

        Returns True when every item in flight finished, False when the timeout came first.
        A plain ``shut_down`` meanwhile ends the wait too (returning whether all were done).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            if self._metrics is not None:
                for item in self._dirty:
                    self._metrics.drop(item)
            self._queue.clear()
            self._dirty.clear()
            self._begin_shutdown(drain=True)
            while self._processing and self._drain:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    break
                self._drained.wait(remaining)
            self._drain = False
            return not self._processing

    def _begin_shutdown(self, drain: bool) -> None:
        """Mark the queue shut down (``drain``: shutdown waits for items in flight), stop the
        metrics and wake every ``get``. The caller holds ``self._lock``."""
        self._drain = drain
        self._shutting_down = True
        if self._metrics is not None:
            self._metrics.stop()
        self._cond.notify_all()
        self._ready()

    def shutting_down(self) -> bool:
        return self._shutting_down


class _InFlightShutdown(Protocol):
    def shut_down_in_flight(self, timeout: float | None = None) -> bool: ...


def shut_down_workers(queue: _InFlightShutdown, workers: Iterable[threading.Thread], timeout: float) -> bool:
    """Stop a pool of workers of ``queue`` within ``timeout`` seconds in all (real time).

    The queue hands out nothing more (``shut_down_in_flight``); the items in progress may
    finish; then the workers are joined with what is left of the timeout. True when every
    item in flight finished and every worker returned in time.
    """
    deadline = time.monotonic() + timeout
    finished = queue.shut_down_in_flight(timeout)
    threads = list(workers)
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    return finished and not any(t.is_alive() for t in threads)
