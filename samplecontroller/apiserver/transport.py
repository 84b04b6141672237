"""The embedded API server's connections: header-read deadline and protocol errors as Status.

- ``HEADER_TIMEOUT`` (32 s, kube-apiserver's ``ReadHeaderTimeout``): a request header must be
  complete within that time of a new connection, or of the first bytes of a later request on a
  kept-alive connection; a TLS handshake gets as long. Slow clients ("slowloris") therefore
  cannot hold connections open.
- ``IDLE_TIMEOUT`` (90 s, kube-apiserver's ``IdleTimeout``, http.DefaultTransport's keep-alive):
  how long a kept-alive connection may wait, idle, for its next request (Go's ``Peek`` before
  the header deadline starts), so clients that reuse a connection after a pause find it open.
  Both deadlines run on aiohttp's keep-alive timer.
- Errors aiohttp's HTTP parser raises before the application sees a request (bad method,
  header line too long, malformed request line) are answered with a ``Status`` object, not
  aiohttp's plain text, and the connection is closed.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

import msgspec
from aiohttp import web
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest

__all__ = ["HEADER_TIMEOUT", "IDLE_TIMEOUT", "LINGERING_TIME", "HeaderTimeoutSite", "StatusRequestHandler", "status_reason"]

log = logging.getLogger(__name__)

HEADER_TIMEOUT = 32.0
IDLE_TIMEOUT = 90.0
LINGERING_TIME = 0.5
"""How long the rest of an unread request body is read and dropped after the response before
the connection closes (Go's rstAvoidanceDelay; aiohttp's default of 10 s would hold slow-body
connections that long)."""

_REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
            406: "NotAcceptable", 408: "Timeout", 409: "Conflict", 410: "Expired", 413: "RequestEntityTooLarge",
            415: "UnsupportedMediaType", 422: "Invalid", 429: "TooManyRequests", 500: "InternalError",
            503: "ServiceUnavailable", 504: "Timeout"}


def status_reason(code: int) -> str:
    """The Kubernetes ``StatusReason`` for an HTTP code ("" when Kubernetes has none)."""
    return _REASONS.get(code, "")


def status_body(code: int, message: str) -> bytes:
    """A Failure ``Status`` object for ``code`` as JSON."""
    status: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                              "message": message, "code": code}
    reason = status_reason(code)
    if reason:
        status["reason"] = reason
    return msgspec.json.encode(status)


class StatusRequestHandler(RequestHandler):
    """aiohttp's connection handler, answering errors raised outside the application
    (the HTTP parser's, or an exception escaping it) with a ``Status`` and closing; its
    keep-alive timer enforces Go's deadlines: ``header_timeout`` for the first request's header
    and for a later one's from its first byte, the keep-alive timeout (``IDLE_TIMEOUT``) while
    idle between requests."""

    __slots__ = ("_header_timeout", "_partial_header")

    def __init__(self, *args: Any, header_timeout: float = HEADER_TIMEOUT, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timeout = header_timeout
        self._partial_header = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._close_at(self._loop.time() + self._header_timeout)

    def data_received(self, data: bytes) -> None:
        idle = self._waiter is not None and not self._waiter.done() and not self._messages
        super().data_received(data)
        if self._messages:
            self._partial_header = False
        elif idle and not self._partial_header and data:
            self._partial_header = True  # the next request began: its header has header_timeout
            self._close_at(self._loop.time() + self._header_timeout)

    def _close_at(self, when: float) -> None:
        """Move the keep-alive timer's deadline to ``when``. A timer already due by then is kept:
        firing early, it re-arms itself for the deadline (aiohttp's ``_process_keepalive``), so a
        busy connection does not replace its timer on every request."""
        if self._keepalive_timeout <= 0:
            return
        self._next_keepalive_close_time = when
        handle = self._keepalive_handle
        if handle is not None:
            if isinstance(handle, asyncio.TimerHandle) and not handle.cancelled() and handle.when() <= when:
                return
            handle.cancel()
        self._keepalive_handle = self._loop.call_at(when, self._process_keepalive)

    def handle_error(self, request: BaseRequest, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        if status >= 500:
            log.error("error handling request", exc_info=exc)
        else:
            log.debug("bad request from %s: %s", request.remote, message or exc)
        if request.writer.output_size > 0:
            raise ConnectionError("the response was already started; cannot send the error")
        if status >= 500:
            text = "Internal error occurred: the server could not handle the request"
        else:
            detail = (message or HTTPStatus(status).phrase).strip().splitlines()[0] if (message or "").strip() \
                else HTTPStatus(status).phrase
            text = f"the server could not parse the request: {detail}"[:1000]
        response = web.Response(status=status, body=status_body(status, text), content_type="application/json")
        response.force_close()
        return response


class HeaderTimeoutSite(web.BaseSite):
    """Serve ``runner``'s application on a bound socket with ``StatusRequestHandler``
    connections; TLS handshakes get ``header_timeout`` too (Go's http.Server derives its
    handshake deadline from the read-header timeout)."""

    __slots__ = ("_factory", "_handshake_timeout", "_name", "_sock")

    def __init__(self, runner: web.BaseRunner, sock: socket.socket, *, ssl_context: ssl.SSLContext | None,
                 header_timeout: float, handler_kwargs: dict[str, Any], backlog: int = 1024,
                 idle_timeout: float = IDLE_TIMEOUT) -> None:
        super().__init__(runner, ssl_context=ssl_context, backlog=backlog)
        self._sock = sock
        self._handshake_timeout = header_timeout
        host, port = sock.getsockname()[:2]
        self._name = f"{'https' if ssl_context else 'http'}://{host}:{port}"
        server = runner.server
        assert server is not None

        def factory() -> StatusRequestHandler:
            return StatusRequestHandler(server, loop=asyncio.get_running_loop(), keepalive_timeout=idle_timeout,
                                        header_timeout=header_timeout, **handler_kwargs)
        self._factory: Callable[[], StatusRequestHandler] = factory

    @property
    def name(self) -> str:
        return self._name

    async def start(self) -> None:
        await super().start()
        loop = asyncio.get_running_loop()
        if self._ssl_context is not None:
            self._server = await loop.create_server(self._factory, sock=self._sock, ssl=self._ssl_context,
                                                    backlog=self._backlog,
                                                    ssl_handshake_timeout=self._handshake_timeout)
        else:
            self._server = await loop.create_server(self._factory, sock=self._sock, backlog=self._backlog)
