"""What every handler shares: the ``Scope`` it works in and the rendering of objects in the
negotiated representation (JSON in the URL's version, a Table, PartialObjectMetadata)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from samplecontroller.apiserver import authentication, conversion, strategies, tables, tokens, warning
from samplecontroller.apiserver.admission import Admitter
from samplecontroller.apiserver.authorization.rbac import Authorizer
from samplecontroller.apiserver.core import Core
from samplecontroller.apiserver.crdconversion import Converter
from samplecontroller.apiserver.filters import json_response
from samplecontroller.apiserver.httpmessages import Request, Response
from samplecontroller.apiserver.negotiation import Accept
from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.storage import Store

__all__ = ["Scope", "columns", "render", "requester", "versioned", "warn"]


@dataclass
class Scope:
    """What the handlers work with (kube-apiserver's RequestScope): the storage layer, its store
    (for watches and revisions), the admission webhooks, the secret service account tokens are
    signed with, the interval of watch bookmarks, the authorizer (RBAC; None: no authorization)
    and the converter of custom resources (``crdconversion``; by default the admitter's, which
    converts for ``matchPolicy: Equivalent`` over the admission webhooks' client)."""

    core: Core
    store: Store
    admitter: Admitter
    signing_secret: str
    bookmark_interval: float
    authorizer: Authorizer | None = None
    api_audiences: tuple[str, ...] = (tokens.ISSUER,)
    converter: Converter = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.converter is None:
            self.converter = self.admitter.converter


def requester(scope: Scope, request: Request) -> dict[str, Any]:
    """Who sent ``request`` (``username``, ``uid``, ``groups``, ``extra``): the one place handlers
    read the authenticated identity, as the authentication and impersonation filters left it
    (``authentication.user_of``)."""
    return authentication.user_of(request).to_wire()


def warn(headers: dict[str, str], warnings: list[str]) -> None:
    """Add ``warnings`` as a Warning header (``warning.header_value``: at most 20; texts the
    apiserver's warning recorder refuses are dropped)."""
    value = warning.header_value(warnings)
    if value:
        headers["Warning"] = value


def columns(scope: Scope, res: Resource) -> list[tables.Column]:
    """The Table columns of ``res`` (its strategy's)."""
    crd = scope.core.crds.get(res.crd_name) if res.is_custom else None
    return strategies.for_resource(res).columns(res, crd)


def versioned(res: Resource, obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` (stored in any version) in ``res``'s version."""
    if obj.get("apiVersion") == res.group_version:
        return obj
    return {**conversion.from_storage(obj, res.version), "apiVersion": res.group_version}


def render(scope: Scope, res: Resource, obj: dict[str, Any], accept: Accept, code: int = 200,
           headers: dict[str, str] | None = None) -> Response:
    """The response with object ``obj`` of ``res`` (or a Status) as ``accept`` asks."""
    if obj.get("kind") == res.kind:
        obj = versioned(res, obj)
    if accept.kind == "table" and obj.get("kind") == res.kind:
        table = tables.to_table([obj], columns(scope, res), resource_version=str(
            (obj.get("metadata") or {}).get("resourceVersion", "")))
        table["apiVersion"] = f"meta.k8s.io/{accept.version}"
        return json_response(table, code, headers)
    if accept.kind == "partial" and obj.get("kind") == res.kind:
        return json_response({"kind": "PartialObjectMetadata", "apiVersion": f"meta.k8s.io/{accept.version}",
                              "metadata": obj.get("metadata") or {}}, code, headers)
    stored = _stored_bytes(scope, res, obj)
    if stored is not None:
        return Response(body=stored + b"\n", status=code, content_type="application/json", headers=headers)
    return json_response(obj, code, headers)


def _stored_bytes(scope: Scope, res: Resource, obj: dict[str, Any]) -> bytes | None:
    """The JSON the store already holds when ``obj`` is the stored object itself (a write's
    result or a get), so that it is not encoded a second time; else None."""
    meta = obj.get("metadata")
    if obj.get("kind") != res.kind or not isinstance(meta, dict):
        return None
    entry = scope.store.get(res.storage_key, str(meta.get("namespace") or ""), str(meta.get("name") or ""))
    return entry.raw if entry is not None and entry.obj is obj else None
