"""The basic Queue: de-duplication, dirty requeue, shutdown, drain; model-based and threaded properties."""

from __future__ import annotations

import random
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from samplecontroller.workqueue import Got, Queue
from samplecontroller.workqueue.testing import get_item

SHUTDOWN: Got[Any] = (None, True)


def drain_in_thread(q: Queue[int]) -> threading.Event:
    """Run shut_down_with_drain in a thread; the event is set when it returns."""
    drained = threading.Event()

    def run() -> None:
        q.shut_down_with_drain()
        drained.set()

    threading.Thread(target=run, daemon=True).start()
    return drained


def get_with_timeout(q: Queue[int], timeout: float = 30.0) -> Got[int]:
    out: list[Got[int]] = []
    t = threading.Thread(target=lambda: out.append(q.get()), daemon=True)
    t.start()
    t.join(timeout)
    assert out, "get() did not return in time"
    return out[0]


def wait_until(condition: Callable[[], bool], timeout: float = 30.0) -> bool:
    """Whether ``condition()`` became true within ``timeout`` seconds (polled)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


def test_fifo_and_dedup() -> None:
    q: Queue[str] = Queue()
    for item in ["a", "b", "a", "c", "b"]:
        q.add(item)
    assert len(q) == 3 and q.len() == 3
    assert [q.get() for _ in range(3)] == [("a", False), ("b", False), ("c", False)]
    assert len(q) == 0


def test_add_while_processing_requeues_at_done() -> None:
    q: Queue[str] = Queue()
    q.add("x")
    item = get_item(q)
    q.add("x")
    q.add("x")  # still a single dirty mark
    assert len(q) == 0  # not handed to a second worker while processing
    q.done(item)
    assert len(q) == 1
    assert q.get() == ("x", False)
    q.done("x")
    assert len(q) == 0


def test_get_blocks_until_add() -> None:
    q: Queue[int] = Queue()
    out: list[Got[int]] = []
    t = threading.Thread(target=lambda: out.append(q.get()), daemon=True)
    t.start()
    t.join(0.05)
    assert t.is_alive() and not out
    q.add(7)
    t.join(30)
    assert out == [(7, False)]


def test_shutdown_hands_out_remaining_items_then_reports_shutdown() -> None:
    q: Queue[int] = Queue()
    q.add(1)
    q.add(2)
    q.shut_down()
    assert q.shutting_down()
    q.add(3)  # ignored
    assert q.get() == (1, False)
    assert q.get() == (2, False)
    assert q.get() == SHUTDOWN
    assert q.get() == SHUTDOWN


def test_shutdown_wakes_blocked_getters() -> None:
    q: Queue[int] = Queue()
    results: list[Got[int]] = []
    threads = [threading.Thread(target=lambda: results.append(q.get()), daemon=True) for _ in range(4)]
    for t in threads:
        t.start()
    q.shut_down()
    for t in threads:
        t.join(30)
    assert results == [SHUTDOWN] * 4


def test_drain_waits_for_processing_items() -> None:
    q: Queue[int] = Queue()
    q.add(1)
    q.add(2)
    a = get_item(q)
    b = get_item(q)
    drained = drain_in_thread(q)
    assert not drained.wait(0.05)
    assert q.shutting_down()
    q.done(a)
    assert not drained.wait(0.05)
    q.done(b)
    assert drained.wait(30)


def test_drain_returns_at_once_when_nothing_is_processing() -> None:
    q: Queue[int] = Queue()
    q.add(1)  # waiting, not processing: drain does not wait for it
    done = drain_in_thread(q)
    assert done.wait(30)
    assert q.get() == (1, False)


def test_shut_down_cancels_a_waiting_drain() -> None:
    q: Queue[int] = Queue()
    q.add(1)
    q.get()
    drained = drain_in_thread(q)
    assert not drained.wait(0.05)
    q.shut_down()
    assert drained.wait(30)


def test_shut_down_in_flight_drops_waiting_items_and_waits_for_the_ones_in_progress() -> None:
    q: Queue[int] = Queue()
    for i in range(5):
        q.add(i)
    item = get_item(q)
    q.add(item)  # dirty while processing: not requeued after the shutdown
    result: list[bool] = []
    t = threading.Thread(target=lambda: result.append(q.shut_down_in_flight(30)), daemon=True)
    t.start()
    assert wait_until(q.shutting_down)  # else the get below may race the shutdown and take an item
    assert get_with_timeout(q) == SHUTDOWN  # waiting items are not handed out
    assert not result, "returned while an item was still in progress"
    q.done(item)
    t.join(10)
    assert result == [True]
    assert q.len() == 0 and get_with_timeout(q) == SHUTDOWN


def test_shut_down_in_flight_gives_up_at_the_timeout() -> None:
    q: Queue[int] = Queue()
    q.add(1)
    q.get()
    assert q.shut_down_in_flight(0) is False
    q.add(2)
    assert q.len() == 0


def test_dirty_item_requeued_during_drain_is_still_handed_out() -> None:
    q: Queue[int] = Queue()
    q.add(1)
    q.get()
    q.add(1)  # dirty
    drained = drain_in_thread(q)
    q.done(1)
    assert drained.wait(30)
    assert q.get() == (1, False)
    assert q.get() == SHUTDOWN


class QueueModel(RuleBasedStateMachine):
    """Single-threaded model check of the exact semantics against a reference model."""

    def __init__(self) -> None:
        super().__init__()
        self.q: Queue[int] = Queue()
        self.waiting: deque[int] = deque()
        self.dirty: set[int] = set()
        self.processing: set[int] = set()
        self.shut = False

    @rule(item=st.integers(0, 5))
    def add(self, item: int) -> None:
        self.q.add(item)
        if self.shut or item in self.dirty:
            return
        self.dirty.add(item)
        if item not in self.processing:
            self.waiting.append(item)

    @precondition(lambda self: bool(self.waiting) or self.shut)
    @rule()
    def get(self) -> None:
        got = self.q.get()
        if not self.waiting:
            assert got == (None, True)
            return
        expected = self.waiting.popleft()
        assert got == (expected, False)
        item = expected
        self.processing.add(item)
        self.dirty.discard(item)

    @precondition(lambda self: bool(self.processing))
    @rule(data=st.data())
    def done(self, data: st.DataObject) -> None:
        item = data.draw(st.sampled_from(sorted(self.processing)))
        self.q.done(item)
        self.processing.discard(item)
        if item in self.dirty:
            self.waiting.append(item)

    @rule()
    def shut_down(self) -> None:
        self.q.shut_down()
        self.shut = True

    @invariant()
    def same_length(self) -> None:
        assert len(self.q) == len(self.waiting)
        assert self.q.shutting_down() == self.shut


TestQueueModel = QueueModel.TestCase
TestQueueModel.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    producers=st.integers(1, 4),
    workers=st.integers(1, 6),
    n_items=st.integers(1, 8),
    adds_per_producer=st.integers(1, 60),
    seed=st.integers(0, 2**32 - 1),
)
def test_threaded_guarantees(producers: int, workers: int, n_items: int, adds_per_producer: int, seed: int) -> None:
    """Many threads: never two workers on one item, every add is followed by a processing, drain ends."""
    q: Queue[int] = Queue()
    guard = threading.Lock()
    in_flight: set[int] = set()
    violations: list[str] = []
    wanted = [0] * n_items  # bumped by producers before each add
    seen = [0] * n_items  # what a worker saw when it started processing the item
    processed = [0]

    def produce(rng: random.Random) -> None:
        for _ in range(adds_per_producer):
            item = rng.randrange(n_items)
            with guard:
                wanted[item] += 1
            q.add(item)

    def work() -> None:
        while True:
            got = q.get()
            if got[1]:
                return
            item = got[0]
            with guard:
                if item in in_flight:
                    violations.append(f"item {item} processed by two workers")
                in_flight.add(item)
                seen[item] = wanted[item]
                processed[0] += 1
            if random.random() < 0.3:
                threading.Event().wait(0.0005)
            with guard:
                in_flight.discard(item)
            q.done(item)

    master = random.Random(seed)
    prod_threads = [threading.Thread(target=produce, args=(random.Random(master.random()),)) for _ in range(producers)]
    work_threads = [threading.Thread(target=work) for _ in range(workers)]
    for t in work_threads + prod_threads:
        t.start()
    for t in prod_threads:
        t.join(10)
    # Every item added must be processed after its last add: wait for the queue to go quiet.
    deadline = threading.Event()
    for _ in range(2000):
        with guard:
            settled = seen == wanted and not in_flight
        if settled and len(q) == 0:
            break
        deadline.wait(0.001)
    q.shut_down_with_drain()
    for t in work_threads:
        t.join(10)
    assert not any(t.is_alive() for t in work_threads + prod_threads)
    assert violations == []
    assert seen == wanted
    assert len(q) == 0
    assert processed[0] >= sum(1 for w in wanted if w)
    assert processed[0] <= producers * adds_per_producer


@pytest.mark.parametrize("workers", [1, 8])
def test_no_item_lost_or_duplicated_with_distinct_items(workers: int) -> None:
    q: Queue[int] = Queue()
    got: list[int] = []
    lock = threading.Lock()

    def work() -> None:
        while True:
            got_item = q.get()
            if got_item[1]:
                return
            item = got_item[0]
            with lock:
                got.append(item)
            q.done(item)

    threads = [threading.Thread(target=work) for _ in range(workers)]
    for t in threads:
        t.start()
    for i in range(5000):
        q.add(i)
    q.shut_down()
    for t in threads:
        t.join(10)
    assert sorted(got) == list(range(5000))


def test_get_or_notify_takes_at_once_else_calls_back_once_on_add_requeue_or_shutdown() -> None:
    """The awaitable bridge of async controllers (issue 25): never blocks; the callback runs once
    when an item becomes available (add, or a dirty item requeued at done) or at shutdown."""
    from samplecontroller.workqueue import Queue

    q: Queue[str] = Queue()
    calls: list[str] = []
    assert q.get_or_notify(lambda: calls.append("a")) is None
    q.add("x")
    assert calls == ["a"]
    q.add("y")
    assert calls == ["a"]  # once
    assert q.get_or_notify(lambda: calls.append("b")) == ("x", False)
    assert q.get_or_notify(lambda: calls.append("c")) == ("y", False)
    q.add("x")  # x is in processing: dirty, not waiting yet
    assert q.get_or_notify(lambda: calls.append("d")) is None
    assert calls == ["a"]
    q.done("x")  # requeued now
    assert calls == ["a", "d"]
    assert q.get_or_notify(lambda: calls.append("e")) == ("x", False)
    assert q.get_or_notify(lambda: calls.append("f")) is None
    q.shut_down()
    assert calls == ["a", "d", "f"]
    assert q.get_or_notify(lambda: calls.append("g")) == (None, True)
