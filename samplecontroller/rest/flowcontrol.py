"""Client-side request throttling (client-go's ``util/flowcontrol`` token bucket).

``TokenBucket(qps, burst)``: ``accept()`` blocks until a token is free. Tokens refill at ``qps``
per second up to ``burst``; a burst of up to ``burst`` requests passes at once. Waiters are
served in arrival order (each reserves the next token, like golang.org/x/time/rate's Wait).
Thread-safe. client-go's rest.Config defaults are QPS 5 and burst 10; here throttling is off
unless asked for (``RESTClient(qps=..., burst=...)``, ``main.py --kube-api-qps/--kube-api-burst``),
leaving flow control to the server (API Priority and Fairness, 429 with Retry-After).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["TokenBucket"]


class TokenBucket:
    """A token bucket of ``burst`` tokens refilled at ``qps`` per second."""

    def __init__(self, qps: float, burst: int, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if qps <= 0 or burst < 1:
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
        with self._lock:
            now = self._clock()
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def accept(self) -> None:
        """Block until a token is free (the request may then be sent)."""
        wait = self.reserve()
        if wait > 0:
            self._sleep(wait)
