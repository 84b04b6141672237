"""A Prometheus ``MetricsProvider`` with client-go's workqueue metric names.

``install()`` registers the metrics once in the default registry and makes every named queue
created afterwards report to them (label ``name``, as in client-go's workqueue metrics):
workqueue_depth, workqueue_adds_total, workqueue_queue_duration_seconds,
workqueue_work_duration_seconds, workqueue_unfinished_work_seconds,
workqueue_longest_running_processor_seconds, workqueue_retries_total.
"""

from __future__ import annotations

import threading
from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

from samplecontroller.workqueue.metrics import (
    CounterMetric,
    GaugeMetric,
    HistogramMetric,
    SettableGaugeMetric,
    set_provider,
)

# client-go: prometheus.ExponentialBuckets(10e-9, 10, 10)
_BUCKETS = tuple(10e-9 * 10**i for i in range(10))


class PrometheusMetricsProvider:
    def __init__(self, registry: CollectorRegistry = REGISTRY) -> None:
        self.depth = Gauge("workqueue_depth", "Current depth of workqueue", ["name"], registry=registry)
        self.adds = Counter("workqueue_adds", "Total number of adds handled by workqueue", ["name"], registry=registry)
        self.latency = Histogram("workqueue_queue_duration_seconds",
                                 "How long in seconds an item stays in workqueue before being requested.",
                                 ["name"], buckets=_BUCKETS, registry=registry)
        self.work = Histogram("workqueue_work_duration_seconds",
                              "How long in seconds processing an item from workqueue takes.",
                              ["name"], buckets=_BUCKETS, registry=registry)
        self.unfinished = Gauge("workqueue_unfinished_work_seconds",
                                "How many seconds of work has been done that is in progress and hasn't been "
                                "observed by work_duration.", ["name"], registry=registry)
        self.longest = Gauge("workqueue_longest_running_processor_seconds",
                             "How many seconds has the longest running processor for workqueue been running.",
                             ["name"], registry=registry)
        self.retries = Counter("workqueue_retries", "Total number of retries handled by workqueue", ["name"],
                               registry=registry)

    def new_depth_metric(self, name: str) -> GaugeMetric:
        m: Any = self.depth.labels(name)
        return m  # type: ignore[no-any-return]

    def new_adds_metric(self, name: str) -> CounterMetric:
        m: Any = self.adds.labels(name)
        return m  # type: ignore[no-any-return]

    def new_latency_metric(self, name: str) -> HistogramMetric:
        m: Any = self.latency.labels(name)
        return m  # type: ignore[no-any-return]

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        m: Any = self.work.labels(name)
        return m  # type: ignore[no-any-return]

    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric:
        m: Any = self.unfinished.labels(name)
        return m  # type: ignore[no-any-return]

    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric:
        m: Any = self.longest.labels(name)
        return m  # type: ignore[no-any-return]

    def new_retries_metric(self, name: str) -> CounterMetric:
        m: Any = self.retries.labels(name)
        return m  # type: ignore[no-any-return]


_installed: PrometheusMetricsProvider | None = None
_lock = threading.Lock()


def install() -> PrometheusMetricsProvider:
    """Register (once) and use the Prometheus provider for queues created from now on."""
    global _installed
    with _lock:
        if _installed is None:
            _installed = PrometheusMetricsProvider()
        set_provider(_installed)
        return _installed
