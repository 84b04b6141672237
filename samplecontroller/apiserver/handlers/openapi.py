"""OpenAPI serving: ``/openapi/v3`` (the index with each group/version's hash), ``/openapi/v3/...``
(one group/version's document: the built-in kinds' from the upstream schemas, the CRDs' from
their structural schemas), ``/openapi/v2`` (swagger 2.0, JSON or gnostic protobuf). Documents
are cached until the served resources change (``invalidate``)."""

from __future__ import annotations

import logging
from typing import Any

import msgspec

from samplecontroller.apiserver import openapi, protobuf
from samplecontroller.apiserver.core import Core
from samplecontroller.apiserver.errors import not_found_path
from samplecontroller.apiserver.filters import json_response
from samplecontroller.apiserver.httpmessages import Response

__all__ = ["OpenAPIHandler"]

log = logging.getLogger(__name__)
_encode = msgspec.json.Encoder().encode


class OpenAPIHandler:
    """The OpenAPI documents of what ``core``'s REST mapper serves."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.mapper = core.mapper
        self._cache: dict[str, dict[str, Any]] = {}
        self._v2_cache: dict[str, bytes] = {}
        self._hashes: dict[str, str] = {}

    def invalidate(self) -> None:
        """Drop the cached documents (the served resources changed)."""
        self._cache.clear()
        self._v2_cache.clear()
        self._hashes.clear()

    def _group_versions(self) -> list[str]:
        out = []
        for res in self.mapper:
            if res.group_version not in out:
                out.append(res.group_version)
        return out

    def _openapi_for(self, gv: str) -> dict[str, Any] | None:
        doc = self._cache.get(gv)
        if doc is not None:
            return doc
        group, _, version = gv.rpartition("/")
        resources = self.mapper.in_group_version(group, version)
        if not resources:
            return None
        custom = [r for r in resources if r.is_custom]
        builtin = [r for r in resources if not r.is_custom]
        docs: list[dict[str, Any]] = []
        if builtin:
            kinds = [{"kind": r.kind, "plural": r.plural, "namespaced": r.namespaced,
                      "subresources": [s for s in r.subresources if s in ("status", "scale")]} for r in builtin]
            docs.append(openapi.builtin_document(group, version, kinds))
        for res in custom:
            crd = self.core.crds.get(res.crd_name)
            if crd is not None:
                try:
                    docs.append(openapi.crd_document(crd, version))
                except (KeyError, TypeError, ValueError, AttributeError):
                    log.debug("no OpenAPI for %s", res.crd_name, exc_info=True)
        if not docs:
            return None
        merged = docs[0] if len(docs) == 1 else self._merge_docs(docs)
        self._cache[gv] = merged
        return merged

    @staticmethod
    def _merge_docs(docs: list[dict[str, Any]]) -> dict[str, Any]:
        out = {**docs[0], "paths": dict(docs[0].get("paths") or {}),
               "components": {"schemas": dict((docs[0].get("components") or {}).get("schemas") or {})}}
        for doc in docs[1:]:
            out["paths"].update(doc.get("paths") or {})
            out["components"]["schemas"].update((doc.get("components") or {}).get("schemas") or {})
        return out

    def index(self) -> Response:
        hashes = {}
        gvs = []
        for gv in self._group_versions():
            doc = self._openapi_for(gv)
            if doc is not None:
                gvs.append(gv)
                digest = self._hashes.get(gv)
                if digest is None:
                    digest = self._hashes[gv] = openapi.document_hash(doc)
                hashes[gv] = digest
        return json_response(openapi.build_index(gvs, hashes))

    def v2(self, accept: str) -> Response:
        """The swagger 2.0 document of every served group/version: gnostic protobuf when the
        client asks for it (client-go's ``OpenAPISchema``), JSON otherwise."""
        pb = "proto-openapi.spec.v2" in accept
        key = "pb" if pb else "json"
        body = self._v2_cache.get(key)
        if body is None:
            docs = [d for d in (self._openapi_for(gv) for gv in self._group_versions()) if d is not None]
            doc = openapi.v2_document(docs)
            body = protobuf.encode_openapi_v2(doc) if pb else _encode(doc)
            self._v2_cache[key] = body
        ctype = protobuf.OPENAPI_V2_PROTOBUF if pb else "application/json"
        return Response(body=body, headers={"Content-Type": ctype, "Cache-Control": "no-cache, private"})

    def v3(self, parts: list[str]) -> Response:
        if parts[0] == "api" and len(parts) == 2:
            gv = parts[1]
        elif parts[0] == "apis" and len(parts) == 3:
            gv = f"{parts[1]}/{parts[2]}"
        else:
            raise not_found_path()
        doc = self._openapi_for(gv)
        if doc is None:
            raise not_found_path()
        return json_response(doc, headers={"Cache-Control": "public, immutable"})
