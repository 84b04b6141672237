"""Backoff, like k8s.io/apimachinery/pkg/util/wait/backoff.go.

``Backoff`` is Go's struct: each ``step()`` returns the current duration (jittered) and moves
to ``duration * factor``, capped at ``cap`` (reaching the cap ends the steps); once ``steps`` are
used up the duration stays where it is. ``ExponentialBackoffManager`` is what a reflector uses
(0.8 s doubling to 30 s, jitter 1.0, start over after 2 minutes without a backoff);
``JitteredBackoffManager`` is a fixed period with jitter (what ``jitter_until`` uses).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from typing import Protocol

from samplecontroller.wait.clock import REAL_CLOCK, Clock

__all__ = [
    "Backoff",
    "BackoffManager",
    "ExponentialBackoffManager",
    "JitteredBackoffManager",
    "WaitTimeoutError",
    "exponential_backoff",
    "jitter",
]

_MAX_INT32 = 2**31 - 1


class WaitTimeoutError(TimeoutError):
    """Go's ErrWaitTimeout: the condition did not become true in time (or the wait was stopped)."""

    def __init__(self, message: str = "timed out waiting for the condition") -> None:
        super().__init__(message)


def jitter(duration: float, max_factor: float) -> float:
    """``duration`` plus a uniform random part in ``[0, max_factor * duration)``.

    ``max_factor <= 0`` means 1.0 (as in Go).
    """
    if max_factor <= 0.0:
        max_factor = 1.0
    return duration + random.random() * max_factor * duration


class Backoff:
    """Go's ``wait.Backoff``: ``duration`` (s), ``factor``, ``jitter``, ``steps``, ``cap`` (s).

    ``step()`` contract: with ``steps < 1`` it returns ``duration`` (jittered) and changes nothing;
    otherwise it returns the current duration (jittered), decrements ``steps`` and multiplies
    ``duration`` by ``factor`` (when non-zero); a ``cap > 0`` that is exceeded replaces the next
    duration and sets ``steps`` to 0. ``steps`` is a count (truncated to int). Not thread-safe
    (like Go's struct); copy it per loop. For a delay that resets after a healthy spell, use
    ``ExponentialBackoffManager``.
    """

    __slots__ = ("cap", "duration", "factor", "jitter", "steps")

    def __init__(self, duration: float, factor: float = 0.0, jitter: float = 0.0, steps: float = 0,
                 cap: float = 0.0) -> None:
        if duration < 0:
            raise ValueError(f"Backoff: duration must be >= 0, got {duration}")
        self.duration = float(duration)
        self.factor = float(factor)
        self.jitter = float(jitter)
        self.steps = int(steps)
        self.cap = float(cap)

    def __repr__(self) -> str:
        return (f"Backoff(duration={self.duration}, factor={self.factor}, jitter={self.jitter}, "
                f"steps={self.steps}, cap={self.cap})")

    def copy(self) -> Backoff:
        """An independent copy (``step`` changes the backoff it is called on)."""
        return Backoff(self.duration, self.factor, self.jitter, self.steps, self.cap)

    def step(self) -> float:
        """The next delay in seconds; see the class docstring."""
        current = self.duration
        if self.steps < 1:
            return jitter(current, self.jitter) if self.jitter > 0 else current
        self.steps -= 1
        if self.factor != 0:
            nxt = current * self.factor
            if self.cap > 0 and nxt > self.cap:
                nxt = self.cap
                self.steps = 0
            self.duration = nxt
        return jitter(current, self.jitter) if self.jitter > 0 else current


class BackoffManager(Protocol):
    """Gives the delay before the next run of a loop (Go's BackoffManager, seconds not timers)."""

    def backoff(self) -> float:
        """Seconds to wait before the next run."""


class ExponentialBackoffManager:
    """Exponential delays from ``initial`` to ``max`` (then ``max`` jittered), reset when idle.

    Each ``backoff()`` returns the next delay; if more than ``reset_duration`` seconds passed since
    the previous call, it starts over from ``initial``. Thread-safe. ``next`` is an alias.
    """

    def __init__(self, initial: float, max: float, reset_duration: float, factor: float = 2.0,
                 jitter: float = 0.0, clock: Clock = REAL_CLOCK) -> None:
        if initial <= 0 or max < initial:
            raise ValueError(f"ExponentialBackoffManager needs 0 < initial <= max, got {initial}, {max}")
        self.initial = initial
        self.max = max
        self.reset_duration = reset_duration
        self.clock = clock
        self._backoff = Backoff(initial, factor, jitter, _MAX_INT32, max)
        self._lock = threading.Lock()
        self._last_start = clock.now()

    def backoff(self) -> float:
        """The next delay (see the class docstring)."""
        with self._lock:
            now = self.clock.now()
            if now - self._last_start > self.reset_duration:
                self._backoff.steps = _MAX_INT32
                self._backoff.duration = self.initial
            self._last_start = now
            return self._backoff.step()

    next = backoff

    def reset(self) -> None:
        """Start over from ``initial`` at the next call."""
        with self._lock:
            self._backoff.steps = _MAX_INT32
            self._backoff.duration = self.initial


class JitteredBackoffManager:
    """Always ``duration``, jittered by ``jitter`` when it is > 0 (Go's jitteredBackoffManagerImpl)."""

    def __init__(self, duration: float, jitter: float = 0.0) -> None:
        self.duration = duration
        self.jitter = jitter

    def backoff(self) -> float:
        """``duration``, jittered (see the class docstring)."""
        if self.jitter > 0.0:
            return jitter(self.duration, self.jitter)
        return self.duration


def exponential_backoff(backoff: Backoff, condition: Callable[[], bool], *,
                        clock: Clock = REAL_CLOCK) -> None:
    """Check ``condition`` up to ``backoff.steps`` times, sleeping ``backoff.step()`` between tries.

    Returns once it is true; raises ``WaitTimeoutError`` when the steps run out; an exception
    from ``condition`` propagates at once. ``backoff`` is not modified (a copy is stepped).
    """
    b = backoff.copy()
    while b.steps > 0:
        if condition():
            return
        if b.steps == 1:
            break
        clock.sleep(b.step())
    raise WaitTimeoutError()
