"""A small in-memory API server on loopback (aiohttp in a thread) and test models.

It serves one namespaced custom resource (``widgets.example.com/v1``, with a status
subresource) the way the API server does for the paths the clients use, records every request,
and lets a test push raw watch lines or force an error answer.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from aiohttp import web

from samplecontroller.apimachinery import errors
from samplecontroller.client.types import ResourceInfo
from samplecontroller.rest import RESTClient

GROUP, VERSION = "example.com", "v1"
BASE = f"/apis/{GROUP}/{VERSION}"


# -- test models, following the generated conventions --------------------------------------------


class ObjectMeta(msgspec.Struct, frozen=True, kw_only=True):
    name: str | msgspec.UnsetType = msgspec.UNSET
    namespace: str | msgspec.UnsetType = msgspec.UNSET
    uid: str | msgspec.UnsetType = msgspec.UNSET
    resource_version: str | msgspec.UnsetType = msgspec.field(name="resourceVersion", default=msgspec.UNSET)
    generation: int | msgspec.UnsetType = msgspec.UNSET
    labels: dict[str, str] | msgspec.UnsetType = msgspec.UNSET


class ListMeta(msgspec.Struct, frozen=True, kw_only=True):
    resource_version: str | msgspec.UnsetType = msgspec.field(name="resourceVersion", default=msgspec.UNSET)
    continue_: str | msgspec.UnsetType = msgspec.field(name="continue", default=msgspec.UNSET)
    remaining_item_count: int | msgspec.UnsetType = msgspec.field(name="remainingItemCount", default=msgspec.UNSET)


class Port(msgspec.Struct, frozen=True, kw_only=True):
    name: str | msgspec.UnsetType = msgspec.UNSET
    port: int | msgspec.UnsetType = msgspec.UNSET


class WidgetSpec(msgspec.Struct, frozen=True, kw_only=True):
    replicas: int | msgspec.UnsetType = msgspec.UNSET
    ports: tuple[Port, ...] | msgspec.UnsetType = msgspec.UNSET


class WidgetStatus(msgspec.Struct, frozen=True, kw_only=True):
    ready: int | msgspec.UnsetType = msgspec.UNSET


class Widget(msgspec.Struct, frozen=True, kw_only=True):
    api_version: str = msgspec.field(name="apiVersion", default=f"{GROUP}/{VERSION}")
    kind: str = "Widget"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: WidgetSpec | msgspec.UnsetType = msgspec.UNSET
    status: WidgetStatus | msgspec.UnsetType = msgspec.UNSET


class WidgetList(msgspec.Struct, frozen=True, kw_only=True):
    api_version: str = msgspec.field(name="apiVersion", default=f"{GROUP}/{VERSION}")
    kind: str = "WidgetList"
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: tuple[Widget, ...] = ()


WIDGETS: ResourceInfo[Widget] = ResourceInfo(
    group=GROUP, version=VERSION, resource="widgets", kind="Widget", namespaced=True, model=Widget,
    list_model=WidgetList, list_kind="WidgetList", singular="widget", subresources=("status",),
)
WIDGETS_DYNAMIC: ResourceInfo[dict[str, Any]] = ResourceInfo(
    group=GROUP, version=VERSION, resource="widgets", kind="Widget", namespaced=True, model=dict,
    list_model=dict, list_kind="WidgetList", subresources=("status",),
)


def widget(name: str, ns: str = "default", replicas: int = 1, **labels: str) -> Widget:
    return Widget(metadata=ObjectMeta(name=name, namespace=ns, labels=labels or msgspec.UNSET),
                  spec=WidgetSpec(replicas=replicas))


# -- the server --------------------------------------------------------------------------------------


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes


@dataclass
class MiniServer:
    """State of the loopback server; ``url`` is set once it listens."""

    url: str = ""
    objects: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    rv: int = 0
    requests: list[Recorded] = field(default_factory=list)
    force_error: tuple[int, bytes] | None = None
    throttle: list[tuple[int, str]] = field(default_factory=list)
    """(status, Retry-After) answers given, one per request, before any normal answer."""
    loop: asyncio.AbstractEventLoop | None = None
    watch_queues: list[asyncio.Queue[bytes | None]] = field(default_factory=list)
    watch_opened: threading.Event = field(default_factory=threading.Event)
    watch_closed: threading.Event = field(default_factory=threading.Event)

    def rest(self) -> RESTClient:
        import kubernetes

        cfg = kubernetes.client.Configuration()
        cfg.host = self.url
        return RESTClient(cfg)

    def seed(self, obj: dict[str, Any]) -> dict[str, Any]:
        md = obj.setdefault("metadata", {})
        self.rv += 1
        md["resourceVersion"] = str(self.rv)
        md.setdefault("uid", f"uid-{md['name']}")
        self.objects[(md.get("namespace", ""), md["name"])] = obj
        return obj

    def send_watch_line(self, line: bytes | None) -> None:
        """Push a raw line to every open watch (None ends them)."""
        assert self.loop is not None
        for q in list(self.watch_queues):
            self.loop.call_soon_threadsafe(q.put_nowait, line)


def _status(code: int, reason: str, message: str) -> web.Response:
    return web.json_response(errors.new_status(code, reason, message), status=code)


def _make_app(state: MiniServer) -> web.Application:
    async def record(request: web.Request) -> Recorded:
        rec = Recorded(request.method, request.path, dict(request.query), dict(request.headers),
                       await request.read())
        state.requests.append(rec)
        return rec

    async def collection(request: web.Request) -> web.StreamResponse:
        rec = await record(request)
        if state.force_error:
            code, body = state.force_error
            return web.Response(status=code, body=body, content_type="application/json")
        ns = request.match_info.get("ns", "")
        if request.method == "POST":
            obj = json.loads(rec.body)
            obj.setdefault("metadata", {}).setdefault("namespace", ns)
            if (ns, obj["metadata"]["name"]) in state.objects:
                return _status(409, "AlreadyExists", f'widgets.example.com "{obj["metadata"]["name"]}" already exists')
            return web.json_response(state.seed(obj), status=201)
        if request.method == "DELETE":
            for key in [k for k in state.objects if not ns or k[0] == ns]:
                del state.objects[key]
            return web.json_response({"kind": "Status", "status": "Success"})
        if rec.query.get("watch") in ("true", "1"):
            return await watch(request)
        items = [o for (ons, _), o in sorted(state.objects.items()) if not ns or ons == ns]
        return web.json_response({"apiVersion": f"{GROUP}/{VERSION}", "kind": "WidgetList",
                                  "metadata": {"resourceVersion": str(state.rv), "continue": "tok"},
                                  "items": items})

    async def watch(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()
        resp.content_type = "application/json"
        await resp.prepare(request)
        q: asyncio.Queue[bytes | None] = asyncio.Queue()
        state.watch_queues.append(q)
        state.watch_opened.set()
        try:
            idle = 0.0
            while idle < 10:
                transport = request.transport
                if transport is None or transport.is_closing():
                    break  # the client hung up
                try:
                    line = await asyncio.wait_for(q.get(), timeout=0.02)
                except TimeoutError:
                    idle += 0.02
                    continue
                idle = 0.0
                if line is None:
                    break
                await resp.write(line + b"\n")
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            state.watch_queues.remove(q)
            state.watch_closed.set()
        return resp

    async def item(request: web.Request) -> web.StreamResponse:
        rec = await record(request)
        ns, name = request.match_info.get("ns", ""), request.match_info["name"]
        if state.force_error:
            code, body = state.force_error
            return web.Response(status=code, body=body, content_type="application/json")
        current = state.objects.get((ns, name))
        if current is None:
            return _status(404, "NotFound", f'widgets.example.com "{name}" not found')
        if request.method == "GET":
            return web.json_response(current)
        if request.method == "DELETE":
            del state.objects[(ns, name)]
            return web.json_response({"kind": "Status", "status": "Success"})
        body = json.loads(rec.body)
        if request.method == "PATCH":
            new = json.loads(json.dumps(current))
            if isinstance(body, dict):
                new.update(body)  # a top-level merge is enough for these tests
            return web.json_response(state.seed(new))
        # PUT: optimistic concurrency, status subresource semantics
        if body.get("metadata", {}).get("resourceVersion") != current["metadata"]["resourceVersion"]:
            return _status(409, "Conflict", "the object has been modified; please apply your changes "
                           "to the latest version and try again")
        if request.path.endswith("/status"):
            new = dict(current, status=body.get("status"))
        else:
            new = dict(body, status=current.get("status")) if "status" in current else body
        return web.json_response(state.seed(new))

    async def discovery(request: web.Request) -> web.Response:
        await record(request)
        path = request.path
        if path == "/api":
            return web.json_response({"kind": "APIVersions", "versions": ["v1"]})
        if path == "/api/v1":
            return web.json_response({"kind": "APIResourceList", "groupVersion": "v1", "resources": [
                {"name": "configmaps", "singularName": "configmap", "namespaced": True, "kind": "ConfigMap",
                 "verbs": ["get", "list"], "shortNames": ["cm"]},
                {"name": "namespaces", "singularName": "namespace", "namespaced": False, "kind": "Namespace",
                 "verbs": ["get", "list"]},
                {"name": "namespaces/status", "singularName": "", "namespaced": False, "kind": "Namespace",
                 "verbs": ["get", "update"]},
            ]})
        if path == "/apis":
            return web.json_response({"kind": "APIGroupList", "groups": [
                {"name": GROUP, "versions": [{"groupVersion": f"{GROUP}/{VERSION}", "version": VERSION}],
                 "preferredVersion": {"groupVersion": f"{GROUP}/{VERSION}", "version": VERSION}}]})
        if path == BASE:
            return web.json_response({"kind": "APIResourceList", "groupVersion": f"{GROUP}/{VERSION}", "resources": [
                {"name": "widgets", "singularName": "widget", "namespaced": True, "kind": "Widget",
                 "verbs": ["get", "list", "watch"], "shortNames": ["wd"]},
                {"name": "widgets/status", "singularName": "", "namespaced": True, "kind": "Widget",
                 "verbs": ["get", "update", "patch"]},
            ]})
        return _status(404, "NotFound", "the server could not find the requested resource")

    async def plain_error(request: web.Request) -> web.Response:
        await record(request)
        return web.Response(status=int(request.match_info["code"]), text="upstream says no\n")

    @web.middleware
    async def throttling(request: web.Request, handler: Any) -> web.StreamResponse:
        if state.throttle:
            await record(request)
            code, retry_after = state.throttle.pop(0)
            resp = _status(code, "TooManyRequests" if code == 429 else "InternalError", "please retry")
            resp.headers["Retry-After"] = retry_after
            return resp
        return await handler(request)  # type: ignore[no-any-return]

    app = web.Application(middlewares=[throttling])
    app.router.add_route("*", BASE + "/namespaces/{ns}/widgets", collection)
    app.router.add_route("*", BASE + "/widgets", collection)
    app.router.add_route("*", BASE + "/namespaces/{ns}/widgets/{name}", item)
    app.router.add_route("*", BASE + "/namespaces/{ns}/widgets/{name}/status", item)
    app.router.add_get("/plain/{code}", plain_error)
    for p in ("/api", "/api/v1", "/apis", BASE):
        app.router.add_get(p, discovery)
    return app


@pytest.fixture
def server() -> Iterator[MiniServer]:
    state = MiniServer()
    started = threading.Event()
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(_make_app(state), shutdown_timeout=0.5)

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        port = runner.addresses[0][1]
        state.url = f"http://127.0.0.1:{port}"
        state.loop = loop
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert started.wait(10)
    yield state
    state.send_watch_line(None)
    fut = asyncio.run_coroutine_threadsafe(runner.cleanup(), loop)
    try:
        fut.result(5)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
