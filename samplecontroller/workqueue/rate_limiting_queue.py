"""A delaying queue that consults a rate limiter, like client-go's rate_limiting_queue.go."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol, TypeVar

from samplecontroller.wait.clock import REAL_CLOCK, Clock
from samplecontroller.workqueue.delaying_queue import DelayingInterface, DelayingQueue
from samplecontroller.workqueue.metrics import MetricsProvider
from samplecontroller.workqueue.rate_limiters import RateLimiter, default_controller_rate_limiter

T = TypeVar("T", bound=Hashable)

__all__ = ["RateLimitingInterface", "RateLimitingQueue", "new_named_rate_limiting_queue",
           "new_rate_limiting_queue"]


class RateLimitingInterface(DelayingInterface[T], Protocol[T]):
    """A delaying queue with per-item retry accounting (client-go's RateLimitingInterface)."""

    def add_rate_limited(self, item: T) -> None:
        """Add ``item`` after the rate limiter's delay for it."""

    def forget(self, item: T) -> None:
        """Stop tracking ``item``'s failures (call it after a success)."""

    def num_requeues(self, item: T) -> int:
        """How many times ``item`` was rate-limited since it was last forgotten."""


class RateLimitingQueue(DelayingQueue[T]):
    """``add_rate_limited`` waits as long as the limiter says; ``forget`` clears its memory.

    ``rate_limiter`` defaults to ``default_controller_rate_limiter()``.
    """

    def __init__(self, rate_limiter: RateLimiter[T] | None = None, name: str = "", *,
                 metrics_provider: MetricsProvider | None = None, clock: Clock = REAL_CLOCK) -> None:
        super().__init__(name, metrics_provider=metrics_provider, clock=clock)
        self.rate_limiter: RateLimiter[T] = rate_limiter or default_controller_rate_limiter()

    def add_rate_limited(self, item: T) -> None:
        """Add ``item`` after the limiter's delay for it (counts as a retry)."""
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: T) -> None:
        """The item succeeded: reset its failure count (does not remove it from the queue)."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """How many times the limiter has delayed ``item`` since it was last forgotten."""
        return self.rate_limiter.num_requeues(item)


def new_rate_limiting_queue(rate_limiter: RateLimiter[T]) -> RateLimitingQueue[T]:
    """An unnamed (metrics-free) rate-limiting queue."""
    return RateLimitingQueue(rate_limiter)


def new_named_rate_limiting_queue(rate_limiter: RateLimiter[T], name: str) -> RateLimitingQueue[T]:
    """A rate-limiting queue reporting metrics under ``name``."""
    return RateLimitingQueue(rate_limiter, name)
