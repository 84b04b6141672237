"""Helpers for the API server tests: a raw HTTPS client bound to one LocalAPIServer."""

from __future__ import annotations

import http.client
import json
import ssl
import subprocess
import urllib.parse
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config

from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.testing import install_crds, make_kubectl

ROOT = Path(__file__).resolve().parents[2]


def open_watches(server: LocalAPIServer, resource: str) -> int:
    """How many watches of ``resource`` (``"group/plural"``, ``"pods"`` for the core group) the
    server holds open now: wait for it to grow before writing what a just-started
    ``kubectl get NAME -w`` must see (kubectl drops its watch's first event)."""
    return server.call(lambda core: len(core.store.watchers.get(resource, ())))


class Raw:
    """Minimal HTTPS client: ``call(method, path, body=None, ctype=..., token=...) -> (code, headers, json)``."""

    def __init__(self, server: LocalAPIServer) -> None:
        self.server = server
        parsed = urllib.parse.urlparse(server.url)
        self.host, self.port = parsed.hostname or "127.0.0.1", parsed.port or 443
        self.ctx = ssl.create_default_context(cafile=str(server.ca_path))

    def conn(self, timeout: float = 10) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=timeout)

    def call(self, method: str, path: str, body: Any = None, ctype: str = "application/json",
             token: str | None = "", accept: str = "application/json", raw: bytes | None = None,
             ) -> tuple[int, dict[str, str], Any]:
        conn = self.conn()
        headers = {"Accept": accept}
        tok = self.server.token if token == "" else token
        if tok:
            headers["Authorization"] = f"Bearer {tok}"
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        if data is not None and ctype:
            headers["Content-Type"] = ctype
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        payload = resp.read()
        conn.close()
        try:
            parsed = json.loads(payload) if payload else None
        except ValueError:
            parsed = payload.decode(errors="replace")
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, parsed

    def watch(self, path: str, accept: str = "application/json", timeout: float = 10) -> Generator[dict[str, Any]]:
        """Yield watch events of ``path`` (a URL with watch=true) until the server ends the stream."""
        conn = self.conn(timeout)
        conn.request("GET", path, headers={"Authorization": f"Bearer {self.server.token}", "Accept": accept})
        resp = conn.getresponse()
        assert resp.status == 200, resp.read()
        try:
            while True:
                line = resp.readline()
                if not line:
                    return
                yield json.loads(line)
        finally:
            conn.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalAPIServer]:
    """One server per test module, with the repository's CRDs installed."""
    with LocalAPIServer(kubeconfig_path=tmp_path_factory.mktemp("api") / "kubeconfig",
                        bookmark_interval=0.2, record_requests=10_000) as s:
        install_crds(s, ROOT / "crds")
        yield s


@pytest.fixture(scope="module")
def raw(server: LocalAPIServer) -> Raw:
    return Raw(server)


def checked_kubectl(home: Path, server: LocalAPIServer) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``make_kubectl(home, server)`` that asserts each command exits 0 (the unchecked runner is
    its ``raw`` attribute)."""
    run = make_kubectl(home, server)

    def ok(*args: str, stdin: str | None = None, binary: str | None = None) -> subprocess.CompletedProcess[str]:
        proc = run(*args, stdin=stdin, binary=binary)
        assert proc.returncode == 0, f"kubectl {' '.join(args)}: {proc.stderr}"
        return proc

    ok.raw = run  # type: ignore[attr-defined]
    return ok


@contextmanager
def official_client(server: LocalAPIServer) -> Iterator[client.ApiClient]:
    """The official Python client's ApiClient for ``server``'s kubeconfig, closed on exit."""
    api_client = config.new_client_from_config(config_file=str(server.kubeconfig_path))
    try:
        yield api_client
    finally:
        api_client.close()


def foo(name: str, replicas: int | None = 1, **meta: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"deploymentName": name}
    if replicas is not None:
        spec["replicas"] = replicas
    return {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
            "metadata": {"name": name, **meta}, "spec": spec}


FOOS = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/{ns}/foos"
