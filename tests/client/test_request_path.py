"""RESTClient's request path against the embedded API server: connections and credentials."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import kubernetes
import pytest

from samplecontroller.apiserver.server import LocalAPIServer
from samplecontroller.rest import RESTClient


@pytest.fixture
def server(tmp_path: Any) -> Iterator[LocalAPIServer]:
    with LocalAPIServer(kubeconfig_path=tmp_path / "kubeconfig", record_requests=10_000) as s:
        yield s


def test_sequential_requests_share_one_kept_alive_connection(server: LocalAPIServer) -> None:
    rest = RESTClient.from_kubeconfig(server.kubeconfig_path)
    assert server.app is not None
    before = server.app.counter.connections
    for _ in range(30):
        rest.request("GET", "/api/v1/namespaces/default")
    assert server.app.counter.connections - before == 1


def test_concurrent_workers_reuse_a_pool_sized_to_them(server: LocalAPIServer) -> None:
    workers = 40  # more than the default pool size: without pool_size, extra connections are dropped after use
    rest = RESTClient.from_kubeconfig(server.kubeconfig_path, pool_size=workers)
    assert server.app is not None
    before = server.app.counter.connections
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(lambda _: [rest.request("GET", "/api/v1/namespaces/default") for _ in range(10)],
                      range(workers)))
    assert server.app.counter.connections - before <= workers


def hooked_config(server: LocalAPIServer, token: list[str], calls: list[int]) -> kubernetes.client.Configuration:
    """A configuration whose refresh hook (like a token file's) sets the token from ``token[0]``."""
    cfg = kubernetes.client.Configuration()
    cfg.host = server.url
    cfg.ssl_ca_cert = str(server.ca_path)

    def refresh(c: kubernetes.client.Configuration) -> None:
        calls.append(1)
        c.api_key["authorization"] = f"Bearer {token[0]}"

    cfg.refresh_api_key_hook = refresh  # type: ignore[assignment]  # the client types the hook as None
    return cfg


def test_credentials_are_computed_once_not_per_request(server: LocalAPIServer) -> None:
    calls: list[int] = []
    rest = RESTClient(hooked_config(server, [server.token], calls))
    for _ in range(20):
        rest.request("GET", "/api/v1/namespaces/default")
    assert len(calls) == 1


def test_a_401_refreshes_the_credentials_and_retries_once(server: LocalAPIServer) -> None:
    calls: list[int] = []
    token = [server.token]
    rest = RESTClient(hooked_config(server, token, calls))
    rest.request("GET", "/api/v1/namespaces/default")
    assert server.app is not None
    server.app.token = token[0] = "rotated"  # the server and the token source move on together
    rest.request("GET", "/api/v1/namespaces/default")
    assert len(calls) == 2
    unauthorized = [r for r in server.requests if r.verb == "unauthorized"]
    assert len(unauthorized) == 1


class _CannedServer:
    """A loopback HTTP/1.1 server answering each request with the next canned response bytes;
    counts the connections it accepted."""

    def __init__(self, responses: list[bytes]) -> None:
        import socket
        import threading

        self.responses = list(responses)
        self.connections = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        import threading

        while self.responses:
            conn, _ = self.sock.accept()
            self.connections += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: Any) -> None:
        with conn:
            data = b""
            while self.responses:
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, _, data = data.partition(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                while len(data) < length:
                    data += conn.recv(65536)
                data = data[length:]
                response = self.responses.pop(0)
                conn.sendall(response)
                if b"Connection: close" in response:
                    return


def test_lean_response_path_reads_chunked_bodies_warnings_and_closing_connections() -> None:
    from samplecontroller.rest.config import Config

    seen: list[tuple[int, str, str]] = []

    class Handler:
        def handle_warning_header(self, code: int, agent: str, text: str) -> None:
            seen.append((code, agent, text))

    server = _CannedServer([
        b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nWarning: 299 - "first"\r\n'
        b'warning: 299 - "second"\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{"a\r\n5\r\n": 1}\r\n0\r\n\r\n',
        b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\nX-Folded: one\r\n two\r\n\r\n{}",
        b'HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{"closed": true}',
        b"HTTP/1.1 204 No Content\r\n\r\n",
    ])
    rest = RESTClient(Config(host=server.url), warning_handler=Handler())
    assert rest.request("GET", "/a") == b'{"a": 1}'
    assert seen == [(299, "-", "first"), (299, "-", "second")]
    assert rest.request("POST", "/b", body=b"{}") == b"{}"
    assert rest.request("GET", "/c") == b'{"closed": true}'  # read to the end: no length, the server closes
    assert rest.request("DELETE", "/d") == b""
    assert server.connections == 2  # kept alive until the server said close


def test_lean_response_path_skips_interim_responses_and_drops_a_connection_with_extra_bytes() -> None:
    from samplecontroller.rest.config import Config

    server = _CannedServer([
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}HTTP/1.1 200 OK\r\n",  # bytes past the response
        b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnext",
    ])
    rest = RESTClient(Config(host=server.url))
    assert rest.request("POST", "/a", body=b"{}") == b"{}"
    assert rest.request("GET", "/b") == b"{}"
    assert rest.request("GET", "/c") == b"next"  # on a new connection: the old one was not reused
    assert server.connections == 2


@pytest.mark.parametrize("response", [
    b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\nshort",  # EOF inside the body
    b"HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n",  # malformed status line
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",  # malformed chunk size
])
def test_lean_response_path_refuses_a_broken_response_as_a_transport_error(response: bytes) -> None:
    from samplecontroller.rest import TransportError
    from samplecontroller.rest.config import Config

    server = _CannedServer([response] * 3)
    rest = RESTClient(Config(host=server.url))
    with pytest.raises(TransportError, match="cannot reach the API server"):
        rest.request("POST", "/a", body=b"{}")


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def test_lean_stream_yields_lines_of_chunks_split_anyhow_and_errors_as_statuses() -> None:
    import threading

    from samplecontroller.apimachinery import errors
    from samplecontroller.rest.config import Config

    big = b'{"type": "ADDED", "object": {"data": "' + b"x" * 200_000 + b'"}}\n'  # spans many reads
    lines = [b'{"type": "ADDED"}\n', big, b'{"type": "MODIFIED"}\n{"type": "DELETED"}\n']
    body = _chunk(lines[0]) + _chunk(big[:7]) + _chunk(big[7:]) + _chunk(lines[2]) + b"0\r\nX-Trailer: t\r\n\r\n"
    gone = b'{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Expired", "code": 410}'
    server = _CannedServer([
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body,
        b"HTTP/1.1 410 Gone\r\nContent-Length: %d\r\n\r\n%s" % (len(gone), gone),
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + _chunk(b'{"type": "ADDED"}\n'),  # then silence
        b"never asked for: the server keeps the last stream open",
    ])
    rest = RESTClient(Config(host=server.url))
    got = list(rest.stream("GET", "/w"))
    assert got == [lines[0].rstrip(), big.rstrip(), b'{"type": "MODIFIED"}', b'{"type": "DELETED"}']
    with pytest.raises(errors.StatusError) as err:
        rest.stream("GET", "/w")
    assert err.value.code == 410
    stream = rest.stream("GET", "/w")
    seen: list[bytes] = []

    def consume() -> None:
        seen.extend(stream)

    reader = threading.Thread(target=consume)
    reader.start()
    wait_for_len = 0
    while not seen and wait_for_len < 1000:  # the first line arrives, then the server says nothing
        reader.join(0.01)
        wait_for_len += 1
    assert reader.is_alive()  # blocked: the server said nothing more and did not close
    stream.close()  # from another thread: the blocked read returns, iteration ends without an error
    reader.join(10)
    assert not reader.is_alive() and seen == [b'{"type": "ADDED"}']


def test_a_get_failing_on_a_dropped_connection_is_retried_on_a_new_one_not_another_idle_one() -> None:
    import socket
    import threading

    from samplecontroller.rest.config import Config

    # Connections that have carried a request are kept idle; then the server (say, a proxy being
    # switched) drops them all without a word, each only once a request arrives on it.
    listener = socket.create_server(("127.0.0.1", 0))
    dropping, three = threading.Event(), threading.Event()
    connections: list[socket.socket] = []  # the sockets themselves: a closed one's fd number is reused

    def handle(conn: socket.socket) -> None:
        with conn:
            while True:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                if dropping.is_set() and any(conn is c for c in connections[:3]):
                    return  # closed without a response
                three.wait(10)  # the first requests are answered once all three are in: three connections
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")

    def serve() -> None:
        while True:
            conn, _ = listener.accept()
            connections.append(conn)
            if len(connections) >= 3:
                three.set()
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    rest = RESTClient(Config(host=f"http://127.0.0.1:{listener.getsockname()[1]}"))
    def first_requests() -> None:
        rest.request("GET", "/a")

    starters = [threading.Thread(target=first_requests) for _ in range(3)]
    for t in starters:
        t.start()
    for t in starters:
        t.join(10)
    assert len(rest._idle) == 3 == len(connections)  # three kept-alive connections, idle
    kept = list(rest._idle)
    dropping.set()
    assert rest.request("GET", "/b") == b"{}"  # one failed attempt, then a new connection
    assert len(connections) == 4
    # the dropped connection's idle siblings are closed, not kept for later requests to fail on
    assert all(conn.sock is None for conn in kept) and len(rest._idle) == 1


def test_lean_header_parsing_matches_http_client() -> None:
    import http.client
    import io

    from samplecontroller.rest import http11

    block = (b"Content-Type: application/json\r\nWarning: 299 - \"a\"\r\nWarning: 299 - \"b\"\r\n"
             b"X-Fold: one\r\n  two\r\nAudit-Id:  x y \r\nContent-Length: 12\r\n\r\n")
    status, version, ours = http11.parse_head(b"HTTP/1.1 200 OK\r\n" + block)
    theirs = http.client.parse_headers(io.BytesIO(block))
    assert (status, version) == (200, b"HTTP/1.1")
    assert ours.get_all("warning") == theirs.get_all("warning") == ['299 - "a"', '299 - "b"']
    assert ours.get("content-type") == theirs.get("content-type") == "application/json"
    assert ours.get("audit-id") == (theirs.get("audit-id") or "").strip() == "x y"
    assert ours.get("x-fold") == "one two"  # a folded line continues the value, as http11 reads it
    assert ours.get("retry-after") is None and ours.get("retry-after", "d") == "d"
    for malformed in (b"HTTP/1.1 2x0 OK\r\n\r\n", b"HTTPS 200 OK\r\n\r\n", b"HTTP/1.1 200 OK\r\nNo colon\r\n\r\n",
                      b"HTTP/1.1 200 OK\r\nName : v\r\n\r\n"):
        with pytest.raises(http11.ProtocolError):
            http11.parse_head(malformed)


def test_lean_request_is_http_clients_request_in_one_write_and_refuses_splitting() -> None:
    from samplecontroller.rest import _request_bytes

    sent = _request_bytes("PATCH", "/apis/x?dryRun=All", "h:6443", b"{}", {"Accept": "application/json",
                                                                          "Content-Type": "application/merge-patch+json"})
    assert sent == (b"PATCH /apis/x?dryRun=All HTTP/1.1\r\nHost: h:6443\r\nAccept-Encoding: identity\r\n"
                    b"Accept: application/json\r\nContent-Type: application/merge-patch+json\r\n"
                    b"Content-Length: 2\r\n\r\n{}")
    assert _request_bytes("POST", "/a", "h", None, {}).endswith(b"Content-Length: 0\r\n\r\n")
    assert b"Content-Length" not in _request_bytes("GET", "/a", "h", None, {})
    for target in ("/a b", "/a\r\nX: y", "/\u00e9"):
        with pytest.raises(ValueError):
            _request_bytes("GET", target, "h", None, {})
    with pytest.raises(ValueError):
        _request_bytes("GET", "/a", "h", None, {"Authorization": "Bearer x\r\nX-Injected: 1"})


def test_closing_a_watch_from_another_thread_leaves_the_socket_to_its_reader(server: LocalAPIServer) -> None:
    """``ResponseStream.close()`` from another thread only shuts the socket down; the reading
    thread closes it once its read has returned. Closed by the other thread, the file descriptor
    could be reused by a new connection before the woken read ran, and that read would take the
    new connection's bytes (seen as "bad record mac" / "wrong version number" in other tests)."""
    import threading
    import time

    rest = RESTClient.from_kubeconfig(server.kubeconfig_path)
    stream = rest.stream("GET", "/api/v1/namespaces", query={"watch": "1", "timeoutSeconds": "60"})
    closed_by: list[int] = []
    response = stream._response
    real_close = response.close

    def close() -> None:
        closed_by.append(threading.get_ident())
        real_close()

    response.close = close  # type: ignore[method-assign]
    started, done = threading.Event(), threading.Event()

    def read() -> None:
        started.set()
        for _ in stream:
            pass
        done.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert started.wait(10)
    deadline = time.monotonic() + 10
    while stream._reader is None:  # iterating (a read under way or about to be)
        assert time.monotonic() < deadline, "the reader never started iterating"
        time.sleep(0.005)
    stream.close()
    assert done.wait(10), "the read was not woken"
    reader.join(10)
    assert closed_by and set(closed_by) == {reader.ident}, (closed_by, reader.ident, threading.get_ident())
