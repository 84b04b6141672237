"""The real kubectl against the embedded server: the dispatcher, kubectl 1.29 and 1.33 directly."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.testing import make_kubectl, require_kubectl
from tests.apiserver.conftest import checked_kubectl, open_watches
from tests.live import wait_for

pytestmark = pytest.mark.kubectl

ROOT = Path(__file__).resolve().parents[2]
SDK = "/usr/lib/google-cloud-sdk/bin"
FOO = (ROOT / "examples" / "example-foo.yaml").read_text()
Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def kserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalAPIServer]:
    with LocalAPIServer(kubeconfig_path=tmp_path_factory.mktemp("k") / "kubeconfig") as s:
        yield s


@pytest.fixture(scope="module")
def k(kserver: LocalAPIServer, tmp_path_factory: pytest.TempPathFactory) -> Run:
    ok = checked_kubectl(tmp_path_factory.mktemp("home"), kserver)
    ok("apply", "-f", str(ROOT / "crds"))
    ok("wait", "--for=condition=established", "crd/foos.samplecontroller.k8s.io", "--timeout=20s")
    return ok


def test_apply_get_and_reapply(k: Run) -> None:
    assert "created" in k("apply", "-f", str(ROOT / "examples" / "example-foo.yaml")).stdout
    assert "unchanged" in k("apply", "-f", str(ROOT / "examples" / "example-foo.yaml")).stdout
    assert "configured" in k("apply", "-f", "-", stdin=FOO.replace("replicas: 1", "replicas: 2")).stdout
    out = k("get", "foos").stdout
    assert out.split()[:2] == ["NAME", "AGE"] and "example-foo" in out
    obj = json.loads(k("get", "foo", "example-foo", "-o", "json").stdout)
    assert obj["spec"]["replicas"] == 2 and obj["metadata"]["generation"] == 2
    assert "replicas: 2" in k("get", "foos", "-o", "yaml").stdout
    assert "serverside-applied" in k("apply", "--server-side", "--force-conflicts", "-f", "-",
                                     stdin=FOO.replace("replicas: 1", "replicas: 3")).stdout


def test_printer_columns(k: Run) -> None:
    k("apply", "-f", "-", stdin="apiVersion: workloads.example.com/v1alpha1\nkind: PodSet\nmetadata:\n  name: ps1\n"
      "spec:\n  replicas: 2\n")
    header = k("get", "podsets").stdout.splitlines()[0].split()
    assert header == ["NAME", "DESIRED", "CURRENT", "STATE", "AGE"]
    assert k("get", "podset", "ps1", "-o", "jsonpath={.spec.replicas}").stdout == "2"


def test_label_patch_status_describe(k: Run) -> None:
    k("apply", "-f", "-", stdin=FOO.replace("example-foo", "pfoo"))
    k("label", "foo", "pfoo", "team=a")
    k("patch", "foo", "pfoo", "--type=merge", "-p", '{"spec":{"replicas":4}}')
    k("patch", "foo", "pfoo", "--subresource=status", "--type=merge", "-p", '{"status":{"availableReplicas":4}}')
    out = k("get", "foo", "pfoo", "-o", "jsonpath={.metadata.labels.team} {.spec.replicas} {.status.availableReplicas}")
    assert out.stdout == "a 4 4"
    assert "pfoo" in k("get", "foos", "-l", "team=a").stdout
    uid = k("get", "foo", "pfoo", "-o", "jsonpath={.metadata.uid}").stdout
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "pfoo.1", "namespace": "default"},
             "involvedObject": {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "name": "pfoo",
                                "namespace": "default", "uid": uid},
             "reason": "Synced", "message": "Foo synced successfully", "type": "Normal", "count": 1,
             "source": {"component": "sample-controller"},
             "firstTimestamp": "2024-01-01T00:00:00Z", "lastTimestamp": "2024-01-01T00:00:00Z"}
    k("create", "-f", "-", stdin=json.dumps(event))
    desc = k("describe", "foo", "pfoo").stdout
    assert "Name:" in desc and "pfoo" in desc and "Events:" in desc
    assert "Foo synced successfully" in desc and "Synced" in desc


def test_create_twice_and_invalid(k: Run) -> None:
    manifest = FOO.replace("example-foo", "cfoo")
    k("create", "-f", "-", stdin=manifest)
    again = k.raw("create", "-f", "-", stdin=manifest)  # type: ignore[attr-defined]
    assert again.returncode != 0 and "AlreadyExists" in again.stderr
    bad = k.raw("apply", "-f", "-", stdin=FOO.replace("example-foo", "bad").replace("replicas: 1", "replicas: 11"))  # type: ignore[attr-defined]
    assert bad.returncode != 0
    assert "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10" in bad.stderr


def test_watch_sees_update(k: Run, kserver: LocalAPIServer, tmp_path: Path) -> None:
    k("apply", "-f", "-", stdin=FOO.replace("example-foo", "wfoo"))
    exe = require_kubectl()
    env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(kserver.kubeconfig_path)}
    before = open_watches(kserver, "samplecontroller.k8s.io/foos")
    proc = subprocess.Popen([exe, "--cache-dir", str(tmp_path / "c"), "get", "foo", "wfoo", "-w",
                             "--request-timeout=10s", "-o", "jsonpath={.spec.replicas}{\"\\n\"}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "1"
        # kubectl drops the first event of its watch (from rv 0): patch once the watch is open
        wait_for(lambda: open_watches(kserver, "samplecontroller.k8s.io/foos") > before, timeout=60,
                 what="kubectl's watch to open")
        k("patch", "foo", "wfoo", "--type=merge", "-p", '{"spec":{"replicas":5}}')
        assert proc.stdout.readline().strip() == "5"
    finally:
        proc.kill()
        proc.wait()


def test_get_watch_table(k: Run, kserver: LocalAPIServer, tmp_path: Path) -> None:
    # kubectl prints the header with the first row: make sure one exists (the test must not
    # depend on the Foos other tests left behind)
    k("apply", "-f", "-", stdin=FOO.replace("example-foo", "tfoo-first"))
    exe = require_kubectl()
    env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(kserver.kubeconfig_path)}
    proc = subprocess.Popen([exe, "--cache-dir", str(tmp_path / "c"), "get", "foos", "-w"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().split()[:2] == ["NAME", "AGE"]
        # a list's watch starts from the list's resourceVersion: nothing written now is missed
        k("apply", "-f", "-", stdin=FOO.replace("example-foo", "tfoo"))
        for _ in range(20):
            line = proc.stdout.readline()
            if line.startswith("tfoo"):
                break
        else:
            pytest.fail("kubectl get -w did not print the new Foo")
    finally:
        proc.kill()
        proc.wait()


def test_delete_and_foreground(k: Run) -> None:
    k("apply", "-f", "-", stdin=FOO.replace("example-foo", "dfoo"))
    k("create", "configmap", "owned")
    uid = k("get", "foo", "dfoo", "-o", "jsonpath={.metadata.uid}").stdout
    patch = {"metadata": {"ownerReferences": [{"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                                               "name": "dfoo", "uid": uid, "blockOwnerDeletion": True}]}}
    k("patch", "configmap", "owned", "--type=merge", "-p", json.dumps(patch))
    assert "deleted" in k("delete", "foo", "dfoo", "--cascade=foreground", "--timeout=20s").stdout
    missing = k.raw("get", "configmap", "owned")  # type: ignore[attr-defined]
    assert missing.returncode != 0 and "NotFound" in missing.stderr
    gone = k.raw("delete", "foo", "dfoo")  # type: ignore[attr-defined]
    assert gone.returncode != 0 and "NotFound" in gone.stderr


def test_builtins_with_protobuf_creates(k: Run) -> None:
    k("create", "namespace", "kns")
    k("-n", "kns", "create", "configmap", "c", "--from-literal=a=b")
    k("-n", "kns", "create", "secret", "generic", "s", "--from-literal=a=b")
    k("-n", "kns", "create", "deployment", "web", "--image=nginx:1.27", "--replicas=2")
    dep = json.loads(k("-n", "kns", "get", "deployment", "web", "-o", "json").stdout)
    assert dep["spec"]["replicas"] == 2
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert k("-n", "kns", "get", "secret", "s", "-o", "jsonpath={.data.a}").stdout == "Yg=="
    k("apply", "-f", "-", stdin=json.dumps({**dep, "metadata": {"name": "web", "namespace": "kns"},
                                            "spec": {**dep["spec"], "replicas": 3}, "status": None}))
    k("-n", "kns", "scale", "deployment", "web", "--replicas=1")
    assert k("-n", "kns", "get", "deploy", "web", "-o", "jsonpath={.spec.replicas}").stdout == "1"
    assert "web" in k("-n", "kns", "get", "deploy").stdout
    k("delete", "namespace", "kns", "--timeout=20s")


def test_api_resources_and_explain(k: Run) -> None:
    out = k("api-resources").stdout
    assert "foos" in out and "deployments" in out and "customresourcedefinitions" in out
    assert "replicas" in k("explain", "foo.spec").stdout


@pytest.mark.parametrize("minor", ["29", "33"])
def test_versioned_kubectl(minor: str, kserver: LocalAPIServer, tmp_path: Path) -> None:
    binary = f"{SDK}/kubectl.1.{minor}"
    require_kubectl(binary)
    run = make_kubectl(tmp_path, kserver)
    name = f"v{minor}-foo"
    manifest = FOO.replace("example-foo", name)
    steps = [
        (("apply", "-f", str(ROOT / "crds")), None),
        (("apply", "-f", "-"), manifest),
        (("apply", "-f", "-"), manifest.replace("replicas: 1", "replicas: 2")),
        (("apply", "--server-side", "--force-conflicts", "-f", "-"), manifest),
        (("get", "foos"), None),
        (("auth", "can-i", "update", "foos"), None),
        (("delete", "foo", name), None),
    ]
    for args, stdin in steps:
        proc = run(*args, binary=binary, stdin=stdin)
        assert proc.returncode == 0, f"kubectl.1.{minor} {' '.join(args)}: {proc.stderr}"


def test_auth_can_i_and_whoami(k: Run) -> None:
    """The server's token is system:masters (bound to cluster-admin), and kubectl's self-reviews say so
    (also when sent as protobuf); see test_rbac.py for everyone else."""
    assert k("auth", "can-i", "create", "deployments").stdout.strip() == "yes"
    assert k("auth", "can-i", "delete", "foos", "-n", "other").stdout.strip() == "yes"
    assert "*.*" in k("auth", "can-i", "--list").stdout
    assert "admin" in k("auth", "whoami").stdout
    listed = k.raw("get", "selfsubjectaccessreviews")  # type: ignore[attr-defined]
    assert listed.returncode != 0 and "MethodNotAllowed" in listed.stderr
