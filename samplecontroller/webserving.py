"""Stopping an aiohttp web server without leaving a connection to the garbage collector.

Used by the embedded API server and by the webhook server (both need aiohttp: the
``apiserver`` and ``webhook`` extras).

``cleanup(runner)`` is ``runner.cleanup()`` (stop listening, give requests in progress the
runner's shutdown timeout, close every connection) followed by an abort of the connections that
are still open after it, and a wait (a few loop iterations) until their sockets are closed.
Closing a TLS connection sends close_notify and waits for the peer's, up to the loop's
ssl_shutdown_timeout (30 s): a peer that does not answer (a client thread that is not reading,
a watch) keeps the socket open. Once the loop is closed, such a transport is only freed by the
garbage collector, which warns ``unclosed transport``; on Python 3.13 its ``__del__`` also calls
``asyncio.Server._detach`` on a server that has already woken its waiters and raises
``TypeError: 'NoneType' object is not iterable`` (an unraisable exception).
"""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any

from aiohttp import web

__all__ = ["cleanup"]

log = logging.getLogger(__name__)


def _socket_closed(sock: Any) -> bool:
    try:
        return sock is None or sock.fileno() == -1
    except OSError:
        return True


def _under_tls(transport: asyncio.BaseTransport) -> asyncio.BaseTransport:
    """The socket transport under asyncio's TLS transport (``transport`` itself without TLS)."""
    ssl_protocol = getattr(transport, "_ssl_protocol", None)
    raw = getattr(ssl_protocol, "_transport", None)
    return raw if isinstance(raw, asyncio.BaseTransport) else transport


async def cleanup(runner: web.BaseRunner) -> None:
    """``runner.cleanup()``, then abort every connection it left open (see the module docstring)."""
    server = runner.server
    handlers = server.connections if server is not None else []
    # the socket transports now: asyncio's TLS transport forgets its connection when it is closed
    # a second time, as aiohttp's shutdown does, and then neither aborts it nor names its socket
    transports = [_under_tls(h.transport) for h in handlers if h.transport is not None]
    sockets: list[socket.socket | None] = [t.get_extra_info("socket") for t in transports]
    listeners = [getattr(site, "_server", None) for site in runner.sites]
    await runner.cleanup()
    for transport in transports:
        if isinstance(transport, asyncio.WriteTransport):
            transport.abort()
    for listener in listeners:
        # Python 3.13+: the sockets under every connection, those still in their TLS handshake too
        abort_clients = getattr(listener, "abort_clients", None)
        if abort_clients is not None:
            abort_clients()
    for _ in range(100):
        if all(_socket_closed(s) for s in sockets):
            return
        await asyncio.sleep(0)
    log.warning("%d connections still open after they were aborted", sum(not _socket_closed(s) for s in sockets))
