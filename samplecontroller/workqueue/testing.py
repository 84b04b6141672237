"""Test helpers (usable by any test area): a metrics provider recording every call,
``wait_for_timer`` to sync with a DelayingQueue's timer thread under a FakeClock, and ``get_item``
(``queue.get()``'s item, typed as an item).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import TypeVar

from samplecontroller.wait.clock import FakeClock
from samplecontroller.workqueue.delaying_queue import DelayingQueue
from samplecontroller.workqueue.queue import Interface

T = TypeVar("T", bound=Hashable)

__all__ = ["Recorded", "RecordingProvider", "get_item", "wait_for_timer"]


def get_item(queue: Interface[T]) -> T:
    """The next item of ``queue`` (blocks as ``get`` does); AssertionError if it shut down instead.
    The caller still calls ``queue.done(item)``."""
    got = queue.get()
    if got[1]:
        raise AssertionError("the queue shut down instead of handing out an item")
    return got[0]


@dataclass
class Recorded:
    """One metric of one queue: every call, in order."""

    kind: str
    name: str
    calls: list[tuple[str, float]] = field(default_factory=list)
    changed: threading.Event = field(default_factory=threading.Event)

    def inc(self) -> None:
        self.calls.append(("inc", 1.0))

    def dec(self) -> None:
        self.calls.append(("dec", 1.0))

    def set(self, value: float) -> None:
        """Record a set."""
        self.calls.append(("set", value))
        self.changed.set()

    def observe(self, value: float) -> None:
        """Record an observation."""
        self.calls.append(("observe", value))

    @property
    def value(self) -> float:
        """A gauge's/counter's current value (inc/dec/set)."""
        v = 0.0
        for op, x in self.calls:
            v = v + 1 if op == "inc" else v - 1 if op == "dec" else x if op == "set" else v
        return v

    def observed(self) -> list[float]:
        """The observed values, in order."""
        return [x for op, x in self.calls if op == "observe"]


class RecordingProvider:
    """A MetricsProvider keeping a ``Recorded`` per (kind, queue name); ``get(kind, name)`` reads it."""

    def __init__(self) -> None:
        self.metrics: dict[tuple[str, str], Recorded] = {}

    def _new(self, kind: str, name: str) -> Recorded:
        m = Recorded(kind, name)
        self.metrics[(kind, name)] = m
        return m

    def get(self, kind: str, name: str) -> Recorded:
        """The ``Recorded`` of metric ``kind`` of queue ``name`` (KeyError if never created)."""
        return self.metrics[(kind, name)]

    def new_depth_metric(self, name: str) -> Recorded:
        return self._new("depth", name)

    def new_adds_metric(self, name: str) -> Recorded:
        return self._new("adds", name)

    def new_latency_metric(self, name: str) -> Recorded:
        return self._new("latency", name)

    def new_work_duration_metric(self, name: str) -> Recorded:
        return self._new("work_duration", name)

    def new_unfinished_work_seconds_metric(self, name: str) -> Recorded:
        return self._new("unfinished", name)

    def new_longest_running_processor_seconds_metric(self, name: str) -> Recorded:
        return self._new("longest", name)

    def new_retries_metric(self, name: str) -> Recorded:
        return self._new("retries", name)


def wait_for_timer(q: DelayingQueue[T], clock: FakeClock, timeout: float = 2.0) -> bool:
    """Block until ``q``'s timer thread waits on ``clock`` for the queue's next due time.

    After a ``clock.step``, this means every item that became due has been added to ``q``.
    False on timeout. The timer thread must have been started (by a positive ``add_after``).
    """
    end = time.monotonic() + timeout
    while True:
        if q.next_ready_at() in clock.waiting_deadlines():
            return True
        if time.monotonic() >= end:
            return False
        time.sleep(0.0005)
