"""DelayingQueue with a fake clock: exact times, ordering, earlier-time-wins de-duplication, shutdown."""

from __future__ import annotations

import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samplecontroller.wait.clock import FakeClock
from samplecontroller.workqueue import DelayingQueue
from samplecontroller.workqueue.testing import get_item, wait_for_timer


def settle(clock: FakeClock, q: DelayingQueue[str]) -> None:
    """Wait until the timer thread has seen the latest step and waits for the next due time."""
    assert wait_for_timer(q, clock)


def drain_ready(q: DelayingQueue[str]) -> list[str]:
    out = []
    while len(q):
        item = get_item(q)
        q.done(item)
        out.append(item)
    return out


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def test_non_positive_delay_adds_now(clock: FakeClock) -> None:
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("a", 0)
    q.add_after("b", -1)
    assert drain_ready(q) == ["a", "b"]
    q.shut_down()


def test_item_becomes_ready_exactly_at_its_time(clock: FakeClock) -> None:
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("a", 1.0)
    settle(clock, q)
    assert len(q) == 0 and q.waiting_len() == 1
    clock.step(0.999)
    settle(clock, q)
    assert len(q) == 0
    clock.step(0.001)
    assert q.get() == ("a", False)  # blocks until the timer adds it
    assert q.waiting_len() == 0
    q.shut_down()


def test_earlier_time_wins(clock: FakeClock) -> None:
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("a", 5.0)
    q.add_after("a", 1.0)  # earlier: replaces
    q.add_after("a", 3.0)  # later: ignored
    settle(clock, q)
    assert q.waiting_len() == 1
    clock.step(1.0)
    assert q.get() == ("a", False)
    q.done("a")
    clock.step(4.0)
    settle(clock, q)
    assert len(q) == 0  # the superseded 3 s and 5 s entries never fire
    q.shut_down()


def test_items_ready_in_time_order(clock: FakeClock) -> None:
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("c", 3.0)
    q.add_after("a", 1.0)
    q.add_after("b", 2.0)
    q.add_after("b2", 2.0)
    settle(clock, q)
    clock.step(10.0)
    got = [q.get()[0] for _ in range(4)]
    assert got == ["a", "b", "b2", "c"]
    q.shut_down()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcdef"), st.integers(1, 20)), min_size=1, max_size=15),
       st.integers(0, 22))
def test_ready_set_matches_model(adds: list[tuple[str, int]], step: int) -> None:
    clock = FakeClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    earliest: dict[str, int] = {}
    for item, delay in adds:
        q.add_after(item, float(delay))
        earliest[item] = min(delay, earliest.get(item, delay))
    settle(clock, q)
    clock.step(float(step))
    settle(clock, q)
    expected = sorted((t, i) for i, t in earliest.items() if t <= step)
    got = drain_ready(q)
    assert set(got) == {i for _, i in expected}
    assert [earliest[i] for i in got] == sorted(earliest[i] for i in got)
    assert q.waiting_len() == len(earliest) - len(expected)
    q.shut_down()


def test_shutdown_drops_waiting_items_and_stops_timer(clock: FakeClock) -> None:
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("a", 1.0)
    settle(clock, q)
    q.shut_down()
    assert q._timer is not None and not q._timer.is_alive()
    q.add_after("b", 1.0)  # ignored
    clock.step(5.0)
    assert q.get()[1] is True
    assert q.waiting_len() == 0


def test_no_timer_thread_until_a_delayed_add() -> None:
    before = threading.active_count()
    q: DelayingQueue[str] = DelayingQueue()
    q.add_after("now", 0)
    assert threading.active_count() == before
    q.shut_down()


def test_real_clock_delay() -> None:
    """An item added later with a sooner deadline comes out first. The premise needs the two adds
    within 40 ms of each other; on a machine too busy for that, the round is tried again."""
    for _ in range(20):
        q: DelayingQueue[str] = DelayingQueue()
        started = time.monotonic()
        q.add_after("late", 0.05)
        q.add_after("early", 0.01)
        if time.monotonic() - started < 0.04:
            break
        q.shut_down()
    else:
        pytest.skip("the machine never ran two adds within 40 ms")
    for expected in ("early", "late"):
        item = get_item(q)
        assert item == expected
        q.done(item)
    q.shut_down_with_drain()
    assert q._timer is not None and not q._timer.is_alive()
