"""The Job simulator (issue 28 item 8): Pods per parallelism/completions, status counts,
startTime/completionTime, Complete/Failed conditions with backoffLimit and
activeDeadlineSeconds; tests make a Pod succeed or fail with ``finish_pod``."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.testing import finish_pod
from tests.apiserver.conftest import Raw

JOBS = "/apis/batch/v1/namespaces/default/jobs"
PODS = "/api/v1/namespaces/default/pods"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalAPIServer]:
    with LocalAPIServer(kubeconfig_path=tmp_path_factory.mktemp("jobs") / "kc", simulate_jobs=True,
                        simulate_delay=0.05, job_backoff=0.2) as s:
        yield s


@pytest.fixture
def raw(server: LocalAPIServer) -> Raw:
    return Raw(server)


def _job(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "c", "image": "busybox"}]}}, **spec}}


def _wait(what: str, probe: Callable[[], Any], timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.05)


def _get(raw: Raw, name: str) -> dict[str, Any]:
    code, _, job = raw.call("GET", f"{JOBS}/{name}")
    assert code == 200, job
    return dict(job)


def _pods(raw: Raw, name: str, phase: str | None = None) -> list[dict[str, Any]]:
    code, _, body = raw.call("GET", f"{PODS}?labelSelector=batch.kubernetes.io/job-name={name}")
    assert code == 200, body
    return [p for p in body["items"] if not p["metadata"].get("deletionTimestamp")
            and (phase is None or p.get("status", {}).get("phase") == phase)]


def _pending(raw: Raw, name: str, count: int) -> list[dict[str, Any]]:
    return list(_wait(f"{count} pending pods of {name}",
                      lambda: (pods := _pods(raw, name, "Pending")) and len(pods) == count and pods))


def _condition(job: dict[str, Any], ctype: str) -> dict[str, Any] | None:
    return next((c for c in job.get("status", {}).get("conditions") or () if c["type"] == ctype), None)


def test_a_job_runs_its_pods_to_completion(server: LocalAPIServer, raw: Raw) -> None:
    code, _, created = raw.call("POST", JOBS, _job("done", parallelism=2, completions=3))
    assert code == 201, created
    pods = _pending(raw, "done", 2)
    job = _wait("active 2", lambda: (j := _get(raw, "done")).get("status", {}).get("active") == 2 and j)
    assert job["status"]["startTime"] and job["status"]["ready"] == 0 and "succeeded" not in job["status"]
    pod = pods[0]
    assert pod["metadata"]["generateName"] == "done-"
    [owner] = pod["metadata"]["ownerReferences"]
    assert owner["kind"] == "Job" and owner["uid"] == created["metadata"]["uid"] and owner["controller"] is True
    assert pod["metadata"]["labels"]["batch.kubernetes.io/controller-uid"] == created["metadata"]["uid"]
    for p in pods:
        finish_pod(server, "default", p["metadata"]["name"])
    # two succeeded: one more pod for the third completion (min(parallelism, completions - succeeded))
    last = _pending(raw, "done", 1)[0]
    job = _wait("succeeded 2", lambda: (j := _get(raw, "done"))["status"].get("succeeded") == 2 and j)
    assert job["status"]["active"] == 1 and _condition(job, "Complete") is None
    finish_pod(server, "default", last["metadata"]["name"])
    job = _wait("complete", lambda: _condition(j := _get(raw, "done"), "Complete") and j)
    status = job["status"]
    assert status["succeeded"] == 3 and "active" not in status and status["completionTime"] >= status["startTime"]
    complete = _condition(job, "Complete")
    assert complete is not None and complete["status"] == "True" and complete["reason"] == "CompletionsReached"
    assert _condition(job, "SuccessCriteriaMet") is not None
    assert len(_pods(raw, "done", "Succeeded")) == 3


def test_failures_beyond_the_backoff_limit_fail_the_job(server: LocalAPIServer, raw: Raw) -> None:
    assert raw.call("POST", JOBS, _job("flaky", backoffLimit=1))[0] == 201
    first = _pending(raw, "flaky", 1)[0]
    finish_pod(server, "default", first["metadata"]["name"], succeeded=False)
    second = _wait("a replacement pod", lambda: [p for p in _pods(raw, "flaky", "Pending")
                                                 if p["metadata"]["name"] != first["metadata"]["name"]])[0]
    job = _wait("failed 1", lambda: (j := _get(raw, "flaky"))["status"].get("failed") == 1 and j)
    assert _condition(job, "Failed") is None
    finish_pod(server, "default", second["metadata"]["name"], succeeded=False)
    job = _wait("failed", lambda: _condition(j := _get(raw, "flaky"), "Failed") and j)
    failed = _condition(job, "Failed")
    assert failed is not None and failed["reason"] == "BackoffLimitExceeded"
    assert failed["message"] == "Job has reached the specified backoff limit"
    assert _condition(job, "FailureTarget") is not None
    assert job["status"]["failed"] == 2 and "completionTime" not in job["status"]
    assert _pods(raw, "flaky", "Pending") == []


def test_a_job_past_its_active_deadline_fails_and_its_pods_go(raw: Raw) -> None:
    assert raw.call("POST", JOBS, _job("slow", activeDeadlineSeconds=1, parallelism=2, completions=2))[0] == 201
    _pending(raw, "slow", 2)
    job = _wait("deadline", lambda: _condition(j := _get(raw, "slow"), "Failed") and j)
    failed = _condition(job, "Failed")
    assert failed is not None and failed["reason"] == "DeadlineExceeded"
    assert failed["message"] == "Job was active longer than specified deadline"
    _wait("pods deleted", lambda: _pods(raw, "slow") == [])


def test_a_work_queue_job_completes_when_one_pod_succeeds_and_none_is_active(server: LocalAPIServer,
                                                                              raw: Raw) -> None:
    assert raw.call("POST", JOBS, _job("queue", parallelism=2))[0] == 201
    pods = _pending(raw, "queue", 2)
    finish_pod(server, "default", pods[0]["metadata"]["name"])
    job = _wait("succeeded 1", lambda: (j := _get(raw, "queue"))["status"].get("succeeded") == 1 and j)
    assert _condition(job, "Complete") is None  # another pod is still active
    finish_pod(server, "default", pods[1]["metadata"]["name"])
    _wait("complete", lambda: _condition(_get(raw, "queue"), "Complete"))


def test_a_suspended_job_has_no_pods_until_resumed(raw: Raw) -> None:
    assert raw.call("POST", JOBS, _job("later", suspend=True))[0] == 201
    job = _wait("suspended", lambda: _condition(j := _get(raw, "later"), "Suspended") and j)
    assert _pods(raw, "later") == [] and "startTime" not in job["status"]
    code, _, _ = raw.call("PATCH", f"{JOBS}/later", {"spec": {"suspend": False}}, ctype="application/merge-patch+json")
    assert code == 200
    _pending(raw, "later", 1)
    job = _wait("resumed", lambda: (c := _condition(j := _get(raw, "later"), "Suspended")) and c["status"] == "False"
                and j)
    assert job["status"]["startTime"]


def test_the_simulator_is_off_by_default(tmp_path: Path) -> None:
    with LocalAPIServer(kubeconfig_path=tmp_path / "kc") as server:
        raw = Raw(server)
        assert raw.call("POST", JOBS, _job("idle"))[0] == 201
        assert server.controllers is not None and server.controllers.jobs is None
        assert _pods(raw, "idle") == []
