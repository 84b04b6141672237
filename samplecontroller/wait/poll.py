"""Polling for a condition, like wait.Poll / PollImmediate / PollUntil in Go.

A condition is a function returning bool; an exception from it ends the poll and propagates.
Each function returns ``None`` once the condition is true and raises ``WaitTimeoutError``
(Go's ErrWaitTimeout) when the timeout passes or the stop event is set first. The non-immediate
forms check for the first time after one interval.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from samplecontroller.wait.backoff import WaitTimeoutError

__all__ = ["poll", "poll_immediate", "poll_immediate_until", "poll_until"]


def poll(interval: float, timeout: float, condition: Callable[[], bool]) -> None:
    """Check every ``interval`` seconds (first after one interval) for up to ``timeout`` seconds."""
    _poll(interval, condition, None, timeout, immediate=False)


def poll_immediate(interval: float, timeout: float, condition: Callable[[], bool]) -> None:
    """Like ``poll`` but checks at once first."""
    _poll(interval, condition, None, timeout, immediate=True)


def poll_until(interval: float, condition: Callable[[], bool], stop: threading.Event) -> None:
    """Check every ``interval`` seconds (first after one interval) until true or ``stop`` is set."""
    _poll(interval, condition, stop, None, immediate=False)


def poll_immediate_until(interval: float, condition: Callable[[], bool], stop: threading.Event) -> None:
    """Like ``poll_until`` but checks at once first."""
    _poll(interval, condition, stop, None, immediate=True)


def _poll(interval: float, condition: Callable[[], bool], stop: threading.Event | None,
          timeout: float | None, immediate: bool) -> None:
    if interval <= 0:
        raise ValueError(f"poll interval must be > 0, got {interval}")
    deadline = None if timeout is None else time.monotonic() + timeout
    sleeper = stop if stop is not None else threading.Event()
    if immediate:
        if stop is not None and stop.is_set():
            raise WaitTimeoutError()
        if condition():
            return
    while True:
        wait_for = interval
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WaitTimeoutError()
            wait_for = min(wait_for, remaining)
        if sleeper.wait(wait_for):
            raise WaitTimeoutError()
        if condition():
            return
