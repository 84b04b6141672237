"""Injectable clocks (k8s.io/utils/clock): the real monotonic clock and a fake one for tests.

A ``Clock`` gives ``now()`` (seconds, monotonic, arbitrary origin), ``sleep(seconds)`` and
``wait(cond, deadline)``: block on a ``threading.Condition`` the caller holds until it is notified
or the clock reaches ``deadline`` (None: no deadline). With ``FakeClock`` time only moves on
``step``/``set_time``, which also wakes every ``wait`` whose deadline has come, so code under
test sees exact times and tests never sleep for real.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol

__all__ = ["Clock", "FakeClock", "RealClock", "REAL_CLOCK"]


class Clock(Protocol):
    """Monotonic time source; see the module docstring."""

    def now(self) -> float:
        """Seconds on a monotonic clock (arbitrary origin)."""

    def sleep(self, seconds: float) -> None:
        """Block for ``seconds`` of this clock's time."""

    def wait(self, cond: threading.Condition, deadline: float | None) -> None:
        """With ``cond`` held: release it and block until notified or ``now() >= deadline``.

        Spurious returns are allowed; callers re-check their state in a loop.
        """
        ...


class RealClock:
    """``time.monotonic`` and real waits."""

    __slots__ = ()

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def wait(self, cond: threading.Condition, deadline: float | None) -> None:
        if deadline is None:
            cond.wait()
            return
        remaining = deadline - time.monotonic()
        if remaining > 0:
            cond.wait(remaining)


REAL_CLOCK = RealClock()


class _Waiter:
    __slots__ = ("cond", "deadline", "event", "generation")

    def __init__(self, cond: threading.Condition | None, deadline: float | None, generation: int) -> None:
        self.cond = cond
        self.deadline = deadline
        self.generation = generation
        self.event: threading.Event | None = None


class FakeClock:
    """A clock that only moves when told to (``step``, ``set_time``). Thread-safe.

    ``sleep`` blocks until another thread steps the clock past the wake-up time.
    ``wait_for_waiters(n)`` blocks until ``n`` threads are waiting on this clock and all of them
    have observed the latest step (so a test can step, then assert, without racing the thread
    under test). Every real wait is bounded by ``max_real_wait`` seconds as a safety net.
    """

    def __init__(self, start: float = 0.0, *, max_real_wait: float = 5.0) -> None:
        self._now = start
        self._generation = 0
        self._lock = threading.Condition(threading.Lock())
        self._waiters: list[_Waiter] = []
        self.max_real_wait = max_real_wait

    def now(self) -> float:
        with self._lock:
            return self._now

    def step(self, seconds: float) -> None:
        """Advance time by ``seconds`` (>= 0) and wake the waits that are due."""
        if seconds < 0:
            raise ValueError("FakeClock.step: cannot go back in time")
        with self._lock:
            self._set(self._now + seconds)

    def set_time(self, t: float) -> None:
        """Jump to ``t`` (not before the current time)."""
        with self._lock:
            if t < self._now:
                raise ValueError("FakeClock.set_time: cannot go back in time")
            self._set(t)

    def _set(self, t: float) -> None:
        self._now = t
        self._generation += 1
        due = []
        for w in self._waiters:
            if w.deadline is not None and w.deadline <= t:
                due.append(w)
            else:
                w.generation = self._generation  # still rightly asleep: it has seen this step
        self._lock.notify_all()
        # Wake outside our own lock so that a waiter holding its condition can register meanwhile.
        self._lock.release()
        try:
            for w in due:
                if w.event is not None:
                    w.event.set()
                elif w.cond is not None:
                    with w.cond:
                        w.cond.notify_all()
        finally:
            self._lock.acquire()

    def sleep(self, seconds: float) -> None:
        with self._lock:
            deadline = self._now + seconds
            if deadline <= self._now:
                return
            waiter = _Waiter(None, deadline, self._generation)
            waiter.event = threading.Event()
            self._waiters.append(waiter)
            self._lock.notify_all()
        try:
            while not waiter.event.wait(self.max_real_wait):
                pass
        finally:
            self._remove(waiter)

    def wait(self, cond: threading.Condition, deadline: float | None) -> None:
        with self._lock:
            if deadline is not None and deadline <= self._now:
                return
            waiter = _Waiter(cond, deadline, self._generation)
            self._waiters.append(waiter)
            self._lock.notify_all()
        try:
            cond.wait(self.max_real_wait)
        finally:
            self._remove(waiter)

    def _remove(self, waiter: _Waiter) -> None:
        with self._lock:
            self._waiters.remove(waiter)
            self._lock.notify_all()

    def has_waiters(self) -> bool:
        """True while some thread sleeps or waits on this clock (tests step it then)."""
        with self._lock:
            return bool(self._waiters)

    def waiting_deadlines(self) -> list[float | None]:
        """The deadlines of the waits that have seen the latest step (None: no deadline)."""
        with self._lock:
            return [w.deadline for w in self._waiters if w.generation == self._generation]

    def wait_for_waiters(self, n: int = 1, timeout: float = 5.0) -> bool:
        """Block until at least ``n`` waits are registered since the latest step; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while sum(1 for w in self._waiters if w.generation == self._generation) < n:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._lock.wait(remaining)
            return True
