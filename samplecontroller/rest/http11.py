"""A lean HTTP/1.1 client on asyncio: the async transport's connections to the API server, and the
response parser the sync transport shares with it (``Wire``).

``AsyncRESTClient`` sends its requests through a ``ConnectionPool`` when no proxy is configured
(through a proxy it uses aiohttp). Chosen by measurement (``benchmarks/bench_async_http.py``):
aiohttp's per-request machinery (request and response objects, header multidicts, URL
objects, timers, traces) cost about twice the CPU of the exchange itself on the embedded API
server; this client does only what a Kubernetes client needs:

- keep-alive connections, at most ``limit`` in use by requests at once (a request beyond them
  waits for one to come back; a stream has a connection of its own on top), the most recently
  used reused first; a connection the server closed while idle is
  dropped before reuse; a response with ``Connection: close``, an HTTP/1.0 response without
  keep-alive, or one read to EOF closes its connection;
- TLS through the given ``ssl.SSLContext`` (verification, client certificates and the server
  name as the caller set them); ``server_hostname`` for SNI and verification;
- response bodies framed by ``Content-Length``, ``Transfer-Encoding: chunked`` (trailers
  skipped) or EOF; no body for HEAD, 1xx, 204 and 304; interim 1xx responses skipped;
- timeouts: ``connect_timeout`` for the TCP and TLS handshake, ``read_timeout`` (None: none)
  for each wait on the server (the head, then each piece of the body), as a socket timeout;
- errors: ``ConnectionDropped`` when the connection closed before any byte of the response
  (a reused one the server closed meanwhile: the caller may resend an idempotent request),
  ``IncompleteResponse`` when it closed inside one, ``ProtocolError`` for a malformed
  response, ``TimeoutError``, else the OSError raised; the connection of a failed or cancelled
  exchange is closed, never reused;
- a connection's socket is watched by the loop (``add_reader``) and read in C (TLS through
  ``ssl.SSLSocket``) into a ``Wire``; the response is parsed as bytes arrive, and the request's
  task wakes once per read (no asyncio transport, TLS protocol or stream reader between, no
  timer per request: one lazy timer per connection). On a loop without ``add_reader`` (the
  proactor loop) connections are asyncio transports feeding the same ``Wire``;
- streams (watches): ``open_stream`` returns a ``StreamingResponse`` whose ``lines()`` yields
  the body's lines as they arrive; its connection is closed (never reused) when it ends.

A request head is validated as http.client does: no control characters or spaces in the
request target, no CR/LF in a header value (``ValueError``).
"""

from __future__ import annotations

import asyncio
import collections
import functools
import math
import re
import socket
import ssl
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Mapping
from typing import TypeVar, cast, overload

__all__ = ["Body", "Connection", "ConnectionDropped", "ConnectionPool", "Headers", "IncompleteResponse",
           "ProtocolConnection", "ProtocolError", "Response", "SocketConnection", "Step", "StreamingResponse", "Wire",
           "chunk_size", "drive", "encode_headers", "framing", "handshake", "parse_head", "request_head"]

_D = TypeVar("_D")
T = TypeVar("T")

_READ_LIMIT = 2**20
"""Longest response head or chunk-size line accepted; also how many unparsed bytes an async
connection buffers before it pauses reading."""
_BODY_PIECE = 2**20
"""A body is read in pieces of at most this size, each within ``read_timeout``."""
_BAD_TARGET = re.compile(r"[\x00-\x20\x7f]")
_BAD_VALUE = re.compile(r"[\r\n\x00]")
_BLANKS = " \t\r\n\x0b\x0c"
"""What ``bytes.strip()`` strips: a header name must not start or end with one."""


class ProtocolError(Exception):
    """The server's response is not valid HTTP/1.1 (the message says what was wrong)."""


class ConnectionDropped(ConnectionError):
    """A reused keep-alive connection was closed by the server before any byte of the response."""


class Headers(Mapping[str, str]):
    """Response headers: case-insensitive ``get``/``[]`` (the first value), ``get_all`` (every value,
    in order, as http.client's ``HTTPMessage.get_all``)."""

    __slots__ = ("_items",)

    def __init__(self, items: list[tuple[str, str]]) -> None:
        self._items = items  # (lowercased name, value)

    def __getitem__(self, name: str) -> str:
        key = name.lower()
        for k, v in self._items:
            if k == key:
                return v
        raise KeyError(name)

    @overload
    def get(self, name: str, /) -> str | None: ...

    @overload
    def get(self, name: str, default: str | _D, /) -> str | _D: ...

    def get(self, name: str, default: object = None, /) -> object:
        """The first value of ``name`` (any case), else ``default``."""
        key = name.lower()
        for k, v in self._items:
            if k == key:
                return v
        return default

    def get_all(self, name: str, default: list[str] | None = None) -> list[str] | None:
        """Every value of ``name`` in order, or ``default`` when there is none."""
        key = name.lower()
        found = [v for k, v in self._items if k == key]
        return found or default

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(k for k, _ in self._items))

    def __len__(self) -> int:
        return len(dict.fromkeys(k for k, _ in self._items))

    def __repr__(self) -> str:
        return f"Headers({self._items!r})"


class Response:
    """A response read in full: ``status``, ``headers``, ``data`` (the body)."""

    __slots__ = ("data", "headers", "status")

    def __init__(self, status: int, headers: Headers, data: bytes) -> None:
        self.status = status
        self.headers = headers
        self.data = data


def encode_headers(headers: Mapping[str, str]) -> str:
    """``headers`` as request-head lines (``"Name: value\\r\\n"`` each); ValueError naming a header
    whose name or value would break the head (CR, LF, NUL; a name with ':' or whitespace)."""
    out = []
    for name, value in headers.items():
        if not name or _BAD_TARGET.search(name) or ":" in name or _BAD_VALUE.search(value):
            raise ValueError(f"invalid HTTP header {name!r}: names must be tokens, values must not contain "
                             "CR, LF or NUL")
        out.append(f"{name}: {value}\r\n")
    return "".join(out)


Step = Generator[None, bool, T]
"""A parsing step of ``Wire``: it yields when it needs more bytes than the buffer holds and is then
sent True once more were fed, False at EOF; it returns its result (``drive`` runs one)."""


class IncompleteResponse(ProtocolError):
    """The connection ended (EOF) inside a response."""


class Wire:
    """The read side of one connection without its I/O: the bytes received and not yet parsed
    (``buffer`` from ``pos``), and the HTTP/1.1 response parser over them.

    Each ``read_*``/``chunk_data``/``some`` method is a ``Step``: the sync transport drives it with
    blocking socket reads (``drive``), the async one with its protocol's ``data_received``
    (``ConnectionPool``), so both parse responses with this one code. Requests are not pipelined,
    so bytes past a response are the server's error: the connection is then not reused. EOF before
    the first byte of a response is ``ConnectionDropped`` (a keep-alive connection the server
    closed: an idempotent request may be resent), within it ``IncompleteResponse``; a malformed
    response ``ProtocolError``."""

    __slots__ = ("buffer", "pos")

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.pos = 0

    def feed(self, data: bytes) -> None:
        """Append received bytes (the parsed ones are dropped first)."""
        if self.pos:
            del self.buffer[:self.pos]
            self.pos = 0
        self.buffer += data

    def unread(self) -> int:
        """How many received bytes are not parsed yet."""
        return len(self.buffer) - self.pos

    def read_head(self) -> Step[tuple[int, bytes, Headers]]:
        """Status, version and headers of the next final response (interim 1xx ones skipped)."""
        while True:
            raw = yield from self._until(b"\r\n\r\n", in_body=False)
            status, version, headers = parse_head(raw)
            if status >= 200 or status == 101:
                return status, version, headers

    def read_response(self, method: str) -> Step[tuple[int, bytes, Headers, bool]]:
        """Status, body and headers of the next final response, and whether the connection may be
        reused after it."""
        status, version, headers = yield from self.read_head()
        kind, length, reusable = framing(method, status, version, headers)
        if kind == "length":
            data = yield from self._exactly(length)
        elif kind == "chunked":
            parts, ended = [], False
            while not ended:
                piece, ended = yield from self.chunk_data()
                parts.append(piece)
            data = b"".join(parts)
        elif kind == "eof":
            data, reusable = (yield from self.to_eof()), False
        else:
            data = b""
        if self.pos == len(self.buffer):
            self.buffer.clear()  # the buffer of a big response is not kept while the connection idles
            self.pos = 0
            return status, data, headers, reusable
        return status, data, headers, False

    def head(self) -> Step[bytes]:
        """The bytes of the next message head, up to and including its empty line (a request's, for
        a server); ``ProtocolError`` past ``_READ_LIMIT`` bytes, ``ConnectionDropped`` at EOF
        before its first byte, ``IncompleteResponse`` inside it."""
        return (yield from self._until(b"\r\n\r\n", in_body=False))

    def exactly(self, n: int) -> Step[bytes]:
        """The next ``n`` bytes (``IncompleteResponse`` at EOF before them)."""
        return (yield from self._exactly(n))

    def arrival(self) -> Step[None]:
        """Until at least one unread byte is buffered; ``ConnectionDropped`` at EOF before one."""
        while self.pos == len(self.buffer):
            yield from self._more(in_body=False)

    def _more(self, in_body: bool = True) -> Step[None]:
        if not (yield):
            if in_body or self.pos < len(self.buffer):
                raise IncompleteResponse(f"the connection closed inside the response, {self.unread()} bytes "
                                         "of it read")
            raise ConnectionDropped("the server closed the connection without a response")

    def _until(self, separator: bytes, in_body: bool = True) -> Step[bytes]:
        searched = 0  # bytes of the unread part already searched (relative: feed may move them)
        while True:
            end = self.buffer.find(separator, self.pos + searched)
            if end >= 0:
                end += len(separator)
                piece = bytes(self.buffer[self.pos:end])
                self.pos = end
                return piece
            unread = len(self.buffer) - self.pos
            if unread > _READ_LIMIT:
                raise ProtocolError(f"response head or chunk-size line longer than {_READ_LIMIT} bytes")
            searched = max(0, unread - len(separator) + 1)
            yield from self._more(in_body)

    def _exactly(self, n: int) -> Step[bytes]:
        while len(self.buffer) - self.pos < n:
            yield from self._more()
        piece = bytes(self.buffer[self.pos:self.pos + n])
        self.pos += n
        return piece

    def chunk_data(self) -> Step[tuple[bytes, bool]]:
        """The data of the chunks of a chunked body that are complete in the buffer, at least one
        (waiting for it), and whether the body ended (its last chunk and trailers read: do not call
        again for it). One step per read from the socket, however many chunks (watch events) it brought."""
        parts: list[bytes] = []
        while True:
            buffer, pos = self.buffer, self.pos
            eol = buffer.find(b"\r\n", pos)
            if eol >= 0:
                size = chunk_size(buffer[pos:eol + 2])
                if size == 0:
                    self.pos = eol + 2
                    while (yield from self._until(b"\r\n")) != b"\r\n":
                        pass  # trailers, up to the empty line
                    return b"".join(parts), True
                end = eol + 2 + size + 2
                if end <= len(buffer):
                    if buffer[end - 2:end] != b"\r\n":
                        raise ProtocolError("chunk not terminated by CRLF")
                    parts.append(bytes(buffer[eol + 2:end - 2]))
                    self.pos = end
                    continue
            elif len(buffer) - pos > _READ_LIMIT:
                raise ProtocolError(f"chunk-size line longer than {_READ_LIMIT} bytes")
            if parts:
                return b"".join(parts), False
            yield from self._more()

    def some(self, limit: int | None = None) -> Step[bytes]:
        """The unread bytes (at most ``limit``), waiting for some; b"" at EOF."""
        if self.pos == len(self.buffer) and not (yield):
            return b""
        end = len(self.buffer) if limit is None else min(len(self.buffer), self.pos + limit)
        piece = bytes(self.buffer[self.pos:end])
        self.pos = end
        return piece

    def to_eof(self) -> Step[bytes]:
        """Everything up to EOF."""
        parts = []
        while piece := (yield from self.some()):
            parts.append(piece)
        return b"".join(parts)


class Body:
    """A streamed response's body read piece by piece off a ``Wire`` (``kind`` and ``length`` from
    ``framing``): ``next`` is the next bytes (for a chunked body, every chunk complete so far), b""
    at the body's end; EOF inside a Content-Length body is ``IncompleteResponse``."""

    __slots__ = ("kind", "left", "wire")

    def __init__(self, wire: Wire, kind: str, length: int) -> None:
        self.wire = wire
        self.kind = kind
        self.left = length

    def next(self, limit: int = _BODY_PIECE) -> Step[bytes]:
        """See the class docstring."""
        if self.kind == "chunked":
            piece, ended = yield from self.wire.chunk_data()
            if ended:
                self.kind = "none"
            return piece  # empty only at the end
        if self.kind == "eof":
            return (yield from self.wire.some(limit))
        if self.kind == "length" and self.left > 0:
            piece = yield from self.wire.some(min(limit, self.left))
            if not piece:
                raise IncompleteResponse(f"the connection closed inside the response body, {self.left} bytes "
                                         "short")
            self.left -= len(piece)
            return piece
        return b""

    def rest(self) -> Step[bytes]:
        """The rest of the body."""
        parts = []
        while piece := (yield from self.next()):
            parts.append(piece)
        return b"".join(parts)


def drive(step: Step[T], fill: Callable[[], bool]) -> T:
    """Run ``step`` to its result, calling ``fill`` (blocking: append bytes to the wire and return
    True, or return False at EOF) whenever it needs more bytes."""
    try:
        next(step)
        while True:
            step.send(fill())
    except StopIteration as done:
        return cast(T, done.value)


class Connection:
    """One HTTP/1.1 connection (a ``ConnectionPool``'s, or one the embedded API server accepted):
    what arrives is fed into its ``Wire``; ``drive`` runs a parsing step, waiting on the loop (never
    blocking it) while the step needs more bytes, each wait bounded by ``timeout`` (seconds per
    wait) or, when set, ``deadline`` (a loop time for every wait until it is unset); a wait past
    it fails with TimeoutError. An idle connection that the peer closed, or that received bytes
    nobody asked for, is not ``alive``. Reading pauses while more than ``_READ_LIMIT`` bytes wait
    unparsed (a slow watch consumer, a client pipelining while its request is served), and resumes
    on the next wait. ``on_end``, when set, is called when the peer closes the connection (or it
    fails) while nothing waits on it (a server's request being handled). The I/O is a
    subclass's: ``SocketConnection`` (the socket watched by the loop) or ``ProtocolConnection``
    (an asyncio transport)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.wire = Wire()
        self.timeout: float | None = None
        self.deadline: float | None = None
        self.on_end: Callable[[], None] | None = None
        self._waiter: asyncio.Future[bool] | None = None
        self._eof = False
        self._error: BaseException | None = None
        self._paused = False
        self._lost: asyncio.Future[None] = loop.create_future()
        self._due = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0

    # -- the I/O, by the subclass ----------------------------------------------------------------

    def send(self, data: bytes) -> None:
        """Write ``data`` (buffered, sent as the socket accepts it)."""
        raise NotImplementedError

    async def drain(self) -> None:
        """Until the bytes buffered for sending are few enough to write more (at once if they are);
        ConnectionResetError if the connection closed."""
        if self._closing():
            raise ConnectionResetError("the connection is closed")

    def close(self) -> None:
        """Close an idle connection."""
        raise NotImplementedError

    def abort(self) -> None:
        """Drop a connection in the middle of an exchange at once (a wait in progress ends)."""
        raise NotImplementedError

    def _closing(self) -> bool:
        raise NotImplementedError

    def _pause(self) -> None:
        raise NotImplementedError

    def _resume(self) -> None:
        raise NotImplementedError

    # -- events from the I/O ---------------------------------------------------------------------

    def _received(self, data: bytes) -> None:
        self.wire.feed(data)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(True)
        elif self.wire.unread() > _READ_LIMIT and not self._paused:
            self._paused = True
            self._pause()

    def _end(self, exc: BaseException | None) -> None:
        """No more bytes will come (EOF, ``exc`` a failure): a wait in progress ends."""
        self._eof = True
        if exc is not None and self._error is None:
            self._error = exc
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            if exc is not None:
                waiter.set_exception(exc)
            else:
                waiter.set_result(False)
        elif self.on_end is not None:
            self.on_end()

    def _gone(self) -> None:
        """The connection is closed."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._lost.done():
            self._lost.set_result(None)

    # -- use by the pool -------------------------------------------------------------------------

    def gone(self) -> bool:
        """Whether the peer closed the connection, it failed, or it was closed here."""
        return self._eof or self._closing()

    def alive(self) -> bool:
        """Whether an idle connection may carry the next request."""
        return not (self._eof or self._closing() or self.wire.unread())

    async def drive(self, step: Step[T]) -> T:
        """Run ``step`` to its result, waiting for bytes whenever it needs more."""
        try:
            next(step)
            while True:
                step.send(await self._more())
        except StopIteration as done:
            return cast(T, done.value)

    async def _more(self) -> bool:
        if self._eof:
            if self._error is not None:
                raise self._error
            return False
        waiter: asyncio.Future[bool] = self.loop.create_future()
        self._waiter = waiter
        if self._paused:
            self._paused = False
            self._resume()
        if self.deadline is not None:
            self._arm(self.deadline)
        elif self.timeout is not None:
            self._arm(self.loop.time() + self.timeout)
        else:
            self._due = math.inf  # no bound on this wait: a timer left by an earlier one must not end it
        return await waiter

    def _arm(self, due: float) -> None:
        """The wait now starting fails with TimeoutError past the loop time ``due``. Lazy: one loop
        timer per connection, moved only when it fires early or a shorter deadline comes (almost
        every response arrives before its deadline, so most waits schedule nothing)."""
        self._due = due
        if self._timer is None or due < self._timer_at:
            if self._timer is not None:
                self._timer.cancel()
            self._timer_at = due
            self._timer = self.loop.call_at(due, self._fire)

    def _fire(self) -> None:
        self._timer = None
        waiter = self._waiter
        if waiter is None or waiter.done():
            return  # idle: no deadline runs
        if self._due == math.inf:
            return  # the wait in progress has no deadline
        if self.loop.time() < self._due - _TIMER_SLACK:  # a later wait moved the deadline
            self._timer_at = self._due
            self._timer = self.loop.call_at(self._due, self._fire)
            return
        self._waiter = None
        waiter.set_exception(TimeoutError(f"no response within {self.timeout} s" if self.deadline is None
                                          else "the deadline passed"))

    async def wait_closed(self) -> None:
        """Until the connection is closed."""
        await asyncio.shield(self._lost)


class SocketConnection(Connection):
    """A connection over a non-blocking socket (TLS: an ``ssl.SSLSocket``) that the loop watches
    (``add_reader``): each readiness reads everything the socket (and TLS) has, in C, with no
    transport or TLS protocol objects between. Writes go out at once, the rest when the socket is
    writable. Closing does not wait for a TLS close_notify. Needs a loop with ``add_reader``
    (selector loops, uvloop); elsewhere the pool uses ``ProtocolConnection``."""

    def __init__(self, loop: asyncio.AbstractEventLoop, sock: socket.socket) -> None:
        super().__init__(loop)
        self.sock = sock
        self._tls = sock if isinstance(sock, ssl.SSLSocket) else None
        self._fd = sock.fileno()
        self._out = bytearray()
        self._drained: asyncio.Future[None] | None = None
        self._closed = False
        self._reading = False
        self._writing = False
        self._read_waits_write = False
        self._resume()

    def _readable(self) -> None:
        """Read what the socket has: one read, then what TLS already decrypted (the loop's readiness
        is level-triggered: bytes still in the socket make it call again)."""
        sock, tls = self.sock, self._tls
        try:
            while True:
                data = sock.recv(_RECV_SIZE)
                if not data:
                    self._stop_reading()
                    self._end(None)
                    return
                self._received(data)
                if self._paused or tls is None or not tls.pending():
                    return
        except (BlockingIOError, InterruptedError, ssl.SSLWantReadError):
            return  # nothing more yet
        except ssl.SSLWantWriteError:  # TLS must write before it reads on: read again once it could
            self._read_waits_write = True
            self._want_write()
        except OSError as err:
            self._stop_reading()
            self._end(err)

    def _pause(self) -> None:
        self._stop_reading()

    def _resume(self) -> None:
        if not self._reading and not self._closed:
            self._reading = True
            self.loop.add_reader(self._fd, self._readable)
            if self._tls is not None and self._tls.pending():
                self.loop.call_soon(self._readable)  # decrypted bytes wait in TLS: no readiness will say so

    def _stop_reading(self) -> None:
        if self._reading:
            self._reading = False
            self.loop.remove_reader(self._fd)

    def send(self, data: bytes) -> None:
        """Write ``data`` now; what the socket does not take is sent when it is writable."""
        if self._closed:
            return  # the exchange fails on its read (EOF)
        if self._out or self._writing:
            self._out += data
            return
        try:
            sent = self.sock.send(data)
        except (BlockingIOError, InterruptedError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
            sent = 0
        except OSError as err:
            self._shut()
            self._end(err)
            return
        if sent < len(data):
            self._out += memoryview(data)[sent:]
            self._want_write()

    async def drain(self) -> None:
        """Until at most ``_WRITE_LOW`` bytes wait to be sent (at once when no more than
        ``_WRITE_HIGH`` do); ConnectionResetError if the connection closes first."""
        if len(self._out) > _WRITE_HIGH and not self._closed:
            if self._drained is None:
                self._drained = self.loop.create_future()
            await asyncio.shield(self._drained)
        if self._closed:
            raise ConnectionResetError("the connection is closed")

    def _flush(self) -> None:
        out = self._out
        try:
            while out:
                del out[:self.sock.send(out)]  # a bytearray drops its head without copying the rest
        except (BlockingIOError, InterruptedError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
            self._want_write()
        except OSError as err:
            self._shut()
            self._end(err)
        if len(out) <= _WRITE_LOW:
            self._wake_drained()

    def _wake_drained(self) -> None:
        drained, self._drained = self._drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    def _want_write(self) -> None:
        if not self._writing:
            self._writing = True
            self.loop.add_writer(self._fd, self._writable)

    def _writable(self) -> None:
        self._writing = False
        self.loop.remove_writer(self._fd)
        self._flush()
        if self._read_waits_write and not self._closed:
            self._read_waits_write = False
            self._readable()

    def close(self) -> None:
        """Close the connection (no TLS close_notify: the server sees the TCP close)."""
        self._shut()
        self._end(None)

    def abort(self) -> None:
        """Close the connection; a wait in progress ends with ConnectionAbortedError."""
        self._shut()
        self._end(ConnectionAbortedError("the connection was closed"))

    def _shut(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._stop_reading()
        if self._writing:
            self._writing = False
            self.loop.remove_writer(self._fd)
        self.sock.close()
        self._wake_drained()
        self._gone()

    def _closing(self) -> bool:
        return self._closed


class ProtocolConnection(Connection, asyncio.Protocol):
    """A connection over an asyncio transport (TLS: asyncio's), for loops without ``add_reader``
    (the proactor loop on Windows)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop)
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """asyncio: the connection is open."""
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        """asyncio: bytes arrived."""
        self._received(data)

    def eof_received(self) -> bool:
        """asyncio: the peer closed its side."""
        self._end(None)
        return False  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        """asyncio: the connection closed (``exc``: why, if it failed)."""
        self._end(exc)
        self._gone()

    def send(self, data: bytes) -> None:
        """Write ``data`` (buffered by the transport)."""
        assert self.transport is not None
        self.transport.write(data)

    def close(self) -> None:
        """Close the connection (TLS: with close_notify)."""
        if self.transport is not None:
            self.transport.close()

    def abort(self) -> None:
        """Drop the connection at once; a wait in progress ends with ConnectionAbortedError."""
        if self.transport is not None:
            self.transport.abort()
        self._end(ConnectionAbortedError("the connection was closed"))

    def _closing(self) -> bool:
        return self.transport is None or self.transport.is_closing()

    def _pause(self) -> None:
        if self.transport is not None:
            self.transport.pause_reading()

    def _resume(self) -> None:
        if self.transport is not None:
            self.transport.resume_reading()


def _watches_sockets(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether ``loop`` has ``add_reader`` (selector loops, uvloop; not the proactor loop)."""
    a, b = socket.socketpair()
    try:
        loop.add_reader(a.fileno(), _nothing)
    except NotImplementedError:
        return False
    else:
        loop.remove_reader(a.fileno())
        return True
    finally:
        a.close()
        b.close()


def _nothing() -> None:
    pass


async def _open_socket(loop: asyncio.AbstractEventLoop, host: str, port: int, context: ssl.SSLContext | None,
                       server_hostname: str | None) -> socket.socket:
    """A connected non-blocking socket to ``host``:``port`` (each address in turn), TCP_NODELAY set,
    TLS-wrapped and handshaken when ``context`` is given."""
    last: OSError | None = None
    for family, kind, proto, _, address in await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        sock = socket.socket(family, kind, proto)
        try:
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            await loop.sock_connect(sock, address)
        except OSError as err:
            sock.close()
            last = err
            continue
        except BaseException:
            sock.close()
            raise
        return sock if context is None else await _handshake(loop, sock, context, server_hostname)
    raise last or OSError(f"cannot resolve {host}")


async def _handshake(loop: asyncio.AbstractEventLoop, sock: socket.socket, context: ssl.SSLContext,
                     server_hostname: str | None) -> ssl.SSLSocket:
    return await handshake(loop, context.wrap_socket(sock, server_hostname=server_hostname,
                                                     do_handshake_on_connect=False))


async def handshake(loop: asyncio.AbstractEventLoop, tls: ssl.SSLSocket) -> ssl.SSLSocket:
    """``tls`` (a non-blocking ``SSLSocket`` wrapped with ``do_handshake_on_connect=False``, client
    or server side) once its handshake is done, waiting on the loop for the socket; closed on
    failure or cancellation."""
    try:
        while True:
            try:
                tls.do_handshake()
                return tls
            except ssl.SSLWantReadError:
                await _ready(loop, tls, loop.add_reader, loop.remove_reader)
            except ssl.SSLWantWriteError:
                await _ready(loop, tls, loop.add_writer, loop.remove_writer)
    except BaseException:
        tls.close()
        raise


async def _ready(loop: asyncio.AbstractEventLoop, sock: socket.socket, add: Callable[..., None],
                 remove: Callable[[int], object]) -> None:
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    add(sock.fileno(), wake)
    try:
        await ready
    finally:
        remove(sock.fileno())


_RECV_SIZE = 262144
"""Bytes asked of the socket per read (TLS gives at most a record, 16 KiB, per read)."""

_WRITE_HIGH = 2**18
_WRITE_LOW = 2**16
"""``drain`` waits while more than ``_WRITE_HIGH`` bytes are buffered, until no more than ``_WRITE_LOW`` are."""


_TIMER_SLACK = 0.001
"""A timer firing this close (s) before its deadline counts as expired (the loop runs a timer up to
its clock resolution early)."""


class ConnectionPool:
    """Keep-alive connections to one server (see the module docstring). Belongs to the running
    loop it is first used on."""

    def __init__(self, host: str, port: int, ssl_context: ssl.SSLContext | None, *, server_hostname: str | None = None,
                 limit: int = 32, connect_timeout: float = 10.0) -> None:
        self.host = host
        self.port = port
        self.ssl = ssl_context
        self.server_hostname = (server_hostname or host) if ssl_context is not None else None
        self.limit = limit
        self.connect_timeout = connect_timeout
        self._idle: list[Connection] = []
        self._in_use = 0  # requests holding one of the ``limit`` slots
        self._waiting: collections.deque[asyncio.Future[None]] = collections.deque()
        self._closed = False
        self._sockets: bool | None = None  # whether the loop watches sockets (add_reader), once known

    async def request(self, head: str, body: bytes | None, *, method: str, read_timeout: float | None) -> Response:
        """Send ``head`` (request line and headers, from ``request_head``) and ``body``; the response
        read in full."""
        if self._in_use < self.limit and not self._waiting:
            self._in_use += 1
        else:
            await self._wait_for_slot()
        try:
            conn = await self._connection()
            conn.timeout = read_timeout
            try:
                conn.send(_request_bytes(head, body, method))
                status, data, headers, reusable = await conn.drive(conn.wire.read_response(method))
            except BaseException:
                conn.abort()
                raise
            if reusable and not self._closed:
                self._idle.append(conn)
            else:
                conn.close()
            return Response(status, headers, data)
        finally:
            self._release_slot()

    async def _wait_for_slot(self) -> None:
        """Wait (first come, first served) until a request hands its slot over."""
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        try:
            await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self._release_slot()  # handed over, but this request is cancelled: pass it on
            elif waiter in self._waiting:
                self._waiting.remove(waiter)
            raise

    def _release_slot(self) -> None:
        """Hand this slot to the first request waiting, else free it."""
        waiting = self._waiting
        while waiting:
            waiter = waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._in_use -= 1

    async def open_stream(self, head: str, *, read_timeout: float | None) -> StreamingResponse:
        """Send ``head`` (a GET, no body) and read the response head; the body is read by iterating
        the returned response's ``lines()``. A stream has a connection of its own for its whole life
        (an idle one or a new one), not counted in ``limit``: long watches never starve requests."""
        conn = await self._connection()
        conn.timeout = read_timeout
        try:
            conn.send(_request_bytes(head, None, "GET"))
            status, version, headers = await conn.drive(conn.wire.read_head())
        except BaseException:
            conn.abort()
            raise
        return StreamingResponse(conn, status, version, headers)

    async def _connection(self) -> Connection:
        idle = self._idle
        while idle:
            conn = idle.pop()
            if conn.alive():
                return conn
            conn.close()
        if self._closed:
            raise ConnectionError("the connection pool is closed")
        loop = asyncio.get_running_loop()
        if self._sockets is None:
            self._sockets = _watches_sockets(loop)
        async with asyncio.timeout(self.connect_timeout):
            if self._sockets:
                return SocketConnection(loop, await _open_socket(loop, self.host, self.port, self.ssl,
                                                            self.server_hostname))
            _, conn = await loop.create_connection(
                functools.partial(ProtocolConnection, loop), self.host, self.port, ssl=self.ssl,
                server_hostname=self.server_hostname,
                ssl_handshake_timeout=self.connect_timeout if self.ssl is not None else None)
        return conn

    async def close(self) -> None:
        """Close the idle connections (waiting at most a second for their TLS goodbyes); those in
        use close when their exchange ends. The pool cannot be used again."""
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
        waits = [asyncio.ensure_future(conn.wait_closed()) for conn in idle]
        if waits:
            await asyncio.wait(waits, timeout=1.0)
        for conn, wait in zip(idle, waits, strict=True):
            if not wait.done():
                wait.cancel()
                conn.abort()


def request_head(method: str, target: str, host_header: str, headers: str) -> str:
    """The request line, ``Host`` and the already encoded ``headers`` (``encode_headers``) of one request,
    without the final empty line; ValueError for a target with spaces or control characters."""
    if _BAD_TARGET.search(target):
        raise ValueError(f"invalid request target {target!r}: it must not contain spaces or control characters")
    return f"{method} {target} HTTP/1.1\r\nHost: {host_header}\r\n{headers}"


def _request_bytes(head: str, body: bytes | None, method: str) -> bytes:
    if body is None and method in ("POST", "PUT", "PATCH"):
        body = b""  # as http.client: these methods always state their (empty) body's length
    if body is not None:
        return f"{head}Content-Length: {len(body)}\r\n\r\n".encode("latin-1") + body
    return f"{head}\r\n".encode("latin-1")


def parse_head(raw: bytes) -> tuple[int, bytes, Headers]:
    """Status, HTTP version and headers of a response head (``raw``: up to and including the
    empty line); ``ProtocolError`` when it is malformed. No I/O: the sync transport parses its
    responses with it too."""
    lines = raw[:-4].decode("latin-1").split("\r\n")  # one decode for the whole head
    version, _, rest = lines[0].partition(" ")
    code = rest[:3]
    if not version.startswith("HTTP/1.") or len(code) != 3 or not code.isdigit():
        raise ProtocolError(f"malformed status line {lines[0][:100].encode('latin-1')!r}")
    return int(code), version.encode("latin-1"), _parse_headers(lines)


def chunk_size(line: bytes | bytearray) -> int:
    """The size of the chunk a chunk-size line (with its CRLF; extensions ignored) announces;
    ``ProtocolError`` when it is malformed."""
    size_text = line.split(b";", 1)[0].strip()
    try:
        size = int(size_text, 16)
    except ValueError:
        raise ProtocolError(f"malformed chunk size {line[:100]!r}") from None
    if size < 0:
        raise ProtocolError(f"malformed chunk size {line[:100]!r}")
    return size


def _parse_headers(lines: list[str]) -> Headers:
    items: list[tuple[str, str]] = []
    for line in lines[1:]:
        if line[:1] in (" ", "\t") and items:  # obsolete line folding: continues the previous value
            previous, text = items[-1]
            items[-1] = (previous, f"{text} {line.strip()}")
            continue
        name, sep, value = line.partition(":")
        if not sep or not name or name[0] in _BLANKS or name[-1] in _BLANKS:
            raise ProtocolError(f"malformed header line {line[:100].encode('latin-1')!r}")
        items.append((name.lower(), value.strip()))
    return Headers(items)


def framing(method: str, status: int, version: bytes, headers: Headers) -> tuple[str, int, bool]:
    """How the body is delimited ("none", "length", "chunked" or "eof"), its length, and whether the
    connection may be reused after it."""
    connection = headers.get("connection", "").lower()
    keep_alive = "close" not in connection if version == b"HTTP/1.1" else "keep-alive" in connection
    if method == "HEAD" or status < 200 or status in (204, 304):
        return "none", 0, keep_alive
    coding = headers.get("transfer-encoding")
    if coding is not None:
        if coding.lower().rsplit(",", 1)[-1].strip() != "chunked":
            return "eof", 0, False
        return "chunked", 0, keep_alive
    lengths = headers.get_all("content-length")
    if lengths:
        values = {v.strip() for value in lengths for v in value.split(",")}
        if len(values) != 1 or not next(iter(values)).isdigit():
            raise ProtocolError(f"invalid Content-Length {lengths!r}")
        return "length", int(values.pop()), keep_alive
    return "eof", 0, False


class StreamingResponse:
    """A response whose body is read as it arrives: ``status``, ``headers``; ``read()`` (the whole
    body, for an error response), ``lines()`` (an async iterator of the body's lines, without the
    line ending), ``close()`` (ends a ``lines()`` in progress: it raises the read's error, which its
    caller ignores once closed). The connection closes when the body ends, fails or ``close()``."""

    def __init__(self, conn: Connection, status: int, version: bytes, headers: Headers) -> None:
        self.status = status
        self.headers = headers
        self._conn = conn
        kind, length, _ = framing("GET", status, version, headers)
        self._body = Body(conn.wire, kind, length)
        self.closed = False

    async def read(self) -> bytes:
        """The rest of the body (then the response is closed)."""
        try:
            return await self._conn.drive(self._body.rest())
        finally:
            self.close()

    async def lines(self) -> AsyncIterator[bytes]:
        """The body's lines as they arrive (bytes without ``\\n``/``\\r\\n``; a last line without
        a newline too). The read timeout applies to each wait on the server, never while the
        caller holds a line."""
        conn, body = self._conn, self._body
        buffer = b""
        try:
            while piece := await conn.drive(body.next()):
                buffer += piece
                if b"\n" not in piece:
                    continue
                *complete, buffer = buffer.split(b"\n")
                for line in complete:
                    yield line[:-1] if line.endswith(b"\r") else line
            if buffer:
                yield buffer[:-1] if buffer.endswith(b"\r") else buffer
        finally:
            self.close()

    def close(self) -> None:
        """Close the connection (a read in progress ends with an error); safe to call twice."""
        if self.closed:
            return
        self.closed = True
        self._conn.abort()
