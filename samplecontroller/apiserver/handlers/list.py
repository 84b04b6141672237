"""The list handler: label and field selectors, resourceVersion semantics (NotOlderThan, Exact,
snapshots of older revisions, 410 once compacted, 504 for a revision not reached), limit and
continue tokens, and the list as JSON, Table or PartialObjectMetadataList."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Callable
from typing import Any

import msgspec

from samplecontroller.apimachinery import fields as fieldsel
from samplecontroller.apimachinery import labels as labelsel
from samplecontroller.apiserver import requestinfo as ri
from samplecontroller.apiserver import strategies, tables
from samplecontroller.apiserver.errors import APIError, bad_request, too_large_rv
from samplecontroller.apiserver.filters import json_response
from samplecontroller.apiserver.handlers import converting
from samplecontroller.apiserver.handlers.common import Scope, columns, versioned
from samplecontroller.apiserver.httpmessages import AnyResponse, Request, Response
from samplecontroller.apiserver.negotiation import Accept
from samplecontroller.apiserver.requestinfo import RequestInfo
from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.storage import Entry, Page

__all__ = ["list_", "matcher", "select", "select_converted", "wait_for_rev"]

_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


def matcher(scope: Scope, request: Request, res: Resource) -> Callable[[dict[str, Any]], bool] | None:
    q = request.query
    label_text, field_text = q.get("labelSelector", ""), q.get("fieldSelector", "")
    try:
        lsel = labelsel.parse(label_text) if label_text else None
    except ValueError as err:
        raise bad_request(f"unable to parse requirement: {err}") from None
    try:
        fsel = fieldsel.parse(field_text) if field_text else None
    except ValueError as err:
        raise bad_request(str(err)) from None
    if fsel is not None:
        crd = scope.core.crds.get(res.crd_name) if res.is_custom else None
        allowed = strategies.for_resource(res).selectable_fields(res, crd)
        for req in fsel.requirements:
            if req.field not in allowed:
                raise bad_request(f'field label not supported: {req.field}')
    if lsel is None and fsel is None:
        return None

    def match(obj: dict[str, Any]) -> bool:
        if lsel is not None and not lsel.matches((obj.get("metadata") or {}).get("labels") or {}):
            return False
        if fsel is not None:
            return fsel.matches(lambda path: _field_value(obj, path))
        return True
    return match


def select(scope: Scope, request: Request, res: Resource, ns: str | None) -> list[Entry]:
    match = matcher(scope, request, res)
    entries = [e for _, e in scope.core.list_entries(res, ns)]
    return entries if match is None else [e for e in entries if match(e.obj)]
async def select_converted(scope: Scope, request: Request, res: Resource, ns: str | None) -> list[Entry]:
    """As ``select``, the selectors seeing the objects in ``res``'s version when the CRD converts
    through a webhook (the entries are then the converted objects)."""
    if converting.webhook_crd(scope, res) is None:
        return select(scope, request, res, ns)
    match = matcher(scope, request, res)
    entries = [e for _, e in scope.core.list_entries(res, ns)]
    return entries if match is None else await _converted(scope, res, entries, match, 0)


# ------------------------------------------------------------------ list


async def list_(scope: Scope, request: Request, t: RequestInfo, accept: Accept) -> AnyResponse:
    res = t.res
    q = request.query
    rv, rvm, cont = q.get("resourceVersion", ""), q.get("resourceVersionMatch", ""), q.get("continue", "")
    limit = ri.int_param(q.get("limit", ""), "limit") or 0
    if rvm not in ("", "NotOlderThan", "Exact"):
        raise bad_request(f'resourceVersionMatch: Unsupported value: "{rvm}": supported values: "Exact", "NotOlderThan"')
    if rvm and not rv:
        raise bad_request("resourceVersionMatch is forbidden unless resourceVersion is provided")
    if rvm == "Exact" and rv == "0":
        raise bad_request('resourceVersionMatch "exact" is forbidden for resourceVersion "0"')
    if cont and rv not in ("", "0"):
        raise bad_request("specifying resource version is not allowed when using continue")
    if q.get("sendInitialEvents"):
        raise APIError(422, "Invalid", "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list")
    match = matcher(scope, request, res)
    ns = t.namespace if res.namespaced else None
    requested = ri.parse_rv(rv) if rv not in ("", "0") else None
    webhook = converting.webhook_crd(scope, res) is not None
    if limit and not webhook and (cont or requested is None or rvm == "NotOlderThan"):
        if cont:
            rev, start = _decode_continue(cont)
            after: tuple[str, str] | None = _continue_key(start)
            if rev == INCONSISTENT:
                rev = scope.core.rev
        else:
            if requested is not None and requested > scope.core.rev:
                await wait_for_rev(scope, requested)
            rev, start, after = scope.core.rev, "", None
        try:
            page = scope.core.seek(res, ns, rev, after)
        except APIError as err:
            raise _continue_expired(start) if cont and err.code == 410 else err from None
        return _page(scope, res, page, rev, limit, match, accept, request)
    start = ""
    rev = scope.core.rev
    if cont:
        rev, start = _decode_continue(cont)
        items = scope.core.snapshot(res, ns, rev)
    elif requested is not None and (rvm == "Exact" or (limit and not rvm)):
        if requested > scope.core.rev:
            raise too_large_rv(requested, scope.core.rev)
        rev = requested
        items = scope.core.snapshot(res, ns, rev)
    else:
        if requested is not None and requested > scope.core.rev:
            await wait_for_rev(scope, requested)
        rev = scope.core.rev
        items = scope.core.list_entries(res, ns)
    if start:  # the store's order: by (namespace, name) tuples, so compare tuples, not "ns/name"
        after_key = _continue_key(start)
        items = [kv for kv in items if kv[0] > after_key]
    if webhook:
        entries = await _converted(scope, res, [e for _, e in items], match, limit)
    else:
        entries = [e for _, e in items] if match is None else [e for _, e in items if match(e.obj)]
    next_token = ""
    remaining = 0
    if limit and len(entries) > limit:
        remaining = len(entries) - limit
        entries = entries[:limit]
        last = entries[-1].obj["metadata"]
        next_token = _encode_continue(rev, f"{last.get('namespace', '')}/{last['name']}")
    return _list_response(scope, res, entries, str(rev), next_token, remaining if match is None else 0, accept, request)


INCONSISTENT = -1
"""The revision of the continue token a 410 for a compacted one carries: the rest of the list at
the latest revision (kube-apiserver's inconsistent continuation)."""

_CONTINUE_EXPIRED = ("The provided continue parameter is too old to display a consistent list result. You can start a "
                     "new list without the continue parameter, or use the continue token in this response to retrieve "
                     "the remainder of the results. Continuing with the provided token results in an inconsistent "
                     "list - objects that were created, modified, or deleted between the time the first chunk was "
                     "returned and now may show up in the list.")


def _continue_expired(start: str) -> APIError:
    """kube-apiserver's 410 for a continue token whose revision is compacted: its Status carries
    a token that continues after the same key at the latest revision."""
    err = APIError(410, "Expired", _CONTINUE_EXPIRED)
    err.status["metadata"] = {"continue": _encode_continue(INCONSISTENT, start)}
    return err


def _continue_key(start: str) -> tuple[str, str]:
    """The store key a continue token's ``start`` ("namespace/name") names."""
    ns, _, name = start.partition("/")
    return ns, name


def _page(scope: Scope, res: Resource, page: Page, rev: int, limit: int,
          match: Callable[[dict[str, Any]], bool] | None, accept: Accept, request: Request) -> Response:
    """One page of a paginated list: the first ``limit`` objects of ``page`` that ``match``
    selects, and a continue token (the revision and the last key) when more may follow."""
    entries: list[Entry] = []
    last: tuple[str, str] | None = None
    more = False
    for key, entry in page:
        if match is not None and not match(entry.obj):
            continue
        if len(entries) == limit:
            more = True
            break
        entries.append(entry)
        last = key
    next_token = ""
    remaining = 0
    if more and last is not None:
        next_token = _encode_continue(rev, f"{last[0]}/{last[1]}")
        remaining = page.remaining_after(last) if match is None else 0
    return _list_response(scope, res, entries, str(rev), next_token, remaining, accept, request)


async def _converted(scope: Scope, res: Resource, entries: list[Entry], match: Callable[[dict[str, Any]], bool] | None,
                     limit: int) -> list[Entry]:
    """``entries`` converted to ``res``'s version by the CRD's conversion webhook, in one review,
    then selected (selectors see the converted objects, as kube-apiserver's). Without selectors
    only the page (and the item telling whether more follow) is converted; the others stay as
    stored, counted for ``remainingItemCount``."""
    todo = entries if match is not None or not limit else entries[:limit]
    objs = await converting.to_version(scope, res, [e.obj for e in todo], listed=True)
    converted = [e if obj is e.obj else Entry(e.rev, obj, _encode(obj)) for e, obj in zip(todo, objs, strict=True)]
    if match is not None:
        return [e for e in converted if match(e.obj)]
    return converted + entries[len(todo):]


async def wait_for_rev(scope: Scope, rev: int, timeout: float = 3.0) -> None:
    """Return once the server has reached ``rev``; after ``timeout`` s raise kube-apiserver's
    "Too large resource version" (504 Timeout, cause ResourceVersionTooLarge, retry after 1 s)."""
    deadline = time.monotonic() + timeout
    while scope.core.rev < rev:
        if time.monotonic() > deadline:
            raise too_large_rv(rev, scope.core.rev)
        await asyncio.sleep(0.05)


def _encode_continue(rev: int, start: str) -> str:
    raw = _encode({"v": "meta.k8s.io/v1", "rv": rev, "start": start})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[int, str]:
    try:
        padded = token + "=" * (-len(token) % 4)
        data = _decode(base64.urlsafe_b64decode(padded.encode()))
        return int(data["rv"]), str(data["start"])
    except (ValueError, KeyError, TypeError, msgspec.DecodeError):
        raise bad_request("continue key is not valid: invalid continue token") from None


def _list_response(scope: Scope, res: Resource, entries: list[Entry], rv: str, cont: str, remaining: int,
                   accept: Accept, request: Request) -> Response:
    if accept.kind == "table":
        table = tables.to_table([versioned(res, e.obj) for e in entries], columns(scope, res),
                                resource_version=rv, continue_=cont,
                                include_object=request.query.get("includeObject", "Metadata") or "Metadata")
        table["apiVersion"] = f"meta.k8s.io/{accept.version}"
        return json_response(table)
    meta: dict[str, Any] = {"resourceVersion": rv}
    if cont:
        meta["continue"] = cont
        if remaining:
            meta["remainingItemCount"] = remaining
    if accept.kind == "partial":
        return json_response({"kind": "PartialObjectMetadataList", "apiVersion": f"meta.k8s.io/{accept.version}",
                      "metadata": meta,
                      "items": [{"kind": "PartialObjectMetadata", "apiVersion": f"meta.k8s.io/{accept.version}",
                                 "metadata": e.obj.get("metadata") or {}} for e in entries]})
    gv = res.group_version
    head = _encode({"kind": res.the_list_kind, "apiVersion": gv, "metadata": meta})
    items = [e.raw if e.obj.get("apiVersion") == gv else _encode(versioned(res, e.obj)) for e in entries]
    body = head[:-1] + b',"items":[' + b",".join(items) + b"]}\n"
    return Response(body=body, content_type="application/json")


# Selectable fields whose Go value is a zero that JSON omits.
_FIELD_ZEROS = {"spec.unschedulable": "false", "status.successful": "0"}


def _field_value(obj: dict[str, Any], path: str) -> str | None:
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return _FIELD_ZEROS.get(path)
        cur = cur.get(part)
    if cur is None:
        return _FIELD_ZEROS.get(path)
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)
