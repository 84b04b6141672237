"""The HTTP face of the embedded API server (aiohttp): routing, content negotiation,
discovery, OpenAPI, lists, watches, Tables and Status errors.

Contracts:
- Every response to an API request is JSON; every error is a ``Status`` object with the right
  code and reason. Client input never produces a 500 (an unexpected exception is logged and
  answered with a 500 InternalError Status, which is a bug).
- Bearer-token authentication for everything except ``/version``, ``/healthz``, ``/livez``,
  ``/readyz`` (public in Kubernetes' default RBAC): a missing or wrong token gets 401.
- Watches are chunked streams of newline-delimited ``{"type","object"}`` events. ``timeoutSeconds``
  ends them; ``allowWatchBookmarks`` adds periodic BOOKMARKs; ``sendInitialEvents`` sends the
  current objects then a BOOKMARK annotated ``k8s.io/initial-events-end``; a compacted
  resourceVersion gets an ERROR event with a 410 Expired Status, one the server has not reached
  within 3 s an ERROR event with a 504 "Too large resource version" Status (as kube-apiserver's
  watch cache; the reflector then re-lists).
- Nothing is acknowledged before it is committed: the outermost middleware holds every response
  until the writes made so far are durable (``Store.durable``, one group commit per loop turn);
  a failed commit turns the response into a 500. Watch events are sent once committed.
- ``requests`` records ``RequestRecord``s only if ``record_requests`` (the maximum kept, oldest
  dropped first) is above 0.
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import logging
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

import msgspec
from aiohttp import web

from samplecontroller.apimachinery import fields as fieldsel
from samplecontroller.apimachinery import labels as labelsel
from samplecontroller.apiserver import (
    actions,
    bodies,
    builtins,
    conversion,
    openapi,
    protobuf,
    tables,
    tokens,
    transport,
)
from samplecontroller.apiserver.admission import USER_INFO, AdmissionRequest, Admitter
from samplecontroller.apiserver.core import (
    PATCH_APPLY,
    PATCH_JSON,
    PATCH_MERGE,
    PATCH_STRATEGIC,
    APIError,
    Core,
    bad_request,
    decode_body,
    not_found,
)
from samplecontroller.apiserver.metrics import RequestCounter
from samplecontroller.apiserver.restmapper import Resource, RESTMapper
from samplecontroller.apiserver.storage import Entry, Event, Expired, Store

__all__ = ["APIServerApp", "RequestRecord"]

log = logging.getLogger(__name__)
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode

AGG_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
AGG_V2BETA1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
PUBLIC_PATHS = {"/version", "/version/", "/healthz", "/livez", "/readyz"}
_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}
_BASE_FIELDS = {"metadata.name", "metadata.namespace"}
_EXTRA_FIELDS: dict[str, set[str]] = {
    "/events": {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
                "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
                "reason", "reportingComponent", "source", "type"},
    "events.k8s.io/events": {"regarding.kind", "regarding.namespace", "regarding.name", "regarding.uid",
                             "regarding.apiVersion", "regarding.resourceVersion", "regarding.fieldPath",
                             "reason", "reportingController", "type"},
    "/pods": {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
              "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"},
    "/secrets": {"type"},
    "/namespaces": {"status.phase"},
    "apps/replicasets": {"status.replicas"},
    "/replicationcontrollers": {"status.replicas"},
    "/nodes": {"spec.unschedulable"},
    "batch/jobs": {"status.successful"},
    "certificates.k8s.io/certificatesigningrequests": {"spec.signerName"},
}
_CONNECT = ("log", "exec", "attach", "portforward")
"""Pod subresources served by the kubelet in a real cluster (connect verbs)."""
_SUB_VERBS: dict[str, list[str]] = {
    "finalize": ["update"], "log": ["get"], "exec": ["create", "get"], "attach": ["create", "get"],
    "portforward": ["create", "get"],
}
VERSION_INFO = {
    "major": "1", "minor": "32", "gitVersion": "v1.32.0", "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean", "buildDate": "2024-12-11T00:00:00Z", "goVersion": "go1.23.3", "compiler": "gc",
    "platform": "linux/amd64",
}


class RequestRecord(NamedTuple):
    """One logged API request: the client's User-Agent, the Kubernetes verb and the resource.

    ``resource`` is ``<group>/<plural>[/<subresource>]`` (``/pods`` for core, ``apps/deployments``),
    or the URL path for non-resource requests (verb = lower-case HTTP method).
    """

    user_agent: str
    verb: str
    resource: str


def parse_bool(value: str, name: str) -> bool:
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise bad_request(f'invalid boolean value "{value}" for query parameter {name}')


def _json(obj: Any, code: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(body=_encode(obj), status=code, content_type="application/json", headers=headers)


def _error(err: APIError) -> web.Response:
    return _json(err.status, err.code)


class Accept(NamedTuple):
    kind: str  # "json", "table", "partial", "agg-v2", "agg-v2beta1", "none"
    version: str = "v1"


def parse_accept(header: str) -> Accept:
    """The first representation we can serve from an Accept header."""
    if not header:
        return Accept("json")
    saw_unsupported = False
    for part in header.split(","):
        items = [p.strip() for p in part.split(";")]
        media = items[0].lower()
        params = {}
        for item in items[1:]:
            key, _, value = item.partition("=")
            params[key.strip()] = value.strip()
        if media not in ("application/json", "*/*", "application/*", "application/yaml"):
            saw_unsupported = True
            continue
        as_ = params.get("as")
        if as_ is None:
            return Accept("json")
        g, v = params.get("g"), params.get("v")
        if as_ == "Table" and g == "meta.k8s.io" and v in ("v1", "v1beta1"):
            return Accept("table", v)
        if as_ in ("PartialObjectMetadata", "PartialObjectMetadataList") and g == "meta.k8s.io" and v in ("v1", "v1beta1"):
            return Accept("partial", v)
        if as_ == "APIGroupDiscoveryList" and g == "apidiscovery.k8s.io" and v in ("v2", "v2beta1"):
            return Accept("agg-" + v, v)
        saw_unsupported = True
    return Accept("none") if saw_unsupported else Accept("json")


class Target(NamedTuple):
    res: Resource
    namespace: str | None  # None: all namespaces (or cluster-scoped)
    name: str
    subresource: str


class APIServerApp:
    """The aiohttp application over a ``Core`` (see the module docstring)."""

    def __init__(self, store: Store, mapper: RESTMapper, core: Core, token: str | None,
                 bookmark_interval: float = 5.0, record_requests: int = 0) -> None:
        self.store = store
        self.mapper = mapper
        self.core = core
        self.admitter = Admitter(store)
        self.token = token
        self._signing_secret = token if token is not None else secrets.token_urlsafe(32)
        self.bookmark_interval = bookmark_interval
        self.requests: deque[RequestRecord] = deque(maxlen=max(record_requests, 0))  # maxlen 0: off
        self.counter = RequestCounter()
        self._discovery_cache: dict[str, bytes] = {}
        self._openapi_cache: dict[str, dict[str, Any]] = {}
        self._openapi_v2_cache: dict[str, bytes] = {}
        self._openapi_hashes: dict[str, str] = {}
        self._watches: set[asyncio.Task[Any]] = set()
        core.on_discovery_change.append(self._invalidate)
        self.app = web.Application(client_max_size=bodies.MAX_BODY_BYTES,
                                   middlewares=[self.counter.middleware, self._commit, self._middleware])
        self.app.on_cleanup.append(self._close_admitter)
        self.app.router.add_route("*", "/{tail:.*}", self._dispatch)

    async def _close_admitter(self, _app: web.Application) -> None:
        await self.admitter.close()

    def _invalidate(self) -> None:
        self._discovery_cache.clear()
        self._openapi_cache.clear()
        self._openapi_v2_cache.clear()
        self._openapi_hashes.clear()

    # ------------------------------------------------------------------ middleware

    @web.middleware
    async def _commit(self, request: web.Request,
                      handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        """Outermost: the response leaves only once every write made so far is committed."""
        response = await handler(request)
        waiting = self.store.durable()
        if waiting is not None:
            try:
                await waiting
            except Exception as err:
                log.error("storage commit failed serving %s %s: %s", request.method, request.path_qs, err)
                if response.prepared:
                    raise
                return _json({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                              "message": f"Internal error occurred: storage commit failed: {err}",
                              "reason": "InternalError", "code": 500}, 500)
        return response

    @web.middleware
    async def _middleware(self, request: web.Request,
                          handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        path = request.path
        if self.token is not None and path not in PUBLIC_PATHS:
            auth = request.headers.get("Authorization", "")  # undecodable bytes arrive as surrogates
            if not (auth.startswith("Bearer ") and self._authenticated(auth[7:].strip())):
                self.requests.append(RequestRecord(request.headers.get("User-Agent", ""), "unauthorized", path))
                return _json({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                              "message": "Unauthorized", "reason": "Unauthorized", "code": 401}, 401)
        try:
            return await handler(request)
        except APIError as err:
            return _error(err)
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            return web.Response(body=transport.status_body(exc.status, exc.text or exc.reason), status=exc.status,
                                content_type="application/json")
        except (asyncio.CancelledError, ConnectionResetError):
            raise
        except RecursionError:  # a backstop: bodies.MAX_DEPTH keeps client input from getting here
            log.warning("nesting too deep serving %s %s", request.method, request.path_qs)
            return _error(bad_request(f"the object is nested too deeply: {bodies.depth_error()}"))
        except Exception as err:
            log.exception("internal error serving %s %s", request.method, request.path_qs)
            return _json({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                          "message": f"Internal error occurred: {type(err).__name__}: {err}",
                          "reason": "InternalError", "code": 500}, 500)

    def _authenticated(self, bearer: str) -> bool:
        """The server's token or a service account token it issued (``tokens``)."""
        assert self.token is not None
        given = bearer.encode("utf-8", "surrogateescape")
        if hmac.compare_digest(given, self.token.encode()):
            return True
        return bearer.isascii() and bearer.count(".") == 2 and tokens.verify(self.token, bearer) is not None

    # ------------------------------------------------------------------ dispatch

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        method = request.method
        parts = [p for p in path.split("/") if p]
        ua = request.headers.get("User-Agent", "")
        if not parts or parts[0] not in ("api", "apis"):
            self.requests.append(RequestRecord(ua, method.lower(), path))
            return await self._non_resource(request, parts)
        accept = parse_accept(request.headers.get("Accept", ""))
        if parts == ["api"] or parts == ["apis"]:
            self.requests.append(RequestRecord(ua, method.lower(), path))
            if method != "GET":
                raise APIError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
            return self._discovery_root(parts[0], accept)
        if parts[0] == "api":
            if parts[1] != "v1":
                raise APIError(404, "NotFound", "the server could not find the requested resource")
            group, version, rest = "", "v1", parts[2:]
        else:
            if len(parts) == 2:
                group, version, rest = parts[1], "", []
            else:
                group, version, rest = parts[1], parts[2], parts[3:]
        if not rest:
            self.requests.append(RequestRecord(ua, method.lower(), path))
            if method != "GET":
                raise APIError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
            return self._discovery_gv(group, version) if version else self._discovery_group(group)
        if "" in path.split("/")[1:]:  # a trailing slash, "//", or a name that decoded to contain "/"
            raise APIError(404, "NotFound", "the server could not find the requested resource")
        target = self._target(group, version, rest)
        verb = self._verb(method, target, request)
        rec = target.res.storage_key if target.res.group else "/" + target.res.plural
        self.requests.append(RequestRecord(ua, verb, rec + (f"/{target.subresource}" if target.subresource else "")))
        if accept.kind == "none":
            raise APIError(406, "NotAcceptable",
                           "only the following media types are accepted: application/json, application/yaml")
        return await self._resource(request, verb, target, accept)

    def _target(self, group: str, version: str, rest: list[str]) -> Target:
        namespace: str | None = None
        if rest[0] == "namespaces" and len(rest) > 2 and rest[2] not in ("status", "finalize"):
            namespace, rest = rest[1], rest[2:]
        if len(rest) > 3:
            raise APIError(404, "NotFound", "the server could not find the requested resource")
        res = self.mapper.get(group, version, rest[0])
        if res is None:
            raise APIError(404, "NotFound", "the server could not find the requested resource")
        name = rest[1] if len(rest) > 1 else ""
        sub = rest[2] if len(rest) > 2 else ""
        if sub and sub not in res.subresources:
            raise APIError(404, "NotFound", "the server could not find the requested resource")
        if res.namespaced and namespace is None and name:
            raise APIError(404, "NotFound", "the server could not find the requested resource")
        if not res.namespaced and namespace is not None:
            raise APIError(404, "NotFound", "the server could not find the requested resource")
        return Target(res, namespace, name, sub)

    @staticmethod
    def _verb(method: str, target: Target, request: web.Request) -> str:
        collection = not target.name
        if target.subresource in _CONNECT and not collection and method in ("GET", "POST"):
            return "get" if method == "GET" else "create"
        if method == "GET":
            if collection:
                watch = request.query.get("watch", "")
                return "watch" if watch and parse_bool(watch, "watch") else "list"
            watch = request.query.get("watch", "")
            return "watch" if watch and parse_bool(watch, "watch") else "get"
        if method == "POST" and (collection or target.subresource in ("token", "eviction", "binding")):
            return "create"
        if method == "PUT" and not collection:
            return "update"
        if method == "PATCH" and not collection:
            return "patch"
        if method == "DELETE":
            return "deletecollection" if collection else "delete"
        raise APIError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")

    # ------------------------------------------------------------------ non-resource

    async def _non_resource(self, request: web.Request, parts: list[str]) -> web.StreamResponse:
        path = "/" + "/".join(parts)
        if request.method not in ("GET", "HEAD"):
            raise APIError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        if path == "/version":
            return _json(VERSION_INFO)
        if path in ("/healthz", "/livez", "/readyz") or (len(parts) == 2 and parts[0] in ("healthz", "livez", "readyz")):
            return web.Response(text="ok", content_type="text/plain")
        if path == "/openapi/v3":
            return self._openapi_index()
        if path == "/openapi/v2":
            return self._openapi_v2(request.headers.get("Accept", ""))
        if len(parts) >= 4 and parts[:2] == ["openapi", "v3"]:
            return self._openapi_doc(parts[2:])
        if path == "/":
            paths = ["/api", "/api/v1", "/apis", "/healthz", "/livez", "/openapi/v2", "/openapi/v3", "/readyz", "/version"]
            paths += sorted(f"/apis/{g}" for g in self.mapper.groups() if g)
            return _json({"paths": paths})
        raise APIError(404, "NotFound", "the server could not find the requested resource")

    # ------------------------------------------------------------------ discovery

    def _discovery_root(self, which: str, accept: Accept) -> web.Response:
        if accept.kind in ("agg-v2", "agg-v2beta1"):
            key = f"{which}:{accept.kind}"
            body = self._discovery_cache.get(key)
            if body is None:
                body = _encode(self._aggregated(which, accept.version))
                self._discovery_cache[key] = body
            ctype = AGG_V2 if accept.kind == "agg-v2" else AGG_V2BETA1
            return web.Response(body=body, headers={"Content-Type": ctype})
        if which == "api":
            return _json({"kind": "APIVersions", "versions": ["v1"],
                          "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}]})
        groups = [self._group_doc(g) for g in self.mapper.groups() if g]
        return _json({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})

    def _group_doc(self, group: str) -> dict[str, Any]:
        versions = self.mapper.versions(group)
        entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {"name": group, "versions": entries, "preferredVersion": entries[0] if entries else {}}

    def _discovery_group(self, group: str) -> web.Response:
        if group not in self.mapper.groups() or not group:
            raise APIError(404, "NotFound", "the server could not find the requested resource")
        return _json({"kind": "APIGroup", "apiVersion": "v1", **self._group_doc(group)})

    def _discovery_gv(self, group: str, version: str) -> web.Response:
        resources = self.mapper.in_group_version(group, version)
        if not resources:
            raise APIError(404, "NotFound", "the server could not find the requested resource")
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
        return _json({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": out})

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

    # ------------------------------------------------------------------ openapi

    def _group_versions(self) -> list[str]:
        out = []
        for res in self.mapper:
            if res.group_version not in out:
                out.append(res.group_version)
        return out

    def _openapi_for(self, gv: str) -> dict[str, Any] | None:
        doc = self._openapi_cache.get(gv)
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
        self._openapi_cache[gv] = merged
        return merged

    @staticmethod
    def _merge_docs(docs: list[dict[str, Any]]) -> dict[str, Any]:
        out = {**docs[0], "paths": dict(docs[0].get("paths") or {}),
               "components": {"schemas": dict((docs[0].get("components") or {}).get("schemas") or {})}}
        for doc in docs[1:]:
            out["paths"].update(doc.get("paths") or {})
            out["components"]["schemas"].update((doc.get("components") or {}).get("schemas") or {})
        return out

    def _openapi_index(self) -> web.Response:
        hashes = {}
        gvs = []
        for gv in self._group_versions():
            doc = self._openapi_for(gv)
            if doc is not None:
                gvs.append(gv)
                digest = self._openapi_hashes.get(gv)
                if digest is None:
                    digest = self._openapi_hashes[gv] = openapi.document_hash(doc)
                hashes[gv] = digest
        return _json(openapi.build_index(gvs, hashes))

    def _openapi_v2(self, accept: str) -> web.Response:
        """The swagger 2.0 document of every served group/version: gnostic protobuf when the
        client asks for it (client-go's ``OpenAPISchema``), JSON otherwise."""
        pb = "proto-openapi.spec.v2" in accept
        key = "pb" if pb else "json"
        body = self._openapi_v2_cache.get(key)
        if body is None:
            docs = [d for d in (self._openapi_for(gv) for gv in self._group_versions()) if d is not None]
            doc = openapi.v2_document(docs)
            body = protobuf.encode_openapi_v2(doc) if pb else _encode(doc)
            self._openapi_v2_cache[key] = body
        ctype = protobuf.OPENAPI_V2_PROTOBUF if pb else "application/json"
        return web.Response(body=body, headers={"Content-Type": ctype, "Cache-Control": "no-cache, private"})

    def _openapi_doc(self, parts: list[str]) -> web.Response:
        if parts[0] == "api" and len(parts) == 2:
            gv = parts[1]
        elif parts[0] == "apis" and len(parts) == 3:
            gv = f"{parts[1]}/{parts[2]}"
        else:
            raise APIError(404, "NotFound", "the server could not find the requested resource")
        doc = self._openapi_for(gv)
        if doc is None:
            raise APIError(404, "NotFound", "the server could not find the requested resource")
        return _json(doc, headers={"Cache-Control": "public, immutable"})

    # ------------------------------------------------------------------ resources

    async def _read_body(self, request: web.Request) -> bytes:
        """The request body (Content-Encoding undone); 413 beyond ``bodies.MAX_BODY_BYTES``."""
        try:
            return await request.read()
        except web.HTTPRequestEntityTooLarge:
            raise APIError(413, "RequestEntityTooLarge",
                           f"Request entity too large: limit is {bodies.MAX_BODY_BYTES}") from None

    @staticmethod
    def _manager(request: web.Request) -> str:
        manager = request.query.get("fieldManager", "")
        if manager:
            if len(manager) > 128:
                raise APIError(422, "Invalid", "fieldManager: Too long: may not be more than 128 bytes")
            return manager
        ua = request.headers.get("User-Agent", "")
        return ua.split("/")[0][:128] or "unknown"

    @staticmethod
    def _field_validation(request: web.Request) -> str:
        value = request.query.get("fieldValidation", "Warn") or "Warn"
        if value not in ("Strict", "Warn", "Ignore"):
            raise bad_request(f'fieldValidation must be one of "Ignore", "Warn", or "Strict", got "{value}"')
        return value

    @staticmethod
    def _dry_run(request: web.Request) -> bool:
        values = request.query.getall("dryRun", [])
        for value in values:
            if value != "All":
                raise bad_request(f'Invalid value: "{value}": supported values: "All"')
        return bool(values)

    @staticmethod
    def _warn(headers: dict[str, str], warnings: list[str]) -> None:
        if warnings:
            headers["Warning"] = ", ".join('299 - "' + w.replace('"', '\\"') + '"' for w in warnings[:20])

    def _render(self, res: Resource, obj: dict[str, Any], accept: Accept, code: int = 200,
                headers: dict[str, str] | None = None) -> web.Response:
        if obj.get("kind") == res.kind and obj.get("apiVersion") != res.group_version:
            obj = {**conversion.from_storage(obj, res.version), "apiVersion": res.group_version}
        if accept.kind == "table" and obj.get("kind") == res.kind:
            table = tables.to_table([obj], self._columns(res), resource_version=str(
                (obj.get("metadata") or {}).get("resourceVersion", "")))
            table["apiVersion"] = f"meta.k8s.io/{accept.version}"
            return _json(table, code, headers)
        if accept.kind == "partial" and obj.get("kind") == res.kind:
            return _json({"kind": "PartialObjectMetadata", "apiVersion": f"meta.k8s.io/{accept.version}",
                          "metadata": obj.get("metadata") or {}}, code, headers)
        return _json(obj, code, headers)

    def _columns(self, res: Resource) -> list[tables.Column]:
        if res.is_custom:
            crd = self.core.crds.get(res.crd_name)
            return tables.crd_columns(crd, res.version) if crd else [tables.NAME_COLUMN]
        return tables.builtin_columns(res.group, res.kind)

    async def _resource(self, request: web.Request, verb: str, t: Target, accept: Accept) -> web.StreamResponse:
        res, ns, name = t.res, t.namespace or "", t.name
        if not t.subresource and verb not in res.verbs:
            raise _not_allowed()
        if t.subresource in _CONNECT:
            return self._connect(request, t)
        if verb == "get":
            if request.query.get("resourceVersion"):
                self._rv(request.query["resourceVersion"])
            if t.subresource == "scale":
                return _json(self.core.get_scale(res, ns, name))
            return self._render(res, self.core.get(res, ns, name), accept)
        handler = {"list": self._list, "watch": self._watch, "create": self._create, "update": self._update,
                   "patch": self._patch, "delete": self._delete,
                   "deletecollection": self._delete_collection}.get(verb)
        if handler is None:
            raise _not_allowed()
        return await handler(request, t, accept)

    def _connect(self, request: web.Request, t: Target) -> web.StreamResponse:
        """Pod log/exec/attach/portforward as kube-apiserver answers them before it would proxy to
        the kubelet: the container must be valid; an unscheduled pod has empty logs and cannot be
        exec'd into. There is no kubelet, so a scheduled pod's logs are empty too and streams fail."""
        if t.subresource == "log" and request.method != "GET":
            raise _not_allowed()
        pod = self.core.get(t.res, t.namespace or "", t.name)
        _pod_container(pod, request.query.get("container", ""))
        if t.subresource == "log":
            return web.Response(body=b"", content_type="text/plain")
        if not _deep_get(pod, "spec", "nodeName"):
            raise bad_request(f"pod {t.name} does not have a host assigned")
        raise APIError(503, "ServiceUnavailable",
                       f"the embedded API server runs no kubelet: cannot {t.subresource} pod {t.name}")

    def _stored_as(self, t: Target) -> Target:
        """``t`` with the resource its objects are stored as (``conversion``), usually ``t``."""
        version = conversion.storage_version(t.res.group, t.res.version, t.res.kind)
        stored = self.mapper.get(t.res.group, version, t.res.plural) if version else None
        return t._replace(res=stored) if stored is not None else t

    async def _create(self, request: web.Request, t: Target, accept: Accept) -> web.StreamResponse:
        served, t = t.res, self._stored_as(t)
        res, ns = t.res, t.namespace or ""
        if t.namespace is None and res.namespaced:
            raise _not_allowed()
        body = conversion.to_storage(
            decode_body(await self._read_body(request), request.headers.get("Content-Type", "")))
        if t.subresource or (res.group, res.kind) == ("", "Binding"):
            return _json(actions.create(self.core, res, ns, t.name, t.subresource, body, manager=self._manager(request),
                                        dry_run=self._dry_run(request), secret=self._signing_secret), 201)
        if (res.group, res.kind) in builtins.REVIEW_KINDS:
            bearer = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
            return _json(_review_answer(res, body, self._signing_secret, bearer), 201)
        admission = None
        if self.admitter.active():
            admission = AdmissionRequest(res, "CREATE", ns, _name_in(body), body, dry_run=self._dry_run(request))
            body = await self._admit_create(request, admission)
        obj, warnings = self.core.create(res, ns, body, manager=self._manager(request), dry_run=self._dry_run(request),
                                         field_validation=self._field_validation(request))
        headers: dict[str, str] = {}
        self._warn(headers, warnings + (admission.warnings if admission else []))
        return self._render(served, obj, accept, 201, headers)

    async def _update(self, request: web.Request, t: Target, accept: Accept) -> web.StreamResponse:
        served, t = t.res, self._stored_as(t)
        res, ns, name = t.res, t.namespace or "", t.name
        body = conversion.to_storage(
            decode_body(await self._read_body(request), request.headers.get("Content-Type", "")))
        if t.subresource == "scale":
            return _json(self.core.set_scale(res, ns, name, body, manager=self._manager(request),
                                             dry_run=self._dry_run(request)))
        if t.subresource == "finalize":
            return self._finalize_namespace(res, name, body)
        admission = None
        if self.admitter.active():
            current = self.store.get(res.storage_key, ns if res.namespaced else "", name)
            admission = AdmissionRequest(res, "UPDATE" if current else "CREATE", ns, name, body,
                                         current.obj if current else None, t.subresource, self._dry_run(request))
            body = await self._admit_update(request, admission)
        obj, created, warnings = self.core.update(res, ns, name, body, subresource=t.subresource,
                                                  manager=self._manager(request), dry_run=self._dry_run(request),
                                                  field_validation=self._field_validation(request))
        headers: dict[str, str] = {}
        self._warn(headers, warnings + (admission.warnings if admission else []))
        return self._render(served, obj, accept, 201 if created else 200, headers)

    async def _patch(self, request: web.Request, t: Target, accept: Accept) -> web.StreamResponse:
        res, ns, name = t.res, t.namespace or "", t.name
        if conversion.storage_version(res.group, res.version, res.kind):
            raise APIError(405, "MethodNotAllowed", f"the embedded API server does not patch {res.group_version} "
                           f"{res.kind} objects (stored as another version): patch them in the preferred version")
        ctype = request.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if ctype not in (PATCH_JSON, PATCH_MERGE, PATCH_STRATEGIC, PATCH_APPLY):
            raise APIError(415, "UnsupportedMediaType",
                           f"the body of the request was in an unknown format - accepted media types include: "
                           f"{PATCH_JSON}, {PATCH_MERGE}, {PATCH_APPLY}"
                           + ("" if res.is_custom else f", {PATCH_STRATEGIC}"))
        raw = await self._read_body(request)
        force = parse_bool(request.query["force"], "force") if "force" in request.query else False
        if force and ctype != PATCH_APPLY:
            raise bad_request("force is not allowed for non-apply patches")
        if t.subresource == "scale":
            return _json(self.core.patch_scale(res, ns, name, ctype, raw, manager=self._manager(request),
                                               dry_run=self._dry_run(request)))
        manager = request.query.get("fieldManager", "") if ctype == PATCH_APPLY else self._manager(request)
        if self.admitter.active():
            obj, created, warnings = await self._admitted_patch(request, t, ctype, raw, manager, force)
        else:
            obj, created, warnings = self.core.patch(res, ns, name, ctype, raw, subresource=t.subresource,
                                                     manager=manager, dry_run=self._dry_run(request), force=force,
                                                     field_validation=self._field_validation(request))
        headers: dict[str, str] = {}
        self._warn(headers, warnings)
        return self._render(res, obj, accept, 201 if created else 200, headers)

    async def _delete(self, request: web.Request, t: Target, accept: Accept) -> web.StreamResponse:
        res, ns, name = t.res, t.namespace or "", t.name
        options = await self._delete_options(request)
        dry_run = self._dry_run(request) or bool(options.get("dryRun"))
        if self.admitter.active():
            current = self.store.get(res.storage_key, ns if res.namespaced else "", name)
            if current is None:
                raise not_found(res, name)
            admission = AdmissionRequest(res, "DELETE", ns, name, None, current.obj, dry_run=dry_run)
            await self.admitter.mutate(admission)
            await self.admitter.validate(admission)
        code, obj = self.core.delete(res, ns, name, options, dry_run=dry_run)
        return self._render(res, obj, accept, code)

    async def _delete_collection(self, request: web.Request, t: Target, accept: Accept) -> web.StreamResponse:
        options = await self._delete_options(request)
        entries = self._select(request, t.res, t.namespace)
        self.core.delete_collection(t.res, t.namespace, [self._name_of(e.obj) for e in entries],
                                    options, dry_run=self._dry_run(request))
        return _json({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"})

    # ------------------------------------------------------------------ admission webhooks

    async def _admit_create(self, request: web.Request, admission: AdmissionRequest) -> Any:
        """Mutating webhooks on the request body, then validating webhooks on the object as it
        would be stored (a dry run); returns the body to create."""
        body = await self.admitter.mutate(admission)
        res, ns = admission.res, admission.namespace
        prepared, _ = self.core.create(res, ns, _copy(body), manager=self._manager(request), dry_run=True,
                                       field_validation=self._field_validation(request))
        admission.obj, admission.name = prepared, _name_in(prepared)
        await self.admitter.validate(admission)
        if isinstance(body, dict) and admission.name:
            body.setdefault("metadata", {})["name"] = admission.name
        return body

    async def _admit_update(self, request: web.Request, admission: AdmissionRequest) -> Any:
        """As ``_admit_create`` for a replace (PUT); returns the body to store."""
        body = await self.admitter.mutate(admission)
        prepared, _, _ = self.core.update(admission.res, admission.namespace, admission.name, _copy(body),
                                          subresource=admission.subresource, manager=self._manager(request),
                                          dry_run=True, field_validation=self._field_validation(request))
        admission.obj = prepared
        await self.admitter.validate(admission)
        return body

    async def _admitted_patch(self, request: web.Request, t: Target, ctype: str, raw: bytes, manager: str,
                              force: bool) -> tuple[dict[str, Any], bool, list[str]]:
        """A patch through admission: patch in a dry run, call the webhooks on the result, then
        store exactly the admitted object (guarded by the resourceVersion the patch was applied
        to; a write in between starts over, as the API server retries a patch on conflict)."""
        res, ns, name = t.res, t.namespace or "", t.name
        dry_run, validation = self._dry_run(request), self._field_validation(request)
        for _ in range(5):
            current = self.store.get(res.storage_key, ns if res.namespaced else "", name)
            old = current.obj if current else None
            patched, created, warnings = self.core.patch(res, ns, name, ctype, raw, subresource=t.subresource,
                                                         manager=manager, dry_run=True, force=force,
                                                         field_validation=validation)
            admission = AdmissionRequest(res, "CREATE" if created else "UPDATE", ns, name, patched, old,
                                         t.subresource, dry_run)
            mutated = await self.admitter.mutate(admission)
            if mutated != patched:
                patched, _, _ = self.core.update(res, ns, name, _copy(mutated), subresource=t.subresource,
                                                 manager=manager, dry_run=True, field_validation=validation,
                                                 managed_done=True, allow_create=created)
                admission.obj = patched
            await self.admitter.validate(admission)
            warnings += admission.warnings
            latest = self.store.get(res.storage_key, ns if res.namespaced else "", name)
            if _rv(latest) != _rv(current):
                continue
            if dry_run:
                return patched, created, warnings
            if created:
                obj, _ = self.core.create(res, ns, patched, manager=manager, field_validation="Ignore",
                                          managed_done=True)
                return obj, True, warnings
            patched.setdefault("metadata", {})["resourceVersion"] = _rv(current)
            obj, _, _ = self.core.update(res, ns, name, patched, subresource=t.subresource, manager=manager,
                                         field_validation="Ignore", managed_done=True)
            return obj, False, warnings
        raise APIError(409, "Conflict", f"Operation cannot be fulfilled on {res.group_resource} \"{name}\": "
                       "the object kept changing while admission webhooks were called; please retry")

    @staticmethod
    def _name_of(obj: dict[str, Any]) -> str:
        return str((obj.get("metadata") or {}).get("name", ""))

    def _finalize_namespace(self, res: Resource, name: str, body: Any) -> web.Response:
        entry = self.store.get(res.storage_key, "", name)
        if entry is None:
            raise not_found(res, name)
        if not isinstance(body, dict):
            raise bad_request("the request body must be a JSON object")
        new = entry.copy()
        spec: dict[str, Any] = body["spec"] if isinstance(body.get("spec"), dict) else {}
        new["spec"] = {"finalizers": list(spec.get("finalizers") or [])} if spec.get("finalizers") else {}
        self.store.put(res.storage_key, new)
        self.core._schedule(self.core._reconcile, res.storage_key, "", name)
        return _json(self.store.get(res.storage_key, "", name).obj)  # type: ignore[union-attr]

    async def _delete_options(self, request: web.Request) -> dict[str, Any]:
        raw = await self._read_body(request) if request.can_read_body else b""
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

    # ------------------------------------------------------------------ selection

    def _matcher(self, request: web.Request, res: Resource) -> Callable[[dict[str, Any]], bool] | None:
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
            allowed = _BASE_FIELDS | _EXTRA_FIELDS.get(res.storage_key, set()) | self._selectable(res)
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

    def _selectable(self, res: Resource) -> set[str]:
        crd = self.core.crds.get(res.crd_name) if res.is_custom else None
        if crd is None:
            return set()
        for version in (crd.get("spec") or {}).get("versions") or ():
            if version.get("name") == res.version:
                return {str(f.get("jsonPath", "")).lstrip(".") for f in version.get("selectableFields") or ()
                        if isinstance(f, dict)}
        return set()

    def _select(self, request: web.Request, res: Resource, ns: str | None) -> list[Entry]:
        match = self._matcher(request, res)
        entries = [e for _, e in self.store.list(res.storage_key, ns if res.namespaced else None)]
        return entries if match is None else [e for e in entries if match(e.obj)]

    # ------------------------------------------------------------------ list

    async def _list(self, request: web.Request, t: Target, accept: Accept) -> web.StreamResponse:
        res = t.res
        q = request.query
        rv, rvm, cont = q.get("resourceVersion", ""), q.get("resourceVersionMatch", ""), q.get("continue", "")
        limit = self._int_param(q.get("limit", ""), "limit") or 0
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
        match = self._matcher(request, res)
        ns = t.namespace if res.namespaced else None
        start = ""
        rev = self.store.rev
        requested = self._rv(rv) if rv not in ("", "0") else None
        if cont:
            rev, start = self._decode_continue(cont)
            items = self._snapshot(res, ns, rev)
        elif requested is not None and (rvm == "Exact" or (limit and not rvm)):
            if requested > self.store.rev:
                raise APIError(504, "Timeout", f"Too large resource version: {requested}, current: {self.store.rev}",
                               {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                                "retryAfterSeconds": 1})
            rev = requested
            items = self._snapshot(res, ns, rev)
        else:
            if requested is not None and requested > self.store.rev:
                await self._wait_for_rev(requested)
            rev = self.store.rev
            items = self.store.list(res.storage_key, ns)
        if start:
            items = [kv for kv in items if "/".join(kv[0]) > start]
        entries = [e for _, e in items] if match is None else [e for _, e in items if match(e.obj)]
        next_token = ""
        remaining = 0
        if limit and len(entries) > limit:
            remaining = len(entries) - limit
            entries = entries[:limit]
            last = entries[-1].obj["metadata"]
            next_token = self._encode_continue(rev, f"{last.get('namespace', '')}/{last['name']}")
        return self._list_response(res, entries, str(rev), next_token, remaining if match is None else 0, accept, request)

    def _snapshot(self, res: Resource, ns: str | None, rev: int) -> list[tuple[tuple[str, str], Entry]]:
        try:
            return self.store.snapshot(res.storage_key, ns, rev)
        except Expired:
            raise APIError(410, "Expired", f"too old resource version: {rev} ({self.store.compacted})") from None

    async def _wait_for_rev(self, rev: int, timeout: float = 3.0) -> None:
        """Return once the server has reached ``rev``; after ``timeout`` s raise kube-apiserver's
        "Too large resource version" (504 Timeout, cause ResourceVersionTooLarge, retry after 1 s)."""
        deadline = time.monotonic() + timeout
        while self.store.rev < rev:
            if time.monotonic() > deadline:
                raise APIError(504, "Timeout", f"Too large resource version: {rev}, current: {self.store.rev}",
                               {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                                "retryAfterSeconds": 1})
            await asyncio.sleep(0.05)

    @staticmethod
    def _int_param(value: str, name: str) -> int | None:
        if not value:
            return None
        try:
            out = int(value)
        except ValueError:
            raise bad_request(f"invalid value {value!r} for {name}: must be an integer") from None
        if out < 0:
            raise bad_request(f"{name} must not be negative")
        return out

    @staticmethod
    def _rv(value: str) -> int:
        try:
            out = int(value)
        except ValueError:
            raise bad_request(f"invalid resource version: {value!r}") from None
        if out < 0:
            raise bad_request(f"invalid resource version: {value!r}")
        return out

    @staticmethod
    def _encode_continue(rev: int, start: str) -> str:
        raw = _encode({"v": "meta.k8s.io/v1", "rv": rev, "start": start})
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @staticmethod
    def _decode_continue(token: str) -> tuple[int, str]:
        try:
            padded = token + "=" * (-len(token) % 4)
            data = _decode(base64.urlsafe_b64decode(padded.encode()))
            return int(data["rv"]), str(data["start"])
        except (ValueError, KeyError, TypeError, msgspec.DecodeError):
            raise bad_request("continue key is not valid: invalid continue token") from None

    def _list_response(self, res: Resource, entries: list[Entry], rv: str, cont: str, remaining: int,
                       accept: Accept, request: web.Request) -> web.Response:
        if accept.kind == "table":
            table = tables.to_table([self._versioned(res, e.obj) for e in entries], self._columns(res),
                                    resource_version=rv, continue_=cont,
                                    include_object=request.query.get("includeObject", "Metadata") or "Metadata")
            table["apiVersion"] = f"meta.k8s.io/{accept.version}"
            return _json(table)
        meta: dict[str, Any] = {"resourceVersion": rv}
        if cont:
            meta["continue"] = cont
            if remaining:
                meta["remainingItemCount"] = remaining
        if accept.kind == "partial":
            return _json({"kind": "PartialObjectMetadataList", "apiVersion": f"meta.k8s.io/{accept.version}",
                          "metadata": meta,
                          "items": [{"kind": "PartialObjectMetadata", "apiVersion": f"meta.k8s.io/{accept.version}",
                                     "metadata": e.obj.get("metadata") or {}} for e in entries]})
        gv = res.group_version
        head = _encode({"kind": res.the_list_kind, "apiVersion": gv, "metadata": meta})
        items = [e.raw if e.obj.get("apiVersion") == gv else _encode(self._versioned(res, e.obj)) for e in entries]
        body = head[:-1] + b',"items":[' + b",".join(items) + b"]}"
        return web.Response(body=body, content_type="application/json")

    @staticmethod
    def _versioned(res: Resource, obj: dict[str, Any]) -> dict[str, Any]:
        if obj.get("apiVersion") == res.group_version:
            return obj
        return {**conversion.from_storage(obj, res.version), "apiVersion": res.group_version}

    # ------------------------------------------------------------------ watch

    async def _watch(self, request: web.Request, t: Target, accept: Accept) -> web.StreamResponse:
        res = t.res
        q = request.query
        rv, rvm = q.get("resourceVersion", ""), q.get("resourceVersionMatch", "")
        bookmarks = parse_bool(q["allowWatchBookmarks"], "allowWatchBookmarks") if q.get("allowWatchBookmarks") else False
        initial = q.get("sendInitialEvents", "")
        send_initial = parse_bool(initial, "sendInitialEvents") if initial else None
        if send_initial is not None and rvm != "NotOlderThan":
            raise APIError(422, "Invalid", "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: "
                           "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
        if send_initial is None and rvm:
            raise APIError(422, "Invalid", "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: "
                           "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided")
        timeout = self._int_param(q.get("timeoutSeconds", ""), "timeoutSeconds")
        if t.name:
            match_name = t.name
            base = self._matcher(request, res)

            def named(obj: dict[str, Any]) -> bool:
                return self._name_of(obj) == match_name and (base is None or base(obj))
            match: Callable[[dict[str, Any]], bool] | None = named
        else:
            match = self._matcher(request, res)
        start_rev = self._rv(rv) if rv not in ("", "0") else None
        ns = t.namespace if res.namespaced else None
        response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
        if request.version >= (1, 1):
            response.enable_chunked_encoding()  # HTTP/1.0: the stream ends when the connection closes
        if start_rev is not None and not send_initial:
            try:
                await self._wait_for_rev(start_rev)
            except APIError as err:
                return await self._watch_error(request, response, err.status)
        # no await from here to the subscription: the sent state and the watched events join exactly
        initial_lines: list[bytes] = []
        send_end_bookmark = False
        pending: list[Event] = []
        if start_rev is None or send_initial:
            after = self.store.rev
            if send_initial is not False:
                for _, entry in self.store.list(res.storage_key, ns):
                    if match is None or match(entry.obj):
                        initial_lines.append(self._line("ADDED", res, entry.obj, entry.raw, accept, request))
                send_end_bookmark = bool(send_initial)
        else:
            after = start_rev
            try:
                pending = self.store.events_since(start_rev, res.storage_key)
            except Expired as err:
                return await self._watch_error(request, response, {
                    "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": f"too old resource version: {err.requested} ({err.compacted})",
                    "reason": "Expired", "code": 410})
            pending = [ev for ev in pending if ev.namespace == ns or ns is None]
        watcher = self.store.subscribe(res.storage_key, ns, after=after)
        try:
            waiting = self.store.durable()  # the initial state may hold writes not yet committed
            if waiting is not None:
                await waiting
            await response.prepare(request)
            if initial_lines:
                await response.write(b"".join(initial_lines))
            if send_end_bookmark:
                await response.write(self._bookmark(res, after, initial_end=True))
            if pending:
                await response.write(self._lines(pending, res, match, accept, request))
            await self._stream(response, watcher, res, match, accept, request, timeout, bookmarks)
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self.store.unsubscribe(watcher)
        return response

    @staticmethod
    async def _watch_error(request: web.Request, response: web.StreamResponse,
                           status: dict[str, Any]) -> web.StreamResponse:
        """End a watch with one ERROR event (a watch that passed validation fails this way)."""
        await response.prepare(request)
        await response.write(_encode({"type": "ERROR", "object": status}) + b"\n")
        await response.write_eof()
        return response

    def _bookmark(self, res: Resource, rev: int, initial_end: bool = False) -> bytes:
        meta: dict[str, Any] = {"resourceVersion": str(rev)}
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        return _encode({"type": "BOOKMARK", "object": {"kind": res.kind, "apiVersion": res.group_version,
                                                       "metadata": meta}}) + b"\n"

    async def _stream(self, response: web.StreamResponse, watcher: Any, res: Resource,
                      match: Callable[[dict[str, Any]], bool] | None, accept: Accept, request: web.Request,
                      timeout: int | None, bookmarks: bool) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (timeout if timeout is not None else 1800)
        next_bookmark = loop.time() + self.bookmark_interval
        while True:
            now = loop.time()
            if now >= deadline or watcher.closed or watcher.overflowed:
                break
            wait = deadline - now
            if bookmarks:
                wait = min(wait, max(next_bookmark - now, 0.0))
            if not watcher.buffer:
                try:
                    await asyncio.wait_for(watcher.wake.wait(), timeout=wait)
                except TimeoutError:
                    pass
            events = watcher.drain()
            if events:
                chunk = self._lines(events, res, match, accept, request)
                if chunk:
                    await response.write(chunk)
            if bookmarks and loop.time() >= next_bookmark and not watcher.buffer:
                # only with nothing buffered: a bookmark must not pass events the client has not had
                await response.write(self._bookmark(res, self.store.committed_rev))
                next_bookmark = loop.time() + self.bookmark_interval
        await response.write_eof()

    def _lines(self, events: list[Event], res: Resource, match: Callable[[dict[str, Any]], bool] | None,
               accept: Accept, request: web.Request) -> bytes:
        plain = accept.kind == "json"
        gv = res.group_version
        out: list[bytes] = []
        for ev in events:
            obj = ev.entry.obj
            etype = ev.type
            if match is not None:
                now_ok = match(obj)
                before_ok = ev.prev is not None and match(ev.prev)
                if etype == "ADDED" and not now_ok:
                    continue
                if etype == "DELETED":
                    if not before_ok:
                        continue
                elif etype == "MODIFIED":
                    if now_ok and not before_ok:
                        etype = "ADDED"
                    elif before_ok and not now_ok:
                        etype = "DELETED"
                    elif not now_ok:
                        continue
            if plain and etype == ev.type and obj.get("apiVersion") == gv:
                out.append(ev.line())
            else:
                out.append(self._line(etype, res, obj, ev.entry.raw, accept, request))
        return b"".join(out)

    def _line(self, etype: str, res: Resource, obj: dict[str, Any], raw: bytes, accept: Accept,
              request: web.Request) -> bytes:
        if accept.kind == "table":
            table = tables.to_table([self._versioned(res, obj)], self._columns(res),
                                    resource_version=str((obj.get("metadata") or {}).get("resourceVersion", "")),
                                    include_object=request.query.get("includeObject", "Metadata") or "Metadata")
            table["apiVersion"] = f"meta.k8s.io/{accept.version}"
            return _encode({"type": etype, "object": table}) + b"\n"
        if accept.kind == "partial":
            partial = {"kind": "PartialObjectMetadata", "apiVersion": f"meta.k8s.io/{accept.version}",
                       "metadata": obj.get("metadata") or {}}
            return _encode({"type": etype, "object": partial}) + b"\n"
        if obj.get("apiVersion") == res.group_version:
            return b'{"type":"' + etype.encode() + b'","object":' + raw + b"}\n"
        return _encode({"type": etype, "object": self._versioned(res, obj)}) + b"\n"


def _review_answer(res: Resource, body: Any, secret: str, bearer: str = "") -> dict[str, Any]:
    """The answer to a create-only review (never stored). There is no RBAC: the server's token is
    cluster-admin, so every access review is allowed (as ``kubectl auth can-i`` shows)."""
    if not isinstance(body, dict):
        raise bad_request("the request body must be a JSON object")
    spec = body.get("spec") or {}
    answer = {"kind": res.kind, "apiVersion": res.group_version, "metadata": {"creationTimestamp": None},
              "spec": spec}
    if res.plural.endswith("subjectaccessreviews"):
        answer["status"] = {"allowed": True, "reason": "the embedded API server has no RBAC: one cluster-admin token"}
    elif res.plural == "selfsubjectrulesreviews":
        answer["status"] = {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}], "incomplete": False}
    elif res.plural == "tokenreviews":
        answer["status"] = tokens.review_status(secret, str(spec.get("token") or "") if isinstance(spec, dict) else "")
    else:
        answer.pop("spec")
        caller = tokens.review_status(secret, bearer) if bearer.count(".") == 2 else {}
        answer["status"] = {"userInfo": caller["user"] if caller.get("authenticated") else USER_INFO}
    return answer


def _pod_container(pod: dict[str, Any], container: str) -> str:
    """The container a log/exec request addresses (kube-apiserver's validateContainer): the
    only one when ``container`` is empty; 400 when it is ambiguous or unknown."""
    spec = pod.get("spec") or {}
    containers = [c for c in spec.get("containers") or () if isinstance(c, dict)]
    everyone = [c for key in ("initContainers", "containers", "ephemeralContainers")
                for c in spec.get(key) or () if isinstance(c, dict)]
    name = str((pod.get("metadata") or {}).get("name") or "")
    if not container:
        if len(containers) == 1:
            return str(containers[0].get("name") or "")
        if not containers:
            raise bad_request(f"a container name must be specified for pod {name}")
        names = " ".join(str(c.get("name")) for c in everyone)
        raise bad_request(f"a container name must be specified for pod {name}, choose one of: [{names}]")
    if not any(c.get("name") == container for c in everyone):
        raise bad_request(f"container {container} is not valid for pod {name}")
    return container


def _deep_get(obj: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


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


def _not_allowed() -> APIError:
    return APIError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")


def _copy(obj: Any) -> Any:
    return _decode(_encode(obj))


def _name_in(obj: Any) -> str:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    return str(meta.get("name") or "") if isinstance(meta, dict) else ""


def _rv(entry: Entry | None) -> str:
    return str(entry.obj["metadata"].get("resourceVersion", "")) if entry is not None else ""


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
