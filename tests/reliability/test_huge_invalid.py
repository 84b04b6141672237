"""One huge invalid request must not stall the server (issue 28 item 4): the work is linear in
the body (the error list de-duplicated through a set, as apimachinery's ToAggregate does) and
runs off the event loop, so other clients are answered meanwhile. The server runs in its own
process, so the client's decoding does not share an interpreter lock with it."""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Iterator

import pytest

from samplecontroller.apiserver.schema import FieldError, aggregate_message
from tests.reliability.procs import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = ServerProcess(tmp_path_factory.mktemp("huge"))
    try:
        yield proc
    finally:
        proc.proc.kill()
        proc.proc.wait(30)


def _connection(server: ServerProcess, timeout: float) -> http.client.HTTPSConnection:
    return http.client.HTTPSConnection(server.host, server.port, context=server.ssl, timeout=timeout)


def test_aggregating_many_errors_is_linear() -> None:
    errors = [FieldError("FieldValueInvalid", f"f{i}", "v", "bad") for i in range(200_000)]
    started = time.process_time()
    message = aggregate_message(errors + errors[:10])  # duplicates dropped, order kept
    assert time.process_time() - started < 5  # was quadratic: minutes
    assert message.startswith('[f0: Invalid value: "v": bad, f1: ') and message.count("bad") == 200_000


def test_other_clients_are_served_while_a_huge_invalid_request_runs(server: ServerProcess) -> None:
    labels = {f"bad key {i}!": "v" for i in range(50_000)}
    body = json.dumps({"metadata": {"name": "huge", "labels": labels}}).encode()
    latencies: list[float] = []
    running = threading.Event()
    finished = threading.Event()

    def probe() -> None:
        running.wait(60)
        while not finished.is_set():
            conn = _connection(server, 120)
            started = time.monotonic()
            conn.request("GET", "/readyz", headers={"Authorization": f"Bearer {server.token}"})
            response = conn.getresponse()
            response.read()
            conn.close()
            if not finished.is_set():
                assert response.status == 200
                latencies.append(time.monotonic() - started)

    prober = threading.Thread(target=probe)
    prober.start()
    try:
        conn = _connection(server, 300)
        started = time.monotonic()
        conn.request("POST", "/api/v1/namespaces/default/configmaps", body=body,
                     headers={"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"})
        running.set()
        response = conn.getresponse()
        payload = response.read()
        duration = time.monotonic() - started
    finally:
        running.set()
        finished.set()
        prober.join(300)
    assert response.status == 422
    status = json.loads(payload)
    assert status["reason"] == "Invalid" and len(status["details"]["causes"]) == len(labels)
    assert status["message"].startswith('ConfigMap "huge" is invalid: [metadata.labels: Invalid value: "bad key 0!": ')
    # the server kept answering: several probes completed while the big request ran, none waited
    # for most of it (before: /readyz went unanswered for the whole request, quadratic in the keys)
    assert len(latencies) >= 3, (duration, latencies)
    assert max(latencies) < 0.75 * duration, (duration, sorted(latencies)[-3:])
