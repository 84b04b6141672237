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
    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: datetime.datetime | None = None
    renew_time: datetime.datetime | None = None
    leader_transitions: int = 0


class LeaseClient(Protocol):
    """The verbs a LeaseLock needs (a ResourceClient of leases with the dict model fits)."""

    def get(self, name: str) -> dict[str, Any]: ...
    def create(self, obj: dict[str, Any]) -> dict[str, Any]: ...
    def update(self, obj: dict[str, Any]) -> dict[str, Any]: ...


class ResourceLock(Protocol):
    def get(self) -> LeaderElectionRecord: ...
    def create(self, record: LeaderElectionRecord) -> None: ...
    def update(self, record: LeaderElectionRecord) -> None: ...
    def identity(self) -> str: ...
    def describe(self) -> str: ...


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

    def __init__(self, namespace: str, name: str, client: LeaseClient, identity: str) -> None:
        if not identity:
            raise ValueError("leader election identity must not be empty")
        self.namespace = namespace
        self.name = name
        self.client = client
        self._identity = identity
        self._lock = threading.Lock()
        self._lease: dict[str, Any] | None = None

    @classmethod
    def for_rest_client(cls, rest: RESTClient, namespace: str, name: str, identity: str) -> LeaseLock:
        return cls(namespace, name, ResourceClient(rest, LEASES, namespace), identity)

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
        lease = self.client.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                    "metadata": {"name": self.name, "namespace": self.namespace},
                                    "spec": self._spec(record)})
        with self._lock:
            self._lease = lease

    def update(self, record: LeaderElectionRecord) -> None:
        with self._lock:
            if self._lease is None:
                raise RuntimeError("lease not initialized: call get or create first")
            lease = dict(self._lease)
        lease["spec"] = self._spec(record)
        updated = self.client.update(lease)
        with self._lock:
            self._lease = updated

    def identity(self) -> str:
        return self._identity

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"
