"""Periodic loops until a stop event, like wait.Until / JitterUntil / BackoffUntil in Go.

Convention: a stop signal is a ``threading.Event`` (``StopEvent``). Every loop checks it before
each call, waits between calls with ``stop.wait`` (so it returns promptly once set), never
interrupts a call in progress, and lets an exception from ``fn`` propagate (Go's HandleCrash
re-panics by default; give these loops functions that handle their own errors).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from samplecontroller.wait.backoff import BackoffManager, JitteredBackoffManager

__all__ = ["StopEvent", "backoff_until", "forever", "jitter_until", "non_sliding_until", "until"]

StopEvent = threading.Event


def backoff_until(fn: Callable[[], object], backoff_manager: BackoffManager, sliding: bool,
                  stop: threading.Event) -> None:
    """Call ``fn`` until ``stop`` is set, waiting ``backoff_manager.backoff()`` between calls.

    ``sliding=True``: the delay is taken after ``fn`` returns and waited in full; otherwise it
    is taken before the call and the time ``fn`` ran counts towards it (never a negative wait).
    """
    while not stop.is_set():
        if sliding:
            fn()
            delay = backoff_manager.backoff()
        else:
            delay = backoff_manager.backoff()
            started = time.monotonic()
            fn()
            delay -= time.monotonic() - started
        if stop.wait(delay if delay > 0 else 0):
            return


def jitter_until(fn: Callable[[], object], period: float, jitter_factor: float, sliding: bool,
                 stop: threading.Event) -> None:
    """Call ``fn`` every ``period`` seconds (plus up to ``jitter_factor * period``) until ``stop``."""
    backoff_until(fn, JitteredBackoffManager(period, jitter_factor), sliding, stop)


def until(fn: Callable[[], object], period: float, stop: threading.Event) -> None:
    """``fn`` every ``period`` seconds, measured from the end of each call, until ``stop``."""
    jitter_until(fn, period, 0.0, True, stop)


def non_sliding_until(fn: Callable[[], object], period: float, stop: threading.Event) -> None:
    """``fn`` every ``period`` seconds, measured from the start of each call, until ``stop``."""
    jitter_until(fn, period, 0.0, False, stop)


def forever(fn: Callable[[], object], period: float) -> None:
    """``fn`` every ``period`` seconds, for ever (until ``fn`` raises)."""
    until(fn, period, threading.Event())
