"""Leader election, like client-go's tools/leaderelection/leaderelection.go.

A candidate tries to acquire the lock every ``retry_period`` (jittered up to ``JITTER_FACTOR``).
It may take the lock when it is free (empty holder), already its own, or expired: not changed
within the holder's ``leaseDurationSeconds`` as measured on this candidate's own clock since it
last saw the record change (so clock skew between machines does not matter).

A leader renews every ``retry_period``; if it cannot renew within ``renew_deadline`` (requests
failing, hanging, or another holder in the record) it stops leading: the stop event handed to
``on_started_leading`` is set and ``run`` returns. ``on_started_leading(stop)`` runs on a
thread of its own. ``on_new_leader(identity)`` runs, on a thread of its own, whenever the
observed holder changes (including to this candidate). As in Go, ``on_stopped_leading`` is
called whenever ``run`` returns, even if this candidate never led (then ``run``'s stop was set).
With ``release_on_cancel``, a leader stopped through ``run``'s stop event clears the holder (and
sets a 1 s duration) so a successor need not wait for the lease to expire.

Guarantees are Go's: at most one candidate *believes* it leads at any time only if clocks run
at the same rate and renew_deadline < lease_duration; this is not fencing.

Validation, as in Go: lease_duration > renew_deadline > JITTER_FACTOR * retry_period, all
positive, callbacks set and a non-empty lock identity. ``clock`` (a ``wait.Clock``: monotonic
seconds, and every wait of the elector) is injectable, so tests run on a ``wait.FakeClock``; the lease duration is written as whole seconds (rounded up) because the Lease field
is an integer.
"""

from __future__ import annotations

import datetime
import math
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from samplecontroller.apimachinery import errors
from samplecontroller.leaderelection.resourcelock import LeaderElectionRecord, ResourceLock
from samplecontroller.logs import get_logger
from samplecontroller.wait import REAL_CLOCK, Clock, Context, sleep

log = get_logger("leaderelection")

JITTER_FACTOR = 1.2


def _noop_started(stop: threading.Event) -> None:
    return None


def _noop() -> None:
    return None


@dataclass
class LeaderCallbacks:
    """``on_started_leading(stop)`` runs on its own thread when this candidate starts leading; ``stop``
    is set when it stops. ``on_stopped_leading()`` runs when ``run`` returns. ``on_new_leader(identity)``
    (optional) runs on its own thread when the observed leader changes."""

    on_started_leading: Callable[[threading.Event], None] = _noop_started
    on_stopped_leading: Callable[[], None] = _noop
    on_new_leader: Callable[[str], None] | None = None


@dataclass
class LeaderElectionConfig:
    """Durations are seconds; defaults are Go's (15 / 10 / 2). See the module docstring."""

    lock: ResourceLock
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    callbacks: LeaderCallbacks = field(default_factory=LeaderCallbacks)
    release_on_cancel: bool = False
    name: str = ""
    clock: Clock = REAL_CLOCK

    def validate(self) -> None:
        """Raise ValueError with Go's message for an invalid configuration."""
        if self.lease_duration <= self.renew_deadline:
            raise ValueError("lease_duration must be greater than renew_deadline")
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            raise ValueError("renew_deadline must be greater than retry_period*JITTER_FACTOR")
        if self.lease_duration <= 0:
            raise ValueError("lease_duration must be greater than zero")
        if self.renew_deadline <= 0:
            raise ValueError("renew_deadline must be greater than zero")
        if self.retry_period <= 0:
            raise ValueError("retry_period must be greater than zero")
        if self.callbacks is None or self.callbacks.on_started_leading is None:
            raise ValueError("on_started_leading callback must not be None")
        if self.callbacks.on_stopped_leading is None:
            raise ValueError("on_stopped_leading callback must not be None")
        if self.lock is None:
            raise ValueError("lock must not be None")
        if not self.lock.identity():
            raise ValueError("lock identity is empty")


def _utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class LeaderElector:
    """Runs one candidate; use one elector per ``run``. ``is_leader``/``get_leader`` are thread-safe."""

    def __init__(self, config: LeaderElectionConfig) -> None:
        config.validate()
        self.config = config
        self._lock = threading.Lock()
        self._observed = LeaderElectionRecord()
        self._observed_at = 0.0
        self._reported_leader = ""
        self._leading = False

    # -- observed state -------------------------------------------------------------------------

    def _set_observed(self, record: LeaderElectionRecord) -> None:
        with self._lock:
            self._observed = record
            self._observed_at = self.config.clock.now()

    def _observed_record(self) -> LeaderElectionRecord:
        with self._lock:
            return self._observed

    def _holds(self) -> bool:
        """Go's IsLeader: the last observed record names this candidate."""
        return self._observed_record().holder_identity == self.config.lock.identity()

    def _lease_valid(self, now: float) -> bool:
        with self._lock:
            return self._observed_at + self._observed.lease_duration_seconds > now

    def is_leader(self) -> bool:
        """True while this candidate leads (between acquiring and losing or giving up the lease)."""
        with self._lock:
            leading = self._leading
        return leading and self._holds()

    def get_leader(self) -> str:
        """The holder identity last observed ("" if none)."""
        return self._observed_record().holder_identity

    # -- the loop -------------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Acquire, lead until the lease is lost or ``stop`` is set, then return."""
        cb = self.config.callbacks
        try:
            if not self._acquire(stop):
                return
            leading_stop = Context()  # a threading.Event that also takes done-callbacks
            with self._lock:
                self._leading = True
            threading.Thread(target=self._started, args=(leading_stop,), name="leader", daemon=True).start()
            try:
                self._renew(stop)
            finally:
                with self._lock:
                    self._leading = False
                leading_stop.set()
        finally:
            cb.on_stopped_leading()

    def _started(self, leading_stop: threading.Event) -> None:
        try:
            self.config.callbacks.on_started_leading(leading_stop)
        except Exception as err:
            log.error("on_started_leading failed", error=f"{type(err).__name__}: {err}")

    def _jittered(self, period: float) -> float:
        return period * (1.0 + random.random() * (JITTER_FACTOR - 1.0))

    def _acquire(self, stop: threading.Event) -> bool:
        desc = self.config.lock.describe()
        log.info("attempting to acquire leader lease", lease=desc)
        while not stop.is_set():
            succeeded = self.try_acquire_or_renew()
            self._maybe_report_transition()
            if succeeded:
                self._record_event("became leader")
                log.info("successfully acquired lease", lease=desc)
                return True
            if sleep(stop, self._jittered(self.config.retry_period), self.config.clock):
                break
        return False

    def _renew(self, stop: threading.Event) -> None:
        cfg = self.config
        desc = cfg.lock.describe()
        try:
            while not stop.is_set():
                if not self._renew_within_deadline(stop):
                    if stop.is_set():
                        break
                    log.info("failed to renew lease", lease=desc, renew_deadline=cfg.renew_deadline)
                    return
                if sleep(stop, cfg.retry_period, cfg.clock):
                    break
            if cfg.release_on_cancel:
                self.release()
        finally:
            self._record_event("stopped leading")

    def _renew_within_deadline(self, stop: threading.Event) -> bool:
        """Try every retry_period until a renewal succeeds (True) or renew_deadline passes (False)."""
        cfg = self.config
        deadline = cfg.clock.now() + cfg.renew_deadline
        while True:
            renewed = self._try_before(deadline)
            self._maybe_report_transition()
            if renewed:
                return True
            left = deadline - cfg.clock.now()
            if left <= 0 or sleep(stop, min(cfg.retry_period, left), cfg.clock) or cfg.clock.now() >= deadline:
                return False

    def _try_before(self, deadline: float) -> bool:
        """One attempt bounded by ``deadline``: a request still hanging then counts as a failure."""
        result: list[bool] = []
        done = Context()

        def attempt() -> None:
            try:
                result.append(self.try_acquire_or_renew())
            finally:
                done.set()

        threading.Thread(target=attempt, name="lease-renew", daemon=True).start()
        sleep(done, deadline - self.config.clock.now(), self.config.clock)
        return bool(result) and result[0]

    def release(self) -> bool:
        """Give the lease up (holder cleared, duration 1 s) if this candidate holds it; True on success."""
        if not self._holds():
            return True
        now = _utcnow()
        record = LeaderElectionRecord(holder_identity="", lease_duration_seconds=1, acquire_time=now,
                                      renew_time=now, leader_transitions=self._observed_record().leader_transitions)
        try:
            self.config.lock.update(record)
        except Exception as err:
            log.error("Failed to release lock", lease=self.config.lock.describe(), error=str(err))
            return False
        self._set_observed(record)
        return True

    def try_acquire_or_renew(self) -> bool:
        """One attempt to take or renew the lease (Go's tryAcquireOrRenew); never raises."""
        cfg = self.config
        lock = cfg.lock
        now = _utcnow()
        desired = LeaderElectionRecord(lock.identity(), math.ceil(cfg.lease_duration), now, now, 0)

        # 1. Fast path: a leader updates optimistically from the record it wrote last.
        if self._holds() and self._lease_valid(cfg.clock.now()):
            old = self._observed_record()
            optimistic = LeaderElectionRecord(desired.holder_identity, desired.lease_duration_seconds,
                                              old.acquire_time, now, old.leader_transitions)
            try:
                lock.update(optimistic)
                self._set_observed(optimistic)
                return True
            except Exception as err:
                log.debug("failed to update lock optimistically, falling back to slow path", error=str(err))

        # 2. Get, or create the record.
        try:
            current = lock.get()
        except errors.StatusError as err:
            if not errors.is_not_found(err):
                log.error("error retrieving resource lock", lease=lock.describe(), error=str(err))
                return False
            try:
                lock.create(desired)
            except Exception as create_err:
                log.error("error initially creating leader election record", error=str(create_err))
                return False
            self._set_observed(desired)
            return True
        except Exception as err:
            log.error("error retrieving resource lock", lease=lock.describe(), error=f"{type(err).__name__}: {err}")
            return False

        # 3. Record obtained: check the identity and the time.
        if current != self._observed_record():
            self._set_observed(current)
        if current.holder_identity and self._lease_valid(cfg.clock.now()) and not self._holds():
            return False

        # 4. Take it (or renew through the slow path).
        if self._holds():
            desired = LeaderElectionRecord(desired.holder_identity, desired.lease_duration_seconds,
                                           current.acquire_time, now, current.leader_transitions)
        else:
            desired = LeaderElectionRecord(desired.holder_identity, desired.lease_duration_seconds, now, now,
                                           current.leader_transitions + 1)
        try:
            lock.update(desired)
        except Exception as err:
            log.error("Failed to update lock", lease=lock.describe(), error=str(err))
            return False
        self._set_observed(desired)
        return True

    def _maybe_report_transition(self) -> None:
        holder = self.get_leader()
        with self._lock:
            if not holder or holder == self._reported_leader:  # Go also reports "" (a release); we do not
                return
            self._reported_leader = holder
        callback = self.config.callbacks.on_new_leader
        if callback is not None:
            threading.Thread(target=self._report, args=(callback, holder), name="new-leader", daemon=True).start()

    @staticmethod
    def _report(callback: Callable[[str], None], holder: str) -> None:
        try:
            callback(holder)
        except Exception as err:
            log.error("on_new_leader failed", error=f"{type(err).__name__}: {err}")

    def _record_event(self, what: str) -> None:
        try:
            self.config.lock.record_event(what)
        except Exception as err:
            log.debug("could not record leader election event", error=str(err))


def run_or_die(config: LeaderElectionConfig, stop: threading.Event) -> None:
    """Validate ``config`` (raising ValueError) and run an elector until it stops leading or ``stop`` is set."""
    LeaderElector(config).run(stop)
