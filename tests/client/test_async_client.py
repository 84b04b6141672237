"""The async transport and clients (``rest.aio``, ``client.aio``) against the loopback server:
the sync transport's auth, retries and errors, the typed verbs, watches as async iterators and
the dynamic client (issue 25)."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import pytest

from samplecontroller.apimachinery import errors
from samplecontroller.client.aio import AsyncDynamicClient, AsyncResourceClient
from samplecontroller.client.dynamic import NoMatchError
from samplecontroller.rest import RESTClient, TransportError
from samplecontroller.rest.aio import AsyncRESTClient
from samplecontroller.rest.config import Config

from .conftest import WIDGETS, MiniServer, Widget, WidgetList, WidgetStatus, widget
from .test_rest_config import write_kubeconfig

R = TypeVar("R")


def run(fn: Callable[[], Awaitable[R]]) -> R:
    async def main() -> R:
        return await fn()

    return asyncio.run(main())


def test_token_user_agent_and_shared_credentials(server: MiniServer, tmp_path: Path) -> None:
    rest = RESTClient.from_kubeconfig(write_kubeconfig(tmp_path, server.url, {"token": "sekret"}),
                                      user_agent="me/1")

    async def go() -> bytes:
        async with AsyncRESTClient(rest) as client:
            return await client.request("GET", "/api")

    assert b"APIVersions" in run(go)
    rec = server.requests[-1]
    assert rec.headers["Authorization"] == "Bearer sekret"
    assert rec.headers["User-Agent"] == "me/1"


def test_exec_plugin_credentials_and_a_401_refreshes_them(server: MiniServer, tmp_path: Path) -> None:
    counter = tmp_path / "n"
    counter.write_text("0")
    script = tmp_path / "plugin.py"
    script.write_text(
        "import json, pathlib\n"
        f"p = pathlib.Path({str(counter)!r}); n = int(p.read_text()) + 1; p.write_text(str(n))\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1beta1', 'kind': 'ExecCredential',"
        " 'status': {'token': f'tok-{n}'}}))\n")
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": sys.executable,
                     "args": [str(script)], "interactiveMode": "Never"}}
    client = AsyncRESTClient.from_kubeconfig(write_kubeconfig(tmp_path, server.url, user))

    async def go() -> None:
        await client.request("GET", "/api")
        server.throttle = [(401, "0")]  # the token expired on the server's side
        await client.request("GET", "/api")
        await client.close()

    run(go)
    sent = [r.headers.get("Authorization") for r in server.requests]
    assert sent[0] == "Bearer tok-1"
    assert sent[-2:] == ["Bearer tok-1", "Bearer tok-2"]  # the 401, then the retry with a fresh token


def test_token_file_is_read_again_on_a_401(server: MiniServer, tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("one")
    client = AsyncRESTClient(RESTClient(Config(host=server.url, token_file=str(token))))

    async def go() -> None:
        await client.request("GET", "/api")
        token.write_text("two")
        server.throttle = [(401, "0")]
        await client.request("GET", "/api")
        await client.close()

    run(go)
    assert [r.headers["Authorization"] for r in server.requests[-3:]] == ["Bearer one", "Bearer one", "Bearer two"]


def test_retry_after_is_honoured_then_the_error_is_raised(server: MiniServer) -> None:
    client = AsyncRESTClient(server.rest())

    async def go() -> None:
        server.throttle = [(429, "0"), (503, "0")]
        before = len(server.requests)
        assert b"APIVersions" in await client.request("GET", "/api")
        assert len(server.requests) - before == 3
        client.rest.max_retries = 2
        server.throttle = [(429, "0")] * 3
        with pytest.raises(errors.StatusError) as info:
            await client.request("POST", "/api")
        assert info.value.code == 429
        assert not server.throttle
        server.throttle = [(500, "not-a-number")]
        before = len(server.requests)
        with pytest.raises(errors.StatusError):
            await client.request("GET", "/api")
        assert len(server.requests) - before == 1
        await client.close()

    run(go)


def test_throttle_is_the_sync_clients_token_bucket(server: MiniServer, tmp_path: Path) -> None:
    rest = RESTClient.from_kubeconfig(write_kubeconfig(tmp_path, server.url, {"token": "t"}), qps=0.001, burst=5)
    client = AsyncRESTClient(rest)
    assert client.rest.throttle is rest.throttle

    async def go() -> None:
        await asyncio.gather(*(client.request("GET", "/api") for _ in range(5)))
        await client.close()

    run(go)
    assert rest.throttle is not None and rest.throttle.reserve() > 0  # the five took the whole burst


def test_an_unreachable_server_is_a_transport_error_naming_it() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = AsyncRESTClient(RESTClient(Config(host=f"http://127.0.0.1:{port}")))

    async def go() -> None:
        with pytest.raises(TransportError, match=f"cannot reach the API server at http://127.0.0.1:{port}"):
            await client.request("GET", "/api")
        await client.close()

    run(go)


def test_a_client_belongs_to_one_loop(server: MiniServer) -> None:
    client = AsyncRESTClient(server.rest())

    async def go() -> bytes:
        return await client.request("GET", "/api")

    run(go)
    with pytest.raises(RuntimeError, match="one AsyncRESTClient per event loop"):
        run(go)


def test_typed_verbs(server: MiniServer) -> None:
    widgets: AsyncResourceClient[Widget, WidgetList] = AsyncResourceClient(AsyncRESTClient(server.rest()), WIDGETS,
                                                                          "default")

    async def go() -> None:
        created = await widgets.create(widget("a", replicas=2), field_manager="me")
        assert created.metadata.resource_version == "1"
        assert server.requests[-1].query == {"fieldManager": "me"}
        got = await widgets.get("a")
        assert got.spec.replicas == 2  # type: ignore[union-attr]
        listed = await widgets.list(label_selector="x=y")
        assert [w.metadata.name for w in listed.items] == ["a"]
        assert server.requests[-1].query == {"labelSelector": "x=y"}
        updated = await widgets.update_status(msgspec.structs.replace(got, status=WidgetStatus(ready=1)))
        assert updated.status.ready == 1  # type: ignore[union-attr]
        with pytest.raises(errors.ConflictError):
            await widgets.update(got)  # stale resourceVersion
        patched = await widgets.patch("a", {"spec": {"replicas": 5}})
        assert patched.spec.replicas == 5  # type: ignore[union-attr]
        await widgets.apply(widget("a"), field_manager="me", force=True)
        assert server.requests[-1].headers["Content-Type"] == "application/apply-patch+yaml"
        await widgets.delete("a")
        with pytest.raises(errors.NotFoundError):
            await widgets.get("a")
        await widgets.rest.close()

    run(go)


def test_watch_is_an_async_iterator_and_a_bad_line_ends_it(server: MiniServer) -> None:
    widgets: AsyncResourceClient[Widget, WidgetList] = AsyncResourceClient(AsyncRESTClient(server.rest()), WIDGETS,
                                                                          "default")
    obj = json.dumps({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})

    async def go() -> list[tuple[str, Any]]:
        seen: list[tuple[str, Any]] = []
        watch = await widgets.watch(resource_version="0")
        assert await asyncio.to_thread(server.watch_opened.wait, 10)
        server.send_watch_line(f'{{"type":"ADDED","object":{obj}}}'.encode())
        server.send_watch_line(b"not json")
        server.send_watch_line(f'{{"type":"MODIFIED","object":{obj}}}'.encode())
        async for event in watch:
            seen.append((event.type, event.object.metadata.name if event.object else event.status))
        await widgets.rest.close()
        return seen

    seen = run(go)
    assert seen[0] == ("ADDED", "w")
    assert seen[1][0] == "ERROR" and seen[1][1]["code"] == 500
    assert len(seen) == 2
    assert server.requests[-1].query["watch"] == "true"


def test_watch_stop_ends_iteration(server: MiniServer) -> None:
    widgets: AsyncResourceClient[Widget, WidgetList] = AsyncResourceClient(AsyncRESTClient(server.rest()), WIDGETS,
                                                                          "default")

    async def go() -> int:
        n = 0
        async with await widgets.watch() as watch:
            assert await asyncio.to_thread(server.watch_opened.wait, 10)
            server.send_watch_line(b'{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"5"}}}')
            async for _ in watch:
                n += 1
                watch.stop()
        await widgets.rest.close()
        return n

    assert run(go) == 1


def test_dynamic_client_discovers_and_returns_dicts(server: MiniServer) -> None:
    server.seed({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "d", "namespace": "ns"},
                 "extra": {"kept": True}})
    dyn = AsyncDynamicClient(AsyncRESTClient(server.rest()))

    async def go() -> None:
        res = await dyn.resource(("example.com", "v1", "wd"), "ns")
        assert res.info.subresources == ("status",)
        obj = await res.get("d")
        assert obj["extra"] == {"kept": True}
        cm = await dyn.resource_for("v1", "ConfigMap")
        assert cm.resource == "configmaps"
        with pytest.raises(NoMatchError, match="no matches for kind"):
            await dyn.resource_for("v1", "Nope")
        assert await dyn.server_group_versions() == ["v1", "example.com/v1"]
        before = len(server.requests)
        await dyn.resource_for("v1", "ConfigMap")  # cached
        assert len(server.requests) == before
        await dyn.rest.close()

    run(go)
