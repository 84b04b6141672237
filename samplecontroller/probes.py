"""Small HTTP endpoints for a controller process: Prometheus ``/metrics`` and health probes.

``serve_metrics(addr)`` serves the default prometheus_client registry at ``/metrics``.
``serve_health(addr, ready)`` serves ``/healthz`` and ``/livez`` (200 while the process is
serving) and ``/readyz`` (200 only while ``ready()`` is true, else 503). Both run on a daemon
thread and return a ``ProbeServer`` whose ``close()`` stops listening. Binding errors raise
``OSError`` at once, before anything runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ProbeServer:
    """A running endpoint server; ``address`` is the bound (host, port)."""

    def __init__(self, server: ThreadingHTTPServer) -> None:
        self._server = server
        self.address: tuple[str, int] = (str(server.server_address[0]), int(server.server_address[1]))
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="probe-server", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop serving and release the port. Idempotent."""
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()


Route = Callable[[], tuple[int, str, bytes]]


def _serve(address: tuple[str, int], routes: dict[str, Route]) -> ProbeServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            route = routes.get(self.path.split("?", 1)[0])
            if route is None:
                code, ctype, body = 404, "text/plain; charset=utf-8", b"404 page not found\n"
            else:
                code, ctype, body = route()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # quiet: probes are frequent
            return

    server = ThreadingHTTPServer(address, Handler)
    server.daemon_threads = True
    return ProbeServer(server)


def serve_metrics(address: tuple[str, int]) -> ProbeServer:
    """Serve the default Prometheus registry at ``/metrics`` (prometheus_client is imported only
    here: a process serving health probes alone does not load it)."""
    from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

    def metrics() -> tuple[int, str, bytes]:
        return 200, CONTENT_TYPE_LATEST, generate_latest(REGISTRY)

    return _serve(address, {"/metrics": metrics})


def serve_health(address: tuple[str, int], ready: Callable[[], bool]) -> ProbeServer:
    """Serve ``/healthz``, ``/livez`` (always ok) and ``/readyz`` (ok while ``ready()``)."""

    def ok() -> tuple[int, str, bytes]:
        return 200, "text/plain; charset=utf-8", b"ok"

    def readyz() -> tuple[int, str, bytes]:
        if ready():
            return ok()
        return 503, "text/plain; charset=utf-8", b"not ready: informers not synced or not leading\n"

    return _serve(address, {"/healthz": ok, "/livez": ok, "/readyz": readyz})


def parse_bind_address(address: str) -> tuple[str, int] | None:
    """":8080" -> ("0.0.0.0", 8080); "0" or "" -> None. ValueError for anything else."""
    if address in ("0", ""):
        return None
    host, sep, port = address.rpartition(":")
    if not sep:
        host, port = "", address
    try:
        n = int(port)
    except ValueError:
        raise ValueError(f"{address!r} is not host:port or :port") from None
    if not 0 <= n <= 65535:
        raise ValueError(f"port {n} is out of range")
    return host or "0.0.0.0", n
