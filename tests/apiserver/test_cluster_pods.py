"""Graceful Pod deletion with the node simulator (issue 19 item 4): a Pod bound to a node is
Terminating for its grace period and then removed, as the kubelet does; an unbound Pod, a
finished one and ``--grace-period=0 --force`` are deleted at once."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import Any

import pytest

from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.objects import parse_rfc3339
from tests.apiserver.cluster_helpers import new_namespace
from tests.apiserver.conftest import Raw

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def raw(apiserver: LocalAPIServer) -> Raw:
    return Raw(apiserver)


@pytest.fixture
def ns(raw: Raw) -> str:
    return new_namespace(raw)


def pod(name: str, node: str | None = "local-node", grace: int | None = None, **meta: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx"}]}
    if node:
        spec["nodeName"] = node
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, **meta}, "spec": spec}


def gone(raw: Raw, path: str, timeout: float = 15.0) -> bool:
    """Whether ``path`` answers 404 within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while raw.call("GET", path)[0] != 404:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_bound_pod_terminates_for_its_grace_period(raw: Raw, ns: str) -> None:
    path = f"/api/v1/namespaces/{ns}/pods"
    assert raw.call("POST", path, pod("p"))[0] == 201
    before = time.time()
    code, _, deleted = raw.call("DELETE", f"{path}/p")
    assert code == 200 and deleted["kind"] == "Pod"
    meta = deleted["metadata"]
    assert meta["deletionGracePeriodSeconds"] == 30
    assert before + 29 <= parse_rfc3339(meta["deletionTimestamp"]) <= time.time() + 31
    code, _, still = raw.call("GET", f"{path}/p")
    assert code == 200 and still["metadata"]["deletionTimestamp"] == meta["deletionTimestamp"]
    # a longer period changes nothing, a shorter one moves the deadline
    code, _, again = raw.call("DELETE", f"{path}/p?gracePeriodSeconds=60")
    assert code == 200 and again["metadata"]["deletionGracePeriodSeconds"] == 30
    code, _, shorter = raw.call("DELETE", f"{path}/p?gracePeriodSeconds=1")
    assert code == 200 and shorter["metadata"]["deletionGracePeriodSeconds"] == 1
    assert parse_rfc3339(shorter["metadata"]["deletionTimestamp"]) <= time.time() + 2
    assert gone(raw, f"{path}/p"), "the node simulator did not remove the pod after its grace period"


def test_pods_deleted_at_once(raw: Raw, ns: str) -> None:
    path = f"/api/v1/namespaces/{ns}/pods"
    assert raw.call("POST", path, pod("unbound", node=None))[0] == 201
    assert raw.call("DELETE", f"{path}/unbound")[0] == 200
    assert raw.call("GET", f"{path}/unbound")[0] == 404
    assert raw.call("POST", path, pod("zero", grace=0))[0] == 201
    assert raw.call("DELETE", f"{path}/zero")[0] == 200
    assert raw.call("GET", f"{path}/zero")[0] == 404
    assert raw.call("POST", path, pod("forced"))[0] == 201
    assert raw.call("DELETE", f"{path}/forced")[0] == 200
    assert raw.call("DELETE", f"{path}/forced?gracePeriodSeconds=0")[0] == 200
    assert raw.call("GET", f"{path}/forced")[0] == 404
    code, _, done = raw.call("POST", path, pod("done"))
    assert code == 201
    done["status"]["phase"] = "Succeeded"
    assert raw.call("PUT", f"{path}/done/status", done)[0] == 200
    assert raw.call("DELETE", f"{path}/done")[0] == 200
    assert raw.call("GET", f"{path}/done")[0] == 404


def test_finalizers_hold_a_pod_after_its_grace_period(raw: Raw, ns: str) -> None:
    path = f"/api/v1/namespaces/{ns}/pods"
    assert raw.call("POST", path, pod("held", grace=1, finalizers=["example.com/hold"]))[0] == 201
    assert raw.call("DELETE", f"{path}/held")[0] == 200
    deadline = time.monotonic() + 15
    while raw.call("GET", f"{path}/held")[2]["metadata"].get("deletionGracePeriodSeconds") != 0:
        assert time.monotonic() < deadline, "the node simulator never finished the graceful deletion"
        time.sleep(0.05)
    assert raw.call("PATCH", f"{path}/held", {"metadata": {"finalizers": None}},
                    ctype="application/merge-patch+json")[0] == 200
    assert gone(raw, f"{path}/held")


def test_terminating_pods_resume_after_restart(tmp_path: Any) -> None:
    with LocalAPIServer(data_dir=tmp_path / "d", kubeconfig_path=tmp_path / "kc") as server:
        raw = Raw(server)
        assert raw.call("POST", "/api/v1/namespaces/default/pods", pod("r", grace=2))[0] == 201
        assert raw.call("DELETE", "/api/v1/namespaces/default/pods/r")[0] == 200
        code, _, terminating = raw.call("GET", "/api/v1/namespaces/default/pods/r")
        assert code == 200 and terminating["metadata"]["deletionTimestamp"]  # stopped while it terminates
    with LocalAPIServer(data_dir=tmp_path / "d", kubeconfig_path=tmp_path / "kc") as server:
        assert gone(Raw(server), "/api/v1/namespaces/default/pods/r")


@pytest.mark.kubectl
def test_kubectl_delete_pod_shows_terminating(kubectl: Run, ns: str) -> None:
    assert kubectl("run", "web", "--image=nginx", "--overrides", '{"spec":{"nodeName":"local-node"}}',
                   "-n", ns).returncode == 0
    deleted = kubectl("delete", "pod", "web", "--wait=false", "-n", ns)
    assert deleted.returncode == 0 and deleted.stdout.strip() == 'pod "web" deleted'
    table = kubectl("get", "pod", "web", "-n", ns)
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[1].split()[:3] == ["web", "0/1", "Terminating"]
    forced = kubectl("delete", "pod", "web", "--grace-period=0", "--force", "-n", ns)
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.strip() == 'pod "web" force deleted'
    assert "Immediate deletion does not wait for confirmation that the running resource has been terminated" \
        in forced.stderr
    missing = kubectl("get", "pod", "web", "-n", ns)
    assert missing.returncode == 1 and 'pods "web" not found' in missing.stderr
    assert kubectl("run", "quick", "--image=nginx", "-n", ns).returncode == 0
    quick = kubectl("delete", "pod", "quick", "-n", ns, "--timeout=20s")
    assert quick.returncode == 0 and quick.stdout.strip() == 'pod "quick" deleted'


def test_updating_a_terminating_pod_keeps_it_until_its_grace_period_ends(raw: Raw, ns: str) -> None:
    path = f"/api/v1/namespaces/{ns}/pods"
    assert raw.call("POST", path, pod("kept"))[0] == 201
    assert raw.call("DELETE", f"{path}/kept")[0] == 200
    code, _, patched = raw.call("PATCH", f"{path}/kept", {"metadata": {"labels": {"a": "b"}}},
                                ctype="application/merge-patch+json")
    assert code == 200 and patched["metadata"]["labels"] == {"a": "b"}
    assert raw.call("GET", f"{path}/kept")[0] == 200
    assert raw.call("DELETE", f"{path}/kept?gracePeriodSeconds=0")[0] == 200
    assert raw.call("GET", f"{path}/kept")[0] == 404
