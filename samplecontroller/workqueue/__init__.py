"""Work queues for controllers: de-duplicating, delaying and rate-limited (client-go's util/workqueue)."""

from samplecontroller.workqueue.delaying_queue import DelayingQueue
from samplecontroller.workqueue.metrics import MetricsProvider, NoopMetricsProvider, set_provider
from samplecontroller.workqueue.queue import Queue
from samplecontroller.workqueue.rate_limiters import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    WithMaxWaitRateLimiter,
    default_controller_rate_limiter,
)
from samplecontroller.workqueue.rate_limiting_queue import RateLimitingQueue, new_named_rate_limiting_queue

__all__ = [
    "BucketRateLimiter",
    "DelayingQueue",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "MetricsProvider",
    "NoopMetricsProvider",
    "Queue",
    "RateLimiter",
    "RateLimitingQueue",
    "WithMaxWaitRateLimiter",
    "default_controller_rate_limiter",
    "new_named_rate_limiting_queue",
    "set_provider",
]
