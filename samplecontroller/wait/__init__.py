"""Loops that run a function periodically until a stop event, like k8s.io/apimachinery/pkg/util/wait.

Every function here returns promptly once ``stop`` is set (it is checked before each call and the
waits between calls are ``stop.wait``), never interrupts a call in progress, and lets an exception
from ``fn`` propagate to the caller (Go's HandleCrash would log it; use ``until`` only with
functions that handle their own errors).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable

__all__ = ["Backoff", "WaitTimeoutError", "backoff_until", "jitter", "jitter_until", "poll_until", "poll_immediate_until", "until"]


class WaitTimeoutError(TimeoutError):
    """A poll ran out of time before its condition became true."""


def jitter(duration: float, max_factor: float) -> float:
    """``duration`` plus a random part up to ``max_factor * duration`` (max_factor <= 0 means 1.0)."""
    if max_factor <= 0.0:
        max_factor = 1.0
    return duration + random.random() * max_factor * duration


def jitter_until(fn: Callable[[], object], period: float, jitter_factor: float, sliding: bool,
                 stop: threading.Event) -> None:
    """Call ``fn`` every ``period`` seconds (jittered) until ``stop`` is set.

    ``sliding=True`` measures the period from the end of each call, otherwise from its start.
    """
    while not stop.is_set():
        wait_for = jitter(period, jitter_factor) if jitter_factor > 0.0 else period
        started = time.monotonic()
        fn()
        if not sliding:
            wait_for -= time.monotonic() - started
        if stop.wait(max(0.0, wait_for)):
            return


def until(fn: Callable[[], object], period: float, stop: threading.Event) -> None:
    """Call ``fn`` every ``period`` seconds, measured from the end of each call, until ``stop``."""
    jitter_until(fn, period, 0.0, True, stop)


class Backoff:
    """Exponential backoff: ``duration`` times ``factor`` per step, jittered, capped at ``cap``.

    After ``reset_after`` seconds without a call to ``next`` the delay starts over (client-go's
    exponential backoff manager does the same for a reflector that has been healthy a while).
    """

    def __init__(self, duration: float, factor: float = 2.0, jitter: float = 0.0, cap: float = 0.0,
                 reset_after: float = 0.0) -> None:
        self.initial = duration
        self.factor = factor
        self.jitter = jitter
        self.cap = cap
        self.reset_after = reset_after
        self._current = duration
        self._last = 0.0

    def next(self) -> float:
        now = time.monotonic()
        if self.reset_after and self._last and now - self._last > self.reset_after:
            self._current = self.initial
        self._last = now
        delay = self._current
        self._current = self._current * self.factor
        if self.cap:
            self._current = min(self._current, self.cap)
            delay = min(delay, self.cap)
        return jitter(delay, self.jitter) if self.jitter > 0 else delay

    def reset(self) -> None:
        self._current = self.initial


def backoff_until(fn: Callable[[], object], backoff: Backoff, sliding: bool, stop: threading.Event) -> None:
    """Call ``fn`` repeatedly, waiting ``backoff.next()`` between calls, until ``stop`` is set."""
    while not stop.is_set():
        if not sliding:
            delay = backoff.next()
        fn()
        if sliding:
            delay = backoff.next()
        if stop.wait(delay):
            return


def poll_until(condition: Callable[[], bool], interval: float, stop: threading.Event,
               timeout: float | None = None) -> bool:
    """Check ``condition`` every ``interval`` (first check after one interval).

    True once it holds; False if ``stop`` is set first; raises WaitTimeoutError after ``timeout``.
    """
    return _poll(condition, interval, stop, timeout, immediate=False)


def poll_immediate_until(condition: Callable[[], bool], interval: float, stop: threading.Event,
                         timeout: float | None = None) -> bool:
    """Like ``poll_until`` but checks at once first."""
    return _poll(condition, interval, stop, timeout, immediate=True)


def _poll(condition: Callable[[], bool], interval: float, stop: threading.Event, timeout: float | None,
          immediate: bool) -> bool:
    deadline = None if timeout is None else time.monotonic() + timeout
    if immediate and condition():
        return True
    while True:
        wait_for = interval
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WaitTimeoutError("timed out waiting for the condition")
            wait_for = min(wait_for, remaining)
        if stop.wait(wait_for):
            return False
        if condition():
            return True
