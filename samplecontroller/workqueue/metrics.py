"""Workqueue metrics, like client-go's util/workqueue/metrics.go.

A named queue reports depth, adds, queue latency, work duration, unfinished work seconds, the
longest running processor and retries through a ``MetricsProvider``. The default provider
discards everything (and then a queue skips the bookkeeping altogether); ``set_provider``
installs another (for example ``samplecontroller.workqueue.prometheus``) for named queues created
afterwards (unlike Go, a later call replaces the earlier one). Unnamed queues report nothing.

Unfinished work and the longest running processor are refreshed every
``UNFINISHED_WORK_UPDATE_PERIOD`` seconds (Go: 500 ms) by one shared thread, and only for
queues that have items in processing (plus one last update to zero): idle queues cost nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar

from samplecontroller.wait.clock import REAL_CLOCK, Clock

T = TypeVar("T", bound=Hashable)

UNFINISHED_WORK_UPDATE_PERIOD = 0.5

__all__ = [
    "UNFINISHED_WORK_UPDATE_PERIOD",
    "CounterMetric",
    "GaugeMetric",
    "HistogramMetric",
    "MetricsProvider",
    "NoopMetricsProvider",
    "QueueMetrics",
    "SettableGaugeMetric",
    "flush_unfinished_work",
    "get_provider",
    "new_queue_metrics",
    "set_provider",
]


class GaugeMetric(Protocol):
    """A gauge a queue moves up and down (its depth)."""

    def inc(self) -> None:
        """Add one."""

    def dec(self) -> None:
        """Subtract one."""


class SettableGaugeMetric(Protocol):
    """A gauge a queue sets (unfinished work, longest running processor)."""

    def set(self, value: float) -> None:
        """Set the value."""


class CounterMetric(Protocol):
    """A counter (adds, retries)."""

    def inc(self) -> None:
        """Add one."""


class HistogramMetric(Protocol):
    """A histogram of seconds (queue latency, work duration)."""

    def observe(self, value: float) -> None:
        """Record one value."""


class MetricsProvider(Protocol):
    """Creates the metrics of one named queue (each method gets the queue's name)."""

    def new_depth_metric(self, name: str) -> GaugeMetric:
        """The depth gauge of queue ``name`` (client-go's workqueue_depth)."""

    def new_adds_metric(self, name: str) -> CounterMetric:
        """The adds counter of queue ``name`` (workqueue_adds_total)."""

    def new_latency_metric(self, name: str) -> HistogramMetric:
        """Seconds an item waited before ``get`` (workqueue_queue_duration_seconds)."""

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        """Seconds from ``get`` to ``done`` (workqueue_work_duration_seconds)."""

    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric:
        """Seconds of work in progress not yet done (workqueue_unfinished_work_seconds)."""

    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric:
        """Seconds the longest running item has been processed (workqueue_longest_running_processor_seconds)."""

    def new_retries_metric(self, name: str) -> CounterMetric:
        """The retries counter of queue ``name`` (workqueue_retries_total)."""


class _Noop:
    def inc(self) -> None:
        pass

    def dec(self) -> None:
        pass

    def set(self, value: float) -> None:
        pass

    def observe(self, value: float) -> None:
        pass


_NOOP = _Noop()


class NoopMetricsProvider:
    """Discards every metric (the default)."""

    def new_depth_metric(self, name: str) -> GaugeMetric:
        return _NOOP

    def new_adds_metric(self, name: str) -> CounterMetric:
        return _NOOP

    def new_latency_metric(self, name: str) -> HistogramMetric:
        return _NOOP

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        return _NOOP

    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return _NOOP

    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return _NOOP

    def new_retries_metric(self, name: str) -> CounterMetric:
        return _NOOP


_lock = threading.Lock()
_provider: MetricsProvider = NoopMetricsProvider()


def set_provider(provider: MetricsProvider) -> None:
    """Use ``provider`` for every named queue created from now on."""
    global _provider
    with _lock:
        _provider = provider


def get_provider() -> MetricsProvider:
    """The provider new named queues take their metrics from."""
    with _lock:
        return _provider


class QueueMetrics(Generic[T]):
    """The metrics bookkeeping of one queue. Every method is called with ``lock`` held."""

    def __init__(self, name: str, provider: MetricsProvider, lock: threading.Lock, clock: Clock = REAL_CLOCK) -> None:
        self.name = name
        self.lock = lock
        self.clock = clock
        self.depth = provider.new_depth_metric(name)
        self.adds = provider.new_adds_metric(name)
        self.latency = provider.new_latency_metric(name)
        self.work_duration = provider.new_work_duration_metric(name)
        self.unfinished = provider.new_unfinished_work_seconds_metric(name)
        self.longest = provider.new_longest_running_processor_seconds_metric(name)
        self.retries = provider.new_retries_metric(name)
        self.added_at: dict[T, float] = {}
        self.processing_since: dict[T, float] = {}
        self.active = False  # registered with the unfinished-work updater
        self.stopped = False
        self._now = clock.now

    def add(self, item: T) -> None:
        """An item was added: count it, raise the depth, start its queue latency clock."""
        self.adds.inc()
        self.depth.inc()
        if item not in self.added_at:
            self.added_at[item] = self._now()

    def get(self, item: T) -> None:
        """An item was handed out: lower the depth, observe its queue latency, start its work clock."""
        self.depth.dec()
        now = self._now()
        self.processing_since[item] = now
        start = self.added_at.pop(item, None)
        if start is not None:
            self.latency.observe(now - start)
        if not self.active and not self.stopped:
            self.active = True
            _updater.register(self)

    def drop(self, item: T) -> None:
        """A waiting item was dropped at shutdown without being handed out."""
        self.depth.dec()
        self.added_at.pop(item, None)

    def done(self, item: T) -> None:
        """An item is done: observe its work duration."""
        start = self.processing_since.pop(item, None)
        if start is not None:
            self.work_duration.observe(self._now() - start)

    def retry(self) -> None:
        """An item was re-queued after a failure: count a retry."""
        self.retries.inc()

    def stop(self) -> None:
        """The queue shut down: no more unfinished-work updates."""
        self.stopped = True

    def update_unfinished_work(self) -> bool:
        """Set the two gauges; True while there is still work in processing to watch."""
        if self.stopped:
            return False
        now = self.clock.now()
        total = 0.0
        oldest = 0.0
        for start in self.processing_since.values():
            age = now - start
            total += age
            if age > oldest:
                oldest = age
        self.unfinished.set(total)
        self.longest.set(oldest)
        return bool(self.processing_since)


def new_queue_metrics(name: str, provider: MetricsProvider | None, lock: threading.Lock,
                      clock: Clock = REAL_CLOCK) -> QueueMetrics[T] | None:
    """Metrics for a queue called ``name``, or None when nothing would be reported."""
    if not name:
        return None
    p = provider if provider is not None else get_provider()
    if isinstance(p, NoopMetricsProvider):
        return None
    return QueueMetrics(name, p, lock, clock)


class _UnfinishedWorkUpdater:
    """One daemon thread that refreshes the unfinished-work gauges of busy queues."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._active: set[QueueMetrics[Hashable]] = set()
        self._thread: threading.Thread | None = None

    def register(self, m: QueueMetrics[T]) -> None:
        """Watch ``m`` until its queue has nothing in processing (called with m.lock held)."""
        with self._cond:
            self._active.add(m)  # type: ignore[arg-type]
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="workqueue-unfinished-work", daemon=True)
                self._thread.start()
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._active:
                    self._cond.wait()
            time.sleep(UNFINISHED_WORK_UPDATE_PERIOD)
            self.flush()

    def flush(self) -> None:
        """Update every watched queue now; forget those that became idle."""
        with self._cond:
            snapshot = list(self._active)
        for m in snapshot:
            with m.lock:
                if m.update_unfinished_work():
                    continue
                m.active = False
                with self._cond:
                    self._active.discard(m)


_updater = _UnfinishedWorkUpdater()


def flush_unfinished_work() -> None:
    """Refresh the unfinished-work gauges of all busy queues at once (for tests and shutdown)."""
    _updater.flush()
