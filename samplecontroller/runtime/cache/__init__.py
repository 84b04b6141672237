"""The manager's shared, read-only cache of API objects (pkg/cache).

One informer per model type (one per namespace when several namespaces are configured),
created on first use: ``get_informer``, ``get``, ``list`` and ``index_field`` all create it.
Informers created before ``start`` begin with it; informers created later start at once.

Guarantees and limits:
- ``get``/``list`` on a type whose informer has not synced block until it has (bounded by
  ``read_timeout``; then ``CacheNotSyncedError``), as Go's cache reader does.
- ``get`` raises ``apimachinery.errors.NotFoundError`` for a missing object.
- Objects are the cached, shared, immutable Structs: derive changed copies, never mutate dicts
  inside them.
- With ``namespaces`` set, reads outside those namespaces raise ``ValueError``.
- ``index_field(type, name, extract)`` registers a field index usable in
  ``list(..., matching_fields={name: value})``; it must be called before that informer starts.
- Metadata only (controller-runtime's ``OnlyMetadata``): the key ``client.metadata.only_metadata(T)``
  gives an informer of T's ``PartialObjectMetadata``, listed and watched through the metadata
  client (``metadata_client_for``; the server sends metadata alone), separate from T's full
  informer. Without ``metadata_client_for`` (a cache over fake clients) the objects are read whole
  and reduced to their metadata. Cached objects carry their kind's apiVersion and kind (as
  controller-runtime's cache reader sets them), not ``meta.k8s.io/v1 PartialObjectMetadata``.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import msgspec

from samplecontroller.apimachinery import errors, labels, meta
from samplecontroller.cache import (
    ResourceEventHandler,
    SharedIndexInformer,
    strip_managed_fields,
    wait_for_cache_sync,
)
from samplecontroller.client.metadata import MetadataClient, OnlyMetadata, PartialObjectMetadata
from samplecontroller.client.scheme import Scheme
from samplecontroller.client.types import ListOptions, ResourceInfo
from samplecontroller.informers import tweaked
from samplecontroller.logs import get_logger

log = get_logger("runtime.cache")

T = TypeVar("T")

DEFAULT_SYNC_PERIOD = 10 * 3600.0
ALL_NAMESPACES = "__all_namespaces"
ClientFor = Callable[[ResourceInfo[Any], "str | None"], Any]


class CacheNotSyncedError(Exception):
    """The informer for a type did not sync in time (or the cache is stopping)."""


@dataclass
class ByObject:
    """Per-type cache options: list/watch selectors, namespaces and an object transform."""

    label_selector: str | None = None
    field_selector: str | None = None
    namespaces: Sequence[str] | None = None
    transform: Callable[[Any], Any] | None = None


@dataclass
class Options:
    """Cache options (Go's cache.Options). Empty ``namespaces`` watches every namespace."""

    namespaces: Sequence[str] = ()
    default_label_selector: str | None = None
    default_field_selector: str | None = None
    default_transform: Callable[[Any], Any] | None = None
    by_object: Mapping[type[Any], ByObject] = field(default_factory=dict)
    sync_period: float = DEFAULT_SYNC_PERIOD
    read_timeout: float = 120.0


def _typed_as(info: ResourceInfo[Any], then: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
    """A transform giving each ``PartialObjectMetadata`` its kind's apiVersion and kind (as
    controller-runtime's cache reader sets the informer's GroupVersionKind), then ``then``'s."""
    api_version, kind = info.api_version, info.kind

    def transform(obj: Any) -> Any:
        if isinstance(obj, PartialObjectMetadata) and (obj.kind != kind or obj.api_version != api_version):
            obj = msgspec.structs.replace(obj, api_version=api_version, kind=kind)
        return then(obj) if then is not None else obj

    return transform


def metadata_client_factory(rest: Any) -> ClientFor:
    """``(info, namespace) -> MetadataResourceClient`` over ``rest``: the lister-watchers of a cache's
    metadata-only informers."""
    metadata = MetadataClient(rest)

    def client_for(info: ResourceInfo[Any], namespace: str | None) -> Any:
        rc = metadata.for_info(info)
        return rc.namespace(namespace) if namespace else rc

    return client_for


def field_index_name(field_name: str) -> str:
    """The informer index name under which ``index_field`` stores a field index."""
    return f"field:{field_name}"


def _field_index_func(extract: Callable[[Any], Iterable[str]]) -> Callable[[Any], list[str]]:
    def index(obj: Any) -> list[str]:
        ns = meta.get_namespace(obj)
        out: list[str] = []
        for value in extract(obj):
            out.append(f"{ALL_NAMESPACES}/{value}")
            if ns:
                out.append(f"{ns}/{value}")
        return out

    return index


class _Registration:
    def __init__(self, regs: list[Any]) -> None:
        self.regs = regs

    def has_synced(self) -> bool:
        return all(r.has_synced() for r in self.regs)


class InformerGroup(Generic[T]):
    """The informers of one type (one per configured namespace) seen as one informer."""

    def __init__(self, info: ResourceInfo[T], informers: dict[str, SharedIndexInformer[T]]) -> None:
        self.info = info
        self.informers = informers  # namespace ("" = all) -> informer

    def add_event_handler(self, handler: ResourceEventHandler[Any], resync_period: float | None = None, *,
                          inline: bool = False) -> _Registration:
        """Register ``handler`` with every informer of the group (``inline``: as
        ``SharedIndexInformer.add_event_handler``); the registration syncs when all of them have."""
        return _Registration([i.add_event_handler(handler, resync_period, inline=inline)
                              for i in self.informers.values()])

    def has_synced(self) -> bool:
        """True once every informer of the group has synced."""
        return all(i.has_synced() for i in self.informers.values())

    def add_indexers(self, indexers: Mapping[str, Callable[[Any], list[str]]]) -> None:
        """Add ``indexers`` to every informer of the group (before they start)."""
        for i in self.informers.values():
            i.add_indexers(indexers)

    def informer_for_namespace(self, namespace: str) -> SharedIndexInformer[T]:
        """The informer that holds ``namespace``'s objects; ValueError for a namespace the cache does not watch."""
        if "" in self.informers:
            return self.informers[""]
        try:
            return self.informers[namespace]
        except KeyError:
            raise ValueError(f"namespace {namespace!r} is not in the cache's namespaces "
                             f"{sorted(self.informers)}") from None


class Cache:
    """A shared informer cache over a client factory ``client_for(info, namespace)``.

    ``client_for`` returns anything with ``lister_watcher()`` (a ``ResourceClient`` or a
    ``FakeResourceClient``). Use ``Cache.for_rest_client`` for the usual case.
    """

    def __init__(self, client_for: ClientFor, options: Options | None = None, *, scheme: Scheme,
                 metadata_client_for: ClientFor | None = None) -> None:
        self.client_for = client_for
        self.metadata_client_for = metadata_client_for
        self.options = options or Options()
        self.scheme = scheme
        self._lock = threading.Lock()
        self._groups: dict[type[Any], InformerGroup[Any]] = {}
        self._stop: threading.Event | None = None
        self._threads: list[threading.Thread] = []

    @classmethod
    def for_rest_client(cls, rest: Any, options: Options | None = None, *, scheme: Scheme) -> Cache:
        """A cache whose informers list and watch through ``rest`` (a ``RESTClient``)."""
        from samplecontroller.client import ResourceClient

        return cls(lambda info, ns: ResourceClient(rest, info, ns), options, scheme=scheme,
                   metadata_client_for=metadata_client_factory(rest))

    # -- informers -----------------------------------------------------------------------

    def get_informer(self, model: type[T]) -> InformerGroup[T]:
        """The (shared) informer of ``model``, created and, if the cache runs, started."""
        with self._lock:
            group = self._groups.get(model)
            if group is None:
                group = self._new_group(model)
                self._groups[model] = group
                if self._stop is not None:
                    self._start_group(group, self._stop)
            return group

    def existing_informer(self, model: type[T]) -> InformerGroup[T] | None:
        """The informer of ``model`` if one was created (never creates one)."""
        with self._lock:
            return self._groups.get(model)

    def selectors_for(self, model: type[Any]) -> tuple[str | None, str | None]:
        """The (label, field) selectors ``model``'s informer lists and watches with."""
        opts = self.options.by_object.get(model, ByObject())
        label_sel = opts.label_selector if opts.label_selector is not None else self.options.default_label_selector
        field_sel = opts.field_selector if opts.field_selector is not None else self.options.default_field_selector
        return label_sel, field_sel

    def _new_group(self, model: type[Any]) -> InformerGroup[Any]:
        key: Any = model
        try:
            info = self.scheme.info_for(key.model if isinstance(key, OnlyMetadata) else model)
        except KeyError as err:
            raise ValueError(str(err).strip("'\"")) from None
        client_for, object_type = self.client_for, model
        opts = self.options.by_object.get(model, ByObject())
        transform = opts.transform or self.options.default_transform
        if isinstance(key, OnlyMetadata):
            info = key.info(info)
            client_for, object_type = self.metadata_client_for or self.client_for, info.model
            transform = _typed_as(info, transform)
        namespaces = list(opts.namespaces if opts.namespaces is not None else self.options.namespaces)
        if not info.namespaced or not namespaces:
            namespaces = [""]
        label_sel, field_sel = self.selectors_for(model)

        def tweak(o: ListOptions) -> None:
            if label_sel:
                o.label_selector = label_sel
            if field_sel:
                o.field_selector = field_sel

        informers: dict[str, SharedIndexInformer[Any]] = {}
        for ns in namespaces:
            lw = tweaked(client_for(info, ns or None).lister_watcher(), tweak if label_sel or field_sel else None)
            inf: SharedIndexInformer[Any] = SharedIndexInformer(lw, object_type, self.options.sync_period,
                                                                freeze_gc=False)
            if transform is not None:
                inf.set_transform(transform)
            informers[ns] = inf
        return InformerGroup(info, informers)

    def _start_group(self, group: InformerGroup[Any], stop: threading.Event) -> None:
        for ns, inf in group.informers.items():
            t = threading.Thread(target=inf.run, args=(stop,), name=f"cache-{group.info.resource}-{ns or 'all'}",
                                 daemon=True)
            t.start()
            self._threads.append(t)

    def index_field(self, model: type[Any], field_name: str, extract: Callable[[Any], Iterable[str]]) -> None:
        """Index ``model`` objects by ``extract(obj)`` values, for ``list(matching_fields=...)``."""
        self.get_informer(model).add_indexers({field_index_name(field_name): _field_index_func(extract)})

    # -- running -------------------------------------------------------------------------

    def start(self, stop: threading.Event) -> None:
        """Start every informer so far (and later ones at creation); block until ``stop``."""
        with self._lock:
            if self._stop is not None:
                raise RuntimeError("the cache was already started")
            self._stop = stop
            for group in self._groups.values():
                self._start_group(group, stop)
        stop.wait()

    def need_leader_election(self) -> bool:
        """False: the cache runs on every replica, leader or not."""
        return False

    def wait_for_cache_sync(self, timeout: float | None = None, stop: threading.Event | None = None) -> bool:
        """True once every informer created so far has synced; False on timeout or stop."""
        with self._lock:
            groups = list(self._groups.values())
        return wait_for_cache_sync(*(g.has_synced for g in groups), stop=stop or self._stop, timeout=timeout,
                                   poll_interval=0.02)

    def shutdown(self, timeout: float = 5.0) -> None:
        """Wait (up to ``timeout``) for informer threads after the stop event was set."""
        for t in list(self._threads):
            t.join(timeout)

    # -- reading -------------------------------------------------------------------------

    def _synced_group(self, model: type[T]) -> InformerGroup[T]:
        group = self.get_informer(model)
        if not group.has_synced():
            if self._stop is None:
                raise CacheNotSyncedError(f"the cache is not started; cannot read {model.__name__}")
            if not wait_for_cache_sync(group.has_synced, stop=self._stop, timeout=self.options.read_timeout,
                                       poll_interval=0.02):
                raise CacheNotSyncedError(f"timed out waiting for the {model.__name__} cache to sync")
        return group

    def get(self, model: type[T], namespace: str, name: str) -> T:
        """The cached object; NotFoundError when absent."""
        group = self._synced_group(model)
        info = group.info
        inf = group.informer_for_namespace(namespace if info.namespaced else "")
        key = f"{namespace}/{name}" if info.namespaced and namespace else name
        obj = inf.get_indexer().get_by_key(key)
        if obj is None:
            raise errors.new_not_found(info.group, info.resource, name)
        return obj

    def list(self, model: type[T], *, namespace: str | None = None,
             label_selector: labels.Selector | str | Mapping[str, str] | None = None,
             matching_fields: Mapping[str, str] | None = None) -> list[T]:
        """Cached objects, filtered by namespace, labels and at most one indexed field."""
        group = self._synced_group(model)
        selector = _selector(label_selector)
        if namespace and group.info.namespaced:
            informers = [group.informer_for_namespace(namespace)]
        else:
            informers = list(group.informers.values())
            namespace = None
        out: list[T] = []
        for inf in informers:
            out.extend(_read(inf, namespace, matching_fields))
        if selector is not None:
            out = [o for o in out if selector.matches(meta.get_labels(o))]
        return out

    def index(self, model: type[T], field_name: str, *,
              namespace: str | None = None) -> dict[str, builtins.list[T]]:
        """A whole field index (kopf's ``kopf.Index`` read as a mapping): every value that
        ``index_field(model, field_name, ...)`` extracted, with the cached objects that have it
        (in ``namespace`` only when given). A fresh dict: reading it again sees later changes.
        ValueError when no such index was registered."""
        group = self._synced_group(model)
        index = field_index_name(field_name)
        if namespace and group.info.namespaced:
            informers = [group.informer_for_namespace(namespace)]
        else:
            informers, namespace = list(group.informers.values()), None
        prefix = f"{namespace or ALL_NAMESPACES}/"
        out: dict[str, builtins.list[T]] = {}
        for inf in informers:
            indexer = inf.get_indexer()
            if index not in indexer.get_indexers():
                raise ValueError(f"no index for field {field_name!r}: register it with index_field first")
            for value in indexer.list_index_func_values(index):
                if value.startswith(prefix):
                    objects = indexer.by_index(index, value)
                    if objects:
                        out.setdefault(value[len(prefix):], []).extend(objects)
        return out


def _selector(sel: labels.Selector | str | Mapping[str, str] | None) -> labels.Selector | None:
    if sel is None or isinstance(sel, labels.Selector):
        return sel
    if isinstance(sel, str):
        return labels.parse(sel) if sel else None
    return labels.selector_from_set(sel)


def _read(inf: SharedIndexInformer[T], namespace: str | None, matching_fields: Mapping[str, str] | None) -> list[T]:
    indexer = inf.get_indexer()
    if matching_fields:
        if len(matching_fields) != 1:
            raise ValueError("matching_fields supports exactly one indexed field")
        (name, value), = matching_fields.items()
        index = field_index_name(name)
        if index not in indexer.get_indexers():
            raise ValueError(f"no index for field {name!r}: register it with index_field first")
        return indexer.by_index(index, f"{namespace or ALL_NAMESPACES}/{value}")
    if namespace:
        return indexer.by_index("namespace", namespace)
    return indexer.list()


__all__ = [
    "ALL_NAMESPACES", "ByObject", "Cache", "CacheNotSyncedError", "DEFAULT_SYNC_PERIOD", "InformerGroup", "Options",
    "field_index_name", "strip_managed_fields",
]
