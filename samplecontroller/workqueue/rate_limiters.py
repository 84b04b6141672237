"""Rate limiters, like client-go's util/workqueue/default_rate_limiters.go.

A limiter answers ``when(item)``: how long to wait before the item may be processed again, and
remembers failures until ``forget(item)``. ``num_requeues(item)`` is the failure count it keeps.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar

from samplecontroller.flowcontrol import TokenBucket
from samplecontroller.wait.clock import REAL_CLOCK, Clock

T = TypeVar("T", bound=Hashable)
T_contra = TypeVar("T_contra", bound=Hashable, contravariant=True)


class RateLimiter(Protocol[T_contra]):
    """Decides how long an item waits before it is retried (client-go's RateLimiter)."""

    def when(self, item: T_contra) -> float:
        """How long ``item`` waits before its retry (counts a failure)."""

    def forget(self, item: T_contra) -> None:
        """Reset ``item``'s failures."""

    def num_requeues(self, item: T_contra) -> int:
        """How many failures of ``item`` are counted."""


class ItemExponentialFailureRateLimiter(Generic[T]):
    """``base * 2**failures`` per item, capped at ``max_delay`` (Go: 5 ms and 1000 s by default)."""

    def __init__(self, base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        if base_delay < 0 or max_delay < 0:
            raise ValueError(f"delays must be >= 0, got base_delay={base_delay} max_delay={max_delay}")
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._lock = threading.Lock()
        self._failures: dict[T, int] = {}

    def when(self, item: T) -> float:
        with self._lock:
            exp = self._failures.get(item, 0)
            self._failures[item] = exp + 1
        if exp > 1000:  # 2.0**exp would overflow a float; Go caps at MaxInt64 ns the same way
            return self.max_delay
        backoff = self.base_delay * (2.0**exp)
        return backoff if backoff < self.max_delay else self.max_delay

    def forget(self, item: T) -> None:
        with self._lock:
            self._failures.pop(item, None)

    def num_requeues(self, item: T) -> int:
        with self._lock:
            return self._failures.get(item, 0)


class ItemFastSlowRateLimiter(Generic[T]):
    """``fast_delay`` for the first ``max_fast_attempts`` failures of an item, then ``slow_delay``."""

    def __init__(self, fast_delay: float, slow_delay: float, max_fast_attempts: int) -> None:
        self.fast_delay = fast_delay
        self.slow_delay = slow_delay
        self.max_fast_attempts = max_fast_attempts
        self._lock = threading.Lock()
        self._failures: dict[T, int] = {}

    def when(self, item: T) -> float:
        with self._lock:
            n = self._failures.get(item, 0) + 1
            self._failures[item] = n
        return self.fast_delay if n <= self.max_fast_attempts else self.slow_delay

    def forget(self, item: T) -> None:
        with self._lock:
            self._failures.pop(item, None)

    def num_requeues(self, item: T) -> int:
        with self._lock:
            return self._failures.get(item, 0)


class BucketRateLimiter(Generic[T]):
    """One token bucket for all items (golang.org/x/time/rate's Limiter): ``qps`` refill, ``burst`` size.

    ``when`` reserves a token and returns how long until it is available (0 while tokens are
    left); reservations queue up, so n calls beyond the burst wait about n / qps. ``qps`` may be
    ``math.inf`` (never waits). It keeps no per-item state: ``forget`` does nothing and
    ``num_requeues`` is 0.
    """

    def __init__(self, qps: float = 10.0, burst: int = 100, clock: Clock = REAL_CLOCK) -> None:
        self.qps = float(qps)
        self.burst = burst
        self._bucket = TokenBucket(qps, burst, clock=clock.now)

    def when(self, item: T) -> float:
        return self._bucket.reserve()

    def forget(self, item: T) -> None:
        return

    def num_requeues(self, item: T) -> int:
        return 0


class MaxOfRateLimiter(Generic[T]):
    """The longest delay of several limiters; failures are the largest count among them."""

    def __init__(self, *limiters: RateLimiter[T]) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one limiter")
        self.limiters = limiters

    def when(self, item: T) -> float:
        return max(limiter.when(item) for limiter in self.limiters)

    def forget(self, item: T) -> None:
        for limiter in self.limiters:
            limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return max(limiter.num_requeues(item) for limiter in self.limiters)


class WithMaxWaitRateLimiter(Generic[T]):
    """Caps another limiter's delay at ``max_delay``."""

    def __init__(self, limiter: RateLimiter[T], max_delay: float) -> None:
        self.limiter = limiter
        self.max_delay = max_delay

    def when(self, item: T) -> float:
        return min(self.limiter.when(item), self.max_delay)

    def forget(self, item: T) -> None:
        self.limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return self.limiter.num_requeues(item)


def default_item_based_rate_limiter() -> ItemExponentialFailureRateLimiter[T]:
    """client-go's DefaultItemBasedRateLimiter: exponential 1 ms .. 1000 s."""
    return ItemExponentialFailureRateLimiter(0.001, 1000.0)


def default_controller_rate_limiter() -> MaxOfRateLimiter[T]:
    """client-go's default: MaxOf(exponential 5 ms .. 1000 s, bucket 10 qps burst 100)."""
    return MaxOfRateLimiter(ItemExponentialFailureRateLimiter(0.005, 1000.0), BucketRateLimiter(10.0, 100))
