"""Async typed clients: ``AsyncResourceClient[T, L]``, the verbs of ``ResourceClient`` awaited.

The same requests (``ResourceRequests`` builds them, once for both), the same models and
decoders, the same errors; the I/O is ``rest.aio.AsyncRESTClient``'s. A watch is an async
iterator of ``WatchEvent``s (``async for event in await client.watch(...)``; ``stop()`` ends it).
Generated clientsets offer these as ``AsyncClientset`` (one accessor per group/version, one
method per resource), built-in kinds as ``samplecontroller.kubernetes.clientset.AsyncClientset``.
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Mapping
from typing import Any, Generic, TypeVar

import msgspec

from samplecontroller.apimachinery import errors, meta
from samplecontroller.client import dynamic
from samplecontroller.client.resource import Req, ResourceRequests, decode_event, list_options
from samplecontroller.client.types import MERGE_PATCH, ListOptions, ResourceInfo, WatchEvent
from samplecontroller.rest.aio import AsyncResponseStream, AsyncRESTClient

T = TypeVar("T")
L = TypeVar("L")

__all__ = ["AsyncDynamicClient", "AsyncDynamicResourceClient", "AsyncResourceClient", "AsyncResourceWatch"]


class AsyncResourceWatch(Generic[T]):
    """An open watch: ``async for event in watch``; ``stop()`` ends it (from the loop)."""

    def __init__(self, stream: AsyncResponseStream, decoder: msgspec.json.Decoder[Any]) -> None:
        self._stream = stream
        self._decoder = decoder
        self._stopped = False

    def __aiter__(self) -> AsyncIterator[WatchEvent[T]]:
        return self._events()

    async def _events(self) -> AsyncIterator[WatchEvent[T]]:
        """As ``ResourceWatch.__iter__``: events until the server ends the stream or ``stop()``."""
        try:
            async for line in self._stream:
                if self._stopped:
                    return
                event, last = decode_event(line, self._decoder)
                yield event
                if last:
                    return
        finally:
            self._stream.close()

    def stop(self) -> None:
        """End the watch (closes the response); safe to call more than once."""
        self._stopped = True
        self._stream.close()

    async def __aenter__(self) -> AsyncResourceWatch[T]:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.stop()


class AsyncResourceClient(ResourceRequests[T, L]):
    """Verbs on one resource, awaited (see ``ResourceClient`` for each verb's contract)."""

    def __init__(self, rest: AsyncRESTClient, info: ResourceInfo[T], namespace: str | None = None) -> None:
        super().__init__(info, namespace)
        self.rest = rest

    async def _do(self, req: Req) -> bytes:
        return await self.rest.request(req.method, req.path, query=req.query, body=req.body,
                                       content_type=req.content_type)

    async def create(self, obj: T | dict[str, Any], *, dry_run: bool = False, field_manager: str | None = None,
                     field_validation: str | None = None) -> T:
        return self._decode(await self._do(self.create_request(obj, dry_run, field_manager, field_validation)))

    async def get(self, name: str, *, resource_version: str | None = None) -> T:
        return self._decode(await self._do(self.get_request(name, resource_version)))

    async def list(self, *, label_selector: str | None = None, field_selector: str | None = None,
                   limit: int | None = None, continue_: str | None = None, resource_version: str | None = None,
                   resource_version_match: str | None = None, timeout_seconds: int | None = None) -> L:
        opts = list_options(label_selector, field_selector, limit, continue_, resource_version,
                            resource_version_match, timeout_seconds)
        return self._decode_list(await self._do(self.list_request(opts)))

    async def watch(self, *, resource_version: str | None = None, label_selector: str | None = None,
                    field_selector: str | None = None, allow_watch_bookmarks: bool = False,
                    timeout_seconds: int | None = None, send_initial_events: bool | None = None,
                    resource_version_match: str | None = None) -> AsyncResourceWatch[T]:
        """Open a watch (raises like ``get`` if the server refuses it); iterate the result."""
        opts = list_options(label_selector, field_selector, None, None, resource_version, resource_version_match,
                            timeout_seconds, allow_watch_bookmarks, send_initial_events)
        return await self.watch_with(opts)

    async def watch_with(self, opts: ListOptions) -> AsyncResourceWatch[T]:
        """Open a watch with ``opts`` as given (``watch`` builds them from its keywords); raises like ``get``
        if the server refuses it."""
        req, read_timeout = self.watch_request(opts)
        stream = await self.rest.stream(req.method, req.path, query=req.query, timeout=read_timeout)
        return AsyncResourceWatch(stream, self._decoder)

    async def update(self, obj: T | dict[str, Any], *, field_manager: str | None = None, dry_run: bool = False,
                     preserve_unknown_fields: bool = False) -> T:
        return await self._put(obj, None, field_manager, dry_run, preserve_unknown_fields)

    async def update_status(self, obj: T | dict[str, Any], *, field_manager: str | None = None,
                            dry_run: bool = False, preserve_unknown_fields: bool = False) -> T:
        """PUT ``obj`` to the status subresource: only ``.status`` changes. One request, as ``update``."""
        return await self._put(obj, "status", field_manager, dry_run, preserve_unknown_fields)

    async def _put(self, obj: Any, subresource: str | None, field_manager: str | None, dry_run: bool,
                   preserve_unknown_fields: bool) -> T:
        live = None
        if self.reads_live_first(obj, preserve_unknown_fields):
            live = await self.rest.request("GET", self.put_path(obj, subresource))
        return self._decode(await self._do(self.put_request(obj, subresource, field_manager, dry_run, live)))

    async def patch(self, name: str, patch: bytes | dict[str, Any] | builtins.list[Any],
                    patch_type: str = MERGE_PATCH, *, subresource: str | None = None,
                    field_manager: str | None = None, force: bool | None = None, dry_run: bool = False) -> T:
        return self._decode(await self._do(self.patch_request(name, patch, patch_type, subresource, field_manager,
                                                              force, dry_run)))

    async def apply(self, obj: T | dict[str, Any], *, field_manager: str, force: bool = False,
                    subresource: str | None = None, dry_run: bool = False) -> T:
        """Server-side apply ``obj`` (the fields you state are yours); creates it when missing."""
        return self._decode(await self._do(self.apply_request(obj, field_manager, force, subresource, dry_run)))

    async def apply_status(self, obj: T | dict[str, Any], *, field_manager: str, force: bool = False,
                           dry_run: bool = False) -> T:
        """Server-side apply ``obj`` to the status subresource, as ``apply``; returns the whole object."""
        return await self.apply(obj, field_manager=field_manager, force=force, subresource="status",
                                dry_run=dry_run)

    async def delete(self, name: str, *, propagation_policy: str | None = None,
                     preconditions: Mapping[str, str] | None = None, grace_period_seconds: int | None = None,
                     dry_run: bool = False) -> None:
        """DELETE the object ``name`` (NotFoundError if absent); the keywords are its DeleteOptions."""
        await self._do(self.delete_request(name, propagation_policy, preconditions, grace_period_seconds, dry_run))

    async def delete_collection(self, *, label_selector: str | None = None, field_selector: str | None = None,
                                propagation_policy: str | None = None) -> None:
        """DELETE every object in this client's namespace (or cluster scope) matching the selectors;
        without selectors, every one."""
        await self._do(self.delete_collection_request(label_selector, field_selector, propagation_policy))


AsyncDynamicResourceClient = AsyncResourceClient[dict[str, Any], dict[str, Any]]


class AsyncDynamicClient:
    """``client.dynamic.DynamicClient``, awaited: dict-based clients for any served resource,
    found through discovery (cached per group/version; ``refresh()`` forgets it). The lookups
    and the parsing are the sync client's (``client.dynamic``); only the requests are awaited."""

    def __init__(self, rest: AsyncRESTClient) -> None:
        self.rest = rest
        self._by_gv: dict[str, builtins.list[ResourceInfo[dict[str, Any]]]] = {}

    async def resource(self, info_or_gvr: ResourceInfo[Any] | tuple[str, str, str],
                       namespace: str | None = None) -> AsyncDynamicResourceClient:
        """A dict-based ``AsyncResourceClient``; a (group, version, resource) tuple is looked up
        in discovery."""
        if isinstance(info_or_gvr, ResourceInfo):
            info = dynamic.as_dynamic_info(info_or_gvr)
        else:
            group, version, resource = info_or_gvr
            info = await self.resource_for_gvr(group, version, resource)
        return AsyncResourceClient(self.rest, info, namespace)

    async def for_object(self, obj: Any, namespace: str | None = None) -> AsyncDynamicResourceClient:
        """The client for ``obj``'s apiVersion and kind, in ``namespace`` or the object's own."""
        info = await self.resource_for(meta.get_api_version(obj), meta.get_kind(obj))
        return AsyncResourceClient(self.rest, info, namespace or meta.get_namespace(obj) or None)

    async def resource_for(self, api_version: str, kind: str) -> ResourceInfo[dict[str, Any]]:
        """The resource serving ``kind`` in ``api_version`` (for example "apps/v1", "Deployment");
        ``NoMatchError`` if none."""
        return dynamic.find_kind(await self.resources_for(api_version), api_version, kind)

    async def resource_for_gvr(self, group: str, version: str, resource: str) -> ResourceInfo[dict[str, Any]]:
        """The resource named ``resource`` (plural, singular or a short name) in group/version;
        ``NoMatchError`` if none."""
        api_version = f"{group}/{version}" if group else version
        return dynamic.find_resource(await self.resources_for(api_version), api_version, resource)

    async def resources_for(self, api_version: str) -> builtins.list[ResourceInfo[dict[str, Any]]]:
        """Every top-level resource of one group/version (requested once, then cached); ``NoMatchError``
        if the server does not serve the group/version."""
        cached = self._by_gv.get(api_version)
        if cached is not None:
            return cached
        try:
            data = await self.rest.request("GET", dynamic.discovery_path(api_version))
        except errors.NotFoundError:
            raise dynamic.NoMatchError(f'the server does not serve "{api_version}"') from None
        infos = self._by_gv[api_version] = dynamic.parse_resource_list(api_version, data)
        return infos

    async def server_group_versions(self) -> builtins.list[str]:
        """Every served group/version ("v1", "apps/v1", ...), core first; never cached."""
        return dynamic.group_versions(await self.rest.request("GET", "/api"), await self.rest.request("GET", "/apis"))

    def refresh(self) -> None:
        """Forget cached discovery (after CRDs change): the next lookup asks the server again."""
        self._by_gv.clear()
