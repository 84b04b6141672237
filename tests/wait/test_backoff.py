"""Backoff.step, the backoff managers, exponential_backoff and jitter: exact sequences."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from samplecontroller.wait import (
    Backoff,
    ExponentialBackoffManager,
    FakeClock,
    JitteredBackoffManager,
    WaitTimeoutError,
    exponential_backoff,
    jitter,
)


def test_step_without_steps_keeps_duration() -> None:
    b = Backoff(1.0, factor=2.0)
    assert [b.step() for _ in range(3)] == [1.0, 1.0, 1.0]


def test_step_grows_then_stays_when_steps_run_out() -> None:
    b = Backoff(1.0, factor=2.0, steps=3)
    assert [b.step() for _ in range(5)] == [1.0, 2.0, 4.0, 8.0, 8.0]
    assert b.steps == 0


def test_step_cap_ends_the_steps() -> None:
    b = Backoff(1.0, factor=3.0, steps=10, cap=5.0)
    assert [b.step() for _ in range(4)] == [1.0, 3.0, 5.0, 5.0]
    assert b.steps == 0


@given(duration=st.floats(0.01, 10), factor=st.floats(1.0, 4.0), steps=st.integers(0, 8),
       cap=st.sampled_from([0.0, 5.0, 50.0]), n=st.integers(1, 12))
def test_step_matches_model(duration: float, factor: float, steps: int, cap: float, n: int) -> None:
    b = Backoff(duration, factor, 0.0, steps, cap)
    d, s = duration, steps
    for _ in range(n):
        if s < 1:
            expected = d
        else:
            expected = d
            s -= 1
            nxt = d * factor
            if cap > 0 and nxt > cap:
                nxt, s = cap, 0
            d = nxt
        assert b.step() == expected


@given(st.floats(0.001, 100), st.floats(-1, 2))
def test_jitter_bounds(duration: float, factor: float) -> None:
    f = 1.0 if factor <= 0 else factor
    for _ in range(20):
        j = jitter(duration, factor)
        assert duration <= j <= duration * (1 + f)


def test_step_with_jitter_stays_in_range() -> None:
    b = Backoff(1.0, factor=2.0, jitter=0.5, steps=4)
    for base in (1.0, 2.0, 4.0, 8.0):
        assert base <= b.step() <= base * 1.5


def test_exponential_manager_doubles_caps_and_resets() -> None:
    clock = FakeClock()
    m = ExponentialBackoffManager(0.8, 30.0, 120.0, 2.0, 0.0, clock)
    delays = [m.backoff() for _ in range(8)]
    assert delays == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0]
    clock.step(120.0)  # not more than reset_duration: keeps going
    assert m.backoff() == 30.0
    clock.step(120.001)
    assert m.backoff() == 0.8
    assert m.next() == 1.6
    m.reset()
    assert m.backoff() == 0.8


def test_reflector_defaults_with_jitter() -> None:
    m = ExponentialBackoffManager(0.8, 30.0, 120.0, 2.0, 1.0, FakeClock())
    for base in (0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0):
        assert base <= m.backoff() <= 2 * base


def test_manager_validation() -> None:
    with pytest.raises(ValueError, match="initial"):
        ExponentialBackoffManager(0, 1, 1)
    with pytest.raises(ValueError, match="duration"):
        Backoff(-1)


def test_reflector_default_backoff_doubles_to_its_maximum() -> None:
    from samplecontroller.cache.reflector import default_backoff

    plain = ExponentialBackoffManager(0.8, 30.0, 120.0, 2.0, 0.0)
    assert [plain.backoff() for _ in range(8)] == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0]
    jittered = default_backoff()
    for _ in range(40):
        assert 0.8 <= jittered.backoff() <= 60.0


def test_jittered_manager() -> None:
    assert JitteredBackoffManager(2.0).backoff() == 2.0
    for _ in range(20):
        assert 2.0 <= JitteredBackoffManager(2.0, 0.5).backoff() <= 3.0


def test_exponential_backoff_succeeds_and_sleeps_between_tries() -> None:
    clock = FakeClock()
    sleeps: list[float] = []
    clock.sleep = sleeps.append  # type: ignore[method-assign,assignment]
    calls = iter([False, False, True])
    b = Backoff(0.01, factor=2.0, steps=5)
    exponential_backoff(b, lambda: next(calls), clock=clock)
    assert sleeps == [0.01, 0.02]
    assert b.steps == 5  # the caller's Backoff is not consumed


def test_exponential_backoff_times_out_after_steps() -> None:
    clock = FakeClock()
    sleeps: list[float] = []
    clock.sleep = sleeps.append  # type: ignore[method-assign,assignment]
    calls: list[int] = []

    def cond() -> bool:
        calls.append(1)
        return False

    with pytest.raises(WaitTimeoutError):
        exponential_backoff(Backoff(1.0, factor=1.5, steps=4), cond, clock=clock)
    assert len(calls) == 4 and sleeps == [1.0, 1.5, 2.25]


def test_exponential_backoff_propagates_errors() -> None:
    def boom() -> bool:
        raise KeyError("x")

    with pytest.raises(KeyError):
        exponential_backoff(Backoff(1.0, steps=3), boom)
