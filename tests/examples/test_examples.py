"""The three example controllers, each against the embedded API server."""

from __future__ import annotations

import importlib.util
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest

from generated.clientset import Clientset
from samplecontroller.apimachinery import objects
from samplecontroller.kubernetes.apis.apps.v1 import ReplicaSet
from samplecontroller.kubernetes.apis.core.v1 import Pod
from samplecontroller.kubernetes.clientset import Clientset as KubeClientset
from tests.live import wait_for

ROOT = Path(__file__).resolve().parents[2]


def load(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def background() -> Iterator[Callable[..., threading.Event]]:
    runs: list[tuple[threading.Event, threading.Thread]] = []

    def start(fn: Callable[..., None], *args: Any, **kw: Any) -> threading.Event:
        stop = threading.Event()
        t = threading.Thread(target=fn, args=args, kwargs={**kw, "stop": stop}, daemon=True)
        t.start()
        runs.append((stop, t))
        return stop

    yield start
    for stop, t in runs:
        stop.set()
        t.join(10)
        assert not t.is_alive()


def pod(ns: str, name: str, labels: dict[str, str] | None = None, owner: Any = None) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "namespace": ns, "labels": labels or {}}
    if owner is not None:
        md["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner.metadata.name,
                                  "uid": owner.metadata.uid, "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md,
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def test_source_kind_pods_prints_events(rest: Any, ns: str, background: Any) -> None:
    mod = load("source_kind_pods")
    items: list[Any] = []
    synced = threading.Event()
    background(mod.run, rest, out=items.append, namespace=ns, synced=synced)
    assert synced.wait(10)
    pods = KubeClientset(rest).core_v1().pods(ns)
    created = pods.create(pod(ns, "demo"))
    pods.patch("demo", {"metadata": {"labels": {"touched": "yes"}}})
    pods.delete("demo")
    key = f"{ns}/demo"
    wait_for(lambda: [i.event for i in items if i.name == key][-1:] == ["Delete"], what="the Delete item")
    events = [i.event for i in items if i.name == key]
    assert events[0] == "Create" and "Update" in events
    assert created.metadata.name == "demo"


def test_replicaset_labeler_labels_and_reacts_to_owned_pods(rest: Any, ns: str, background: Any) -> None:
    mod = load("replicaset_labeler")
    background(mod.run, rest, namespace=ns)
    cs = KubeClientset(rest)
    rs = cs.apps_v1().replicasets(ns).create(objects.from_dict(ReplicaSet, {
        "metadata": {"name": "rs1", "namespace": ns},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "x"}},
                 "template": {"metadata": {"labels": {"app": "x"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}))
    wait_for(lambda: (cs.apps_v1().replicasets(ns).get("rs1").metadata.labels or {}).get("hello") == "world",
             what="the label")
    # someone removes the label; an owned Pod's event brings the ReplicaSet back to the reconciler
    cs.apps_v1().replicasets(ns).patch("rs1", {"metadata": {"labels": {"hello": None}}})
    cs.core_v1().pods(ns).create(pod(ns, "p1", {"app": "x"}, owner=rs))
    wait_for(lambda: (cs.apps_v1().replicasets(ns).get("rs1").metadata.labels or {}).get("hello") == "world",
             what="the label again")


def test_podset_operator_scales_without_overshoot(rest: Any, ns: str, background: Any) -> None:
    mod = load("podset_operator")
    background(mod.run, rest, namespace=ns, workers=4)
    podsets = Clientset(rest).workloads_v1alpha1().podsets(ns)
    pods = KubeClientset(rest).core_v1().pods(ns)
    seen_max = [0]
    watching = threading.Event()

    def count() -> int:
        n = len([p for p in pods.list(label_selector="podset=ps").items])
        seen_max[0] = max(seen_max[0], n)
        return n

    def poll() -> None:
        while not watching.is_set():
            count()
            time.sleep(0.005)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    ps = podsets.create({"apiVersion": "workloads.example.com/v1alpha1", "kind": "PodSet",
                         "metadata": {"name": "ps", "namespace": ns}, "spec": {"replicas": 5}})
    # a burst of events: touch the PodSet repeatedly while pods are being created
    for i in range(5):
        podsets.patch("ps", {"metadata": {"annotations": {"burst": str(i)}}})
    wait_for(lambda: count() == 5, what="5 pods")
    status = wait_for(lambda: (s := podsets.get("ps").status) is not msgspec.UNSET and s.current == 5 and s, what="status")
    assert status.desired == 5 and len(status.pod_list) == 5 and status.state == "Pending"
    assert "0/5" in status.message
    time.sleep(0.3)
    assert seen_max[0] == 5, f"overshot: saw {seen_max[0]} pods"
    # scale down
    podsets.patch("ps", {"spec": {"replicas": 2}})
    wait_for(lambda: count() == 2, what="2 pods")
    wait_for(lambda: getattr(podsets.get("ps").status, "current", None) == 2, what="status 2")
    # an owned pod deleted by someone else is replaced
    victim: Any = pods.list(label_selector="podset=ps").items[0].metadata.name
    pods.delete(victim)
    wait_for(lambda: count() == 2 and victim not in
             [p.metadata.name for p in pods.list(label_selector="podset=ps").items], what="replacement")
    # every pod is controlled by the PodSet
    for p in pods.list(label_selector="podset=ps").items:
        assert p.metadata.owner_references
        assert p.metadata.owner_references[0].uid == ps.metadata.uid
    watching.set()
    poller.join(5)
    assert isinstance(pods.list(label_selector="podset=ps").items[0], Pod)


@pytest.mark.kubectl
def test_source_kind_pods_as_a_program_with_kubectl(apiserver: Any, ns: str, tmp_path: Path) -> None:
    """The walkthrough as the docstring tells it: run the program, `kubectl run` a Pod, see its items."""
    import subprocess

    from samplecontroller.apiserver.testing import make_kubectl

    kubectl = make_kubectl(tmp_path, apiserver)
    proc = subprocess.Popen([sys.executable, "-u", str(ROOT / "examples" / "source_kind_pods.py"),
                             "--kubeconfig", str(apiserver.kubeconfig_path), "--namespace", ns],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None and proc.stdout is not None
        for line in proc.stderr:
            if "Pod source synced" in line:
                break
        else:
            pytest.fail("the example exited before its source synced")
        run = kubectl("-n", ns, "run", "demo", "--image=nginx")
        assert run.returncode == 0, run.stderr
        first = proc.stdout.readline().strip()
        assert first == f"Item(event='Create', name='{ns}/demo')"
    finally:
        proc.terminate()
        assert proc.wait(10) == 0
