"""Manager hooks (issue 39): kopf's on.startup (awaited, retried, before controllers start),
on.cleanup and on.probe (values served at the liveness endpoint), against the embedded server."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from samplecontroller.foo_reconciler import SCHEME
from samplecontroller.runtime.manager import Manager, Options, runnable_func
from samplecontroller.runtime.reconcile import PermanentError, TemporaryError
from samplecontroller.testing.runner import OperatorRunner
from tests.live import http_get, ns, rest

__all__ = ["ns", "rest"]


def test_startup_hooks_are_retried_and_awaited_before_anything_starts_then_cleanup_and_probes(
        rest: Any, ns: str) -> None:
    order: list[str] = []
    attempts: list[float] = []

    def connect() -> None:
        attempts.append(time.monotonic())
        if len(attempts) == 1:
            raise ValueError("a bug")  # the backoff (0.05 s), with its traceback
        if len(attempts) == 2:
            raise TemporaryError("database not up", delay=0.3)
        order.append("startup")

    async def warm_up() -> None:
        order.append("async startup")

    def controller(stop: threading.Event) -> None:
        order.append("controller")
        stop.wait()

    async def close() -> None:
        order.append("async cleanup")

    mgr = Manager(rest, Options(namespaces=(ns,), health_probe_bind_address="127.0.0.1:0"), scheme=SCHEME)
    mgr.add_startup_hook(connect, backoff=0.05)
    mgr.add_startup_hook(warm_up)
    mgr.add(runnable_func(controller))
    mgr.add_cleanup_hook(lambda: order.append("cleanup"), name="first")
    mgr.add_cleanup_hook(close)
    mgr.add_probe("queue", lambda: {"depth": 3})
    mgr.add_probe("started", lambda: order[0])
    with OperatorRunner(mgr) as runner:
        port = mgr.server_addresses()[0][1]
        code, body = http_get(port, "/healthz?format=json")
        assert (code, json.loads(body)) == (200, {"queue": {"depth": 3}, "started": "startup"})
        assert http_get(port, "/healthz") == (200, "ok"), "the plain check is unchanged"
    assert order == ["startup", "async startup", "controller", "async cleanup", "cleanup"]
    assert attempts[2] - attempts[1] >= 0.3, "the TemporaryError's delay"
    out = runner.output
    assert out.count('msg="Startup hook failed; retrying in 0.05s"') == 1
    assert out.count('msg="Startup hook failed; retrying in 0.3s"') == 1
    assert out.count("Traceback") == 1
    assert 'msg="Cleanup hook succeeded" hook=first' in out


def test_a_permanent_startup_failure_or_the_last_retry_stops_the_manager(rest: Any, ns: str) -> None:
    started: list[str] = []
    for hook, retries in ((lambda: (_ for _ in ()).throw(PermanentError("no licence")), None),
                          (lambda: (_ for _ in ()).throw(ValueError("still broken")), 2)):
        mgr = Manager(rest, Options(namespaces=(ns,)), scheme=SCHEME)
        mgr.add_startup_hook(hook, name="check", retries=retries, backoff=0.01)
        mgr.add(runnable_func(lambda stop: started.append("controller")))
        with pytest.raises((PermanentError, ValueError)):
            mgr.start(threading.Event())
    assert started == []


def test_a_failing_probe_fails_the_liveness_endpoint(rest: Any, ns: str) -> None:
    mgr = Manager(rest, Options(namespaces=(ns,), health_probe_bind_address="127.0.0.1:0"), scheme=SCHEME)
    mgr.add_probe("db", lambda: (_ for _ in ()).throw(ConnectionError("db down")))
    with OperatorRunner(mgr):
        port = mgr.server_addresses()[0][1]
        code, body = http_get(port, "/healthz?format=json")
        assert (code, json.loads(body)) == (500, {"failed": {"db": "ConnectionError: db down"}})
        assert http_get(port, "/healthz")[0] == 500
