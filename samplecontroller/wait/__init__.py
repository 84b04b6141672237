"""Loops, backoff and polling helpers, like k8s.io/apimachinery/pkg/util/wait.

Stop signals are ``threading.Event`` objects (``StopEvent``); ``context.Context`` is one that
also runs done-callbacks and has children (``with_cancel``, ``with_timeout``, ``as_context``).
See ``loops`` (until, jitter_until, backoff_until), ``backoff`` (Backoff, exponential_backoff,
backoff managers, jitter), ``poll`` (poll, poll_immediate, poll_until) and ``clock`` (Clock,
FakeClock).
"""

from samplecontroller.wait.backoff import (
    Backoff,
    BackoffManager,
    ExponentialBackoffManager,
    JitteredBackoffManager,
    WaitTimeoutError,
    exponential_backoff,
    jitter,
)
from samplecontroller.wait.clock import REAL_CLOCK, Clock, FakeClock, RealClock
from samplecontroller.wait.context import (
    Canceled,
    Context,
    DeadlineExceeded,
    as_context,
    sleep,
    with_cancel,
    with_timeout,
)
from samplecontroller.wait.loops import (
    StopEvent,
    backoff_until,
    forever,
    jitter_until,
    non_sliding_until,
    until,
)
from samplecontroller.wait.poll import poll, poll_immediate, poll_immediate_until, poll_until

__all__ = [
    "REAL_CLOCK",
    "Backoff",
    "BackoffManager",
    "Canceled",
    "Clock",
    "Context",
    "DeadlineExceeded",
    "ExponentialBackoffManager",
    "FakeClock",
    "JitteredBackoffManager",
    "RealClock",
    "StopEvent",
    "WaitTimeoutError",
    "as_context",
    "backoff_until",
    "exponential_backoff",
    "forever",
    "jitter",
    "jitter_until",
    "non_sliding_until",
    "poll",
    "poll_immediate",
    "poll_immediate_until",
    "poll_until",
    "sleep",
    "until",
    "with_cancel",
    "with_timeout",
]
