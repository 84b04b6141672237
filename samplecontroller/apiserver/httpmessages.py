"""The embedded API server's HTTP/1.1 requests and responses (served by ``transport``).

- ``parse_request_head``: the request line and headers, as Go's net/http reads them (method a
  token, target without spaces or control characters, HTTP/1.0 or 1.1, header names tokens, no
  space before the colon); a malformed head is ``BadRequest``. Header values are UTF-8 with
  undecodable bytes kept as surrogates.
- ``Request``: ``method``, ``path`` (percent-decoded), ``path_qs``, ``query`` (a
  read-only multidict), ``headers`` (case-insensitive, read-only), ``version``, ``scheme``,
  ``host``, ``remote``; ``await read()`` for the body (``Content-Length`` or chunked, gzip or
  deflate ``Content-Encoding`` undone), at most ``max_body`` bytes before and after decoding
  (``PayloadTooLarge``); a body not in its encoding is ``BadContentEncoding``, malformed chunks
  ``MalformedBody``, and a client that closes inside the body ``ConnectionResetError``; a client that sends
  ``Expect: 100-continue`` gets its ``100 Continue`` when the body is first read (as Go's server
  does). ``request[key] = value`` keeps per-request values for the filters.
- ``Response``: a whole response (``body`` or ``text``); ``StreamResponse``: a streamed one
  (``prepare``, ``write``, ``write_eof``), chunked with ``enable_chunked_encoding`` (HTTP/1.1),
  else ended by closing the connection. Every response carries ``Date`` and ``Content-Length``
  (or ``Transfer-Encoding: chunked``); a HEAD request gets the head only.
"""

from __future__ import annotations

import re
import time
import zlib
from collections.abc import Callable, Coroutine, Iterable, Mapping
from email.utils import formatdate
from http import HTTPStatus
from typing import Any, Protocol

from multidict import CIMultiDict, CIMultiDictProxy, MultiDictProxy
from yarl import URL

from samplecontroller.rest.http11 import IncompleteResponse, ProtocolError, Step, Wire

__all__ = ["AnyResponse", "BadContentEncoding", "BadRequest", "BodyReader", "MalformedBody", "PayloadTooLarge",
           "Request", "Response",
           "StreamResponse", "Writer", "framing", "parse_request_head", "serialize_head"]

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_BAD_TARGET = re.compile(r"[\x00-\x20\x7f]")
_BAD_VALUE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_HEADER_BLOCK = re.compile(rb"(?:[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[^\x00-\x08\x0a-\x1f\x7f]*\r\n)*"
                           rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[^\x00-\x08\x0a-\x1f\x7f]*")
"""Header lines (``_TOKEN`` names, values without ``_BAD_VALUE`` characters) joined by CRLF: a
well-formed header block in one match of the raw bytes (the line-by-line check names the bad line)."""
_VERSIONS = {"HTTP/1.1": (1, 1), "HTTP/1.0": (1, 0)}
_REASONS = {status.value: status.phrase for status in HTTPStatus}


class BadRequest(Exception):
    """A request the server cannot read (answered with ``code`` and the connection closed)."""

    def __init__(self, message: str, code: int = 400) -> None:
        super().__init__(message)
        self.code = code


class PayloadTooLarge(Exception):
    """The body is longer than the server takes (before or after its Content-Encoding is undone)."""


class BadContentEncoding(Exception):
    """The body is not in the Content-Encoding it names."""


class MalformedBody(Exception):
    """The body's chunked framing is malformed."""


def parse_request_head(raw: bytes) -> tuple[str, str, tuple[int, int], CIMultiDictProxy[str]]:
    """Method, target, version and headers of a request head (``raw`` up to and including the
    empty line); ``BadRequest`` when it is malformed."""
    lines = raw[:-4].decode("utf-8", "surrogateescape").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        raise BadRequest(f"malformed HTTP request {lines[0][:100]!r}")
    method, target, version_text = parts
    version = _VERSIONS.get(version_text)
    if version is None and version_text == "HTTP/2.0" and method == "PRI" and target == "*":
        version = (2, 0)  # the HTTP/2 preface: for the handlers, as Go's http1ServerSupportsRequest
    if version is None:
        if version_text.startswith("HTTP/"):
            raise BadRequest(f"unsupported HTTP version {version_text[:20]!r}", 505)
        raise BadRequest(f"malformed HTTP version {version_text[:20]!r}")
    if not _TOKEN.fullmatch(method):
        raise BadRequest(f"invalid method {method[:20]!r}")
    if not target or _BAD_TARGET.search(target) or (target[0] != "/" and target != "*"
                                                   and "://" not in target):
        raise BadRequest(f"invalid request target {target[:100]!r}")
    fields = lines[1:]
    if fields and _HEADER_BLOCK.fullmatch(raw, raw.index(b"\r\n") + 2, len(raw) - 4) is None:
        for line in fields:  # which line is malformed
            name, sep, value = line.partition(":")
            if not sep or not _TOKEN.fullmatch(name):
                raise BadRequest(f"malformed header line {line[:100]!r}")
            if _BAD_VALUE.search(value.strip(" \t")):
                raise BadRequest(f"invalid header value for {name[:100]!r}")
        raise BadRequest("malformed header block")
    headers: CIMultiDict[str] = CIMultiDict([(name, value.strip(" \t"))
                                             for name, _, value in (line.partition(":") for line in fields)])
    return method, target, version, CIMultiDictProxy(headers)


class Writer(Protocol):
    """The connection a request is read from and its response written to
    (``transport.ServerConnection``)."""

    wire: Wire

    def send(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def drive(self, step: Step[Any]) -> Coroutine[Any, Any, Any]: ...


class BodyReader:
    """The framing of a request's body on its connection: ``kind`` "none", "length" or "chunked".
    ``done`` once the body is read (or there is none)."""

    __slots__ = ("continue_sent", "done", "expect_continue", "kind", "length")

    def __init__(self, kind: str, length: int, expect_continue: bool) -> None:
        self.kind = kind
        self.length = length
        self.done = kind == "none" or (kind == "length" and length == 0)
        self.expect_continue = expect_continue
        self.continue_sent = False

    def read(self, wire: Wire, limit: int) -> Step[bytes]:
        """The whole body (at most ``limit`` bytes: ``PayloadTooLarge``)."""
        if self.kind == "length":
            if self.length > limit:
                raise PayloadTooLarge(f"the body is {self.length} bytes")
            data = yield from wire.exactly(self.length)
        elif self.kind == "chunked":
            parts, size = [], 0
            while True:
                piece, ended = yield from wire.chunk_data()
                size += len(piece)
                if size > limit:
                    raise PayloadTooLarge(f"the body is over {limit} bytes")
                parts.append(piece)
                if ended:
                    break
            data = b"".join(parts)
        else:
            data = b""
        self.done = True
        return data

    def discard(self, wire: Wire, limit: int) -> Step[bool]:
        """Read and drop the rest of the body; False (reading stopped) when more than ``limit``
        bytes of it are left."""
        if self.kind == "length":
            if self.length - wire.unread() > limit:
                return False
            yield from self.read(wire, self.length)
            return True
        if self.kind == "chunked":
            try:
                yield from self.read(wire, limit)
            except PayloadTooLarge:
                return False
        self.done = True
        return True


def framing(method: str, headers: CIMultiDictProxy[str]) -> BodyReader:
    """How a request's body is delimited (RFC 9112 section 6.3); ``BadRequest`` for conflicting or
    unsupported framing (a request Go's server refuses too)."""
    coding = headers.get("Transfer-Encoding")
    lengths = headers.getall("Content-Length", ())
    expect = headers.get("Expect", "").lower() == "100-continue"
    if coding is not None:
        if lengths:
            raise BadRequest("both Transfer-Encoding and Content-Length are given")
        if coding.strip().lower() != "chunked":
            raise BadRequest(f"unsupported transfer encoding {coding[:40]!r}")
        return BodyReader("chunked", 0, expect)
    if lengths:
        values = {v.strip() for value in lengths for v in value.split(",")}
        text = values.pop() if len(values) == 1 else ""
        if not text.isdigit() or not text.isascii() or len(text) > 18:
            raise BadRequest(f"invalid Content-Length {lengths[0][:40]!r}")
        return BodyReader("length", int(text), expect)
    return BodyReader("none", 0, False)


class Request:
    """One request (see the module docstring). The connection reads its body; the filters keep
    per-request values in it (``request[key]``)."""

    __slots__ = ("_body", "_conn", "_limit", "_query", "_state", "_url", "body", "first", "headers", "method",
                 "remote", "scheme", "started", "target", "version")

    def __init__(self, conn: Writer, method: str, target: str, version: tuple[int, int],
                 headers: CIMultiDictProxy[str], body: BodyReader, *, scheme: str, remote: str | None,
                 max_body: int, first: bool = True) -> None:
        self._conn = conn
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body
        self.scheme = scheme
        self.remote = remote
        self._limit = max_body
        self._body: bytes | None = None
        self._url: URL | None = None
        self._query: MultiDictProxy[str] | None = None
        self._state: dict[Any, Any] = {}
        self.started = False  # whether the response's head was sent (a streamed response began)
        self.first = first  # whether it is the first request on its connection

    # -- the target -------------------------------------------------------------------------------

    @property
    def url(self) -> URL:
        """The request target as an (encoded) URL."""
        if self._url is None:
            self._url = URL(self.target, encoded=True)
        return self._url

    @property
    def path(self) -> str:
        """The path, percent-decoded (``%2F`` becomes ``/``)."""
        target = self.target
        if target[:1] == "/" and "%" not in target and "?" not in target:
            return target
        return self.url.path

    @property
    def path_qs(self) -> str:
        """The path and query as sent (for logs)."""
        return self.target

    @property
    def query(self) -> MultiDictProxy[str]:
        """The query parameters (``+`` and percent escapes decoded)."""
        if self._query is None:
            self._query = self.url.query if "?" in self.target else _EMPTY_QUERY
        return self._query

    @property
    def host(self) -> str:
        """The ``Host`` header."""
        return self.headers.get("Host", "")

    @property
    def transport(self) -> Writer:
        """The connection the request came on (one object per connection)."""
        return self._conn

    # -- the body ---------------------------------------------------------------------------------

    @property
    def can_read_body(self) -> bool:
        """Whether the request has a body not read yet."""
        return not self.body.done

    async def read(self) -> bytes:
        """The body, its Content-Encoding undone (see the module docstring)."""
        if self._body is not None:
            return self._body
        body = self.body
        if body.done:
            data = b""
        else:
            if body.expect_continue and not body.continue_sent:
                body.continue_sent = True
                if body.kind != "length" or body.length <= self._limit:
                    self._conn.send(b"HTTP/1.1 100 Continue\r\n\r\n")
            try:
                data = await self._conn.drive(body.read(self._conn.wire, self._limit))
            except IncompleteResponse:
                raise ConnectionResetError("the client closed the connection inside the request body") from None
            except ProtocolError as err:
                raise MalformedBody(str(err)) from None
        self._body = _decoded(data, self.headers.get("Content-Encoding", ""), self._limit)
        return self._body

    # -- per-request values -----------------------------------------------------------------------

    def __getitem__(self, key: Any) -> Any:
        return self._state[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._state[key] = value

    def get(self, key: Any, default: Any = None) -> Any:
        """The value kept under ``key``, else ``default``."""
        return self._state.get(key, default)


_EMPTY_QUERY: MultiDictProxy[str] = URL("/").query


def _decoded(data: bytes, encoding: str, limit: int) -> bytes:
    """``data`` with its Content-Encoding (gzip, x-gzip, deflate) undone; others are left as sent."""
    coding = encoding.strip().lower()
    if not data or coding not in ("gzip", "x-gzip", "deflate"):
        return data
    wbits = 16 + zlib.MAX_WBITS if coding != "deflate" else zlib.MAX_WBITS
    try:
        out = _inflate(data, wbits, limit)
    except zlib.error as err:
        if coding != "deflate":
            raise BadContentEncoding(f"cannot decompress the body: {err}") from None
        try:
            out = _inflate(data, -zlib.MAX_WBITS, limit)  # raw deflate, as some clients send it
        except zlib.error:
            raise BadContentEncoding(f"cannot decompress the body: {err}") from None
    return out


def _inflate(data: bytes, wbits: int, limit: int) -> bytes:
    inflater = zlib.decompressobj(wbits)
    out = inflater.decompress(data, limit + 1)
    if len(out) > limit:
        raise PayloadTooLarge(f"the decoded body is over {limit} bytes")
    if not inflater.eof:
        raise zlib.error("incomplete or truncated stream")
    return out


# -- responses ------------------------------------------------------------------------------------

_date_cache: tuple[int, bytes] = (0, b"")


def _date() -> bytes:
    """The ``Date`` header line (computed once a second)."""
    global _date_cache
    now = int(time.time())
    if _date_cache[0] != now:
        _date_cache = (now, f"Date: {formatdate(now, usegmt=True)}\r\n".encode())
    return _date_cache[1]


_STATUS_LINES = {code: f"HTTP/1.1 {code} {reason}\r\n".encode() for code, reason in _REASONS.items()}
_HEADER_LINES: dict[tuple[str, str], bytes] = {}
"""Encoded response header lines by (name, value): most responses repeat a few (Content-Type)."""


def serialize_head(status: int, headers: Iterable[tuple[str, str]], framing_line: bytes, close: bool) -> bytes:
    """A response head: the status line, ``headers``, Date, the body's framing line and, when the
    connection closes after it, ``Connection: close``."""
    lines = [_STATUS_LINES.get(status) or f"HTTP/1.1 {status} {_REASONS.get(status, 'Unknown')}\r\n".encode()]
    for name, value in headers:
        line = _HEADER_LINES.get((name, value))
        if line is None:
            line = f"{name}: {value}\r\n".encode("utf-8", "surrogateescape")
            if len(line) <= 256:  # a Content-Type, an Audit-Id is not worth keeping; bounded
                if len(_HEADER_LINES) >= 512:
                    _HEADER_LINES.clear()
                _HEADER_LINES[(name, value)] = line
        lines.append(line)
    lines.append(_date())
    lines.append(framing_line)
    if close:
        lines.append(b"Connection: close\r\n")
    lines.append(b"\r\n")
    return b"".join(lines)


class Response:
    """A whole response: ``status``, ``headers`` (add to them freely before it is sent) and
    ``body`` (``text`` is sent as UTF-8, with a ``; charset=utf-8`` content type)."""

    prepared = False

    def __init__(self, *, body: bytes | None = None, status: int = 200, text: str | None = None,
                 content_type: str | None = None, headers: Mapping[str, str] | None = None) -> None:
        self.status = status
        self.headers: CIMultiDict[str] = CIMultiDict(headers or ())
        if text is not None:
            body = text.encode()
            content_type = f"{content_type or 'text/plain'}; charset=utf-8"
        if content_type is not None:
            self.headers["Content-Type"] = content_type
        self.body = body or b""
        self.keep_alive = True

    def force_close(self) -> None:
        """Close the connection after this response."""
        self.keep_alive = False

    def encode(self, head_only: bool, close: bool) -> bytes:
        """The response's bytes (head only for a HEAD request)."""
        head = serialize_head(self.status, self.headers.items(), b"Content-Length: %d\r\n" % len(self.body), close)
        return head if head_only else head + self.body


class StreamResponse:
    """A response written as it goes (see the module docstring)."""

    def __init__(self, *, status: int = 200, headers: Mapping[str, str] | None = None) -> None:
        self.status = status
        self.headers: CIMultiDict[str] = CIMultiDict(headers or ())
        self.keep_alive = True
        self.prepared = False
        self.finished = False
        self._chunked = False
        self._conn: Writer | None = None
        self._head_only = False

    def enable_chunked_encoding(self) -> None:
        """Send the body in chunks (HTTP/1.1 only; without it the connection closes at its end)."""
        self._chunked = True

    def force_close(self) -> None:
        """Close the connection after this response."""
        self.keep_alive = False

    async def prepare(self, request: Request) -> None:
        """Send the head."""
        if self.prepared:
            return
        if not self._chunked or request.version < (1, 1):
            self._chunked = False
            self.keep_alive = False
        self.prepared = True
        request.started = True
        self._conn = request.transport
        self._head_only = request.method == "HEAD"
        framing_line = b"Transfer-Encoding: chunked\r\n" if self._chunked else b""
        self._conn.send(serialize_head(self.status, self.headers.items(), framing_line, not self.keep_alive))
        await self._conn.drain()

    async def write(self, data: bytes) -> None:
        """Send ``data`` (waiting while the client is slow to take it)."""
        conn = self._conn
        if conn is None or self.finished:
            raise RuntimeError("write() before prepare() or after write_eof()")
        if not data or self._head_only:
            return
        conn.send(b"%x\r\n%b\r\n" % (len(data), data) if self._chunked else data)
        await conn.drain()

    async def write_eof(self) -> None:
        """End the body."""
        if self.finished:
            return
        self.finished = True
        if self._conn is not None and self._chunked and not self._head_only:
            self._conn.send(b"0\r\n\r\n")
            await self._conn.drain()


AnyResponse = Response | StreamResponse
"""A response of either kind."""
Handler = Callable[[Request], Coroutine[Any, Any, AnyResponse]]
"""What serves a request."""
