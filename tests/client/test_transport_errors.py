"""The request path's behaviour on broken connections, against a raw loopback socket server.

A GET whose kept-alive connection was closed by the server is sent once more on a new
connection (Go's transport retries idempotent requests); a POST is not; a read timeout and a
refused connection are one-line ``TransportError``s naming the server.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from samplecontroller.rest import Config, RESTClient, TransportError

OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


class RawServer:
    """Accepts connections; answers each one's first request with ``OK`` (keep-alive), then closes
    it without answering more, or (``silent``) never answers at all."""

    def __init__(self, silent: bool = False, hold: bool = False) -> None:
        self.silent = silent
        self.hold = hold  # after the first answer, keep the connection open without answering
        self.connections = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self._open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            self._open.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            if self.silent:
                return
            conn.sendall(OK)
            conn.recv(65536)  # the next request on this connection (or its close): not answered
            if not self.hold:
                conn.close()
        except OSError:  # close() (the fixture's teardown) closed the connection under us
            return

    def close(self) -> None:
        self.sock.close()
        for conn in self._open:
            conn.close()


@pytest.fixture
def raw() -> Iterator[RawServer]:
    server = RawServer()
    yield server
    server.close()


def test_get_on_a_dropped_kept_alive_connection_is_retried_on_a_new_one(raw: RawServer) -> None:
    client = RESTClient(Config(host=raw.url))
    assert client.request("GET", "/api") == b"{}"
    assert client.request("GET", "/api") == b"{}"
    assert raw.connections == 2


def test_post_on_a_dropped_connection_is_not_retried(raw: RawServer) -> None:
    client = RESTClient(Config(host=raw.url))
    client.request("GET", "/api")
    with pytest.raises(TransportError, match=f"cannot reach the API server at {raw.url}"):
        client.request("POST", "/api/v1/namespaces", body=b"{}")
    assert raw.connections == 1


def test_a_read_timeout_is_a_transport_error() -> None:
    server = RawServer(silent=True)
    try:
        client = RESTClient(Config(host=server.url))
        with pytest.raises(TransportError, match="timed out") as info:
            client.request("GET", "/api", timeout=0.2)
        assert "\n" not in str(info.value)
    finally:
        server.close()


def test_a_kept_alive_connection_reads_with_the_timeout_of_each_request() -> None:
    # the socket's read timeout is set only when it changes: a request with another timeout than
    # the one before it on the same connection still gets its own
    server = RawServer(hold=True)
    try:
        client = RESTClient(Config(host=server.url))
        assert client.request("GET", "/api") == b"{}"  # the default read timeout, 60 s
        started = time.monotonic()
        with pytest.raises(TransportError, match="timed out"):
            client.request("GET", "/api", timeout=0.2)  # same connection, held unanswered
        assert time.monotonic() - started < 5  # not the connect timeout (10 s) or the default (60 s)
        assert server.connections == 1
    finally:
        server.close()


def test_a_refused_connection_is_a_transport_error() -> None:
    with socket.create_server(("127.0.0.1", 0)) as s:
        port = s.getsockname()[1]
    client = RESTClient(Config(host=f"http://127.0.0.1:{port}"))
    with pytest.raises(TransportError, match=f"cannot reach the API server at http://127.0.0.1:{port}"):
        client.request("GET", "/api")
