"""The CRUD handlers: get, create, update, patch, delete and deletecollection of one resource
(and the scale, status, finalize and action subresources they route to), through admission
webhooks when any are registered."""

from __future__ import annotations

from typing import Any

from samplecontroller.apiserver import conversion, strategies, tokens
from samplecontroller.apiserver import requestinfo as ri
from samplecontroller.apiserver.admission import AdmissionRequest
from samplecontroller.apiserver.authentication import user_of
from samplecontroller.apiserver.authorization import escalation
from samplecontroller.apiserver.errors import APIError, bad_request, not_allowed, not_found
from samplecontroller.apiserver.filters import json_response
from samplecontroller.apiserver.handlers import actions, converting, reviews, scale, subresources
from samplecontroller.apiserver.handlers import list as list_
from samplecontroller.apiserver.handlers.admitting import admit_create, admit_update, admitted_patch
from samplecontroller.apiserver.handlers.common import Scope, requester, warn
from samplecontroller.apiserver.handlers.converting import respond
from samplecontroller.apiserver.handlers.preflight import preflight
from samplecontroller.apiserver.httpmessages import AnyResponse, Request
from samplecontroller.apiserver.negotiation import (
    PATCH_APPLY,
    PATCH_JSON,
    PATCH_MERGE,
    PATCH_STRATEGIC,
    Accept,
    decode_body,
    parse_bool,
)
from samplecontroller.apiserver.objects import copy_json, name_of
from samplecontroller.apiserver.requestinfo import RequestInfo

__all__ = ["create", "delete", "delete_collection", "delete_options", "get", "patch", "update"]


async def get(scope: Scope, request: Request, t: RequestInfo, accept: Accept) -> AnyResponse:
    res, ns, name = t.res, t.namespace or "", t.name
    if request.query.get("resourceVersion"):
        ri.parse_rv(request.query["resourceVersion"])
    if t.subresource == "scale":
        if converting.webhook_crd(scope, res) is not None:
            return json_response(await converting.scale(scope, res, ns, name))
        return json_response(scale.get_scale(scope.core, res, ns, name))
    return await respond(scope, res, scope.core.get(res, ns, name), accept)


def _stored_as(scope: Scope, t: RequestInfo) -> RequestInfo:
    """``t`` with the resource its objects are stored as (``conversion``), usually ``t``."""
    version = conversion.storage_version(t.res.group, t.res.version, t.res.kind)
    stored = scope.core.mapper.get(t.res.group, version, t.res.plural) if version else None
    return t._replace(res=stored) if stored is not None else t

async def create(scope: Scope, request: Request, t: RequestInfo, accept: Accept) -> AnyResponse:
    served, t = t.res, _stored_as(scope, t)
    res, ns = t.res, t.namespace or ""
    if t.namespace is None and res.namespaced:
        raise not_allowed()
    ri.check_write_options(request)
    raw = await ri.read_body(request)
    body = conversion.to_storage(decode_body(raw, request.headers.get("Content-Type", "")))
    strategy = strategies.for_resource(res)
    action = strategy.create_action
    if t.subresource or action == "bind":
        return json_response(actions.create(scope.core, res, ns, t.name, t.subresource, body, manager=ri.field_manager(request),
                                    dry_run=ri.dry_run(request),
                                             signer=tokens.signer(scope.signing_secret, scope.api_audiences)), 201)
    if action == "review":
        return json_response(reviews.answer(scope, request, res, ns, body), 201)
    escalation.check(scope.authorizer, user_of(request), res, ns, body)
    admission = None
    if scope.admitter.active():
        admission = AdmissionRequest(res, "CREATE", ns, name_of(body), body, dry_run=ri.dry_run(request),
                                     user_info=user_of(request).to_wire())
        body = await admit_create(scope, request, admission)
    if strategy.records_requester and isinstance(body, dict):
        strategy.set_requester(body, requester(scope, request))
    reused = converting.webhook_crd(scope, res) is not None  # prepared more than once
    manager, validation = ri.field_manager(request), ri.field_validation(request)
    if not reused:
        await preflight(scope, len(raw), lambda: scope.core.create(res, ns, copy_json(body), manager=manager,
                                                                   dry_run=True, field_validation=validation))

    def prepare(_old: dict[str, Any] | None, dry_run: bool) -> tuple[dict[str, Any], bool, list[str]]:
        obj, warnings = scope.core.create(res, ns, copy_json(body) if reused else body, manager=manager,
                                          dry_run=dry_run, field_validation=validation)
        return obj, True, warnings
    obj, _, warnings = await converting.write(scope, res, ns, "", prepare, ri.dry_run(request))
    headers: dict[str, str] = {}
    warn(headers, warnings + (admission.warnings if admission else []))
    return await respond(scope, served, obj, accept, 201, headers)


async def update(scope: Scope, request: Request, t: RequestInfo, accept: Accept) -> AnyResponse:
    served, t = t.res, _stored_as(scope, t)
    res, ns, name = t.res, t.namespace or "", t.name
    ri.check_write_options(request)
    raw = await ri.read_body(request)
    body = conversion.to_storage(decode_body(raw, request.headers.get("Content-Type", "")))
    if t.subresource == "scale":
        if converting.webhook_crd(scope, res) is not None:
            return json_response(await converting.scale(scope, res, ns, name, body=body, manager=ri.field_manager(request),
                                                        dry_run=ri.dry_run(request)))
        return json_response(scale.set_scale(scope.core, res, ns, name, body, manager=ri.field_manager(request),
                                         dry_run=ri.dry_run(request)))
    if t.subresource == "finalize":
        return subresources.finalize(scope, res, name, body)
    if escalation.guards(res):
        current_entry = scope.core.get_entry(res, ns, name)
        escalation.check(scope.authorizer, user_of(request), res, ns, body,
                         current_entry.obj if current_entry else None)
    admission = None
    if scope.admitter.active():
        current = scope.core.get_entry(res, ns, name)
        old_view = await converting.stored_view(scope, res, current)
        old = old_view if old_view is not None else (current.obj if current else None)
        admission = AdmissionRequest(res, "UPDATE" if current else "CREATE", ns, name, body, old,
                                     t.subresource, ri.dry_run(request), user_info=user_of(request).to_wire())
        body = await admit_update(scope, request, admission, old_view)
    reused = converting.webhook_crd(scope, res) is not None  # prepared more than once
    manager, validation = ri.field_manager(request), ri.field_validation(request)
    if not reused:
        await preflight(scope, len(raw), lambda: scope.core.update(res, ns, name, copy_json(body), subresource=t.subresource,
                                                                   manager=manager, dry_run=True,
                                                                   field_validation=validation))

    def prepare(old: dict[str, Any] | None, dry_run: bool) -> tuple[dict[str, Any], bool, list[str]]:
        return scope.core.update(res, ns, name, copy_json(body) if reused else body, subresource=t.subresource,
                                 manager=manager, dry_run=dry_run, field_validation=validation, old_view=old)
    obj, created, warnings = await converting.write(scope, res, ns, name, prepare, ri.dry_run(request))
    headers: dict[str, str] = {}
    warn(headers, warnings + (admission.warnings if admission else []))
    return await respond(scope, served, obj, accept, 201 if created else 200, headers)


async def patch(scope: Scope, request: Request, t: RequestInfo, accept: Accept) -> AnyResponse:
    served, t = t.res, _stored_as(scope, t)
    res, ns, name = t.res, t.namespace or "", t.name
    view = served if served is not res else None  # objects stored in another version (conversion)
    ctype = request.headers.get("Content-Type", "").split(";")[0].strip().lower()
    if ctype not in (PATCH_JSON, PATCH_MERGE, PATCH_STRATEGIC, PATCH_APPLY):
        raise APIError(415, "UnsupportedMediaType",
                       f"the body of the request was in an unknown format - accepted media types include: "
                       f"{PATCH_JSON}, {PATCH_MERGE}, {PATCH_APPLY}"
                       + ("" if res.is_custom else f", {PATCH_STRATEGIC}"))
    ri.check_write_options(request, ctype)
    raw = await ri.read_body(request)
    force = parse_bool(request.query["force"], "force") if "force" in request.query else False
    if t.subresource == "scale":
        if converting.webhook_crd(scope, res) is not None:
            return json_response(await converting.scale(scope, res, ns, name, patch=(ctype, raw),
                                                        manager=ri.field_manager(request), dry_run=ri.dry_run(request)))
        return json_response(scale.patch_scale(scope.core, res, ns, name, ctype, raw, manager=ri.field_manager(request),
                                           dry_run=ri.dry_run(request)))
    manager = request.query.get("fieldManager", "") if ctype == PATCH_APPLY else ri.field_manager(request)
    if escalation.guards(res) and not user_of(request).is_master:
        current_entry = scope.core.get_entry(res, ns, name)
        patched, _, _ = scope.core.patch(res, ns, name, ctype, raw, subresource=t.subresource, manager=manager,
                                         dry_run=True, force=force, field_validation="Ignore", served=view)
        escalation.check(scope.authorizer, user_of(request), res, ns, patched,
                         current_entry.obj if current_entry else None)
    if scope.admitter.active():
        obj, created, warnings = await admitted_patch(scope, request, t, ctype, raw, manager, force, view)
    else:
        validation = ri.field_validation(request)
        if converting.webhook_crd(scope, res) is None:
            await preflight(scope, len(raw), lambda: scope.core.patch(res, ns, name, ctype, raw, subresource=t.subresource,
                                                                      manager=manager, dry_run=True, force=force,
                                                                      field_validation=validation, served=view))

        def prepare(old: dict[str, Any] | None, dry_run: bool) -> tuple[dict[str, Any], bool, list[str]]:
            return scope.core.patch(res, ns, name, ctype, raw, subresource=t.subresource, manager=manager,
                                    dry_run=dry_run, force=force, field_validation=validation,
                                    served=view, old_view=old)
        obj, created, warnings = await converting.write(scope, res, ns, name, prepare, ri.dry_run(request))
    headers: dict[str, str] = {}
    warn(headers, warnings)
    return await respond(scope, served, obj, accept, 201 if created else 200, headers)


async def delete(scope: Scope, request: Request, t: RequestInfo, accept: Accept) -> AnyResponse:
    res, ns, name = t.res, t.namespace or "", t.name
    options = await delete_options(request)
    dry_run = ri.dry_run(request) or bool(options.get("dryRun"))
    # the object is read in the request's version first, as kube's store reads it through its
    # codec: a conversion webhook that fails makes the delete a 500 that deletes nothing
    current = scope.core.get_entry(res, ns, name)
    old_view = await converting.stored_view(scope, res, current)
    if scope.admitter.active():
        if current is None:
            raise not_found(res, name)
        admission = AdmissionRequest(res, "DELETE", ns, name, None, old_view if old_view is not None else current.obj,
                                     dry_run=dry_run, user_info=user_of(request).to_wire())
        await scope.admitter.mutate(admission)
        await scope.admitter.validate(admission)
    code, obj = scope.core.delete(res, ns, name, options, dry_run=dry_run)
    return await respond(scope, res, obj, accept, code)


async def delete_collection(scope: Scope, request: Request, t: RequestInfo, accept: Accept) -> AnyResponse:
    options = await delete_options(request)
    entries = await list_.select_converted(scope, request, t.res, t.namespace)
    if converting.webhook_crd(scope, t.res) is not None:
        # kube lists through its codec before deleting: a conversion that fails deletes nothing
        await converting.to_version(scope, t.res, [e.obj for e in entries], listed=True)
    scope.core.delete_collection(t.res, t.namespace, [name_of(e.obj) for e in entries],
                                options, dry_run=ri.dry_run(request))
    return json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"})

async def delete_options(request: Request) -> dict[str, Any]:
    raw = await ri.read_body(request) if request.can_read_body else b""
    options: dict[str, Any] = {}
    if raw.strip():
        body = decode_body(raw, request.headers.get("Content-Type", ""))
        if body is not None and not isinstance(body, dict):
            raise bad_request("DeleteOptions must be a JSON object")
        options = dict(body or {})
    q = request.query
    if "propagationPolicy" in q:
        options["propagationPolicy"] = q["propagationPolicy"]
    if "orphanDependents" in q:
        options["orphanDependents"] = parse_bool(q["orphanDependents"], "orphanDependents")
    if "gracePeriodSeconds" in q:
        try:
            options["gracePeriodSeconds"] = int(q["gracePeriodSeconds"])
        except ValueError:
            raise bad_request("gracePeriodSeconds must be an integer") from None
    if options.get("dryRun") not in (None, [], ["All"]):
        raise bad_request('dryRun: supported values: "All"')
    return options
