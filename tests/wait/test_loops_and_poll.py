"""until / jitter_until / backoff_until / poll helpers, in real (short) time with stop events."""

from __future__ import annotations

import itertools
import threading
import time

import pytest

from samplecontroller.wait import (
    FakeClock,
    WaitTimeoutError,
    backoff_until,
    jitter_until,
    non_sliding_until,
    poll,
    poll_immediate,
    poll_immediate_until,
    poll_until,
    until,
)


def test_until_stops_and_runs_at_least_once() -> None:
    stop = threading.Event()
    calls: list[float] = []

    def fn() -> None:
        calls.append(time.monotonic())
        if len(calls) == 3:
            stop.set()

    t = threading.Thread(target=until, args=(fn, 0.01, stop))
    t.start()
    t.join(30)
    assert not t.is_alive() and len(calls) == 3
    assert all(b - a >= 0.009 for a, b in itertools.pairwise(calls))


def test_until_with_stop_already_set_never_calls() -> None:
    stop = threading.Event()
    stop.set()
    calls: list[int] = []
    until(lambda: calls.append(1), 0.01, stop)
    assert calls == []


def test_stop_interrupts_the_wait() -> None:
    stop = threading.Event()
    t = threading.Thread(target=until, args=(lambda: None, 60.0, stop))
    t.start()
    time.sleep(0.02)
    started = time.monotonic()
    stop.set()
    t.join(30)
    assert not t.is_alive() and time.monotonic() - started < 10  # not the 60 s wait


def test_sliding_vs_non_sliding_period() -> None:
    def run(sliding: bool) -> list[float]:
        stop = threading.Event()
        starts: list[float] = []

        def fn() -> None:
            starts.append(time.monotonic())
            time.sleep(0.04)
            if len(starts) == 3:
                stop.set()

        jitter_until(fn, 0.05, 0.0, sliding, stop)
        return [b - a for a, b in itertools.pairwise(starts)]

    for gap in run(sliding=True):  # period after the call ends: 0.04 + 0.05
        assert gap >= 0.089
    gaps = run(sliding=False)  # period from the start of the call: about 0.05
    assert min(gaps) >= 0.045
    assert sum(gaps) / len(gaps) < 0.085


def test_non_sliding_until_runs() -> None:
    stop = threading.Event()
    calls: list[int] = []

    def fn() -> None:
        calls.append(1)
        if len(calls) == 2:
            stop.set()

    non_sliding_until(fn, 0.001, stop)
    assert calls == [1, 1]


def test_exception_propagates() -> None:
    def boom() -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        until(boom, 0.01, threading.Event())


class Recording:
    def __init__(self, delays: list[float]) -> None:
        self.delays = delays
        self.calls = 0

    def backoff(self) -> float:
        self.calls += 1
        return self.delays.pop(0)


def test_backoff_until_uses_the_manager() -> None:
    stop = threading.Event()
    manager = Recording([0.001, 0.002, 0.003])
    runs: list[int] = []

    def fn() -> None:
        runs.append(1)
        if len(runs) == 3:
            stop.set()

    backoff_until(fn, manager, True, stop)
    assert len(runs) == 3 and manager.calls == 3


def test_poll_immediate_checks_at_once() -> None:
    calls: list[int] = []

    def cond() -> bool:
        calls.append(1)
        return True

    poll_immediate(10.0, 1.0, cond)
    assert calls == [1]


def test_poll_waits_an_interval_first_and_times_out() -> None:
    calls: list[float] = []
    started = time.monotonic()

    def cond() -> bool:
        calls.append(time.monotonic())
        return False

    with pytest.raises(WaitTimeoutError):
        poll(0.01, 0.05, cond)
    assert calls and calls[0] - started >= 0.009
    assert time.monotonic() - started < 10  # far below a hang, above a loaded machine's stalls


def test_poll_until_true_and_stopped() -> None:
    stop = threading.Event()
    n = iter(range(100))
    poll_until(0.001, lambda: next(n) == 3, stop)
    stop.set()
    with pytest.raises(WaitTimeoutError):
        poll_until(0.001, lambda: False, stop)
    with pytest.raises(WaitTimeoutError):
        poll_immediate_until(0.001, lambda: True, stop)  # stopped before the first check


def test_poll_errors_propagate_and_bad_interval() -> None:
    def boom() -> bool:
        raise ValueError("x")

    with pytest.raises(ValueError, match="x"):
        poll_immediate(0.01, 1, boom)
    with pytest.raises(ValueError, match="interval"):
        poll(0, 1, lambda: True)


def test_fake_clock_sleep_and_wait() -> None:
    clock = FakeClock(10.0)
    woke = threading.Event()

    def sleeper() -> None:
        clock.sleep(5.0)
        woke.set()

    threading.Thread(target=sleeper, daemon=True).start()
    assert clock.wait_for_waiters(1)
    clock.step(4.0)
    assert clock.wait_for_waiters(1)  # still asleep, and has seen the step
    assert not woke.is_set()
    clock.step(1.0)
    assert woke.wait(30)
    assert clock.now() == 15.0
    with pytest.raises(ValueError):
        clock.step(-1)
    cond = threading.Condition()
    with cond:
        clock.wait(cond, 15.0)  # already due: returns at once
