"""Workqueue throughput: add -> get -> done cycles per second.

Compares ``samplecontroller.workqueue.Queue`` (unnamed, and named with a counting metrics
provider) and ``RateLimitingQueue`` with a bare ``deque`` + ``Condition`` loop doing the same
hand-off (append + notify / wait + popleft, no de-duplication). One producer feeds N worker
threads; with 1 thread the same thread also does the adds (no hand-off), like a worker re-adding
its own item. Prints a table; run ``python benchmarks/bench_workqueue.py [cycles]``.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import deque
from collections.abc import Callable

from prometheus_client import CollectorRegistry

from samplecontroller.workqueue import Queue, RateLimitingQueue
from samplecontroller.workqueue.metrics import (
    CounterMetric,
    GaugeMetric,
    HistogramMetric,
    SettableGaugeMetric,
)
from samplecontroller.workqueue.prometheus import PrometheusMetricsProvider


class _Count:
    def __init__(self) -> None:
        self.n = 0

    def inc(self) -> None:
        self.n += 1

    def dec(self) -> None:
        self.n -= 1

    def set(self, value: float) -> None:
        pass

    def observe(self, value: float) -> None:
        self.n += 1


class CountingProvider:
    def new_depth_metric(self, name: str) -> GaugeMetric:
        return _Count()

    def new_adds_metric(self, name: str) -> CounterMetric:
        return _Count()

    def new_latency_metric(self, name: str) -> HistogramMetric:
        return _Count()

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        return _Count()

    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return _Count()

    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return _Count()

    def new_retries_metric(self, name: str) -> CounterMetric:
        return _Count()


class BareQueue:
    """The floor: deque + Condition, no de-duplication, no processing set."""

    def __init__(self) -> None:
        self.cond = threading.Condition(threading.Lock())
        self.q: deque[int] = deque()
        self.closed = False

    def add(self, item: int) -> None:
        with self.cond:
            self.q.append(item)
            self.cond.notify()

    def get(self) -> tuple[int, bool]:
        with self.cond:
            while not self.q and not self.closed:
                self.cond.wait()
            if not self.q:
                return -1, True
            return self.q.popleft(), False

    def done(self, item: int) -> None:
        with self.cond:
            pass

    def shut_down(self) -> None:
        with self.cond:
            self.closed = True
            self.cond.notify_all()


def one_thread(q: Queue[int] | BareQueue, cycles: int) -> float:
    add, get, done = q.add, q.get, q.done
    t0 = time.perf_counter()
    for i in range(cycles):
        add(i)
        item, _ = get()
        done(item)
    return time.perf_counter() - t0


def n_threads(q: Queue[int] | BareQueue, cycles: int, workers: int) -> float:
    """One producer adds ``cycles`` distinct items; ``workers`` threads get/done until shutdown."""
    processed = [0] * workers

    def work(idx: int) -> None:
        get, done = q.get, q.done
        n = 0
        while True:
            item, shutdown = get()
            if shutdown:
                break
            done(item)
            n += 1
        processed[idx] = n

    threads = [threading.Thread(target=work, args=(i,)) for i in range(workers)]
    for t in threads:
        t.start()
    t0 = time.perf_counter()
    add = q.add
    for i in range(cycles):
        add(i)
    q.shut_down()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    assert sum(processed) == cycles, (sum(processed), cycles)
    return elapsed


def main() -> None:
    cycles = int(sys.argv[1]) if len(sys.argv) > 1 else 300_000
    prometheus = PrometheusMetricsProvider(CollectorRegistry())
    factories: list[tuple[str, Callable[[], Queue[int] | BareQueue]]] = [
        ("bare deque+Condition", BareQueue),
        ("Queue", Queue),
        ("Queue (named, metrics)", lambda: Queue("bench", metrics_provider=CountingProvider())),
        ("Queue (named, Prometheus)", lambda: Queue("bench", metrics_provider=prometheus)),
        ("RateLimitingQueue", RateLimitingQueue),
    ]
    print(f"{cycles:,} add -> get -> done cycles, best of 3")
    print(f"{'queue':<28} {'threads':>7} {'cycles/s':>12} {'vs bare':>8}")
    for workers in (1, 4):
        bare_rate = 0.0
        for label, factory in factories:
            best = 0.0
            for _ in range(3):
                q = factory()
                elapsed = one_thread(q, cycles) if workers == 1 else n_threads(q, cycles, workers)
                q.shut_down()
                best = max(best, cycles / elapsed)
            if label.startswith("bare"):
                bare_rate = best
            print(f"{label:<28} {workers:>7} {best:>12,.0f} {best / bare_rate:>7.2f}x")


if __name__ == "__main__":
    main()
