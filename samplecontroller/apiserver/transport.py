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
from typing import Any

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
    (the HTTP parser's, or an exception escaping it) with a ``Status`` and closing."""

    __slots__ = ()

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
                 header_timeout: float, handler_kwargs: dict[str, Any], backlog: int = 1024) -> None:
        super().__init__(runner, ssl_context=ssl_context, backlog=backlog)
        self._sock = sock
        self._handshake_timeout = header_timeout
        host, port = sock.getsockname()[:2]
        self._name = f"{'https' if ssl_context else 'http'}://{host}:{port}"
        server = runner.server
        assert server is not None

        def factory() -> StatusRequestHandler:
            return StatusRequestHandler(server, loop=asyncio.get_running_loop(), keepalive_timeout=header_timeout,
                                        **handler_kwargs)
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
