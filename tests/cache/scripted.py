"""A small scripted API server (aiohttp, loopback) and an HTTP ListerWatcher speaking to it.

The server keeps objects and an event log with increasing resourceVersions, like a watch
cache: a watch from version N streams every logged event after N, then waits for more. The
test drives it: ``put``/``remove`` objects, ``bookmark``, ``end_watches(mode)`` (``normal``
close, ``drop`` the connection, ``expired``: an ERROR 410 event), ``expire_below`` (lists and
watches at older versions get 410), ``expire_continue``, ``fail_lists``. Every request's
query is recorded in ``requests``.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import msgspec
from aiohttp import web

from samplecontroller.apimachinery import errors
from samplecontroller.client.types import ListOptions, ListResult, WatchEvent


class Meta(msgspec.Struct, frozen=True, kw_only=True, rename="camel", gc=False):
    name: str = ""
    namespace: str = ""
    resource_version: str = ""
    labels: dict[str, str] = {}
    managed_fields: list[Any] | msgspec.UnsetType = msgspec.UNSET


class Obj(msgspec.Struct, frozen=True, kw_only=True, rename="camel", gc=False):
    api_version: str = "test/v1"
    kind: str = "Obj"
    metadata: Meta = Meta()
    spec: dict[str, Any] = {}


class ObjList(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    metadata: dict[str, Any] = {}
    items: list[Obj] = []


def expired_status(message: str = "too old resource version") -> dict[str, Any]:
    return errors.new_status(410, "Expired", message)


@dataclass
class Request:
    kind: str  # "list" | "watch"
    query: dict[str, str]


@dataclass
class ScriptedServer:
    objects: dict[str, dict[str, Any]] = field(default_factory=dict)
    log: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)
    rv: int = 100
    requests: list[Request] = field(default_factory=list)
    expire_below: int = 0
    expire_continue: bool = False
    fail_lists: int = 0
    watch_delay_error: bool = False
    url: str = ""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._changed: asyncio.Condition | None = None
        self._end_mode: str | None = None
        self._end_generation = 0
        self._open_watches = 0
        self._started = threading.Event()

    # -- test-side controls (any thread) ---------------------------------------------------

    def put(self, name: str, namespace: str = "default", labels: dict[str, str] | None = None,
            **spec: Any) -> dict[str, Any]:
        with self._lock:
            self.rv += 1
            key = f"{namespace}/{name}"
            kind = "MODIFIED" if key in self.objects else "ADDED"
            obj = {"apiVersion": "test/v1", "kind": "Obj",
                   "metadata": {"name": name, "namespace": namespace, "resourceVersion": str(self.rv),
                                "labels": labels or {}},
                   "spec": spec}
            self.objects[key] = obj
            self.log.append((self.rv, kind, obj))
        self._notify()
        return obj

    def remove(self, name: str, namespace: str = "default", quiet: bool = False) -> None:
        """Delete; ``quiet`` deletes without a watch event (as if missed while disconnected)."""
        with self._lock:
            self.rv += 1
            obj = self.objects.pop(f"{namespace}/{name}")
            if not quiet:
                gone = json.loads(json.dumps(obj))
                gone["metadata"]["resourceVersion"] = str(self.rv)
                self.log.append((self.rv, "DELETED", gone))
        self._notify()

    def bookmark(self) -> int:
        with self._lock:
            self.rv += 1
            self.log.append((self.rv, "BOOKMARK", {"kind": "Obj", "apiVersion": "test/v1",
                                                   "metadata": {"resourceVersion": str(self.rv)}}))
            rv = self.rv
        self._notify()
        return rv

    def end_watches(self, mode: str = "normal") -> None:
        with self._lock:
            self._end_mode = mode
            self._end_generation += 1
        self._notify()

    def open_watches(self) -> int:
        with self._lock:
            return self._open_watches

    def queries(self, kind: str) -> list[dict[str, str]]:
        with self._lock:
            return [r.query for r in self.requests if r.kind == kind]

    def _notify(self) -> None:
        loop, cond = self._loop, self._changed
        if loop is None or cond is None:
            return

        async def wake() -> None:
            async with cond:
                cond.notify_all()

        asyncio.run_coroutine_threadsafe(wake(), loop)

    # -- handlers --------------------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.StreamResponse:
        query = dict(request.query)
        if query.get("watch") == "true":
            return await self._watch(request, query)
        return self._list(query)

    def _list(self, query: dict[str, str]) -> web.Response:
        with self._lock:
            self.requests.append(Request("list", query))
            if self.fail_lists > 0:
                self.fail_lists -= 1
                return web.json_response(errors.new_status(500, "InternalError", "scripted failure"), status=500)
            cont = query.get("continue", "")
            rv = query.get("resourceVersion", "")
            if cont:
                if self.expire_continue:
                    return web.json_response(expired_status("continue token expired"), status=410)
                offset_s, _, list_rv = cont.partition(":")
                offset = int(offset_s)
                items_all = json.loads(list_rv.split("|", 1)[1])
                list_rv = list_rv.split("|", 1)[0]
            else:
                if rv not in ("", "0") and int(rv) < self.expire_below:
                    return web.json_response(expired_status(), status=410)
                offset = 0
                items_all = [self.objects[k] for k in sorted(self.objects)]
                list_rv = str(self.rv)
            limit = int(query.get("limit", "0") or 0)
            if limit and offset + limit < len(items_all):
                page = items_all[offset:offset + limit]
                token = f"{offset + limit}:{list_rv}|{json.dumps(items_all)}"
            else:
                page = items_all[offset:]
                token = ""
        meta: dict[str, Any] = {"resourceVersion": list_rv}
        if token:
            meta["continue"] = token
        return web.json_response({"apiVersion": "test/v1", "kind": "ObjList", "metadata": meta, "items": page})

    async def _watch(self, request: web.Request, query: dict[str, str]) -> web.StreamResponse:
        assert self._changed is not None
        with self._lock:
            self.requests.append(Request("watch", query))
            since = int(query.get("resourceVersion") or self.rv)
            if since < self.expire_below and not self.watch_delay_error:
                return web.json_response(expired_status(), status=410)
            generation = self._end_generation
            self._open_watches += 1
        resp = web.StreamResponse()
        resp.content_type = "application/json"
        await resp.prepare(request)
        try:
            if since < self.expire_below:
                await resp.write(json.dumps({"type": "ERROR", "object": expired_status()}).encode() + b"\n")
                return resp
            while True:
                async with self._changed:
                    with self._lock:
                        pending = [(rv, t, o) for rv, t, o in self.log if rv > since]
                        ended = self._end_generation != generation
                        mode = self._end_mode
                    if not pending and not ended:
                        await self._changed.wait()
                        continue
                for rv, kind, obj in pending:
                    if kind == "BOOKMARK" and query.get("allowWatchBookmarks") != "true":
                        since = rv
                        continue
                    await resp.write(json.dumps({"type": kind, "object": obj}).encode() + b"\n")
                    since = rv
                if ended:
                    if mode == "drop":
                        assert request.transport is not None
                        request.transport.abort()
                        return resp
                    if mode == "expired":
                        await resp.write(json.dumps({"type": "ERROR", "object": expired_status()}).encode() + b"\n")
                    return resp
        finally:
            with self._lock:
                self._open_watches -= 1

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        threading.Thread(target=self._serve, daemon=True, name="scripted-server").start()
        if not self._started.wait(10):
            raise RuntimeError("scripted server did not start")

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)

        async def setup() -> web.AppRunner:
            self._changed = asyncio.Condition()
            app = web.Application()
            app.router.add_get("/objs", self.handle)
            runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.1)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            port = runner.addresses[0][1]
            self.url = f"127.0.0.1:{port}"
            return runner

        self._runner = loop.run_until_complete(setup())
        self._started.set()
        loop.run_forever()
        loop.run_until_complete(self._runner.cleanup())
        loop.close()

    def stop(self) -> None:
        if self._loop is not None:
            self.end_watches("normal")
            self._loop.call_soon_threadsafe(self._loop.stop)


_list_decoder = msgspec.json.Decoder(ObjList)
_dict_list_decoder = msgspec.json.Decoder(dict[str, Any])


class _RawEvent(msgspec.Struct):
    type: str
    object: msgspec.Raw


_event_decoder = msgspec.json.Decoder(_RawEvent)
_obj_decoder = msgspec.json.Decoder(Obj)
_dict_decoder = msgspec.json.Decoder(dict[str, Any])


class HTTPWatch:
    """An open watch over http.client; ``stop()`` from any thread shuts the socket down."""

    def __init__(self, conn: http.client.HTTPConnection, resp: http.client.HTTPResponse, typed: bool) -> None:
        self._conn = conn
        self._resp = resp
        self._typed = typed
        self._stopped = threading.Event()

    def __iter__(self) -> Iterator[WatchEvent[Any]]:
        try:
            while not self._stopped.is_set():
                line = self._resp.readline()
                if not line:
                    return
                raw = _event_decoder.decode(line)
                if raw.type == "ERROR":
                    yield WatchEvent("ERROR", None, _dict_decoder.decode(raw.object))
                    continue
                decoder = _obj_decoder if self._typed else _dict_decoder
                yield WatchEvent(raw.type, decoder.decode(raw.object))  # type: ignore[arg-type]
        except (OSError, http.client.HTTPException, ValueError) as err:
            if self._stopped.is_set():
                return
            raise ConnectionResetError(f"watch stream broke: {err}") from err
        finally:
            self._conn.close()

    def stop(self) -> None:
        self._stopped.set()
        sock = self._conn.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class HTTPListerWatcher:
    """The test ListerWatcher: lists and watches /objs, decoding into ``Obj`` (or dicts)."""

    def __init__(self, url: str, typed: bool = True) -> None:
        self.host, _, port = url.partition(":")
        self.port = int(port)
        self.typed = typed

    def _get(self, query: dict[str, str], timeout: float | None) -> tuple[http.client.HTTPConnection,
                                                                            http.client.HTTPResponse]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        conn.request("GET", "/objs?" + urlencode(query))
        resp = conn.getresponse()
        if resp.status >= 400:
            body = resp.read()
            conn.close()
            raise errors.from_response(resp.status, body)
        return conn, resp

    def list(self, options: ListOptions) -> ListResult[Any]:
        conn, resp = self._get(options.to_query(), 10)
        try:
            body = resp.read()
        finally:
            conn.close()
        if self.typed:
            lst = _list_decoder.decode(body)
            return ListResult(lst.items, lst.metadata.get("resourceVersion", ""), lst.metadata.get("continue", ""))
        d = _dict_list_decoder.decode(body)
        return ListResult(d["items"], d["metadata"].get("resourceVersion", ""), d["metadata"].get("continue", ""))

    def watch(self, options: ListOptions) -> HTTPWatch:
        query = options.to_query()
        query["watch"] = "true"
        conn, resp = self._get(query, None)
        return HTTPWatch(conn, resp, self.typed)
