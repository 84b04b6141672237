"""Resource locks for leader election (client-go's tools/leaderelection/resourcelock).

``LeaseLock`` keeps the election record in a coordination.k8s.io/v1 Lease (as a plain dict):
holderIdentity, leaseDurationSeconds, acquireTime, renewTime (MicroTime), leaseTransitions.
``get`` raises NotFoundError when there is no Lease; ``update`` uses the resourceVersion of the
last ``get``/``create`` so a concurrent writer gets a Conflict.
"""

from __future__ import annotations

import datetime
import threading
from dataclasses import dataclass
from typing import Any, Protocol

from samplecontroller.client.resource import ResourceClient
from samplecontroller.client.types import ResourceInfo
from samplecontroller.rest import RESTClient

LEASES: ResourceInfo[dict[str, Any]] = ResourceInfo(
    group="coordination.k8s.io", version="v1", resource="leases", kind="Lease", namespaced=True, model=dict,
    list_model=dict, list_kind="LeaseList",
)


@dataclass(frozen=True)
class LeaderElectionRecord:
    """What the lock stores: holder identity, lease duration, acquire and renew times, transitions."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: datetime.datetime | None = None
    renew_time: datetime.datetime | None = None
    leader_transitions: int = 0


class LeaseClient(Protocol):
    """The verbs a LeaseLock needs (a ResourceClient of leases with the dict model fits)."""

    def get(self, name: str) -> dict[str, Any]:
        """The Lease ``name`` (NotFoundError if absent)."""

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Create the Lease."""

    def update(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Replace the Lease (ConflictError if its resourceVersion is stale)."""


class ResourceLock(Protocol):
    """Where the election record lives (Go's resourcelock.Interface).

    ``get`` raises a NotFound StatusError when there is no record yet; ``update`` must fail
    (Conflict) if the record changed since this lock's last ``get``/``create``/``update``.
    """

    def get(self) -> LeaderElectionRecord:
        """The current record (NotFoundError when there is no lock object yet)."""

    def create(self, record: LeaderElectionRecord) -> None:
        """Create the lock object holding ``record``."""

    def update(self, record: LeaderElectionRecord) -> None:
        """Write ``record`` over the lock object last read (ConflictError if someone wrote meanwhile)."""

    def record_event(self, what: str) -> None:
        """Record an Event about the lock (``what``: "became leader", "stopped leading")."""

    def identity(self) -> str:
        """This candidate's identity (the holder it writes)."""

    def describe(self) -> str:
        """``namespace/name`` of the lock, for logs."""


class _Recorder(Protocol):
    def event(self, obj: Any, event_type: str, reason: str, message: str) -> None: ...


def _micro(t: datetime.datetime | None) -> str | None:
    if t is None:
        return None
    return t.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse(s: Any) -> datetime.datetime | None:
    if not isinstance(s, str) or not s:
        return None
    try:
        return datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        return None


class LeaseLock:
    """A ResourceLock on ``namespace/name`` Lease for ``identity``."""

    def __init__(self, namespace: str, name: str, client: LeaseClient, identity: str, *,
                 event_recorder: _Recorder | None = None, labels: dict[str, str] | None = None) -> None:
        if not identity:
            raise ValueError("leader election identity must not be empty")
        if not name or not namespace:
            raise ValueError("a LeaseLock needs a namespace and a name")
        self.event_recorder = event_recorder
        self.labels = dict(labels or {})
        self.namespace = namespace
        self.name = name
        self.client = client
        self._identity = identity
        self._lock = threading.Lock()
        self._lease: dict[str, Any] | None = None

    @classmethod
    def for_rest_client(cls, rest: RESTClient, namespace: str, name: str, identity: str, *,
                        event_recorder: _Recorder | None = None) -> LeaseLock:
        """A LeaseLock over the API (``ResourceClient`` of coordination.k8s.io/v1 leases, dict model)."""
        return cls(namespace, name, ResourceClient(rest, LEASES, namespace), identity, event_recorder=event_recorder)

    def _spec(self, record: LeaderElectionRecord) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "holderIdentity": record.holder_identity,
            "leaseDurationSeconds": record.lease_duration_seconds,
            "leaseTransitions": record.leader_transitions,
        }
        if record.acquire_time is not None:
            spec["acquireTime"] = _micro(record.acquire_time)
        if record.renew_time is not None:
            spec["renewTime"] = _micro(record.renew_time)
        return spec

    def get(self) -> LeaderElectionRecord:
        lease = self.client.get(self.name)
        with self._lock:
            self._lease = lease
        spec = lease.get("spec") or {}
        return LeaderElectionRecord(
            holder_identity=spec.get("holderIdentity") or "",
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=_parse(spec.get("acquireTime")),
            renew_time=_parse(spec.get("renewTime")),
            leader_transitions=int(spec.get("leaseTransitions") or 0),
        )

    def create(self, record: LeaderElectionRecord) -> None:
        md: dict[str, Any] = {"name": self.name, "namespace": self.namespace}
        if self.labels:
            md["labels"] = dict(self.labels)
        lease = self.client.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": md,
                                    "spec": self._spec(record)})
        with self._lock:
            self._lease = lease

    def update(self, record: LeaderElectionRecord) -> None:
        with self._lock:
            if self._lease is None:
                raise RuntimeError("lease not initialized: call get or create first")
            lease = dict(self._lease)
        lease["spec"] = self._spec(record)
        if self.labels:
            md = dict(lease.get("metadata") or {})
            md["labels"] = {**(md.get("labels") or {}), **self.labels}
            lease["metadata"] = md
        updated = self.client.update(lease)
        with self._lock:
            self._lease = updated

    def record_event(self, what: str) -> None:
        """Record "<identity> <what>" as a Normal LeaderElection event on the Lease (if a recorder is set)."""
        if self.event_recorder is None:
            return
        with self._lock:
            md = dict((self._lease or {}).get("metadata") or {"name": self.name, "namespace": self.namespace})
        subject = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": md}
        self.event_recorder.event(subject, "Normal", "LeaderElection", f"{self._identity} {what}")

    def identity(self) -> str:
        return self._identity

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"
