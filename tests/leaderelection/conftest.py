"""An in-memory Lease store with optimistic concurrency, election candidates over it, and a
FakeClock driver: ``advance_until`` moves logical time in small steps, letting every running
candidate act and park on the clock before each step, so tests assert logical durations."""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from samplecontroller.apimachinery import errors
from samplecontroller.leaderelection import LeaderCallbacks, LeaderElectionConfig, LeaderElector, LeaseLock
from samplecontroller.wait import REAL_CLOCK, Clock, Context, FakeClock


class MemoryLeases:
    """Enough of the API for LeaseLocks: get/create/update of one Lease with resourceVersion checks.

    ``broken`` identities get connection errors (a partitioned candidate); ``hung`` identities'
    requests block until ``release_hung`` is set (an unresponsive API server).
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.obj: dict[str, Any] | None = None
        self.rv = 0
        self.broken: set[str] = set()
        self.hung: set[str] = set()
        self.release_hung = threading.Event()
        self.writes: list[tuple[str, str]] = []  # (identity, verb)

    def holder(self) -> str:
        with self.lock:
            return "" if self.obj is None else str(self.obj["spec"].get("holderIdentity", ""))

    def spec(self) -> dict[str, Any]:
        with self.lock:
            assert self.obj is not None
            return dict(self.obj["spec"])

    def steal(self, identity: str) -> None:
        """Another writer takes the lease (as a server-side edit would)."""
        with self.lock:
            assert self.obj is not None
            self.rv += 1
            self.obj["spec"]["holderIdentity"] = identity
            self.obj["metadata"]["resourceVersion"] = str(self.rv)

    def for_identity(self, identity: str) -> LeaseClientFake:
        return LeaseClientFake(self, identity)


class LeaseClientFake:
    def __init__(self, store: MemoryLeases, identity: str) -> None:
        self.store = store
        self.identity = identity

    def _check(self) -> None:
        if self.identity in self.store.hung:
            self.store.release_hung.wait(10)
        if self.identity in self.store.broken:
            raise ConnectionError("partitioned")

    def get(self, name: str) -> dict[str, Any]:
        self._check()
        with self.store.lock:
            if self.store.obj is None:
                raise errors.new_not_found("coordination.k8s.io", "leases", name)
            return copy.deepcopy(self.store.obj)

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        self._check()
        s = self.store
        with s.lock:
            if s.obj is not None:
                raise errors.new_already_exists("coordination.k8s.io", "leases", obj["metadata"]["name"])
            s.rv += 1
            s.obj = copy.deepcopy(obj)
            s.obj["metadata"]["resourceVersion"] = str(s.rv)
            s.writes.append((self.identity, "create"))
            return copy.deepcopy(s.obj)

    def update(self, obj: dict[str, Any]) -> dict[str, Any]:
        self._check()
        s = self.store
        with s.lock:
            if s.obj is None:
                raise errors.new_not_found("coordination.k8s.io", "leases", obj["metadata"]["name"])
            if obj["metadata"].get("resourceVersion") != s.obj["metadata"]["resourceVersion"]:
                raise errors.new_conflict("coordination.k8s.io", "leases", obj["metadata"]["name"], "stale")
            s.rv += 1
            s.obj = copy.deepcopy(obj)
            s.obj["metadata"]["resourceVersion"] = str(s.rv)
            s.writes.append((self.identity, "update"))
            return copy.deepcopy(s.obj)


class Candidate:
    """One elector on its own thread, with events for its callbacks."""

    def __init__(self, store: MemoryLeases, identity: str, *, release_on_cancel: bool = False,
                 lease_duration: float = 1.0, renew_deadline: float = 0.6, retry_period: float = 0.1,
                 clock: Clock = REAL_CLOCK) -> None:
        self.identity = identity
        self.started = threading.Event()
        self.leading_stopped = threading.Event()  # the stop event given to on_started_leading was set
        self.stopped = threading.Event()
        self.leaders: list[str] = []
        self.lock = LeaseLock("default", "lock", store.for_identity(identity), identity)
        self.config = LeaderElectionConfig(
            lock=self.lock, lease_duration=lease_duration, renew_deadline=renew_deadline,
            retry_period=retry_period,
            callbacks=LeaderCallbacks(on_started_leading=self._on_started, on_stopped_leading=self.stopped.set,
                                      on_new_leader=self.leaders.append),
            release_on_cancel=release_on_cancel, clock=clock)
        self.elector = LeaderElector(self.config)
        self.stop = Context()
        self.thread = threading.Thread(target=self.elector.run, args=(self.stop,), daemon=True)

    def _on_started(self, stop: threading.Event) -> None:
        self.started.set()
        stop.wait(30)
        if stop.is_set():
            self.leading_stopped.set()

    def start(self) -> Candidate:
        self.thread.start()
        return self

    def shutdown(self) -> None:
        self.stop.set()
        self.thread.join(5)


STEP = 2.0**-7  # ~8 ms, exact in binary so sums of steps do not drift


def _settle(clock: FakeClock, candidates: list[Candidate]) -> None:
    """Block until every candidate still running waits on the clock again after the latest step."""
    for _ in range(400):
        if clock.wait_for_waiters(sum(c.thread.is_alive() for c in candidates), timeout=0.05):
            return
    pytest.fail("a running candidate never went back to waiting on the clock")


def advance_until(clock: FakeClock, candidates: list[Candidate], done: Callable[[], bool], limit: float) -> float:
    """Step the clock until ``done()``; return the logical seconds that took. Fails past ``limit``."""
    start = clock.now()
    while True:
        _settle(clock, candidates)
        if done():
            return clock.now() - start
        if clock.now() - start > limit:
            pytest.fail(f"not done after {limit} s of clock time")
        clock.step(STEP)


def advance(clock: FakeClock, candidates: list[Candidate], seconds: float) -> None:
    """Let ``seconds`` of clock time pass, step by step."""
    end = clock.now() + seconds
    advance_until(clock, candidates, lambda: clock.now() >= end, seconds + 1.0)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store() -> Iterator[MemoryLeases]:
    s = MemoryLeases()
    yield s
    s.release_hung.set()


@pytest.fixture
def candidates(store: MemoryLeases) -> Iterator[list[Candidate]]:
    made: list[Candidate] = []
    yield made
    store.release_hung.set()
    for c in made:
        c.shutdown()
