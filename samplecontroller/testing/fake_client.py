"""``FakeResourceClient[T, L]``: the ResourceClient API over a FakeClientsetBase.

Each call records an ``Action`` and runs the reactors; the default reaction uses the tracker.
Patches are applied to the stored dict (json, merge, strategic merge for built-ins). Server-side
apply depends on the tracker, as in client-go: a ``FieldManagedObjectTracker`` (a generated fake
clientset's ``new_clientset``, the runtime fake client) merges it as the API server does, with
managed fields and conflicts (``FieldManagedObjectTracker.apply``); the plain ``ObjectTracker``
(``new_simple_clientset``, deprecated) treats it as a merge patch that creates a missing object,
with no field ownership. Writes pass their field manager (else the tracker's
``default_field_manager``) to the tracker (``ObjectTracker.manage_fields``).
"""

from __future__ import annotations

import builtins
import queue
import threading
from collections.abc import Iterator, Mapping
from typing import Any, Generic, TypeVar

import msgspec
from msgspec import Struct

from samplecontroller.apimachinery import errors, meta, objects
from samplecontroller.client.types import (
    APPLY_PATCH,
    JSON_PATCH,
    MERGE_PATCH,
    STRATEGIC_MERGE_PATCH,
    ListOptions,
    ListResult,
    ResourceInfo,
    WatchEvent,
)
from samplecontroller.testing.actions import Action, FakeClientsetBase
from samplecontroller.testing.fieldmanaged import FieldManagedObjectTracker
from samplecontroller.testing.tracker import GroupVersionResource

T = TypeVar("T")
L = TypeVar("L")


class FakeWatcher:
    """A watch a test drives by hand (client-go's watch.NewFake / RaceFreeFakeWatcher).

    Return it from a watch reactor, then call ``add``/``modify``/``delete``/``bookmark``/``error``
    from the test; objects may be structs or dicts. Events queue without bound; after ``stop()``
    further events are dropped and iteration ends.
    """

    _STOP = object()

    def __init__(self) -> None:
        self._queue: queue.Queue[Any] = queue.Queue()
        self._stopped = threading.Event()

    def action(self, event_type: str, obj: Any) -> None:
        """Send an event of ``event_type`` with ``obj`` (ignored once stopped)."""
        if not self._stopped.is_set():
            self._queue.put((event_type, obj))

    def add(self, obj: Any) -> None:
        """Send ADDED."""
        self.action("ADDED", obj)

    def modify(self, obj: Any) -> None:
        """Send MODIFIED."""
        self.action("MODIFIED", obj)

    def delete(self, obj: Any) -> None:
        """Send DELETED."""
        self.action("DELETED", obj)

    def bookmark(self, obj: Any) -> None:
        """Send BOOKMARK (``obj`` carries the resourceVersion)."""
        self.action("BOOKMARK", obj)

    def error(self, status: dict[str, Any]) -> None:
        """Send ERROR with a Status dict."""
        self.action("ERROR", status)

    @property
    def is_stopped(self) -> bool:
        return self._stopped.is_set()

    def stop(self) -> None:
        """End the watch; iteration ends after the events already sent."""
        self._stopped.set()
        self._queue.put(self._STOP)

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        while True:
            item = self._queue.get()
            if item is self._STOP:
                return
            yield item


class FakeWatch(Generic[T]):
    """Typed events from a tracker watch, a ``FakeWatcher``, or anything that yields ``(type, obj)``
    pairs or ``WatchEvent``s and has ``stop()``. Dict objects are decoded into the model; an
    ERROR's object becomes ``WatchEvent.status``.
    """

    def __init__(self, inner: Any, model: type[T]) -> None:
        self._inner = inner
        self._model = model
        self._stopped = threading.Event()

    def __iter__(self) -> Iterator[WatchEvent[T]]:
        for item in self._inner:
            if self._stopped.is_set():
                return
            yield item if isinstance(item, WatchEvent) else self._event(*item)

    def _event(self, event_type: Any, obj: Any) -> WatchEvent[T]:
        if event_type == "ERROR":
            return WatchEvent("ERROR", None, obj if isinstance(obj, dict) else objects.to_dict(obj))
        if isinstance(obj, dict) and self._model is not dict:
            obj = objects.from_dict(self._model, obj)
        return WatchEvent(event_type, obj)

    def stop(self) -> None:
        """End the watch; iteration then ends."""
        self._stopped.set()
        self._inner.stop()


class FakeResourceClient(Generic[T, L]):
    """Same methods and signatures as ``samplecontroller.client.ResourceClient``.

    The tracker gives the resource status subresource semantics when ``info`` names a "status"
    subresource, unless ``register_status_subresource`` is False (then the caller decides, through
    ``tracker.status_subresources``).
    """

    def __init__(self, fake: FakeClientsetBase, info: ResourceInfo[T], namespace: str | None = None, *,
                 register_status_subresource: bool = True) -> None:
        self.fake = fake
        self.info = info
        self.namespace = namespace if info.namespaced else None
        self.gvr = GroupVersionResource(info.group, info.version, info.resource)
        fake.tracker.kinds.setdefault(self.gvr, info.kind)
        if register_status_subresource and "status" in info.subresources:
            fake.tracker.status_subresources.add(self.gvr)

    def _manager(self, field_manager: str | None) -> str | None:
        return field_manager or self.fake.tracker.default_field_manager

    def _ns(self, obj: Any = None) -> str:
        if not self.info.namespaced:
            return ""
        return self.namespace or (meta.get_namespace(obj) if obj is not None else "") or ""

    def _out(self, d: Any) -> T:
        if isinstance(d, dict):
            d.setdefault("apiVersion", self.info.api_version)
            d.setdefault("kind", self.info.kind)
            return objects.from_dict(self.info.model, d)
        return d  # type: ignore[no-any-return]

    def _action(self, verb: str, **kw: Any) -> Action:
        return Action(verb, self.gvr, **kw)

    def create(self, obj: T | dict[str, Any], *, dry_run: bool = False, field_manager: str | None = None,
               field_validation: str | None = None) -> T:
        ns = self._ns(obj)
        action = self._action("create", namespace=ns, name=meta.get_name(obj), object=obj)
        d = objects.to_dict(obj)
        return self._out(self.fake.invokes(action, lambda: self.fake.tracker.create(
            self.gvr, d, ns, field_manager=self._manager(field_manager))))

    def get(self, name: str, *, resource_version: str | None = None) -> T:
        ns = self._ns()
        action = self._action("get", namespace=ns, name=name)
        return self._out(self.fake.invokes(action, lambda: self.fake.tracker.get(self.gvr, ns, name)))

    def list(self, *, label_selector: str | None = None, field_selector: str | None = None, limit: int | None = None,
             continue_: str | None = None, resource_version: str | None = None,
             resource_version_match: str | None = None, timeout_seconds: int | None = None) -> L:
        ns = self._ns()
        action = self._action("list", namespace=ns, label_selector=label_selector or "",
                              field_selector=field_selector or "")

        def default() -> Any:
            items, rv = self.fake.tracker.list(self.gvr, ns or None, label_selector or "", field_selector or "")
            return {"apiVersion": self.info.api_version, "kind": self.info.list_kind or self.info.kind + "List",
                    "metadata": {"resourceVersion": rv}, "items": items}

        result = self.fake.invokes(action, default)
        if isinstance(result, dict):
            for item in result.get("items") or []:
                item.setdefault("apiVersion", self.info.api_version)
                item.setdefault("kind", self.info.kind)
            return objects.from_dict(self.info.list_model, result)  # type: ignore[no-any-return]
        return result  # type: ignore[no-any-return]

    def watch(self, *, resource_version: str | None = None, label_selector: str | None = None,
              field_selector: str | None = None, allow_watch_bookmarks: bool = False,
              timeout_seconds: int | None = None, send_initial_events: bool | None = None,
              resource_version_match: str | None = None) -> FakeWatch[T]:
        ns = self._ns()
        action = self._action("watch", namespace=ns, label_selector=label_selector or "",
                              field_selector=field_selector or "")
        action.options["resource_version"] = resource_version
        w = self.fake.invokes(action, lambda: self.fake.tracker.watch(
            self.gvr, ns or None, label_selector or "", field_selector or "", resource_version))
        return w if isinstance(w, FakeWatch) else FakeWatch(w, self.info.model)

    def update(self, obj: T | dict[str, Any], *, field_manager: str | None = None, dry_run: bool = False,
               preserve_unknown_fields: bool = False) -> T:
        return self._update(obj, "", field_manager)

    def update_status(self, obj: T | dict[str, Any], *, field_manager: str | None = None,
                      dry_run: bool = False, preserve_unknown_fields: bool = False) -> T:
        return self._update(obj, "status", field_manager)

    def _update(self, obj: Any, subresource: str, field_manager: str | None = None) -> T:
        ns = self._ns(obj)
        action = self._action("update", namespace=ns, name=meta.get_name(obj), subresource=subresource, object=obj)
        d = objects.to_dict(obj)
        return self._out(self.fake.invokes(
            action, lambda: self.fake.tracker.update(self.gvr, d, ns, subresource or None,
                                                     field_manager=self._manager(field_manager))))

    def patch(self, name: str, patch: bytes | dict[str, Any] | builtins.list[Any], patch_type: str = MERGE_PATCH, *,
              subresource: str | None = None, field_manager: str | None = None, force: bool | None = None,
              dry_run: bool = False) -> T:
        ns = self._ns()
        data = patch if isinstance(patch, bytes) else msgspec.json.encode(patch)
        action = self._action("patch", namespace=ns, name=name, subresource=subresource or "", patch=data,
                              patch_type=patch_type)
        return self._out(self.fake.invokes(action, lambda: self._apply_patch(
            ns, name, data, patch_type, subresource, field_manager, bool(force))))

    def _apply_patch(self, ns: str, name: str, data: bytes, patch_type: str, subresource: str | None,
                     field_manager: str | None = None, force: bool = False) -> Any:
        from samplecontroller.apimachinery import jsonpatch, mergepatch, openapi_schemas, strategicpatch

        try:
            body = msgspec.json.decode(data)
        except msgspec.DecodeError as err:
            raise errors.from_status(errors.new_status(400, "BadRequest", f"invalid patch: {err}")) from None
        tracker = self.fake.tracker
        if patch_type == APPLY_PATCH and isinstance(tracker, FieldManagedObjectTracker):
            return tracker.apply(self.gvr, body, ns, name, field_manager=field_manager or "", force=force,
                                 subresource=subresource)
        field_manager = self._manager(field_manager)
        try:
            current = self.fake.tracker.get(self.gvr, ns, name)
        except errors.NotFoundError:
            if patch_type != APPLY_PATCH:
                raise
            body.setdefault("metadata", {}).setdefault("name", name)
            return self.fake.tracker.create(self.gvr, body, ns, field_manager=field_manager)
        try:
            if patch_type == JSON_PATCH:
                new = jsonpatch.apply_patch(current, body)
            elif patch_type == STRATEGIC_MERGE_PATCH:
                if not self.info.strategic_merge:
                    raise errors.from_status(errors.new_status(
                        415, errors.REASON_UNSUPPORTED_MEDIA_TYPE,
                        f"the body of the request was in an unknown format - accepted media types include: "
                        f"{JSON_PATCH}, {MERGE_PATCH}, {APPLY_PATCH}"))
                definition = openapi_schemas.definition_name_for_gvk(self.info.group, self.info.version,
                                                                     self.info.kind)
                new = strategicpatch.apply_strategic_merge_patch(current, body, definition)
            else:
                new = mergepatch.apply_merge_patch(current, body)
        except ValueError as err:
            raise errors.from_status(errors.new_status(422, errors.REASON_INVALID, f"invalid patch: {err}")) from None
        if not isinstance(new, dict):
            raise errors.from_status(errors.new_status(422, errors.REASON_INVALID, "the patch result is not an object"))
        # a resourceVersion the patch sets is a precondition (stale -> 409), as on the server
        new.setdefault("metadata", {}).setdefault("resourceVersion", current["metadata"]["resourceVersion"])
        return self.fake.tracker.update(self.gvr, new, ns, subresource, field_manager=field_manager)

    def apply(self, obj: T | dict[str, Any] | Struct, *, field_manager: str, force: bool = False,
              subresource: str | None = None, dry_run: bool = False) -> T:
        if not field_manager:
            raise ValueError("server-side apply needs a field_manager")
        return self.patch(meta.get_name(obj), objects.to_dict(obj), APPLY_PATCH, subresource=subresource,
                          field_manager=field_manager, force=force)

    def apply_status(self, obj: T | dict[str, Any] | Struct, *, field_manager: str, force: bool = False,
                     dry_run: bool = False) -> T:
        return self.apply(obj, field_manager=field_manager, force=force, subresource="status")

    def delete(self, name: str, *, propagation_policy: str | None = None,
               preconditions: Mapping[str, str] | None = None, grace_period_seconds: int | None = None,
               dry_run: bool = False) -> None:
        ns = self._ns()
        action = self._action("delete", namespace=ns, name=name)
        self.fake.invokes(action, lambda: self.fake.tracker.delete(self.gvr, ns, name))

    def delete_collection(self, *, label_selector: str | None = None, field_selector: str | None = None,
                          propagation_policy: str | None = None) -> None:
        ns = self._ns()
        action = self._action("delete-collection", namespace=ns, label_selector=label_selector or "",
                              field_selector=field_selector or "")

        def default() -> None:
            items, _ = self.fake.tracker.list(self.gvr, ns or None, label_selector or "", field_selector or "")
            for item in items:
                md = item["metadata"]
                self.fake.tracker.delete(self.gvr, md.get("namespace") or None, md["name"])

        self.fake.invokes(action, default)

    def lister_watcher(self) -> FakeListerWatcher[T]:
        return FakeListerWatcher(self)


class FakeListerWatcher(Generic[T]):
    """A ``ListerWatcher`` over a fake clientset's tracker, recording list and watch actions."""

    def __init__(self, client: FakeResourceClient[T, Any]) -> None:
        self.client = client

    def list(self, options: ListOptions) -> ListResult[T]:
        from samplecontroller.client.resource import list_result

        return list_result(self.client.list(label_selector=options.label_selector,
                                            field_selector=options.field_selector))

    def watch(self, options: ListOptions) -> FakeWatch[T]:
        return self.client.watch(resource_version=options.resource_version, label_selector=options.label_selector,
                                 field_selector=options.field_selector)
