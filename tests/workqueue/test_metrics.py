"""Queue metrics through a recording provider: every call client-go's queue makes, with exact times."""

from __future__ import annotations

import threading

import pytest

from samplecontroller.wait.clock import FakeClock
from samplecontroller.workqueue import DelayingQueue, Queue, RateLimitingQueue, metrics, set_provider
from samplecontroller.workqueue.metrics import NoopMetricsProvider, flush_unfinished_work, get_provider
from samplecontroller.workqueue.testing import RecordingProvider, get_item


def test_add_get_done_metrics(provider: RecordingProvider) -> None:
    clock = FakeClock(100.0)
    q: Queue[str] = Queue("q1", metrics_provider=provider, clock=clock)
    q.add("a")
    q.add("a")  # duplicate: not an add
    q.add("b")
    assert provider.get("adds", "q1").value == 2
    assert provider.get("depth", "q1").value == 2
    clock.step(1.5)
    item = get_item(q)
    assert provider.get("depth", "q1").value == 1
    assert provider.get("latency", "q1").observed() == [1.5]
    q.add("a")  # dirty while processing: counted as an add, in depth
    assert provider.get("adds", "q1").value == 3
    clock.step(0.25)
    q.done(item)
    assert provider.get("work_duration", "q1").observed() == [0.25]
    item = get_item(q)  # "b"
    clock.step(1)
    item2 = get_item(q)  # "a" again: latency from its re-add
    assert (item, item2) == ("b", "a")
    assert provider.get("latency", "q1").observed() == [1.5, 1.75, 1.25]
    assert provider.get("depth", "q1").value == 0
    q.shut_down()


def test_unfinished_work_and_longest_processor(provider: RecordingProvider) -> None:
    clock = FakeClock()
    q: Queue[str] = Queue("q2", metrics_provider=provider, clock=clock)
    q.add("a")
    q.add("b")
    q.get()
    clock.step(2)
    q.get()
    clock.step(1)
    flush_unfinished_work()
    assert provider.get("unfinished", "q2").value == 4.0  # 3 s + 1 s
    assert provider.get("longest", "q2").value == 3.0
    q.done("a")
    q.done("b")
    flush_unfinished_work()  # one last update to zero, then the queue is no longer watched
    assert provider.get("unfinished", "q2").value == 0.0
    assert provider.get("longest", "q2").value == 0.0
    n = len(provider.get("unfinished", "q2").calls)
    flush_unfinished_work()
    assert len(provider.get("unfinished", "q2").calls) == n  # idle: no more updates
    q.shut_down()


def test_unfinished_work_updated_periodically(provider: RecordingProvider) -> None:
    q: Queue[str] = Queue("q3", metrics_provider=provider)
    q.add("a")
    q.get()
    unfinished = provider.get("unfinished", "q3")
    assert unfinished.changed.wait(3 * metrics.UNFINISHED_WORK_UPDATE_PERIOD + 1)
    assert unfinished.value > 0
    q.done("a")
    q.shut_down()


def test_retries_counted_by_add_after_and_add_rate_limited(provider: RecordingProvider) -> None:
    clock = FakeClock()
    q: RateLimitingQueue[str] = RateLimitingQueue(name="q4", metrics_provider=provider, clock=clock)
    q.add_rate_limited("a")
    q.add_after("b", 0)
    q.add_after("c", 5)
    assert provider.get("retries", "q4").value == 3
    q.shut_down()
    q.add_after("d", 1)  # after shutdown: nothing
    assert provider.get("retries", "q4").value == 3


def test_unnamed_and_noop_queues_report_nothing(provider: RecordingProvider) -> None:
    q: DelayingQueue[str] = DelayingQueue(metrics_provider=provider)
    q.add("a")
    assert provider.metrics == {}
    assert q._metrics is None
    q2: Queue[str] = Queue("named", metrics_provider=NoopMetricsProvider())
    assert q2._metrics is None


def test_global_provider(provider: RecordingProvider) -> None:
    previous = get_provider()
    set_provider(provider)
    try:
        q: Queue[str] = Queue("global-q")
        q.add("x")
        assert provider.get("adds", "global-q").value == 1
        assert {kind for kind, _ in provider.metrics} == {
            "depth", "adds", "latency", "work_duration", "unfinished", "longest", "retries"}
    finally:
        set_provider(previous)
    q.shut_down()


def test_prometheus_provider_names() -> None:
    from prometheus_client import CollectorRegistry, generate_latest

    from samplecontroller.workqueue.prometheus import PrometheusMetricsProvider

    registry = CollectorRegistry()
    clock = FakeClock()
    q: RateLimitingQueue[str] = RateLimitingQueue(
        name="prom", metrics_provider=PrometheusMetricsProvider(registry), clock=clock)
    q.add("x")
    q.add("y")
    assert registry.get_sample_value("workqueue_adds_total", {"name": "prom"}) == 2
    assert registry.get_sample_value("workqueue_depth", {"name": "prom"}) == 2
    clock.step(0.005)
    q.get()
    clock.step(20)  # beyond the last bucket (10 s)
    q.get()
    q.done("x")
    q.add_after("z", 0)
    flush_unfinished_work()

    def sample(metric: str, **labels: str) -> float | None:
        return registry.get_sample_value(metric, {"name": "prom", **labels})

    assert sample("workqueue_depth") == 1
    assert sample("workqueue_retries_total") == 1
    assert sample("workqueue_queue_duration_seconds_count") == 2
    assert sample("workqueue_queue_duration_seconds_sum") == pytest.approx(20.01)
    assert sample("workqueue_queue_duration_seconds_bucket", le="0.001") == 0
    assert sample("workqueue_queue_duration_seconds_bucket", le="0.01") == 1
    assert sample("workqueue_queue_duration_seconds_bucket", le="10.0") == 1
    assert sample("workqueue_queue_duration_seconds_bucket", le="+Inf") == 2
    assert sample("workqueue_work_duration_seconds_count") == 1
    assert sample("workqueue_unfinished_work_seconds") == 0.0  # "y" started just now
    assert sample("workqueue_longest_running_processor_seconds") == 0.0
    text = generate_latest(registry).decode()
    for name in ("workqueue_depth", "workqueue_adds_total", "workqueue_queue_duration_seconds_bucket",
                 "workqueue_work_duration_seconds_sum", "workqueue_unfinished_work_seconds",
                 "workqueue_longest_running_processor_seconds", "workqueue_retries_total"):
        assert name + '{' in text
    q.done("y")
    q.shut_down()


def test_metrics_under_threads(provider: RecordingProvider) -> None:
    q: Queue[int] = Queue("q5", metrics_provider=provider)

    def work() -> None:
        while True:
            got = q.get()
            if got[1]:
                return
            q.done(got[0])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for i in range(2000):
        q.add(i)
    q.shut_down()
    for t in threads:
        t.join(10)
    assert provider.get("adds", "q5").value == 2000
    assert provider.get("depth", "q5").value == 0
    assert len(provider.get("latency", "q5").observed()) == 2000
    assert len(provider.get("work_duration", "q5").observed()) == 2000


def test_one_updater_thread_for_many_busy_queues(provider: RecordingProvider) -> None:
    queues: list[Queue[int]] = []
    for i in range(3):  # make sure the shared updater thread exists
        q: Queue[int] = Queue(f"warm{i}", metrics_provider=provider)
        q.add(1)
        q.get()
        queues.append(q)
    before = threading.active_count()
    for i in range(30):
        q = Queue(f"many{i}", metrics_provider=provider)
        q.add(1)
        q.get()
        queues.append(q)
    assert threading.active_count() == before  # no thread per queue, busy or idle
    for q in queues:
        q.done(1)
        q.shut_down()
