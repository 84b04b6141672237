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
