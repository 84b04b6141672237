"""HTTP transport to a Kubernetes API server over urllib3's connection pools.

Without a proxy, a request read in full is written and read on the socket of a connection of
urllib3's pool, parsed as ``rest.http11`` parses responses for the async transport (urllib3
still connects, verifies TLS and drops dead connections); watches and requests through a proxy
take urllib3's own path.

Configuration comes from ``samplecontroller.rest.config`` (kubeconfig, in-cluster service
account, token, exec and basic auth, TLS settings, proxies): the controller never imports the
official ``kubernetes`` package. A ``kubernetes.client.Configuration`` or ``ApiClient`` is still
accepted where one is passed in (``RESTClient(cfg)``, ``from_config``, ``from_api_client``), and a
kubeconfig user with an ``auth-provider`` is loaded by that package (imported only then).
Requests and responses here are raw bytes, decoded by the callers with msgspec.

Errors:
- ``ConfigError``: the configuration cannot be loaded (message names the file or the problem);
- ``TransportError``: the server cannot be reached (message names the server URL);
- ``samplecontroller.apimachinery.errors.StatusError`` subclasses for HTTP status >= 400.
"""

from __future__ import annotations

import http.client
import os
import re
import socket
import ssl
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast
from urllib.parse import urlencode, urlsplit

import urllib3

from samplecontroller.apimachinery import errors
from samplecontroller.flowcontrol import TokenBucket
from samplecontroller.rest import http11, warnings
from samplecontroller.rest.config import (
    EXEC_TIMEOUT,
    Config,
    ConfigError,
    load_in_cluster,
    load_kubeconfig,
    server_url,
)
from samplecontroller.rest.warnings import WarningHandler

if TYPE_CHECKING:
    from kubernetes import client as k8s_client

T = TypeVar("T")
__all__ = ["Config", "ConfigError", "RESTClient", "ResponseStream", "TransportError", "load_rest_client"]

DEFAULT_USER_AGENT = "samplecontroller/0.1"
DEFAULT_MAX_RETRIES = 10
"""client-go's maxRetries for responses that ask to be retried (Retry-After)."""
MAX_RETRY_AFTER = 60.0
"""The longest single wait honoured from a Retry-After header, in seconds."""
DEFAULT_POOL_SIZE = 32
"""Keep-alive connections kept per host: enough for the workers, the watches and the event sink."""
AUTH_REFRESH_INTERVAL = 60.0
"""How long credentials are reused before the configuration's refresh hook is asked again
(client-go re-reads a token file once a minute); a 401 refreshes them at once and retries."""
_DEFAULT_TIMEOUT = urllib3.Timeout(connect=10.0, read=60.0)


class TransportError(Exception):
    """The API server could not be reached or the connection broke."""


class _Response:
    """A fully read response of the lean request path: what ``request`` needs of urllib3's."""

    __slots__ = ("data", "headers", "status")

    def __init__(self, status: int, data: bytes, headers: http11.Headers) -> None:
        self.status = status
        self.data = data
        self.headers = headers


class ResponseStream:
    """A streaming response: iterate for lines (bytes, without the newline).

    ``close()`` may be called from any thread; iteration then ends promptly (possibly by
    ``TransportError`` if a read was interrupted, which the iterator swallows once closed).
    """

    def __init__(self, response: urllib3.BaseHTTPResponse | _LeanStream, url: str) -> None:
        self._response = response
        self._url = url
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._reader: int | None = None  # the thread iterating, while it does
        self._released = False

    def __iter__(self) -> Iterator[bytes]:
        with self._lock:
            self._reader = threading.get_ident()
        buffer = b""
        read = getattr(self._response, "read1", None) or self._response.read
        try:
            while not self._closed.is_set():
                chunk = read(65536)
                if not chunk:
                    break
                buffer += chunk
                if b"\n" not in chunk:
                    continue
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if line.strip():
                        yield line
            if buffer.strip() and not self._closed.is_set():
                yield buffer  # a last line without its newline
        except (urllib3.exceptions.HTTPError, OSError, ValueError, AttributeError, http.client.HTTPException,
                http11.ProtocolError) as err:
            if not self._closed.is_set():
                raise TransportError(f"stream from {self._url} broke: {_reason(err)}") from None
        finally:
            with self._lock:
                self._reader = None
            self._closed.set()
            self._release()

    def close(self) -> None:
        """Close the stream; safe to call twice, from any thread. While another thread iterates,
        the socket is only shut down: that wakes its read, and that thread closes the connection
        as its iteration ends. Closing here would free the socket's file descriptor while the read
        may still be about to use the number, and a connection opened meanwhile under the same
        number would have its bytes taken by the old read (its TLS stream then fails: "bad record
        mac", "wrong version number")."""
        self._closed.set()
        with self._lock:
            reader = self._reader
        if reader is not None and reader != threading.get_ident():
            try:
                self._response.shutdown()
            except Exception:
                pass
            return
        self._release()

    def _release(self) -> None:
        """Close the connection (a half-read chunked body cannot be reused) and free its pool
        slot, once."""
        with self._lock:
            if self._released:
                return
            self._released = True
        for step in (self._response.shutdown, self._response.close, self._response.release_conn):
            try:
                step()
            except Exception:
                pass


class RESTClient:
    """Raw requests against one API server. Thread-safe; share one per process.

    Like client-go, a response 429 or 5xx that carries ``Retry-After: <seconds>`` is retried
    after that many seconds (at most ``MAX_RETRY_AFTER`` each), up to ``max_retries`` times (10);
    then its error is raised. Watches (``stream``) are not retried: their callers re-list.
    With ``qps`` > 0 every request (watches too) first waits for a token of a
    ``samplecontroller.flowcontrol.TokenBucket(qps, burst)``; by default there is no client-side throttling.

    The warnings of every response (``Warning`` headers) go to ``warning_handler`` (None: the
    process default of ``rest.warnings``, a ``WarningLogger`` logging each distinct text once).

    The request path does no per-request configuration work: one urllib3 pool of keep-alive
    connections per host (``pool_size`` of them kept, at least ``DEFAULT_POOL_SIZE``; size it to the
    number of threads sending at once), proxies resolved once here, and the credentials computed
    once and reused for ``AUTH_REFRESH_INTERVAL`` seconds (or until a 401) before the
    configuration's refresh hook (token files, exec plugins) is called again.
    """

    def __init__(self, configuration: Config | k8s_client.Configuration, *, user_agent: str = DEFAULT_USER_AGENT,
                 pool: urllib3.PoolManager | None = None, max_retries: int = DEFAULT_MAX_RETRIES,
                 qps: float = 0.0, burst: int = 0, pool_size: int = DEFAULT_POOL_SIZE,
                 warning_handler: WarningHandler | None = None) -> None:
        self.configuration = configuration
        self.warning_handler: WarningHandler | None = warning_handler
        self.max_retries = max_retries
        self.throttle = TokenBucket(qps, max(burst, 1)) if qps > 0 else None
        tls = configuration.has_tls_settings if isinstance(configuration, Config) else False
        self.host = server_url(str(configuration.host).rstrip("/"), tls)
        configuration.host = self.host
        self.user_agent = user_agent
        if pool is None:
            pool = _pool_for(configuration, max(pool_size, DEFAULT_POOL_SIZE))
        self._pool = pool
        # Requests go straight to the host's connection pool (no per-request URL parsing and
        # pool lookup); through a proxy they take the PoolManager's path.
        self._host_pool = None if isinstance(pool, urllib3.ProxyManager) else pool.connection_from_url(self.host)
        # Whole requests on the host's pool go through http.client directly (``_roundtrip``); None: they do not.
        self._lean_pool = (self._host_pool if self._host_pool is not None
                           and issubclass(self._host_pool.ConnectionCls, http.client.HTTPConnection) else None)
        self._prefix = urlsplit(self.host).path
        self._idle: list[Any] = []  # the lean path's idle keep-alive connections (see _roundtrip)
        self._auth_lock = threading.Lock()
        self._auth: dict[str, str] = {}
        self._auth_until = 0.0  # time.monotonic() after which the credentials are computed again

    # -- constructors ------------------------------------------------------------------------

    @classmethod
    def from_config(cls, configuration: Config | k8s_client.Configuration, **kw: Any) -> RESTClient:
        """A client for a ``rest.Config`` (or a ``kubernetes`` package Configuration)."""
        return cls(configuration, **kw)

    @classmethod
    def from_api_client(cls, api_client: k8s_client.ApiClient, **kw: Any) -> RESTClient:
        """A client sharing a ``kubernetes`` package ApiClient's configuration and connection pool."""
        return cls(api_client.configuration, pool=api_client.rest_client.pool_manager, **kw)

    @classmethod
    def from_kubeconfig(cls, path: str | os.PathLike[str] | None = None, context: str | None = None,
                        master: str | None = None, exec_timeout: float = EXEC_TIMEOUT, **kw: Any) -> RESTClient:
        """Load ``path`` (None: $KUBECONFIG, then ~/.kube/config); ``master`` overrides the server;
        an exec plugin may run ``exec_timeout`` seconds."""
        if path is None:
            path = os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or str(Path.home() / ".kube" / "config")
        path = str(path)
        if not os.path.exists(path):
            raise ConfigError(f"kubeconfig {path} does not exist")
        try:
            cfg: Config | k8s_client.Configuration | None = load_kubeconfig(path, context, exec_timeout)
            if cfg is None:  # an auth-provider user: the official package knows those
                cfg = _official_kubeconfig(path, context)
        except ConfigError as err:
            raise ConfigError(f"invalid kubeconfig {path}: {err}") from None
        if master:
            cfg.host = master.rstrip("/")
        return cls(cfg, **kw)

    @classmethod
    def in_cluster(cls, **kw: Any) -> RESTClient:
        """A client from the pod's ServiceAccount (ConfigError outside a cluster)."""
        try:
            cfg = load_in_cluster()
        except ConfigError as err:
            raise ConfigError(f"not running in a cluster: {err}") from None
        return cls(cfg, **kw)

    # -- requests ----------------------------------------------------------------------------

    def _headers(self, accept: str, content_type: str | None, refresh: bool = False) -> dict[str, str]:
        headers = {"Accept": accept, "User-Agent": self.user_agent}
        if content_type:
            headers["Content-Type"] = content_type
        headers.update(self._credentials(refresh))
        return headers

    def _credentials(self, refresh: bool) -> dict[str, str]:
        """The Authorization header (or none), recomputed when stale or when ``refresh``."""
        if not refresh and time.monotonic() < self._auth_until:
            return self._auth
        with self._auth_lock:
            if refresh or time.monotonic() >= self._auth_until:
                cfg = self.configuration
                if not isinstance(cfg, Config):
                    self._auth, expiry = _auth_header(cfg), None
                else:
                    try:
                        self._auth, expiry = cfg.credentials(refresh)
                    except ConfigError as err:
                        raise TransportError(f"no credentials for the API server at {self.host}: {err}") from None
                lifetime = AUTH_REFRESH_INTERVAL if expiry is None else min(AUTH_REFRESH_INTERVAL, expiry - time.time())
                self._auth_until = time.monotonic() + lifetime
            return self._auth

    def handle_warnings(self, headers: Any) -> None:
        """Hand the response's warnings to ``warning_handler`` (see ``rest.warnings``)."""
        warnings.handle_warning_headers(headers, self.warning_handler)

    def _refreshable(self) -> bool:
        cfg = self.configuration
        return cfg.refreshable if isinstance(cfg, Config) else cfg.refresh_api_key_hook is not None

    def url(self, path: str, query: Mapping[str, str] | None = None) -> str:
        """The absolute URL of ``path`` with ``query``."""
        return self.host + path + ("?" + _query_string(query) if query else "")

    def request(self, method: str, path: str, *, query: Mapping[str, str] | None = None, body: bytes | None = None,
                content_type: str | None = None, accept: str = "application/json",
                timeout: float | None = None) -> bytes:
        """Send one request; the response body on 2xx, else raise a typed StatusError."""
        url = self.url(path, query)
        if body is not None and content_type is None:
            content_type = "application/json"
        retries = 0
        while True:
            resp = self._send(method, url, body, accept, content_type, timeout)
            wait = _retry_after(resp)
            if wait is None or retries >= self.max_retries:
                break
            retries += 1
            time.sleep(wait)
        self.handle_warnings(resp.headers)
        if resp.status >= 400:
            raise errors.from_response(resp.status, resp.data)
        return bytes(resp.data)

    def _send(self, method: str, url: str, body: bytes | None, accept: str, content_type: str | None,
              timeout: float | None) -> urllib3.BaseHTTPResponse | _Response:
        """One round trip. A GET that fails on a dropped keep-alive connection is sent once more
        on a new connection (as Go's transport does for idempotent requests). A 401 with a
        refresh hook configured is sent once more with freshly computed credentials."""
        if self.throttle is not None:
            self.throttle.accept()
        limits = urllib3.Timeout(connect=10.0, read=timeout) if timeout else _DEFAULT_TIMEOUT
        refresh = False
        resp: urllib3.BaseHTTPResponse | _Response
        lean_pool = self._lean_pool
        target = self._prefix + url[len(self.host):]
        for attempt in (1, 2, 3):
            try:
                headers = self._headers(accept, content_type, refresh)
                if lean_pool is not None:
                    resp = self._roundtrip(lean_pool, self._idle, method, target, body, headers, limits)
                else:
                    resp = self._urlopen(method, url, body, headers, limits, True)
            except urllib3.exceptions.ProtocolError as err:
                _drop_idle(self._idle)  # a dropped connection's siblings were likely dropped too: retry on a new one
                if method != "GET" or attempt > 1:
                    raise TransportError(f"cannot reach the API server at {self.host}: {_reason(err)}") from None
                continue
            except urllib3.exceptions.HTTPError as err:
                raise TransportError(f"cannot reach the API server at {self.host}: {_reason(err)}") from None
            if resp.status != 401 or refresh or not self._refreshable():
                return resp
            refresh = True  # the credentials may have expired since they were computed: once more with new ones
        return resp

    def _urlopen(self, method: str, url: str, body: bytes | None, headers: dict[str, str], timeout: urllib3.Timeout,
                 preload: bool) -> urllib3.BaseHTTPResponse:
        if self._host_pool is None:
            return self._pool.request(method, url, body=body, headers=headers, timeout=timeout, retries=False,
                                      preload_content=preload)
        return self._host_pool.urlopen(method, self._prefix + url[len(self.host):], body=body, headers=headers,
                                       timeout=timeout, retries=False, redirect=False, preload_content=preload,
                                       release_conn=preload)

    @staticmethod
    def _roundtrip(pool: urllib3.HTTPConnectionPool, idle: list[Any], method: str, target: str, body: bytes | None,
                   headers: dict[str, str], timeout: urllib3.Timeout) -> _Response:
        """One request read in full on a keep-alive connection of ``pool``, over its socket directly.

        urllib3's per-request machinery (Retry and response objects, header dict copies) and
        http.client's (a file object and an email-parsed header block per response) cost more CPU
        than the exchange itself; the connection still comes from (and returns to) urllib3's pool,
        so connecting, TLS verification and dropped-connection checks stay urllib3's. Connections
        between requests wait in ``idle`` (a list: taking and returning one needs no lock, where
        the pool's queue takes three), up to the pool's size; the pool makes new ones. The response
        is parsed as ``rest.http11`` parses it for the async transport (same status line, header
        and framing rules). Errors are urllib3's: ``ProtocolError`` for a connection that broke or
        a malformed response, ``ReadTimeoutError`` for a timeout, ``SSLError`` for a failed handshake.
        """
        conn = _idle_conn(idle) or cast(http.client.HTTPConnection, pool._get_conn())
        try:
            sock = _send_request(pool, conn, method, target, body, headers, timeout.connect_timeout,
                                 timeout.read_timeout)
            wire = _wire_of(conn, sock)
            status, data, response_headers, reusable = wire.run(wire.read_response(method))
            if not reusable:
                conn.close()  # the server closes it (or framed the body by closing): the pool connects anew
        except BaseException as err:
            conn.close()
            _return_conn(pool, idle, conn)  # closed: connected anew when next taken
            raise _as_urllib3_error(pool, target, err) from err
        _return_conn(pool, idle, conn)
        return _Response(status, data, response_headers)

    def _lean_stream(self, pool: urllib3.HTTPConnectionPool, method: str, url: str, accept: str,
                     timeout: float | None) -> ResponseStream:
        try:
            headers, status, body, stream = _open_lean_stream(pool, method, self._prefix + url[len(self.host):],
                                                              self._headers(accept, None), timeout)
        except urllib3.exceptions.HTTPError as err:
            raise TransportError(f"cannot reach the API server at {self.host}: {_reason(err)}") from None
        self.handle_warnings(headers)
        if stream is None:
            raise errors.from_response(status, body)
        return ResponseStream(stream, url)

    def stream(self, method: str, path: str, *, query: Mapping[str, str] | None = None,
               timeout: float | None = None, accept: str = "application/json") -> ResponseStream:
        """Open a streaming request (a watch); raises like ``request`` before streaming starts."""
        url = self.url(path, query)
        if self.throttle is not None:
            self.throttle.accept()
        if self._lean_pool is not None:
            return self._lean_stream(self._lean_pool, method, url, accept, timeout)
        try:
            resp = self._urlopen(method, url, None, self._headers(accept, None),
                                 urllib3.Timeout(connect=10.0, read=timeout), False)
        except urllib3.exceptions.HTTPError as err:
            raise TransportError(f"cannot reach the API server at {self.host}: {_reason(err)}") from None
        self.handle_warnings(resp.headers)
        if resp.status >= 400:
            data = resp.read()
            resp.release_conn()
            raise errors.from_response(resp.status, data)
        return ResponseStream(resp, url)


_READ_SIZE = 65536


class _Wire(http11.Wire):
    """A connection's socket with its ``http11.Wire`` (read buffer and response parser), kept with
    the connection between requests; ``run`` drives a parsing step with blocking reads."""

    __slots__ = ("sock",)

    def __init__(self, sock: Any) -> None:
        super().__init__()
        self.sock = sock

    def fill(self) -> bool:
        """Read what the socket has (blocking, within its timeout) into the buffer; False at EOF."""
        piece = self.sock.recv(_READ_SIZE)
        if not piece:
            return False
        self.feed(piece)
        return True

    def run(self, step: http11.Step[T]) -> T:
        """``step``'s result, reading the socket whenever it needs more bytes."""
        return http11.drive(step, self.fill)


def _send_request(pool: urllib3.HTTPConnectionPool, conn: http.client.HTTPConnection, method: str, target: str,
                  body: bytes | None, headers: Mapping[str, str], connect_timeout: Any, read_timeout: Any) -> Any:
    """Write one request on ``conn`` (connected first if it is not: urllib3 connects, verifies TLS
    and warns when unverified) and return its socket, set to wait ``read_timeout`` for the answer."""
    conn.timeout = connect_timeout  # used by urllib3's connect() if the connection is new
    pool._validate_conn(conn)  # type: ignore[arg-type]  # the pool's own connection
    if conn.sock is None:
        conn.connect()
    sock = conn.sock
    sock.sendall(_request_bytes(method, target, _host_header(conn), body, headers))
    if sock.gettimeout() != read_timeout:  # settimeout is a system call each time
        sock.settimeout(read_timeout)
    return sock


def _open_lean_stream(pool: urllib3.HTTPConnectionPool, method: str, target: str, headers: dict[str, str],
                      timeout: float | None) -> tuple[http11.Headers, int, bytes, _LeanStream | None]:
    """Send a streaming request on a connection of its own from ``pool`` and read the response
    head: its headers, and either the whole body of an error status (>= 400, the connection given
    back) or the stream of its body. Errors as ``RESTClient._roundtrip``'s."""
    conn = cast(http.client.HTTPConnection, pool._get_conn())
    try:
        wire = _Wire(_send_request(pool, conn, method, target, None, headers, 10.0, timeout))
        status, version, response_headers = wire.run(wire.read_head())
        kind, length, _ = http11.framing(method, status, version, response_headers)
        if status < 400:
            return response_headers, status, b"", _LeanStream(pool, conn, wire, http11.Body(wire, kind, length))
        body = wire.run(http11.Body(wire, kind, length).rest())
    except BaseException as err:
        conn.close()
        pool._put_conn(conn)  # type: ignore[arg-type]  # the pool's own connection, closed
        raise _as_urllib3_error(pool, target, err) from err
    conn.close()
    pool._put_conn(conn)  # type: ignore[arg-type]
    return response_headers, status, body, None


class _LeanStream:
    """A streamed response body read off the socket of a connection of its own (what
    ``RESTClient.stream`` streams on the lean path): ``read`` gives the next bytes of the body (for
    a chunked one, every chunk complete so far), b"" at its end. ``shutdown`` wakes a read blocked
    in another thread; the connection is closed, never reused."""

    def __init__(self, pool: urllib3.HTTPConnectionPool, conn: http.client.HTTPConnection, wire: _Wire,
                 body: http11.Body) -> None:
        self._pool: urllib3.HTTPConnectionPool | None = pool
        self._conn = conn
        self._wire = wire
        self._body = body

    def read(self, amt: int = _READ_SIZE) -> bytes:
        """The body's next bytes (waiting for some), b"" at its end."""
        return self._wire.run(self._body.next(amt))

    def shutdown(self) -> None:
        """Shut the socket down: a read blocked in another thread returns."""
        sock = self._conn.sock
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def release_conn(self) -> None:
        """Give the (closed) connection's slot back to the pool, once."""
        pool, self._pool = self._pool, None
        if pool is not None:
            self._conn.close()
            pool._put_conn(self._conn)  # type: ignore[arg-type]  # the pool's own connection


def _idle_conn(idle: list[Any]) -> Any:
    """The most recently returned idle connection (closed if the server closed it meanwhile: it
    connects anew), or None. ``list.pop`` is atomic, so threads share ``idle`` without a lock."""
    try:
        conn = idle.pop()
    except IndexError:
        return None
    if conn.sock is not None and not conn.is_connected:  # the server closed it while idle (urllib3's check)
        conn.close()
    return conn


def _drop_idle(idle: list[Any]) -> None:
    """Close every idle connection (each taken with an atomic ``pop``: none that another thread
    took meanwhile): the next request connects anew."""
    while True:
        try:
            conn = idle.pop()
        except IndexError:
            return
        conn.close()


def _return_conn(pool: urllib3.HTTPConnectionPool, idle: list[Any], conn: Any) -> None:
    """Keep ``conn`` for the next request, or give it back to the pool when ``idle`` is full."""
    if len(idle) < (pool.pool.maxsize if pool.pool is not None else 0):
        idle.append(conn)
    else:
        pool._put_conn(conn)


def _wire_of(conn: http.client.HTTPConnection, sock: Any) -> _Wire:
    """The connection's ``_Wire``, a new one when urllib3 connected it anew since the last request."""
    wire: _Wire | None = getattr(conn, "_samplecontroller_wire", None)
    if wire is None or wire.sock is not sock:
        wire = _Wire(sock)
        conn._samplecontroller_wire = wire  # type: ignore[attr-defined]  # kept with the connection it reads
    return wire


_FORBIDDEN_IN_TARGET = re.compile("[\x00-\x20\x7f]")


def _host_header(conn: http.client.HTTPConnection) -> str:
    """The Host header http.client sends for ``conn``: host, and the port unless the scheme's default."""
    host = f"[{conn.host}]" if ":" in conn.host else conn.host
    return host if conn.port == conn.default_port else f"{host}:{conn.port}"


def _request_bytes(method: str, target: str, host: str, body: bytes | None, headers: Mapping[str, str]) -> bytes:
    """The request as http.client's ``request`` writes it (request line, Host, Accept-Encoding:
    identity, the headers, Content-Length, the body), built in one piece and sent with one write.

    http.client and urllib3 check every header name against a pattern and write each line on its
    own; here the names are this module's own, and what could split the request (a control
    character in the target, a line break in a value) is refused with ValueError, as they refuse it.
    """
    if _FORBIDDEN_IN_TARGET.search(target) or _FORBIDDEN_IN_TARGET.search(method) or not target.isascii():
        raise ValueError(f"URL can't contain control characters or non-ASCII characters: {target!r}")
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host}", "Accept-Encoding: identity"]
    for name, value in headers.items():
        if "\n" in value or "\r" in value:
            raise ValueError(f"Invalid header value {value!r}")
        lines.append(f"{name}: {value}")
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    elif method in ("POST", "PUT", "PATCH"):
        lines.append("Content-Length: 0")
    lines.append("\r\n")
    head = "\r\n".join(lines).encode("latin-1")
    return head + body if body else head


def _as_urllib3_error(pool: urllib3.HTTPConnectionPool, target: str, err: BaseException) -> BaseException:
    """The error urllib3 would have raised for ``err`` (which itself when urllib3's or not an OSError
    or http.client error): a failed handshake is ``SSLError``, a timeout ``ReadTimeoutError``, any
    other broken connection ``ProtocolError`` (which ``_send`` retries for a GET)."""
    if isinstance(err, ssl.SSLError):
        return urllib3.exceptions.SSLError(err)
    if isinstance(err, TimeoutError):
        return urllib3.exceptions.ReadTimeoutError(pool, target, f"Read timed out. ({err})")
    if isinstance(err, (OSError, http.client.HTTPException, http11.ProtocolError)):
        return urllib3.exceptions.ProtocolError("Connection aborted.", err)
    return err


def load_rest_client(kubeconfig: str | None = None, master: str | None = None, context: str | None = None,
                     exec_timeout: float = EXEC_TIMEOUT, **kw: Any) -> RESTClient:
    """Go's clientcmd.BuildConfigFromFlags fallback order.

    A kubeconfig or master flag wins; else the in-cluster service account; else $KUBECONFIG or
    ~/.kube/config. ``master`` alone (no kubeconfig) talks to that URL without credentials.
    """
    if kubeconfig:
        return RESTClient.from_kubeconfig(kubeconfig, context=context, master=master, exec_timeout=exec_timeout, **kw)
    if master:
        return RESTClient(Config(host=master), **kw)
    in_cluster_error = ""
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        try:
            return RESTClient.in_cluster(**kw)
        except ConfigError as err:  # like Go: warn-worthy, fall back to the default kubeconfig
            in_cluster_error = f"{err}; "
    try:
        return RESTClient.from_kubeconfig(None, context=context, exec_timeout=exec_timeout, **kw)
    except ConfigError as err:
        raise ConfigError(f"no usable configuration: {in_cluster_error}{err} "
                          "(pass --kubeconfig or --master, or run in a cluster)") from None


def _pool_for(cfg: Config | k8s_client.Configuration, maxsize: int) -> urllib3.PoolManager:
    """A pool keeping ``maxsize`` connections per host, with ``cfg``'s TLS settings and proxy."""
    if isinstance(cfg, Config):
        return cfg.pool_manager(maxsize)
    from kubernetes.client.rest import RESTClientObject  # the caller passed the package's own Configuration

    cfg.connection_pool_maxsize = max(cfg.connection_pool_maxsize or 0, maxsize)
    pool: urllib3.PoolManager = RESTClientObject(cfg).pool_manager
    return pool


def _official_kubeconfig(path: str, context: str | None) -> k8s_client.Configuration:
    """``path`` loaded by the official package (for users with an ``auth-provider``)."""
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config

    cfg = k8s_client.Configuration()
    try:
        k8s_config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=path, context=context, client_configuration=cfg, persist_config=False)
    except Exception as err:
        raise ConfigError(_one_line(err)) from None
    return cfg


def _auth_header(cfg: k8s_client.Configuration) -> dict[str, str]:
    """The Authorization header of ``cfg`` after its refresh hook has run (token, else basic auth)."""
    if cfg.refresh_api_key_hook is not None:
        cfg.refresh_api_key_hook(cfg)
    for identifier in ("authorization", "BearerToken"):
        key = cfg.api_key.get(identifier)
        if key:
            prefix = cfg.api_key_prefix.get(identifier)
            return {"Authorization": f"{prefix} {key}" if prefix else str(key)}
    if cfg.username and cfg.password:
        return dict(urllib3.util.make_headers(basic_auth=f"{cfg.username}:{cfg.password}"))
    return {}


_query_strings: dict[tuple[tuple[str, str], ...], str] = {}
_MAX_QUERY_STRINGS = 256


def _query_string(query: Mapping[str, str]) -> str:
    """``urlencode(query)``, remembered: a client sends the same few queries (fieldManager=...,
    watch options) over and over, and encoding one costs as much as parsing a response's headers."""
    key = tuple(query.items())
    text = _query_strings.get(key)
    if text is None:
        text = urlencode(query)
        if len(_query_strings) >= _MAX_QUERY_STRINGS:
            _query_strings.clear()
        _query_strings[key] = text
    return text


def _retry_after(resp: urllib3.BaseHTTPResponse | _Response) -> float | None:
    """Seconds to wait before retrying ``resp`` (429 or 5xx with an integer Retry-After), else None."""
    if resp.status != 429 and not 500 <= resp.status <= 599:
        return None
    value = resp.headers.get("Retry-After")
    if value is None:
        return None
    try:
        seconds = int(value.strip())
    except ValueError:
        return None
    return float(min(max(seconds, 0), MAX_RETRY_AFTER))


def _reason(err: BaseException) -> str:
    reason = getattr(err, "reason", None)
    return _one_line(reason if reason is not None else err)


def _one_line(err: object) -> str:
    text = str(err).strip().replace("\n", " ")
    return text[:300]
