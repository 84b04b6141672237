"""Discovery: ``/api``, ``/apis``, ``/apis/<group>``, ``/api/v1`` and ``/apis/<group>/<version>``
(APIVersions, APIGroupList, APIGroup, APIResourceList) and the aggregated discovery documents
(apidiscovery.k8s.io v2 and v2beta1), all from the REST mapper. Aggregated documents are cached
until the mapper changes (``invalidate``)."""

from __future__ import annotations

from typing import Any

import msgspec

from samplecontroller.apiserver.errors import not_found_path
from samplecontroller.apiserver.filters import json_response
from samplecontroller.apiserver.httpmessages import Response
from samplecontroller.apiserver.negotiation import Accept
from samplecontroller.apiserver.restmapper import Resource, RESTMapper

__all__ = ["AGG_V2", "AGG_V2BETA1", "Discovery"]

_encode = msgspec.json.Encoder().encode

AGG_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
AGG_V2BETA1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
_SUB_VERBS: dict[str, list[str]] = {
    "finalize": ["update"], "log": ["get"], "exec": ["create", "get"], "attach": ["create", "get"],
    "portforward": ["create", "get"],
}


class Discovery:
    """The discovery documents of ``mapper`` (see the module docstring)."""

    def __init__(self, mapper: RESTMapper) -> None:
        self.mapper = mapper
        self._cache: dict[str, bytes] = {}

    def invalidate(self) -> None:
        """Drop the cached documents (the served resources changed)."""
        self._cache.clear()

    def root(self, which: str, accept: Accept) -> Response:
        """``/api`` or ``/apis`` (``which``): APIVersions/APIGroupList, or the aggregated discovery document."""
        if accept.kind in ("agg-v2", "agg-v2beta1"):
            key = f"{which}:{accept.kind}"
            body = self._cache.get(key)
            if body is None:
                body = _encode(self._aggregated(which, accept.version)) + b"\n"
                self._cache[key] = body
            ctype = AGG_V2 if accept.kind == "agg-v2" else AGG_V2BETA1
            return Response(body=body, headers={"Content-Type": ctype})
        if which == "api":
            return json_response({"kind": "APIVersions", "versions": ["v1"],
                          "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}]})
        groups = [self._group_doc(g) for g in self.mapper.groups() if g]
        return json_response({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})

    def _group_doc(self, group: str) -> dict[str, Any]:
        versions = self.mapper.versions(group)
        entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {"name": group, "versions": entries, "preferredVersion": entries[0] if entries else {}}

    def group(self, group: str) -> Response:
        if group not in self.mapper.groups() or not group:
            raise not_found_path()
        return json_response({"kind": "APIGroup", "apiVersion": "v1", **self._group_doc(group)})

    def group_version(self, group: str, version: str) -> Response:
        resources = self.mapper.in_group_version(group, version)
        if not resources:
            raise not_found_path()
        out: list[dict[str, Any]] = []
        for res in resources:
            entry: dict[str, Any] = {"name": res.plural, "singularName": res.the_singular, "namespaced": res.namespaced,
                                     "kind": res.kind, "verbs": list(res.verbs)}
            if res.short_names:
                entry["shortNames"] = list(res.short_names)
            if res.categories:
                entry["categories"] = list(res.categories)
            out.append(entry)
            for sub in res.subresources:
                kind, verbs = _subresource_kind(res, sub)
                sub_entry: dict[str, Any] = {"name": f"{res.plural}/{sub}", "singularName": "",
                                             "namespaced": res.namespaced, "kind": kind["kind"], "verbs": verbs}
                if kind["group"] != res.group or kind["version"] != res.version:
                    sub_entry.update(group=kind["group"], version=kind["version"])
                out.append(sub_entry)
        gv = f"{group}/{version}" if group else version
        return json_response({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": out})

    def _aggregated(self, which: str, version: str) -> dict[str, Any]:
        groups = [""] if which == "api" else [g for g in self.mapper.groups() if g]
        items = []
        for group in groups:
            versions = []
            for ver in self.mapper.versions(group):
                resources = []
                for res in self.mapper.in_group_version(group, ver):
                    doc: dict[str, Any] = {
                        "resource": res.plural,
                        "responseKind": {"group": group, "version": ver, "kind": res.kind},
                        "scope": "Namespaced" if res.namespaced else "Cluster",
                        "singularResource": res.the_singular,
                        "verbs": list(res.verbs),
                    }
                    if res.short_names:
                        doc["shortNames"] = list(res.short_names)
                    if res.categories:
                        doc["categories"] = list(res.categories)
                    subs = []
                    for sub in res.subresources:
                        kind, verbs = _subresource_kind(res, sub)
                        subs.append({"subresource": sub, "responseKind": kind, "verbs": verbs})
                    if subs:
                        doc["subresources"] = subs
                    resources.append(doc)
                versions.append({"version": ver, "resources": resources, "freshness": "Current"})
            meta: dict[str, Any] = {"creationTimestamp": None}
            if group:
                meta["name"] = group
            items.append({"metadata": meta, "versions": versions})
        return {"kind": "APIGroupDiscoveryList", "apiVersion": f"apidiscovery.k8s.io/{version}", "metadata": {},
                "items": items}


def _subresource_kind(res: Resource, sub: str) -> tuple[dict[str, str], list[str]]:
    """The response kind and verbs of subresource ``sub`` of ``res`` in discovery."""
    if sub == "scale":
        return {"group": "autoscaling", "version": "v1", "kind": "Scale"}, ["get", "patch", "update"]
    if sub == "token":
        return {"group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest"}, ["create"]
    if sub == "binding":
        return {"group": "", "version": "v1", "kind": "Binding"}, ["create"]
    if sub == "eviction":
        return {"group": "policy", "version": "v1", "kind": "Eviction"}, ["create"]
    kind = {"group": res.group, "version": res.version, "kind": res.kind}
    return kind, _SUB_VERBS.get(sub, ["get", "patch", "update"])
