"""Connections and requests bounded as kube-apiserver bounds them (issue 28 item 5): idle
kept-alive connections live 90 s, a header must arrive within 32 s, a request whose body never
arrives is a 504 after 60 s, and in-flight requests are limited. The tests run with short,
explicitly configured values; one checks that the defaults are kube's."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import time
from pathlib import Path

import pytest

from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.__main__ import parse_args
from tests.apiserver.conftest import Raw


def test_the_defaults_are_kubes() -> None:
    server = LocalAPIServer()
    assert (server.header_timeout, server.idle_timeout, server.request_timeout) == (32.0, 90.0, 60.0)
    assert (server.max_requests_inflight, server.max_mutating_requests_inflight) == (400, 200)
    assert server.bookmark_interval == 60.0
    assert parse_args([]).bookmark_interval == 60.0


def _tls(server: LocalAPIServer) -> ssl.SSLSocket:
    assert server.ca_path is not None
    ctx = ssl.create_default_context(cafile=str(server.ca_path))
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    return ctx.wrap_socket(sock, server_hostname="127.0.0.1")


def _closed_within(sock: ssl.SSLSocket, seconds: float) -> bool:
    """Whether the server closes ``sock`` within ``seconds`` (reading whatever it sends)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        sock.settimeout(max(deadline - time.monotonic(), 0.01))
        try:
            if not sock.recv(65536):
                return True
        except TimeoutError:
            return False
        except (ConnectionError, ssl.SSLError):
            return True
    return False


def test_an_idle_kept_alive_connection_outlives_the_header_timeout(tmp_path: Path) -> None:
    with LocalAPIServer(kubeconfig_path=tmp_path / "kc", header_timeout=0.5, idle_timeout=5.0) as server:
        conn = Raw(server).conn(timeout=30)
        headers = {"Authorization": f"Bearer {server.token}"}
        conn.request("GET", "/version", headers=headers)
        assert conn.getresponse().read()
        time.sleep(1.5)  # idle for three header timeouts, well inside the idle timeout: the point of the test
        conn.request("GET", "/version", headers=headers)  # http.client reuses the connection
        response = conn.getresponse()
        assert response.status == 200 and json.loads(response.read())["gitVersion"]
        # idle past the idle timeout: the server closes it
        assert conn.sock is not None
        assert _closed_within(conn.sock, 30), "an idle connection was kept beyond idle_timeout"


def test_a_started_header_gets_the_header_timeout_not_the_idle_one(tmp_path: Path) -> None:
    with LocalAPIServer(kubeconfig_path=tmp_path / "kc", header_timeout=0.5, idle_timeout=60.0) as server:
        sock = _tls(server)
        sock.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(30)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /version HTTP/1.1\r\n")  # a header that never ends
        started = time.monotonic()
        assert _closed_within(sock, 30)
        assert time.monotonic() - started < 30


def test_a_body_that_never_arrives_is_a_504_after_the_request_timeout(tmp_path: Path) -> None:
    with LocalAPIServer(kubeconfig_path=tmp_path / "kc", request_timeout=1.0) as server:
        sock = _tls(server)
        sock.sendall(b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
                     b"Authorization: Bearer " + server.token.encode() + b"\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 3000000\r\n\r\n{\"metadata\":")
        sock.settimeout(60)
        reply = b""
        while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            reply += chunk
        head, _, body = reply.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 504"), reply[:200]
        status = json.loads(body)
        assert status["reason"] == "Timeout" and status["code"] == 504
        assert status["message"] == ("Timeout: request did not complete within requested timeout - "
                                     "context deadline exceeded")
        assert _closed_within(sock, 30)
        assert Raw(server).call("GET", "/api/v1/namespaces/default/configmaps/x")[0] == 404  # nothing was created


def test_watches_are_not_cut_by_the_request_timeout(tmp_path: Path) -> None:
    with LocalAPIServer(kubeconfig_path=tmp_path / "kc", request_timeout=0.5) as server:
        started = time.monotonic()
        events = list(Raw(server).watch("/api/v1/namespaces?watch=true&timeoutSeconds=2", timeout=30))
        assert events and time.monotonic() - started >= 1.5


def test_requests_beyond_the_in_flight_limit_are_a_429_except_for_masters(tmp_path: Path) -> None:
    with LocalAPIServer(kubeconfig_path=tmp_path / "kc", request_timeout=30.0, max_requests_inflight=1,
                        max_mutating_requests_inflight=1) as server:
        raw = Raw(server)
        assert raw.call("POST", "/api/v1/namespaces/default/serviceaccounts", {"metadata": {"name": "sa"}})[0] == 201
        binding = {"metadata": {"name": "sa-admin"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                                                                "kind": "ClusterRole", "name": "cluster-admin"},
                   "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "default"}]}
        assert raw.call("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding)[0] == 201
        code, _, request = raw.call("POST", "/api/v1/namespaces/default/serviceaccounts/sa/token",
                                    {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}})
        assert code == 201, request
        token = request["status"]["token"]
        # one request held in flight: its body has not arrived
        held = _tls(server)
        held.sendall(b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                     + token.encode() + b"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
        deadline = time.monotonic() + 30
        while True:  # until the held request is in flight
            code, headers, body = raw.call("POST", "/api/v1/namespaces/default/configmaps",
                                           {"metadata": {"name": "second"}}, token=token)
            if code == 429 or time.monotonic() > deadline:
                break
            raw.call("DELETE", "/api/v1/namespaces/default/configmaps/second")
        assert code == 429, body
        assert headers["retry-after"] == "1" and body == "Too many requests, please try again later.\n"
        assert raw.call("GET", "/api/v1/namespaces", token=token)[0] == 200  # the read-only limit is another
        # the admin (system:masters) is exempt
        assert raw.call("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "admin"}})[0] == 201
        held.close()


def test_slow_body_connections_are_released_by_the_request_timeout(tmp_path: Path) -> None:
    with LocalAPIServer(kubeconfig_path=tmp_path / "kc", request_timeout=1.0) as server:
        socks = [_tls(server) for _ in range(20)]
        for sock in socks:
            sock.sendall(b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
                         b"Authorization: Bearer " + server.token.encode() + b"\r\n"
                         b"Content-Type: application/json\r\nContent-Length: 3000000\r\n\r\n" + b" " * 100_000)
        assert all(_closed_within(sock, 60) for sock in socks)
        assert Raw(server).call("GET", "/readyz")[0] == 200
        for sock in socks:
            sock.close()


def test_an_http_client_reusing_a_connection_after_a_pause(raw: Raw) -> None:
    """Python's http.client (any pool) after a pause shorter than kube's 90 s: no RemoteDisconnected."""
    conn = raw.conn()
    try:
        for _ in range(2):
            conn.request("GET", "/version")
            response = conn.getresponse()
            assert response.status == 200
            response.read()
    except http.client.RemoteDisconnected:
        pytest.fail("the server closed a kept-alive connection")
    finally:
        conn.close()


def test_a_shorter_timeout_parameter_is_honoured_and_a_bad_one_is_a_400(raw: Raw, server: LocalAPIServer) -> None:
    code, _, body = raw.call("GET", "/api/v1/namespaces?timeout=abc")
    assert code == 400 and body["message"] == ('invalid timeout specified in the request URL - '
                                               'time: invalid duration "abc"'), body
    code, _, body = raw.call("GET", "/api/v1/namespaces?timeout=5")
    assert code == 400 and body["message"].endswith('time: missing unit in duration "5"'), body
    assert raw.call("GET", "/api/v1/namespaces?timeout=30s")[0] == 200
    sock = _tls(server)  # the module server keeps kube's 60 s; the request asks for 1 s
    sock.sendall(b"POST /api/v1/namespaces/default/configmaps?timeout=1s HTTP/1.1\r\nHost: x\r\n"
                 b"Authorization: Bearer " + server.token.encode() + b"\r\n"
                 b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
    sock.settimeout(30)
    assert sock.recv(65536).startswith(b"HTTP/1.1 504")
    sock.close()


def test_a_body_arriving_after_the_header_timeout_is_read(tmp_path: Path) -> None:
    """The header timer is not armed while the body is read (issue 43 item 7): Go's server has
    no body read timeout; only the request timeout (504) bounds a slow body."""
    with LocalAPIServer(kubeconfig_path=tmp_path / "kc", header_timeout=0.3, request_timeout=30.0) as server:
        sock = _tls(server)
        body = json.dumps({"metadata": {"name": "late-body"}}).encode()
        sock.sendall(b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
                     b"Authorization: Bearer " + server.token.encode() + b"\r\nContent-Type: application/json\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body[:5])
        time.sleep(1.0)  # over three header timeouts while the body is read: the point of the test
        sock.sendall(body[5:])
        sock.settimeout(30)
        reply = b""
        while b"\r\n\r\n" not in reply:
            chunk = sock.recv(65536)
            if not chunk:
                break
            reply += chunk
        assert reply.startswith(b"HTTP/1.1 201"), reply[:300]


def test_a_body_still_arriving_at_the_request_timeout_is_a_504_not_a_500(tmp_path: Path) -> None:
    """A body that keeps arriving, slowly, past the header timeout and up to the request timeout
    gets kube's 504 (the header timer used to end it first with a 500)."""
    with LocalAPIServer(kubeconfig_path=tmp_path / "kc", header_timeout=0.3, request_timeout=1.5) as server:
        sock = _tls(server)
        sock.sendall(b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
                     b"Authorization: Bearer " + server.token.encode() + b"\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 3000000\r\n\r\n{")
        sock.settimeout(0.2)
        reply = b""
        deadline = time.monotonic() + 30
        while b"\r\n\r\n" not in reply and time.monotonic() < deadline:
            try:
                sock.sendall(b" ")  # a byte of the body every 0.2 s: never idle, never done
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            except (ConnectionError, ssl.SSLError):
                break
            if not chunk:
                break
            reply += chunk
        assert reply.startswith(b"HTTP/1.1 504"), reply[:300]
