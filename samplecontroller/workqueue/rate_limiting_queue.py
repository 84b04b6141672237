"""A delaying queue that consults a rate limiter, like client-go's rate_limiting_queue.go."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TypeVar

from samplecontroller.workqueue.delaying_queue import DelayingQueue
from samplecontroller.workqueue.metrics import MetricsProvider
from samplecontroller.workqueue.rate_limiters import RateLimiter, default_controller_rate_limiter

T = TypeVar("T", bound=Hashable)


class RateLimitingQueue(DelayingQueue[T]):
    """``add_rate_limited`` waits as long as the limiter says; ``forget`` clears its memory."""

    def __init__(self, rate_limiter: RateLimiter[T] | None = None, name: str = "", *,
                 metrics_provider: MetricsProvider | None = None) -> None:
        super().__init__(name, metrics_provider=metrics_provider)
        self.rate_limiter: RateLimiter[T] = rate_limiter or default_controller_rate_limiter()

    def add_rate_limited(self, item: T) -> None:
        """Add ``item`` after the limiter's delay for it (counts as a retry)."""
        self._metrics.retry()
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: T) -> None:
        """The item succeeded: reset its failure count (does not remove it from the queue)."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return self.rate_limiter.num_requeues(item)


def new_named_rate_limiting_queue(rate_limiter: RateLimiter[T], name: str) -> RateLimitingQueue[T]:
    return RateLimitingQueue(rate_limiter, name)
