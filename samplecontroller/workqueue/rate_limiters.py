"""Rate limiters, like client-go's util/workqueue/default_rate_limiters.go.

A limiter answers ``when(item)``: how long to wait before the item may be processed again, and
remembers failures until ``forget(item)``. ``num_requeues(item)`` is the failure count it keeps.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar

T = TypeVar("T", bound=Hashable)
T_contra = TypeVar("T_contra", bound=Hashable, contravariant=True)


class RateLimiter(Protocol[T_contra]):
    def when(self, item: T_contra) -> float: ...
    def forget(self, item: T_contra) -> None: ...
    def num_requeues(self, item: T_contra) -> int: ...


class ItemExponentialFailureRateLimiter(Generic[T]):
    """``base * 2**failures`` per item, capped at ``max_delay`` (Go: 5 ms and 1000 s by default)."""

    def __init__(self, base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._lock = threading.Lock()
        self._failures: dict[T, int] = {}

    def when(self, item: T) -> float:
        with self._lock:
            exp = self._failures.get(item, 0)
            self._failures[item] = exp + 1
        if exp > 1023:  # 2**exp overflows a float long before this; Go caps the same way
            return self.max_delay
        return min(self.base_delay * (2.0**exp), self.max_delay)

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
    """An overall token bucket (``qps`` refill, ``burst`` size), not per item: Go's rate.Limiter.

    ``when`` reserves a token and returns the wait until it is available. It never forgets.
    """

    def __init__(self, qps: float = 10.0, burst: int = 100, clock: object | None = None) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError("BucketRateLimiter needs qps > 0 and burst >= 1")
        self.qps = qps
        self.burst = burst
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._last = time.monotonic()

    def when(self, item: T) -> float:
        with self._lock:
            now = time.monotonic()
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1.0
            if self._tokens >= 0:
                return 0.0
            return -self._tokens / self.qps

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


def default_controller_rate_limiter() -> MaxOfRateLimiter[T]:
    """client-go's default: MaxOf(exponential 5 ms .. 1000 s, bucket 10 qps burst 100)."""
    return MaxOfRateLimiter(ItemExponentialFailureRateLimiter(0.005, 1000.0), BucketRateLimiter(10.0, 100))
