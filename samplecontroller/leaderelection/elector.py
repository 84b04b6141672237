"""Leader election, like client-go's tools/leaderelection/leaderelection.go.

A candidate tries to acquire the lock every ``retry_period`` (jittered by 1.2). It may take the
lock when it is free, held by itself, or expired: not renewed within ``lease_duration`` as seen
on this candidate's own clock since it last observed a change (clock skew between machines does
not matter). A leader renews every ``retry_period``; if it cannot renew within
``renew_deadline`` it stops leading. ``on_started_leading(stop)`` runs on its own thread with a
stop event set when leadership ends; ``on_stopped_leading`` runs when ``run`` ends after having
led; ``on_new_leader(identity)`` when the observed leader changes. With
``release_on_cancel``, a leader stopped through ``run``'s stop event clears the holder so a
successor need not wait for expiry.

Validation, as in Go: lease_duration > renew_deadline > JITTER_FACTOR * retry_period, and all
positive.
"""

from __future__ import annotations

import datetime
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from samplecontroller.apimachinery import errors
from samplecontroller.leaderelection.resourcelock import LeaderElectionRecord, ResourceLock
from samplecontroller.logs import get_logger

log = get_logger("leaderelection")

JITTER_FACTOR = 1.2


@dataclass
class LeaderCallbacks:
    on_started_leading: Callable[[threading.Event], None]
    on_stopped_leading: Callable[[], None]
    on_new_leader: Callable[[str], None] | None = None


@dataclass
class LeaderElectionConfig:
    lock: ResourceLock
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    callbacks: LeaderCallbacks = field(default_factory=lambda: LeaderCallbacks(lambda s: None, lambda: None))
    release_on_cancel: bool = False
    name: str = ""
    clock: Callable[[], float] = time.monotonic

    def validate(self) -> None:
        if self.lease_duration <= self.renew_deadline:
            raise ValueError("lease_duration must be greater than renew_deadline")
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            raise ValueError("renew_deadline must be greater than retry_period*JITTER_FACTOR")
        if self.lease_duration < 1e-9 or self.renew_deadline < 1e-9 or self.retry_period < 1e-9:
            raise ValueError("lease_duration, renew_deadline and retry_period must be greater than zero")
        if self.lock is None:
            raise ValueError("a lock is required")


def _utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class LeaderElector:
    """Runs one candidate. Create one per ``run``."""

    def __init__(self, config: LeaderElectionConfig) -> None:
        config.validate()
        self.config = config
        self._observed: LeaderElectionRecord | None = None
        self._observed_at = 0.0
        self._reported_leader = ""
        self._lock = threading.Lock()
        self._is_leader = False

    def is_leader(self) -> bool:
        with self._lock:
            return self._is_leader

    def get_leader(self) -> str:
        with self._lock:
            return self._observed.holder_identity if self._observed else ""

    def run(self, stop: threading.Event) -> None:
        """Acquire, lead until the lease is lost or ``stop`` is set, then return."""
        try:
            if not self._acquire(stop):
                return
            leading_stop = threading.Event()
            worker = threading.Thread(target=self.config.callbacks.on_started_leading, args=(leading_stop,),
                                      name="leader", daemon=True)
            worker.start()
            self._renew(stop)
            leading_stop.set()
        finally:
            was_leader = self.is_leader()
            with self._lock:
                self._is_leader = False
            if was_leader:
                self.config.callbacks.on_stopped_leading()

    def _sleep(self, stop: threading.Event, period: float) -> bool:
        """Wait a jittered period; True if stopped."""
        return stop.wait(period * (1.0 + random.random() * (JITTER_FACTOR - 1.0)))

    def _acquire(self, stop: threading.Event) -> bool:
        desc = self.config.lock.describe()
        log.info("attempting to acquire leader lease", lease=desc)
        while not stop.is_set():
            if self.try_acquire_or_renew():
                log.info("successfully acquired lease", lease=desc)
                return True
            if self._sleep(stop, self.config.retry_period):
                break
        return False

    def _renew(self, stop: threading.Event) -> None:
        cfg = self.config
        desc = cfg.lock.describe()
        while not stop.is_set():
            deadline = cfg.clock() + cfg.renew_deadline
            renewed = False
            while cfg.clock() < deadline:
                if self.try_acquire_or_renew():
                    renewed = True
                    break
                if stop.wait(cfg.retry_period):
                    break
            if stop.is_set():
                break
            if not renewed:
                log.info("failed to renew lease", lease=desc)
                return
            if stop.wait(cfg.retry_period):
                break
        if cfg.release_on_cancel:
            self.release()

    def release(self) -> bool:
        """Give the lease up (holder cleared, duration 1 s) if we hold it."""
        if not self.is_leader():
            return True
        now = _utcnow()
        record = LeaderElectionRecord(holder_identity="", lease_duration_seconds=1, acquire_time=now, renew_time=now,
                                      leader_transitions=self._observed.leader_transitions if self._observed else 0)
        try:
            self.config.lock.update(record)
        except Exception as err:
            log.error("Failed to release lock", error=str(err))
            return False
        self._set_observed(record)
        return True

    def _set_observed(self, record: LeaderElectionRecord) -> None:
        with self._lock:
            self._observed = record
            self._observed_at = self.config.clock()

    def try_acquire_or_renew(self) -> bool:
        cfg = self.config
        identity = cfg.lock.identity()
        now = _utcnow()
        desired = LeaderElectionRecord(identity, int(cfg.lease_duration), now, now, 0)
        try:
            current = cfg.lock.get()
        except errors.StatusError as err:
            if not errors.is_not_found(err):
                log.error("error retrieving resource lock", lease=cfg.lock.describe(), error=str(err))
                return False
            try:
                cfg.lock.create(desired)
            except Exception as create_err:
                log.error("error initially creating leader election record", error=str(create_err))
                return False
            self._set_observed(desired)
            self._became(True, identity)
            return True
        except Exception as err:
            log.error("error retrieving resource lock", lease=cfg.lock.describe(), error=str(err))
            return False

        with self._lock:
            changed = self._observed != current
        if changed:
            self._set_observed(current)
        held_by_other = current.holder_identity not in ("", identity)
        with self._lock:
            expires = self._observed_at + current.lease_duration_seconds
        if held_by_other and expires > cfg.clock():
            self._report_leader(current.holder_identity)
            return False
        if current.holder_identity == identity:
            desired = LeaderElectionRecord(identity, int(cfg.lease_duration), current.acquire_time or now, now,
                                           current.leader_transitions)
        else:
            desired = LeaderElectionRecord(identity, int(cfg.lease_duration), now, now,
                                           current.leader_transitions + 1)
        try:
            cfg.lock.update(desired)
        except Exception as err:
            log.debug("failed to update lock", error=str(err))
            return False
        self._set_observed(desired)
        self._became(True, identity)
        return True

    def _became(self, leader: bool, identity: str) -> None:
        with self._lock:
            self._is_leader = leader
        self._report_leader(identity)

    def _report_leader(self, identity: str) -> None:
        if identity and identity != self._reported_leader:
            self._reported_leader = identity
            if self.config.callbacks.on_new_leader is not None:
                self.config.callbacks.on_new_leader(identity)


def run_or_die(config: LeaderElectionConfig, stop: threading.Event) -> None:
    """Validate ``config`` (raising ValueError) and run an elector until it stops leading or ``stop``."""
    LeaderElector(config).run(stop)
