"""The runtime client: reads from the manager's cache, writes to the API server (pkg/client).

- ``get``/``list`` read the cache (so they see what the informers saw, possibly slightly stale);
  with no cache (``cache=None``) they go to the API server. Both take the model type.
- ``create``, ``update``, ``delete``, ``delete_all_of``, ``patch`` and ``apply`` go straight to
  the API server and return the server's object (objects are immutable Structs: the caller's
  object is never changed, unlike Go).
- ``patch(obj, MergeFrom(original))`` sends the JSON merge patch from ``original`` to ``obj``;
  ``MergeFrom(original, optimistic_lock=True)`` adds the original resourceVersion so a
  concurrent change gives a ConflictError. ``StrategicMergeFrom`` is for built-in kinds.
  ``Apply(field_owner, force)`` is server-side apply of ``obj``; ``apply(obj)`` takes an apply
  configuration (generated ``applyconfigurations`` classes, or a dict with apiVersion/kind: only
  the fields set are sent and owned) or a model, and returns the result in ``obj``'s shape.
- ``status()`` gives a writer for the status subresource (update, patch, apply).
- Helpers: ``set_controller_reference``, ``set_owner_reference``, ``remove_owner_reference``
  (the owner's kind from the client's Scheme; ``apimachinery.ownerreferences`` does the work),
  ``create_or_update``, ``create_or_patch``, and, re-exported from ``apimachinery.finalizers``,
  ``add_finalizer``, ``remove_finalizer``, ``contains_finalizer``.
API errors are ``samplecontroller.apimachinery.errors`` exceptions.

Inside a reconcile every successful write (not dry runs, not ``delete_all_of``) is recorded for
read-your-own-writes (``runtime.consistency``): the controller does not reconcile that key again
until its cache has observed them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

from samplecontroller.apimachinery import (
    errors,
    labels,
    mergepatch,
    meta,
    objects,
    ownerreferences,
    strategicpatch,
)
from samplecontroller.apimachinery.finalizers import add_finalizer, contains_finalizer, remove_finalizer
from samplecontroller.apimachinery.ownerreferences import AlreadyOwnedError
from samplecontroller.client.scheme import Scheme
from samplecontroller.client.types import (
    APPLY_PATCH,
    JSON_PATCH,
    MERGE_PATCH,
    STRATEGIC_MERGE_PATCH,
    ResourceInfo,
)
from samplecontroller.runtime._gvk import gvk_for_type
from samplecontroller.runtime.consistency import recorder

T = TypeVar("T")
ClientFor = Callable[[ResourceInfo[Any], "str | None"], Any]

_encoder = objects.ENCODER  # numbers written as Go writes them


# -- patches ---------------------------------------------------------------------------------


class Patch:
    """How to turn an object into a PATCH request: ``type`` and ``data(obj) -> bytes``."""

    type: str = MERGE_PATCH

    def data(self, obj: Any) -> bytes:
        """The request body for patching ``obj``."""
        raise NotImplementedError


@dataclass(frozen=True)
class RawPatch(Patch):
    """A patch body given verbatim (JSON patch, merge patch, ...)."""

    patch_type: str
    body: bytes | dict[str, Any] | list[Any]

    @property
    def type(self) -> str:  # type: ignore[override]
        return self.patch_type

    def data(self, obj: Any) -> bytes:
        """The body as given (a dict or list is JSON-encoded)."""
        return self.body if isinstance(self.body, bytes) else _encoder.encode(self.body)


class MergeFrom(Patch):
    """A JSON merge patch from ``original`` to the object being patched."""

    type = MERGE_PATCH

    def __init__(self, original: Any, optimistic_lock: bool = False) -> None:
        self.original = original
        self.optimistic_lock = optimistic_lock

    def _diff(self, original: dict[str, Any], modified: dict[str, Any]) -> Any:
        return mergepatch.create_merge_patch(original, modified)

    def data(self, obj: Any) -> bytes:
        """The merge patch from the original to ``obj`` (with the original's resourceVersion under ``optimistic_lock``: a conflict if it changed meanwhile)."""
        patch = self._diff(objects.to_dict(self.original), objects.to_dict(obj))
        if not isinstance(patch, dict):
            patch = {}
        if self.optimistic_lock:
            rv = meta.get_resource_version(self.original)
            if not rv:
                raise ValueError("optimistic lock needs the original object's resourceVersion")
            patch.setdefault("metadata", {})["resourceVersion"] = rv
        return _encoder.encode(patch)


class StrategicMergeFrom(MergeFrom):
    """A strategic merge patch from ``original`` (built-in kinds only: lists merge by key)."""

    type = STRATEGIC_MERGE_PATCH

    def _diff(self, original: dict[str, Any], modified: dict[str, Any]) -> Any:
        group, version = meta.group_version(str(modified.get("apiVersion") or original.get("apiVersion") or ""))
        kind = modified.get("kind") or original.get("kind")
        definition = f"io.k8s.api.{group.split('.')[0] or 'core'}.{version}.{kind}"
        return strategicpatch.create_two_way_merge_patch(original, modified, definition)


@dataclass(frozen=True)
class Apply(Patch):
    """Server-side apply of the object as given (every field stated is owned by ``field_owner``)."""

    field_owner: str
    force: bool = False
    type = APPLY_PATCH

    def data(self, obj: Any) -> bytes:
        """``obj`` as JSON: the apply configuration."""
        return _encoder.encode(obj)


# -- the client ------------------------------------------------------------------------------


class Client:
    """Reads through ``cache`` (None: the API server), writes through ``client_for(info, ns)``."""

    def __init__(self, client_for: ClientFor, cache: Any = None, *, scheme: Scheme,
                 field_owner: str | None = None) -> None:
        self.client_for = client_for
        self.cache = cache
        self.scheme = scheme
        self.field_owner = field_owner
        # applied to every object before ``create`` (sharding labels the owned objects it creates)
        self.on_create: Callable[[Any], Any] | None = None

    @classmethod
    def for_rest_client(cls, rest: Any, cache: Any = None, *, scheme: Scheme,
                        field_owner: str | None = None) -> Client:
        """A client that writes (and, without ``cache``, reads) through ``rest`` (a ``RESTClient``)."""
        from samplecontroller.client import ResourceClient

        return cls(lambda info, ns: ResourceClient(rest, info, ns), cache, scheme=scheme, field_owner=field_owner)

    # -- resolution --------------------------------------------------------------------

    def info_for_type(self, model: type[Any]) -> ResourceInfo[Any]:
        """The ``ResourceInfo`` of ``model`` in the scheme; ValueError if it is not registered."""
        try:
            info: ResourceInfo[Any] = self.scheme.info_for(model)
            return info
        except KeyError as err:
            raise ValueError(str(err).strip("'\"")) from None

    def info_for_object(self, obj: Any) -> ResourceInfo[Any]:
        """The ``ResourceInfo`` of ``obj`` (a model, or a dict by its apiVersion and kind); ValueError if unknown."""
        if isinstance(obj, dict):
            group, version = meta.group_version(meta.get_api_version(obj))
            try:
                info: ResourceInfo[Any] = self.scheme.info_for_gvk(group, version, meta.get_kind(obj))
                return info
            except KeyError as err:
                raise ValueError(str(err).strip("'\"")) from None
        return self.info_for_type(type(obj))

    def info_for_apply(self, obj: Any) -> ResourceInfo[Any]:
        """The ``ResourceInfo`` of what ``obj`` applies: a registered model's, else (an apply
        configuration, a dict) its ``apiVersion`` and ``kind``'s; ValueError if unknown."""
        try:
            return self.info_for_object(obj)
        except ValueError:
            api_version, kind = meta.get_api_version(obj), meta.get_kind(obj)
            if not (api_version and kind):
                raise
        group, version = meta.group_version(api_version)
        try:
            info: ResourceInfo[Any] = self.scheme.info_for_gvk(group, version, kind)
            return info
        except KeyError as err:
            raise ValueError(str(err).strip("'\"")) from None

    def _resource(self, obj: Any, info: ResourceInfo[Any] | None = None) -> Any:
        info = info or self.info_for_object(obj)
        ns = meta.get_namespace(obj) if info.namespaced else None
        if info.namespaced and not ns:
            raise ValueError(f"{info.kind} {meta.get_name(obj)!r} needs metadata.namespace")
        return self.client_for(info, ns)

    # -- reading -----------------------------------------------------------------------

    def get(self, model: type[T], namespace: str, name: str) -> T:
        """One object (from the cache when there is one); NotFoundError when absent."""
        if self.cache is not None:
            obj: T = self.cache.get(model, namespace, name)
            return obj
        info = self.info_for_type(model)
        got: T = self.client_for(info, namespace if info.namespaced else None).get(name)
        return got

    def list(self, model: type[T], *, namespace: str | None = None,
             label_selector: labels.Selector | str | Mapping[str, str] | None = None,
             matching_fields: Mapping[str, str] | None = None) -> list[T]:
        """Objects of ``model`` (from the cache when there is one)."""
        if self.cache is not None:
            found: list[T] = self.cache.list(model, namespace=namespace, label_selector=label_selector,
                                             matching_fields=matching_fields)
            return found
        info = self.info_for_type(model)
        sel = label_selector
        if isinstance(sel, Mapping):
            sel = str(labels.selector_from_set(sel))
        fields = ",".join(f"{k}={v}" for k, v in (matching_fields or {}).items()) or None
        result = self.client_for(info, namespace or None).list(label_selector=str(sel) if sel else None,
                                                               field_selector=fields)
        return list(result.items if not isinstance(result, dict) else result.get("items") or [])

    # -- writing -----------------------------------------------------------------------

    def create(self, obj: T, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        """Create ``obj`` on the server and return what the server stored (AlreadyExistsError if it exists)."""
        if self.on_create is not None:
            obj = self.on_create(obj)
        created: T = self._resource(obj).create(obj, dry_run=dry_run, field_manager=field_owner or self.field_owner)
        return self._written(obj, created, dry_run)

    def update(self, obj: T, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        """Replace the object (its resourceVersion must be current, else ConflictError)."""
        updated: T = self._resource(obj).update(obj, dry_run=dry_run, field_manager=field_owner or self.field_owner)
        return self._written(obj, updated, dry_run)

    # -- read your own writes (runtime.consistency) -------------------------------------
    def _written(self, obj: Any, result: T, dry_run: bool) -> T:
        """Record ``result`` (the server's answer to a write of ``obj``) in the reconcile's recording."""
        if not dry_run and recorder.active():
            recorder.record_write(self.info_for_object(obj), result)
        return result
    def _applied(self, obj: T, info: ResourceInfo[Any], result: Any, dry_run: bool) -> T:
        """Record the server's answer to an apply of ``obj``; return it in ``obj``'s shape."""
        if not dry_run and recorder.active():
            recorder.record_write(info, result)
        return _as_applied(obj, info, result)

    def _deleted(self, obj: Any, dry_run: bool) -> None:
        """Record the delete of ``obj`` in the reconcile's recording."""
        if not dry_run and recorder.active():
            recorder.record_delete(self.info_for_object(obj), obj)
    # -- end read your own writes --------------------------------------------------------

    def patch(self, obj: T, patch: Patch, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        """Patch ``obj`` on the server with ``patch`` (``MergeFrom``, ``StrategicMergeFrom``, ``Apply``, ``RawPatch``); return the result."""
        return self._patch(obj, patch, None, dry_run, field_owner)

    def _patch(self, obj: T, patch: Patch, subresource: str | None, dry_run: bool, field_owner: str | None) -> T:
        if isinstance(patch, Apply):
            info = self.info_for_apply(obj)
            applied = self._resource(obj, info).apply(obj, field_manager=patch.field_owner, force=patch.force,
                                                      subresource=subresource, dry_run=dry_run)
            return self._applied(obj, info, applied, dry_run)
        res = self._resource(obj)
        patched: T = res.patch(meta.get_name(obj), patch.data(obj), patch.type, subresource=subresource,
                               field_manager=field_owner or self.field_owner, dry_run=dry_run)
        return self._written(obj, patched, dry_run)

    def apply(self, obj: T, *, field_owner: str | None = None, force: bool = False, dry_run: bool = False) -> T:
        """Server-side apply ``obj`` as ``field_owner`` (default: the client's; ValueError without one);
        ``force`` takes over conflicting fields (else a ConflictError names their managers).

        ``obj`` is an apply configuration (a class of the generated ``applyconfigurations``
        package, or a dict with ``apiVersion`` and ``kind``: only the fields set are sent, so only
        they are owned) or a model (every field it encodes is sent). The result is the server's
        object in ``obj``'s shape: the model, the apply configuration class, or a dict."""
        return self.patch(obj, Apply(_apply_owner(field_owner or self.field_owner), force), dry_run=dry_run)

    def delete(self, obj: Any, *, propagation_policy: str | None = None,
               preconditions: Mapping[str, str] | None = None, grace_period_seconds: int | None = None,
               dry_run: bool = False) -> None:
        """Delete ``obj`` on the server (NotFoundError if absent); with finalizers it is only marked for deletion."""
        self._resource(obj).delete(meta.get_name(obj), propagation_policy=propagation_policy,
                                   preconditions=preconditions, grace_period_seconds=grace_period_seconds,
                                   dry_run=dry_run)
        self._deleted(obj, dry_run)

    def delete_all_of(self, model: type[Any], *, namespace: str | None = None,
                      label_selector: str | Mapping[str, str] | None = None,
                      field_selector: str | None = None, propagation_policy: str | None = None) -> None:
        """Delete every object of ``model`` matching the selectors (in ``namespace`` for a namespaced kind)."""
        info = self.info_for_type(model)
        if isinstance(label_selector, Mapping):
            label_selector = str(labels.selector_from_set(label_selector))
        self.client_for(info, namespace if info.namespaced else None).delete_collection(
            label_selector=label_selector or None, field_selector=field_selector,
            propagation_policy=propagation_policy)

    def status(self) -> StatusWriter:
        """A writer for the status subresource: ``client.status().patch(obj, MergeFrom(original))``."""
        return StatusWriter(self)


class StatusWriter:
    """Writes the status subresource (changes outside ``.status`` are ignored by the server)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def update(self, obj: T, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        """Replace the object's status (resourceVersion must be current, else ConflictError)."""
        res = self.client._resource(obj)
        updated: T = res.update_status(obj, dry_run=dry_run, field_manager=field_owner or self.client.field_owner)
        return self.client._written(obj, updated, dry_run)

    def patch(self, obj: T, patch: Patch, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        """Patch the object's status with ``patch``."""
        return self.client._patch(obj, patch, "status", dry_run, field_owner)

    def apply(self, obj: T, *, field_owner: str | None = None, force: bool = False, dry_run: bool = False) -> T:
        """Server-side apply of the status of ``obj`` (an apply configuration, a dict or a model, as
        ``Client.apply``): only ``.status`` fields set are sent and owned."""
        owner = _apply_owner(field_owner or self.client.field_owner)
        return self.patch(obj, Apply(owner, force), dry_run=dry_run)


def _apply_owner(owner: str | None) -> str:
    """The field owner of an apply; ValueError when there is none."""
    if not owner:
        raise ValueError("server-side apply needs a field owner")
    return owner


def _as_applied(obj: T, info: ResourceInfo[Any], result: Any) -> T:
    """``result`` (the server's answer, decoded as ``info.model``) in the shape of ``obj`` (what was
    applied): as is for the model, a dict for a dict, else (an apply configuration) that class."""
    if isinstance(obj, dict):
        return result if isinstance(result, dict) else objects.to_dict(result)  # type: ignore[return-value]
    if type(obj) is info.model or isinstance(result, type(obj)):
        return result  # type: ignore[no-any-return]
    return objects.from_dict(type(obj), objects.to_dict(result))


# -- helpers ---------------------------------------------------------------------------------


def _owner_gvk(owner: Any, scheme: Scheme | None) -> tuple[str, str, str] | None:
    """The owner's group/version/kind from ``scheme`` (or the model's defaults); a dict's own."""
    if isinstance(owner, dict):
        return None
    return gvk_for_type(type(owner), scheme)


def set_controller_reference(owner: Any, obj: T, scheme: Scheme | None = None) -> T:
    """controllerutil.SetControllerReference: a copy of ``obj`` controlled by ``owner``, the
    owner's kind looked up in ``scheme`` (see ``apimachinery.ownerreferences``)."""
    return ownerreferences.set_controller_reference(owner, obj, _owner_gvk(owner, scheme))


def set_owner_reference(owner: Any, obj: T, scheme: Scheme | None = None) -> T:
    """controllerutil.SetOwnerReference: a copy of ``obj`` with a non-controller reference to ``owner``."""
    return ownerreferences.set_owner_reference(owner, obj, _owner_gvk(owner, scheme))


def remove_owner_reference(owner: Any, obj: T, scheme: Scheme | None = None) -> tuple[T, bool]:
    """controllerutil.RemoveOwnerReference: (copy without the reference to ``owner``, changed)."""
    return ownerreferences.remove_owner_reference(owner, obj, _owner_gvk(owner, scheme))


class OperationResult(StrEnum):
    """What ``create_or_update`` / ``create_or_patch`` did (controllerutil.OperationResult)."""

    NONE = "unchanged"
    CREATED = "created"
    UPDATED = "updated"
    UPDATED_STATUS = "updatedStatus"
    UPDATED_STATUS_ONLY = "updatedStatusOnly"


def _key_of(obj: Any) -> tuple[str, str]:
    return meta.get_namespace(obj), meta.get_name(obj)


def _same(a: Any, b: Any) -> bool:
    return objects.to_dict(a) == objects.to_dict(b)


def create_or_update(c: Client, obj: T, mutate: Callable[[T], T]) -> tuple[T, OperationResult]:
    """Get the live object (a fresh GET when ``obj`` is missing from the cache), apply ``mutate``
    and create or update it. ``mutate(current) -> desired`` must keep name and namespace.

    Returns (the server's object, what happened); an unchanged object is not written.
    """
    found = _mutated(c, obj, mutate)
    if not isinstance(found, tuple):
        return c.create(found), OperationResult.CREATED
    current, desired = found
    if _same(current, desired):
        return current, OperationResult.NONE
    return c.update(desired), OperationResult.UPDATED


def create_or_patch(c: Client, obj: T, mutate: Callable[[T], T]) -> tuple[T, OperationResult]:
    """Like ``create_or_update`` but writes a merge patch of the changes (status through the
    status subresource), so fields the model does not know and other writers' changes survive."""
    found = _mutated(c, obj, mutate)
    if not isinstance(found, tuple):
        return c.create(found), OperationResult.CREATED
    current, desired = found
    body, status = _patches_needed(current, desired)
    out = current
    if body:
        out = c.patch(desired, MergeFrom(current))
    if status:
        out = c.status().patch(desired, MergeFrom(current))
    return out, _patch_result(body, status)


def _patches_needed(current: Any, desired: Any) -> tuple[bool, bool]:
    """create_or_patch's plan: (patch the object, patch its status)."""
    cur_d, des_d = objects.to_dict(current), objects.to_dict(desired)
    cur_status, des_status = cur_d.pop("status", None), des_d.pop("status", None)
    return cur_d != des_d, cur_status != des_status and des_status is not None


def _patch_result(body: bool, status: bool) -> OperationResult:
    if status:
        return OperationResult.UPDATED_STATUS if body else OperationResult.UPDATED_STATUS_ONLY
    return OperationResult.UPDATED if body else OperationResult.NONE


def _mutated(c: Client, obj: T, mutate: Callable[[T], T]) -> T | tuple[T, T]:
    """``mutate(obj)`` when the object does not exist (to be created), else (live, mutate(live))."""
    ns, name = _key_of(obj)
    try:
        current: T = c.get(type(obj), ns, name)
    except errors.NotFoundError:
        desired = mutate(obj)
        _check_key(obj, desired)
        return desired
    desired = mutate(current)
    _check_key(current, desired)
    return current, desired


def _check_key(before: Any, after: Any) -> None:
    if _key_of(before) != _key_of(after):
        raise ValueError("mutate must not change the object's name or namespace")


__all__ = [
    "JSON_PATCH", "AlreadyOwnedError", "Apply", "Client", "MergeFrom", "OperationResult", "Patch", "RawPatch",
    "StatusWriter", "StrategicMergeFrom", "add_finalizer", "contains_finalizer", "create_or_patch",
    "create_or_update", "remove_finalizer", "remove_owner_reference", "set_controller_reference", "set_owner_reference",
]
