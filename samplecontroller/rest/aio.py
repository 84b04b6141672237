"""The async HTTP transport: ``AsyncRESTClient``, the same requests as ``RESTClient`` over aiohttp.

It is a thin I/O layer over a ``RESTClient`` (``AsyncRESTClient(rest)``, or the same
constructors: ``from_kubeconfig``, ``in_cluster``, ``load_async_rest_client``) and shares
everything but the sockets with it: the configuration and its TLS settings and proxy, the
credentials (token files, exec plugins and their refresh every ``AUTH_REFRESH_INTERVAL`` or on
a 401: one cache for both clients), the client-side throttle (one token bucket), the
``Warning`` headers (to the same ``warning_handler``), Retry-After
retries (429/5xx, ``max_retries``, at most ``MAX_RETRY_AFTER`` each), the one resend of a GET
whose keep-alive connection was dropped, and the errors (``TransportError``, ``StatusError``
subclasses). Waiting never blocks the loop: throttling and Retry-After are ``asyncio.sleep``,
credentials that must be recomputed (a token file read, an exec plugin run) are computed on a
worker thread (``asyncio.to_thread``), cached ones are used at once.

aiohttp was chosen by measurement over httpx (``benchmarks/bench_async_http.py``): on the
embedded API server httpx spent 4 to 11 times aiohttp's CPU per request and served a half to an
eighth of its requests per second (worst with many in flight); aiohttp is also already the API
server's and webhook server's dependency (the ``async`` extra installs it).

One ``aiohttp.ClientSession`` per client, created on the first request on the running loop;
the client then belongs to that loop (a request from another loop is a RuntimeError naming the
fix). ``await close()`` closes it. Watches: ``stream`` returns an ``AsyncResponseStream``, an
async iterator of lines.
"""

from __future__ import annotations

import asyncio
import functools
import os
import ssl
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from samplecontroller import _extras

_extras.require("async", "samplecontroller.rest.aio (the async client)")

import aiohttp  # noqa: E402
import yarl  # noqa: E402

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

__all__ = ["AsyncRESTClient", "AsyncResponseStream", "load_async_rest_client"]

DEFAULT_ASYNC_POOL_SIZE = 32
"""Keep-alive connections per host (a request beyond them waits for a free one): as the sync
transport's pool. More costs TLS handshakes on the loop's one thread for little gain (measured
with bench_async.py: 100 took half again the CPU of 32 for 500 reconciles in flight)."""


class _Response:
    __slots__ = ("data", "headers", "status")

    def __init__(self, status: int, data: bytes, headers: Mapping[str, str]) -> None:
        self.status = status
        self.data = data
        self.headers = headers


class AsyncResponseStream:
    """A streaming response: ``async for line in stream`` (bytes, without the newline).

    ``close()`` ends the iteration (a broken connection raises ``TransportError`` unless closed)."""

    def __init__(self, response: aiohttp.ClientResponse, url: str) -> None:
        self._response = response
        self._url = url
        self._closed = False

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[bytes]:
        content = self._response.content
        try:
            while not self._closed:
                line = await content.readline()
                if not line:
                    break
                line = line.rstrip(b"\r\n")
                if line.strip():
                    yield line
        except (TimeoutError, aiohttp.ClientError, OSError) as err:
            if not self._closed:
                raise TransportError(f"stream from {self._url} broke: {_one_line(err) or type(err).__name__}") from None
        finally:
            self.close()

    def close(self) -> None:
        """Close the response and end the iteration; safe to call twice."""
        if not self._closed:
            self._closed = True
            self._response.close()


class AsyncRESTClient:
    """Raw async requests against one API server, sharing ``rest``'s configuration,
    credentials, throttle and retry policy (see the module docstring)."""

    def __init__(self, rest: RESTClient, *, pool_size: int = DEFAULT_ASYNC_POOL_SIZE) -> None:
        self.rest = rest
        self.host = rest.host
        self.pool_size = max(pool_size, DEFAULT_POOL_SIZE)
        self._prefix = urlsplit(rest.host).path
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ssl, self._server_hostname, self._proxy = _tls_and_proxy(rest.configuration)

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

    # -- the session -----------------------------------------------------------------------------

    def _session_here(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self.pool_size, ssl=self._ssl, enable_cleanup_closed=True)
            # no cookies (the API server sets none; a jar costs a filter and an update per request)
            self._session = aiohttp.ClientSession(connector=connector, auto_decompress=False,
                                                  skip_auto_headers=("Accept-Encoding",),
                                                  cookie_jar=aiohttp.DummyCookieJar())
            self._loop = loop
        elif self._loop is not loop:
            raise RuntimeError("this AsyncRESTClient belongs to the event loop it first ran on; make one "
                               "AsyncRESTClient per event loop (AsyncRESTClient(rest) shares the RESTClient's "
                               "configuration and credentials)")
        return self._session

    async def close(self) -> None:
        """Close the connections (the client may be used again: a new session is made)."""
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

    async def _headers(self, accept: str, content_type: str | None, refresh: bool) -> dict[str, str]:
        rest = self.rest
        if not refresh and time.monotonic() < rest._auth_until:
            credentials = rest._auth  # computed less than AUTH_REFRESH_INTERVAL ago: no I/O
        else:  # a token file to read or an exec plugin to run: off the loop
            credentials = await asyncio.to_thread(rest._credentials, refresh)
        headers = {"Accept": accept, "User-Agent": rest.user_agent}
        if content_type:
            headers["Content-Type"] = content_type
        headers.update(credentials)
        return headers

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
                    timeout: float | None) -> _Response:
        """One round trip, as ``RESTClient._send``: a GET on a dropped keep-alive connection is
        sent once more; a 401 with refreshable credentials once more with fresh ones."""
        await self._throttle()
        session = self._session_here()
        limits = _timeouts(timeout or 60.0)
        target = yarl.URL(url, encoded=True)  # built and quoted by RESTClient.url already
        refresh = False
        resp = _Response(0, b"", {})
        for attempt in (1, 2, 3):
            headers = await self._headers(accept, content_type, refresh)
            try:
                async with session.request(method, target, data=body, headers=headers, timeout=limits,
                                           proxy=self._proxy, server_hostname=self._server_hostname,
                                           allow_redirects=False) as r:
                    resp = _Response(r.status, await r.read(), r.headers)
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
        session = self._session_here()
        headers = await self._headers("application/json", None, False)
        limits = _timeouts(timeout)
        try:
            resp = await session.request(method, yarl.URL(url, encoded=True), headers=headers, timeout=limits, proxy=self._proxy,
                                         server_hostname=self._server_hostname, allow_redirects=False)
        except (TimeoutError, aiohttp.ClientError, OSError) as err:
            raise self._unreachable(err) from None
        self.rest.handle_warnings(resp.headers)
        if resp.status >= 400:
            data = await resp.read()
            resp.release()
            raise errors.from_response(resp.status, data)
        return AsyncResponseStream(resp, url)


@functools.lru_cache(maxsize=64)
def _timeouts(read: float | None) -> aiohttp.ClientTimeout:
    """One (immutable) timeout object per read timeout, not one per request."""
    return aiohttp.ClientTimeout(total=None, sock_connect=10.0, sock_read=read)


def _tls_and_proxy(cfg: Any) -> tuple[ssl.SSLContext | bool, str | None, str | None]:
    """aiohttp's ``ssl`` argument, the TLS server name and the proxy URL for ``cfg``."""
    if isinstance(cfg, Config):
        proxy = cfg.proxy
        if proxy and urlsplit(proxy).scheme.lower().startswith("socks"):
            raise ConfigError(f"proxy {proxy}: the async client supports http(s) proxies only")
        if not cfg.host.startswith("https:"):
            return True, None, proxy
        if cfg.insecure:
            return False, None, proxy
        ctx = cfg.ssl_context()
        ctx.check_hostname = True  # urllib3 matches the name itself; aiohttp leaves it to the context
        return ctx, cfg.tls_server_name or None, proxy
    # a kubernetes.client.Configuration passed in
    if not str(cfg.host).startswith("https:"):
        return True, None, cfg.proxy or None
    if not cfg.verify_ssl:
        return False, None, cfg.proxy or None
    ctx = ssl.create_default_context(cafile=cfg.ssl_ca_cert or None)
    if cfg.cert_file:
        ctx.load_cert_chain(cfg.cert_file, cfg.key_file or None)
    return ctx, getattr(cfg, "tls_server_name", None) or None, cfg.proxy or None


def load_async_rest_client(kubeconfig: str | None = None, master: str | None = None, context: str | None = None,
                           exec_timeout: float = EXEC_TIMEOUT, **kw: Any) -> AsyncRESTClient:
    """``rest.load_rest_client``'s order (flags, in-cluster, default kubeconfig), async."""
    return AsyncRESTClient(load_rest_client(kubeconfig, master, context, exec_timeout, **kw))
