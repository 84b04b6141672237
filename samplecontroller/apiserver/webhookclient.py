"""The HTTPS client the API server calls webhooks with (k8s.io/apiserver's webhook client
manager): admission webhooks (``admission``) and CRD conversion webhooks (``crdconversion``)
share it.

Contract:
- ``post(config, body, timeout)`` POSTs ``body`` as JSON to ``config["url"]`` (a webhook
  ``clientConfig``), trusting ``config["caBundle"]`` (base64 PEM; the system CAs when empty), and
  returns the raw answer (status, bytes). ``timeout`` bounds the whole call.
- A ``service`` reference is resolved only to say why it cannot be called: the embedded server
  has no cluster network (``WebhookCallError``; the test kit rewrites services to URLs, as envtest's
  WebhookInstallOptions do).
- Transport failures raise ``WebhookCallError`` whose text is Go's for the same failure
  (``Post "<url>": dial tcp <addr>: connect: connection refused``, ``context deadline exceeded``).
- One aiohttp session (kept-alive connections), made on the server's loop; ``close`` ends it.
  Its connections are not capped, in total or per webhook (as Go's transport, which kube's
  webhook clients use): one slow webhook holding many calls never delays a call to another.
  Calls run on the server's event loop, so a webhook may call back into this API server.
"""

from __future__ import annotations

import base64
import functools
import ssl
from collections.abc import Mapping
from typing import Any

import aiohttp

__all__ = ["WebhookCallError", "WebhookClient", "service_url"]


class WebhookCallError(Exception):
    """A webhook could not be called or did not answer in time (the text is Go's)."""


def service_url(service: Mapping[str, Any]) -> str:
    """The in-cluster URL kube-apiserver would call for a ``service`` reference."""
    path = str(service.get("path") or "")
    return f"https://{service.get('name')}.{service.get('namespace')}.svc:{service.get('port') or 443}{path}"


@functools.lru_cache(maxsize=32)
def _ssl_context(ca_bundle: str) -> ssl.SSLContext:
    """A client context trusting ``ca_bundle`` (base64 PEM), or the system CAs when it is empty
    (built once per bundle: loading certificates costs milliseconds)."""
    if not ca_bundle:
        return ssl.create_default_context()
    return ssl.create_default_context(cadata=base64.b64decode(ca_bundle).decode())


def _go_reason(err: BaseException, url: str) -> str:
    """What Go's net/http client says for ``err``."""
    if isinstance(err, TimeoutError | aiohttp.ServerTimeoutError):
        return "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
    if isinstance(err, aiohttp.ClientConnectorCertificateError | aiohttp.ClientSSLError | ssl.SSLError):
        return f"tls: failed to verify certificate: {err}"
    if isinstance(err, aiohttp.ClientConnectorError):
        cause = err.os_error
        host = f"{err.host}:{err.port}"
        if isinstance(cause, ConnectionRefusedError):
            return f"dial tcp {host}: connect: connection refused"
        return f"dial tcp {host}: {cause.strerror or cause}"
    if isinstance(err, aiohttp.ServerDisconnectedError):
        return "EOF"
    return f"{type(err).__name__}: {err}" if str(err) else type(err).__name__


class WebhookClient:
    """Calls webhooks over HTTPS (see the module docstring)."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None

    def session(self) -> aiohttp.ClientSession:
        """One HTTP session (kept-alive connections to the webhooks), made on the server's loop."""
        if self._session is None or self._session.closed:
            # no cap on connections, in total or per host (aiohttp's default is 100 in total): as
            # Go's transport (MaxConnsPerHost 0), a webhook that holds its calls never makes a
            # call to another one wait for a free connection
            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, limit_per_host=0))
        return self._session

    async def close(self) -> None:
        """Close the webhook connections (the server calls this when it shuts down)."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def post(self, config: Mapping[str, Any], body: Any, timeout: float,
                   query: str = "") -> tuple[int, bytes]:
        """POST ``body`` to the webhook of ``config``; returns (HTTP status, body). ``query`` is
        added to the URL (the rest client's ``timeout=30s``)."""
        url = str(config.get("url") or "")
        if not url:
            raw_service = config.get("service")
            service: Mapping[str, Any] = raw_service if isinstance(raw_service, Mapping) else {}
            target = service_url(service) + (f"?{query}" if query else "")
            raise WebhookCallError(f'Post "{target}": service "{service.get("name")}" in namespace '
                                   f'"{service.get("namespace")}" cannot be reached (the embedded API server '
                                   "has no cluster network and calls clientConfig.url only)")
        target = url + (("&" if "?" in url else "?") + query if query else "")
        try:
            async with self.session().post(target, json=body, ssl=_ssl_context(str(config.get("caBundle") or "")),
                                           timeout=aiohttp.ClientTimeout(total=timeout)) as resp:
                return resp.status, await resp.read()
        except (TimeoutError, aiohttp.ClientError, ssl.SSLError, OSError, ValueError) as err:
            raise WebhookCallError(f'Post "{target}": {_go_reason(err, target)}') from err
