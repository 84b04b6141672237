"""Soak: Foos (each with an Event about it, as the controller records) created and deleted round
after round; the server's memory stays flat (RSS within 10% between round 2 and round 4) because
the request log is off, Events expire and the watch history is bounded. The Event TTL and the
history window are shortened to 1.5 s so that the bounds are reached within the first round (with
the defaults, 1 h and 75 s, memory levels off only after that long).
``benchmarks/bench_soak.py`` runs the full-size version (2,000 Foos)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.reliability.procs import ServerProcess, install_foo_crd, wait_until

NS = "soak"
FOOS = f"/apis/samplecontroller.k8s.io/v1alpha1/namespaces/{NS}/foos"
EVENTS = f"/api/v1/namespaces/{NS}/events"
N_FOOS = 500
ROUNDS = 4
THREADS = 4
TTL = 1.5  # --event-ttl and --history-window, in seconds


def foo(name: str) -> dict[str, Any]:
    return {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "metadata": {"name": name},
            "spec": {"deploymentName": name, "replicas": 1}}


def event(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{name}.synced"}, "type": "Normal",
            "involvedObject": {"kind": "Foo", "name": name, "namespace": NS}, "reason": "Synced",
            "message": "Foo synced successfully"}


def in_parallel(server: ServerProcess, work: Callable[[str], object], names: list[str]) -> None:
    errors: list[BaseException] = []

    def run(part: list[str]) -> None:
        try:
            for name in part:
                work(name)
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=run, args=(names[i::THREADS],)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def one_round(server: ServerProcess, names: list[str]) -> None:
    def create(name: str) -> None:
        assert server.call("POST", FOOS, foo(name))[0] == 201
        assert server.call("POST", EVENTS, event(name))[0] == 201

    in_parallel(server, create, names)
    in_parallel(server, lambda name: server.call("DELETE", f"{FOOS}/{name}"), names)


@pytest.mark.slow
def test_server_memory_stays_flat_under_create_delete_rounds(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, "--event-ttl", f"{TTL}s", "--history-window", f"{TTL}s")
    try:
        install_foo_crd(server)
        assert server.call("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})[0] == 201
        process = psutil.Process(server.proc.pid)
        names = [f"soak-{i:04d}" for i in range(N_FOOS)]
        rss: list[int] = []
        for _ in range(ROUNDS):
            one_round(server, names)
            wait_until(lambda: not server.call("GET", EVENTS)[1]["items"], 10 * TTL, "the Events expire")
            time.sleep(TTL)
            rss.append(process.memory_info().rss)
        mib = [f"{r / 2**20:.1f}" for r in rss]
        assert rss[3] <= rss[1] * 1.10, f"server RSS per round (MiB): {mib}"
    finally:
        server.stop()
