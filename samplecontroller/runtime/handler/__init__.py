"""Event handlers turn events into reconcile Requests on a queue (pkg/handler).

A handler's methods get the event and the controller's queue (anything with ``add``). The queue
de-duplicates, so many events for one object while it waits give one reconcile.

With a priority queue (``workqueue.PriorityQueue``: a queue with ``add_with_opts``, the
controller's default) the built-in handlers add the requests of a create event from the
informer's initial list and of an update whose resourceVersion did not change (a resync) at
``LOW_PRIORITY``, as controller-runtime's (``WithLowPriorityWhenUnchanged`` is built in);
everything else at the default priority 0.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any, Protocol

from samplecontroller.apimachinery import meta
from samplecontroller.runtime._gvk import gvk_for_type
from samplecontroller.runtime.event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent
from samplecontroller.runtime.reconcile import Request
from samplecontroller.workqueue.priority_queue import LOW_PRIORITY


class Queue(Protocol):
    """The part of a work queue a handler uses."""

    def add(self, item: Any) -> None:
        """Queue ``item`` (a ``Request``); an item already waiting is not queued twice."""


class EventHandler(Protocol):
    """Maps source events to requests on the controller's queue (controller-runtime's ``handler.EventHandler``)."""

    def create(self, e: CreateEvent, q: Queue) -> None:
        """An object was created (or listed at start): add the requests it maps to."""
    def update(self, e: UpdateEvent, q: Queue) -> None:
        """An object changed: add the requests its old and new states map to."""
    def delete(self, e: DeleteEvent, q: Queue) -> None:
        """An object was deleted (possibly seen only as a tombstone): add the requests it maps to."""
    def generic(self, e: GenericEvent, q: Queue) -> None:
        """An event from outside the cluster (a ``Channel`` source): add the requests it maps to."""


def unchanged(e: CreateEvent | UpdateEvent) -> bool:
    """True for an event that does not stem from a change: a create from the initial list, an
    update with the same resourceVersion (a resync). Such requests go in at ``LOW_PRIORITY``."""
    if isinstance(e, CreateEvent):
        return e.is_in_initial_list
    old, new = e.object_old, e.object_new
    return old is not None and new is not None and meta.get_resource_version(old) == meta.get_resource_version(new)


def add(q: Queue, item: Hashable, low: bool = False) -> None:
    """``q.add(item)``, at ``LOW_PRIORITY`` when ``low`` and ``q`` is a priority queue."""
    add_with_opts = getattr(q, "add_with_opts", None) if low else None
    if add_with_opts is not None:
        add_with_opts(item, priority=LOW_PRIORITY)
    else:
        q.add(item)


def request_for(obj: Any) -> Request:
    """The ``Request`` (namespace, name) of ``obj``."""
    return Request(meta.get_namespace(obj), meta.get_name(obj))


class EnqueueRequestForObject:
    """Enqueues the event's own object (both objects of an update, de-duplicated by the queue)."""

    def create(self, e: CreateEvent, q: Queue) -> None:
        """Enqueue the created object."""
        if e.object is not None:
            add(q, request_for(e.object), e.is_in_initial_list)

    def update(self, e: UpdateEvent, q: Queue) -> None:
        """Enqueue the updated object (the new state; the old one if the new one is missing)."""
        if e.object_new is not None:
            add(q, request_for(e.object_new), unchanged(e))
        elif e.object_old is not None:
            q.add(request_for(e.object_old))

    def delete(self, e: DeleteEvent, q: Queue) -> None:
        """Enqueue the deleted object."""
        if e.object is not None:
            q.add(request_for(e.object))

    def generic(self, e: GenericEvent, q: Queue) -> None:
        """Enqueue the event's object."""
        if e.object is not None:
            q.add(request_for(e.object))


class _MappingHandler:
    """Enqueues the requests ``_requests(obj)`` gives for the event's objects (both objects of
    an update), each request once per event."""

    def _requests(self, obj: Any) -> Iterable[Hashable]:
        raise NotImplementedError

    def _add(self, q: Queue, objs: Iterable[Any], low: bool = False) -> None:
        seen: set[Hashable] = set()
        for obj in objs:
            if obj is None:
                continue
            for req in self._requests(obj):
                if req not in seen:
                    seen.add(req)
                    add(q, req, low)

    def create(self, e: CreateEvent, q: Queue) -> None:
        self._add(q, [e.object], e.is_in_initial_list)

    def update(self, e: UpdateEvent, q: Queue) -> None:
        self._add(q, [e.object_old, e.object_new], unchanged(e))

    def delete(self, e: DeleteEvent, q: Queue) -> None:
        self._add(q, [e.object])

    def generic(self, e: GenericEvent, q: Queue) -> None:
        self._add(q, [e.object])


class EnqueueRequestForOwner(_MappingHandler):
    """Enqueues the owner of the event's object when the owner is of ``owner_type``.

    The owner is matched on API group and kind (not version). With ``only_controller`` (the
    default) only the controller reference counts, else every owner reference of that type. For
    an update, owners of both the old and the new object are enqueued (an owner that lost the
    object hears about it). The owner's namespace is the object's (cluster-scoped owners are
    enqueued with an empty namespace when ``owner_namespaced`` is False).
    """

    def __init__(self, owner_type: type[Any], only_controller: bool = True, *, scheme: Any = None,
                 owner_namespaced: bool = True) -> None:
        group, _version, kind = gvk_for_type(owner_type, scheme)
        self.group, self.kind = group, kind
        self.only_controller = only_controller
        self.owner_namespaced = owner_namespaced

    def _owners(self, obj: Any) -> list[Request]:
        if obj is None:
            return []
        refs = meta.get_owner_references(obj)
        if self.only_controller:
            refs = [r for r in refs if r.controller]
        ns = meta.get_namespace(obj) if self.owner_namespaced else ""
        return [Request(ns, r.name) for r in refs if r.kind == self.kind and r.group == self.group]

    def _requests(self, obj: Any) -> Iterable[Hashable]:
        return self._owners(obj)


MapFunc = Callable[[Any], Iterable[Hashable]]


class EnqueueRequestsFromMapFunc(_MappingHandler):
    """Enqueues whatever ``map_fn(object)`` returns (for updates: for the old and new object)."""

    def __init__(self, map_fn: MapFunc) -> None:
        self.map_fn = map_fn

    def _requests(self, obj: Any) -> Iterable[Hashable]:
        return self.map_fn(obj)


class Funcs:
    """A handler from optional functions ``fn(event, queue)``; a missing one ignores its events."""

    def __init__(self, create: Callable[[CreateEvent, Queue], None] | None = None,
                 update: Callable[[UpdateEvent, Queue], None] | None = None,
                 delete: Callable[[DeleteEvent, Queue], None] | None = None,
                 generic: Callable[[GenericEvent, Queue], None] | None = None) -> None:
        self._create, self._update, self._delete, self._generic = create, update, delete, generic

    def create(self, e: CreateEvent, q: Queue) -> None:
        """Call the ``create`` function, if given."""
        if self._create is not None:
            self._create(e, q)

    def update(self, e: UpdateEvent, q: Queue) -> None:
        """Call the ``update`` function, if given."""
        if self._update is not None:
            self._update(e, q)

    def delete(self, e: DeleteEvent, q: Queue) -> None:
        """Call the ``delete`` function, if given."""
        if self._delete is not None:
            self._delete(e, q)

    def generic(self, e: GenericEvent, q: Queue) -> None:
        """Call the ``generic`` function, if given."""
        if self._generic is not None:
            self._generic(e, q)


__all__ = [
    "EnqueueRequestForObject", "EnqueueRequestForOwner", "EnqueueRequestsFromMapFunc", "EventHandler", "Funcs",
    "LOW_PRIORITY", "MapFunc", "Queue", "add", "request_for", "unchanged",
]
