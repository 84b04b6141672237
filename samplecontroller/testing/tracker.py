"""ObjectTracker: the in-memory API of the fake clientset (client-go's testing/fixture.go).

Objects are kept in wire form (dicts) per (group, version, resource). It provides what
controller unit tests need and no more: a global resourceVersion bumped on every write, uid and
creationTimestamp on create, generation bumps on spec changes, status subresource semantics
(``update`` ignores ``.status`` and ``update_status`` changes only ``.status`` when the resource
has a status subresource), optimistic concurrency (a stale resourceVersion is a Conflict), label
and field selectors (any dotted field path) on list and watch, and watch fan-out.

Watch semantics: a watch with a numeric, non-zero ``resource_version`` first replays the
retained events newer than it (so list-then-watch misses nothing, like the API server); the
history keeps the last ``history`` events, and a watch from an older version gets one ERROR event
(410 Expired), as a real watch does. A watch without a resourceVersion (or "0") sends only later
changes (client-go's tracker behaviour; it sends no synthetic ADDED events).

Managed fields: this tracker keeps what each write carries and treats nothing as owned (client-go's
``NewObjectTracker``); ``FieldManagedObjectTracker`` (``samplecontroller.testing.fieldmanaged``,
client-go's ``NewFieldManagedObjectTracker``) records them and merges server-side apply as the server.

There is no defaulting, validation, admission, finalizer handling or garbage collection: use the
embedded API server for those.
"""

from __future__ import annotations

import copy
import datetime
import functools
import queue
import threading
import uuid
from collections import deque
from collections.abc import Iterator
from typing import Any, NamedTuple

from samplecontroller.apimachinery import errors, fields, labels

__all__ = ["GroupVersionResource", "ObjectTracker", "TrackerWatch"]


class GroupVersionResource(NamedTuple):
    """A resource's group, version and plural name (client-go's schema.GroupVersionResource)."""

    group: str
    version: str
    resource: str


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _field_value(obj: dict[str, Any], path: str) -> str | None:
    node: Any = obj
    for part in path.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return None if node is None else str(node)


class TrackerWatch:
    """A watch on the tracker: iterate ``(type, object_dict)``; ``stop()`` from any thread.

    For an ERROR event the dict is a Status. Events queue without bound until consumed.
    """

    _STOP = object()

    def __init__(self, tracker: ObjectTracker, gvr: GroupVersionResource, namespace: str | None,
                 label_selector: labels.Selector, field_selector: fields.Selector) -> None:
        self._tracker = tracker
        self.gvr = gvr
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self._queue: queue.Queue[Any] = queue.Queue()
        self._stopped = False

    def matches(self, obj: dict[str, Any]) -> bool:
        """True when ``obj`` is in the watch's namespace and matches its selectors."""
        md = obj.get("metadata") or {}
        if self.namespace and md.get("namespace") != self.namespace:
            return False
        return self.label_selector.matches(md.get("labels") or {}) and self.field_selector.matches(
            functools.partial(_field_value, obj))

    def push(self, event_type: str, obj: dict[str, Any]) -> None:
        """Queue an event (a copy of ``obj``) unless the watch has stopped."""
        if not self._stopped:
            self._queue.put((event_type, copy.deepcopy(obj)))

    def stop(self) -> None:
        """End the watch and unregister it from the tracker; iteration then ends."""
        self._stopped = True
        self._tracker._remove_watch(self)
        self._queue.put(self._STOP)

    def __iter__(self) -> Iterator[tuple[str, dict[str, Any]]]:
        while True:
            item = self._queue.get()
            if item is self._STOP:
                return
            yield item


class ObjectTracker:
    """Thread-safe in-memory objects keyed by resource, namespace and name.

    ``status_subresources`` names the resources with a status subresource and ``kinds`` maps a
    resource to its kind (the REST mapping; the fake clients register both). Writes without a
    field manager name ``default_field_manager`` (None here: no field management).
    """

    default_field_manager: str | None = None

    def __init__(self, history: int = 10000) -> None:
        self._lock = threading.RLock()
        self._history: deque[tuple[int, GroupVersionResource, str, dict[str, Any]]] = deque(maxlen=history)
        self._objects: dict[GroupVersionResource, dict[tuple[str, str], dict[str, Any]]] = {}
        self._rv = 0
        self._watches: list[TrackerWatch] = []
        self.status_subresources: set[GroupVersionResource] = set()
        self.kinds: dict[GroupVersionResource, str] = {}

    def _bump(self) -> str:
        self._rv += 1
        return str(self._rv)

    def _notify(self, gvr: GroupVersionResource, event_type: str, obj: dict[str, Any]) -> None:
        self._history.append((self._rv, gvr, event_type, copy.deepcopy(obj)))
        for w in list(self._watches):
            if w.gvr == gvr and w.matches(obj):
                w.push(event_type, obj)

    def _remove_watch(self, w: TrackerWatch) -> None:
        with self._lock:
            if w in self._watches:
                self._watches.remove(w)

    @staticmethod
    def _key(obj: dict[str, Any], namespace: str | None) -> tuple[str, str]:
        md = obj.setdefault("metadata", {})
        if namespace:
            if md.get("namespace") and md["namespace"] != namespace:
                raise errors.from_status(errors.new_status(
                    400, errors.REASON_BAD_REQUEST, "the namespace of the provided object does not match the "
                    f"namespace sent on the request ({md['namespace']!r} != {namespace!r})"))
            md["namespace"] = namespace
        return md.get("namespace") or "", md.get("name") or ""

    def add(self, gvr: GroupVersionResource, obj: dict[str, Any]) -> dict[str, Any]:
        """Insert or overwrite as-is (for seeding), bumping resourceVersion; no events' semantics."""
        with self._lock:
            obj = copy.deepcopy(obj)
            key = self._key(obj, None)
            if obj.get("kind"):
                self.kinds.setdefault(gvr, str(obj["kind"]))
            md = obj["metadata"]
            md.setdefault("uid", str(uuid.uuid4()))
            md.setdefault("creationTimestamp", _now())
            md.setdefault("resourceVersion", self._bump())
            existed = key in self._objects.setdefault(gvr, {})
            self._objects[gvr][key] = obj
            self._notify(gvr, "MODIFIED" if existed else "ADDED", obj)
            return copy.deepcopy(obj)

    def manage_fields(self, gvr: GroupVersionResource, old: dict[str, Any] | None, new: dict[str, Any],
                      requested: Any, subresource: str | None, field_manager: str | None) -> None:
        """Set ``new``'s ``metadata.managedFields`` before it is stored (``old``: the stored object,
        None on create; ``requested``: the managedFields the write carried). This tracker keeps what
        the write carried; a field-managing tracker (the runtime fake client's) overrides it."""

    def create(self, gvr: GroupVersionResource, obj: dict[str, Any], namespace: str | None, *,
               field_manager: str | None = None) -> dict[str, Any]:
        with self._lock:
            obj = copy.deepcopy(obj)
            md = obj.setdefault("metadata", {})
            if not md.get("name") and md.get("generateName"):
                md["name"] = md["generateName"] + uuid.uuid4().hex[:5]
            key = self._key(obj, namespace)
            if not key[1]:
                raise errors.from_status(errors.new_status(422, "Invalid", "metadata.name: Required value"))
            objects = self._objects.setdefault(gvr, {})
            if key in objects:
                raise errors.new_already_exists(gvr.group, gvr.resource, key[1])
            md["uid"] = str(uuid.uuid4())
            md["creationTimestamp"] = _now()
            md["resourceVersion"] = self._bump()
            md["generation"] = 1
            if gvr in self.status_subresources:
                obj.pop("status", None)
            self.manage_fields(gvr, None, obj, md.get("managedFields"), None, field_manager)
            objects[key] = obj
            self._notify(gvr, "ADDED", obj)
            return copy.deepcopy(obj)

    def get(self, gvr: GroupVersionResource, namespace: str | None, name: str) -> dict[str, Any]:
        with self._lock:
            obj = self._objects.get(gvr, {}).get((namespace or "", name))
            if obj is None:
                raise errors.new_not_found(gvr.group, gvr.resource, name)
            return copy.deepcopy(obj)

    def list(self, gvr: GroupVersionResource, namespace: str | None, label_selector: str = "",
             field_selector: str = "") -> tuple[list[dict[str, Any]], str]:
        ls = labels.parse(label_selector) if label_selector else labels.everything()
        fs = fields.parse(field_selector)
        with self._lock:
            items = [copy.deepcopy(o) for (ns, _), o in sorted(self._objects.get(gvr, {}).items())
                     if (not namespace or ns == namespace)
                     and ls.matches((o.get("metadata") or {}).get("labels") or {})
                     and fs.matches(functools.partial(_field_value, o))]
            return items, str(self._rv)

    def update(self, gvr: GroupVersionResource, obj: dict[str, Any], namespace: str | None,
               subresource: str | None = None, *, field_manager: str | None = None) -> dict[str, Any]:
        with self._lock:
            obj = copy.deepcopy(obj)
            key = self._key(obj, namespace)
            requested = obj["metadata"].get("managedFields")
            objects = self._objects.setdefault(gvr, {})
            old = objects.get(key)
            if old is None:
                raise errors.new_not_found(gvr.group, gvr.resource, key[1])
            rv = (obj.get("metadata") or {}).get("resourceVersion")
            if rv and rv != old["metadata"].get("resourceVersion"):
                raise errors.new_conflict(gvr.group, gvr.resource, key[1],
                                          "the object has been modified; please apply your changes to the latest version and try again")
            if gvr in self.status_subresources:
                if subresource == "status":
                    new = copy.deepcopy(old)
                    if "status" in obj:
                        new["status"] = obj["status"]
                    else:
                        new.pop("status", None)
                    obj = new
                elif "status" in old:
                    obj["status"] = old["status"]
                else:
                    obj.pop("status", None)
            md = obj["metadata"]
            for k in ("uid", "creationTimestamp"):
                if k in old["metadata"]:
                    md[k] = old["metadata"][k]
            generation = int(old["metadata"].get("generation") or 1)
            changed = {k: v for k, v in obj.items() if k not in ("metadata", "status")} != {
                k: v for k, v in old.items() if k not in ("metadata", "status")}
            md["generation"] = generation + 1 if changed else generation
            self.manage_fields(gvr, old, obj, requested, subresource, field_manager)
            md["resourceVersion"] = self._bump()
            objects[key] = obj
            self._notify(gvr, "MODIFIED", obj)
            return copy.deepcopy(obj)

    def delete(self, gvr: GroupVersionResource, namespace: str | None, name: str) -> dict[str, Any]:
        """Remove the object and send DELETED to the watches; NotFoundError if absent."""
        with self._lock:
            objects = self._objects.get(gvr, {})
            obj = objects.pop((namespace or "", name), None)
            if obj is None:
                raise errors.new_not_found(gvr.group, gvr.resource, name)
            obj["metadata"]["resourceVersion"] = self._bump()
            self._notify(gvr, "DELETED", obj)
            return copy.deepcopy(obj)

    def watch(self, gvr: GroupVersionResource, namespace: str | None, label_selector: str = "",
              field_selector: str = "", resource_version: str | None = None) -> TrackerWatch:
        """Watch changes (``namespace`` None: all namespaces); see the module doc for versions."""
        ls = labels.parse(label_selector) if label_selector else labels.everything()
        w = TrackerWatch(self, gvr, namespace, ls, fields.parse(field_selector))
        since = int(resource_version) if resource_version and resource_version.isdigit() else 0
        with self._lock:
            if since:
                self._replay(w, since)
            self._watches.append(w)
        return w

    def _replay(self, w: TrackerWatch, since: int) -> None:
        history = self._history
        if history.maxlen is not None and len(history) == history.maxlen and history[0][0] > since + 1:
            w.push("ERROR", errors.new_status(410, errors.REASON_EXPIRED,
                                              f"too old resource version: {since} ({history[0][0] - 1})"))
            return
        for rv, gvr, event_type, obj in history:
            if rv > since and gvr == w.gvr and w.matches(obj):
                w.push(event_type, obj)
