"""Client-side throttling: the token bucket's exact waits (a fake clock) and its use by RESTClient."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from samplecontroller.flowcontrol import TokenBucket

from .conftest import MiniServer


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_a_burst_passes_then_requests_are_spaced_by_one_over_qps() -> None:
    clock = FakeClock()
    bucket = TokenBucket(5.0, 10, clock=clock, sleep=clock.sleep)
    for _ in range(10):
        bucket.accept()
    assert clock.slept == []
    bucket.accept()
    bucket.accept()
    assert clock.slept == pytest.approx([0.2, 0.2])


def test_tokens_refill_while_idle_up_to_the_burst() -> None:
    clock = FakeClock()
    bucket = TokenBucket(2.0, 3, clock=clock, sleep=clock.sleep)
    assert [bucket.reserve() for _ in range(3)] == [0.0, 0.0, 0.0]
    clock.now += 60  # a long idle spell refills 3 tokens, not 120
    assert [bucket.reserve() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.reserve() == pytest.approx(0.5)
    assert bucket.reserve() == pytest.approx(1.0)  # waiters queue up: each reserves the next token


@given(qps=st.floats(0.5, 1000), burst=st.integers(1, 50), n=st.integers(1, 200))
def test_never_faster_than_qps_after_the_burst(qps: float, burst: int, n: int) -> None:
    clock = FakeClock()
    bucket = TokenBucket(qps, burst, clock=clock, sleep=clock.sleep)
    start = clock.now
    for _ in range(n):
        bucket.accept()
    assert clock.now - start >= max(0, n - burst) / qps - 1e-6
    assert clock.now - start <= max(0, n - burst) / qps + 1e-6


def test_bad_settings_are_rejected() -> None:
    with pytest.raises(ValueError, match="qps > 0"):
        TokenBucket(0, 1)
    with pytest.raises(ValueError, match="burst >= 1"):
        TokenBucket(1, 0)


def test_rest_client_waits_for_a_token_before_each_request(server: MiniServer) -> None:
    rest = server.rest()
    assert rest.throttle is None  # off by default
    clock = FakeClock()
    rest.throttle = TokenBucket(10.0, 2, clock=clock, sleep=clock.sleep)
    for _ in range(4):
        rest.request("GET", "/api")
    assert clock.slept == pytest.approx([0.1, 0.1])
