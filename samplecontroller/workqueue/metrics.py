"""Workqueue metrics, like client-go's util/workqueue/metrics.go.

A named queue reports depth, adds, queue latency, work duration, unfinished work seconds, the
longest running processor and retries through a ``MetricsProvider``. The default provider
discards everything; ``set_provider`` installs another (for example the Prometheus one in
``samplecontroller.runtime.metrics``) for queues created afterwards.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar

T = TypeVar("T", bound=Hashable)


class GaugeMetric(Protocol):
    def inc(self) -> None: ...
    def dec(self) -> None: ...


class SettableGaugeMetric(Protocol):
    def set(self, value: float) -> None: ...


class CounterMetric(Protocol):
    def inc(self) -> None: ...


class HistogramMetric(Protocol):
    def observe(self, value: float) -> None: ...


class MetricsProvider(Protocol):
    """Creates the metrics of one named queue."""

    def new_depth_metric(self, name: str) -> GaugeMetric: ...
    def new_adds_metric(self, name: str) -> CounterMetric: ...
    def new_latency_metric(self, name: str) -> HistogramMetric: ...
    def new_work_duration_metric(self, name: str) -> HistogramMetric: ...
    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric: ...
    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric: ...
    def new_retries_metric(self, name: str) -> CounterMetric: ...


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
    with _lock:
        return _provider


class QueueMetrics(Generic[T]):
    """The bookkeeping a queue does for its metrics. Callers hold the queue's lock."""

    def __init__(self, name: str, provider: MetricsProvider | None = None) -> None:
        self.enabled = bool(name)
        p = provider or get_provider() if name else NoopMetricsProvider()
        self.depth = p.new_depth_metric(name)
        self.adds = p.new_adds_metric(name)
        self.latency = p.new_latency_metric(name)
        self.work_duration = p.new_work_duration_metric(name)
        self.unfinished = p.new_unfinished_work_seconds_metric(name)
        self.longest = p.new_longest_running_processor_seconds_metric(name)
        self.retries = p.new_retries_metric(name)
        self._added_at: dict[T, float] = {}
        self._processing_since: dict[T, float] = {}

    def add(self, item: T) -> None:
        if not self.enabled:
            return
        self.adds.inc()
        self.depth.inc()
        self._added_at.setdefault(item, time.monotonic())

    def get(self, item: T) -> None:
        if not self.enabled:
            return
        self.depth.dec()
        now = time.monotonic()
        self._processing_since[item] = now
        start = self._added_at.pop(item, None)
        if start is not None:
            self.latency.observe(now - start)

    def done(self, item: T) -> None:
        if not self.enabled:
            return
        start = self._processing_since.pop(item, None)
        if start is not None:
            self.work_duration.observe(time.monotonic() - start)

    def update_unfinished_work(self) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        total = 0.0
        oldest = 0.0
        for start in self._processing_since.values():
            age = now - start
            total += age
            oldest = max(oldest, age)
        self.unfinished.set(total)
        self.longest.set(oldest)

    def retry(self) -> None:
        if self.enabled:
            self.retries.inc()
