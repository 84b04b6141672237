"""Retrying writes that lose a race (client-go's k8s.io/client-go/util/retry).

``retry_on_conflict(fn)`` runs ``fn`` again, after a short backoff, while it raises a Conflict
(409: the object changed since it was read): the usual shape is "get, change, update" inside
``fn``. ``on_error(backoff, retriable, fn)`` is the same for any error ``retriable`` accepts.
After ``backoff.steps`` attempts the last error is raised, as Go returns it.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from samplecontroller.apimachinery import errors

__all__ = ["DEFAULT_BACKOFF", "DEFAULT_RETRY", "Backoff", "on_error", "retry_on_conflict"]

T = TypeVar("T")


@dataclass(frozen=True)
class Backoff:
    """wait.Backoff: ``steps`` attempts; the first wait is ``duration`` seconds, multiplied by
    ``factor`` each time, plus up to ``jitter`` times itself at random; never above ``cap`` (0: no cap)."""

    steps: int
    duration: float
    factor: float = 1.0
    jitter: float = 0.0
    cap: float = 0.0

    def delays(self) -> list[float]:
        """The sleeps between ``steps`` attempts: each ``factor`` times the last, capped, with jitter."""
        out = []
        duration = self.duration
        for _ in range(max(self.steps - 1, 0)):
            delay = duration + (random.random() * self.jitter * duration if self.jitter > 0 else 0.0)
            out.append(delay)
            duration = duration * self.factor
            if self.cap > 0:
                duration = min(duration, self.cap)
        return out


# retry.DefaultRetry: for conflicts (a fast retry, five attempts).
DEFAULT_RETRY = Backoff(steps=5, duration=0.010, factor=1.0, jitter=0.1)
# retry.DefaultBackoff: for errors that need the server to recover.
DEFAULT_BACKOFF = Backoff(steps=4, duration=0.010, factor=5.0, jitter=0.1)


def on_error(backoff: Backoff, retriable: Callable[[Exception], bool], fn: Callable[[], T],
             sleep: Callable[[float], None] = time.sleep) -> T:
    """``fn()``'s result; while it raises an error ``retriable`` accepts, wait and try again (at most
    ``backoff.steps`` attempts; then the last error is raised). Other errors are raised at once."""
    delays = backoff.delays()
    attempt = 0
    while True:
        try:
            return fn()
        except Exception as err:
            if not retriable(err) or attempt >= len(delays):
                raise
            sleep(delays[attempt])
            attempt += 1


def retry_on_conflict(fn: Callable[[], T], backoff: Backoff = DEFAULT_RETRY,
                      sleep: Callable[[float], None] = time.sleep) -> T:
    """``fn()``, run again while it raises ``errors.ConflictError`` (client-go's RetryOnConflict)."""
    return on_error(backoff, errors.is_conflict, fn, sleep)
