"""Prometheus metrics with controller-runtime's and client-go's names (pkg/metrics).

``install()`` (idempotent) registers, in prometheus_client's default registry:
controller_runtime_reconcile_total{controller,result} (result: success, error, requeue,
requeue_after), controller_runtime_reconcile_errors_total{controller},
controller_runtime_terminal_reconcile_errors_total{controller},
controller_runtime_reconcile_panics_total{controller},
controller_runtime_reconcile_timeouts_total{controller} (``reconciliation_timeout``),
controller_runtime_reconcile_conflicts_total{controller} (not in Go: 409 Conflicts, requeued without
counting as errors),
controller_runtime_reconcile_time_seconds{controller},
controller_runtime_max_concurrent_reconciles{controller},
controller_runtime_active_workers{controller}; and makes every work queue created afterwards
report client-go's workqueue_* metrics (label ``name``, see ``samplecontroller.workqueue.prometheus``).
``serve(address)`` serves them at ``/metrics``.
"""

from __future__ import annotations

import threading

from prometheus_client import Counter, Gauge, Histogram

from samplecontroller import probes
from samplecontroller.workqueue import prometheus as workqueue_prometheus

# controller-runtime's reconcile_time_seconds buckets
RECONCILE_TIME_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8,
                          0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30,
                          40, 50, 60)


class ControllerMetrics:
    """The controller_runtime_* collectors (one set per process)."""

    def __init__(self) -> None:
        self.reconcile_total = Counter("controller_runtime_reconcile", "Total number of reconciliations per controller",
                                       ["controller", "result"])
        self.reconcile_errors = Counter("controller_runtime_reconcile_errors",
                                        "Total number of reconciliation errors per controller", ["controller"])
        self.terminal_errors = Counter("controller_runtime_terminal_reconcile_errors",
                                       "Total number of terminal reconciliation errors per controller", ["controller"])
        self.reconcile_conflicts = Counter("controller_runtime_reconcile_conflicts",
                                           "Total number of reconciliations that met a conflict (409) and were "
                                           "requeued, per controller", ["controller"])
        self.reconcile_panics = Counter("controller_runtime_reconcile_panics",
                                        "Total number of reconciliation panics per controller", ["controller"])
        self.reconcile_timeouts = Counter("controller_runtime_reconcile_timeouts",
                                          "Total number of reconciliation timeouts per controller", ["controller"])
        self.reconcile_time = Histogram("controller_runtime_reconcile_time_seconds",
                                        "Length of time per reconciliation per controller", ["controller"],
                                        buckets=RECONCILE_TIME_BUCKETS)
        self.max_concurrent = Gauge("controller_runtime_max_concurrent_reconciles",
                                    "Maximum number of concurrent reconciles per controller", ["controller"])
        self.active_workers = Gauge("controller_runtime_active_workers",
                                    "Number of currently used workers per controller", ["controller"])


_metrics: ControllerMetrics | None = None
_lock = threading.Lock()


def install() -> ControllerMetrics:
    """Register (once) the controller metrics and the workqueue provider; return the collectors."""
    global _metrics
    with _lock:
        if _metrics is None:
            _metrics = ControllerMetrics()
        workqueue_prometheus.install()
        return _metrics


def serve(address: tuple[str, int]) -> probes.ProbeServer:
    """Serve the default registry at ``/metrics`` on a daemon thread (OSError if it cannot bind)."""
    install()
    return probes.serve_metrics(address)


__all__ = ["RECONCILE_TIME_BUCKETS", "ControllerMetrics", "install", "serve"]
