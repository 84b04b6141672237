"""Helpers for tests that run controllers against the embedded API server (``apiserver`` fixture):
a REST client for it, a fresh namespace per test, ``wait_for``, and ``http_get`` for probe and
metrics endpoints."""

from __future__ import annotations

import itertools
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest

from samplecontroller.apimachinery import errors
from samplecontroller.kubernetes.clientset import Clientset
from samplecontroller.rest import RESTClient, load_rest_client

_ns = itertools.count()


def free_port() -> int:
    """A loopback TCP port that was free a moment ago (for a server's --...-bind-address)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def http_get(port: int, path: str) -> tuple[int, str]:
    """GET http://127.0.0.1:<port><path>: (status, body); (0, "") while nothing listens there."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()
    except OSError:
        return 0, ""


def wait_for(fn: Callable[[], Any], timeout: float = 10.0, what: str = "condition") -> Any:
    """Poll ``fn`` until it returns something truthy (API errors count as not yet); return that."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = fn()
            if last:
                return last
        except errors.StatusError:
            pass
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


@pytest.fixture
def rest(apiserver: Any) -> RESTClient:
    return load_rest_client(kubeconfig=str(apiserver.kubeconfig_path))


@pytest.fixture
def ns(rest: RESTClient, request: pytest.FixtureRequest) -> str:
    """A new namespace, named after the test module."""
    prefix = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")[:12].replace("_", "-")
    name = f"{prefix}-{next(_ns)}-{int(time.time() * 1000) % 100000}"
    Clientset(rest).core_v1().namespaces().create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


class WebhookHost:
    """The two things ``webhook_managed_by`` needs from a manager: a webhook server and the scheme."""

    def __init__(self, server: Any) -> None:
        self.server = server

    def get_webhook_server(self) -> Any:
        return self.server

    def get_scheme(self) -> Any:
        from samplecontroller.foo_reconciler import SCHEME

        return SCHEME
