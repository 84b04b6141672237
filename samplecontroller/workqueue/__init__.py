"""Work queues for controllers: de-duplicating, delaying and rate-limited (client-go's util/workqueue).

Modules: ``queue`` (Queue, Interface), ``delaying_queue`` (DelayingQueue), ``rate_limiting_queue``
(RateLimitingQueue), ``priority_queue`` (PriorityQueue: controller-runtime's), ``rate_limiters`` (the RateLimiter implementations), ``metrics``
(MetricsProvider, set_provider), ``prometheus`` (a Prometheus provider). Clocks for tests:
``Clock``/``FakeClock`` (from ``samplecontroller.wait.clock``).
"""

from samplecontroller.wait.clock import REAL_CLOCK, Clock, FakeClock, RealClock
from samplecontroller.workqueue.delaying_queue import DelayingInterface, DelayingQueue
from samplecontroller.workqueue.metrics import (
    CounterMetric,
    GaugeMetric,
    HistogramMetric,
    MetricsProvider,
    NoopMetricsProvider,
    SettableGaugeMetric,
    set_provider,
)
from samplecontroller.workqueue.priority_queue import LOW_PRIORITY, PriorityQueue
from samplecontroller.workqueue.queue import Got, Interface, Queue, shut_down_workers
from samplecontroller.workqueue.rate_limiters import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    WithMaxWaitRateLimiter,
    default_controller_rate_limiter,
    default_item_based_rate_limiter,
)
from samplecontroller.workqueue.rate_limiting_queue import (
    RateLimitingInterface,
    RateLimitingQueue,
    new_named_rate_limiting_queue,
    new_rate_limiting_queue,
)

__all__ = [
    "LOW_PRIORITY",
    "REAL_CLOCK",
    "BucketRateLimiter",
    "Clock",
    "CounterMetric",
    "DelayingInterface",
    "DelayingQueue",
    "FakeClock",
    "GaugeMetric",
    "HistogramMetric",
    "Got",
    "Interface",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "MetricsProvider",
    "NoopMetricsProvider",
    "PriorityQueue",
    "Queue",
    "RateLimiter",
    "RateLimitingInterface",
    "RateLimitingQueue",
    "RealClock",
    "SettableGaugeMetric",
    "WithMaxWaitRateLimiter",
    "shut_down_workers",
    "default_controller_rate_limiter",
    "default_item_based_rate_limiter",
    "new_named_rate_limiting_queue",
    "new_rate_limiting_queue",
    "set_provider",
]
