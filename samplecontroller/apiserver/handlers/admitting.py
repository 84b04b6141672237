"""Admission webhooks around the storage layer: mutating webhooks on the request, then
validating webhooks on the object as it would be stored (found with a dry run through ``Core``)."""

from __future__ import annotations

from typing import Any

from samplecontroller.apiserver import requestinfo as ri
from samplecontroller.apiserver import schema
from samplecontroller.apiserver.admission import AdmissionRequest
from samplecontroller.apiserver.authentication import user_of
from samplecontroller.apiserver.errors import APIError, invalid
from samplecontroller.apiserver.handlers import converting
from samplecontroller.apiserver.handlers.common import Scope, versioned
from samplecontroller.apiserver.httpmessages import Request
from samplecontroller.apiserver.objects import copy_json, name_of
from samplecontroller.apiserver.requestinfo import RequestInfo
from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.storage import Entry

__all__ = ["admit_create", "admit_update", "admitted_patch"]


def _name_in(obj: Any) -> Any:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    return meta.get("name") if isinstance(meta, dict) else None


def _check_renamed(admission: AdmissionRequest, sent: Any, mutated: Any) -> None:
    """A mutating webhook that renamed an existing object (``sent``: the object before the
    webhooks): kube's ValidateObjectMetaUpdate answers 422 ``metadata.name: field is
    immutable``. A request whose own body names another object is left to the storage layer's
    400 (kube checks the body against the URL before admission)."""
    if admission.operation != "UPDATE" or _name_in(sent) not in (None, "", admission.name):
        return
    renamed = _name_in(mutated)
    if renamed not in (None, "", admission.name):
        raise invalid(admission.res, str(renamed), [schema.invalid("metadata.name", renamed, "field is immutable")])


def _rv(entry: Entry | None) -> str:
    return str(entry.obj["metadata"].get("resourceVersion", "")) if entry is not None else ""


async def admit_create(scope: Scope, request: Request, admission: AdmissionRequest) -> Any:
    """Mutating webhooks on the request body, then validating webhooks on the object as it
    would be stored (a dry run); returns the body to create."""
    body = await scope.admitter.mutate(admission)
    res, ns = admission.res, admission.namespace
    prepared, _ = scope.core.create(res, ns, copy_json(body), manager=ri.field_manager(request), dry_run=True,
                                   field_validation=ri.field_validation(request))
    admission.obj, admission.name = versioned(res, prepared), name_of(prepared)
    await scope.admitter.validate(admission)
    if isinstance(body, dict) and admission.name:
        body.setdefault("metadata", {})["name"] = admission.name
    return body


async def admit_update(scope: Scope, request: Request, admission: AdmissionRequest,
                       old_view: dict[str, Any] | None = None) -> Any:
    """As ``admit_create`` for a replace (PUT); returns the body to store. ``old_view``: the
    stored object converted to the request's version (``converting.stored_view``)."""
    sent = admission.obj
    body = await scope.admitter.mutate(admission)
    _check_renamed(admission, sent, body)
    prepared, _, _ = scope.core.update(admission.res, admission.namespace, admission.name, copy_json(body),
                                      subresource=admission.subresource, manager=ri.field_manager(request),
                                      dry_run=True, field_validation=ri.field_validation(request),
                                      old_view=old_view)
    admission.obj = versioned(admission.res, prepared)
    await scope.admitter.validate(admission)
    return body


async def admitted_patch(scope: Scope, request: Request, t: RequestInfo, ctype: str, raw: bytes, manager: str,
                          force: bool, served: Resource | None = None) -> tuple[dict[str, Any], bool, list[str]]:
    """A patch through admission: patch in a dry run, call the webhooks on the result, then
    store exactly the admitted object (guarded by the resourceVersion the patch was applied
    to; a write in between starts over, as the API server retries a patch on conflict).
    ``served``: as for ``Core.patch`` (the URL's version when objects are stored in another).
    Under a CRD's conversion webhook the stored object is converted to the request's version
    first and the admitted object converted back to be stored (``converting``)."""
    res, ns, name = t.res, t.namespace or "", t.name
    dry_run, validation = ri.dry_run(request), ri.field_validation(request)
    converted = converting.webhook_crd(scope, res) is not None
    for _ in range(5):
        current = scope.core.get_entry(res, ns, name)
        old_view = await converting.stored_view(scope, res, current)
        old = old_view if old_view is not None else (current.obj if current else None)
        patched, created, warnings = scope.core.patch(res, ns, name, ctype, raw, subresource=t.subresource,
                                                     manager=manager, dry_run=True, force=force,
                                                     field_validation=validation, served=served,
                                                     old_view=old_view)
        # the core answers a custom resource in its CRD's storage version; it goes back into the
        # core, and to policies and webhooks, as a request of ``res``
        patched = versioned(res, patched)
        admission = AdmissionRequest(res, "CREATE" if created else "UPDATE", ns, name, patched, old,
                                     t.subresource, dry_run, user_info=user_of(request).to_wire())
        mutated = await scope.admitter.mutate(admission)
        _check_renamed(admission, patched, mutated)
        if mutated != patched:
            patched, _, _ = scope.core.update(res, ns, name, copy_json(mutated), subresource=t.subresource,
                                             manager=manager, dry_run=True, field_validation=validation,
                                             managed_done=True, allow_create=created, old_view=old_view)
            patched = versioned(res, patched)
            admission.obj = patched
        await scope.admitter.validate(admission)
        warnings += admission.warnings
        latest = scope.core.get_entry(res, ns, name)
        if _rv(latest) != _rv(current):
            continue
        if converted:
            try:
                return await converting.store(scope, res, patched, None if created else current, dry_run), \
                    created, warnings
            except APIError as err:
                if err.code == 409 and err.status.get("reason") == "Conflict":
                    continue
                raise
        if dry_run:
            return patched, created, warnings
        if created:
            obj, _ = scope.core.create(res, ns, patched, manager=manager, field_validation="Ignore",
                                      managed_done=True)
            return obj, True, warnings
        patched.setdefault("metadata", {})["resourceVersion"] = _rv(current)
        obj, _, _ = scope.core.update(res, ns, name, patched, subresource=t.subresource, manager=manager,
                                     field_validation="Ignore", managed_done=True)
        return obj, False, warnings
    raise APIError(409, "Conflict", f"Operation cannot be fulfilled on {res.group_resource} \"{name}\": "
                   "the object kept changing while admission webhooks were called; please retry")
