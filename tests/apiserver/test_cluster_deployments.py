"""The deployment simulator keeps ReplicaSets per pod template with revisions, as the deployment
controller does (issue 19 item 4), so ``kubectl rollout history`` and ``kubectl rollout undo``
work as on a real cluster."""

from __future__ import annotations

import functools
import json
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.controllers.deployments import pod_template_hash
from samplecontroller.apiserver.testing import make_kubectl
from tests.apiserver.conftest import Raw

Run = Callable[..., subprocess.CompletedProcess[str]]
NS = "default"
DEPLOYMENTS = f"/apis/apps/v1/namespaces/{NS}/deployments"
REPLICASETS = f"/apis/apps/v1/namespaces/{NS}/replicasets"
REVISION = "deployment.kubernetes.io/revision"


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalAPIServer]:
    with LocalAPIServer(simulate_deployments=True, simulate_delay=0.02,
                        kubeconfig_path=tmp_path_factory.mktemp("sim") / "kubeconfig") as server:
        yield server


@pytest.fixture(scope="module")
def kc(sim: LocalAPIServer, tmp_path_factory: pytest.TempPathFactory) -> Run:
    return make_kubectl(tmp_path_factory.mktemp("home"), sim)


def eventually(check: Callable[[], Any], what: str, timeout: float = 15.0) -> Any:
    """Poll ``check`` until it returns something truthy (the simulator acts after a delay)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def replica_sets(raw: Raw, app: str) -> dict[int, dict[str, Any]]:
    """The ReplicaSets of Deployment ``app`` by revision."""
    code, _, listed = raw.call("GET", f"{REPLICASETS}?labelSelector=app%3D{app}")
    assert code == 200
    return {int(rs["metadata"]["annotations"][REVISION]): rs for rs in listed["items"]}


def settled(raw: Raw, app: str, revision: int) -> dict[int, dict[str, Any]] | None:
    """The ReplicaSets once ``revision`` is the Deployment's and its status is rolled out."""
    code, _, dep = raw.call("GET", f"{DEPLOYMENTS}/{app}")
    sets = replica_sets(raw, app)
    done = (code == 200 and (dep["metadata"].get("annotations") or {}).get(REVISION) == str(revision)
            and dep.get("status", {}).get("observedGeneration") == dep["metadata"]["generation"]
            and revision in sets and sets[revision]["status"].get("readyReplicas") == dep["spec"]["replicas"])
    return sets if done else None


def deployment(name: str, image: str, replicas: int = 2) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "revisionHistoryLimit": 2, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "c", "image": image}]}}}}


def test_replica_sets_per_template_with_revisions(sim: LocalAPIServer) -> None:
    raw = Raw(sim)
    assert raw.call("POST", DEPLOYMENTS, deployment("d1", "img:1"))[0] == 201
    sets = eventually(lambda: settled(raw, "d1", 1), "revision 1")
    first = sets[1]
    hashed = first["metadata"]["labels"]["pod-template-hash"]
    assert first["metadata"]["name"] == f"d1-{hashed}"
    assert first["spec"]["selector"]["matchLabels"] == {"app": "d1", "pod-template-hash": hashed}
    assert first["spec"]["template"]["metadata"]["labels"] == {"app": "d1", "pod-template-hash": hashed}
    assert first["spec"]["replicas"] == 2 and first["status"]["availableReplicas"] == 2
    owner = first["metadata"]["ownerReferences"][0]
    assert owner["kind"] == "Deployment" and owner["name"] == "d1" and owner["controller"] is True
    code, _, dep = raw.call("GET", f"{DEPLOYMENTS}/d1")
    progressing = next(c for c in dep["status"]["conditions"] if c["type"] == "Progressing")
    assert progressing["message"] == f'ReplicaSet "{first["metadata"]["name"]}" has successfully progressed.'
    # scaling keeps the ReplicaSet; a new template makes a new one and scales the old one to 0
    assert raw.call("PATCH", f"{DEPLOYMENTS}/d1", {"spec": {"replicas": 3}},
                    ctype="application/merge-patch+json")[0] == 200
    eventually(lambda: (s := settled(raw, "d1", 1)) and s[1]["spec"]["replicas"] == 3, "scaled to 3")
    for i in (2, 3, 4):
        code, _, _ = raw.call("PATCH", f"{DEPLOYMENTS}/d1", {"spec": {"template": {"spec": {"containers": [
            {"name": "c", "image": f"img:{i}"}]}}}}, ctype="application/strategic-merge-patch+json")
        assert code == 200
        sets = eventually(functools.partial(settled, raw, "d1", i), f"revision {i}")
        assert sets[i]["spec"]["replicas"] == 3
        assert all(rs["spec"]["replicas"] == 0 for rev, rs in sets.items() if rev != i)
    # revisionHistoryLimit 2: the current ReplicaSet and two old ones are kept
    assert sorted(sets) == [2, 3, 4]
    # deleting the Deployment deletes its ReplicaSets (garbage collector)
    assert raw.call("DELETE", f"{DEPLOYMENTS}/d1")[0] == 200
    eventually(lambda: not replica_sets(raw, "d1"), "ReplicaSets collected")


def test_pod_template_hash_shape() -> None:
    hashed = pod_template_hash({"spec": {"containers": [{"name": "c", "image": "x"}]}})
    assert hashed and set(hashed) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert hashed != pod_template_hash({"spec": {"containers": [{"name": "c", "image": "x"}]}}, 1)


@pytest.mark.kubectl
def test_kubectl_rollout_history_and_undo(sim: LocalAPIServer, kc: Run) -> None:
    raw = Raw(sim)
    assert kc("create", "deployment", "web", "--image=nginx:1.25", "--replicas=2").returncode == 0
    eventually(lambda: settled(raw, "web", 1), "revision 1")
    assert kc("annotate", "deployment/web", "kubernetes.io/change-cause=first").returncode == 0
    eventually(lambda: replica_sets(raw, "web")[1]["metadata"]["annotations"].get("kubernetes.io/change-cause")
               == "first", "change-cause copied")
    assert kc("set", "image", "deployment/web", "nginx=nginx:1.26").returncode == 0
    assert kc("annotate", "deployment/web", "--overwrite", "kubernetes.io/change-cause=second").returncode == 0
    eventually(lambda: (s := settled(raw, "web", 2)) and
               s[2]["metadata"]["annotations"].get("kubernetes.io/change-cause") == "second", "revision 2")
    history = kc("rollout", "history", "deployment/web")
    assert history.returncode == 0, history.stderr
    assert history.stdout.splitlines()[:4] == ["deployment.apps/web ", "REVISION  CHANGE-CAUSE",
                                               "1         first", "2         second"]
    detail = kc("rollout", "history", "deployment/web", "--revision=1")
    assert detail.returncode == 0, detail.stderr
    assert detail.stdout.startswith("deployment.apps/web with revision #1\nPod Template:\n")
    assert "    Image:\tnginx:1.25\n" in detail.stdout and "\tpod-template-hash=" in detail.stdout
    undo = kc("rollout", "undo", "deployment/web")
    assert undo.returncode == 0, undo.stderr
    assert undo.stdout.strip() == "deployment.apps/web rolled back"
    sets = eventually(lambda: settled(raw, "web", 3), "revision 3 (the rollback)")
    assert sorted(sets) == [2, 3]
    assert sets[3]["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.25"
    assert sets[3]["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1"
    _code, _, dep = raw.call("GET", f"{DEPLOYMENTS}/web")
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.25"
    after = kc("rollout", "history", "deployment/web").stdout.splitlines()
    assert [line.split()[0] for line in after[2:4]] == ["2", "3"]
    missing = kc("rollout", "undo", "deployment/web", "--to-revision=9")
    assert missing.returncode == 1 and missing.stderr.strip() == "error: unable to find specified revision 9 in history"
    same = kc("rollout", "undo", "deployment/web", "--to-revision=3")
    assert same.returncode == 0 and "skipped rollback (current template already matches revision 3)" in same.stdout
    status = kc("rollout", "status", "deployment/web", "--timeout=20s")
    assert status.returncode == 0 and 'deployment "web" successfully rolled out' in status.stdout
    listed = json.loads(kc("get", "rs", "-l", "app=web", "-o", "json").stdout)
    assert len(listed["items"]) == 2


def test_replica_sets_resume_after_restart(tmp_path: Path) -> None:
    with LocalAPIServer(data_dir=tmp_path / "d", simulate_deployments=True, simulate_delay=30,
                        kubeconfig_path=tmp_path / "kc") as server:
        assert Raw(server).call("POST", DEPLOYMENTS, deployment("late", "img:1"))[0] == 201
    with LocalAPIServer(data_dir=tmp_path / "d", simulate_deployments=True, simulate_delay=0.02,
                        kubeconfig_path=tmp_path / "kc") as server:
        raw = Raw(server)
        eventually(lambda: settled(raw, "late", 1), "revision 1 after the restart")


def test_a_change_is_synced_once_not_once_per_event_of_the_simulators_own_writes(tmp_path: Path) -> None:
    # a new Deployment: the simulator writes its ReplicaSet, the revision annotation and the status;
    # the events of its own Deployment writes are not synced again (a work queue keeps one key once)
    with LocalAPIServer(simulate_deployments=True, simulate_delay=0.05, kubeconfig_path=tmp_path / "kc") as server:
        assert server.controllers is not None and server.controllers.deployments is not None
        simulator = server.controllers.deployments
        syncs: list[str] = []
        real_sync = simulator._sync

        def counted(obj: dict[str, Any]) -> None:
            syncs.append(obj["metadata"]["name"])
            real_sync(obj)

        simulator._sync = counted  # type: ignore[method-assign,assignment]
        raw = Raw(server)
        marks = iter(range(100))

        def committed() -> None:  # a write is answered once every write before it is committed
            assert raw.call("POST", f"/api/v1/namespaces/{NS}/configmaps", {"metadata": {"name": f"mark-{next(marks)}"}})[0] == 201

        assert raw.call("POST", DEPLOYMENTS, deployment("once", "img:1"))[0] == 201
        eventually(lambda: settled(raw, "once", 1), "revision 1")
        committed()  # the events of the simulator's writes are out: any sync they ask for is queued
        eventually(lambda: server.call(lambda _core: not simulator._queued), "no sync queued")
        assert syncs == ["once"]
        assert raw.call("PATCH", f"{DEPLOYMENTS}/once", {"spec": {"replicas": 3}},
                        ctype="application/merge-patch+json")[0] == 200
        eventually(lambda: (s := settled(raw, "once", 1)) and s[1]["spec"]["replicas"] == 3, "scaled to 3")
        committed()
        eventually(lambda: server.call(lambda _core: not simulator._queued), "no sync queued")
        assert syncs == ["once", "once"]
