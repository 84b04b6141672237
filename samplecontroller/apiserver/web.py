"""The HTTP face of the embedded API server: the filter chain, then routing of every
path to discovery, OpenAPI, the non-resource endpoints or a resource handler.

The request path, as in kube-apiserver: filters (``filters``: request counting, commit before
ack, Status errors, authentication, impersonation, authorization) -> request info (``requestinfo``: resource, namespace, name,
subresource, verb) -> handler (``handlers``: crud, list, watch, subresources) -> strategy
(``strategies``) -> storage (``core.Core`` over ``storage.Store``) -> watch.

Contracts:
- Every response to an API request is JSON; every error is a ``Status`` object with the right
  code and reason. Client input never produces a 500 (an unexpected exception is logged and
  answered with a 500 InternalError Status, which is a bug).
- Bearer-token authentication for everything except ``/version``, ``/healthz``, ``/livez``,
  ``/readyz`` (public in Kubernetes' default RBAC): a missing or wrong token gets 401. Then
  impersonation and RBAC authorization of every request (``authorization``): the server's token
  is ``system:masters``, service account tokens get what their bindings grant, else 403.
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

import json
import secrets
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from samplecontroller.apiserver import filters, requestinfo, tokens
from samplecontroller.apiserver.admission import Admitter
from samplecontroller.apiserver.authorization.attributes import Attributes
from samplecontroller.apiserver.authorization.rbac import Authorizer
from samplecontroller.apiserver.cel.authz import Verdict
from samplecontroller.apiserver.core import Core
from samplecontroller.apiserver.discovery import Discovery
from samplecontroller.apiserver.errors import APIError, not_allowed, not_found_path
from samplecontroller.apiserver.filters import json_response
from samplecontroller.apiserver.handlers import crud, subresources
from samplecontroller.apiserver.handlers import list as list_
from samplecontroller.apiserver.handlers import watch as watch_
from samplecontroller.apiserver.handlers.common import Scope
from samplecontroller.apiserver.handlers.openapi import OpenAPIHandler
from samplecontroller.apiserver.healthz import HealthChecks
from samplecontroller.apiserver.httpmessages import AnyResponse, Handler, Request, Response
from samplecontroller.apiserver.metrics import RequestCounter, RequestMetrics
from samplecontroller.apiserver.negotiation import Accept, as_yaml, parse_accept
from samplecontroller.apiserver.requestinfo import CONNECT, RequestInfo, RequestRecord
from samplecontroller.apiserver.restmapper import RESTMapper
from samplecontroller.apiserver.storage import Store
from samplecontroller.apiserver.version import version_info

__all__ = ["APIServerApp", "RequestRecord"]

ResourceHandler = Callable[[Scope, Request, RequestInfo, Accept], Awaitable[AnyResponse]]
_HANDLERS: dict[str, ResourceHandler] = {
    "get": crud.get, "list": list_.list_, "watch": watch_.watch, "create": crud.create, "update": crud.update,
    "patch": crud.patch, "delete": crud.delete, "deletecollection": crud.delete_collection,
}


_GO_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
                             "\u2029": "\\u2029"})


def go_json(value: Any) -> bytes:
    """``value`` as Go's ``json.Marshal`` writes it (kube's issuer discovery documents are those
    bytes, written as they are): compact, no final newline, ``<``, ``>``, ``&``, U+2028 and
    U+2029 escaped."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).translate(_GO_ESCAPES).encode()


class APIServerApp:
    """The API server's handler over a ``Core`` (see the module docstring). ``token`` is read on
    every request (it may be replaced while serving)."""

    def __init__(self, store: Store, mapper: RESTMapper, core: Core, token: str | None,
                 bookmark_interval: float = 60.0, record_requests: int = 0,
                 api_audiences: tuple[str, ...] = (tokens.ISSUER,), request_timeout: float = filters.REQUEST_TIMEOUT,
                 max_requests_inflight: int = filters.MAX_REQUESTS_INFLIGHT,
                 max_mutating_requests_inflight: int = filters.MAX_MUTATING_REQUESTS_INFLIGHT) -> None:
        self.store = store
        self.mapper = mapper
        self.core = core
        self.admitter = Admitter(store, mapper)
        self.token = token
        self.api_audiences = tuple(api_audiences) or (tokens.ISSUER,)
        signing_secret = token if token is not None else secrets.token_urlsafe(32)
        self.signer = tokens.signer(signing_secret, self.api_audiences)
        self.jwks_uri = ""
        """The ``jwks_uri`` of the issuer's OpenID configuration, fixed at start-up (the server's
        own address, or ``--service-account-jwks-uri``); until set the discovery documents are
        not served (404), as kube installs them only with a URI."""
        self.authorizer = Authorizer(store)
        self.admitter.policies.authorize = self._authorize
        self.scope = Scope(core, store, self.admitter, signing_secret, bookmark_interval, self.authorizer,
                           self.api_audiences)
        self.requests: deque[RequestRecord] = deque(maxlen=max(record_requests, 0))  # maxlen 0: off
        self.counter = RequestCounter()
        self.metrics = RequestMetrics(self._object_counts, counter=self.counter)
        self.health = self._health_checks()
        self.stopping = False
        self.discovery = Discovery(mapper)
        self.openapi = OpenAPIHandler(core)
        mapper.on_change.append(self.discovery.invalidate)
        mapper.on_change.append(self.openapi.invalidate)
        self.handler: Handler = filters.chain(self._dispatch, self.metrics, store, self, self.authorizer,
                                              request_timeout, max_requests_inflight, max_mutating_requests_inflight)
        """The filter chain and the router: what ``transport.HTTPServer`` serves."""

    async def close(self) -> None:
        """Close the admission webhooks' client (once the server has stopped serving)."""
        await self.admitter.close()

    def _object_counts(self) -> dict[str, int]:
        """Stored objects per resource (``pods``, ``deployments.apps``) for ``apiserver_storage_objects``."""
        counts: dict[str, int] = {}
        for skey in list(self.store.data):
            group, _, plural = skey.partition("/")
            counts[f"{plural}.{group}" if group else plural] = self.store.count(skey)
        return counts

    def _authorize(self, attrs: Attributes) -> Verdict:
        """The RBAC decision for the CEL authorizer library (allowed, else no opinion; RBAC
        answers no errors)."""
        decision = self.authorizer.authorize(attrs)
        return Verdict(decision.allowed, decision.reason)

    def _health_checks(self) -> HealthChecks:
        """The checks of /healthz, /livez and /readyz (``healthz``)."""
        def ok() -> str | None:
            return None

        def serving() -> str | None:
            return "the server is shutting down" if self.stopping else None

        common = [("ping", ok), ("log", ok), ("etcd", self.store.ping),
                  ("poststarthook/bootstrap-controller", ok),
                  ("poststarthook/scheduling/bootstrap-system-priority-classes", ok),
                  ("poststarthook/crd-informer-synced", ok)]
        ready = [*common[:3], ("etcd-readiness", self.store.ping), ("informer-sync", ok), *common[3:],
                 ("shutdown", serving)]
        return HealthChecks({"healthz": common, "livez": common, "readyz": ready})

    async def _dispatch(self, request: Request) -> AnyResponse:
        path = request.path
        method = request.method
        segments = path.split("/")
        parts = [p for p in segments if p]
        ua = request.headers.get("User-Agent", "")
        if not parts or parts[0] not in ("api", "apis"):
            self.requests.append(RequestRecord(ua, method.lower(), path))
            return self._non_resource(request, parts)
        accept = parse_accept(request.headers.get("Accept", ""))
        if parts == ["api"] or parts == ["apis"]:
            self.requests.append(RequestRecord(ua, method.lower(), path))
            if method != "GET":
                raise not_allowed()
            root = self.discovery.root(parts[0], accept)
            return as_yaml(root) if accept.yaml else root
        if parts[0] == "api":
            if parts[1] != "v1":
                raise not_found_path()
            group, version, rest = "", "v1", parts[2:]
        elif len(parts) == 2:
            group, version, rest = parts[1], "", []
        else:
            group, version, rest = parts[1], parts[2], parts[3:]
        if not rest:
            self.requests.append(RequestRecord(ua, method.lower(), path))
            if method != "GET":
                raise not_allowed()
            found = self.discovery.group_version(group, version) if version else self.discovery.group(group)
            return as_yaml(found) if accept.yaml else found
        if "" in segments[1:]:  # a trailing slash, "//", or a name that decoded to contain "/"
            raise not_found_path()
        info = requestinfo.resolve(self.mapper, group, version, rest)
        verb = requestinfo.verb_of(method, info, request)
        self.requests.append(info.record(ua, verb))
        if verb == "watch" and accept.yaml:  # YAML has no stream form: another type the client accepts, or 406
            accept = parse_accept(request.headers.get("Accept", ""), True)
            if accept.kind == "none":
                raise APIError(406, "NotAcceptable", "only the following media types are accepted: "
                                                     "application/json;stream=watch, "
                                                     "application/vnd.kubernetes.protobuf;stream=watch")
        if accept.kind == "none":
            raise APIError(406, "NotAcceptable",
                           "only the following media types are accepted: application/json, application/yaml")
        if not accept.yaml:
            return await self._resource(request, verb, info, accept)
        try:
            return as_yaml(await self._resource(request, verb, info, accept))
        except APIError as err:  # the Status as the client asked for it too
            return as_yaml(json_response(err.status, err.code, err.headers))

    def _non_resource(self, request: Request, parts: list[str]) -> AnyResponse:
        path = "/" + "/".join(parts)
        if request.method not in ("GET", "HEAD"):
            raise not_allowed()
        if path == "/version":
            # as kube-apiserver writes it (responsewriters.WriteRawJSON: indented, no final newline)
            return Response(body=json.dumps(version_info(self.mapper.emulated_minor), indent=2).encode(),
                            content_type="application/json")
        if path in ("/.well-known/openid-configuration", "/openid/v1/jwks") and self.jwks_uri:
            return self._issuer_discovery(path)
        if self.health.serves(parts):
            result = self.health.answer(parts, "verbose" in request.query, request.query.getall("exclude", []))
            return Response(text=result.text, status=result.code, content_type="text/plain")
        if path == "/metrics":
            return Response(body=self.metrics.render(), content_type="text/plain",
                                headers={"X-Content-Type-Options": "nosniff"})
        if path == "/openapi/v3":
            return self.openapi.index()
        if path == "/openapi/v2":
            return self.openapi.v2(request.headers.get("Accept", ""))
        if len(parts) >= 4 and parts[:2] == ["openapi", "v3"]:
            return self.openapi.v3(parts[2:])
        if path == "/":
            paths = ["/.well-known/openid-configuration", "/api", "/api/v1", "/apis", "/healthz", "/livez", "/metrics",
                     "/openapi/v2", "/openapi/v3", "/openid/v1/jwks", "/readyz", "/version"]
            paths += sorted(f"/apis/{g}" for g in self.mapper.groups() if g)
            return json_response({"paths": paths})
        raise not_found_path()

    def _issuer_discovery(self, path: str) -> Response:
        """The service account issuer's OpenID provider configuration and JWK set (kube's
        ``serviceaccount.NewOpenIDMetadataProvider``): ``jwks_uri`` is ``self.jwks_uri``, fixed at
        start-up, never taken from a request (its Host header would let any client poison a
        document served with ``Cache-Control: public``)."""
        headers = {"Cache-Control": "public, max-age=3600"}
        if path == "/openid/v1/jwks":
            return Response(body=go_json(self.signer.jwks()), headers=headers, content_type="application/jwk-set+json")
        return Response(body=go_json(self.signer.openid_configuration(self.jwks_uri)), headers=headers,
                        content_type="application/json")

    async def _resource(self, request: Request, verb: str, info: RequestInfo,
                        accept: Accept) -> AnyResponse:
        if not info.subresource and verb not in info.res.verbs:
            raise not_allowed()
        if info.subresource in CONNECT:
            return subresources.connect(self.scope, request, info)
        handler = _HANDLERS.get(verb)
        if handler is None:
            raise not_allowed()
        return await handler(self.scope, request, info, accept)
