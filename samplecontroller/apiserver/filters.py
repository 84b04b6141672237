"""The filter chain in front of the handlers (kube-apiserver's DefaultBuildHandlerChain), as
aiohttp middlewares, outermost first: request counting and metrics (``metrics.RequestMetrics`` and its ``RequestCounter``),
commit-before-ack (``with_commit``), Status errors (``with_errors``), authentication
(``with_authentication``: the user on the request, ``authentication.user_of``), impersonation (``with_impersonation``)
and authorization (``with_authorization``), both through ``authorization.Authorizer``. The body limit is aiohttp's ``client_max_size``
(``bodies.MAX_BODY_BYTES``, answered as 413 by ``requestinfo.read_body``).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import deque
from typing import Any, Protocol

import msgspec
from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from samplecontroller.apimachinery.durations import parse_duration
from samplecontroller.apiserver import authentication, bodies, transport
from samplecontroller.apiserver.authorization import impersonation
from samplecontroller.apiserver.authorization.attributes import forbidden, from_request
from samplecontroller.apiserver.authorization.rbac import Authorizer
from samplecontroller.apiserver.errors import APIError, bad_request
from samplecontroller.apiserver.requestinfo import RequestRecord
from samplecontroller.apiserver.storage import Store
from samplecontroller.apiserver.warning import go_quote

__all__ = ["PUBLIC_PATHS", "Credentials", "json_response", "with_authentication",
           "with_authorization", "with_commit", "with_errors", "with_impersonation"]

log = logging.getLogger(__name__)
_encode = msgspec.json.Encoder().encode

PUBLIC_PATHS = {"/version", "/version/", "/healthz", "/livez", "/readyz"}


class Credentials(Protocol):
    """The server's token (read per request: it may be rotated), the audiences a service account
    token must name one of, its request log and its store (service accounts and the objects
    tokens are bound to are looked up there)."""

    token: str | None
    api_audiences: tuple[str, ...]
    requests: deque[RequestRecord]
    store: Store


def json_response(obj: Any, code: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    """``obj`` as a JSON response."""
    return web.Response(body=_encode(obj), status=code, content_type="application/json", headers=headers)


def _internal_error(message: str) -> web.Response:
    return json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                          "message": f"Internal error occurred: {message}", "reason": "InternalError", "code": 500},
                         500)


def with_commit(store: Store) -> Middleware:
    """Outermost: the response leaves only once every write made so far is committed."""

    @web.middleware
    async def commit(request: web.Request, handler: Handler) -> web.StreamResponse:
        response = await handler(request)
        waiting = store.durable()
        if waiting is not None:
            try:
                await waiting
            except Exception as err:
                log.error("storage commit failed serving %s %s: %s", request.method, request.path_qs, err)
                if response.prepared:
                    raise
                return _internal_error(f"storage commit failed: {err}")
        return response
    return commit


@web.middleware
async def with_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every failure as a Status: ``APIError``s with their code, HTTP errors as Status objects,
    anything unexpected as a logged 500 InternalError (a bug)."""
    try:
        return await handler(request)
    except APIError as err:
        if err.encoded is not None:
            return web.Response(body=err.encoded, status=err.code, content_type="application/json")
        return json_response(err.status, err.code)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return web.Response(body=transport.status_body(exc.status, exc.text or exc.reason), status=exc.status,
                            content_type="application/json")
    except (asyncio.CancelledError, ConnectionResetError):
        raise
    except RecursionError:  # a backstop: bodies.MAX_DEPTH keeps client input from getting here
        log.warning("nesting too deep serving %s %s", request.method, request.path_qs)
        too_deep = bad_request(f"the object is nested too deeply: {bodies.depth_error()}")
        return json_response(too_deep.status, too_deep.code)
    except Exception as err:
        log.exception("internal error serving %s %s", request.method, request.path_qs)
        return _internal_error(f"{type(err).__name__}: {err}")


def with_authentication(credentials: Credentials) -> Middleware:
    """401 Unauthorized (logged as verb ``unauthorized``) unless the request bears the server's
    token or a service account token it issued; ``PUBLIC_PATHS`` need none (their requests run as
    ``system:anonymous``). The user is stored as ``request[authentication.USER_KEY]`` (``authentication.user_of``)."""

    @web.middleware
    async def authenticate(request: web.Request, handler: Handler) -> web.StreamResponse:
        path = request.path
        token = credentials.token
        if token is None:
            request[authentication.USER_KEY] = authentication.ADMIN
            return await handler(request)
        auth = request.headers.get("Authorization", "")  # undecodable bytes arrive as surrogates
        user = (authentication.authenticate_token(credentials.store, token, auth[7:].strip(),
                                                  credentials.api_audiences)[0]
                if auth.startswith("Bearer ") else None)
        if user is None:
            if path not in PUBLIC_PATHS:
                credentials.requests.append(RequestRecord(request.headers.get("User-Agent", ""), "unauthorized", path))
                return json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                      "message": "Unauthorized", "reason": "Unauthorized", "code": 401}, 401)
            user = authentication.ANONYMOUS
        request[authentication.USER_KEY] = user
        return await handler(request)
    return authenticate


def with_impersonation(authorizer: Authorizer) -> Middleware:
    """``Impersonate-User``/``-Group``/``-Uid``/``-Extra-*`` (``authorization.impersonation``):
    each impersonated attribute must be allowed (verb ``impersonate``), then the request runs
    as the impersonated user."""

    @web.middleware
    async def impersonate(request: web.Request, handler: Handler) -> web.StreamResponse:
        if any(h.lower().startswith("impersonate-") for h in request.headers):
            request[authentication.USER_KEY] = impersonation.impersonate(authorizer, authentication.user_of(request), request.headers)
        return await handler(request)
    return impersonate


def with_authorization(authorizer: Authorizer) -> Middleware:
    """403 Forbidden (kube's message and details) unless the authorizer allows the request's
    attributes (``authorization.attributes.from_request``)."""

    @web.middleware
    async def authorize(request: web.Request, handler: Handler) -> web.StreamResponse:
        user = authentication.user_of(request)
        if not user.is_master:
            attrs = from_request(user, request.method, request.path, request.query)
            decision = authorizer.authorize(attrs)
            if not decision.allowed:
                raise forbidden(attrs, decision.reason)
        return await handler(request)
    return authorize


REQUEST_TIMEOUT = 60.0
"""kube-apiserver's ``--request-timeout``: a request that is not long-running (watches, the pod
connect verbs) and has not been answered by then gets 504."""
MAX_REQUESTS_INFLIGHT = 400
MAX_MUTATING_REQUESTS_INFLIGHT = 200
"""kube-apiserver's ``--max-requests-inflight`` and ``--max-mutating-requests-inflight``."""
_LONG_RUNNING = ("exec", "attach", "portforward", "log", "proxy")
_MUTATING = ("POST", "PUT", "PATCH", "DELETE")


def long_running(request: web.Request) -> bool:
    """Whether ``request`` is long-running as kube-apiserver's LongRunningFunc says: a watch
    (``?watch=true`` or a ``/watch/`` path) or a pod connect verb / proxy."""
    path = request.path
    if request.query.get("watch", "").lower() in ("true", "1") or "/watch/" in path:
        return True
    return path.rstrip("/").rsplit("/", 1)[-1] in _LONG_RUNNING


def with_timeout(seconds: float) -> Middleware:
    """WithRequestDeadline and WithTimeoutForNonLongRunningRequests: a request not answered within
    ``seconds``, or the shorter ``?timeout=`` it gives (a bad one is a 400), (one whose
    body never arrives, too) gets kube's 504 "Timeout: request did not complete within requested
    timeout - context deadline exceeded" and its connection is closed. Placed inside
    ``with_commit``: a write already made still waits for its commit."""

    @web.middleware
    async def timeout(request: web.Request, handler: Handler) -> web.StreamResponse:
        if long_running(request):
            return await handler(request)
        try:
            limit = _request_deadline(request.query.get("timeout", ""), seconds)
        except ValueError as err:
            return json_response(bad_request(f"invalid timeout specified in the request URL - {err}").status, 400)
        if limit <= 0:
            return await handler(request)
        try:
            async with asyncio.timeout(limit):  # no task of its own, unlike wait_for
                return await handler(request)
        except TimeoutError:
            if request.writer.output_size > 0:
                raise ConnectionError("the request timed out after its response began") from None
            response = json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                      "message": "Timeout: request did not complete within requested timeout - "
                                                 "context deadline exceeded",
                                      "reason": "Timeout", "details": {}, "code": 504}, 504)
            response.force_close()
            return response
    return timeout


def _request_deadline(value: str, default: float) -> float:
    """WithRequestDeadline: the ``timeout`` query parameter (a Go duration) when it is positive
    and shorter than the server's, else the server's; raises ValueError with Go's
    ``time.ParseDuration`` text for one that does not parse."""
    if not value:
        return default
    text = value[1:] if value[:1] in "+-" else value
    if re.fullmatch(r"[0-9]*\.?[0-9]*", text) and text not in ("", "."):
        if float(text) != 0:
            raise ValueError(f"time: missing unit in duration {go_quote(value)}")
        return default
    try:
        given = parse_duration(text)
    except ValueError:
        raise ValueError(f"time: invalid duration {go_quote(value)}") from None
    return given if value[:1] != "-" and 0 < given < default else default


def with_max_inflight(readonly: int, mutating: int) -> Middleware:
    """The MaxInFlight filter: at most ``readonly`` non-mutating and ``mutating`` mutating
    requests (long-running ones aside) are served at once; one more is a 429 "Too many requests,
    please try again later." (plain text, ``Retry-After: 1``), which clients retry. Members of
    ``system:masters`` are exempt, as in kube-apiserver; runs after authentication."""
    counts = {True: 0, False: 0}
    limits = {True: mutating, False: readonly}

    @web.middleware
    async def max_inflight(request: web.Request, handler: Handler) -> web.StreamResponse:
        if authentication.user_of(request).is_master or long_running(request):
            return await handler(request)
        kind = request.method in _MUTATING
        if 0 < limits[kind] <= counts[kind]:
            return web.Response(status=429, text="Too many requests, please try again later.\n",
                                headers={"Retry-After": "1", "X-Content-Type-Options": "nosniff"})
        counts[kind] += 1
        try:
            return await handler(request)
        finally:
            counts[kind] -= 1
    return max_inflight
