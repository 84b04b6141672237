"""Watches whose clients read slowly or never (issue 43 item 3): a watch's memory is bounded
whatever the collection's size (its initial state is written batch by batch as the client takes
it), a watcher busy writing to a client that does not keep up is closed once kube's 1000 events
are buffered for it, and what it held is freed when its client goes."""

from __future__ import annotations

import gc
import json
import socket
import ssl
import time
import tracemalloc
from collections.abc import Callable, Iterator

import pytest

from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.core import Core
from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.storage import WATCH_BUFFER
from samplecontroller.rest.http11 import SocketConnection
from tests.apiserver.conftest import Raw, open_watches

NS = "default"
OBJECT_BYTES = 16 * 1024
COLLECTION_MIB = 4


@pytest.fixture(scope="module")
def server() -> Iterator[LocalAPIServer]:
    with LocalAPIServer() as s:
        def fill(core: Core) -> None:
            res = _res(core, "configmaps")
            for i in range(COLLECTION_MIB * 2**20 // OBJECT_BYTES):
                core.create(res, NS, {"metadata": {"name": f"big-{i:04d}"}, "data": {"v": "x" * (OBJECT_BYTES - 200)}})
        s.call(fill)
        yield s


def _stuck_watch(server: LocalAPIServer) -> ssl.SSLSocket:
    """A connection that asks for a watch of every ConfigMap and never reads."""
    ctx = ssl.create_default_context(cafile=str(server.ca_path))
    plain = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    plain.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    plain.settimeout(30)
    plain.connect(("127.0.0.1", server.port))
    sock = ctx.wrap_socket(plain, server_hostname="127.0.0.1")
    sock.sendall(f"GET /api/v1/namespaces/{NS}/configmaps?watch=1 HTTP/1.1\r\nHost: x\r\n"
                 f"Authorization: Bearer {server.token}\r\n\r\n".encode())
    return sock


def _res(core: Core, plural: str) -> Resource:
    res = core.mapper.get("", "v1", plural)
    assert res is not None
    return res


def _blocked_writers() -> int:
    """How many of the server's connections wait for their client to take what was written."""
    return sum(1 for o in gc.get_objects()
               if isinstance(o, SocketConnection) and o._drained is not None and not o._drained.done())


def _until(condition: Callable[[], bool], what: str, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_watch_that_is_never_read_holds_a_bounded_memory_freed_when_it_goes(server: LocalAPIServer) -> None:
    watchers = 3
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        socks = [_stuck_watch(server) for _ in range(watchers)]
        _until(lambda: _blocked_writers() >= watchers, "the stuck watches to block on their clients")
        held = tracemalloc.get_traced_memory()[0] - base
        # before the fix each held its collection about three times over (12 MiB each here)
        assert held < watchers * 2**20, f"{watchers} stuck watches hold {held / 2**20:.1f} MiB"
        for sock in socks:
            sock.close()
        _until(lambda: open_watches(server, "/configmaps") == 0, "the server to drop the watches")
        gc.collect()
        left = tracemalloc.get_traced_memory()[0] - base
        assert left < 2**20, f"{left / 2**20:.1f} MiB left after the clients went"
    finally:
        tracemalloc.stop()


def test_a_watcher_busy_writing_to_a_slow_client_is_closed_at_its_buffer_bound(server: LocalAPIServer) -> None:
    sock = _stuck_watch(server)
    try:
        _until(lambda: _blocked_writers() >= 1, "the stuck watch to block on its client")

        (watcher,) = server.call(lambda core: list(core.store.watchers["/configmaps"]))

        def write_events(core: Core) -> None:
            res = _res(core, "configmaps")
            for i in range(WATCH_BUFFER + 1):
                core.create(res, NS, {"metadata": {"name": f"burst-{i:04d}"}})

        server.call(write_events)
        _until(lambda: server.call(lambda core: watcher.overflowed), "the slow watcher to be closed")
        assert server.call(lambda core: (watcher.closed, len(watcher.buffer))) == (True, 0)
    finally:
        sock.close()
    _until(lambda: open_watches(server, "/configmaps") == 0, "the server to drop the watch")


def test_an_idle_watch_keeps_every_event_of_a_burst(server: LocalAPIServer) -> None:
    """Only a watch busy with a slow client is closed: one waiting for events gets a burst of
    more than the bound whole (the burst happens in one step of the server's loop)."""
    conn = Raw(server).conn(timeout=30)
    conn.request("GET", f"/api/v1/namespaces/{NS}/secrets?watch=1&timeoutSeconds=30",
                 headers={"Authorization": f"Bearer {server.token}"})
    response = conn.getresponse()  # the head is sent once the watch is subscribed
    assert response.status == 200

    def burst(core: Core) -> None:
        res = _res(core, "secrets")
        for i in range(WATCH_BUFFER + 200):
            core.create(res, NS, {"metadata": {"name": f"s-{i:04d}"}})

    server.call(burst)
    names: set[str] = set()
    try:
        while len(names) < WATCH_BUFFER + 200:
            line = response.readline()
            assert line, f"the watch ended after {len(names)} events"
            name = json.loads(line)["object"]["metadata"]["name"]
            if name.startswith("s-"):
                names.add(name)
    finally:
        conn.close()
