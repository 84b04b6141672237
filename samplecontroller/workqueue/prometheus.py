"""A Prometheus ``MetricsProvider`` with client-go's workqueue metric names.

``install()`` registers the metrics once in the default registry and makes every named queue
created afterwards report to them (label ``name``, as in client-go's workqueue metrics):
workqueue_depth, workqueue_adds_total, workqueue_queue_duration_seconds,
workqueue_work_duration_seconds, workqueue_unfinished_work_seconds,
workqueue_longest_running_processor_seconds, workqueue_retries_total.

Cost: a queue calls its metrics with its own lock held, so the values here are plain numbers
updated without another lock, and a collector turns them into samples at scrape time (a
scrape may see a histogram's count and sum from slightly different moments). Queues sharing a
name share their series (as in Go); give queues unique names, since updates from two
same-named queues are not serialised with each other.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Callable, Iterator

from prometheus_client import REGISTRY, CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from samplecontroller.workqueue.metrics import (
    CounterMetric,
    GaugeMetric,
    HistogramMetric,
    SettableGaugeMetric,
    set_provider,
)

__all__ = ["BUCKETS", "PrometheusMetricsProvider", "install"]

# client-go: prometheus.ExponentialBuckets(10e-9, 10, 10)
BUCKETS: tuple[float, ...] = tuple(10e-9 * 10**i for i in range(10))
_go_float: Callable[[float], str] = floatToGoString  # how prometheus_client prints ``le``
_BUCKET_LABELS = [_go_float(b) for b in BUCKETS]


class _Value:
    """A counter or gauge value; callers serialise updates (the queue's lock)."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0.0

    def inc(self) -> None:
        self.value += 1.0

    def dec(self) -> None:
        self.value -= 1.0

    def set(self, value: float) -> None:
        self.value = value


class _Histogram:
    """Per-bucket counts (last one: +Inf) and a sum; callers serialise updates."""

    __slots__ = ("counts", "total")

    def __init__(self) -> None:
        self.counts = [0] * (len(BUCKETS) + 1)
        self.total = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(BUCKETS, value)] += 1
        self.total += value

    def buckets(self) -> list[tuple[str, float]]:
        out: list[tuple[str, float]] = []
        cumulative = 0
        for label, n in zip(_BUCKET_LABELS, self.counts, strict=False):
            cumulative += n
            out.append((label, float(cumulative)))
        out.append(("+Inf", float(cumulative + self.counts[-1])))
        return out


_GAUGES = {
    "depth": ("workqueue_depth", "Current depth of workqueue"),
    "unfinished": ("workqueue_unfinished_work_seconds",
                   "How many seconds of work has been done that is in progress and hasn't been "
                   "observed by work_duration. Large values indicate stuck threads. One can deduce the "
                   "number of stuck threads by observing the rate at which this increases."),
    "longest": ("workqueue_longest_running_processor_seconds",
                "How many seconds has the longest running processor for workqueue been running."),
}
_COUNTERS = {
    "adds": ("workqueue_adds", "Total number of adds handled by workqueue"),
    "retries": ("workqueue_retries", "Total number of retries handled by workqueue"),
}
_HISTOGRAMS = {
    "latency": ("workqueue_queue_duration_seconds",
                "How long in seconds an item stays in workqueue before being requested."),
    "work": ("workqueue_work_duration_seconds", "How long in seconds processing an item from workqueue takes."),
}


class PrometheusMetricsProvider(Collector):
    """Creates each queue's metrics and exposes them all through one collector in ``registry``."""

    def __init__(self, registry: CollectorRegistry | None = REGISTRY) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, dict[str, _Value]] = {kind: {} for kind in (*_GAUGES, *_COUNTERS)}
        self._histograms: dict[str, dict[str, _Histogram]] = {kind: {} for kind in _HISTOGRAMS}
        if registry is not None:
            registry.register(self)

    def _value(self, kind: str, name: str) -> _Value:
        with self._lock:
            return self._values[kind].setdefault(name, _Value())

    def _histogram(self, kind: str, name: str) -> _Histogram:
        with self._lock:
            return self._histograms[kind].setdefault(name, _Histogram())

    def new_depth_metric(self, name: str) -> GaugeMetric:
        return self._value("depth", name)

    def new_adds_metric(self, name: str) -> CounterMetric:
        return self._value("adds", name)

    def new_latency_metric(self, name: str) -> HistogramMetric:
        return self._histogram("latency", name)

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        return self._histogram("work", name)

    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return self._value("unfinished", name)

    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return self._value("longest", name)

    def new_retries_metric(self, name: str) -> CounterMetric:
        return self._value("retries", name)

    def collect(self) -> Iterator[Metric]:
        """The workqueue_* metric families (a prometheus_client custom collector)."""
        with self._lock:
            values = {kind: list(by_name.items()) for kind, by_name in self._values.items()}
            histograms = {kind: list(by_name.items()) for kind, by_name in self._histograms.items()}
        for kind, (metric, doc) in _GAUGES.items():
            gauge = GaugeMetricFamily(metric, doc, labels=["name"])
            for name, v in values[kind]:
                gauge.add_metric([name], v.value)
            yield gauge
        for kind, (metric, doc) in _COUNTERS.items():
            counter = CounterMetricFamily(metric, doc, labels=["name"])
            for name, v in values[kind]:
                counter.add_metric([name], v.value)
            yield counter
        for kind, (metric, doc) in _HISTOGRAMS.items():
            hist = HistogramMetricFamily(metric, doc, labels=["name"])
            for name, h in histograms[kind]:
                hist.add_metric([name], h.buckets(), h.total)
            yield hist


_installed: PrometheusMetricsProvider | None = None
_install_lock = threading.Lock()


def install() -> PrometheusMetricsProvider:
    """Register (once) and use the Prometheus provider for queues created from now on."""
    global _installed
    with _install_lock:
        if _installed is None:
            _installed = PrometheusMetricsProvider()
        set_provider(_installed)
        return _installed
