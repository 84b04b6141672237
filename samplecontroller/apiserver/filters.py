"""The filter chain in front of the handlers (kube-apiserver's DefaultBuildHandlerChain), as one
handler wrapping the router (``chain``: one coroutine layer per request instead of one per
filter), whose filters run outermost first: request counting and metrics (``metrics.RequestMetrics`` and its
``RequestCounter``), commit-before-ack (``_committed``), the request deadline (``_deadline``), Status
errors (``_error_response``), authentication (``authenticate``: the user on the request,
``authentication.user_of``), the max-in-flight limits (``MaxInFlight``), impersonation
(``impersonate``) and authorization (``authorize``), both through ``authorization.Authorizer``.
The body limit is the HTTP server's (``bodies.MAX_BODY_BYTES``, answered as 413 by
``requestinfo.read_body``).
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
from collections import deque
from typing import Any, Protocol

from samplecontroller.apimachinery.durations import parse_duration
from samplecontroller.apiserver import authentication, bodies
from samplecontroller.apiserver.authorization import impersonation
from samplecontroller.apiserver.authorization.attributes import forbidden, from_request
from samplecontroller.apiserver.authorization.rbac import Authorizer
from samplecontroller.apiserver.errors import APIError, bad_request, laid_out
from samplecontroller.apiserver.httpmessages import AnyResponse, Handler, Request, Response
from samplecontroller.apiserver.metrics import RequestMetrics
from samplecontroller.apiserver.requestinfo import RequestRecord
from samplecontroller.apiserver.storage import Store
from samplecontroller.apiserver.warning import go_quote

__all__ = ["PUBLIC_PATHS", "Credentials", "Deadlines", "Expiring", "MaxInFlight", "RequestExpiry", "authenticate", "authorize", "chain", "impersonate",
           "json_response", "long_running"]

log = logging.getLogger(__name__)
_encode = bodies.encode

PUBLIC_PATHS = {"/version", "/version/", "/healthz", "/livez", "/readyz"}


class Credentials(Protocol):
    """The server's token (read per request: it may be rotated), the audiences a service account
    token must name one of, its request log and its store (service accounts and the objects
    tokens are bound to are looked up there)."""

    token: str | None
    api_audiences: tuple[str, ...]
    requests: deque[RequestRecord]
    store: Store


def json_response(obj: Any, code: int = 200, headers: dict[str, str] | None = None) -> Response:
    """``obj`` as a JSON response, laid out as kube-apiserver's encoder writes it: a ``Status`` in
    its struct's field order (``errors.laid_out``), the body ended by a newline."""
    return Response(body=_encode(laid_out(obj)) + b"\n", status=code, content_type="application/json",
                    headers=headers)


def _internal_error(message: str) -> Response:
    return json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                          "message": f"Internal error occurred: {message}", "reason": "InternalError", "code": 500},
                         500)


def chain(handler: Handler, metrics: RequestMetrics, store: Store, credentials: Credentials, authorizer: Authorizer,
          request_timeout: float, max_requests_inflight: int, max_mutating_requests_inflight: int) -> Handler:
    """The filter chain (see the module docstring) in front of ``handler``:

    - metrics: every request counted and observed with its final code (``RequestMetrics.begin``/``finish``);
    - commit before ack: the response leaves only once every write made so far is committed
      (``Store.durable``); a failed commit turns it into a 500 InternalError;
    - deadline: a request that is not long-running and not answered within ``request_timeout`` or
      the shorter ``?timeout=`` it gives (a bad one is a 400) gets kube's 504 and its connection
      is closed (a write already made still waits for its commit); deadlines are kept in
      ``Deadlines`` (one timer per slot of ``Deadlines.SLOT`` seconds, not one per request);
    - errors: every failure below as a Status (``_error_response``);
    - ``authenticate`` (401), ``MaxInFlight`` (429), ``impersonate`` and ``authorize`` (403)."""
    inflight = MaxInFlight(max_requests_inflight, max_mutating_requests_inflight)
    deadlines = Deadlines()

    async def guarded(request: Request, waits: bool) -> AnyResponse:
        try:
            unauthorized = authenticate(credentials, request)
            if unauthorized is not None:
                return unauthorized
            seat = inflight.enter(request, waits)
            if seat == MaxInFlight.REFUSED:
                return _too_many()
            try:
                impersonate(authorizer, request)
                authorize(authorizer, request)
                with bodies.deep_request():  # deeply nested values get the raised recursion limit
                    return await handler(request)
            finally:
                inflight.exit(seat)
        except Exception as err:  # CancelledError is no Exception: it passes
            return _error_response(request, err)

    async def serve(request: Request) -> AnyResponse:
        observation = metrics.begin(request)
        code = 500
        try:
            waits = long_running(request)
            response: AnyResponse | None = None
            limit = 0.0
            if not waits:
                try:
                    limit = _request_deadline(request.query.get("timeout", ""), request_timeout)
                except ValueError as err:
                    response = json_response(bad_request(f"invalid timeout specified in the request URL - {err}").status,
                                             400)
            if response is None:
                if limit > 0:
                    expiry = RequestExpiry()  # no task of its own, unlike wait_for
                    slot = deadlines.file(expiry, limit)
                    try:
                        response = await guarded(request, waits)
                    except asyncio.CancelledError:
                        if not expiry.settle(cancelled=True):
                            raise
                        response = _timed_out(request)
                    else:
                        expiry.settle(cancelled=False)
                    finally:
                        deadlines.unfile(slot, expiry)
                else:
                    response = await guarded(request, waits)
            waiting = store.durable()
            if waiting is not None:
                response = await _committed(request, response, waiting)
            code = response.status
            return response
        finally:
            metrics.finish(observation, code)
    return serve


class Expiring(Protocol):
    """What ``Deadlines`` files: an entered ``asyncio.Timeout`` or a ``RequestExpiry``."""

    def reschedule(self, when: float | None) -> None:
        """Expire at loop time ``when`` (``Deadlines`` passes now: expire at once)."""


class RequestExpiry:
    """A request's deadline as the filter chain keeps it: ``asyncio.Timeout``'s bookkeeping without
    its object layers (two coroutines and a timer handle per request). Made in the request's task
    (it records how many cancellations the task has pending); ``reschedule`` (its slot expired)
    cancels the task; the chain then calls ``settle`` once the request's coroutine ended, which
    takes that cancellation back and says whether the request timed out: it did when the
    coroutine ended in ``CancelledError`` and no other cancellation is pending (as
    ``asyncio.Timeout.__aexit__`` raises ``TimeoutError``)."""

    __slots__ = ("_cancelling", "_expired", "_task")

    def __init__(self) -> None:
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a request deadline must be made inside a task")
        self._task = task
        self._cancelling = task.cancelling()
        self._expired = False

    def reschedule(self, when: float | None) -> None:
        """The deadline passed (``Deadlines``): cancel the request's task, once."""
        if not self._expired:
            self._expired = True
            self._task.cancel()

    def settle(self, cancelled: bool) -> bool:
        """The request's coroutine ended (``cancelled``: in ``CancelledError``): whether it timed out."""
        if not self._expired:
            return False
        return self._task.uncancel() <= self._cancelling and cancelled


class Deadlines:
    """The deadlines of the requests in flight, without a timer per request (a cancelled timer
    stays in the event loop's heap until it is rebuilt, so one per request grows the heap by
    every request of the last ``request_timeout`` and costs a Python comparison per heap level on
    each push): a request's ``RequestExpiry`` (or an ``asyncio.Timeout`` entered without a
    deadline) is filed under the slot of ``SLOT`` seconds its deadline falls in; one timer per
    slot, at the slot's end, reschedules every one still filed there to now, so the request gets
    its timeout as from its own timer, at most ``SLOT`` seconds late."""

    SLOT = 0.1

    def __init__(self) -> None:
        self._slots: dict[int, set[Expiring]] = {}

    def file(self, timeout: Expiring, limit: float) -> int:
        """File the entered ``timeout`` to expire ``limit`` seconds from now; returns its slot
        (give it to ``unfile`` once the request is answered)."""
        loop = asyncio.get_running_loop()
        slot = math.ceil((loop.time() + limit) / self.SLOT)
        members = self._slots.get(slot)
        if members is None:
            members = self._slots[slot] = set()
            loop.call_at(slot * self.SLOT, self._expire, slot)
        members.add(timeout)
        return slot

    def unfile(self, slot: int, timeout: Expiring) -> None:
        """``timeout``'s request is over: its slot no longer expires it."""
        members = self._slots.get(slot)
        if members is not None:
            members.discard(timeout)

    def _expire(self, slot: int) -> None:
        now = asyncio.get_running_loop().time()
        for timeout in self._slots.pop(slot, ()):
            timeout.reschedule(now)


async def _committed(request: Request, response: AnyResponse,
                     waiting: asyncio.Future[None]) -> AnyResponse:
    """``response`` once the writes ``waiting`` (``Store.durable``) stands for are committed, or a
    500 if the commit failed."""
    try:
        await waiting
    except Exception as err:
        log.error("storage commit failed serving %s %s: %s", request.method, request.path_qs, err)
        if response.prepared:
            raise
        return _internal_error(f"storage commit failed: {err}")
    return response


def _error_response(request: Request, err: Exception) -> Response:
    """The Status answer to ``err``: an ``APIError`` with its code, anything unexpected as a
    logged 500 InternalError (a bug); re-raises a reset connection."""
    if isinstance(err, APIError):
        if err.encoded is not None:
            return Response(body=err.encoded, status=err.code, content_type="application/json", headers=err.headers)
        return json_response(err.status, err.code, err.headers)
    if isinstance(err, ConnectionResetError):
        raise err
    if isinstance(err, RecursionError):  # a backstop: a walk the raised limit did not cover
        log.warning("nesting too deep serving %s %s", request.method, request.path_qs, exc_info=err)
        too_deep = bad_request(f"the object is nested too deeply: {bodies.depth_error()}")
        return json_response(too_deep.status, too_deep.code)
    log.error("internal error serving %s %s", request.method, request.path_qs, exc_info=err)
    return _internal_error(f"{type(err).__name__}: {err}")


def _timed_out(request: Request) -> Response:
    """kube's 504 for a request past its deadline (its connection closed); a ConnectionError when
    the response had already begun."""
    if request.started:
        raise ConnectionError("the request timed out after its response began") from None
    response = json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                              "message": "Timeout: request did not complete within requested timeout - "
                                         "context deadline exceeded",
                              "reason": "Timeout", "details": {}, "code": 504}, 504)
    response.force_close()
    return response


def authenticate(credentials: Credentials, request: Request) -> Response | None:
    """A 401 Unauthorized (logged as verb ``unauthorized``) unless the request bears the server's
    token or a service account token it issued, else None with the user stored as
    ``request[authentication.USER_KEY]`` (``authentication.user_of``); ``PUBLIC_PATHS`` need none
    (their requests run as ``system:anonymous``)."""
    token = credentials.token
    if token is None:
        request[authentication.USER_KEY] = authentication.ADMIN
        return None
    auth = request.headers.get("Authorization", "")  # undecodable bytes arrive as surrogates
    user = (authentication.authenticate_token(credentials.store, token, auth[7:].strip(), credentials.api_audiences)[0]
            if auth.startswith("Bearer ") else None)
    if user is None:
        path = request.path
        if path not in PUBLIC_PATHS:
            credentials.requests.append(RequestRecord(request.headers.get("User-Agent", ""), "unauthorized", path))
            return json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                  "message": "Unauthorized", "reason": "Unauthorized", "code": 401}, 401)
        user = authentication.ANONYMOUS
    request[authentication.USER_KEY] = user
    return None


def impersonate(authorizer: Authorizer, request: Request) -> None:
    """``Impersonate-User``/``-Group``/``-Uid``/``-Extra-*`` (``authorization.impersonation``):
    each impersonated attribute must be allowed (verb ``impersonate``; else an ``APIError``),
    then the request runs as the impersonated user."""
    for header in request.headers:
        if header[:12].lower() == "impersonate-":
            request[authentication.USER_KEY] = impersonation.impersonate(
                authorizer, authentication.user_of(request), request.headers)
            return


def authorize(authorizer: Authorizer, request: Request) -> None:
    """Raise 403 Forbidden (kube's message and details) unless the authorizer allows the
    request's attributes (``authorization.attributes.from_request``)."""
    user = authentication.user_of(request)
    if not user.is_master:
        attrs = from_request(user, request.method, request.path, request.query)
        decision = authorizer.authorize(attrs)
        if not decision.allowed:
            err = forbidden(attrs, decision.reason)
            for listener in authorizer.denial_listeners:
                listener(attrs, err.status)
            raise err


REQUEST_TIMEOUT = 60.0
"""kube-apiserver's ``--request-timeout``: a request that is not long-running (watches, the pod
connect verbs) and has not been answered by then gets 504."""
MAX_REQUESTS_INFLIGHT = 400
MAX_MUTATING_REQUESTS_INFLIGHT = 200
"""kube-apiserver's ``--max-requests-inflight`` and ``--max-mutating-requests-inflight``."""
_LONG_RUNNING = ("exec", "attach", "portforward", "log", "proxy")
_MUTATING = ("POST", "PUT", "PATCH", "DELETE")


def long_running(request: Request) -> bool:
    """Whether ``request`` is long-running as kube-apiserver's LongRunningFunc says: a watch
    (``?watch=true`` or a ``/watch/`` path) or a pod connect verb / proxy."""
    path = request.path
    if request.query.get("watch", "").lower() in ("true", "1") or "/watch/" in path:
        return True
    return path.rstrip("/").rsplit("/", 1)[-1] in _LONG_RUNNING


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


class MaxInFlight:
    """The MaxInFlight filter: at most ``readonly`` non-mutating and ``mutating`` mutating
    requests (long-running ones aside) are served at once; one more gets a 429 "Too many
    requests, please try again later." (plain text, ``Retry-After: 1``), which clients retry.
    Members of ``system:masters`` are exempt, as in kube-apiserver; runs after authentication."""

    EXEMPT, READONLY, MUTATING, REFUSED = 0, 1, 2, -1

    def __init__(self, readonly: int, mutating: int) -> None:
        self.counts = [0, 0, 0]
        self.limits = [0, readonly, mutating]

    def enter(self, request: Request, long_running: bool) -> int:
        """Take a seat for ``request``: the seat to give back with ``exit`` (``EXEMPT``: none
        needed), or ``REFUSED`` when the limit is reached (answer ``_too_many()``)."""
        if long_running or authentication.user_of(request).is_master:
            return self.EXEMPT
        kind = self.MUTATING if request.method in _MUTATING else self.READONLY
        if 0 < self.limits[kind] <= self.counts[kind]:
            return self.REFUSED
        self.counts[kind] += 1
        return kind

    def exit(self, seat: int) -> None:
        """Give back the seat ``enter`` took."""
        if seat > 0:
            self.counts[seat] -= 1


def _too_many() -> Response:
    return Response(status=429, text="Too many requests, please try again later.\n",
                        headers={"Retry-After": "1", "X-Content-Type-Options": "nosniff"})
