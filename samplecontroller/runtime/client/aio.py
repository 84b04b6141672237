"""The runtime client, awaited: ``AsyncClient`` (``mgr.get_async_client()``), for async reconcilers.

Same contract as ``runtime.client.Client`` (see its docstring): ``await get/list`` read the
manager's shared cache, ``await create/update/patch/apply/delete/delete_all_of`` go to the API
server and return the server's object, ``status()`` writes the status subresource, patches are
the same ``MergeFrom``/``StrategicMergeFrom``/``Apply``/``RawPatch`` objects. Writes go through
``client.aio.AsyncResourceClient`` (so over ``rest.aio.AsyncRESTClient``, on the loop).

Cache reads never block the loop: a cache that has synced is an in-memory lookup done at once
(the same indexer the sync client reads); one still syncing (the first read of a type not
watched yet) is waited for on a worker thread. Without a cache reads go to the API server.
Type resolution (Scheme, namespace checks) is the sync client's.

``create_or_update`` / ``create_or_patch`` are controllerutil's, awaited.
``FakeAsyncClient`` (built by ``runtime.client.fake.ClientBuilder.build_async()``) is the same
interface over the sync fake client and its tracker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from samplecontroller.apimachinery import errors, labels, meta
from samplecontroller.client.scheme import Scheme
from samplecontroller.client.types import ResourceInfo
from samplecontroller.runtime.client import (
    Apply,
    Client,
    MergeFrom,
    OperationResult,
    Patch,
    _apply_owner,
    _check_key,
    _key_of,
    _patch_result,
    _patches_needed,
    _same,
)

__all__ = ["AsyncClient", "AsyncStatusWriter", "FakeAsyncClient", "create_or_patch", "create_or_update"]

T = TypeVar("T")
AsyncClientFor = Callable[[ResourceInfo[Any], "str | None"], Any]
"""``(info, namespace) -> AsyncResourceClient`` (or anything with the same awaited verbs)."""


class AsyncClient:
    """Reads through ``cache`` (None: the API server), writes through ``client_for(info, ns)``."""

    def __init__(self, client_for: AsyncClientFor, cache: Any = None, *, scheme: Scheme,
                 field_owner: str | None = None) -> None:
        self.client_for = client_for
        self.cache = cache
        self.scheme = scheme
        self.field_owner = field_owner
        # applied to every object before ``create`` (sharding labels the owned objects it creates)
        self.on_create: Callable[[Any], Any] | None = None
        self._types = Client(client_for, None, scheme=scheme, field_owner=field_owner)  # resolution only
        self._synced: set[type[Any]] = set()  # models whose informer has synced (it stays synced)

    @classmethod
    def for_rest_client(cls, rest: Any, cache: Any = None, *, scheme: Scheme,
                        field_owner: str | None = None) -> AsyncClient:
        """Over an ``AsyncRESTClient``."""
        from samplecontroller.client.aio import AsyncResourceClient

        return cls(lambda info, ns: AsyncResourceClient(rest, info, ns), cache, scheme=scheme,
                   field_owner=field_owner)

    def info_for_type(self, model: type[Any]) -> ResourceInfo[Any]:
        """The ``ResourceInfo`` of ``model`` in the scheme; ValueError if it is not registered."""
        return self._types.info_for_type(model)

    def info_for_object(self, obj: Any) -> ResourceInfo[Any]:
        """The ``ResourceInfo`` of ``obj`` (a model, or a dict by its apiVersion and kind); ValueError
        if unknown."""
        return self._types.info_for_object(obj)

    def _resource(self, obj: Any) -> Any:
        return self._types._resource(obj)

    # -- reading -----------------------------------------------------------------------

    async def _from_cache(self, model: type[Any], read: Callable[[], T]) -> T:
        if model in self._synced:
            return read()  # an in-memory lookup
        if self.cache.get_informer(model).has_synced():
            self._synced.add(model)
            return read()
        return await asyncio.to_thread(read)  # waits for the informer to sync

    async def get(self, model: type[T], namespace: str, name: str) -> T:
        """One object (from the cache when there is one); NotFoundError when absent."""
        if self.cache is not None:
            cache = self.cache
            found: T = await self._from_cache(model, lambda: cache.get(model, namespace, name))
            return found
        info = self.info_for_type(model)
        got: T = await self.client_for(info, namespace if info.namespaced else None).get(name)
        return got

    async def list(self, model: type[T], *, namespace: str | None = None,
                   label_selector: labels.Selector | str | Mapping[str, str] | None = None,
                   matching_fields: Mapping[str, str] | None = None) -> list[T]:
        """Objects of ``model`` (from the cache when there is one)."""
        if self.cache is not None:
            cache = self.cache
            found: list[T] = await self._from_cache(model, lambda: cache.list(
                model, namespace=namespace, label_selector=label_selector, matching_fields=matching_fields))
            return found
        info = self.info_for_type(model)
        sel = label_selector
        if isinstance(sel, Mapping):
            sel = str(labels.selector_from_set(sel))
        fields = ",".join(f"{k}={v}" for k, v in (matching_fields or {}).items()) or None
        result = await self.client_for(info, namespace or None).list(label_selector=str(sel) if sel else None,
                                                                     field_selector=fields)
        return list(result.items if not isinstance(result, dict) else result.get("items") or [])

    # -- writing -----------------------------------------------------------------------

    async def create(self, obj: T, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        if self.on_create is not None:
            obj = self.on_create(obj)
        created: T = await self._resource(obj).create(obj, dry_run=dry_run,
                                                      field_manager=field_owner or self.field_owner)
        return self._written(obj, created, dry_run)

    async def update(self, obj: T, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        """Replace the object (its resourceVersion must be current, else ConflictError)."""
        updated: T = await self._resource(obj).update(obj, dry_run=dry_run,
                                                      field_manager=field_owner or self.field_owner)
        return self._written(obj, updated, dry_run)

    def _written(self, obj: Any, result: T, dry_run: bool) -> T:
        """Record ``result`` in the reconcile's recording (read your own writes: the sync ``Client``'s)."""
        return self._types._written(obj, result, dry_run)

    async def patch(self, obj: T, patch: Patch, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        return await self._patch(obj, patch, None, dry_run, field_owner)

    async def _patch(self, obj: T, patch: Patch, subresource: str | None, dry_run: bool,
                     field_owner: str | None) -> T:
        if isinstance(patch, Apply):
            info = self._types.info_for_apply(obj)
            applied = await self._types._resource(obj, info).apply(
                obj, field_manager=patch.field_owner, force=patch.force, subresource=subresource, dry_run=dry_run)
            return self._types._applied(obj, info, applied, dry_run)
        res = self._resource(obj)
        patched: T = await res.patch(meta.get_name(obj), patch.data(obj), patch.type, subresource=subresource,
                                     field_manager=field_owner or self.field_owner, dry_run=dry_run)
        return self._written(obj, patched, dry_run)

    async def apply(self, obj: T, *, field_owner: str | None = None, force: bool = False,
                    dry_run: bool = False) -> T:
        """Server-side apply ``obj`` as ``field_owner`` (default: the client's; ValueError without one);
        ``force`` takes over conflicting fields. ``obj`` is an apply configuration, a dict or a model,
        and the result has its shape, as ``Client.apply``."""
        return await self.patch(obj, Apply(_apply_owner(field_owner or self.field_owner), force), dry_run=dry_run)

    async def delete(self, obj: Any, *, propagation_policy: str | None = None,
                     preconditions: Mapping[str, str] | None = None, grace_period_seconds: int | None = None,
                     dry_run: bool = False) -> None:
        """Delete ``obj`` on the server (NotFoundError if absent); with finalizers it is only marked for
        deletion."""
        await self._resource(obj).delete(meta.get_name(obj), propagation_policy=propagation_policy,
                                         preconditions=preconditions, grace_period_seconds=grace_period_seconds,
                                         dry_run=dry_run)
        self._types._deleted(obj, dry_run)

    async def delete_all_of(self, model: type[Any], *, namespace: str | None = None,
                            label_selector: str | Mapping[str, str] | None = None,
                            field_selector: str | None = None, propagation_policy: str | None = None) -> None:
        """Delete every object of ``model`` matching the selectors (in ``namespace`` for a namespaced
        kind)."""
        info = self.info_for_type(model)
        if isinstance(label_selector, Mapping):
            label_selector = str(labels.selector_from_set(label_selector))
        await self.client_for(info, namespace if info.namespaced else None).delete_collection(
            label_selector=label_selector or None, field_selector=field_selector,
            propagation_policy=propagation_policy)

    def status(self) -> AsyncStatusWriter:
        """A writer for the status subresource: ``await client.status().patch(obj, MergeFrom(original))``."""
        return AsyncStatusWriter(self)


class AsyncStatusWriter:
    """Writes the status subresource, awaited."""

    def __init__(self, client: AsyncClient) -> None:
        self.client = client

    async def update(self, obj: T, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        """Replace the object's status (resourceVersion must be current, else ConflictError)."""
        updated: T = await self.client._resource(obj).update_status(
            obj, dry_run=dry_run, field_manager=field_owner or self.client.field_owner)
        return self.client._written(obj, updated, dry_run)

    async def patch(self, obj: T, patch: Patch, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        """Patch the object's status with ``patch``."""
        return await self.client._patch(obj, patch, "status", dry_run, field_owner)

    async def apply(self, obj: T, *, field_owner: str | None = None, force: bool = False,
                    dry_run: bool = False) -> T:
        """Server-side apply of the status of ``obj`` (as ``StatusWriter.apply``)."""
        owner = _apply_owner(field_owner or self.client.field_owner)
        return await self.patch(obj, Apply(owner, force), dry_run=dry_run)


class FakeAsyncClient(AsyncClient):
    """``AsyncClient`` over a sync ``Client`` whose calls never block: the fake client (its
    tracker's semantics, interceptors included) for async reconciler unit tests. ``sync`` is
    that client (inspect the objects through it or through this one)."""

    def __init__(self, sync: Client) -> None:
        super().__init__(sync.client_for, None, scheme=sync.scheme, field_owner=sync.field_owner)
        self.sync = sync

    async def get(self, model: type[T], namespace: str, name: str) -> T:
        return self.sync.get(model, namespace, name)

    async def list(self, model: type[T], *, namespace: str | None = None,
                   label_selector: labels.Selector | str | Mapping[str, str] | None = None,
                   matching_fields: Mapping[str, str] | None = None) -> list[T]:
        return self.sync.list(model, namespace=namespace, label_selector=label_selector,
                              matching_fields=matching_fields)

    async def create(self, obj: T, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        return self.sync.create(obj, dry_run=dry_run, field_owner=field_owner)

    async def update(self, obj: T, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        return self.sync.update(obj, dry_run=dry_run, field_owner=field_owner)

    async def patch(self, obj: T, patch: Patch, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        return self.sync.patch(obj, patch, dry_run=dry_run, field_owner=field_owner)

    async def apply(self, obj: T, *, field_owner: str | None = None, force: bool = False,
                    dry_run: bool = False) -> T:
        """``apply`` on the fake client (``sync``): applied to its tracker."""
        return self.sync.apply(obj, field_owner=field_owner, force=force, dry_run=dry_run)

    async def delete(self, obj: Any, *, propagation_policy: str | None = None,
                     preconditions: Mapping[str, str] | None = None, grace_period_seconds: int | None = None,
                     dry_run: bool = False) -> None:
        """``delete`` on the fake client (``sync``): removed from its tracker, or marked when it has
        finalizers."""
        self.sync.delete(obj, propagation_policy=propagation_policy, preconditions=preconditions,
                         grace_period_seconds=grace_period_seconds, dry_run=dry_run)

    async def delete_all_of(self, model: type[Any], *, namespace: str | None = None,
                            label_selector: str | Mapping[str, str] | None = None,
                            field_selector: str | None = None, propagation_policy: str | None = None) -> None:
        """``delete_all_of`` on the fake client (``sync``): each matching object deleted as ``delete`` does."""
        self.sync.delete_all_of(model, namespace=namespace, label_selector=label_selector,
                                field_selector=field_selector, propagation_policy=propagation_policy)

    def status(self) -> AsyncStatusWriter:
        """A status writer over the fake client's (``sync.status()``)."""
        return _FakeAsyncStatusWriter(self)


class _FakeAsyncStatusWriter(AsyncStatusWriter):
    client: FakeAsyncClient

    async def update(self, obj: T, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        return self.client.sync.status().update(obj, dry_run=dry_run, field_owner=field_owner)

    async def patch(self, obj: T, patch: Patch, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        return self.client.sync.status().patch(obj, patch, dry_run=dry_run, field_owner=field_owner)

    async def apply(self, obj: T, *, field_owner: str | None = None, force: bool = False,
                    dry_run: bool = False) -> T:
        return self.client.sync.status().apply(obj, field_owner=field_owner, force=force, dry_run=dry_run)


# -- controllerutil, awaited -------------------------------------------------------------------


async def create_or_update(c: AsyncClient, obj: T, mutate: Callable[[T], T]) -> tuple[T, OperationResult]:
    """``runtime.client.create_or_update``, awaited."""
    found = await _mutated(c, obj, mutate)
    if not isinstance(found, tuple):
        return await c.create(found), OperationResult.CREATED
    current, desired = found
    if _same(current, desired):
        return current, OperationResult.NONE
    return await c.update(desired), OperationResult.UPDATED


async def create_or_patch(c: AsyncClient, obj: T, mutate: Callable[[T], T]) -> tuple[T, OperationResult]:
    """``runtime.client.create_or_patch``, awaited."""
    found = await _mutated(c, obj, mutate)
    if not isinstance(found, tuple):
        return await c.create(found), OperationResult.CREATED
    current, desired = found
    body, status = _patches_needed(current, desired)
    out = current
    if body:
        out = await c.patch(desired, MergeFrom(current))
    if status:
        out = await c.status().patch(desired, MergeFrom(current))
    return out, _patch_result(body, status)


async def _mutated(c: AsyncClient, obj: T, mutate: Callable[[T], T]) -> T | tuple[T, T]:
    ns, name = _key_of(obj)
    try:
        current: T = await c.get(type(obj), ns, name)
    except errors.NotFoundError:
        desired = mutate(obj)
        _check_key(obj, desired)
        return desired
    desired = mutate(current)
    _check_key(current, desired)
    return current, desired
