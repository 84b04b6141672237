"""The embedded API server's connections: its own HTTP/1.1 server, deadlines as Go's net/http
keeps them, and protocol errors as Status.

Chosen by measurement (``benchmarks/bench_apiserver.py``): aiohttp's server, over asyncio's TLS
protocol (pure Python), spent about as much CPU per write as the API server's own work. Here a
connection is a socket the event loop watches (``rest.http11.SocketConnection``, TLS in C through
``ssl.SSLSocket``), read into the same ``Wire`` the client parses responses from; one task per
connection reads a request head, runs the handler in that task and writes its response.

- ``HEADER_TIMEOUT`` (32 s, kube-apiserver's ``ReadHeaderTimeout``): a request header must be
  complete within that time of a new connection (its TLS handshake included), or of the first
  byte of a later request on a kept-alive connection. Slow clients ("slowloris") therefore
  cannot hold connections open.
- ``IDLE_TIMEOUT`` (90 s, kube-apiserver's ``IdleTimeout``, http.DefaultTransport's keep-alive):
  how long a kept-alive connection may wait, idle, for its next request.
- Keep-alive as HTTP/1.1 says: a request with ``Connection: close``, an HTTP/1.0 one without
  ``Connection: keep-alive``, a response that forces a close, a streamed response without chunked
  encoding, or a request body left unread beyond ``DISCARD_LIMIT`` closes the connection after the
  response, as does one whose client still waits for its ``100 Continue``. An unread body within
  that limit is read and dropped (within ``LINGERING_TIME``) so that the connection can carry the
  next request.
- A client that closes its connection while its request is served cancels the handler (as the
  request context of Go's server is cancelled), watches included.
- A malformed request head (bad request line, method, target or header line, conflicting
  framing) is answered with a 400 ``Status`` object and the connection is closed; a head over
  1 MiB with a 431 (Go's ``DefaultMaxHeaderBytes``); an HTTP version other than 1.0 and 1.1
  with a 505, except the HTTP/2 connection preface (``PRI * HTTP/2.0``), which Go's server hands
  to its handlers (answered, here as there, with a 4xx) and then closes the connection. An exception escaping the handler (a bug) is logged and answered with a 500 Status.
- ``HTTPServer.close``: no new connections; idle ones are closed, requests in progress get
  ``shutdown_timeout`` seconds to finish and are then cancelled.

Needs an event loop with ``add_reader`` (selector loops, uvloop); ``HTTPServer.start`` refuses
any other loop with a message that says so.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
from http import HTTPStatus
from typing import Any

import msgspec

from samplecontroller.apiserver.httpmessages import (
    BadRequest,
    Handler,
    Request,
    Response,
    StreamResponse,
    framing,
    parse_request_head,
)
from samplecontroller.rest.http11 import (
    ConnectionDropped,
    IncompleteResponse,
    ProtocolError,
    SocketConnection,
    handshake,
)

__all__ = ["DISCARD_LIMIT", "HEADER_TIMEOUT", "IDLE_TIMEOUT", "LINGERING_TIME", "HTTPServer", "status_body",
           "status_reason"]

log = logging.getLogger(__name__)

HEADER_TIMEOUT = 32.0
IDLE_TIMEOUT = 90.0
LINGERING_TIME = 0.5
"""How long the rest of an unread request body is read and dropped after the response (Go's
rstAvoidanceDelay), before the connection closes or carries the next request."""
DISCARD_LIMIT = 256 * 1024
"""The most of an unread request body that is read and dropped to keep the connection (Go's
``maxPostHandlerReadBytes``); a longer rest closes it."""

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
                              "message": message}
    reason = status_reason(code)
    if reason:
        status["reason"] = reason
    status["code"] = code
    return msgspec.json.encode(status) + b"\n"


def _status_response(code: int, message: str) -> Response:
    response = Response(body=status_body(code, message), status=code, content_type="application/json")
    response.force_close()
    return response


def _keep_alive(version: tuple[int, int], connection: str) -> bool:
    if version == (2, 0):
        return False  # the HTTP/2 preface (PRI *): closed after its answer, as Go sets its req.Close
    tokens = connection.lower()
    return "close" not in tokens if version >= (1, 1) else "keep-alive" in tokens


async def _linger(conn: SocketConnection) -> None:
    """Before closing: send what is buffered, then read and drop what the client still sends,
    until it closes or ``LINGERING_TIME`` passes (closing with unread bytes would reset the
    connection, and the client could lose the response)."""
    conn.deadline = conn.loop.time() + LINGERING_TIME
    try:
        await conn.drain()
        while await conn.drive(conn.wire.some()):
            pass
    except (TimeoutError, OSError, ProtocolError):
        pass


class HTTPServer:
    """Serve ``handler`` on ``sock`` (bound, listening, non-blocking; see the module docstring).
    ``ssl_context``: TLS (None: plain HTTP); ``max_body``: the longest request body read."""

    def __init__(self, handler: Handler, sock: socket.socket, *, ssl_context: ssl.SSLContext | None,
                 max_body: int, header_timeout: float = HEADER_TIMEOUT, idle_timeout: float = IDLE_TIMEOUT,
                 shutdown_timeout: float = 1.0) -> None:
        self._handler = handler
        self._sock = sock
        self._ssl = ssl_context
        self._scheme = "https" if ssl_context is not None else "http"
        self._max_body = max_body
        self._header_timeout = header_timeout
        self._idle_timeout = idle_timeout
        self._shutdown_timeout = shutdown_timeout
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Task[None]] = set()  # one per connection, from its accept to its close
        self._busy: set[asyncio.Task[None]] = set()
        self._closing = False

    async def start(self) -> None:
        """Start accepting connections on the running loop."""
        loop = self._loop = asyncio.get_running_loop()
        try:
            loop.add_reader(self._sock.fileno(), self._accept)
        except NotImplementedError:
            raise RuntimeError("the embedded API server needs an event loop that watches sockets (add_reader): "
                               "a selector event loop or uvloop, not the proactor loop") from None

    def _accept(self) -> None:
        assert self._loop is not None
        for _ in range(64):
            try:
                sock, address = self._sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as err:  # out of file descriptors, for one: the next readiness tries again
                log.warning("accepting a connection failed: %s", err)
                return
            sock.setblocking(False)
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            remote = str(address[0]) if isinstance(address, tuple) else None
            task = self._loop.create_task(self._connection(sock, remote))
            self._tasks.add(task)
            task.add_done_callback(self._forget)

    def _forget(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._busy.discard(task)

    async def _connection(self, sock: socket.socket, remote: str | None) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._header_timeout
        if self._ssl is not None:
            try:
                async with asyncio.timeout_at(deadline):
                    sock = await handshake(loop, self._ssl.wrap_socket(sock, server_side=True,
                                                                        do_handshake_on_connect=False))
            except (OSError, TimeoutError) as err:
                log.debug("TLS handshake with %s failed: %s", remote, err)
                sock.close()
                return
        conn = SocketConnection(loop, sock)
        task = asyncio.current_task()
        assert task is not None
        try:
            await self._serve(conn, remote, deadline, task)
        except (OSError, TimeoutError, ProtocolError):
            pass  # the connection failed or a deadline passed: it closes
        finally:
            conn.abort()

    async def _serve(self, conn: SocketConnection, remote: str | None, deadline: float,
                     task: asyncio.Task[None]) -> None:
        """Serve the requests of ``conn`` until it closes (the first one's head due by ``deadline``)."""
        loop = conn.loop
        wire = conn.wire
        first = True
        while not self._closing:
            conn.deadline = deadline
            try:
                method, target, version, headers = parse_request_head(await conn.drive(wire.head()))
                body = framing(method, headers)
            except (ConnectionDropped, IncompleteResponse):
                return  # closed before or inside a head: nobody to answer
            except BadRequest as err:
                return await self._refuse(conn, err.code, str(err))
            except ProtocolError as err:  # the head is over 1 MiB
                return await self._refuse(conn, 431, f"request header fields too large: {err}")
            conn.deadline = None
            request = Request(conn, method, target, version, headers, body, scheme=self._scheme, remote=remote,
                              max_body=self._max_body, first=first)
            first = False
            self._busy.add(task)
            try:
                response = await self._respond(conn, request, task)
            finally:
                self._busy.discard(task)
            if response is None:
                return  # the client went away
            keep = _keep_alive(version, headers.get("Connection", "")) and response.keep_alive
            if isinstance(response, Response):
                if not body.done and (body.kind != "length" or body.length - wire.unread() > DISCARD_LIMIT
                                      or (body.expect_continue and not body.continue_sent)):
                    keep = False  # as Go's server: a client still waiting for 100 Continue may never send it
                conn.send(response.encode(method == "HEAD", not keep))
            else:
                keep = await self._finish(response, request) and keep
            if not body.done:
                keep = await self._discard(conn, request, keep)
            if not keep or self._closing:
                await conn.drain()
                return
            if not wire.unread():  # idle until the next request's first byte
                conn.deadline = loop.time() + self._idle_timeout
                try:
                    await conn.drive(wire.arrival())
                except ConnectionDropped:
                    return
            deadline = loop.time() + self._header_timeout

    async def _respond(self, conn: SocketConnection, request: Request,
                       task: asyncio.Task[None]) -> Response | StreamResponse | None:
        """The handler's response; None when the client closed the connection meanwhile (the
        handler is cancelled then)."""
        gone = False

        def client_gone() -> None:
            nonlocal gone
            gone = True
            task.cancel()

        conn.on_end = client_gone
        try:
            return await self._handler(request)
        except asyncio.CancelledError:
            if gone and not self._closing:
                task.uncancel()
                return None
            raise
        except Exception as err:
            if isinstance(err, (ConnectionError, ssl.SSLError)) and conn.gone():
                return None  # reading the body or writing the response failed: the client is gone
            log.exception("error handling %s %s", request.method, request.path_qs)
            if request.started:
                return None  # a streamed response began: the connection just closes
            return _status_response(500, "Internal error occurred: the server could not handle the request")
        finally:
            conn.on_end = None

    async def _finish(self, response: StreamResponse, request: Request) -> bool:
        """End a streamed response the handler left open; whether the connection may be kept."""
        if not response.prepared:
            await response.prepare(request)
        if not response.finished:
            await response.write_eof()
        return response.keep_alive

    async def _discard(self, conn: SocketConnection, request: Request, keep: bool) -> bool:
        """Read and drop what is left of ``request``'s body (within ``LINGERING_TIME``); whether the
        connection may carry the next request."""
        if not keep:
            await _linger(conn)
            return False
        conn.deadline = conn.loop.time() + LINGERING_TIME
        try:
            return bool(await conn.drive(request.body.discard(conn.wire, DISCARD_LIMIT)))
        except (TimeoutError, OSError, ProtocolError):
            return False

    async def _refuse(self, conn: SocketConnection, code: int, message: str) -> None:
        """Answer a request that cannot be read with a Status and close the connection."""
        log.debug("bad request: %s", message)
        detail = " ".join(message.split()) or HTTPStatus(code).phrase
        text = f"the server could not parse the request: {detail}"[:1000]
        conn.send(_status_response(code, text).encode(False, True))
        await _linger(conn)

    async def close(self) -> None:
        """Stop serving (see the module docstring)."""
        self._closing = True
        if self._loop is not None:
            self._loop.remove_reader(self._sock.fileno())
        self._sock.close()
        for task in list(self._tasks):
            if task not in self._busy:
                task.cancel()
        if self._busy:
            await asyncio.wait(list(self._busy), timeout=self._shutdown_timeout)
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
