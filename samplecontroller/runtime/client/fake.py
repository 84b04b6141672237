"""A fake runtime ``Client`` for reconciler unit tests, as controller-runtime's pkg/client/fake.

    from samplecontroller.runtime.client.fake import ClientBuilder
    from samplecontroller.runtime.client.interceptor import Funcs

    client = (ClientBuilder()
              .with_scheme(SCHEME)            # required: the library knows no kinds
              .with_objects(foo, deployment)  # seeded as they are (status included)
              .with_status_subresource(Foo)   # optional, see below
              .with_interceptor_funcs(Funcs(update=...))
              .with_watch_delay(0.05, Foo)    # optional: caches over it lag 50 ms
              .with_crds("config/crd/bases")  # optional: apply merges by CRD schemas
              .build())
    FooReconciler(client, FakeRecorder()).reconcile(Request("ns", "foo"))
    assert client.get(Foo, "ns", "foo").status.available_replicas == 1

``build_async()`` gives the same fake as a ``runtime.client.aio.AsyncClient`` (every method
awaited) for async reconcilers.

The result is a ``samplecontroller.runtime.client.Client`` (reads go to the objects, not to a
cache) over the fake clientset's ``ObjectTracker``, with the API server's semantics that
reconcilers depend on:

- resourceVersion: every write bumps it; an update or patch carrying a stale one is a
  ConflictError (an update without one is unconditional); uid, creationTimestamp and
  generation (bumped on spec changes) are set as the server does; ``generateName`` gives a name.
- Status subresource, for the types given to ``with_status_subresource`` (default, when it is
  never called: every type whose ResourceInfo names a "status" subresource, so CRDs with
  ``subresources.status`` and built-ins such as Deployment): ``create`` and ``update`` ignore
  ``.status``, ``status().update``/``status().patch`` change only ``.status``. For other types
  ``update`` writes everything and a status write is a NotFoundError, as controller-runtime does.
- Deletion with finalizers: ``delete`` of an object with finalizers only sets
  ``metadata.deletionTimestamp``; the update that removes the last finalizer deletes it. An
  update cannot set or clear deletionTimestamp. Creating (or seeding) an object with a
  deletionTimestamp and no finalizers is refused. ``delete`` honours ``preconditions``
  (``uid``, ``resourceVersion``).
- Field selectors in ``list(matching_fields=...)``: an index registered with ``with_index``
  (the same extract function as the cache's ``index_field``), else the dotted wire path.
- ``dry_run=True`` writes store nothing and return the object as given (as controller-runtime's
  fake; the server would also default and validate it).

Writes are recorded for read-your-own-writes exactly as the real client's (``runtime.consistency``):
``with_watch_delay(seconds, *types)`` makes the watch events of those types (all when none is
given) reach caches ``seconds`` late, to reproduce a lagging cache on purpose.
``new_manager(fake_client)`` (``Manager(None, scheme=..., client_for=fake_client.client_for)``)
runs controllers over this tracker with a real cache, and each key waits for its writes as it
would against a server (``Options(read_your_writes=ReadYourWrites(enabled=False))`` turns it off).

- Field ownership (``metadata.managedFields``) as the server records it, with the server's own
  implementation (``apimachinery.fieldmanager``): create/update/patch give their manager (the
  field owner, else ``DEFAULT_FIELD_MANAGER``) an Update entry for the fields it changed;
  ``apply`` (an apply configuration, a dict or a model) owns what it sets, removes what its
  manager stops applying, and a field another manager owns with another value is a 409
  ConflictError naming that manager and field (the server's message) unless ``force=True``,
  which takes it over. Lists and maps merge by the kind's schema, as on the server: the built-in
  kinds' OpenAPI definitions; a custom resource's CRD schema (``x-kubernetes-list-type`` map with
  ``x-kubernetes-list-map-keys``, set; ``x-kubernetes-map-type``) from its generated package's
  ``applyconfigurations.new_type_converter()`` (found by itself, ``default_type_converters``), from
  CRD YAML (``with_crds``), or from ``with_type_converters`` (controller-runtime's
  ``WithTypeConverters``). The tracker is ``samplecontroller.testing.FieldManagedObjectTracker``,
  the one a generated fake clientset's ``new_clientset`` uses.

There is no defaulting, validation, admission or garbage collection: use the embedded API server
(``samplecontroller.apiserver.testing``) for those. ``client.fake`` (the
``FakeClientsetBase``) records every call as an ``Action``.
"""

from __future__ import annotations

import copy
import importlib
import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

from samplecontroller.apimachinery import conditions, errors, fieldmanager, k8syaml, labels, meta, objects
from samplecontroller.client.scheme import Scheme
from samplecontroller.client.types import MERGE_PATCH, ResourceInfo
from samplecontroller.runtime.client import Client, Patch, StatusWriter
from samplecontroller.runtime.client.interceptor import Funcs, new_client
from samplecontroller.testing import (
    DEFAULT_FIELD_MANAGER,
    FakeClientsetBase,
    FakeResourceClient,
    FieldManagedObjectTracker,
    GroupVersionResource,
)

if TYPE_CHECKING:
    from samplecontroller.runtime.client.aio import FakeAsyncClient

__all__ = ["DEFAULT_FIELD_MANAGER", "ClientBuilder", "FakeClient", "IndexFunc", "default_type_converters", "new_manager"]

T = TypeVar("T")
IndexFunc = Callable[[Any], Sequence[str]]
"""An index function: the values an object is found under (as ``runtime.cache`` ``index_field``)."""


def _invalid(message: str) -> errors.StatusError:
    return errors.from_status(errors.new_status(422, errors.REASON_INVALID, message))


def _deleting_without_finalizers(obj: Mapping[str, Any]) -> bool:
    md = obj.get("metadata") or {}
    return bool(md.get("deletionTimestamp")) and not md.get("finalizers")


class _FinalizingTracker(FieldManagedObjectTracker):
    """The field-managed ObjectTracker (managed fields and server-side apply through
    ``apimachinery.fieldmanager``, the embedded API server's implementation) plus the API server's
    deletionTimestamp and finalizer semantics."""

    def create(self, gvr: GroupVersionResource, obj: dict[str, Any], namespace: str | None, *,
               field_manager: str | None = None) -> dict[str, Any]:
        if _deleting_without_finalizers(obj):
            raise _invalid(f"refusing to create {gvr.resource} {meta.get_name(obj)!r} with "
                           "metadata.deletionTimestamp but no finalizers")
        return super().create(gvr, obj, namespace, field_manager=field_manager)

    def update(self, gvr: GroupVersionResource, obj: dict[str, Any], namespace: str | None,
               subresource: str | None = None, *, field_manager: str | None = None) -> dict[str, Any]:
        with self._lock:
            obj = copy.deepcopy(obj)
            ns = namespace or meta.get_namespace(obj)
            try:
                old = self.get(gvr, ns, meta.get_name(obj))
            except errors.NotFoundError:
                old = None
            if old is not None:
                # metadata.deletionTimestamp is the server's: an update neither sets nor clears it
                md = obj.setdefault("metadata", {})
                deleting = (old.get("metadata") or {}).get("deletionTimestamp")
                if deleting:
                    md["deletionTimestamp"] = deleting
                else:
                    md.pop("deletionTimestamp", None)
            updated = super().update(gvr, obj, namespace, subresource, field_manager=field_manager)
            if _deleting_without_finalizers(updated):
                return super().delete(gvr, ns, meta.get_name(updated))
            return updated

    def delete(self, gvr: GroupVersionResource, namespace: str | None, name: str) -> dict[str, Any]:
        with self._lock:
            current = self.get(gvr, namespace, name)
            md = current["metadata"]
            if not md.get("finalizers"):
                return super().delete(gvr, namespace, name)
            if md.get("deletionTimestamp"):
                return current
            md["deletionTimestamp"] = conditions.now()
            md.pop("resourceVersion", None)
            return super().update(gvr, current, namespace)


class _FakeResource(FakeResourceClient[Any, Any]):
    """A FakeResourceClient whose status writes need a status subresource, whose delete
    checks preconditions, and whose watch may lag (``watch_delay``)."""

    def __init__(self, fake: FakeClientsetBase, info: ResourceInfo[Any], namespace: str | None = None, *,
                 register_status_subresource: bool = True, watch_delay: float = 0.0) -> None:
        super().__init__(fake, info, namespace, register_status_subresource=register_status_subresource)
        self.watch_delay = watch_delay

    def watch(self, *, resource_version: str | None = None, label_selector: str | None = None,
              field_selector: str | None = None, allow_watch_bookmarks: bool = False,
              timeout_seconds: int | None = None, send_initial_events: bool | None = None,
              resource_version_match: str | None = None) -> Any:
        w = super().watch(resource_version=resource_version, label_selector=label_selector,
                          field_selector=field_selector, allow_watch_bookmarks=allow_watch_bookmarks,
                          timeout_seconds=timeout_seconds, send_initial_events=send_initial_events,
                          resource_version_match=resource_version_match)
        return _DelayedWatch(w, self.watch_delay) if self.watch_delay > 0 else w

    def _needs_status(self, subresource: str | None) -> None:
        if subresource == "status" and self.gvr not in self.fake.tracker.status_subresources:
            raise errors.new_not_found(self.gvr.group, self.gvr.resource, "status")

    def update_status(self, obj: Any, *, field_manager: str | None = None, dry_run: bool = False,
                      preserve_unknown_fields: bool = False) -> Any:
        self._needs_status("status")
        return super().update_status(obj, field_manager=field_manager, dry_run=dry_run)

    def patch(self, name: str, patch: bytes | dict[str, Any] | list[Any], patch_type: str = MERGE_PATCH, *,
              subresource: str | None = None, field_manager: str | None = None, force: bool | None = None,
              dry_run: bool = False) -> Any:
        self._needs_status(subresource)
        return super().patch(name, patch, patch_type, subresource=subresource, field_manager=field_manager,
                             force=force)

    def delete(self, name: str, *, propagation_policy: str | None = None,
               preconditions: Mapping[str, str] | None = None, grace_period_seconds: int | None = None,
               dry_run: bool = False) -> None:
        if preconditions:
            current = self.fake.tracker.get(self.gvr, self._ns(), name)
            md = current.get("metadata") or {}
            for key, wire in (("uid", "uid"), ("resourceVersion", "resourceVersion"),
                              ("resource_version", "resourceVersion")):
                wanted = preconditions.get(key)
                if wanted and wanted != md.get(wire):
                    raise errors.new_conflict(
                        self.gvr.group, self.gvr.resource, name,
                        f"Precondition failed: {wire} in precondition: {wanted}, {wire} in object meta: "
                        f"{md.get(wire)}")
        super().delete(name, propagation_policy=propagation_policy)


class _DelayedWatch:
    """Delivers each event of ``inner`` ``delay`` seconds after it happened (a lagging cache)."""

    def __init__(self, inner: Any, delay: float) -> None:
        self.inner = inner
        self.delay = delay
        self._events: queue.Queue[tuple[float, Any] | None] = queue.Queue()
        threading.Thread(target=self._pump, name="fake-delayed-watch", daemon=True).start()

    def _pump(self) -> None:
        try:
            for event in self.inner:
                self._events.put((time.monotonic() + self.delay, event))
        finally:
            self._events.put(None)

    def __iter__(self) -> Iterator[Any]:
        while (item := self._events.get()) is not None:
            due, event = item
            time.sleep(max(0.0, due - time.monotonic()))
            yield event

    def stop(self) -> None:
        self.inner.stop()


class FakeClient(Client):
    """The runtime Client over an ObjectTracker (build one with ``ClientBuilder``)."""

    def __init__(self, fake: FakeClientsetBase, *, scheme: Scheme, field_owner: str | None = None,
                 indexes: Mapping[tuple[type[Any], str], IndexFunc] | None = None,
                 watch_delays: Mapping[str, float] | None = None) -> None:
        self.fake = fake
        self.tracker = fake.tracker
        self.indexes = dict(indexes or {})
        self.watch_delays = dict(watch_delays or {})  # resource ("" = every resource) -> seconds
        super().__init__(self._resource_client, None, scheme=scheme, field_owner=field_owner)

    def _resource_client(self, info: ResourceInfo[Any], namespace: str | None) -> _FakeResource:
        delay = self.watch_delays.get(info.group_resource, self.watch_delays.get("", 0.0))
        return _FakeResource(self.fake, info, namespace, register_status_subresource=False, watch_delay=delay)

    def create(self, obj: T, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        return obj if dry_run else super().create(obj, field_owner=field_owner)

    def update(self, obj: T, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        return obj if dry_run else super().update(obj, field_owner=field_owner)

    def patch(self, obj: T, patch: Patch, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        return obj if dry_run else super().patch(obj, patch, field_owner=field_owner)

    def delete(self, obj: Any, *, propagation_policy: str | None = None,
               preconditions: Mapping[str, str] | None = None, grace_period_seconds: int | None = None,
               dry_run: bool = False) -> None:
        if not dry_run:
            super().delete(obj, propagation_policy=propagation_policy, preconditions=preconditions,
                           grace_period_seconds=grace_period_seconds)

    def status(self) -> StatusWriter:
        return _FakeStatusWriter(self)

    def list(self, model: type[T], *, namespace: str | None = None,
             label_selector: labels.Selector | str | Mapping[str, str] | None = None,
             matching_fields: Mapping[str, str] | None = None) -> list[T]:
        """As ``Client.list``; a field with an index from ``with_index`` matches through it."""
        indexed = {f: v for f, v in (matching_fields or {}).items() if (model, f) in self.indexes}
        rest = {f: v for f, v in (matching_fields or {}).items() if f not in indexed}
        found = super().list(model, namespace=namespace, label_selector=label_selector,
                             matching_fields=rest or None)
        return [obj for obj in found
                if all(value in self.indexes[(model, f)](obj) for f, value in indexed.items())]


class _FakeStatusWriter(StatusWriter):
    def update(self, obj: T, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        return obj if dry_run else super().update(obj, field_owner=field_owner)

    def patch(self, obj: T, patch: Patch, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        return obj if dry_run else super().patch(obj, patch, field_owner=field_owner)


class ClientBuilder:
    """Builds a fake runtime Client (see the module doc); every ``with_`` returns the builder."""

    def __init__(self) -> None:
        self._scheme: Scheme | None = None
        self._objects: list[Any] = []
        self._status_types: list[Any] | None = None
        self._funcs: Funcs | None = None
        self._field_owner: str | None = None
        self._indexes: dict[tuple[type[Any], str], IndexFunc] = {}
        self._watch_delays: dict[type[Any] | None, float] = {}
        self._type_converters: list[fieldmanager.TypeConverter] = []
        self._crd_converters: list[fieldmanager.TypeConverter] = []

    def with_scheme(self, scheme: Scheme) -> ClientBuilder:
        """The Scheme that maps model types to resources (required)."""
        self._scheme = scheme
        return self

    def with_objects(self, *objs: Any) -> ClientBuilder:
        """Objects present from the start, as given (status included); structs or wire dicts."""
        self._objects.extend(objs)
        return self

    def with_status_subresource(self, *types_or_objects: Any) -> ClientBuilder:
        """The types (or objects of them) that have a status subresource; calling it replaces the
        default (every type whose ResourceInfo names one)."""
        self._status_types = [*(self._status_types or []), *types_or_objects]
        return self

    def with_interceptor_funcs(self, funcs: Funcs) -> ClientBuilder:
        """Calls to intercept (``runtime.client.interceptor.Funcs``)."""
        self._funcs = funcs
        return self

    def with_index(self, model: type[Any], field: str, extract: IndexFunc) -> ClientBuilder:
        """A field index for ``list(model, matching_fields={field: value})``."""
        self._indexes[(model, field)] = extract
        return self

    def with_watch_delay(self, seconds: float, *types: type[Any]) -> ClientBuilder:
        """Watch events of ``types`` (every type when none is given) reach caches built over the
        client ``seconds`` late: a lagging cache, on purpose. Reads through the client itself
        are never late."""
        if seconds < 0:
            raise ValueError("a watch delay must not be negative")
        for t in types or (None,):
            self._watch_delays[t] = seconds
        return self

    def with_type_converters(self, *converters: fieldmanager.TypeConverter) -> ClientBuilder:
        """How kinds merge under server-side apply (controller-runtime's ``WithTypeConverters``):
        the first converter that knows a kind is used, and a kind none knows is a ValueError naming
        it. Given at all, they replace the default (``default_type_converters``)."""
        self._type_converters.extend(converters)
        return self

    def with_crds(self, *crds: str | Path | Mapping[str, Any]) -> ClientBuilder:
        """Merge custom resources by these CRDs' schemas, as the API server does (envtest's
        ``CRDDirectoryPaths``): directories of CRD YAML files (as ``apiserver.preload.load_crds``
        reads them), YAML files, or CRD documents (dicts). Consulted before the other type
        converters; a missing path, a file that is not YAML or a document that is not a CRD is a
        ValueError naming it."""
        from samplecontroller.apiserver.preload import CRDError, load_crds

        docs: list[Any] = []
        try:
            for crd in crds:
                if isinstance(crd, Mapping):
                    docs.append(crd)
                elif Path(crd).is_file():
                    docs += [doc for doc in k8syaml.load_all(Path(crd).read_bytes()) if doc is not None]
                else:
                    docs += load_crds([crd])
        except CRDError as err:
            raise ValueError(str(err)) from None
        except yaml.YAMLError as err:
            raise ValueError(f"{crd}: not valid YAML: {' '.join(str(err).split())}") from None
        self._crd_converters.append(fieldmanager.SchemaTypeConverter.from_crds(docs))
        return self

    def with_field_owner(self, field_owner: str) -> ClientBuilder:
        """The default field owner of writes (needed by ``apply``)."""
        self._field_owner = field_owner
        return self

    def _info(self, scheme: Scheme, obj: Any) -> ResourceInfo[Any]:
        try:
            if isinstance(obj, type):
                return scheme.info_for(obj)
            if isinstance(obj, dict):
                group, version = meta.group_version(meta.get_api_version(obj))
                return scheme.info_for_gvk(group, version, meta.get_kind(obj))
            return scheme.info_for(type(obj))
        except KeyError as err:
            raise ValueError(str(err).strip("'\"")) from None

    def build(self) -> Client:
        """The fake Client (wrapped by the interceptor functions when given)."""
        scheme = self._scheme
        if scheme is None:
            raise ValueError("a fake client needs a Scheme: call with_scheme(SCHEME)")
        converters = self._type_converters or default_type_converters(scheme)
        tracker = _FinalizingTracker(fieldmanager.MultiTypeConverter(*self._crd_converters, *converters))
        if self._status_types is None:
            status_infos = [info for info in scheme.all() if "status" in info.subresources]
        else:
            status_infos = [self._info(scheme, t) for t in self._status_types]
        tracker.status_subresources.update(GroupVersionResource(i.group, i.version, i.resource) for i in status_infos)
        for info in scheme.all():
            tracker.kinds[GroupVersionResource(info.group, info.version, info.resource)] = info.kind
        for obj in self._objects:
            info = self._info(scheme, obj)
            data = objects.to_dict(obj)
            if _deleting_without_finalizers(data):
                raise ValueError(f"refusing to seed {info.kind} {meta.get_name(obj)!r} with "
                                 "metadata.deletionTimestamp but no finalizers")
            data.setdefault("apiVersion", info.api_version)
            data.setdefault("kind", info.kind)
            tracker.add(GroupVersionResource(info.group, info.version, info.resource), data)
        delays = {("" if t is None else self._info(scheme, t).group_resource): s
                  for t, s in self._watch_delays.items()}
        client: Client = FakeClient(FakeClientsetBase(tracker), scheme=scheme, field_owner=self._field_owner,
                                    indexes=self._indexes, watch_delays=delays)
        if self._funcs is not None:
            client = new_client(client, self._funcs)
        return client

    def build_async(self) -> FakeAsyncClient:
        """The same fake (tracker, status subresource, interceptors) as an awaited
        ``runtime.client.aio.AsyncClient``, for async reconcilers; ``.sync`` is the sync one."""
        from samplecontroller.runtime.client.aio import FakeAsyncClient

        return FakeAsyncClient(self.build())


def default_type_converters(scheme: Scheme) -> list[fieldmanager.TypeConverter]:
    """The type converters of a fake client built without ``with_type_converters``: the built-in
    kinds' OpenAPI definitions, the ``applyconfigurations.new_type_converter()`` of every generated
    package whose kinds ``scheme`` holds (their CRD schemas: lists and maps merge as on the server),
    and last the deduced converter (lists atomic) for kinds none of them knows (dict kinds, a
    package generated before it carried schemas), as controller-runtime's default."""
    converters: list[fieldmanager.TypeConverter] = [fieldmanager.BuiltinTypeConverter()]
    roots: list[str] = []
    for info in scheme.all():
        root, sep, _ = (getattr(info.model, "__module__", "") or "").partition(".apis.")
        if sep and root not in roots and root != "samplecontroller.kubernetes":
            roots.append(root)
    for root in roots:
        try:
            package = importlib.import_module(f"{root}.applyconfigurations")
        except ModuleNotFoundError as err:
            if err.name not in (root, f"{root}.applyconfigurations"):
                raise
            continue
        new_type_converter = getattr(package, "new_type_converter", None)
        if callable(new_type_converter):
            converters.append(new_type_converter())
    converters.append(fieldmanager.DeducedTypeConverter())
    return converters


def new_manager(client: Client, options: Any = None) -> Any:
    """A ``runtime.manager.Manager`` (``options``: its ``Options``) whose cache and client work on
    ``client``'s objects: controllers, informers and read-your-own-writes without an API server."""
    from samplecontroller.runtime.manager import Manager

    return Manager(None, options, scheme=client.scheme, client_for=client.client_for)
