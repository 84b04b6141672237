"""Cheap always-on request counters for the embedded API server (benchmarks, connection-reuse tests).

``RequestCounter.middleware`` counts every request by (User-Agent, verb) and counts the
connections requests arrive on. The verb is derived from the method, the path shape and the
``watch`` query parameter alone (no registry lookup), so it is Kubernetes' verb for every
well-formed resource request (get, list, watch, create, update, patch, delete,
deletecollection) and the lower-case HTTP method for anything else (discovery, /version, ...).
Memory is bounded by the number of distinct (User-Agent, verb) pairs plus the open connections.
"""

from __future__ import annotations

import weakref
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

__all__ = ["RequestCounter", "verb_of"]

_WATCH_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})


def verb_of(method: str, path: str, watch: str) -> str:
    """The Kubernetes verb of a request (see the module docstring)."""
    parts = [p for p in path.split("/") if p]
    if len(parts) < 2 or parts[0] not in ("api", "apis"):
        return method.lower()
    rest = parts[2:] if parts[0] == "api" else parts[3:]
    if not rest:
        return method.lower()  # discovery
    if rest[0] == "namespaces" and len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
        rest = rest[2:]
    named = len(rest) > 1
    if method == "GET":
        if watch in _WATCH_TRUE:
            return "watch"
        return "get" if named else "list"
    if method == "DELETE":
        return "delete" if named else "deletecollection"
    return {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, method.lower())


class RequestCounter:
    """Counts of requests by (User-Agent, verb) and of the connections they came on."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str]] = Counter()
        self.connections = 0
        """Connections that carried at least one request since the server started."""
        self._seen: weakref.WeakSet[Any] = weakref.WeakSet()

    def snapshot(self) -> dict[str, dict[str, int]]:
        """``{user_agent: {verb: count}}``, a copy."""
        out: dict[str, dict[str, int]] = {}
        for (ua, verb), n in list(self.counts.items()):
            out.setdefault(ua, {})[verb] = n
        return out

    def reset(self) -> None:
        self.counts.clear()
        self.connections = 0

    @web.middleware
    async def middleware(self, request: web.Request,
                         handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        transport = request.transport
        if transport is not None and transport not in self._seen:
            self._seen.add(transport)
            self.connections += 1
        verb = verb_of(request.method, request.path, request.query.get("watch", ""))
        self.counts[(request.headers.get("User-Agent", ""), verb)] += 1
        return await handler(request)
