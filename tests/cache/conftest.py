"""Fixtures for the cache tests: the scripted server and recording handlers."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from samplecontroller.wait import ExponentialBackoffManager
from tests.cache.scripted import HTTPListerWatcher, ScriptedServer


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    s = ScriptedServer()
    s.start()
    yield s
    s.stop()


@pytest.fixture
def lw(server: ScriptedServer) -> HTTPListerWatcher:
    return HTTPListerWatcher(server.url)


def fast_backoff() -> ExponentialBackoffManager:
    return ExponentialBackoffManager(0.01, 0.05, 60.0)


def eventually(cond: Callable[[], bool], timeout: float = 30.0, interval: float = 0.005) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(interval)
    return cond()


class Recorder:
    """A ResourceEventHandler recording ("add"/"update"/"delete", ...) tuples."""

    def __init__(self, delay: float = 0.0, gate: threading.Event | None = None) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.lock = threading.Lock()
        self.delay = delay
        self.gate = gate

    def _record(self, item: tuple[Any, ...]) -> None:
        if self.gate is not None:
            self.gate.wait(10)
        if self.delay:
            time.sleep(self.delay)
        with self.lock:
            self.events.append(item)

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        self._record(("add", obj, is_in_initial_list))

    def on_update(self, old: Any, new: Any) -> None:
        self._record(("update", old, new))

    def on_delete(self, obj: Any) -> None:
        self._record(("delete", obj))

    def snapshot(self) -> list[tuple[Any, ...]]:
        with self.lock:
            return list(self.events)

    def kinds(self) -> list[str]:
        return [e[0] for e in self.snapshot()]
