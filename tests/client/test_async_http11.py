"""``rest.http11``, the async transport's HTTP/1.1 client: body framing (Content-Length, chunked,
EOF), keep-alive reuse and its limits, dropped connections, interim responses, timeouts and
malformed responses against a scripted socket server; TLS verification against the embedded API
server; streams (watches) line by line."""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest

from samplecontroller.rest import RESTClient, TransportError
from samplecontroller.rest.aio import AsyncRESTClient
from samplecontroller.rest.config import Config
from samplecontroller.rest.http11 import (
    ConnectionPool,
    Headers,
    IncompleteResponse,
    ProtocolError,
    encode_headers,
    request_head,
)

R = TypeVar("R")

Answer = Callable[[bytes, "Peer"], Awaitable[None]]
"""Called with each request head (and its body read); writes the answer with ``peer.send``."""


@dataclass
class Peer:
    writer: asyncio.StreamWriter
    index: int  # the connection's number, from 0

    async def send(self, data: bytes, *, close: bool = False) -> None:
        self.writer.write(data)
        await self.writer.drain()
        if close:
            self.writer.close()


@dataclass
class Scripted:
    """A socket server on the running loop answering each request with ``answer``."""

    answer: Answer
    connections: int = 0
    heads: list[bytes] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)
    port: int = 0

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = Peer(writer, self.connections)
        self.connections += 1
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while not writer.is_closing():
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                self.heads.append(head)
                self.bodies.append(await reader.readexactly(length))
                await self.answer(head, peer)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Scripted]:
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        try:
            yield self
        finally:
            server.close()

    def pool(self, limit: int = 4) -> ConnectionPool:
        return ConnectionPool("127.0.0.1", self.port, None, limit=limit, connect_timeout=5)

    def head(self, method: str = "GET", target: str = "/x") -> str:
        return request_head(method, target, f"127.0.0.1:{self.port}", encode_headers({"Accept": "application/json"}))


class _NoReaderLoop(asyncio.SelectorEventLoop):
    """A loop without ``add_reader``, as the proactor loop on Windows: the pool then goes over
    asyncio transports (``ProtocolConnection``) instead of watching its sockets."""

    def add_reader(self, fd: Any, callback: Callable[..., object], *args: Any) -> None:  # type: ignore[override]
        raise NotImplementedError


_loop_factory: Callable[[], asyncio.AbstractEventLoop] = asyncio.new_event_loop


@pytest.fixture(autouse=True, params=["sockets", "transports"])
def connection_kind(request: pytest.FixtureRequest) -> Iterator[str]:
    """Every test runs on both kinds of connection: sockets the loop watches, and transports."""
    global _loop_factory
    _loop_factory = asyncio.new_event_loop if request.param == "sockets" else _NoReaderLoop
    try:
        yield request.param
    finally:
        _loop_factory = asyncio.new_event_loop


def run(fn: Callable[[], Awaitable[R]]) -> R:
    async def main() -> R:
        return await fn()

    with asyncio.Runner(loop_factory=_loop_factory) as runner:
        return runner.run(main())


def ok(body: bytes, *extra: str) -> bytes:
    return (f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n" + "".join(f"{h}\r\n" for h in extra)
            + "\r\n").encode() + body


async def answer_ok(head: bytes, peer: Peer) -> None:
    await peer.send(ok(b'{"n":1}'))


def test_keep_alive_reuses_one_connection_and_a_content_length_body_is_read_exactly() -> None:
    async def go() -> None:
        async with Scripted(answer_ok).running() as srv:
            pool = srv.pool()
            for _ in range(5):
                resp = await pool.request(srv.head(), None, method="GET", read_timeout=5)
                assert (resp.status, resp.data) == (200, b'{"n":1}')
            assert srv.connections == 1
            resp = await pool.request(srv.head("PATCH"), b'{"a":1}', method="PATCH", read_timeout=5)
            assert srv.bodies[-1] == b'{"a":1}'
            assert b"Content-Length: 7\r\n" in srv.heads[-1]
            assert srv.heads[-1].startswith(b"PATCH /x HTTP/1.1\r\nHost: 127.0.0.1:")
            await pool.close()

    run(go)


def test_chunked_body_with_extensions_and_trailers_then_the_connection_is_reused() -> None:
    async def answer(head: bytes, peer: Peer) -> None:
        await peer.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                        b"3;ext=1\r\nabc\r\n" b"A\r\n0123456789\r\n" b"0\r\nX-Trailer: t\r\n\r\n")

    async def go() -> None:
        async with Scripted(answer).running() as srv:
            pool = srv.pool()
            assert (await pool.request(srv.head(), None, method="GET", read_timeout=5)).data == b"abc0123456789"
            assert (await pool.request(srv.head(), None, method="GET", read_timeout=5)).data == b"abc0123456789"
            assert srv.connections == 1
            await pool.close()

    run(go)


def test_a_body_up_to_eof_or_connection_close_is_not_reused() -> None:
    async def answer(head: bytes, peer: Peer) -> None:
        if peer.index == 0:
            await peer.send(b"HTTP/1.1 200 OK\r\n\r\nuntil-eof", close=True)
        else:
            await peer.send(ok(b"closing", "Connection: close"), close=True)

    async def go() -> None:
        async with Scripted(answer).running() as srv:
            pool = srv.pool()
            assert (await pool.request(srv.head(), None, method="GET", read_timeout=5)).data == b"until-eof"
            assert (await pool.request(srv.head(), None, method="GET", read_timeout=5)).data == b"closing"
            assert (await pool.request(srv.head(), None, method="GET", read_timeout=5)).data == b"closing"
            assert srv.connections == 3
            await pool.close()

    run(go)


def test_interim_responses_are_skipped_and_204_has_no_body() -> None:
    async def answer(head: bytes, peer: Peer) -> None:
        if head.startswith(b"DELETE"):
            await peer.send(b"HTTP/1.1 204 No Content\r\n\r\n")
        else:
            await peer.send(b"HTTP/1.1 100 Continue\r\n\r\n" + ok(b"final"))

    async def go() -> None:
        async with Scripted(answer).running() as srv:
            pool = srv.pool()
            resp = await pool.request(srv.head(), None, method="GET", read_timeout=5)
            assert (resp.status, resp.data) == (200, b"final")
            resp = await pool.request(srv.head("DELETE"), None, method="DELETE", read_timeout=5)
            assert (resp.status, resp.data) == (204, b"")
            assert (await pool.request(srv.head(), None, method="GET", read_timeout=5)).data == b"final"
            assert srv.connections == 1
            await pool.close()

    run(go)


def test_headers_are_case_insensitive_and_repeated_ones_kept_in_order() -> None:
    async def answer(head: bytes, peer: Peer) -> None:
        await peer.send(ok(b"", "Warning: 299 - \"one\"", "X-Folded: a", " b", "warning: 299 - \"two\""))

    async def go() -> Headers:
        async with Scripted(answer).running() as srv:
            pool = srv.pool()
            resp = await pool.request(srv.head(), None, method="GET", read_timeout=5)
            await pool.close()
            return resp.headers

    headers = run(go)
    assert headers.get_all("WARNING") == ['299 - "one"', '299 - "two"']
    assert headers["x-folded"] == "a b"
    assert headers.get("Content-Length") == "0"
    assert headers.get_all("absent") is None


def test_a_connection_the_server_dropped_is_resent_for_a_get_only() -> None:
    """The server reads the second request on a kept-alive connection and closes it unanswered
    (an idle timeout racing the request): a GET goes once more on a new connection, as the
    sync transport; a POST is a TransportError."""

    async def answer(head: bytes, peer: Peer) -> None:
        if peer.index == 0 and len(answered) == 1:
            answered.append(head)
            peer.writer.close()
            return
        answered.append(head)
        await peer.send(ok(b"{}"))

    answered: list[bytes] = []

    async def go() -> None:
        async with Scripted(answer).running() as srv:
            client = AsyncRESTClient(RESTClient(Config(host=f"http://127.0.0.1:{srv.port}")))
            assert await client.request("GET", "/api") == b"{}"
            assert await client.request("GET", "/api") == b"{}"  # dropped, then resent
            assert srv.connections == 2
            answered.clear()
            assert await client.request("GET", "/api") == b"{}"  # on connection 1 now: kept alive
            await client.close()
            client = AsyncRESTClient(RESTClient(Config(host=f"http://127.0.0.1:{srv.port}")))
            srv.connections = 0
            answered.clear()
            await client.request("GET", "/api")
            with pytest.raises(TransportError, match=f"cannot reach the API server at http://127.0.0.1:{srv.port}"):
                await client.request("POST", "/api", body=b"{}")
            await client.close()

    run(go)


def test_an_idle_connection_closed_by_the_server_is_not_reused() -> None:
    async def answer(head: bytes, peer: Peer) -> None:
        await peer.send(ok(b"{}"), close=peer.index == 0)  # the first connection closes after answering

    async def go() -> None:
        async with Scripted(answer).running() as srv:
            pool = srv.pool()
            await pool.request(srv.head("POST"), b"{}", method="POST", read_timeout=5)
            for _ in range(50):  # until the loop has seen the EOF
                await asyncio.sleep(0.01)
            resp = await pool.request(srv.head("POST"), b"{}", method="POST", read_timeout=5)
            assert resp.status == 200 and srv.connections == 2
            await pool.close()

    run(go)


def test_the_limit_bounds_connections_in_use() -> None:
    busy = 0
    peak = 0

    async def answer(head: bytes, peer: Peer) -> None:
        nonlocal busy, peak
        busy += 1
        peak = max(peak, busy)
        await asyncio.sleep(0.02)
        busy -= 1
        await peer.send(ok(b"{}"))

    async def go() -> None:
        async with Scripted(answer).running() as srv:
            pool = srv.pool(limit=2)
            await asyncio.gather(*(pool.request(srv.head(), None, method="GET", read_timeout=5) for _ in range(8)))
            assert srv.connections == 2
            await pool.close()

    run(go)
    assert peak == 2


def test_a_read_timeout_and_a_malformed_response_are_transport_errors() -> None:
    async def answer(head: bytes, peer: Peer) -> None:
        if b"/slow" in head:
            return  # never answers
        await peer.send(b"HTCPCP/1.0 418 teapot\r\n\r\n")

    async def go() -> None:
        async with Scripted(answer).running() as srv:
            client = AsyncRESTClient(RESTClient(Config(host=f"http://127.0.0.1:{srv.port}")))
            with pytest.raises(TransportError, match="cannot reach the API server"):
                await asyncio.wait_for(client.request("GET", "/slow", timeout=0.2), 10)
            with pytest.raises(TransportError, match="malformed status line"):
                await client.request("GET", "/bad")
            pool = srv.pool()
            with pytest.raises(ProtocolError):
                await pool.request(srv.head(), None, method="GET", read_timeout=5)
            await pool.close()
            await client.close()

    run(go)


def test_header_injection_is_refused() -> None:
    with pytest.raises(ValueError, match="invalid HTTP header 'Authorization'"):
        encode_headers({"Authorization": "Bearer x\r\nX-Evil: 1"})
    with pytest.raises(ValueError, match="invalid request target"):
        request_head("GET", "/a b", "h", "")


def test_a_cancelled_request_closes_its_connection() -> None:
    async def answer(head: bytes, peer: Peer) -> None:
        if b"/slow" in head:
            return
        await peer.send(ok(b"{}"))

    async def go() -> None:
        async with Scripted(answer).running() as srv:
            pool = srv.pool()
            task = asyncio.ensure_future(pool.request(srv.head(target="/slow"), None, method="GET", read_timeout=30))
            while not srv.heads:
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert (await pool.request(srv.head(), None, method="GET", read_timeout=5)).data == b"{}"
            assert srv.connections == 2  # the cancelled exchange's connection was not reused
            await pool.close()

    run(go)


def test_a_chunked_stream_yields_lines_across_chunk_boundaries() -> None:
    gate = asyncio.Event()

    async def answer(head: bytes, peer: Peer) -> None:
        await peer.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for piece in (b'{"a":', b'1}\n{"b":2}\r\n\n{"c"', b':3}\n'):
            await peer.send(b"%x\r\n%s\r\n" % (len(piece), piece))
        await gate.wait()
        await peer.send(b"5\r\nlast!\r\n0\r\n\r\n")

    async def go() -> list[bytes]:
        async with Scripted(answer).running() as srv:
            client = AsyncRESTClient(RESTClient(Config(host=f"http://127.0.0.1:{srv.port}")))
            stream = await client.stream("GET", "/watch")
            seen = []
            async for line in stream:
                seen.append(line)
                if len(seen) == 3:
                    gate.set()
            await client.close()
            return seen

    assert run(go) == [b'{"a":1}', b'{"b":2}', b'{"c":3}', b"last!"]


def test_a_stream_read_timeout_breaks_it_and_close_ends_a_pending_read() -> None:
    async def answer(head: bytes, peer: Peer) -> None:
        await peer.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{}\n\r\n")

    async def go() -> None:
        async with Scripted(answer).running() as srv:
            client = AsyncRESTClient(RESTClient(Config(host=f"http://127.0.0.1:{srv.port}")))
            stream = await client.stream("GET", "/watch", timeout=0.2)
            lines = []
            with pytest.raises(TransportError, match=r"stream from .* broke"):
                async for line in stream:
                    lines.append(line)
                    await asyncio.sleep(0.5)  # longer than the read timeout: never counted against it
            assert lines == [b"{}"]
            stream = await client.stream("GET", "/watch")
            got = []

            async def consume() -> None:
                async for line in stream:
                    got.append(line)

            task = asyncio.ensure_future(consume())
            while not got:
                await asyncio.sleep(0.01)
            stream.close()
            await asyncio.wait_for(task, 5)  # ends without an error
            await client.close()

    run(go)


def test_tls_is_verified_against_the_configured_ca(apiserver: Any) -> None:
    rest = RESTClient.from_kubeconfig(str(apiserver.kubeconfig_path))
    cfg = rest.configuration
    assert isinstance(cfg, Config) and cfg.host.startswith("https:")
    untrusted = Config(host=cfg.host, token=cfg.token, ca_file=None, ca_data=None)
    insecure = Config(host=cfg.host, token=cfg.token, insecure=True)
    wrong_name = Config(host=cfg.host, token=cfg.token, ca_file=cfg.ca_file, ca_data=cfg.ca_data,
                        tls_server_name="not-the-server.example")

    async def go() -> None:
        client = AsyncRESTClient(rest)
        assert b"APIVersions" in await client.request("GET", "/api")
        await client.close()
        for bad in (untrusted, wrong_name):
            client = AsyncRESTClient(RESTClient(bad))
            with pytest.raises(TransportError, match=r"CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
                await client.request("GET", "/api")
            await client.close()
        client = AsyncRESTClient(RESTClient(insecure))
        assert b"APIVersions" in await client.request("GET", "/api")
        await client.close()

    run(go)
    assert ssl.OPENSSL_VERSION  # the checks above used the interpreter's OpenSSL


def test_through_an_http_proxy_the_requests_and_watches_go_over_aiohttp() -> None:
    """With a proxy configured the async transport sends through it (aiohttp's path): the proxy
    sees absolute-form request targets for the API server, with the credentials."""

    async def answer(head: bytes, peer: Peer) -> None:
        if b"watch=true" in head:
            await peer.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                            b"3\r\n{}\n\r\n5\r\n{\"a\"}\r\n0\r\n\r\n")
        else:
            await peer.send(ok(b'{"kind":"APIVersions"}', 'Warning: 299 - "via proxy"'))

    async def go() -> list[bytes]:
        async with Scripted(answer).running() as proxy:
            cfg = Config(host="http://api.example:6443", token="tok", proxy=f"http://127.0.0.1:{proxy.port}")
            client = AsyncRESTClient(RESTClient(cfg))
            assert await client.request("GET", "/api") == b'{"kind":"APIVersions"}'
            assert proxy.heads[-1].startswith(b"GET http://api.example:6443/api HTTP/1.1\r\n")
            assert b"Authorization: Bearer tok\r\n" in proxy.heads[-1]
            lines = [line async for line in await client.stream("GET", "/api/v1/pods", query={"watch": "true"})]
            await client.close()
            return lines

    assert run(go) == [b"{}", b'{"a"}']


def test_streams_do_not_take_the_requests_connections_and_a_bodyless_post_states_length_0() -> None:
    async def answer(head: bytes, peer: Peer) -> None:
        if b"/watch" in head:
            await peer.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")  # then silence
        else:
            await peer.send(ok(b"{}"))

    async def go() -> None:
        async with Scripted(answer).running() as srv:
            pool = srv.pool(limit=1)
            streams = [await pool.open_stream(srv.head(target="/watch"), read_timeout=None) for _ in range(3)]
            resp = await asyncio.wait_for(pool.request(srv.head("POST"), None, method="POST", read_timeout=5), 5)
            assert resp.status == 200
            assert b"Content-Length: 0\r\n" in srv.heads[-1]
            for stream in streams:
                stream.close()
            await pool.close()

    run(go)


def test_the_read_timeout_bounds_each_wait_not_the_whole_body() -> None:
    """A body arriving in pieces, each within the read timeout, is read in full though the whole
    takes longer than the timeout; a pause longer than it in the middle of a body times out."""
    async def answer(head: bytes, peer: Peer) -> None:
        pause = 0.5 if b"/stalls" in head else 0.1
        await peer.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for i in range(6):
            await asyncio.sleep(pause if i == 3 or b"/stalls" not in head else 0)
            await peer.send(b"1\r\n%d\r\n" % i)
        await peer.send(b"0\r\n\r\n")

    async def go() -> None:
        async with Scripted(answer).running() as srv:
            pool = srv.pool()
            resp = await pool.request(srv.head(), None, method="GET", read_timeout=0.3)
            assert resp.data == b"012345"
            with pytest.raises(TimeoutError):
                await pool.request(srv.head(target="/stalls"), None, method="GET", read_timeout=0.3)
            await pool.close()

    run(go)


def test_a_request_cancelled_while_waiting_for_a_slot_does_not_keep_it() -> None:
    """With every slot taken, a waiting request that is cancelled leaves the queue: the slots go
    on to the requests after it, and none is lost."""
    release = asyncio.Event()

    async def answer(head: bytes, peer: Peer) -> None:
        if b"/wait" in head:
            await release.wait()
        await peer.send(ok(b"{}"))

    async def go() -> None:
        async with Scripted(answer).running() as srv:
            pool = srv.pool(limit=1)
            first = asyncio.ensure_future(pool.request(srv.head(target="/wait"), None, method="GET", read_timeout=5))
            while not srv.heads:
                await asyncio.sleep(0.01)
            waiting = asyncio.ensure_future(pool.request(srv.head(), None, method="GET", read_timeout=5))
            after = asyncio.ensure_future(pool.request(srv.head(), None, method="GET", read_timeout=5))
            await asyncio.sleep(0.05)
            assert len(srv.heads) == 1  # both wait for the one slot
            waiting.cancel()
            release.set()
            assert (await first).data == b"{}"
            assert (await asyncio.wait_for(after, 5)).data == b"{}"
            assert waiting.cancelled()
            for _ in range(3):  # the slot is free again, every time
                assert (await asyncio.wait_for(pool.request(srv.head(), None, method="GET", read_timeout=5),
                                               5)).data == b"{}"
            await pool.close()

    run(go)


def test_a_shorter_read_timeout_after_a_longer_one_on_the_same_connection_still_fires() -> None:
    """One lazy timer per connection: after a request with a long read timeout, the next one on the
    same connection with a short timeout fails after the short one, not at the long one's deadline."""
    async def answer(head: bytes, peer: Peer) -> None:
        if b"/slow" not in head:
            await peer.send(ok(b"{}"))

    async def go() -> None:
        async with Scripted(answer).running() as srv:
            pool = srv.pool(limit=1)
            assert (await pool.request(srv.head(), None, method="GET", read_timeout=600)).data == b"{}"
            slow = asyncio.ensure_future(pool.request(srv.head(target="/slow"), None, method="GET", read_timeout=0.2))
            done, _ = await asyncio.wait({slow}, timeout=30)  # far below the first request's 600 s
            assert slow in done, "the short read timeout did not fire"
            assert isinstance(slow.exception(), TimeoutError)
            assert srv.connections == 1  # the same kept-alive connection carried both
            assert (await pool.request(srv.head(), None, method="GET", read_timeout=5)).data == b"{}"
            await pool.close()

    run(go)


def test_eof_inside_a_body_is_an_incomplete_response_and_the_get_is_not_mistaken_for_success() -> None:
    async def answer(head: bytes, peer: Peer) -> None:
        await peer.send(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345", close=True)

    async def go() -> None:
        async with Scripted(answer).running() as srv:
            pool = srv.pool()
            with pytest.raises(IncompleteResponse):
                await pool.request(srv.head(), None, method="GET", read_timeout=5)
            client = AsyncRESTClient(RESTClient(Config(host=f"http://127.0.0.1:{srv.port}")))
            with pytest.raises(TransportError, match="cannot reach the API server"):
                await client.request("GET", "/x")
            await pool.close()
            await client.close()

    run(go)


def test_a_slow_stream_consumer_pauses_reading_and_loses_nothing() -> None:
    """A watch whose consumer holds a line while the server sends more than the read limit: the
    connection stops reading (its buffer stays bounded) and every line still arrives, in order."""
    lines = [b'{"n":%d,"pad":"%s"}' % (i, b"x" * 1000) for i in range(3000)]  # about 3 MB

    async def answer(head: bytes, peer: Peer) -> None:
        await peer.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for line in lines:
            peer.writer.write(b"%x\r\n%s\n\r\n" % (len(line) + 1, line))
        await peer.send(b"0\r\n\r\n")

    async def go() -> tuple[list[bytes], int]:
        async with Scripted(answer).running() as srv:
            pool = srv.pool()
            resp = await pool.open_stream(srv.head(), read_timeout=10)
            got: list[bytes] = []
            most = 0
            async for line in resp.lines():
                got.append(line)
                if len(got) == 1:
                    await asyncio.sleep(0.3)  # the server goes on sending meanwhile
                most = max(most, resp._conn.wire.unread())
            await pool.close()
            return got, most

    got, most = run(go)
    assert got == lines
    assert most < 2 * 2**20 + 65536  # paused at the limit (plus what was in flight), not the whole 3 MB


def test_a_body_larger_than_the_socket_buffers_is_sent_whole(connection_kind: str) -> None:
    """An 8 MB body does not fit the socket buffers: the rest goes out as the socket drains."""
    body = bytes(range(256)) * (8 * 2**20 // 256)

    async def answer(head: bytes, peer: Peer) -> None:
        await peer.send(ok(b"%d" % len(srv.bodies[-1])))

    srv = Scripted(answer)

    async def go() -> bytes:
        async with srv.running():
            pool = srv.pool()
            resp = await pool.request(srv.head("PUT"), body, method="PUT", read_timeout=30)
            kind = type(pool._idle[0]).__name__  # the connection kind this variant is about
            assert kind == {"sockets": "SocketConnection", "transports": "ProtocolConnection"}[connection_kind], kind
            await pool.close()
            return resp.data

    assert run(go) == b"%d" % len(body)
    assert srv.bodies[-1] == body


def test_a_large_object_over_tls_goes_and_comes_back_whole(apiserver: Any, connection_kind: str) -> None:
    """Over TLS a write bigger than the socket buffers waits for the socket (TLS wants to write),
    and a body of many TLS records is read whole."""
    rest = RESTClient.from_kubeconfig(str(apiserver.kubeconfig_path))
    value = "x" * (900 * 1024)
    name = f"big-{connection_kind}"
    body = json.dumps({"metadata": {"name": name}, "data": {"v": value}}).encode()

    async def go() -> dict[str, Any]:
        client = AsyncRESTClient(rest)
        try:
            await client.request("POST", "/api/v1/namespaces/default/configmaps", body=body)
            got: dict[str, Any] = json.loads(await client.request("GET", f"/api/v1/namespaces/default/configmaps/{name}"))
            await client.request("DELETE", f"/api/v1/namespaces/default/configmaps/{name}")
            return got
        finally:
            await client.close()

    assert run(go)["data"]["v"] == value


def test_a_slow_watch_consumer_over_tls_loses_nothing(apiserver: Any, connection_kind: str) -> None:
    """The TLS case of the pause: while the consumer holds the first event, about 2.4 MB of events
    (one chunk each) arrive; the connection stops reading past the read limit, resumes on the next
    read, and every event arrives in order."""
    rest = RESTClient.from_kubeconfig(str(apiserver.kubeconfig_path))
    label = f"slow-tls-{connection_kind}"
    names = [f"{label}-{i}" for i in range(301)]
    path = "/api/v1/namespaces/default/configmaps"

    async def create(client: AsyncRESTClient, name: str) -> None:
        body = {"metadata": {"name": name, "labels": {"test": label}}, "data": {"v": "x" * 8000}}
        await client.request("POST", path, body=json.dumps(body).encode())

    async def go() -> list[str]:
        client, writer = AsyncRESTClient(rest), AsyncRESTClient(rest)
        try:
            stream = await client.stream("GET", path, query={"watch": "1", "labelSelector": f"test={label}"})
            await create(writer, names[0])
            seen: list[str] = []
            async for line in stream:
                seen.append(json.loads(line)["object"]["metadata"]["name"])
                if len(seen) == 1:  # held while the other 300 are created and their events sent
                    for name in names[1:]:
                        await create(writer, name)
                    await asyncio.sleep(0.2)
                if len(seen) == len(names):
                    stream.close()
            await writer.request("DELETE", path, query={"labelSelector": f"test={label}"})
            return seen
        finally:
            await client.close()
            await writer.close()

    assert run(go) == names
