"""The async HTTP transport: ``AsyncRESTClient``, the same requests as ``RESTClient``, awaited.

It is a thin I/O layer over a ``RESTClient`` (``AsyncRESTClient(rest)``, or the same
constructors: ``from_kubeconfig``, ``in_cluster``, ``load_async_rest_client``) and shares
everything but the sockets with it: the configuration and its TLS settings and proxy, the
request URL (``RESTClient.url``), the credentials (token files, exec plugins and their refresh
every ``AUTH_REFRESH_INTERVAL`` or on a 401: one cache for both clients), the client-side
throttle (one token bucket), the ``Warning`` headers (to the same ``warning_handler``),
Retry-After retries (429/5xx, ``max_retries``, at most ``MAX_RETRY_AFTER`` each), the one resend
of a GET whose keep-alive connection was dropped, and the errors (``TransportError``,
``StatusError`` subclasses). Waiting never blocks the loop: throttling and Retry-After are
``asyncio.sleep``, credentials that must be recomputed (a token file read, an exec plugin run)
are computed on a worker thread (``asyncio.to_thread``), cached ones are used at once.

The I/O, like the sync transport's (its own socket reads, urllib3 only through a proxy):
without a proxy, requests and watches go over ``rest.http11``, a lean HTTP/1.1 client on
sockets the loop watches, parsing responses with the sync transport's parser (keep-alive pool
of ``pool_size`` connections, TLS with the configuration's context, Content-Length, chunked and
EOF bodies, read timeouts per wait); through an http(s) proxy they
go over aiohttp (imported only then). Chosen by measurement (``benchmarks/bench_async_http.py``,
PATCH and GET on the embedded API server over TLS): aiohttp's per-request machinery cost
about 290-360 us of CPU per request where the exchange itself costs about 90-130 us, so the
async controller spent more CPU per Foo than the sync one (urllib3's pool, http.client: about
210-260 us); httpx cost 4 to 11 times aiohttp's CPU. See ``docs/guides/async.md``.

A client belongs to the running loop of its first request (a request from another loop is a
RuntimeError naming the fix); ``await close()`` closes its connections, after which it may be
used again (on any loop). Watches: ``stream`` returns an ``AsyncResponseStream``, an async
iterator of lines.
"""

from __future__ import annotations

import asyncio
import functools
import os
import ssl
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from samplecontroller import _extras

_extras.require("async", "samplecontroller.rest.aio (the async client)")

from samplecontroller.apimachinery import errors  # noqa: E402
from samplecontroller.rest import (  # noqa: E402
    DEFAULT_POOL_SIZE,
    RESTClient,
    TransportError,
    _one_line,
    _retry_after,
    load_rest_client,
)
from samplecontroller.rest.config import EXEC_TIMEOUT, Config, ConfigError  # noqa: E402
from samplecontroller.rest.http11 import (  # noqa: E402
    ConnectionDropped,
    ConnectionPool,
    Headers,
    IncompleteResponse,
    ProtocolError,
    Response,
    encode_headers,
    request_head,
)

if TYPE_CHECKING:
    import aiohttp

__all__ = ["AsyncRESTClient", "AsyncResponseStream", "load_async_rest_client"]

DEFAULT_ASYNC_POOL_SIZE = 32
"""Keep-alive connections per host (a request beyond them waits for a free one): as the sync
transport's pool. More costs TLS handshakes on the loop's one thread for little gain (measured
with bench_async.py: 100 took half again the CPU of 32 for 500 reconciles in flight)."""
DEFAULT_READ_TIMEOUT = 60.0
"""Seconds a request waits for each read from the server (the sync transport's)."""
CONNECT_TIMEOUT = 10.0
"""Seconds for the TCP connection and the TLS handshake (the sync transport's)."""

_BROKEN = (ConnectionError, IncompleteResponse)
"""A connection that broke: a GET is sent once more (the sync transport's ``ProtocolError``)."""
_FAILED = (TimeoutError, OSError, ProtocolError)
"""Any failed exchange: a ``TransportError`` naming the server."""


class AsyncResponseStream:
    """A streaming response: ``async for line in stream`` (bytes, without the newline; blank lines
    skipped). ``close()`` ends the iteration (a broken connection raises ``TransportError`` unless
    closed)."""

    def __init__(self, lines: AsyncIterator[bytes], close: Callable[[], None], url: str) -> None:
        self._source = lines
        self._close = close
        self._url = url
        self._closed = False

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[bytes]:
        try:
            async for line in self._source:
                if self._closed:
                    break
                if line.strip():
                    yield line
        except _FAILED as err:
            if not self._closed:
                raise TransportError(f"stream from {self._url} broke: {_one_line(err) or type(err).__name__}") from None
        finally:
            self.close()

    def close(self) -> None:
        """Close the response and end the iteration; safe to call twice."""
        if not self._closed:
            self._closed = True
            self._close()


class AsyncRESTClient:
    """Raw async requests against one API server, sharing ``rest``'s configuration,
    credentials, throttle and retry policy (see the module docstring)."""

    def __init__(self, rest: RESTClient, *, pool_size: int = DEFAULT_ASYNC_POOL_SIZE) -> None:
        self.rest = rest
        self.host = rest.host
        self.pool_size = max(pool_size, DEFAULT_POOL_SIZE)
        parts = urlsplit(rest.host)
        self._prefix = parts.path
        self._netloc = parts.netloc
        self._address = (parts.hostname or "localhost", parts.port or (443 if parts.scheme == "https" else 80))
        self._ssl, self._server_hostname, self._proxy = _tls_and_proxy(rest.configuration)
        self._pool: ConnectionPool | None = None
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._fixed: tuple[dict[str, str] | None, str] = (None, "")

    # -- constructors (the sync client's, then this layer over it) ------------------------------

    @classmethod
    def from_kubeconfig(cls, path: str | os.PathLike[str] | None = None, context: str | None = None,
                        master: str | None = None, exec_timeout: float = EXEC_TIMEOUT, **kw: Any) -> AsyncRESTClient:
        """``RESTClient.from_kubeconfig`` (the same arguments), with this async layer over it."""
        return cls(RESTClient.from_kubeconfig(path, context=context, master=master, exec_timeout=exec_timeout, **kw))

    @classmethod
    def in_cluster(cls, **kw: Any) -> AsyncRESTClient:
        """A client from the pod's ServiceAccount (ConfigError outside a cluster), as
        ``RESTClient.in_cluster``."""
        return cls(RESTClient.in_cluster(**kw))

    @classmethod
    def from_config(cls, configuration: Any, **kw: Any) -> AsyncRESTClient:
        """A client for a ``rest.Config`` (or a ``kubernetes`` package Configuration); ``kw`` go to
        ``RESTClient``."""
        return cls(RESTClient(configuration, **kw))

    # -- connections -----------------------------------------------------------------------------

    def _bind_loop(self, fresh: bool) -> None:
        loop = asyncio.get_running_loop()
        if fresh:
            self._loop = loop
        elif self._loop is not loop:
            raise RuntimeError("this AsyncRESTClient belongs to the event loop it first ran on; make one "
                               "AsyncRESTClient per event loop (AsyncRESTClient(rest) shares the RESTClient's "
                               "configuration and credentials)")

    def _pool_here(self) -> ConnectionPool:
        pool = self._pool
        if pool is None:
            self._bind_loop(True)
            pool = self._pool = ConnectionPool(self._address[0], self._address[1], self._ssl,
                                               server_hostname=self._server_hostname, limit=self.pool_size,
                                               connect_timeout=CONNECT_TIMEOUT)
        elif self._loop is not asyncio.get_running_loop():
            self._bind_loop(False)
        return pool

    def _session_here(self) -> aiohttp.ClientSession:
        import aiohttp

        if self._session is None or self._session.closed:
            self._bind_loop(True)
            connector = aiohttp.TCPConnector(limit=self.pool_size, ssl=self._ssl if self._ssl is not None else True,
                                             enable_cleanup_closed=True)
            # no cookies (the API server sets none; a jar costs a filter and an update per request)
            self._session = aiohttp.ClientSession(connector=connector, auto_decompress=False,
                                                  skip_auto_headers=("Accept-Encoding",),
                                                  cookie_jar=aiohttp.DummyCookieJar())
        else:
            self._bind_loop(False)
        return self._session

    async def close(self) -> None:
        """Close the connections (the client may be used again: new ones are made)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> AsyncRESTClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- requests --------------------------------------------------------------------------------

    def url(self, path: str, query: Mapping[str, str] | None = None) -> str:
        """The absolute URL of ``path`` with ``query`` (``RESTClient.url``)."""
        return self.rest.url(path, query)

    async def _credentials(self, refresh: bool) -> dict[str, str]:
        rest = self.rest
        if not refresh and time.monotonic() < rest._auth_until:
            return rest._auth  # computed less than AUTH_REFRESH_INTERVAL ago: no I/O
        return await asyncio.to_thread(rest._credentials, refresh)  # a token file or an exec plugin: off the loop

    def _head(self, method: str, target: str, credentials: dict[str, str], accept: str,
              content_type: str | None) -> str:
        """The request head (without its empty line) for the lean path: User-Agent and credentials
        encoded once per credentials, Accept and Content-Type once per pair."""
        fixed, text = self._fixed
        if fixed is not credentials:  # computed anew (the credentials' dict is kept while they hold)
            text = encode_headers({"User-Agent": self.rest.user_agent, **credentials})
            self._fixed = (credentials, text)
        return request_head(method, target, self._netloc, text + _content_headers(accept, content_type))

    async def _throttle(self) -> None:
        if self.rest.throttle is not None:
            wait = self.rest.throttle.reserve()
            if wait > 0:
                await asyncio.sleep(wait)

    async def request(self, method: str, path: str, *, query: Mapping[str, str] | None = None,
                      body: bytes | None = None, content_type: str | None = None, accept: str = "application/json",
                      timeout: float | None = None) -> bytes:
        """Send one request; the response body on 2xx, else raise a typed StatusError."""
        url = self.url(path, query)
        if body is not None and content_type is None:
            content_type = "application/json"
        retries = 0
        while True:
            resp = await self._send(method, url, body, accept, content_type, timeout)
            wait = _retry_after(resp)  # type: ignore[arg-type]  # duck-typed: status and headers
            if wait is None or retries >= self.rest.max_retries:
                break
            retries += 1
            await asyncio.sleep(wait)
        self.rest.handle_warnings(resp.headers)
        if resp.status >= 400:
            raise errors.from_response(resp.status, resp.data)
        return resp.data

    async def _send(self, method: str, url: str, body: bytes | None, accept: str, content_type: str | None,
                    timeout: float | None) -> Response:
        """One round trip, as ``RESTClient._send``: a GET on a dropped keep-alive connection is
        sent once more; a 401 with refreshable credentials once more with fresh ones."""
        rest = self.rest
        if rest.throttle is not None:
            await self._throttle()
        if self._proxy is not None:
            return await self._send_via_proxy(method, url, body, accept, content_type, timeout)
        pool = self._pool_here()
        target = self._prefix + url[len(self.host):]
        read_timeout = timeout or DEFAULT_READ_TIMEOUT
        refresh = False
        resp = Response(0, _NO_HEADERS, b"")
        for attempt in (1, 2, 3):
            if not refresh and time.monotonic() < rest._auth_until:
                credentials = rest._auth  # cached: no await (see _credentials)
            else:
                credentials = await self._credentials(refresh)
            head = self._head(method, target, credentials, accept, content_type)
            try:
                resp = await pool.request(head, body, method=method, read_timeout=read_timeout)
            except _BROKEN as err:
                if method != "GET" or attempt > 1:
                    raise self._unreachable(err) from None
                continue
            except _FAILED as err:
                raise self._unreachable(err) from None
            if resp.status != 401 or refresh or not self.rest._refreshable():
                return resp
            refresh = True
        return resp

    async def _send_via_proxy(self, method: str, url: str, body: bytes | None, accept: str,
                              content_type: str | None, timeout: float | None) -> Response:
        """``_send`` over aiohttp, through the configured proxy."""
        import aiohttp
        import yarl

        session = self._session_here()
        limits = _timeouts(timeout or DEFAULT_READ_TIMEOUT)
        target = yarl.URL(url, encoded=True)  # built and quoted by RESTClient.url already
        refresh = False
        resp = Response(0, _NO_HEADERS, b"")
        for attempt in (1, 2, 3):
            headers = {"Accept": accept, "User-Agent": self.rest.user_agent}
            if content_type:
                headers["Content-Type"] = content_type
            headers.update(await self._credentials(refresh))
            try:
                async with session.request(method, target, data=body, headers=headers, timeout=limits,
                                           proxy=self._proxy, server_hostname=self._server_hostname,
                                           allow_redirects=False) as r:
                    resp = Response(r.status, r.headers, await r.read())  # type: ignore[arg-type]  # a CIMultiDict
            except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as err:
                if method != "GET" or attempt > 1:
                    raise self._unreachable(err) from None
                continue
            except (TimeoutError, aiohttp.ClientError, OSError) as err:
                raise self._unreachable(err) from None
            if resp.status != 401 or refresh or not self.rest._refreshable():
                return resp
            refresh = True
        return resp

    def _unreachable(self, err: BaseException) -> TransportError:
        return TransportError(f"cannot reach the API server at {self.host}: {_one_line(err) or type(err).__name__}")

    async def stream(self, method: str, path: str, *, query: Mapping[str, str] | None = None,
                     timeout: float | None = None) -> AsyncResponseStream:
        """Open a streaming request (a watch); raises like ``request`` before streaming starts."""
        url = self.url(path, query)
        await self._throttle()
        if self._proxy is not None:
            return await self._stream_via_proxy(method, url, timeout)
        pool = self._pool_here()
        target = self._prefix + url[len(self.host):]
        for attempt in (1, 2):
            head = self._head(method, target, await self._credentials(False), "application/json", None)
            try:
                resp = await pool.open_stream(head, read_timeout=timeout)
                break
            except ConnectionDropped as err:  # idempotent: once more on a new connection
                if attempt > 1:
                    raise self._unreachable(err) from None
            except _FAILED as err:
                raise self._unreachable(err) from None
        self.rest.handle_warnings(resp.headers)
        if resp.status >= 400:
            try:
                data = await resp.read()
            except _FAILED as err:
                raise self._unreachable(err) from None
            raise errors.from_response(resp.status, data)
        return AsyncResponseStream(resp.lines(), resp.close, url)

    async def _stream_via_proxy(self, method: str, url: str, timeout: float | None) -> AsyncResponseStream:
        import aiohttp
        import yarl

        session = self._session_here()
        headers = {"Accept": "application/json", "User-Agent": self.rest.user_agent,
                   **await self._credentials(False)}
        try:
            resp = await session.request(method, yarl.URL(url, encoded=True), headers=headers,
                                         timeout=_timeouts(timeout), proxy=self._proxy,
                                         server_hostname=self._server_hostname, allow_redirects=False)
        except (TimeoutError, aiohttp.ClientError, OSError) as err:
            raise self._unreachable(err) from None
        self.rest.handle_warnings(resp.headers)
        if resp.status >= 400:
            data = await resp.read()
            resp.release()
            raise errors.from_response(resp.status, data)
        return AsyncResponseStream(_aiohttp_lines(resp), resp.close, url)


_NO_HEADERS = Headers([])


async def _aiohttp_lines(resp: aiohttp.ClientResponse) -> AsyncIterator[bytes]:
    """The lines of an aiohttp response body; its errors as ConnectionError."""
    import aiohttp

    content = resp.content
    try:
        while True:
            line = await content.readline()
            if not line:
                return
            yield line.rstrip(b"\r\n")
    except aiohttp.ClientError as err:
        raise ConnectionError(_one_line(err) or type(err).__name__) from None


@functools.lru_cache(maxsize=64)
def _content_headers(accept: str, content_type: str | None) -> str:
    """The Accept and Content-Type lines, encoded (and checked) once per pair."""
    return encode_headers({"Accept": accept, "Content-Type": content_type} if content_type else {"Accept": accept})


@functools.lru_cache(maxsize=64)
def _timeouts(read: float | None) -> aiohttp.ClientTimeout:
    """One (immutable) aiohttp timeout object per read timeout, not one per request."""
    import aiohttp

    return aiohttp.ClientTimeout(total=None, sock_connect=CONNECT_TIMEOUT, sock_read=read)


def _tls_and_proxy(cfg: Any) -> tuple[ssl.SSLContext | None, str | None, str | None]:
    """The TLS context (None for http), the TLS server name and the proxy URL for ``cfg``.

    An insecure configuration still presents its client certificate; only verification is off."""
    if isinstance(cfg, Config):
        proxy = cfg.proxy
        if proxy and urlsplit(proxy).scheme.lower().startswith("socks"):
            raise ConfigError(f"proxy {proxy}: the async client supports http(s) proxies only")
        if not cfg.host.startswith("https:"):
            return None, None, proxy
        ctx = cfg.ssl_context()
        if cfg.insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            return ctx, None, proxy
        ctx.check_hostname = True  # urllib3 matches the name itself; asyncio leaves it to the context
        return ctx, cfg.tls_server_name or None, proxy
    # a kubernetes.client.Configuration passed in
    proxy = cfg.proxy or None
    if not str(cfg.host).startswith("https:"):
        return None, None, proxy
    ctx = ssl.create_default_context(cafile=cfg.ssl_ca_cert or None)
    if cfg.cert_file:
        ctx.load_cert_chain(cfg.cert_file, cfg.key_file or None)
    if not cfg.verify_ssl:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx, None, proxy
    return ctx, getattr(cfg, "tls_server_name", None) or None, proxy


def load_async_rest_client(kubeconfig: str | None = None, master: str | None = None, context: str | None = None,
                           exec_timeout: float = EXEC_TIMEOUT, **kw: Any) -> AsyncRESTClient:
    """``rest.load_rest_client``'s order (flags, in-cluster, default kubeconfig), async."""
    return AsyncRESTClient(load_rest_client(kubeconfig, master, context, exec_timeout, **kw))
