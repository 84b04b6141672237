"""An in-test event sink that behaves like the API for Events: create / patch with names and resourceVersions."""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import msgspec
import pytest

from samplecontroller.apimachinery import errors


class FakeClock:
    """A settable clock (seconds since the epoch)."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start
        self.lock = threading.Lock()

    def __call__(self) -> float:
        with self.lock:
            return self.now

    def step(self, seconds: float) -> None:
        with self.lock:
            self.now += seconds


class MemorySink:
    """Stores events by (namespace, name); records every call. ``fail_next`` injects failures."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events: dict[tuple[str, str], dict[str, Any]] = {}
        self.calls: list[tuple[str, str, bytes | None]] = []  # (verb, name, patch)
        self.rv = 0
        self.fail_next: list[BaseException] = []
        self.written = threading.Condition(self.lock)
        self.block: threading.Event | None = None  # when set (an unset Event), writes wait on it

    def _fail(self) -> None:
        if self.fail_next:
            raise self.fail_next.pop(0)

    def _wait_unblocked(self) -> None:
        if self.block is not None:
            self.block.wait(10)

    def create(self, event: dict[str, Any]) -> dict[str, Any]:
        self._wait_unblocked()
        with self.lock:
            md = event["metadata"]
            self.calls.append(("create", md["name"], None))
            self.written.notify_all()
            self._fail()
            assert "resourceVersion" not in md, "create must not carry a resourceVersion"
            key = (md["namespace"], md["name"])
            if key in self.events:
                raise errors.new_already_exists("", "events", md["name"])
            self.rv += 1
            stored = copy.deepcopy(event)
            stored["metadata"]["resourceVersion"] = str(self.rv)
            self.events[key] = stored
            return copy.deepcopy(stored)

    def update(self, event: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("the recorder never updates events")

    def patch(self, event: dict[str, Any], data: bytes) -> dict[str, Any]:
        self._wait_unblocked()
        with self.lock:
            md = event["metadata"]
            self.calls.append(("patch", md["name"], data))
            self.written.notify_all()
            self._fail()
            key = (md["namespace"], md["name"])
            if key not in self.events:
                raise errors.new_not_found("", "events", md["name"])
            self.rv += 1
            stored = self.events[key]
            stored.update(msgspec.json.decode(data))
            stored["metadata"]["resourceVersion"] = str(self.rv)
            return copy.deepcopy(stored)

    def wait_calls(self, n: int, timeout: float = 30.0) -> list[tuple[str, str, bytes | None]]:
        """Wait until at least ``n`` calls were made; return them all."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while len(self.calls) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"expected {n} sink calls, got {len(self.calls)}: {self.calls}")
                self.written.wait(left)
            return list(self.calls)


def sentinel_written(sink: MemorySink, rec: Any, timeout: float = 30.0) -> list[tuple[str, str, bytes | None]]:
    """Record an event about a fresh object and wait until it is written; return the calls made
    before it. One thread writes a sink's events in order, so every earlier event has been handled
    (written, retried, dropped) by then: no sleeping before asserting that nothing else happened."""
    rec.event(foo(name="sentinel", uid="u-sentinel"), "Normal", "Sentinel", "end of test")
    deadline = time.monotonic() + timeout
    with sink.lock:
        while not any(c[1].startswith("sentinel.") for c in sink.calls):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"the sentinel event was not written: {sink.calls}")
            sink.written.wait(left)
        return sink.calls[:next(i for i, c in enumerate(sink.calls) if c[1].startswith("sentinel."))]


def foo(name: str = "example-foo", namespace: str = "default", uid: str = "uid-1") -> dict[str, Any]:
    return {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
            "metadata": {"name": name, "namespace": namespace, "uid": uid, "resourceVersion": "7"}}


@pytest.fixture
def sink() -> MemorySink:
    return MemorySink()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def cleanup() -> Iterator[Callable[[Callable[[], None]], None]]:
    fns: list[Callable[[], None]] = []
    yield fns.append
    for fn in reversed(fns):
        fn()
