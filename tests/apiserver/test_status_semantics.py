"""Status subresource semantics (issue 19 item 2), after kube-apiserver's customresource
strategy (PrepareForUpdate: the stored status is kept, generation follows everything but
metadata) and status strategy (only .status changes), and the built-in kinds' strategies.

Writes go through every version a CRD serves: kube-apiserver compares old and new objects in
the request's version, so the version an object is written in is not a change."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from samplecontroller.apiserver import LocalAPIServer
from tests.apiserver.conftest import Raw, checked_kubectl

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

_names = itertools.count()


def _version(name: str, storage: bool, status: bool) -> dict[str, Any]:
    props = {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
             "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}
    version: dict[str, Any] = {"name": name, "served": True, "storage": storage,
                               "schema": {"openAPIV3Schema": {"type": "object", "properties": props}}}
    if status:
        version["subresources"] = {"status": {}}
    return version


def _crd(plural: str, kind: str, status: bool) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.status.example.com"},
            "spec": {"group": "status.example.com", "scope": "Namespaced",
                     "names": {"plural": plural, "kind": kind},
                     "versions": [_version("v1", True, status), _version("v2", False, status)]}}


@pytest.fixture(scope="module")
def crds(raw: Raw) -> None:
    for plural, kind, status in (("gizmos", "Gizmo", True), ("plainos", "Plaino", False)):
        code, _, body = raw.call("POST", CRDS, _crd(plural, kind, status))
        assert code == 201, body


@pytest.fixture
def ns(raw: Raw) -> str:
    name = f"status-{next(_names)}"
    code, _, body = raw.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                            "metadata": {"name": name}})
    assert code == 201, body
    return name


def _path(plural: str, version: str, ns: str, name: str = "") -> str:
    base = f"/apis/status.example.com/{version}/namespaces/{ns}/{plural}"
    return f"{base}/{name}" if name else base


def _create(raw: Raw, plural: str, kind: str, ns: str, name: str, version: str = "v1") -> dict[str, Any]:
    body = {"apiVersion": f"status.example.com/{version}", "kind": kind, "metadata": {"name": name},
            "spec": {"size": 1}, "status": {"ready": False}}
    code, _, obj = raw.call("POST", _path(plural, version, ns), body)
    assert code == 201, obj
    assert "status" not in obj or plural == "plainos"
    return dict(obj)


def _write(raw: Raw, how: str, path: str, body: dict[str, Any], current: dict[str, Any]) -> tuple[int, Any]:
    """One main-resource (or /status) write of ``body``'s fields by ``how``."""
    if how == "merge":
        code, _, out = raw.call("PATCH", path, body, ctype=MERGE)
    elif how == "json":
        ops = [{"op": "add", "path": f"/{key}", "value": value} for key, value in body.items()]
        code, _, out = raw.call("PATCH", path, ops, ctype=JSON_PATCH)
    elif how == "apply":
        doc = {"apiVersion": current["apiVersion"], "kind": current["kind"],
               "metadata": {"name": current["metadata"]["name"]}, **body}
        code, _, out = raw.call("PATCH", path + "?fieldManager=test&force=true", raw=json.dumps(doc).encode(),
                                ctype=APPLY)
    else:  # update
        whole = {**current, **body}
        code, _, out = raw.call("PUT", path, whole)
    return code, out


WRITES = ("merge", "json", "apply", "update")


@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize("how", WRITES)
def test_main_resource_write_ignores_status(raw: Raw, crds: None, ns: str, how: str, version: str) -> None:
    created = _create(raw, "gizmos", "Gizmo", ns, "g")
    path = _path("gizmos", version, ns, "g")
    code, _, current = raw.call("GET", path)
    code, out = _write(raw, how, path, {"status": {"ready": True}}, current)
    assert code == 200, out
    assert "status" not in out
    assert out["metadata"]["generation"] == 1
    if how != "apply":  # apply records its manager in managedFields: a change of metadata only
        assert out["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"], "a no-op write was stored"
    code, _, stored = raw.call("GET", _path("gizmos", "v1", ns, "g"))
    assert "status" not in stored and stored["metadata"]["generation"] == 1


@pytest.mark.parametrize("how", WRITES)
def test_generation_follows_the_spec_only(raw: Raw, crds: None, ns: str, how: str) -> None:
    _create(raw, "gizmos", "Gizmo", ns, "g")
    path = _path("gizmos", "v2", ns, "g")
    code, _, current = raw.call("GET", path)
    code, out = _write(raw, how, path, {"metadata": {**current["metadata"], "labels": {"a": "b"}}}
                       if how == "update" else {"metadata": {"labels": {"a": "b"}}}, current)
    assert code == 200, out
    assert out["metadata"]["labels"] == {"a": "b"} and out["metadata"]["generation"] == 1
    code, _, current = raw.call("GET", path)
    code, out = _write(raw, how, path, {"spec": {"size": 2}, "status": {"ready": True}}, current)
    assert code == 200, out
    assert out["spec"] == {"size": 2} and out["metadata"]["generation"] == 2 and "status" not in out


@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize("how", WRITES)
def test_status_write_changes_only_status(raw: Raw, crds: None, ns: str, how: str, version: str) -> None:
    _create(raw, "gizmos", "Gizmo", ns, "g")
    path = _path("gizmos", version, ns, "g")
    code, _, current = raw.call("GET", path)
    body: dict[str, Any] = {"status": {"ready": True}, "spec": {"size": 7}}
    if how != "apply":  # (an applied document's metadata must keep its name)
        body["metadata"] = {**current["metadata"], "labels": {"x": "y"}} if how == "update" else {"labels": {"x": "y"}}
    code, out = _write(raw, how, path + "/status", body, current)
    assert code == 200, out
    assert out["status"] == {"ready": True}
    assert out["spec"] == {"size": 1} and out["metadata"]["generation"] == 1
    assert "labels" not in out["metadata"]  # the custom resource status strategy copies the whole old object


@pytest.mark.parametrize("how", WRITES)
def test_without_status_subresource_status_is_data(raw: Raw, crds: None, ns: str, how: str) -> None:
    created = _create(raw, "plainos", "Plaino", ns, "p", version="v2")
    assert created["status"] == {"ready": False}
    path = _path("plainos", "v1", ns, "p")
    code, _, current = raw.call("GET", path)
    code, out = _write(raw, how, path, {"status": {"ready": True}}, current)
    assert code == 200, out
    assert out["status"] == {"ready": True} and out["metadata"]["generation"] == 2
    assert raw.call("GET", path + "/status")[0] == 404


def _deployment(name: str) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


@pytest.mark.parametrize("how", WRITES)
def test_builtin_main_resource_write_ignores_status(raw: Raw, ns: str, how: str) -> None:
    path = f"/apis/apps/v1/namespaces/{ns}/deployments"
    code, _, created = raw.call("POST", path, _deployment("d"))
    assert code == 201, created
    code, out = _write(raw, how, path + "/d", {"status": {"replicas": 5, "observedGeneration": 9}}, created)
    assert code == 200, out
    assert out["metadata"]["generation"] == 1
    assert out["status"].get("replicas") != 5 and out["status"].get("observedGeneration") != 9
    code, out = _write(raw, how, path + "/d/status", {"status": {"observedGeneration": 1},
                                                     "spec": {"replicas": 4}}, out)
    assert code == 200, out
    assert out["status"]["observedGeneration"] == 1
    assert out["spec"]["replicas"] == 1 and out["metadata"]["generation"] == 1


@pytest.fixture(scope="module")
def kubectl(server: LocalAPIServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield checked_kubectl(Path(tmp_path_factory.mktemp("status-kubectl")), server)


@pytest.mark.kubectl
def test_kubectl_patch_of_status_on_the_main_resource_is_no_change(kubectl: Any, crds: None, ns: str) -> None:
    kubectl("-n", ns, "apply", "-f", "-", stdin="apiVersion: status.example.com/v1\nkind: Gizmo\n"
                                                "metadata: {name: w1}\nspec: {size: 1}\n")
    out = kubectl("-n", ns, "patch", "gizmo", "w1", "--type", "merge", "-p", '{"status":{"ready":true}}').stdout
    assert out.strip() == "gizmo.status.example.com/w1 patched (no change)"
    out = kubectl("-n", ns, "get", "gizmo", "w1", "-o", "jsonpath={.metadata.generation}/{.status}").stdout
    assert out == "1/"
    out = kubectl("-n", ns, "patch", "gizmo", "w1", "--subresource=status", "--type", "merge",
                  "-p", '{"status":{"ready":true}}').stdout
    assert out.strip() == "gizmo.status.example.com/w1 patched"
    out = kubectl("-n", ns, "get", "gizmo", "w1", "-o", "jsonpath={.metadata.generation}/{.status.ready}").stdout
    assert out == "1/true"


@pytest.mark.parametrize(("plural", "obj", "status"), [
    ("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}, {"phase": "Running", "podIP": "10.0.0.9"}),
    ("services", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                  "spec": {"ports": [{"port": 80}]}}, {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}),
    ("persistentvolumeclaims", {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
                                "spec": {"accessModes": ["ReadWriteOnce"],
                                         "resources": {"requests": {"storage": "1Gi"}}}}, {"phase": "Bound"}),
])
def test_core_kinds_main_resource_patch_ignores_status(raw: Raw, ns: str, plural: str, obj: dict[str, Any],
                                                       status: dict[str, Any]) -> None:
    path = f"/api/v1/namespaces/{ns}/{plural}"
    code, _, created = raw.call("POST", path, obj)
    assert code == 201, created
    name = obj["metadata"]["name"]
    code, _, out = raw.call("PATCH", f"{path}/{name}", {"status": status}, ctype=MERGE)
    assert code == 200, out
    assert out.get("status") == created.get("status")
    assert out["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    code, _, out = raw.call("PATCH", f"{path}/{name}/status", {"status": status}, ctype=MERGE)
    assert code == 200, out
    assert all(out["status"].get(k) == v for k, v in status.items()), out["status"]


def test_writes_through_a_non_storage_version_pass_admission(tmp_path: Path) -> None:
    """With a ValidatingAdmissionPolicy active, writes go through the admission path (a dry run,
    then the admitted object is stored): through v2 of an object stored as v1 they must behave as
    without admission (found merging the storage-version change with the policy support)."""
    with LocalAPIServer(kubeconfig_path=tmp_path / "kubeconfig") as server:
        raw = Raw(server)
        assert raw.call("POST", CRDS, _crd("gizmos", "Gizmo", True))[0] == 201
        policy = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
                  "metadata": {"name": "small"},
                  "spec": {"failurePolicy": "Fail", "matchConstraints": {"resourceRules": [
                      {"apiGroups": ["status.example.com"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"],
                       "resources": ["gizmos", "gizmos/status"]}]},
                      "validations": [{"expression": "!has(object.spec) || !has(object.spec.size) || object.spec.size < 10"}]}}
        binding = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
                   "metadata": {"name": "small"}, "spec": {"policyName": "small", "validationActions": ["Deny"]}}
        assert raw.call("POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies", policy)[0] == 201
        assert raw.call("POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
                        binding)[0] == 201
        v1 = "/apis/status.example.com/v1/namespaces/default/gizmos"
        v2 = "/apis/status.example.com/v2/namespaces/default/gizmos"
        gizmo = {"apiVersion": "status.example.com/v1", "kind": "Gizmo", "metadata": {"name": "g"},
                 "spec": {"size": 1}}
        for _ in range(50):  # the CRD and the policy take effect asynchronously
            code, _, body = raw.call("POST", v1, gizmo)
            if code == 201:
                break
        assert code == 201, body
        patch = json.dumps({"status": {"ready": True}}).encode()
        code, _, body = raw.call("PATCH", f"{v2}/g", raw=patch, ctype=MERGE)
        assert code == 200, body
        assert body["apiVersion"] == "status.example.com/v2" and body["metadata"]["generation"] == 1
        code, _, body = raw.call("PATCH", f"{v2}/g/status", raw=patch, ctype=MERGE)
        assert code == 200 and body["status"] == {"ready": True}, body
        code, _, body = raw.call("PATCH", f"{v2}/g", raw=json.dumps({"spec": {"size": 2}}).encode(), ctype=MERGE)
        assert code == 200 and body["metadata"]["generation"] == 2, body
        code, _, body = raw.call("PATCH", f"{v2}/g", raw=json.dumps({"spec": {"size": 20}}).encode(), ctype=MERGE)
        assert code == 422 and "ValidatingAdmissionPolicy" in body["message"], body


@pytest.mark.parametrize("how", ("update", "merge"))
def test_a_status_write_decodes_the_status_it_brings(raw: Raw, ns: str, how: str) -> None:
    # a status write decodes and defaults only the status (the rest is the stored object's):
    # what it brings is still checked: unknown fields warned about (or refused under Strict),
    # values of the wrong type refused
    path = f"/apis/apps/v1/namespaces/{ns}/deployments"
    code, _, created = raw.call("POST", path, _deployment("s"))
    assert code == 201, created
    conn = raw.conn()
    body = {**created, "status": {"replicas": 1, "bogus": True}} if how == "update" else {
        "status": {"replicas": 1, "bogus": True}}
    conn.request("PUT" if how == "update" else "PATCH", f"{path}/s/status", body=json.dumps(body),
                 headers={"Authorization": f"Bearer {raw.server.token}",
                          "Content-Type": "application/json" if how == "update" else MERGE})
    response = conn.getresponse()
    out = json.loads(response.read())
    assert response.status == 200, out
    assert "bogus" not in out["status"] and out["status"]["replicas"] == 1
    assert 'unknown field \\"status.bogus\\"' in (response.getheader("Warning") or ""), response.getheaders()
    code, _, strict = raw.call("PATCH", f"{path}/s/status?fieldValidation=Strict", {"status": {"bogus": 1}},
                               ctype=MERGE)
    assert code == 400 and 'unknown field "status.bogus"' in strict["message"], strict
    code, _, typed = raw.call("PATCH", f"{path}/s/status", {"status": {"replicas": "two"}}, ctype=MERGE)
    assert code in (400, 422) and "replicas" in typed["message"], typed
    code, _, stored = raw.call("GET", f"{path}/s")
    assert stored["spec"] == created["spec"] and stored["status"]["replicas"] == 1


def _status_causes(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in body["details"]["causes"]]


@pytest.mark.parametrize(("status", "causes"), [
    ({"replicas": -1}, [("status.replicas", "Invalid value: -1: must be greater than or equal to 0")]
     + [(f"status.{k}", "Invalid value: 0: cannot be greater than status.replicas")  # as Go compares them
        for k in ("updatedReplicas", "readyReplicas", "availableReplicas")]),
    ({"replicas": 1, "observedGeneration": -2, "unavailableReplicas": -1},
     [("status.observedGeneration", "Invalid value: -2: must be greater than or equal to 0"),
      ("status.unavailableReplicas", "Invalid value: -1: must be greater than or equal to 0")]),
    ({"replicas": 1, "readyReplicas": 2, "availableReplicas": 2, "updatedReplicas": 3},
     [("status.updatedReplicas", "Invalid value: 3: cannot be greater than status.replicas"),
      ("status.readyReplicas", "Invalid value: 2: cannot be greater than status.replicas"),
      ("status.availableReplicas", "Invalid value: 2: cannot be greater than status.replicas")]),
    ({"replicas": 2, "readyReplicas": 1, "availableReplicas": 2},
     [("status.availableReplicas", "Invalid value: 2: cannot be greater than readyReplicas")]),
    ({"collisionCount": -1}, [("status.collisionCount", "Invalid value: -1: must be greater than or equal to 0")]),
])
def test_a_deployment_status_write_validates_the_status(raw: Raw, ns: str, status: dict[str, Any],
                                                        causes: list[tuple[str, str]]) -> None:
    # ValidateDeploymentStatusUpdate: the status counts, as kube-apiserver's status strategy checks them
    path = f"/apis/apps/v1/namespaces/{ns}/deployments"
    assert raw.call("POST", path, _deployment("v"))[0] == 201
    code, _, body = raw.call("PATCH", f"{path}/v/status", {"status": status}, ctype=MERGE)
    assert code == 422 and body["reason"] == "Invalid", body
    assert _status_causes(body) == causes, body
    assert body["message"].startswith('Deployment.apps "v" is invalid: '), body


def test_a_deployment_collision_count_is_never_decremented(raw: Raw, ns: str) -> None:
    path = f"/apis/apps/v1/namespaces/{ns}/deployments"
    assert raw.call("POST", path, _deployment("c"))[0] == 201
    code, _, body = raw.call("PATCH", f"{path}/c/status", {"status": {"collisionCount": 2}}, ctype=MERGE)
    assert code == 200 and body["status"]["collisionCount"] == 2, body
    code, _, body = raw.call("PATCH", f"{path}/c/status", {"status": {"collisionCount": 1}}, ctype=MERGE)
    assert code == 422 and _status_causes(body) == [("status.collisionCount", "Invalid value: 1: cannot be decremented")]
    code, _, body = raw.call("PATCH", f"{path}/c/status", {"status": {"collisionCount": None}}, ctype=MERGE)
    assert code == 422 and _status_causes(body) == [("status.collisionCount", "Invalid value: 0: cannot be decremented")]


@pytest.mark.parametrize(("group", "plural"), [("apps/v1", "replicasets"), ("v1", "replicationcontrollers")])
def test_a_replica_set_status_write_validates_the_status(raw: Raw, ns: str, group: str, plural: str) -> None:
    # ValidateReplicaSetStatusUpdate (ValidateReplicationControllerStatusUpdate alike)
    obj = _deployment("r")
    obj["apiVersion"], obj["kind"] = group, "ReplicaSet" if plural == "replicasets" else "ReplicationController"
    if plural == "replicationcontrollers":
        obj["spec"]["selector"] = obj["spec"]["selector"]["matchLabels"]
    path = f"/api{'s' if '/' in group else ''}/{group}/namespaces/{ns}/{plural}"
    code, _, created = raw.call("POST", path, obj)
    assert code == 201, created
    code, _, body = raw.call("PATCH", f"{path}/r/status", {"status": {"replicas": 1, "fullyLabeledReplicas": 2,
                                                                     "observedGeneration": -1}}, ctype=MERGE)
    assert code == 422, body
    assert _status_causes(body) == [
        ("status.observedGeneration", "Invalid value: -1: must be greater than or equal to 0"),
        ("status.fullyLabeledReplicas", "Invalid value: 2: cannot be greater than status.replicas")], body
    code, _, body = raw.call("PATCH", f"{path}/r/status", {"status": {"replicas": 2, "readyReplicas": 1,
                                                                     "availableReplicas": 2}}, ctype=MERGE)
    assert code == 422 and _status_causes(body) == [
        ("status.availableReplicas", "Invalid value: 2: cannot be greater than readyReplicas")], body
    code, _, body = raw.call("PATCH", f"{path}/r/status", {"status": {"replicas": 1, "fullyLabeledReplicas": 1,
                                                                     "readyReplicas": 1, "availableReplicas": 1,
                                                                     "observedGeneration": 1}}, ctype=MERGE)
    assert code == 200 and body["status"]["availableReplicas"] == 1, body


def test_a_status_write_does_not_validate_the_stored_spec_again(server: LocalAPIServer, raw: Raw, ns: str) -> None:
    # a Deployment stored with a spec today's validation refuses (as one stored by an older
    # server): its status strategy validates the status alone, so a status write is accepted (and
    # keeps the stored spec, whatever spec the write brings); a write of the main resource is not
    path = f"/apis/apps/v1/namespaces/{ns}/deployments"
    code, _, created = raw.call("POST", path, _deployment("old"))
    assert code == 201, created

    def corrupt(core: Any) -> None:
        entry = core.store.get("apps/deployments", ns, "old")
        obj = entry.copy()
        obj["spec"]["template"]["spec"]["containers"] = []
        core.store.put("apps/deployments", obj)

    server.call(corrupt)
    code, _, current = raw.call("GET", f"{path}/old")
    assert code == 200 and current["spec"]["template"]["spec"]["containers"] == [], current
    code, _, body = raw.call("PUT", f"{path}/old", current)
    assert code == 422 and ("spec.template.spec.containers", "Required value") in _status_causes(body), body
    update = {**current, "status": {"replicas": 1, "readyReplicas": 1}, "spec": {**current["spec"], "replicas": 3}}
    code, _, body = raw.call("PUT", f"{path}/old/status", update)
    assert code == 200 and body["status"]["readyReplicas"] == 1, body
    assert body["spec"] == current["spec"], body
    code, _, body = raw.call("PATCH", f"{path}/old/status", {"status": {"observedGeneration": -1}}, ctype=MERGE)
    assert code == 422 and _status_causes(body) == [
        ("status.observedGeneration", "Invalid value: -1: must be greater than or equal to 0")], body


def test_status_writes_of_kinds_without_status_rules_validate_the_whole_object(server: LocalAPIServer, raw: Raw,
                                                                              ns: str) -> None:
    # a kind whose status rules this server does not know (a Pod) keeps the whole validation on
    # a status write: stricter than kube-apiserver's status strategy, never weaker
    path = f"/api/v1/namespaces/{ns}/pods"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    assert raw.call("POST", path, pod)[0] == 201

    def corrupt(core: Any) -> None:
        obj = core.store.get("/pods", ns, "p").copy()
        obj["spec"]["containers"] = []
        core.store.put("/pods", obj)

    server.call(corrupt)
    code, _, body = raw.call("PATCH", f"{path}/p/status", {"status": {"phase": "Running"}}, ctype=MERGE)
    assert code == 422 and ("spec.containers", "Required value") in _status_causes(body), body
