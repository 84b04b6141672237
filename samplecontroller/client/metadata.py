"""The metadata-only client (client-go's k8s.io/client-go/metadata, controller-runtime's ``OnlyMetadata``).

For controllers that watch many objects but read only their metadata (every Secret or Pod of a
cluster: owner references, labels, finalizers), the server sends ``PartialObjectMetadata``
(``Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1``, and
``as=PartialObjectMetadataList`` for lists): the objects' ``metadata`` and nothing else, so
neither the wire nor the cache carries their spec, data or status. Any resource works, built-in
or custom, by group/version/resource, with no model for it.

``MetadataClient(rest).resource(group, version, resource, namespaced=True)`` gives a
``MetadataResourceClient`` with ``namespace(ns)``, ``get``, ``list``, ``watch``, ``delete``,
``patch`` (metadata only: labels, annotations, finalizers, owner references) and
``lister_watcher()`` for a ``cache.SharedIndexInformer[PartialObjectMetadata]``
(``informers.metadata.MetadataSharedInformerFactory`` builds and shares those).

``OnlyMetadata(Secret)`` (typed: ``only_metadata(Secret)``) stands where a model type would in the
Manager's cache and the Builder (controller-runtime's ``builder.OnlyMetadata``): the cache keeps a
metadata-only informer of that kind, whose objects are ``PartialObjectMetadata``.
"""

from __future__ import annotations

from typing import Any, cast

import msgspec

from samplecontroller.client.resource import ResourceWatch, list_result
from samplecontroller.client.types import MERGE_PATCH, ListOptions, ListResult, ResourceInfo
from samplecontroller.kubernetes.apis.meta.v1 import ListMeta, ObjectMeta
from samplecontroller.rest import RESTClient

__all__ = ["ACCEPT_LIST", "ACCEPT_OBJECT", "MetadataClient", "MetadataResourceClient", "OnlyMetadata",
           "PartialObjectMetadata", "PartialObjectMetadataList", "only_metadata"]

ACCEPT_OBJECT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
ACCEPT_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"


class PartialObjectMetadata(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """meta.k8s.io/v1 PartialObjectMetadata: an object's TypeMeta and ObjectMeta only."""

    api_version: str = msgspec.field(name="apiVersion", default="meta.k8s.io/v1")
    kind: str = "PartialObjectMetadata"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)


class PartialObjectMetadataList(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A list of ``PartialObjectMetadata`` (meta.k8s.io/v1), as the server answers ``as=PartialObjectMetadataList``."""
    api_version: str = msgspec.field(name="apiVersion", default="meta.k8s.io/v1")
    kind: str = "PartialObjectMetadataList"
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: tuple[PartialObjectMetadata, ...] = ()


_object = msgspec.json.Decoder(PartialObjectMetadata)
_list = msgspec.json.Decoder(PartialObjectMetadataList)


class MetadataClient:
    """client-go's ``metadata.Interface``: ``resource(...)`` per group/version/resource."""

    def __init__(self, rest: RESTClient) -> None:
        self.rest = rest

    def resource(self, group: str, version: str, resource: str, namespaced: bool = True) -> MetadataResourceClient:
        """A client of one resource's objects as ``PartialObjectMetadata`` (all namespaces until ``namespace``)."""
        info: ResourceInfo[Any] = ResourceInfo(group=group, version=version, resource=resource, kind="",
                                               namespaced=namespaced, model=dict, list_model=dict)
        return MetadataResourceClient(self.rest, info, None)

    def for_info(self, info: ResourceInfo[Any]) -> MetadataResourceClient:
        """The metadata client of a resource the Scheme knows."""
        return self.resource(info.group, info.version, info.resource, info.namespaced)


class MetadataResourceClient:
    """Metadata-only verbs on one resource, in one namespace (None: all namespaces, or cluster scope)."""

    def __init__(self, rest: RESTClient, info: ResourceInfo[Any], namespace: str | None) -> None:
        self.rest = rest
        self.info = info
        self.namespace_ = namespace if info.namespaced else None

    def namespace(self, namespace: str) -> MetadataResourceClient:
        """The same client limited to ``namespace``."""
        return MetadataResourceClient(self.rest, self.info, namespace)

    def _path(self, name: str | None = None) -> str:
        return self.info.path(self.namespace_, name)

    def get(self, name: str) -> PartialObjectMetadata:
        """The metadata of the object ``name`` (a ``PartialObjectMetadata``)."""
        return _object.decode(self.rest.request("GET", self._path(name), accept=ACCEPT_OBJECT))

    def list(self, options: ListOptions | None = None) -> PartialObjectMetadataList:
        query = (options or ListOptions()).to_query()
        return _list.decode(self.rest.request("GET", self._path(), query=query, accept=ACCEPT_LIST))

    def watch(self, options: ListOptions | None = None) -> ResourceWatch[PartialObjectMetadata]:
        opts = options or ListOptions()
        query = opts.to_query()
        query["watch"] = "true"
        read_timeout = float(opts.timeout_seconds) + 30.0 if opts.timeout_seconds else None
        stream = self.rest.stream("GET", self._path(), query=query, timeout=read_timeout, accept=ACCEPT_OBJECT)
        return ResourceWatch(stream, _object)

    def patch(self, name: str, patch: bytes, patch_type: str = MERGE_PATCH) -> PartialObjectMetadata:
        """Patch the object (send metadata changes only); the result's metadata."""
        return _object.decode(self.rest.request("PATCH", self._path(name), body=patch, content_type=patch_type,
                                                accept=ACCEPT_OBJECT))

    def delete(self, name: str) -> None:
        """Delete the object ``name``; NotFound is raised as a StatusError."""
        self.rest.request("DELETE", self._path(name))

    def lister_watcher(self) -> MetadataListerWatcher:
        """A ListerWatcher of this resource's metadata, for a metadata-only informer."""
        return MetadataListerWatcher(self)


class MetadataListerWatcher:
    """``client.types.ListerWatcher[PartialObjectMetadata]`` for a Reflector."""

    def __init__(self, client: MetadataResourceClient) -> None:
        self.client = client

    def list(self, options: ListOptions) -> ListResult[PartialObjectMetadata]:
        return list_result(self.client.list(options))

    def watch(self, options: ListOptions) -> ResourceWatch[PartialObjectMetadata]:
        return self.client.watch(options)


class OnlyMetadata:
    """The metadata of a kind (``model``: a model type or an ``Unstructured`` key) as a cache key:
    its informer holds ``PartialObjectMetadata``. Hashable, equal by ``model``."""

    __slots__ = ("__name__", "model")
    model: Any

    def __init__(self, model: Any) -> None:
        self.model = model.model if isinstance(model, OnlyMetadata) else model
        self.__name__ = f"OnlyMetadata({getattr(model, '__name__', model)})"

    def __repr__(self) -> str:
        return self.__name__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OnlyMetadata) and self.model == other.model

    def __hash__(self) -> int:
        return hash(("OnlyMetadata", self.model))

    def info(self, of: ResourceInfo[Any]) -> ResourceInfo[PartialObjectMetadata]:
        """``of`` (the kind's ResourceInfo) with ``PartialObjectMetadata`` as its model."""
        return ResourceInfo(group=of.group, version=of.version, resource=of.resource, kind=of.kind,
                            namespaced=of.namespaced, model=PartialObjectMetadata,
                            list_model=PartialObjectMetadataList, list_kind=of.list_kind, singular=of.singular,
                            short_names=of.short_names, subresources=of.subresources)


def only_metadata(model: Any) -> type[PartialObjectMetadata]:
    """``OnlyMetadata(model)`` typed as ``type[PartialObjectMetadata]``, so that
    ``cache.list(only_metadata(Secret))`` type-checks as a list of ``PartialObjectMetadata``."""
    return cast(type[PartialObjectMetadata], OnlyMetadata(model))
