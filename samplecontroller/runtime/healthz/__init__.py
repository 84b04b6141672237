"""Health probes with named checks (pkg/healthz).

A checker is ``fn() -> None`` that raises to report failure. ``Handler`` answers a path such as
``/healthz``: 200 ``ok`` when every check passes, else 500 listing failures; ``/healthz/<name>``
runs one check (404 if unknown); ``?verbose`` lists every check as ``[+]name ok`` /
``[-]name failed: reason``; ``?exclude=name`` skips one. ``serve(address, healthz, readyz)``
serves both sets on a daemon thread.

Probes (kopf's ``on.probe``): ``Handler.add_probe(name, fn)`` adds ``fn() -> value`` (JSON-able)
as a check (raising fails it); asked for JSON (``Accept: application/json`` or
``?format=json``) the endpoint answers ``{"name": value, ...}`` of every probe (200), or 500
with ``{"failed": {"name": "reason"}, ...}`` when a check or probe fails.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from samplecontroller.probes import ProbeServer

Checker = Callable[[], None]


def ping() -> None:
    """Always healthy."""


class Handler:
    """The checks of one endpoint (``/healthz`` or ``/readyz``)."""

    def __init__(self, checks: Mapping[str, Checker] | None = None) -> None:
        self._lock = threading.Lock()
        self.checks: dict[str, Checker] = dict(checks or {})
        self.probes: dict[str, Callable[[], Any]] = {}

    def add_probe(self, name: str, probe: Callable[[], Any]) -> None:
        """Register ``probe() -> value`` as ``name``: a check, and a value in the JSON answer."""

        def check() -> None:
            probe()

        self.add(name, check)
        with self._lock:
            self.probes[name] = probe

    def serve_json(self) -> tuple[int, bytes]:
        """The JSON answer: every probe's value, or the failures (see the module docstring)."""
        with self._lock:
            checks = dict(self.checks)
            probes = dict(self.probes)
        values: dict[str, Any] = {}
        failed: dict[str, str] = {}
        for name in sorted(checks):
            try:
                if name in probes:
                    values[name] = probes[name]()
                else:
                    checks[name]()
            except Exception as err:
                failed[name] = f"{type(err).__name__}: {err}"
        if failed:
            return 500, json.dumps({"failed": failed, **values}, default=str).encode()
        return 200, json.dumps(values, default=str).encode()

    def add(self, name: str, check: Checker) -> None:
        """Register ``check`` as ``name``; ValueError if that name is taken."""
        if not name or "/" in name:
            raise ValueError(f"invalid check name {name!r}")
        with self._lock:
            if name in self.checks:
                raise ValueError(f"check {name!r} is already registered")
            self.checks[name] = check

    def serve(self, sub: str, query: Mapping[str, list[str]]) -> tuple[int, bytes]:
        """Status code and body for the check path ``sub`` ("" for all) and the query (``verbose``, ``exclude``)."""
        with self._lock:
            checks = dict(self.checks)
        if sub:
            if sub not in checks:
                return 404, f"no check named {sub!r}\n".encode()
            checks = {sub: checks[sub]}
        excluded = set(query.get("exclude", []))
        lines, failed = [], []
        for name in sorted(checks):
            if name in excluded:
                lines.append(f"[+]{name} excluded: ok")
                continue
            try:
                checks[name]()
            except Exception as err:
                failed.append(name)
                lines.append(f"[-]{name} failed: {err}")
            else:
                lines.append(f"[+]{name} ok")
        verbose = "verbose" in query
        if failed:
            return 500, ("\n".join(lines) + f"\nhealthz check failed: {', '.join(failed)}\n").encode()
        if verbose:
            return 200, ("\n".join(lines) + "\nhealthz check passed\n").encode()
        return 200, b"ok"


def serve(address: tuple[str, int], endpoints: Mapping[str, Handler]) -> ProbeServer:
    """Serve ``endpoints`` (path prefix such as "/healthz" -> Handler). OSError if it cannot bind."""

    class _HTTP(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urlsplit(self.path)
            code, body = 404, b"404 page not found\n"
            query = parse_qs(url.query, keep_blank_values=True)
            as_json = "json" in query.get("format", []) or "application/json" in (self.headers.get("Accept") or "")
            ctype = "text/plain; charset=utf-8"
            for prefix, handler in endpoints.items():
                if url.path == prefix or url.path.startswith(prefix + "/"):
                    sub = url.path[len(prefix):].strip("/")
                    if as_json and not sub:
                        code, body = handler.serve_json()
                        ctype = "application/json"
                    else:
                        code, body = handler.serve(sub, query)
                    break
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(address, _HTTP)
    server.daemon_threads = True
    return ProbeServer(server)


__all__ = ["Checker", "Handler", "ping", "serve"]
