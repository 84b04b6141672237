"""The embedded API server's connections: header-read deadline and protocol errors as Status.

- ``HEADER_TIMEOUT`` (32 s, kube-apiserver's ``ReadHeaderTimeout``): a connection that has not
  delivered a complete request header within that time of connecting (or of its previous
  response) is closed, and so is a TLS handshake that takes longer. Slow clients
  ("slowloris") therefore cannot hold connections open. The deadline is aiohttp's keep-alive
  timer, so an idle kept-alive connection is also closed after it (Go waits 90 s there).
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
from typing import Any, cast

import msgspec
from aiohttp import web
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest

__all__ = ["HEADER_TIMEOUT", "HeaderTimeoutSite", "StatusRequestHandler", "status_reason"]

log = logging.getLogger(__name__)

HEADER_TIMEOUT = 32.0

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
    (the HTTP parser's, or an exception escaping it) with a ``Status`` and closing. With
    ``open_transports``, its transport is in that set from connection_made to connection_lost."""

    __slots__ = ("_open_transports", "_own_transport")

    def __init__(self, manager: Any, *, open_transports: set[asyncio.Transport] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._open_transports = open_transports
        self._own_transport: asyncio.Transport | None = None  # aiohttp drops self.transport on close

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        if self._open_transports is not None:
            self._own_transport = cast(asyncio.Transport, transport)
            self._open_transports.add(self._own_transport)

    def connection_lost(self, exc: BaseException | None) -> None:
        if self._open_transports is not None and self._own_transport is not None:
            self._open_transports.discard(self._own_transport)
            self._own_transport = None
        super().connection_lost(exc)

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

    __slots__ = ("_factory", "_handshake_timeout", "_name", "_sock", "_transports")

    def __init__(self, runner: web.BaseRunner, sock: socket.socket, *, ssl_context: ssl.SSLContext | None,
                 header_timeout: float, handler_kwargs: dict[str, Any], backlog: int = 1024) -> None:
        super().__init__(runner, ssl_context=ssl_context, backlog=backlog)
        self._sock = sock
        self._handshake_timeout = header_timeout
        host, port = sock.getsockname()[:2]
        self._name = f"{'https' if ssl_context else 'http'}://{host}:{port}"
        server = runner.server
        assert server is not None
        self._transports: set[asyncio.Transport] = set()
        transports = self._transports

        def factory() -> StatusRequestHandler:
            return StatusRequestHandler(server, loop=asyncio.get_running_loop(), keepalive_timeout=header_timeout,
                                        open_transports=transports, **handler_kwargs)
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

    async def abort_connections(self) -> None:
        """Abort every connection still open, then let the loop run their ``connection_lost``.

        For after the runner's graceful shutdown (``runner.cleanup()``): it closes each
        connection, but a TLS connection whose peer does not answer the close_notify (a client
        thread that is not reading, a watch) keeps its socket open for up to the loop's
        ssl_shutdown_timeout. Left to the garbage collector once the loop is closed, such a
        transport warns ``unclosed transport`` and, on Python 3.13, its ``__del__`` calls
        ``asyncio.Server._detach`` on a server that has already woken its waiters.
        """
        for transport in list(self._transports):
            transport.abort()
        # Python 3.13's _SSLProtocolTransport forgets its connection when closed a second time (as
        # aiohttp's shutdown does), so aborting it does nothing there; 3.13's Server.abort_clients
        # aborts the sockets under it (and connections still in their TLS handshake)
        abort_clients = getattr(self._server, "abort_clients", None)
        if abort_clients is not None:
            abort_clients()
        for _ in range(100):
            if not self._transports:
                return
            await asyncio.sleep(0)
        log.warning("%d connections still open after they were aborted", len(self._transports))

