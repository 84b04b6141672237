"""controller-runtime's priority queue (issue 42 item 3): order, de-duplication, delays and the
priority a request is requeued with."""

from __future__ import annotations

import threading

from samplecontroller.wait.clock import FakeClock
from samplecontroller.workqueue import LOW_PRIORITY, ItemExponentialFailureRateLimiter, PriorityQueue


def drain(q: PriorityQueue[str]) -> list[tuple[str, int]]:
    out = []
    while q.len():
        got = q.get()
        assert not got[1]
        item = got[0]
        assert item is not None
        out.append((item, q.priority_of(item)))
        q.done(item)
    return out


def test_higher_priority_first_fifo_within_one_priority() -> None:
    q: PriorityQueue[str] = PriorityQueue()
    for name in ("l1", "l2", "l3"):
        q.add_with_opts(name, priority=LOW_PRIORITY)  # a restart's initial list
    q.add("user")  # a user's change meanwhile
    q.add_with_opts("urgent", priority=10)
    q.add("user2")
    assert drain(q) == [("urgent", 10), ("user", 0), ("user2", 0), ("l1", LOW_PRIORITY),
                        ("l2", LOW_PRIORITY), ("l3", LOW_PRIORITY)]


def test_readding_keeps_the_higher_priority_and_moves_to_the_end_of_it() -> None:
    q: PriorityQueue[str] = PriorityQueue()
    q.add_with_opts("a", priority=LOW_PRIORITY)
    q.add_with_opts("b", priority=LOW_PRIORITY)
    q.add("c")
    q.add("a")  # a change to a listed object: raised to 0, after c
    q.add_with_opts("b", priority=LOW_PRIORITY)  # a resync: no change, not duplicated
    q.add_with_opts("c", priority=LOW_PRIORITY)  # never lowered
    assert drain(q) == [("c", 0), ("a", 0), ("b", LOW_PRIORITY)]


def test_an_item_in_flight_is_not_handed_out_twice_and_comes_back_at_its_priority() -> None:
    q: PriorityQueue[str] = PriorityQueue()
    q.add_with_opts("a", priority=LOW_PRIORITY)
    q.add("b")
    got = q.get()
    assert got == ("b", False)
    q.add("b")  # changed while it is reconciled: dirty, not handed out before done
    q.add_with_opts("x", priority=5)
    assert q.get() == ("x", False)
    q.done("x")
    assert q.get() == ("a", False)
    q.done("b")  # now b is ready again
    assert q.get() == ("b", False)
    assert q.priority_of("b") == 0
    q.done("b")
    q.done("a")
    assert q.len() == 0


def test_delayed_and_rate_limited_items_keep_their_priority() -> None:
    clock = FakeClock()
    q: PriorityQueue[str] = PriorityQueue(ItemExponentialFailureRateLimiter(1.0, 10.0), clock=clock)
    q.add_with_opts("low", priority=LOW_PRIORITY, after=5.0)
    q.add_with_opts("retry", priority=LOW_PRIORITY, rate_limited=True)  # 1 s backoff
    q.add("now")
    assert q.num_requeues("retry") == 1
    assert q.waiting_len() == 2
    clock.step(6.0)
    q.add("later")
    # both delayed items arrive (the timer thread) at their own low priority, after 0s
    deadline = threading.Event()
    for _ in range(400):
        if q.len() == 4:
            break
        deadline.wait(0.005)
    assert [(i, p) for i, p in q.waiting_priorities()] == [
        ("now", 0), ("later", 0), ("retry", LOW_PRIORITY), ("low", LOW_PRIORITY)]
    q.shut_down()


def test_an_add_makes_a_delayed_item_ready_at_once_and_raises_it() -> None:
    clock = FakeClock()
    q: PriorityQueue[str] = PriorityQueue(clock=clock)
    q.add_with_opts("a", priority=LOW_PRIORITY, after=100.0)
    q.add("a")
    assert q.waiting_priorities() == [("a", 0)]
    q.shut_down()


def test_shutdown_in_flight_drops_the_waiting_items() -> None:
    q: PriorityQueue[str] = PriorityQueue()
    q.add("a")
    q.add_with_opts("b", priority=LOW_PRIORITY)
    assert q.shut_down_in_flight(1.0)
    assert q.get() == (None, True)
    q.add("c")
    assert q.len() == 0
