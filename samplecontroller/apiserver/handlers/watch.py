"""The watch handler: newline-delimited ``{"type","object"}`` events from the store, filtered
by selectors (an object leaving or entering the selection is DELETED or ADDED), with
``sendInitialEvents``, bookmarks, ``timeoutSeconds``, and 410/504 ERROR events."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import msgspec

from samplecontroller.apiserver import requestinfo as ri
from samplecontroller.apiserver import tables
from samplecontroller.apiserver.crdconversion import ConversionError
from samplecontroller.apiserver.errors import APIError, laid_out
from samplecontroller.apiserver.handlers import converting
from samplecontroller.apiserver.handlers import list as list_
from samplecontroller.apiserver.handlers.common import Scope, columns, versioned
from samplecontroller.apiserver.httpmessages import Request, StreamResponse
from samplecontroller.apiserver.negotiation import Accept, parse_bool
from samplecontroller.apiserver.objects import name_of
from samplecontroller.apiserver.requestinfo import RequestInfo
from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.storage import Entry, Event, Expired

__all__ = ["watch"]

_encode = msgspec.json.Encoder().encode


async def watch(scope: Scope, request: Request, t: RequestInfo, accept: Accept) -> StreamResponse:
    res = t.res
    q = request.query
    rv, rvm = q.get("resourceVersion", ""), q.get("resourceVersionMatch", "")
    bookmarks = parse_bool(q["allowWatchBookmarks"], "allowWatchBookmarks") if q.get("allowWatchBookmarks") else False
    initial = q.get("sendInitialEvents", "")
    send_initial = parse_bool(initial, "sendInitialEvents") if initial else None
    if send_initial is not None and rvm != "NotOlderThan":
        raise APIError(422, "Invalid", "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: "
                       "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
    if send_initial is None and rvm:
        raise APIError(422, "Invalid", "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: "
                       "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided")
    timeout = ri.int_param(q.get("timeoutSeconds", ""), "timeoutSeconds")
    if t.name:
        match_name = t.name
        base = list_.matcher(scope, request, res)

        def named(obj: dict[str, Any]) -> bool:
            return name_of(obj) == match_name and (base is None or base(obj))
        match: Callable[[dict[str, Any]], bool] | None = named
    else:
        match = list_.matcher(scope, request, res)
    start_rev = ri.parse_rv(rv) if rv not in ("", "0") else None
    ns = t.namespace if res.namespaced else None
    response = StreamResponse(status=200, headers={"Content-Type": "application/json"})
    if request.version >= (1, 1):
        response.enable_chunked_encoding()  # HTTP/1.0: the stream ends when the connection closes
    if start_rev is not None and not send_initial:
        try:
            await list_.wait_for_rev(scope, start_rev)
        except APIError as err:
            return await _watch_error(request, response, err.status)
    converted = converting.webhook_crd(scope, res) is not None
    # no await from here to the subscription: the sent state and the watched events join exactly
    initial_entries: list[Entry] = []  # the state sent first: references, encoded batch by batch
    send_end_bookmark = False
    pending: list[Event] = []
    if start_rev is None or send_initial:
        after = scope.store.rev
        if send_initial is not False:
            initial_entries = [entry for _, entry in scope.core.list_entries(res, ns)]
            send_end_bookmark = bool(send_initial)
    else:
        after = start_rev
        try:
            pending = scope.store.events_since(start_rev, res.storage_key)
        except Expired as err:
            return await _watch_error(request, response, {
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": f"too old resource version: {err.requested} ({err.compacted})",
                "reason": "Expired", "code": 410})
        pending = [ev for ev in pending if ev.namespace == ns or ns is None]
    watcher = scope.store.subscribe(res.storage_key, ns, after=after)
    try:
        waiting = scope.store.durable()  # the initial state may hold writes not yet committed
        if waiting is not None:
            await waiting
        initial_lines: list[bytes] = []
        if initial_entries and converted:
            initial_lines = await _initial_converted(scope, res, initial_entries, match, accept, request)
            initial_entries = []
        await response.prepare(request)
        if initial_lines:
            await response.write(b"".join(initial_lines))
        del initial_lines
        # the state and the history in batches, each written once the client took most of the one
        # before: a client that reads slowly or never holds at most a batch here, never the collection
        batch: list[bytes] = []
        size = 0
        for entry in initial_entries:
            if match is None or match(entry.obj):
                line = _line(scope, "ADDED", res, entry.obj, entry.raw, accept, request)
                batch.append(line)
                size += len(line)
                if size >= WRITE_BATCH:
                    await response.write(b"".join(batch))
                    batch, size = [], 0
                    if watcher.overflowed:
                        break
        if batch and not watcher.overflowed:
            await response.write(b"".join(batch))
        del initial_entries, batch
        if send_end_bookmark and not watcher.overflowed:
            await response.write(_bookmark(res, after, initial_end=True))
        for start in range(0, len(pending), PENDING_BATCH):
            if watcher.overflowed:
                break
            await response.write(await _lines(scope, pending[start:start + PENDING_BATCH], res, match, accept,
                                              request))
        del pending
        await _stream(scope, response, watcher, res, match, accept, request, timeout, bookmarks)
    except ConversionError as err:
        if not response.prepared:
            raise
        await response.write(_encode({"type": "ERROR", "object": laid_out(err.status)}) + b"\n")
        await response.write_eof()
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        scope.store.unsubscribe(watcher)
    return response


async def _watch_error(request: Request, response: StreamResponse,
                       status: dict[str, Any]) -> StreamResponse:
    """End a watch with one ERROR event (a watch that passed validation fails this way)."""
    await response.prepare(request)
    await response.write(_encode({"type": "ERROR", "object": laid_out(status)}) + b"\n")
    await response.write_eof()
    return response


def _bookmark(res: Resource, rev: int, initial_end: bool = False) -> bytes:
    meta: dict[str, Any] = {"resourceVersion": str(rev)}
    if initial_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    return _encode({"type": "BOOKMARK", "object": {"kind": res.kind, "apiVersion": res.group_version,
                                                   "metadata": meta}}) + b"\n"


WRITE_BATCH = 64 * 1024
"""Bytes of a watch's initial state encoded and written at a time: its memory is a batch, whatever
the collection's size."""
PENDING_BATCH = 64
"""Events of the history a watch resumes from encoded and written at a time."""
PRE_TIMEOUT_BOOKMARK = 2.0
"""Seconds before a watch's deadline when the cacher sends its last bookmark."""
BURST_GAP = 0.002
"""A watch woken within this many seconds of its previous wake-up is in a burst: it lets the writes
already scheduled run before it writes, so that their events go out with its own."""


def next_bookmark_time(now: float, deadline: float, interval: float) -> float:
    """When a watch sends its next bookmark, as kube's cacheWatcher.nextBookmarkTime: one
    ``interval`` from ``now`` (the server's bookmark frequency, a minute by default), or 2 s
    before the watch's deadline when that comes first; never (infinity) once that time is past."""
    when = min(now + interval, deadline - PRE_TIMEOUT_BOOKMARK)
    return when if when >= now else float("inf")


async def _stream(scope: Scope, response: StreamResponse, watcher: Any, res: Resource,
                  match: Callable[[dict[str, Any]], bool] | None, accept: Accept, request: Request,
                  timeout: int | None, bookmarks: bool) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + (timeout if timeout is not None else 1800)
    next_bookmark = next_bookmark_time(loop.time(), deadline, scope.bookmark_interval)
    woken = float("-inf")  # when the previous event woke the watch
    while True:
        now = loop.time()
        if now >= deadline or watcher.closed or watcher.overflowed:
            break
        wait = deadline - now
        if bookmarks:
            wait = min(wait, max(next_bookmark - now, 0.0))
        if not watcher.buffer:
            watcher.busy = False  # only while it waits: a watch busy writing is held to its buffer's bound
            try:
                async with asyncio.timeout(wait):  # no task of its own per wake-up, unlike wait_for
                    await watcher.wake.wait()
            except TimeoutError:
                pass
            else:
                previous, woken = woken, loop.time()
                if woken - previous < BURST_GAP:
                    # In a burst, as kube-apiserver flushes a watch only once no further event is
                    # queued for it: the writers already scheduled run first, and their events go
                    # out in this write. Outside one, an event is written at once.
                    await asyncio.sleep(0)
            watcher.busy = True
        events = watcher.drain()
        if events:
            chunk = await _lines(scope, events, res, match, accept, request)
            if chunk:
                await response.write(chunk)
        if bookmarks and loop.time() >= next_bookmark and not watcher.buffer:
            # only with nothing buffered: a bookmark must not pass events the client has not had
            await response.write(_bookmark(res, scope.store.committed_rev))
            next_bookmark = next_bookmark_time(loop.time(), deadline, scope.bookmark_interval)
    await response.write_eof()


async def _initial_converted(scope: Scope, res: Resource, entries: list[Entry],
                             match: Callable[[dict[str, Any]], bool] | None, accept: Accept,
                             request: Request) -> list[bytes]:
    """The ADDED lines of a watch's initial state, converted in one review (conversion webhook)."""
    objs = await converting.to_version(scope, res, [e.obj for e in entries], listed=True)
    return [_line(scope, "ADDED", res, obj, _encode(obj), accept, request)
            for obj in objs if match is None or match(obj)]


async def _lines(scope: Scope, events: list[Event], res: Resource, match: Callable[[dict[str, Any]], bool] | None,
                 accept: Accept, request: Request) -> bytes:
    """The lines of ``events``; each event's objects (and the previous object, for a selector)
    through the CRD's conversion webhook where there is one (a review per event, as kube-apiserver
    converts each event)."""
    if converting.webhook_crd(scope, res) is None:
        return _plain_lines(scope, events, res, match, accept, request)
    out: list[bytes] = []
    for ev in events:
        objs = [ev.entry.obj] if match is None or ev.prev is None else [ev.entry.obj, ev.prev]
        converted = await converting.to_version(scope, res, objs)
        obj, prev = converted[0], (converted[1] if len(converted) > 1 else None)
        if match is None:
            etype: str | None = ev.type
        else:
            etype = _selected_type(ev.type, obj, prev, match)
        if etype is not None:
            out.append(_line(scope, etype, res, obj, _encode(obj), accept, request))
    return b"".join(out)


def _plain_lines(scope: Scope, events: list[Event], res: Resource, match: Callable[[dict[str, Any]], bool] | None,
                 accept: Accept, request: Request) -> bytes:
    plain = accept.kind == "json"
    gv = res.group_version
    out: list[bytes] = []
    for ev in events:
        obj = ev.entry.obj
        etype = ev.type if match is None else _selected_type(ev.type, obj, ev.prev, match)
        if etype is None:
            continue
        if plain and etype == ev.type and obj.get("apiVersion") == gv:
            out.append(ev.line())
        else:
            out.append(_line(scope, etype, res, obj, ev.entry.raw, accept, request))
    return b"".join(out)


def _selected_type(etype: str, obj: dict[str, Any], prev: dict[str, Any] | None,
                   match: Callable[[dict[str, Any]], bool]) -> str | None:
    """The type of an event of ``etype`` (its object ``obj``, the one before ``prev``) as a watch
    with a selector sees it, None if it does not see it: an object entering the selection is
    ADDED, one leaving it DELETED."""
    if etype == "ADDED":
        return "ADDED" if match(obj) else None
    before_ok = prev is not None and match(prev)
    if etype == "DELETED":
        return "DELETED" if before_ok else None
    if match(obj):
        return "MODIFIED" if before_ok else "ADDED"
    return "DELETED" if before_ok else None


def _line(scope: Scope, etype: str, res: Resource, obj: dict[str, Any], raw: bytes, accept: Accept,
          request: Request) -> bytes:
    if accept.kind == "table":
        table = tables.to_table([versioned(res, obj)], columns(scope, res),
                                resource_version=str((obj.get("metadata") or {}).get("resourceVersion", "")),
                                include_object=request.query.get("includeObject", "Metadata") or "Metadata")
        table["apiVersion"] = f"meta.k8s.io/{accept.version}"
        return _encode({"type": etype, "object": table}) + b"\n"
    if accept.kind == "partial":
        partial = {"kind": "PartialObjectMetadata", "apiVersion": f"meta.k8s.io/{accept.version}",
                   "metadata": obj.get("metadata") or {}}
        return _encode({"type": etype, "object": partial}) + b"\n"
    if obj.get("apiVersion") == res.group_version:
        return b'{"type":"' + etype.encode() + b'","object":' + raw + b"}\n"
    return _encode({"type": etype, "object": versioned(res, obj)}) + b"\n"
