"""A token bucket (client-go's ``util/flowcontrol``, golang.org/x/time/rate's Limiter).

``TokenBucket(qps, burst)``: tokens refill at ``qps`` per second up to ``burst``; a burst of up
to ``burst`` passes at once. ``reserve()`` takes the next token and says how long until it is
usable (reservations queue up: waiters are served in arrival order); ``accept()`` reserves and
sleeps that long. ``qps`` may be ``math.inf`` (never waits). A clock that goes backwards refills
nothing. Thread-safe.

Used by the REST transport for client-side throttling (off unless asked for:
``RESTClient(qps=..., burst=...)``, ``main.py --kube-api-qps/--kube-api-burst``; client-go's
rest.Config defaults are QPS 5 and burst 10) and by the work queue's ``BucketRateLimiter``.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

__all__ = ["TokenBucket"]


class TokenBucket:
    """A token bucket of ``burst`` tokens refilled at ``qps`` per second."""

    def __init__(self, qps: float, burst: int, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if not qps > 0 or burst < 1:
            raise ValueError(f"a token bucket needs qps > 0 and burst >= 1, got qps={qps}, burst={burst}")
        self.qps = float(qps)
        self.burst = int(burst)
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._last = clock()

    def reserve(self) -> float:
        """Take the next token; return how long to wait before using it (0 when one is free)."""
        if self.qps == math.inf:
            return 0.0
        with self._lock:
            now = self._clock()
            if now > self._last:
                self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
                self._last = now
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def accept(self) -> None:
        """Block until a token is free (the request may then be sent)."""
        wait = self.reserve()
        if wait > 0:
            self._sleep(wait)
