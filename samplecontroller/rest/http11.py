"""A lean HTTP/1.1 client on asyncio streams: the async transport's connections to the API server.

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
- errors: ``ConnectionDropped`` when a reused connection closed before any byte of the
  response (the caller may resend an idempotent request), ``ProtocolError`` for a malformed
  response, else the OSError, ``asyncio.IncompleteReadError`` or ``TimeoutError`` raised; the
  connection of a failed or cancelled exchange is closed, never reused;
- streams (watches): ``open_stream`` returns a ``StreamingResponse`` whose ``lines()`` yields
  the body's lines as they arrive; its connection is closed (never reused) when it ends.

A request head is validated as http.client does: no control characters or spaces in the
request target, no CR/LF in a header value (``ValueError``).
"""

from __future__ import annotations

import asyncio
import collections
import re
import ssl
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping
from types import TracebackType
from typing import TypeVar, overload

__all__ = ["ConnectionDropped", "ConnectionPool", "Headers", "ProtocolError", "Response", "StreamingResponse",
           "chunk_size", "encode_headers", "framing", "parse_head", "request_head"]

_D = TypeVar("_D")

_READ_LIMIT = 2**20
"""Longest status line, header line or chunk-size line accepted; also the reader's buffer size."""
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


class _Conn:
    __slots__ = ("reader", "used", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.used = False

    def alive(self) -> bool:
        return not (self.reader.at_eof() or self.writer.transport.is_closing() or self.reader.exception())

    def close(self) -> None:
        """Close an idle connection (TLS: with close_notify)."""
        self.writer.close()

    def abort(self) -> None:
        """Drop a connection in the middle of an exchange at once (a read in progress ends)."""
        self.writer.transport.abort()


class _Timer:
    """``read_timeout`` for each wait on the server: inside ``async with timer``, ``arm()`` before a read
    gives it ``seconds``; past them the task is cancelled and the scope raises TimeoutError (as
    ``asyncio.timeout``: a cancellation from elsewhere stays a cancellation). Reusable: each
    ``async with`` is a new scope, so nothing is armed between scopes.

    Lazy: ``arm`` only moves the deadline; one loop timer per scope, scheduled at the first deadline,
    moves itself to the current one when it fires early. A response read in full before its first
    deadline (almost every one) costs one timer, not one per read."""

    __slots__ = ("_cancelling", "_due", "_expired", "_handle", "_loop", "_seconds", "_task")

    def __init__(self, seconds: float | None) -> None:
        self._seconds = seconds
        self._loop = asyncio.get_running_loop()
        self._task: asyncio.Task[object] | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._due = 0.0
        self._expired = False
        self._cancelling = 0

    async def __aenter__(self) -> _Timer:
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("the HTTP read timeout needs a task")
        self._task = task
        self._expired = False
        self._cancelling = task.cancelling()
        return self

    async def __aexit__(self, kind: type[BaseException] | None, err: BaseException | None,
                        tb: TracebackType | None) -> None:
        handle, self._handle = self._handle, None
        task, self._task = self._task, None
        if handle is not None:
            handle.cancel()
        if self._expired and task is not None:
            self._expired = False
            if task.uncancel() <= self._cancelling and kind is asyncio.CancelledError:
                raise TimeoutError from err

    def arm(self) -> None:
        if self._seconds is None or self._task is None:
            return
        self._due = self._loop.time() + self._seconds
        if self._handle is None:
            self._handle = self._loop.call_at(self._due, self._fire)

    def _fire(self) -> None:
        self._handle = None
        if self._task is None:
            return
        if self._loop.time() < self._due - _TIMER_SLACK:  # re-armed since it was scheduled
            self._handle = self._loop.call_at(self._due, self._fire)
            return
        self._expired = True
        self._task.cancel()


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
        self._idle: list[_Conn] = []
        self._in_use = 0  # requests holding one of the ``limit`` slots
        self._waiting: collections.deque[asyncio.Future[None]] = collections.deque()
        self._closed = False

    async def request(self, head: str, body: bytes | None, *, method: str, read_timeout: float | None) -> Response:
        """Send ``head`` (request line and headers, from ``request_head``) and ``body``; the response
        read in full."""
        if self._in_use < self.limit and not self._waiting:
            self._in_use += 1
        else:
            await self._wait_for_slot()
        try:
            conn = await self._connection()
            try:
                async with _Timer(read_timeout) as timer:
                    _send(conn, head, body, method)
                    status, version, headers = await _read_head(conn, timer)
                    data, reusable = await _read_body(conn, method, status, version, headers, timer)
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
        try:
            async with _Timer(read_timeout) as timer:
                _send(conn, head, None, "GET")
                status, version, headers = await _read_head(conn, timer)
        except BaseException:
            conn.abort()
            raise
        return StreamingResponse(conn, status, version, headers, read_timeout)

    async def _connection(self) -> _Conn:
        idle = self._idle
        while idle:
            conn = idle.pop()
            if conn.alive():
                return conn
            conn.close()
        if self._closed:
            raise ConnectionError("the connection pool is closed")
        async with asyncio.timeout(self.connect_timeout):
            reader, writer = await asyncio.open_connection(
                self.host, self.port, ssl=self.ssl, server_hostname=self.server_hostname, limit=_READ_LIMIT,
                ssl_handshake_timeout=self.connect_timeout if self.ssl is not None else None)
        return _Conn(reader, writer)

    async def close(self) -> None:
        """Close the idle connections (waiting at most a second for their TLS goodbyes); those in
        use close when their exchange ends. The pool cannot be used again."""
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
        waits = [asyncio.ensure_future(conn.writer.wait_closed()) for conn in idle]
        if waits:
            await asyncio.wait(waits, timeout=1.0)
        for conn, wait in zip(idle, waits, strict=True):
            if not wait.done():
                wait.cancel()
                conn.abort()
            elif not wait.cancelled():
                wait.exception()  # a reset during the goodbye does not matter


def request_head(method: str, target: str, host_header: str, headers: str) -> str:
    """The request line, ``Host`` and the already encoded ``headers`` (``encode_headers``) of one request,
    without the final empty line; ValueError for a target with spaces or control characters."""
    if _BAD_TARGET.search(target):
        raise ValueError(f"invalid request target {target!r}: it must not contain spaces or control characters")
    return f"{method} {target} HTTP/1.1\r\nHost: {host_header}\r\n{headers}"


def _send(conn: _Conn, head: str, body: bytes | None, method: str) -> None:
    if body is None and method in ("POST", "PUT", "PATCH"):
        body = b""  # as http.client: these methods always state their (empty) body's length
    if body is not None:
        conn.writer.write(f"{head}Content-Length: {len(body)}\r\n\r\n".encode("latin-1") + body)
    else:
        conn.writer.write(f"{head}\r\n".encode("latin-1"))


async def _read_head(conn: _Conn, timer: _Timer) -> tuple[int, bytes, Headers]:
    """Status, version and headers of the next final (non-1xx) response on ``conn``."""
    reused, conn.used = conn.used, True
    reader = conn.reader
    while True:
        timer.arm()
        try:
            raw = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as err:
            if not err.partial and reused:
                raise ConnectionDropped("the server closed the keep-alive connection") from None
            raise
        except asyncio.LimitOverrunError:
            raise ProtocolError(f"response head longer than {_READ_LIMIT} bytes") from None
        status, version, headers = parse_head(raw)
        if status >= 200 or status == 101:
            return status, version, headers
        # an interim response (100 Continue, 103 Early Hints): the final one follows


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


async def _read_body(conn: _Conn, method: str, status: int, version: bytes, headers: Headers,
                     timer: _Timer) -> tuple[bytes, bool]:
    kind, length, reusable = framing(method, status, version, headers)
    reader = conn.reader
    if kind == "length":
        return await _read_exactly(reader, length, timer), reusable
    if kind == "chunked":
        parts = [chunk async for chunk in _chunks(reader, timer)]
        return b"".join(parts), reusable
    if kind == "eof":
        parts = []
        while True:
            timer.arm()
            piece = await reader.read(_BODY_PIECE)
            if not piece:
                return b"".join(parts), False
            parts.append(piece)
    return b"", reusable


async def _read_exactly(reader: asyncio.StreamReader, n: int, timer: _Timer) -> bytes:
    if n <= _BODY_PIECE:
        timer.arm()
        return await reader.readexactly(n)
    parts = []
    while n > 0:
        timer.arm()
        piece = await reader.readexactly(min(n, _BODY_PIECE))
        parts.append(piece)
        n -= len(piece)
    return b"".join(parts)


async def _chunks(reader: asyncio.StreamReader, timer: _Timer) -> AsyncIterator[bytes]:
    """The data of each chunk of a chunked body, then its trailers are skipped."""
    while True:
        timer.arm()
        try:
            size_line = await reader.readuntil(b"\r\n")
        except asyncio.LimitOverrunError:
            raise ProtocolError("chunk-size line too long") from None
        size = chunk_size(size_line)
        if size == 0:
            while True:  # trailers, up to the empty line
                timer.arm()
                if await reader.readuntil(b"\r\n") == b"\r\n":
                    return
        data = await _read_exactly(reader, size + 2, timer)
        if data[-2:] != b"\r\n":
            raise ProtocolError("chunk not terminated by CRLF")
        yield data[:-2]


class StreamingResponse:
    """A response whose body is read as it arrives: ``status``, ``headers``; ``read()`` (the whole
    body, for an error response), ``lines()`` (an async iterator of the body's lines, without the
    line ending), ``close()`` (ends a ``lines()`` in progress: it raises the read's error, which its
    caller ignores once closed). The connection closes when the body ends, fails or ``close()``."""

    def __init__(self, conn: _Conn, status: int, version: bytes, headers: Headers,
                 read_timeout: float | None) -> None:
        self.status = status
        self._version = version
        self.headers = headers
        self._conn = conn
        self._read_timeout = read_timeout
        self.closed = False

    async def read(self) -> bytes:
        """The rest of the body (then the response is closed)."""
        try:
            async with _Timer(self._read_timeout) as timer:
                data, _ = await _read_body(self._conn, "GET", self.status, self._version, self.headers, timer)
            return data
        finally:
            self.close()

    async def lines(self) -> AsyncIterator[bytes]:
        """The body's lines as they arrive (bytes without ``\\n``/``\\r\\n``; a last line without
        a newline too). The read timeout applies to each wait on the server, never while the
        caller holds a line."""
        kind, length, _ = framing("GET", self.status, self._version, self.headers)
        timer = _Timer(self._read_timeout)
        pieces = self._pieces(kind, length, timer)
        buffer = b""
        try:
            while True:
                async with timer:
                    piece = await anext(pieces, None)
                if piece is None:
                    break
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
            await pieces.aclose()

    async def _pieces(self, kind: str, length: int, timer: _Timer) -> AsyncGenerator[bytes, None]:
        reader = self._conn.reader
        if kind == "chunked":
            async for chunk in _chunks(reader, timer):
                yield chunk
        elif kind == "length":
            while length > 0:
                timer.arm()
                piece = await reader.read(min(length, _BODY_PIECE))
                if not piece:
                    raise asyncio.IncompleteReadError(b"", length)
                length -= len(piece)
                yield piece
        elif kind == "eof":
            while True:
                timer.arm()
                piece = await reader.read(_BODY_PIECE)
                if not piece:
                    return
                yield piece

    def close(self) -> None:
        """Close the connection (a read in progress ends with an error); safe to call twice."""
        if self.closed:
            return
        self.closed = True
        self._conn.abort()
