"""controller-runtime's newer queue features (issue 42 item 3): the priority queue behind the
controller (the initial list and resyncs at low priority, requeues at the priority handed out)
and ``reconciliation_timeout`` (an async reconcile cancelled, a sync one reported)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from samplecontroller.runtime import controller, handler
from samplecontroller.runtime.event import CreateEvent, UpdateEvent
from samplecontroller.runtime.reconcile import Request, Result
from samplecontroller.workqueue import LOW_PRIORITY, PriorityQueue, RateLimitingQueue
from tests.live import wait_for
from tests.runtime.objects import foo
from tests.runtime.test_async_controller import AsyncScript
from tests.runtime.test_async_controller import run as run
from tests.runtime.test_controller import Script, fast_options, seed, value

_counter = iter(range(10**6))


def test_the_priority_queue_is_the_default_and_can_be_turned_off() -> None:
    assert isinstance(controller.Controller("pq-default", Script(lambda r, n: Result())).queue, PriorityQueue)
    fifo = controller.Controller("pq-off", Script(lambda r, n: Result()), controller.Options(use_priority_queue=False))
    assert type(fifo.queue) is RateLimitingQueue


@pytest.mark.parametrize("make_handler", [
    handler.EnqueueRequestForObject,
    lambda: handler.EnqueueRequestsFromMapFunc(lambda o: [handler.request_for(o)]),
], ids=["for-object", "map-func"])
def test_a_users_change_is_reconciled_before_the_initial_list_and_resyncs(make_handler: Any) -> None:
    """A busy controller answers a user's change first: the initial list's creates and the
    resyncs' updates (same resourceVersion) wait behind it."""
    name = f"pq{next(_counter)}"
    order: list[str] = []

    def record(r: Request, n: int) -> Result:
        order.append(r.name)
        return Result()

    c = controller.Controller(name, Script(record), fast_options())
    h = make_handler()
    for i in range(5):
        h.create(CreateEvent(foo(f"listed{i}"), is_in_initial_list=True), c.queue)
    listed = foo("listed3", rv="7")
    h.update(UpdateEvent(listed, listed), c.queue)  # a resync: stays low
    h.update(UpdateEvent(foo("listed4", rv="7"), foo("listed4", rv="8")), c.queue)  # a change: raised
    h.create(CreateEvent(foo("new"), is_in_initial_list=False), c.queue)  # created by a user
    while c.queue.len():
        assert c.process_next_work_item()
    assert order == ["listed4", "new", "listed0", "listed1", "listed2", "listed3"]
    c.queue.shut_down()


def test_a_requeue_keeps_the_priority_the_request_was_handed_out_with() -> None:
    name = f"pq{next(_counter)}"
    c = controller.Controller(name, Script(lambda r, n: Result(requeue=True) if n == 1 else Result()),
                              controller.Options(use_priority_queue=True))
    assert isinstance(c.queue, PriorityQueue)
    c.queue.add_with_opts(Request("ns", "low"), priority=LOW_PRIORITY)
    assert c.process_next_work_item()
    c.queue.add(Request("ns", "other"))
    wait_for(lambda: c.queue.len() == 2, timeout=10)  # the requeue's 5 ms backoff
    assert c.queue.waiting_priorities() == [(Request("ns", "other"), 0), (Request("ns", "low"), LOW_PRIORITY)]
    c.queue.shut_down()


def test_an_async_reconcile_past_the_timeout_is_cancelled_and_retried(run: Any) -> None:
    name = f"pq{next(_counter)}"
    cancelled = threading.Event()

    async def slow(r: Request, n: int) -> Result:
        if n == 1:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.set()
                raise
        return Result()

    script = AsyncScript(slow)
    c = controller.Controller(name, script, fast_options(reconciliation_timeout=0.1))
    c.watch(seed(Request("ns", "a")))
    run(c)
    script.wait_calls(2)  # retried after the timeout
    assert cancelled.is_set()
    assert value("controller_runtime_reconcile_timeouts_total", {"controller": name}) == 1
    assert value("controller_runtime_reconcile_total", {"controller": name, "result": "error"}) == 1
    wait_for(lambda: value("controller_runtime_reconcile_total", {"controller": name, "result": "success"}) == 1,
             timeout=10)


def test_an_async_reconcilers_own_timeout_error_is_not_a_reconciliation_timeout(run: Any) -> None:
    name = f"pq{next(_counter)}"

    async def own(r: Request, n: int) -> Result:
        if n == 1:
            raise TimeoutError("the reconciler's own")
        return Result()

    script = AsyncScript(own)
    c = controller.Controller(name, script, fast_options(reconciliation_timeout=30))
    c.watch(seed(Request("ns", "a")))
    run(c)
    script.wait_calls(2)
    assert value("controller_runtime_reconcile_timeouts_total", {"controller": name}) == 0


def test_a_sync_reconcile_past_the_timeout_is_reported_while_it_runs(caplog: pytest.LogCaptureFixture) -> None:
    name = f"pq{next(_counter)}"
    release = threading.Event()
    def wait(r: Request, n: int) -> Result:
        release.wait(30)
        return Result()

    script = Script(wait)
    c = controller.Controller(name, script, fast_options(reconciliation_timeout=0.05))
    c.queue.add(Request("ns", "a"))
    worker = threading.Thread(target=c.process_next_work_item, daemon=True)
    worker.start()
    wait_for(lambda: value("controller_runtime_reconcile_timeouts_total", {"controller": name}) == 1, timeout=10)
    assert worker.is_alive()  # not cancelled: reported
    wait_for(lambda: any("reconciliation timeout" in r.getMessage() for r in caplog.records), timeout=10)
    release.set()
    worker.join(10)
    assert value("controller_runtime_reconcile_total", {"controller": name, "result": "success"}) == 1
    c.queue.add(Request("ns", "b"))  # a quick one is not reported
    release.set()
    assert c.process_next_work_item()
    assert value("controller_runtime_reconcile_timeouts_total", {"controller": name}) == 1
    c.queue.shut_down()


def test_a_negative_timeout_is_refused() -> None:
    with pytest.raises(ValueError, match="reconciliation_timeout"):
        controller.Controller("neg", Script(lambda r, n: Result()), controller.Options(reconciliation_timeout=-1))
