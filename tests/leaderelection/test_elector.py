"""Leader election with two candidates over an in-memory Lease store with optimistic concurrency."""

from __future__ import annotations

import copy
import threading
import time
from typing import Any

import pytest

from samplecontroller.apimachinery import errors
from samplecontroller.leaderelection import LeaderCallbacks, LeaderElectionConfig, LeaderElector, LeaseLock


class MemoryLeases:
    """Enough of the API for a LeaseLock: get/create/update with resourceVersion checks."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.obj: dict[str, Any] | None = None
        self.rv = 0
        self.broken: set[str] = set()  # identities whose requests fail (a partitioned leader)

    def for_identity(self, identity: str) -> Any:
        store = self

        class Client:
            def _check(self) -> None:
                if identity in store.broken:
                    raise ConnectionError("partitioned")

            def get(self, name: str) -> dict[str, Any]:
                self._check()
                with store.lock:
                    if store.obj is None:
                        raise errors.new_not_found("coordination.k8s.io", "leases", name)
                    return copy.deepcopy(store.obj)

            def create(self, obj: dict[str, Any]) -> dict[str, Any]:
                self._check()
                with store.lock:
                    if store.obj is not None:
                        raise errors.new_already_exists("coordination.k8s.io", "leases", obj["metadata"]["name"])
                    store.rv += 1
                    store.obj = copy.deepcopy(obj)
                    store.obj["metadata"]["resourceVersion"] = str(store.rv)
                    return copy.deepcopy(store.obj)

            def update(self, obj: dict[str, Any]) -> dict[str, Any]:
                self._check()
                with store.lock:
                    assert store.obj is not None
                    if obj["metadata"].get("resourceVersion") != store.obj["metadata"]["resourceVersion"]:
                        raise errors.new_conflict("coordination.k8s.io", "leases", "lock", "stale")
                    store.rv += 1
                    store.obj = copy.deepcopy(obj)
                    store.obj["metadata"]["resourceVersion"] = str(store.rv)
                    return copy.deepcopy(store.obj)

        return Client()


class Candidate:
    def __init__(self, store: MemoryLeases, identity: str, release_on_cancel: bool = False) -> None:
        self.identity = identity
        self.started = threading.Event()
        self.stopped = threading.Event()
        self.leaders: list[str] = []
        lock = LeaseLock("default", "lock", store.for_identity(identity), identity)
        self.config = LeaderElectionConfig(
            lock=lock, lease_duration=1.0, renew_deadline=0.8, retry_period=0.1,
            callbacks=LeaderCallbacks(on_started_leading=lambda s: self.started.set(),
                                      on_stopped_leading=self.stopped.set, on_new_leader=self.leaders.append),
            release_on_cancel=release_on_cancel)
        self.elector = LeaderElector(self.config)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.elector.run, args=(self.stop,), daemon=True)

    def start(self) -> Candidate:
        self.thread.start()
        return self


def test_config_validation_matches_go() -> None:
    lock = LeaseLock("default", "x", MemoryLeases().for_identity("a"), "a")
    with pytest.raises(ValueError, match="lease_duration must be greater than renew_deadline"):
        LeaderElector(LeaderElectionConfig(lock=lock, lease_duration=10, renew_deadline=10, retry_period=2))
    with pytest.raises(ValueError, match="renew_deadline must be greater than retry_period"):
        LeaderElector(LeaderElectionConfig(lock=lock, lease_duration=15, renew_deadline=2.3, retry_period=2))
    LeaderElector(LeaderElectionConfig(lock=lock))  # Go's defaults 15/10/2 are valid


def test_one_leads_and_the_other_takes_over_when_it_dies() -> None:
    store = MemoryLeases()
    a = Candidate(store, "a").start()
    assert a.started.wait(2)
    b = Candidate(store, "b").start()
    time.sleep(0.5)
    assert not b.started.is_set() and b.elector.get_leader() == "a"
    assert "a" in b.leaders

    # "Kill" a: its requests fail from now on; b takes over within the lease duration.
    store.broken.add("a")
    t0 = time.monotonic()
    assert b.started.wait(3)
    assert time.monotonic() - t0 < 1.0 + 0.8 + 0.5
    assert store.obj is not None and store.obj["spec"]["holderIdentity"] == "b"
    assert store.obj["spec"]["leaseTransitions"] == 1
    # a cannot renew within renew_deadline: it stops leading.
    assert a.stopped.wait(2)
    b.stop.set()
    a.stop.set()


def test_release_on_cancel_lets_the_successor_in_at_once() -> None:
    store = MemoryLeases()
    a = Candidate(store, "a", release_on_cancel=True).start()
    assert a.started.wait(2)
    b = Candidate(store, "b").start()
    time.sleep(0.3)
    a.stop.set()
    assert a.stopped.wait(2)
    assert store.obj is not None and store.obj["spec"]["holderIdentity"] == ""
    assert b.started.wait(2)
    b.stop.set()
