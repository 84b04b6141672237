"""Exact delays of every rate limiter (fake clock for the token bucket) and the rate-limiting queue."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samplecontroller.wait.clock import FakeClock
from samplecontroller.workqueue import (
    BucketRateLimiter,
    DelayingInterface,
    DelayingQueue,
    Interface,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    Queue,
    RateLimiter,
    RateLimitingInterface,
    RateLimitingQueue,
    WithMaxWaitRateLimiter,
    default_controller_rate_limiter,
    new_named_rate_limiting_queue,
)
from samplecontroller.workqueue.testing import get_item, wait_for_timer


@given(base=st.sampled_from([0.001, 0.005, 0.1, 1.0]), cap=st.sampled_from([0.5, 10.0, 1000.0]),
       failures=st.integers(1, 80))
def test_exponential_exact_delays(base: float, cap: float, failures: int) -> None:
    rl: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(base, cap)
    delays = [rl.when("one") for _ in range(failures)]
    assert delays == [min(base * 2**i, cap) for i in range(failures)]
    assert rl.num_requeues("one") == failures
    assert rl.when("other") == min(base, cap)  # per item
    rl.forget("one")
    assert rl.num_requeues("one") == 0
    assert rl.when("one") == min(base, cap)


def test_exponential_defaults_and_overflow() -> None:
    rl: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter()
    assert [rl.when("x") for _ in range(3)] == [0.005, 0.01, 0.02]
    for _ in range(2000):  # far past float range: capped, never an OverflowError
        assert rl.when("x") <= 1000.0
    assert rl.when("x") == 1000.0


@given(fast=st.sampled_from([0.0, 0.01, 1.0]), slow=st.sampled_from([5.0, 60.0]), attempts=st.integers(0, 5),
       failures=st.integers(1, 10))
def test_fast_slow_exact_delays(fast: float, slow: float, attempts: int, failures: int) -> None:
    rl: ItemFastSlowRateLimiter[str] = ItemFastSlowRateLimiter(fast, slow, attempts)
    delays = [rl.when("x") for _ in range(failures)]
    assert delays == [fast if i < attempts else slow for i in range(failures)]
    assert rl.num_requeues("x") == failures
    rl.forget("x")
    assert rl.num_requeues("x") == 0


def test_bucket_burst_then_qps() -> None:
    clock = FakeClock()
    rl: BucketRateLimiter[str] = BucketRateLimiter(10.0, 3, clock=clock)
    assert [rl.when("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    # Reservations beyond the burst queue up at 1/qps each.
    assert rl.when("a") == pytest.approx(0.1)
    assert rl.when("b") == pytest.approx(0.2)
    clock.step(0.2)  # the two reservations are paid back: empty bucket
    assert rl.when("a") == pytest.approx(0.1)
    clock.step(10.0)  # refills up to the burst only
    assert [rl.when("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert rl.when("a") == pytest.approx(0.1)
    assert rl.num_requeues("a") == 0
    rl.forget("a")  # no per-item memory


@settings(max_examples=60)
@given(qps=st.sampled_from([1.0, 10.0, 100.0]), burst=st.integers(1, 20),
       steps=st.lists(st.tuples(st.integers(0, 50), st.integers(1, 5)), min_size=1, max_size=20))
def test_bucket_matches_token_model(qps: float, burst: int, steps: list[tuple[int, int]]) -> None:
    clock = FakeClock()
    rl: BucketRateLimiter[int] = BucketRateLimiter(qps, burst, clock=clock)
    tokens = float(burst)
    for ms, calls in steps:
        clock.step(ms / 1000)
        tokens = min(float(burst), tokens + ms / 1000 * qps)
        for _ in range(calls):
            tokens -= 1
            expected = 0.0 if tokens >= 0 else -tokens / qps
            assert rl.when(0) == pytest.approx(expected, abs=1e-9)


def test_bucket_validation_and_inf() -> None:
    with pytest.raises(ValueError, match="qps > 0"):
        BucketRateLimiter(0, 1)
    with pytest.raises(ValueError, match="burst >= 1"):
        BucketRateLimiter(1, 0)
    rl: BucketRateLimiter[str] = BucketRateLimiter(math.inf, 1)
    assert [rl.when("x") for _ in range(5)] == [0.0] * 5


def test_max_of_and_with_max_wait() -> None:
    clock = FakeClock()
    fast_slow: ItemFastSlowRateLimiter[str] = ItemFastSlowRateLimiter(0.001, 3.0, 2)
    exp: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(0.5, 100.0)
    rl = MaxOfRateLimiter(fast_slow, exp, BucketRateLimiter(1.0, 100, clock=clock))
    assert [rl.when("x") for _ in range(5)] == [0.5, 1.0, 3.0, 4.0, 8.0]
    assert rl.num_requeues("x") == 5
    rl.forget("x")
    assert rl.num_requeues("x") == 0 and fast_slow.num_requeues("x") == 0 and exp.num_requeues("x") == 0
    with pytest.raises(ValueError):
        MaxOfRateLimiter()
    capped = WithMaxWaitRateLimiter(ItemExponentialFailureRateLimiter[str](1.0, 1000.0), 3.0)
    assert [capped.when("x") for _ in range(4)] == [1.0, 2.0, 3.0, 3.0]
    assert capped.num_requeues("x") == 4
    capped.forget("x")
    assert capped.when("x") == 1.0


def test_default_controller_rate_limiter() -> None:
    rl: MaxOfRateLimiter[str] = default_controller_rate_limiter()
    first = [rl.when("x") for _ in range(3)]
    assert first == [0.005, 0.01, 0.02]  # the bucket (burst 100) does not bite yet
    bucket = rl.limiters[1]
    assert isinstance(bucket, BucketRateLimiter) and (bucket.qps, bucket.burst) == (10.0, 100)
    exp = rl.limiters[0]
    assert isinstance(exp, ItemExponentialFailureRateLimiter) and (exp.base_delay, exp.max_delay) == (0.005, 1000.0)


def test_rate_limiting_queue_with_fake_clock() -> None:
    clock = FakeClock()
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(1.0, 10.0)
    q: RateLimitingQueue[str] = RateLimitingQueue(limiter, clock=clock)
    q.add_rate_limited("x")  # 1 s
    assert q.num_requeues("x") == 1
    assert wait_for_timer(q, clock)
    clock.step(0.5)
    assert wait_for_timer(q, clock)
    assert len(q) == 0
    clock.step(0.5)
    assert q.get() == ("x", False)
    q.add_rate_limited("x")  # 2 s (while processing: becomes dirty when due)
    q.done("x")
    clock.step(1.0)
    assert wait_for_timer(q, clock)
    assert len(q) == 0
    clock.step(1.0)
    assert q.get() == ("x", False)
    q.forget("x")
    assert q.num_requeues("x") == 0
    q.done("x")
    q.shut_down()


def test_named_rate_limiting_queue_default_limiter() -> None:
    q: RateLimitingQueue[str] = new_named_rate_limiting_queue(default_controller_rate_limiter(), "")
    q.add_rate_limited("k")
    item = get_item(q)  # 5 ms real time
    assert item == "k"
    q.done(item)
    q.shut_down()


def test_queues_satisfy_the_protocols() -> None:
    """Checked by mypy: each queue type implements its client-go interface."""
    rq: RateLimitingQueue[str] = RateLimitingQueue()
    as_rl: RateLimitingInterface[str] = rq
    as_delaying: DelayingInterface[str] = DelayingQueue[str]()
    as_plain: Interface[str] = Queue[str]()
    limiter: RateLimiter[str] = default_controller_rate_limiter()
    for q in (as_rl, as_delaying, as_plain):
        q.add("x")
        assert q.len() == 1
        q.shut_down()
    assert limiter.when("x") == 0.005
