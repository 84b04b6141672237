"""Leader election with candidates over an in-memory Lease store with optimistic concurrency."""

from __future__ import annotations

import datetime
import re
import threading

import pytest

from samplecontroller.leaderelection import (
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElectionRecord,
    LeaderElector,
    LeaseLock,
    run_or_die,
)
from samplecontroller.record import FakeRecorder
from samplecontroller.wait import FakeClock
from tests.leaderelection.conftest import STEP, Candidate, MemoryLeases, advance, advance_until

MICRO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


def test_config_validation_matches_go(store: MemoryLeases) -> None:
    lock = LeaseLock("default", "x", store.for_identity("a"), "a")
    cases = [
        (dict(lease_duration=10, renew_deadline=10, retry_period=2), "lease_duration must be greater than renew_deadline"),
        (dict(lease_duration=15, renew_deadline=2.3, retry_period=2), "renew_deadline must be greater than retry_period"),
        (dict(lease_duration=15, renew_deadline=10, retry_period=0), "retry_period must be greater than zero"),
        (dict(lease_duration=15, renew_deadline=10, retry_period=-1), "retry_period must be greater than zero"),
    ]
    for kw, msg in cases:
        with pytest.raises(ValueError, match=msg):
            LeaderElector(LeaderElectionConfig(lock=lock, **kw))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="on_started_leading"):
        LeaderElector(LeaderElectionConfig(lock=lock, callbacks=LeaderCallbacks(None, lambda: None)))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="identity"):
        LeaseLock("default", "x", store.for_identity(""), "")
    with pytest.raises(ValueError, match="renew_deadline"):
        run_or_die(LeaderElectionConfig(lock=lock, renew_deadline=20), threading.Event())
    LeaderElector(LeaderElectionConfig(lock=lock))  # Go's defaults 15/10/2 are valid


def test_first_candidate_creates_the_lease(store: MemoryLeases, candidates: list[Candidate], clock: FakeClock) -> None:
    a = Candidate(store, "a", clock=clock)
    candidates.append(a.start())
    assert advance_until(clock, candidates, a.elector.is_leader, 1.0) == 0.0  # a free lease is taken at once
    assert a.started.wait(5)
    assert a.elector.get_leader() == "a"
    spec = store.spec()
    assert spec["holderIdentity"] == "a" and spec["leaseDurationSeconds"] == 1 and spec["leaseTransitions"] == 0
    assert MICRO.fullmatch(spec["acquireTime"]) and MICRO.fullmatch(spec["renewTime"])
    first_renew = spec["renewTime"]
    advance(clock, candidates, 0.35)
    spec = store.spec()
    assert spec["renewTime"] > first_renew and spec["acquireTime"] <= first_renew  # renewed, same acquisition
    assert store.writes.count(("a", "update")) == 1 + 3  # renewed at once (as Go), then every 0.1 s


def test_one_leads_and_the_other_takes_over_when_it_dies(
        store: MemoryLeases, candidates: list[Candidate], clock: FakeClock) -> None:
    a = Candidate(store, "a", clock=clock)
    candidates.append(a.start())
    advance_until(clock, candidates, a.elector.is_leader, 1.0)
    b = Candidate(store, "b", clock=clock)
    candidates.append(b.start())
    advance(clock, candidates, 0.4)
    assert not b.started.is_set() and not b.elector.is_leader() and b.elector.get_leader() == "a"
    assert b.leaders == ["a"] and a.leaders == ["a"]

    # "Kill" a: its requests fail from now on. b takes over once the lease it last saw renewed
    # (at most a retry period before the kill) has expired, at its next retry.
    store.broken.add("a")
    took = advance_until(clock, candidates, b.elector.is_leader, 3.0)
    assert 1.0 - 0.1 - STEP <= took <= 1.0 + 2 * (0.12 + STEP)
    # a could not renew within renew_deadline (0.6 s): it had stopped leading before b took over.
    assert a.stopped.is_set() and not a.elector.is_leader()
    assert a.leading_stopped.wait(5) and b.started.wait(5)
    spec = store.spec()
    assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1
    advance(clock, candidates, 0.1)
    assert b.leaders == ["a", "b"]


def test_a_leader_whose_requests_hang_stops_within_the_renew_deadline(
        store: MemoryLeases, candidates: list[Candidate], clock: FakeClock) -> None:
    a = Candidate(store, "a", clock=clock)
    candidates.append(a.start())
    advance_until(clock, candidates, a.elector.is_leader, 1.0)
    store.hung.add("a")
    took = advance_until(clock, candidates, a.stopped.is_set, 3.0)
    # The next renewal starts within a retry period; it is given up at its renew deadline.
    assert 0.6 <= took <= 0.6 + 0.1 + 2 * STEP
    assert a.leading_stopped.wait(5) and not a.elector.is_leader()


def test_a_leader_that_sees_another_holder_stops_leading(
        store: MemoryLeases, candidates: list[Candidate], clock: FakeClock) -> None:
    a = Candidate(store, "a", clock=clock)
    candidates.append(a.start())
    advance_until(clock, candidates, a.elector.is_leader, 1.0)
    store.steal("intruder")
    advance_until(clock, candidates, a.stopped.is_set, 3.0)
    assert a.leading_stopped.wait(5)
    assert store.holder() == "intruder"
    assert a.elector.get_leader() == "intruder"


def test_without_release_the_successor_waits_for_expiry(
        store: MemoryLeases, candidates: list[Candidate], clock: FakeClock) -> None:
    a = Candidate(store, "a", clock=clock)
    candidates.append(a.start())
    advance_until(clock, candidates, a.elector.is_leader, 1.0)
    b = Candidate(store, "b", clock=clock)
    candidates.append(b.start())
    advance(clock, candidates, 0.2)
    a.shutdown()
    assert a.stopped.is_set() and store.holder() == "a"
    took = advance_until(clock, candidates, b.elector.is_leader, 3.0)
    assert 1.0 - 0.1 - STEP <= took <= 1.0 + 2 * (0.12 + STEP)  # the 1 s lease had to expire


def test_release_on_cancel_lets_the_successor_in_at_once(
        store: MemoryLeases, candidates: list[Candidate], clock: FakeClock) -> None:
    a = Candidate(store, "a", release_on_cancel=True, clock=clock)
    candidates.append(a.start())
    advance_until(clock, candidates, a.elector.is_leader, 1.0)
    b = Candidate(store, "b", clock=clock)
    candidates.append(b.start())
    advance(clock, candidates, 0.3)
    a.shutdown()
    assert a.stopped.is_set() and a.leading_stopped.wait(5)
    spec = store.spec()
    assert spec["holderIdentity"] == "" and spec["leaseDurationSeconds"] == 1
    took = advance_until(clock, candidates, b.elector.is_leader, 3.0)
    assert took <= 0.12 + STEP  # b's next retry
    assert store.spec()["leaseTransitions"] == 1


def test_stop_before_acquiring_calls_on_stopped_leading_like_go(
        store: MemoryLeases, candidates: list[Candidate], clock: FakeClock) -> None:
    a = Candidate(store, "a", clock=clock)
    candidates.append(a.start())
    advance_until(clock, candidates, a.elector.is_leader, 1.0)
    b = Candidate(store, "b", clock=clock)
    candidates.append(b.start())
    advance(clock, candidates, 0.2)
    b.shutdown()
    assert not b.thread.is_alive() and b.stopped.is_set() and not b.started.is_set()


def test_lease_lock_records_events_and_rejects_use_before_get(store: MemoryLeases) -> None:
    recorder = FakeRecorder(10)
    lock = LeaseLock("kube-system", "ctl", store.for_identity("me"), "me", event_recorder=recorder,
                     labels={"app": "x"})
    now = datetime.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=datetime.UTC)
    with pytest.raises(RuntimeError, match="call get or create first"):
        lock.update(LeaderElectionRecord("me", 15, now, now, 0))
    lock.create(LeaderElectionRecord("me", 15, now, now, 0))
    assert store.obj is not None and store.obj["metadata"]["labels"] == {"app": "x"}
    assert store.obj["spec"]["renewTime"] == "2024-01-02T03:04:05.123456Z"
    assert lock.get() == LeaderElectionRecord("me", 15, now, now, 0)
    lock.record_event("became leader")
    assert recorder.drain() == ["Normal LeaderElection me became leader"]
    assert lock.describe() == "kube-system/ctl"


def test_elector_records_leader_events(store: MemoryLeases) -> None:
    recorder = FakeRecorder(10)
    lock = LeaseLock("default", "lock", store.for_identity("a"), "a", event_recorder=recorder)
    started = threading.Event()
    stop = threading.Event()
    config = LeaderElectionConfig(lock=lock, lease_duration=1, renew_deadline=0.6, retry_period=0.1,
                                  callbacks=LeaderCallbacks(lambda s: started.set(), lambda: None))
    t = threading.Thread(target=LeaderElector(config).run, args=(stop,), daemon=True)
    t.start()
    assert started.wait(30)
    stop.set()
    t.join(5)
    assert recorder.drain() == ["Normal LeaderElection a became leader", "Normal LeaderElection a stopped leading"]
