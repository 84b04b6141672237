"""wait.Context: cancellation, done-callbacks, children, timeouts and adapting plain Events."""

from __future__ import annotations

import functools
import threading

import pytest

from samplecontroller.wait import (
    Canceled,
    Context,
    DeadlineExceeded,
    FakeClock,
    as_context,
    sleep,
    with_cancel,
    with_timeout,
)


def test_cancel_runs_callbacks_once_in_order_and_is_idempotent() -> None:
    ctx = Context()
    calls: list[str] = []
    ctx.add_done_callback(lambda: calls.append("a"))
    ctx.add_done_callback(lambda: calls.append("b"))
    assert not ctx.done() and ctx.err() is None and calls == []
    ctx.cancel()
    ctx.cancel()
    ctx.set()
    assert ctx.done() and ctx.is_set() and ctx.wait(0)
    assert isinstance(ctx.err(), Canceled)
    assert calls == ["a", "b"]


def test_callback_added_after_cancel_runs_at_once_in_the_caller() -> None:
    ctx = Context()
    ctx.set()
    ran: list[threading.Thread] = []
    assert ctx.add_done_callback(lambda: ran.append(threading.current_thread())) == 0
    assert ran == [threading.current_thread()]


def test_removed_callback_does_not_run() -> None:
    ctx = Context()
    calls: list[int] = []
    handle = ctx.add_done_callback(lambda: calls.append(1))
    ctx.add_done_callback(lambda: calls.append(2))
    ctx.remove_done_callback(handle)
    ctx.remove_done_callback(12345)
    ctx.cancel()
    assert calls == [2]


def test_a_failing_callback_does_not_stop_the_others() -> None:
    ctx = Context()
    calls: list[int] = []

    def boom() -> None:
        raise ValueError("boom")

    ctx.add_done_callback(boom)
    ctx.add_done_callback(lambda: calls.append(1))
    ctx.cancel()
    assert calls == [1]


def test_a_context_cannot_be_cleared() -> None:
    ctx = Context()
    ctx.cancel()
    with pytest.raises(RuntimeError, match="un-cancelled"):
        ctx.clear()
    assert ctx.done()


def test_children_are_cancelled_with_their_parent_not_the_other_way() -> None:
    root = Context()
    child = with_cancel(root)
    grandchild = with_cancel(child)
    sibling = with_cancel(root)
    child.cancel()
    assert child.done() and grandchild.done()
    assert not root.done() and not sibling.done()
    root.cancel()
    assert sibling.done() and isinstance(sibling.err(), Canceled)


def test_a_cancelled_child_unregisters_from_its_parent() -> None:
    root = Context()
    for _ in range(100):
        with_cancel(root).cancel()
    assert root._callbacks == {}


def test_child_of_a_done_parent_is_done_at_once() -> None:
    root = Context()
    root.cancel()
    assert with_cancel(root).done()
    assert with_cancel(None).done() is False


def test_with_timeout_ends_with_deadline_exceeded() -> None:
    ctx = with_timeout(None, 0.01)
    assert ctx.wait(10)
    assert isinstance(ctx.err(), DeadlineExceeded)
    assert isinstance(with_timeout(None, 0).err(), DeadlineExceeded)


def test_with_timeout_child_of_a_cancelled_parent_says_canceled() -> None:
    root = Context()
    ctx = with_timeout(root, 3600)
    assert not ctx.done()
    root.cancel()
    assert ctx.done() and isinstance(ctx.err(), Canceled)


def test_as_context_returns_a_context_itself_and_a_fresh_one_for_none() -> None:
    ctx = Context()
    assert as_context(ctx) is ctx
    fresh = as_context(None)
    assert isinstance(fresh, Context) and not fresh.done()


def test_a_plain_event_is_bridged_once_and_cancels_its_context() -> None:
    event = threading.Event()
    others = {t for t in threading.enumerate() if t.name == "context-from-event"}  # other tests' events
    ctx = as_context(event)
    assert as_context(event) is ctx
    bridges = [t for t in threading.enumerate() if t.name == "context-from-event" and t not in others]
    fired = threading.Event()
    ctx.add_done_callback(fired.set)
    event.set()
    assert fired.wait(10) and ctx.done()
    for t in bridges:
        t.join(10)
    already = threading.Event()
    already.set()
    assert as_context(already).done()


def _race_adders_against_cancel() -> list[int]:
    ctx = Context()
    counts = [0] * 400
    lock = threading.Lock()

    def bump(i: int) -> None:
        with lock:
            counts[i] += 1

    def adder(start: int) -> None:
        for i in range(start, start + 100):
            ctx.add_done_callback(functools.partial(bump, i))

    threads = [threading.Thread(target=adder, args=(k * 100,)) for k in range(4)]
    for t in threads:
        t.start()
    ctx.cancel()
    for t in threads:
        t.join()
    return counts


def test_callbacks_added_while_cancelling_each_run_exactly_once() -> None:
    for _ in range(20):
        assert _race_adders_against_cancel() == [1] * 400


def _sleep_in_thread(stop: threading.Event, seconds: float, clock: FakeClock) -> tuple[threading.Thread, list[bool]]:
    out: list[bool] = []
    t = threading.Thread(target=lambda: out.append(sleep(stop, seconds, clock)), daemon=True)
    t.start()
    return t, out


def test_sleep_on_a_fake_clock_ends_when_the_clock_reaches_the_deadline() -> None:
    clock = FakeClock()
    t, out = _sleep_in_thread(Context(), 2.0, clock)
    assert clock.wait_for_waiters(1)
    clock.step(1.5)
    assert clock.wait_for_waiters(1) and out == []  # still asleep at 1.5 s
    clock.step(0.5)
    t.join(10)
    assert out == [False]


def test_sleep_on_a_fake_clock_ends_when_stop_is_set() -> None:
    clock = FakeClock(max_real_wait=60.0)  # a missed wake-up would hang for a minute
    for stop in (Context(), threading.Event()):
        t, out = _sleep_in_thread(stop, 3600.0, clock)
        assert clock.wait_for_waiters(1)
        stop.set()
        t.join(30)
        assert out == [True] and clock.now() == 0.0
    assert sleep(Context(), 0.0, clock) is False
