"""One replica's side of sharding: which kinds are partitioned, the label selector of their
informers, the reconciler wrapper that ignores objects not assigned here and acknowledges drains,
and the label on owned objects it creates (see the package docstring)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import msgspec

from samplecontroller.apimachinery import meta
from samplecontroller.apimachinery.errors import ConflictError, InvalidError, NotFoundError
from samplecontroller.client.types import JSON_PATCH, MERGE_PATCH
from samplecontroller.logs import get_logger
from samplecontroller.runtime._gvk import gvk_for_type
from samplecontroller.runtime.cache import ByObject
from samplecontroller.runtime.client import RawPatch
from samplecontroller.runtime.predicate import Predicate
from samplecontroller.runtime.reconcile import Request, Result
from samplecontroller.runtime.sharding import drain_label, shard_label

log = get_logger("runtime.sharding")

__all__ = ["AsyncShardedReconciler", "Partition", "Shard", "ShardedReconciler", "drain_or"]


@dataclass(frozen=True)
class Partition:
    """A partitioned kind: ``model`` with its resource; ``owner`` (group, kind) for an owned kind,
    whose objects hash by their controller of that kind; None for a main kind."""

    model: type[Any]
    info: Any
    owner: tuple[str, str] | None = None


class Shard:
    """This replica in ``ring`` as ``identity`` (the name of its shard Lease)."""

    def __init__(self, ring: str, identity: str, namespace: str, scheme: Any) -> None:
        self.ring = ring
        self.identity = identity
        self.namespace = namespace
        self.scheme = scheme
        self.shard_label = shard_label(ring)
        self.drain_label = drain_label(ring)
        self._lock = threading.Lock()
        self.partitions: dict[type[Any], Partition] = {}

    def selector(self) -> str:
        """The label selector of this replica's objects."""
        return f"{self.shard_label}={self.identity}"

    def partition(self, cache: Any, model: Any, owner: type[Any] | None = None) -> None:
        """Partition ``model`` (``owner``: the main kind it is owned by): its informer selects this
        replica's objects; an owned kind's is indexed by controller UID (``CONTROLLER_UID_INDEX``:
        a drain's acknowledgement finds its owner's objects without scanning them all). Before
        the informer is made (the builder calls it first)."""
        if not self.register(model, owner):
            return
        with self._lock:
            by_object = dict(cache.options.by_object)
            current = by_object.get(model, ByObject())
            selector = self.selector() if not current.label_selector else f"{current.label_selector},{self.selector()}"
            by_object[model] = replace(current, label_selector=selector)
            cache.options.by_object = by_object
        if owner is not None:
            cache.index_field(model, CONTROLLER_UID_INDEX, controller_uids)

    def register(self, model: Any, owner: type[Any] | None = None) -> bool:
        """Record ``model`` as partitioned (``owner``: the main kind it is owned by) for the sharder
        and ``label_created``; the caller makes its informers select ``selector()`` (``partition``
        does, for the Manager's cache). False when it was registered already."""
        if not isinstance(model, type) or not hasattr(model, "__struct_fields__"):
            raise ValueError(f"sharding partitions typed kinds only (generated models), not {model!r}")
        info = self.scheme.info_for(model)
        owner_gk = None
        if owner is not None:
            group, _version, kind = gvk_for_type(owner, self.scheme)
            owner_gk = (group, kind)
        with self._lock:
            known = self.partitions.get(model)
            if known is not None:
                if known.owner != owner_gk:
                    raise ValueError(f"{model.__name__} is partitioned twice, as main and owned kind or under two "
                                     "owners: a sharded object has one hash key")
                return False
            self.partitions[model] = Partition(model, info, owner_gk)
            return True

    def label_created(self, obj: Any) -> Any:
        """``obj`` with this replica's shard label when it is of an owned partitioned kind and its
        controller is of the owner kind (that owner is assigned here: owned objects follow it)."""
        part = self.partitions.get(type(obj))
        if part is None or part.owner is None or self.shard_label in meta.get_labels(obj):
            return obj
        controlled = any(r.controller and (r.group, r.kind) == part.owner for r in meta.get_owner_references(obj))
        if not controlled:
            return obj
        md = obj.metadata
        labels = {**(md.labels if isinstance(md.labels, Mapping) else {}), self.shard_label: self.identity}
        return msgspec.structs.replace(obj, metadata=msgspec.structs.replace(md, labels=labels))

    def assigned(self, obj: Any) -> tuple[bool, bool]:
        """(assigned here, draining) for a cached object."""
        labels = meta.get_labels(obj)
        return labels.get(self.shard_label) == self.identity, self.drain_label in labels

    def owned_by(self, obj: Any, candidates: Any) -> list[Any]:
        """Of ``candidates``, those of an owned partitioned kind controlled by ``obj`` and assigned here."""
        uid = meta.get_uid(obj)
        owned = []
        for o in candidates:
            part = self.partitions.get(type(o))
            if part is None or part.owner is None or meta.get_labels(o).get(self.shard_label) != self.identity:
                continue
            if any(r.controller and r.uid == uid for r in meta.get_owner_references(o)):
                owned.append(o)
        return owned

    def owned_kinds(self) -> list[type[Any]]:
        """The owned partitioned kinds."""
        return [p.model for p in self.partitions.values() if p.owner is not None]

    def unassign_patch(self, obj: Any) -> RawPatch:
        """An owned object released with its drained owner: its shard label removed if it still names
        this shard (a JSON patch ``test``, not the resourceVersion: status writes change that
        often); the sharder then assigns it where its owner goes."""
        path = "/metadata/labels/" + self.shard_label.replace("~", "~0").replace("/", "~1")
        return RawPatch(JSON_PATCH, [{"op": "test", "path": path, "value": self.identity},
                                     {"op": "remove", "path": path}])

    def release_patch(self, obj: Any) -> RawPatch:
        """The acknowledgement of a drain: both labels removed, guarded by the object's resourceVersion."""
        return RawPatch(MERGE_PATCH, {"metadata": {"resourceVersion": meta.get_resource_version(obj),
                                                   "labels": {self.shard_label: None, self.drain_label: None}}})


CONTROLLER_UID_INDEX = "sharding.controller-uid"
"""The field index of a partitioned owned kind in a sharded Manager's cache: its controller's UID."""


def controller_uids(obj: Any) -> list[str]:
    """The index values of ``CONTROLLER_UID_INDEX``: the UID of ``obj``'s controller owner reference."""
    return [r.uid for r in meta.get_owner_references(obj) if r.controller and r.uid]


_GONE = (ConflictError, NotFoundError, InvalidError)
"""What patching an owned object while draining may meet when it changed or went meanwhile (409,
404, 422 for a failed resourceVersion test): the sharder's next pass places it."""


class _ShardedBase:
    def __init__(self, inner: Any, shard: Shard, model: type[Any], client: Any) -> None:
        self.inner = inner
        self.shard = shard
        self.model = model
        self.client = client

    def _route(self, request: Request, obj: Any) -> bool | None:
        """None: not assigned here (skipped); True: draining (released, not reconciled); False:
        reconciled by ``inner``."""
        mine, draining = self.shard.assigned(obj)
        if not mine:
            return None
        if draining:
            log.debug("Draining object", request=str(request), shard=self.shard.identity)
        return draining


class ShardedReconciler(_ShardedBase):
    """Wraps a sync reconciler of a partitioned main kind (the anchor's shard controller
    Reconciler): an object absent from the cache (deleted, or moved to another shard: the two
    look alike here, so a reconciler that cleans up on NotFound must use finalizers) or not
    assigned here is not reconciled; one with the drain label is released (both labels removed)
    with the owned objects it controls here (their shard label removed: they follow it) and not
    reconciled; the rest goes to ``inner``."""

    def reconcile(self, request: Request) -> Result:
        """Reconcile ``request`` with ``inner`` when its object is assigned here and not draining."""
        try:
            obj = self.client.get(self.model, request.namespace, request.name)
        except NotFoundError:  # gone, or no longer assigned here (as the anchor: not reconciled)
            return Result()
        route = self._route(request, obj)
        if route is None:
            return Result()
        if route:
            self.client.patch(obj, self.shard.release_patch(obj))
            for kind in self.shard.owned_kinds():  # its owned objects follow it (created here meanwhile too)
                candidates = self.client.list(kind, namespace=request.namespace,
                                              matching_fields={CONTROLLER_UID_INDEX: meta.get_uid(obj)})
                for owned in self.shard.owned_by(obj, candidates):
                    try:
                        self.client.patch(owned, self.shard.unassign_patch(owned))
                    except _GONE:
                        pass
            return Result()
        result: Result = self.inner.reconcile(request)
        return result


class AsyncShardedReconciler(_ShardedBase):
    """``ShardedReconciler`` for an async reconciler (``client``: the async client)."""

    async def reconcile(self, request: Request) -> Result:
        """Reconcile ``request`` with ``inner`` when its object is assigned here and not draining."""
        try:
            obj = await self.client.get(self.model, request.namespace, request.name)
        except NotFoundError:  # gone, or no longer assigned here (as the anchor: not reconciled)
            return Result()
        route = self._route(request, obj)
        if route is None:
            return Result()
        if route:
            await self.client.patch(obj, self.shard.release_patch(obj))
            for kind in self.shard.owned_kinds():  # its owned objects follow it
                candidates = await self.client.list(kind, namespace=request.namespace,
                                                    matching_fields={CONTROLLER_UID_INDEX: meta.get_uid(obj)})
                for owned in self.shard.owned_by(obj, candidates):
                    try:
                        await self.client.patch(owned, self.shard.unassign_patch(owned))
                    except _GONE:
                        pass
            return Result()
        return await self.inner.reconcile(request)  # type: ignore[no-any-return]


class _DrainOr:
    """Passes an event when the object has the drain label, else when every predicate does (the
    anchor's shard predicate: a drain must reach the reconciler whatever the filters say)."""

    def __init__(self, label: str, predicates: tuple[Predicate, ...]) -> None:
        self.label = label
        self.predicates = predicates

    def _drains(self, *objs: Any) -> bool:
        return any(o is not None and self.label in meta.get_labels(o) for o in objs)

    def create(self, e: Any) -> bool:
        return self._drains(e.object) or all(p.create(e) for p in self.predicates)

    def update(self, e: Any) -> bool:
        return self._drains(e.object_new) or all(p.update(e) for p in self.predicates)

    def delete(self, e: Any) -> bool:
        return all(p.delete(e) for p in self.predicates)

    def generic(self, e: Any) -> bool:
        return self._drains(e.object) or all(p.generic(e) for p in self.predicates)


def drain_or(shard: Shard, predicates: tuple[Predicate, ...]) -> tuple[Predicate, ...]:
    """The predicates of a partitioned main kind: unchanged when there are none, else one that
    also passes every object with the drain label."""
    return (_DrainOr(shard.drain_label, predicates),) if predicates else ()
