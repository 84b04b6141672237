"""The CLI (ready line, SIGTERM exit 0), restarts with --data-dir, and fuzzed requests."""

from __future__ import annotations

import gc
import signal
import socket
import ssl
import subprocess
import sys
import warnings
from pathlib import Path

import psutil
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from samplecontroller.apiserver import LocalAPIServer
from tests.apiserver.conftest import FOOS, Raw, foo

ROOT = Path(__file__).resolve().parents[2]


def test_cli_ready_line_and_sigterm(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kc"
    proc = subprocess.Popen([sys.executable, "-m", "samplecontroller.apiserver", "--kubeconfig", str(kubeconfig),
                             "--data-dir", str(tmp_path / "data")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("ready https://127.0.0.1:") and line.endswith(f"kubeconfig={kubeconfig}")
        assert "token:" in kubeconfig.read_text()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        proc.kill()


def test_cli_rejects_bad_arguments() -> None:
    proc = subprocess.run([sys.executable, "-m", "samplecontroller.apiserver", "--port", "99999"],
                          capture_output=True, text=True, cwd=ROOT, timeout=30)
    assert proc.returncode == 2 and "--port" in proc.stderr and "Traceback" not in proc.stderr


def test_state_survives_restart(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with LocalAPIServer(data_dir=data, kubeconfig_path=tmp_path / "kc") as s:
        r = Raw(s)
        from samplecontroller.apiserver.testing import install_crds

        install_crds(s, ROOT / "crds")
        code, _, created = r.call("POST", FOOS.format(ns="default"), foo("keep"))
        assert code == 201
        r.call("POST", FOOS.format(ns="default"), foo("gone"))
        r.call("DELETE", FOOS.format(ns="default") + "/gone")
        rv = r.call("GET", FOOS.format(ns="default"))[2]["metadata"]["resourceVersion"]
    with LocalAPIServer(data_dir=data, kubeconfig_path=tmp_path / "kc") as s:
        r = Raw(s)
        code, _, got = r.call("GET", FOOS.format(ns="default") + "/keep")
        assert code == 200 and got["metadata"]["uid"] == created["metadata"]["uid"]
        assert r.call("GET", FOOS.format(ns="default") + "/gone")[0] == 404
        code, _, obj = r.call("POST", FOOS.format(ns="default"), foo("new"))
        assert int(obj["metadata"]["resourceVersion"]) > int(rv)


_segments = st.sampled_from(["api", "apis", "v1", "apps", "namespaces", "default", "foos", "pods", "status", "scale",
                             "samplecontroller.k8s.io", "v1alpha1", "x", "%00", "..", "deployments", "finalize",
                             "openapi", "v3", "version", "watch"])
_queries = st.lists(st.tuples(st.sampled_from(["watch", "limit", "continue", "resourceVersion", "labelSelector",
                                               "fieldSelector", "timeoutSeconds", "dryRun", "fieldValidation",
                                               "resourceVersionMatch", "sendInitialEvents", "propagationPolicy",
                                               "force", "fieldManager", "allowWatchBookmarks"]),
                              st.sampled_from(["true", "0", "-1", "1", "abc", "a=b", "x in (", "All", "Strict",
                                               "Exact", "999999999999", "metadata.name=x", ""])), max_size=4)
_bodies = st.one_of(st.just(b""), st.binary(max_size=40),
                    st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5)),
                                 lambda c: st.lists(c, max_size=3) | st.dictionaries(
                                     st.sampled_from(["metadata", "spec", "name", "kind", "apiVersion", "op",
                                                      "path", "value", "replicas", "status", "finalizers"]), c,
                                     max_size=4), max_leaves=10).map(lambda v: __import__("json").dumps(v).encode()))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]), segments=st.lists(_segments, max_size=7),
       query=_queries, body=_bodies,
       ctype=st.sampled_from(["application/json", "application/yaml", "application/merge-patch+json",
                              "application/json-patch+json", "application/strategic-merge-patch+json",
                              "application/apply-patch+yaml", "application/vnd.kubernetes.protobuf", "text/html", ""]))
def test_fuzzed_requests_never_500(raw: Raw, method: str, segments: list[str], query: list[tuple[str, str]],
                                   body: bytes, ctype: str) -> None:
    import urllib.parse

    path = "/" + "/".join(segments)
    qs = urllib.parse.urlencode(query + ([("timeoutSeconds", "0")] if ("watch", "true") in query else []))
    code, _, _ = raw.call(method, path + ("?" + qs if qs else ""), raw=body if method != "GET" else None, ctype=ctype)
    assert code != 500 and code < 600
    assert raw.call("GET", "/healthz")[0] == 200


def test_one_server_per_data_directory(tmp_path: Path) -> None:
    from samplecontroller.apiserver import LocalAPIServer
    from samplecontroller.apiserver.storage import DataDirInUseError

    with LocalAPIServer(data_dir=tmp_path / "data", kubeconfig_path=tmp_path / "one") as first:
        second = LocalAPIServer(data_dir=tmp_path / "data", kubeconfig_path=tmp_path / "two")
        with pytest.raises(DataDirInUseError, match="is in use by another embedded API server"):
            second.start()
        assert not (tmp_path / "two").exists()  # nothing written by the refused server
        assert first.url
    with LocalAPIServer(data_dir=tmp_path / "data", kubeconfig_path=tmp_path / "three"):
        pass  # the lock went with the first server


def test_clients_of_the_last_run_keep_working_after_a_restart(tmp_path: Path) -> None:
    """With a data directory the CA, serving certificate and token are kept, so a client that
    loaded the old kubeconfig (a running controller) reconnects to the restarted server."""
    from samplecontroller.rest import load_rest_client

    data = tmp_path / "data"
    with LocalAPIServer(data_dir=data, kubeconfig_path=tmp_path / "kc") as s:
        port, token, ca = s.port, s.token, s.ca_path.read_bytes() if s.ca_path else b""
        client = load_rest_client(kubeconfig=str(tmp_path / "kc"))
        assert client.request("GET", "/api/v1/namespaces/default")
    with LocalAPIServer(data_dir=data, kubeconfig_path=tmp_path / "kc2", port=port) as s:
        assert s.token == token and s.ca_path is not None and s.ca_path.read_bytes() == ca
        assert b'"name":"default"' in client.request("GET", "/api/v1/namespaces/default")
    assert (data / "token").stat().st_mode & 0o077 == 0 and (data / "pki" / "tls.key").stat().st_mode & 0o077 == 0


def _watch_without_reading(server: LocalAPIServer) -> ssl.SSLSocket:
    """A TLS connection with a watch under way whose client never reads again (as a client thread
    blocked elsewhere): it will not answer the server's close_notify."""
    assert server.ca_path is not None
    ctx = ssl.create_default_context(cafile=str(server.ca_path))
    conn = ctx.wrap_socket(socket.create_connection(("127.0.0.1", server.port), timeout=10),
                           server_hostname="localhost")
    conn.sendall(f"GET /api/v1/namespaces?watch=true HTTP/1.1\r\nHost: localhost\r\n"
                 f"Authorization: Bearer {server.token}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += conn.recv(4096)
    assert head.startswith(b"HTTP/1.1 200"), head
    return conn


def test_stop_closes_every_connection_even_one_that_does_not_answer(tmp_path: Path) -> None:
    """After stop() no server-side socket is left to the garbage collector: left there, each warned
    ``unclosed transport`` and, on Python 3.13, its ``__del__`` made asyncio.Server._detach raise
    (``TypeError: 'NoneType' object is not iterable``, a PytestUnraisableExceptionWarning)."""
    unraisable: list[str] = []
    hook, sys.unraisablehook = sys.unraisablehook, lambda u: unraisable.append(f"{u.exc_type.__name__}: {u.exc_value}")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ResourceWarning)
            server = LocalAPIServer(kubeconfig_path=tmp_path / "kubeconfig")
            server.start()
            port = server.port
            clients = [_watch_without_reading(server) for _ in range(3)]
            server.stop()
            left = [c for c in psutil.Process().net_connections(kind="tcp") if c.laddr and c.laddr.port == port]
            assert left == [], left
            del server
            gc.collect()
        for client in clients:
            client.close()
    finally:
        sys.unraisablehook = hook
    assert unraisable == []
    assert [str(w.message) for w in caught if "unclosed transport" in str(w.message)] == []
