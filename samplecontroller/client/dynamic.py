"""The dynamic client: any resource as plain dicts, found through discovery (client-go's dynamic).

``DynamicClient(rest).resource(info_or_gvr, namespace)`` returns a ``ResourceClient`` whose
objects and lists are plain dicts (the wire JSON, nothing dropped). ``resource_for(api_version,
kind)`` asks the server's legacy discovery (``/api``, ``/apis``, ``/api/v1``,
``/apis/<group>/<version>``) which resource serves a kind.

Discovery results are cached per group/version for the client's lifetime; ``refresh()`` drops
the cache (call it after installing a CRD). Lookups are thread-safe. A kind or resource the
server does not serve raises ``NoMatchError`` (a ``LookupError``) naming it; a group/version the
server does not serve is also a ``NoMatchError``, other API errors propagate unchanged.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import msgspec

from samplecontroller.apimachinery import errors, meta
from samplecontroller.client.resource import ResourceClient
from samplecontroller.client.types import ResourceInfo
from samplecontroller.rest import RESTClient

__all__ = ["DynamicClient", "NoMatchError", "as_dynamic_info", "discovery_path", "find_kind", "find_resource",
           "group_versions", "info_from_api_resource", "parse_resource_list"]

DynamicResourceClient = ResourceClient[dict[str, Any], dict[str, Any]]


class NoMatchError(LookupError):
    """The server serves no such kind or resource (Go's meta.NoKindMatchError / NoResourceMatchError)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "no match"


# Only the discovery fields used here; msgspec copies the empty-list defaults per instance.
class _APIResource(msgspec.Struct, kw_only=True, rename="camel"):
    name: str
    kind: str
    namespaced: bool = False
    singular_name: str = ""
    short_names: list[str] = []
    verbs: list[str] = []


class _APIResourceList(msgspec.Struct, kw_only=True, rename="camel"):
    group_version: str = ""
    resources: list[_APIResource] = []


class _Versions(msgspec.Struct):
    versions: list[str] = []


class _GroupVersion(msgspec.Struct, rename="camel"):
    group_version: str


class _Group(msgspec.Struct):
    name: str
    versions: list[_GroupVersion] = []


class _Groups(msgspec.Struct):
    groups: list[_Group] = []


_resource_list_decoder = msgspec.json.Decoder(_APIResourceList)


def info_from_api_resource(group: str, version: str, res: Any,
                           subresources: Sequence[str] = ()) -> ResourceInfo[dict[str, Any]]:
    """A dict-based ResourceInfo from one discovery entry (an APIResource)."""
    return ResourceInfo(
        group=group, version=version, resource=res.name, kind=res.kind, namespaced=res.namespaced, model=dict,
        list_model=dict, list_kind=res.kind + "List", singular=res.singular_name or res.kind.lower(),
        short_names=tuple(res.short_names), subresources=tuple(subresources),
    )


class DynamicClient:
    """Dict-based clients for any resource the server serves. Thread-safe; share one."""

    def __init__(self, rest: RESTClient) -> None:
        self.rest = rest
        self._lock = threading.Lock()
        self._by_gv: dict[str, list[ResourceInfo[dict[str, Any]]]] = {}

    # -- clients -----------------------------------------------------------------------------

    def resource(self, info_or_gvr: ResourceInfo[Any] | tuple[str, str, str],
                 namespace: str | None = None) -> DynamicResourceClient:
        """A dict-based ResourceClient; a (group, version, resource) tuple is looked up in discovery."""
        if isinstance(info_or_gvr, ResourceInfo):
            info = as_dynamic_info(info_or_gvr)
        else:
            group, version, resource = info_or_gvr
            info = self.resource_for_gvr(group, version, resource)
        return ResourceClient(self.rest, info, namespace)

    def for_object(self, obj: Any, namespace: str | None = None) -> DynamicResourceClient:
        """The client for ``obj``'s apiVersion and kind, in ``namespace`` or the object's own."""
        info = self.resource_for(meta.get_api_version(obj), meta.get_kind(obj))
        return ResourceClient(self.rest, info, namespace or meta.get_namespace(obj) or None)

    # -- discovery -----------------------------------------------------------------------------

    def resource_for(self, api_version: str, kind: str) -> ResourceInfo[dict[str, Any]]:
        """The resource serving ``kind`` in ``api_version`` (for example "apps/v1", "Deployment")."""
        return find_kind(self.resources_for(api_version), api_version, kind)

    def resource_for_gvr(self, group: str, version: str, resource: str) -> ResourceInfo[dict[str, Any]]:
        """The resource named ``resource`` (plural, singular or a short name) in group/version."""
        api_version = f"{group}/{version}" if group else version
        return find_resource(self.resources_for(api_version), api_version, resource)

    def resources_for(self, api_version: str) -> list[ResourceInfo[dict[str, Any]]]:
        """Every top-level resource of one group/version (cached)."""
        with self._lock:
            cached = self._by_gv.get(api_version)
        if cached is not None:
            return cached
        try:
            data = self.rest.request("GET", discovery_path(api_version))
        except errors.NotFoundError:
            raise NoMatchError(f'the server does not serve "{api_version}"') from None
        infos = parse_resource_list(api_version, data)
        with self._lock:
            self._by_gv[api_version] = infos
        return infos

    def server_group_versions(self) -> list[str]:
        """Every served group/version ("v1", "apps/v1", ...), core first; never cached."""
        return group_versions(self.rest.request("GET", "/api"), self.rest.request("GET", "/apis"))

    def refresh(self) -> None:
        """Forget cached discovery (after CRDs change)."""
        with self._lock:
            self._by_gv.clear()


def discovery_path(api_version: str) -> str:
    """Where a group/version's resources are listed (legacy discovery)."""
    group, version = meta.group_version(api_version)
    return f"/apis/{group}/{version}" if group else f"/api/{version}"


def parse_resource_list(api_version: str, data: bytes) -> list[ResourceInfo[dict[str, Any]]]:
    """The top-level resources (their subresources attached) of an APIResourceList response."""
    group, version = meta.group_version(api_version)
    return _parse_resource_list(group, version, _resource_list_decoder.decode(data))


def group_versions(api: bytes, apis: bytes) -> list[str]:
    """Every group/version from the /api and /apis responses, core first."""
    core = msgspec.json.decode(api, type=_Versions).versions
    groups = msgspec.json.decode(apis, type=_Groups).groups
    return list(core) + [v.group_version for g in groups for v in g.versions]


def find_kind(infos: Sequence[ResourceInfo[dict[str, Any]]], api_version: str,
              kind: str) -> ResourceInfo[dict[str, Any]]:
    """The entry of ``infos`` whose kind is ``kind``; ``NoMatchError`` naming the kind and ``api_version``
    if none (shared by the sync and async dynamic clients)."""
    for info in infos:
        if info.kind == kind:
            return info
    raise NoMatchError(f'no matches for kind "{kind}" in version "{api_version}"')


def find_resource(infos: Sequence[ResourceInfo[dict[str, Any]]], api_version: str,
                  resource: str) -> ResourceInfo[dict[str, Any]]:
    """The entry of ``infos`` named ``resource`` (plural, singular or a short name); ``NoMatchError``
    naming it and ``api_version`` if none."""
    for info in infos:
        if resource == info.resource or resource == info.singular or resource in info.short_names:
            return info
    raise NoMatchError(f'the server doesn\'t have a resource type "{resource}" in "{api_version}"')


def as_dynamic_info(info_or_gvr: ResourceInfo[Any]) -> ResourceInfo[dict[str, Any]]:
    """``info_or_gvr`` with dict models (``model`` and ``list_model`` are ``dict``), every other field
    kept; returned as is when already dict-based."""
    return info_or_gvr if info_or_gvr.model is dict else _as_dynamic(info_or_gvr)


def _parse_resource_list(group: str, version: str, lst: _APIResourceList) -> list[ResourceInfo[dict[str, Any]]]:
    subresources: dict[str, list[str]] = {}
    for res in lst.resources:
        if "/" in res.name:
            parent, _, sub = res.name.partition("/")
            subresources.setdefault(parent, []).append(sub)
    return [info_from_api_resource(group, version, res, subresources.get(res.name, ()))
            for res in lst.resources if "/" not in res.name]


def _as_dynamic(info: ResourceInfo[Any]) -> ResourceInfo[dict[str, Any]]:
    return ResourceInfo(
        group=info.group, version=info.version, resource=info.resource, kind=info.kind,
        namespaced=info.namespaced, model=dict, list_model=dict, list_kind=info.list_kind,
        singular=info.singular, short_names=info.short_names, subresources=info.subresources,
        strategic_merge=info.strategic_merge,
    )
