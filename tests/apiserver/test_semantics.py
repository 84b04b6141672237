"""API semantics over raw HTTPS: auth, errors, verbs, resourceVersions, watches, GC, CRDs."""

from __future__ import annotations

import itertools
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from samplecontroller.apimachinery import k8syaml
from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.testing import make_kubectl
from tests.apiserver.conftest import FOOS, Raw, foo

_ns = itertools.count()


@pytest.fixture
def ns(raw: Raw) -> str:
    name = f"sem-{next(_ns)}"
    code, _, body = raw.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                            "metadata": {"name": name}})
    assert code == 201, body
    return name


def wait_until(pred: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"condition not met within {timeout}s")


def test_auth_and_public_endpoints(raw: Raw) -> None:
    code, _, body = raw.call("GET", "/api/v1/namespaces", token=None)
    assert code == 401 and body["reason"] == "Unauthorized"
    assert raw.call("GET", "/api", token="wrong")[0] == 401
    code, _, body = raw.call("GET", "/version?timeout=5s", token=None)
    assert code == 200 and body["minor"] == "37" and body["gitVersion"] == "v1.37.0"
    assert raw.call("GET", "/version/")[0] == 200
    for path in ("/healthz", "/readyz", "/livez"):
        assert raw.call("GET", path, token=None)[0] == 200


def test_discovery_content_types(raw: Raw) -> None:
    accept = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
              "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json")
    code, headers, body = raw.call("GET", "/apis", accept=accept)
    assert code == 200
    assert headers["content-type"] == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    groups = {item["metadata"].get("name") for item in body["items"]}
    assert {"apps", "samplecontroller.k8s.io", "apiextensions.k8s.io"} <= groups
    code, headers, body = raw.call("GET", "/api", accept=accept.split(",", 1)[1])
    assert headers["content-type"].endswith("v=v2beta1;as=APIGroupDiscoveryList")
    assert body["items"][0]["versions"][0]["version"] == "v1"
    code, _, body = raw.call("GET", "/apis/samplecontroller.k8s.io/v1alpha1")
    assert code == 200
    names = {r["name"] for r in body["resources"]}
    assert {"foos", "foos/status"} <= names
    assert raw.call("GET", "/apis/samplecontroller.k8s.io")[2]["preferredVersion"]["version"] == "v1alpha1"


def test_openapi_v3(raw: Raw) -> None:
    code, _, index = raw.call("GET", "/openapi/v3?timeout=32s")
    assert code == 200
    url = index["paths"]["apis/samplecontroller.k8s.io/v1alpha1"]["serverRelativeURL"]
    code, _, doc = raw.call("GET", url)
    assert code == 200
    patch_ops = [p["patch"] for p in doc["paths"].values() if "patch" in p]
    assert patch_ops and all("application/strategic-merge-patch+json" not in op["requestBody"]["content"]
                             for op in patch_ops)
    assert raw.call("GET", "/openapi/v3/apis/apps/v1")[0] == 200


def test_openapi_v2_is_built_from_the_v3_schemas(raw: Raw) -> None:
    code, _, doc = raw.call("GET", "/openapi/v2")
    assert code == 200 and doc["swagger"] == "2.0"
    foo = doc["definitions"]["io.k8s.samplecontroller.v1alpha1.Foo"]
    assert foo["x-kubernetes-group-version-kind"] == [{"group": "samplecontroller.k8s.io", "version": "v1alpha1",
                                                       "kind": "Foo"}]
    assert foo["properties"]["metadata"]["$ref"] == "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    spec = doc["definitions"]["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]
    assert spec["template"]["$ref"] == "#/definitions/io.k8s.api.core.v1.PodTemplateSpec" and "allOf" not in spec["template"]
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "apps", "version": "v1", "kind": "Deployment"}
    assert "fieldValidation" in {p["name"] for p in patch["parameters"]}
    refs = {v for v in _values(doc, "$ref") if isinstance(v, str)}
    assert refs and all(r.startswith("#/definitions/") and r[len("#/definitions/"):] in doc["definitions"] for r in refs)
    code, headers, body = raw.call("GET", "/openapi/v2",
                                   accept="application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
    assert code == 200 and headers["content-type"] == "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    assert isinstance(body, str) and body.startswith("\n\x032.0")  # field 1 (swagger) = "2.0"


def _values(node: Any, key: str) -> list[Any]:
    if isinstance(node, dict):
        return [*([node[key]] if key in node else []), *(v for child in node.values() for v in _values(child, key))]
    if isinstance(node, list):
        return [v for child in node for v in _values(child, key)]
    return []


def test_errors_are_status_objects(raw: Raw, ns: str) -> None:
    code, _, body = raw.call("GET", "/apis/nope.example.com/v1/things")
    assert code == 404 and body["kind"] == "Status" and body["details"] == {}  # kubectl debug reads details.name
    code, _, body = raw.call("GET", "/api/v1/namespaces/default/pods/x/nosuchsubresource")
    assert code == 404 and body["details"] == {}
    code, _, body = raw.call("POST", FOOS.format(ns=ns), raw=b"{not json")
    assert code == 400 and body["reason"] == "BadRequest"
    code, _, body = raw.call("POST", FOOS.format(ns=ns), raw=b"a: [", ctype="application/yaml")
    assert code == 400
    code, _, body = raw.call("POST", FOOS.format(ns=ns), raw=b"x", ctype="application/xml")
    assert code == 415 and body["reason"] == "UnsupportedMediaType"
    code, _, body = raw.call("GET", FOOS.format(ns=ns) + "/missing")
    assert code == 404 and body["details"] == {"name": "missing", "group": "samplecontroller.k8s.io", "kind": "foos"}
    code, _, body = raw.call("PATCH", FOOS.format(ns=ns) + "/missing", {"a": 1},
                             ctype="application/strategic-merge-patch+json")
    assert code in (404, 415)


def test_create_get_update_conflict(raw: Raw, ns: str) -> None:
    code, _, created = raw.call("POST", FOOS.format(ns=ns), foo("a"))
    assert code == 201
    meta = created["metadata"]
    assert meta["uid"] and meta["generation"] == 1 and meta["creationTimestamp"]
    assert raw.call("POST", FOOS.format(ns=ns), foo("a"))[2]["reason"] == "AlreadyExists"
    updated = dict(created, spec={"deploymentName": "a", "replicas": 2})
    code, _, body = raw.call("PUT", FOOS.format(ns=ns) + "/a", updated)
    assert code == 200 and body["metadata"]["generation"] == 2
    assert int(body["metadata"]["resourceVersion"]) > int(meta["resourceVersion"])
    code, _, body = raw.call("PUT", FOOS.format(ns=ns) + "/a", updated)  # stale resourceVersion
    assert code == 409 and body["reason"] == "Conflict"
    assert "the object has been modified" in body["message"]
    no_rv = foo("a", 3)
    code, _, body = raw.call("PUT", FOOS.format(ns=ns) + "/a", no_rv)
    assert code == 422
    code, _, body = raw.call("PUT", FOOS.format(ns=ns) + "/zzz", dict(foo("zzz"), metadata={"name": "zzz",
                                                                                            "resourceVersion": "1"}))
    assert code == 404


def test_validation_pruning_and_field_validation(raw: Raw, ns: str) -> None:
    code, _, body = raw.call("POST", FOOS.format(ns=ns), foo("bad", 11))
    assert code == 422 and body["reason"] == "Invalid"
    assert "spec.replicas" in body["message"] and "less than or equal to 10" in body["message"]
    assert body["details"]["causes"][0]["field"] == "spec.replicas"
    obj = foo("extra")
    obj["spec"]["unknown"] = 1
    code, _, body = raw.call("POST", FOOS.format(ns=ns) + "?fieldValidation=Strict", obj)
    assert code == 400 and 'unknown field "spec.unknown"' in body["message"]
    code, headers, body = raw.call("POST", FOOS.format(ns=ns), obj)
    assert code == 201 and "unknown" not in body["spec"]
    assert 'unknown field \\"spec.unknown\\"' in headers.get("warning", "")


def test_generate_name_and_dry_run(raw: Raw, ns: str) -> None:
    obj = foo("")
    obj["metadata"] = {"generateName": "gen-"}
    code, _, body = raw.call("POST", FOOS.format(ns=ns), obj)
    assert code == 201 and body["metadata"]["name"].startswith("gen-") and len(body["metadata"]["name"]) == 9
    code, _, body = raw.call("POST", FOOS.format(ns=ns) + "?dryRun=All", foo("dry"))
    assert code == 201
    assert raw.call("GET", FOOS.format(ns=ns) + "/dry")[0] == 404


def test_status_subresource(raw: Raw, ns: str) -> None:
    _, _, created = raw.call("POST", FOOS.format(ns=ns), dict(foo("st"), status={"availableReplicas": 5}))
    assert "status" not in created
    code, _, body = raw.call("PATCH", FOOS.format(ns=ns) + "/st/status", {"status": {"availableReplicas": 1},
                                                                           "spec": {"replicas": 9}},
                             ctype="application/merge-patch+json")
    assert code == 200 and body["status"] == {"availableReplicas": 1} and body["spec"]["replicas"] == 1
    assert body["metadata"]["generation"] == 1
    code, _, body = raw.call("PATCH", FOOS.format(ns=ns) + "/st", {"status": {"availableReplicas": 7}},
                             ctype="application/merge-patch+json")
    assert body["status"] == {"availableReplicas": 1}


def test_patch_types(raw: Raw, ns: str) -> None:
    raw.call("POST", FOOS.format(ns=ns), foo("p"))
    code, _, body = raw.call("PATCH", FOOS.format(ns=ns) + "/p", [{"op": "replace", "path": "/spec/replicas", "value": 4}],
                             ctype="application/json-patch+json")
    assert code == 200 and body["spec"]["replicas"] == 4
    code, _, body = raw.call("PATCH", FOOS.format(ns=ns) + "/p", {"a": 1}, ctype="application/strategic-merge-patch+json")
    assert code == 415
    code, _, body = raw.call("PATCH", FOOS.format(ns=ns) + "/p", [{"op": "test", "path": "/spec/replicas", "value": 1}],
                             ctype="application/json-patch+json")
    assert code == 422
    applied = foo("p", 6)
    code, _, body = raw.call("PATCH", FOOS.format(ns=ns) + "/p?fieldManager=tester", applied,
                             ctype="application/apply-patch+yaml")
    assert code == 409 and body["reason"] == "Conflict"
    code, _, body = raw.call("PATCH", FOOS.format(ns=ns) + "/p?fieldManager=tester&force=true", applied,
                             ctype="application/apply-patch+yaml")
    assert code == 200 and body["spec"]["replicas"] == 6
    assert any(m["manager"] == "tester" for m in body["metadata"]["managedFields"])
    code, _, body = raw.call("PATCH", FOOS.format(ns=ns) + "/new?fieldManager=tester", foo("new"),
                             ctype="application/apply-patch+yaml")
    assert code == 201
    assert raw.call("PATCH", FOOS.format(ns=ns) + "/p", foo("p"), ctype="application/apply-patch+yaml")[0] == 422  # fieldManager Required


def test_strategic_merge_on_deployment(raw: Raw, ns: str) -> None:
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
           "spec": {"selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                                 "spec": {"containers": [{"name": "a", "image": "nginx:1"},
                                                         {"name": "b", "image": "busybox:1"}]}}}}
    code, _, body = raw.call("POST", f"/apis/apps/v1/namespaces/{ns}/deployments", dep)
    assert code == 201 and body["spec"]["replicas"] == 1 and body["status"] == {}
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "busybox:2"}]}}}}
    code, _, body = raw.call("PATCH", f"/apis/apps/v1/namespaces/{ns}/deployments/web", patch,
                             ctype="application/strategic-merge-patch+json")
    assert code == 200
    images = [c["image"] for c in body["spec"]["template"]["spec"]["containers"]]
    assert images == ["nginx:1", "busybox:2"]
    code, _, scale = raw.call("GET", f"/apis/apps/v1/namespaces/{ns}/deployments/web/scale")
    assert code == 200 and scale["spec"]["replicas"] == 1 and scale["status"]["selector"] == "app=web"
    code, _, scale = raw.call("PATCH", f"/apis/apps/v1/namespaces/{ns}/deployments/web/scale",
                              {"spec": {"replicas": 3}}, ctype="application/merge-patch+json")
    assert code == 200 and scale["spec"]["replicas"] == 3
    bad = json.loads(json.dumps(dep))
    bad["metadata"]["name"] = "Bad_Name"
    assert raw.call("POST", f"/apis/apps/v1/namespaces/{ns}/deployments", bad)[0] == 422


def test_list_selectors_and_pagination(raw: Raw, ns: str) -> None:
    for i in range(5):
        raw.call("POST", FOOS.format(ns=ns), foo(f"l{i}", labels={"tier": "a" if i % 2 else "b"}))
    _, _, lst = raw.call("GET", FOOS.format(ns=ns) + "?labelSelector=tier%3Da")
    assert [o["metadata"]["name"] for o in lst["items"]] == ["l1", "l3"]
    _, _, lst = raw.call("GET", FOOS.format(ns=ns) + "?labelSelector=tier+in+(a,b),tier!%3Da")
    assert len(lst["items"]) == 3
    _, _, lst = raw.call("GET", FOOS.format(ns=ns) + "?fieldSelector=metadata.name%3Dl2")
    assert [o["metadata"]["name"] for o in lst["items"]] == ["l2"]
    assert raw.call("GET", FOOS.format(ns=ns) + "?fieldSelector=spec.x%3D1")[0] == 400
    names: list[str] = []
    _, _, page = raw.call("GET", FOOS.format(ns=ns) + "?limit=2")
    rv = page["metadata"]["resourceVersion"]
    names += [o["metadata"]["name"] for o in page["items"]]
    assert page["metadata"]["remainingItemCount"] == 3
    raw.call("POST", FOOS.format(ns=ns), foo("l9"))  # after the first page: not in this list
    while page["metadata"].get("continue"):
        _, _, page = raw.call("GET", FOOS.format(ns=ns) + f"?limit=2&continue={page['metadata']['continue']}")
        assert page["metadata"]["resourceVersion"] == rv
        names += [o["metadata"]["name"] for o in page["items"]]
    assert names == [f"l{i}" for i in range(5)]
    code, _, _ = raw.call("GET", FOOS.format(ns=ns) + "?limit=2&continue=abc&resourceVersion=5")
    assert code == 400
    code, _, _body = raw.call("GET", FOOS.format(ns=ns) + f"?resourceVersion={10**9}&resourceVersionMatch=Exact")
    assert code == 504


def test_table_responses(raw: Raw, ns: str) -> None:
    raw.call("POST", FOOS.format(ns=ns), foo("t"))
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
    _, _, table = raw.call("GET", FOOS.format(ns=ns) + "?limit=500", accept=accept)
    assert table["kind"] == "Table" and table["columnDefinitions"][0]["name"] == "Name"
    assert table["rows"][0]["cells"][0] == "t"
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    _, _, one = raw.call("GET", FOOS.format(ns=ns) + "/t", accept=accept)
    assert one["kind"] == "Table" and len(one["rows"]) == 1


def collect(raw: Raw, path: str, until: Any, timeout: float = 5) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for ev in raw.watch(path, timeout=timeout):
        events.append(ev)
        if until(events):
            break
    return events


def test_watch_from_list_rv_and_bookmarks(raw: Raw, ns: str) -> None:
    raw.call("POST", FOOS.format(ns=ns), foo("w0"))
    _, _, lst = raw.call("GET", FOOS.format(ns=ns))
    rv = lst["metadata"]["resourceVersion"]

    def writer() -> None:
        time.sleep(0.1)
        raw.call("POST", FOOS.format(ns=ns), foo("w1"))
        raw.call("PATCH", FOOS.format(ns=ns) + "/w1", {"spec": {"replicas": 2}}, ctype="application/merge-patch+json")
        raw.call("DELETE", FOOS.format(ns=ns) + "/w1")

    threading.Thread(target=writer).start()
    events = collect(raw, FOOS.format(ns=ns) + f"?watch=true&resourceVersion={rv}&allowWatchBookmarks=true",
                     lambda evs: [e["type"] for e in evs if e["type"] != "BOOKMARK"] == ["ADDED", "MODIFIED", "DELETED"]
                     and evs[-1]["type"] == "DELETED")
    kinds = [e["type"] for e in events if e["type"] != "BOOKMARK"]
    assert kinds == ["ADDED", "MODIFIED", "DELETED"]
    assert all(e["object"]["metadata"]["name"] == "w1" for e in events if e["type"] != "BOOKMARK")
    # a bookmark-only wait
    events = collect(raw, FOOS.format(ns=ns) + f"?watch=true&resourceVersion={events[-1]['object']['metadata']['resourceVersion']}"
                     "&allowWatchBookmarks=true", lambda evs: evs[-1]["type"] == "BOOKMARK")
    assert set(events[-1]["object"]["metadata"]) == {"resourceVersion"}


def test_watch_initial_events_and_timeout(raw: Raw, ns: str) -> None:
    raw.call("POST", FOOS.format(ns=ns), foo("i0"))
    raw.call("POST", FOOS.format(ns=ns), foo("i1"))
    events = list(raw.watch(FOOS.format(ns=ns) + "?watch=1&timeoutSeconds=1"))
    assert [e["type"] for e in events] == ["ADDED", "ADDED"]
    events = collect(raw, FOOS.format(ns=ns) + "?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                     "&allowWatchBookmarks=true", lambda evs: evs[-1]["type"] == "BOOKMARK")
    assert [e["type"] for e in events] == ["ADDED", "ADDED", "BOOKMARK"]
    assert events[-1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    code, _, _body = raw.call("GET", FOOS.format(ns=ns) + "?watch=true&sendInitialEvents=true")
    assert code == 422


def test_watch_label_selector_transitions(raw: Raw, ns: str) -> None:
    _, _, lst = raw.call("GET", FOOS.format(ns=ns))
    rv = lst["metadata"]["resourceVersion"]

    def writer() -> None:
        time.sleep(0.1)
        raw.call("POST", FOOS.format(ns=ns), foo("s", labels={"x": "y"}))
        raw.call("PATCH", FOOS.format(ns=ns) + "/s", {"metadata": {"labels": {"x": "n"}}}, ctype="application/merge-patch+json")

    threading.Thread(target=writer).start()
    events = collect(raw, FOOS.format(ns=ns) + f"?watch=true&resourceVersion={rv}&labelSelector=x%3Dy",
                     lambda evs: len(evs) == 2)
    assert [e["type"] for e in events] == ["ADDED", "DELETED"]


def test_watch_expired_after_compaction(fresh_apiserver: LocalAPIServer) -> None:
    r = Raw(fresh_apiserver)
    _, _, lst = r.call("GET", "/api/v1/namespaces/default/configmaps")
    old = lst["metadata"]["resourceVersion"]
    r.call("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "c"}})
    fresh_apiserver.compact()
    events = list(r.watch(f"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={old}"))
    assert events[0]["type"] == "ERROR" and events[0]["object"]["code"] == 410
    assert events[0]["object"]["reason"] == "Expired"
    code, _, _ = r.call("GET", f"/api/v1/namespaces/default/configmaps?resourceVersion={old}&resourceVersionMatch=Exact")
    assert code == 410


def test_finalizers(raw: Raw, ns: str) -> None:
    raw.call("POST", FOOS.format(ns=ns), foo("f", finalizers=["example.com/hold"]))
    code, _, body = raw.call("DELETE", FOOS.format(ns=ns) + "/f")
    assert code == 200 and body["metadata"]["deletionTimestamp"]
    code, _, body = raw.call("GET", FOOS.format(ns=ns) + "/f")
    assert code == 200
    code, _, body = raw.call("PATCH", FOOS.format(ns=ns) + "/f", {"metadata": {"finalizers": ["a", "example.com/hold"]}},
                             ctype="application/merge-patch+json")
    assert code == 422
    code, _, body = raw.call("PATCH", FOOS.format(ns=ns) + "/f", {"metadata": {"finalizers": None}},
                             ctype="application/merge-patch+json")
    assert code == 200
    assert raw.call("GET", FOOS.format(ns=ns) + "/f")[0] == 404


def _owned_cm(name: str, owner: dict[str, Any], block: bool = False) -> dict[str, Any]:
    ref = {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "name": owner["metadata"]["name"],
           "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": block}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "ownerReferences": [ref]}}


@pytest.mark.parametrize("policy", ["Background", "Foreground", "Orphan"])
def test_garbage_collection(raw: Raw, ns: str, policy: str) -> None:
    _, _, owner = raw.call("POST", FOOS.format(ns=ns), foo("owner"))
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    assert raw.call("POST", cms, _owned_cm("dep", owner, block=True))[0] == 201
    code, _, _body = raw.call("DELETE", FOOS.format(ns=ns) + "/owner", {"propagationPolicy": policy})
    assert code == 200
    if policy == "Orphan":
        wait_until(lambda: raw.call("GET", FOOS.format(ns=ns) + "/owner")[0] == 404)
        _, _, cm = raw.call("GET", cms + "/dep")
        assert "ownerReferences" not in cm["metadata"]
    else:
        wait_until(lambda: raw.call("GET", cms + "/dep")[0] == 404)
        wait_until(lambda: raw.call("GET", FOOS.format(ns=ns) + "/owner")[0] == 404)


def test_dangling_owner_is_collected(raw: Raw, ns: str) -> None:
    ghost = {"metadata": {"name": "ghost", "uid": "00000000-0000-0000-0000-000000000000"}}
    raw.call("POST", f"/api/v1/namespaces/{ns}/configmaps", _owned_cm("orphaned", ghost))
    wait_until(lambda: raw.call("GET", f"/api/v1/namespaces/{ns}/configmaps/orphaned")[0] == 404)


def test_namespace_deletion_removes_contents(raw: Raw, ns: str) -> None:
    raw.call("POST", FOOS.format(ns=ns), foo("x"))
    raw.call("POST", f"/api/v1/namespaces/{ns}/configmaps", {"metadata": {"name": "c"}})
    code, _, body = raw.call("DELETE", f"/api/v1/namespaces/{ns}")
    assert code == 200 and body["status"]["phase"] == "Terminating"
    code, _, body = raw.call("POST", f"/api/v1/namespaces/{ns}/configmaps", {"metadata": {"name": "d"}})
    assert code in (403, 404)  # terminating, or already gone
    wait_until(lambda: raw.call("GET", f"/api/v1/namespaces/{ns}")[0] == 404)
    assert raw.call("GET", FOOS.format(ns=ns) + "/x")[0] == 404
    assert raw.call("POST", f"/api/v1/namespaces/{ns}/configmaps", {"metadata": {"name": "e"}})[0] == 404


WIDGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.test.example.com"},
    "spec": {"group": "test.example.com", "scope": "Cluster",
             "names": {"plural": "widgets", "kind": "Widget"},
             "versions": [
                 {"name": "v1", "served": True, "storage": True,
                  "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                      "type": "object", "properties": {"size": {"type": "integer", "default": 3},
                                                       "color": {"type": "string", "enum": ["red", "blue"]}}}}}}},
                 {"name": "v1beta1", "served": True, "storage": False,
                  "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]},
}


def test_crd_lifecycle(raw: Raw) -> None:
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    code, _, crd = raw.call("POST", crds, WIDGET_CRD)
    assert code == 201, crd
    conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conditions["Established"] == "True" and conditions["NamesAccepted"] == "True"
    widgets = "/apis/test.example.com/v1/widgets"
    code, _, w = raw.call("POST", widgets, {"apiVersion": "test.example.com/v1", "kind": "Widget",
                                            "metadata": {"name": "w"}, "spec": {"color": "red"}})
    assert code == 201 and w["spec"]["size"] == 3 and "namespace" not in w["metadata"]
    code, _, body = raw.call("POST", widgets, {"metadata": {"name": "w2"}, "spec": {"color": "green"}})
    assert code == 422 and "supported values" in body["message"]
    code, _, other = raw.call("GET", "/apis/test.example.com/v1beta1/widgets/w")
    assert code == 200 and other["apiVersion"] == "test.example.com/v1beta1"
    code, _, body = raw.call("DELETE", f"{crds}/widgets.test.example.com")
    assert code == 200
    wait_until(lambda: raw.call("GET", f"{crds}/widgets.test.example.com")[0] == 404)
    assert raw.call("GET", widgets)[0] == 404


def test_a_crd_update_applies_to_the_next_write(raw: Raw, server: LocalAPIServer) -> None:
    """What writes read of a CRD (its schemas, its storage version) is worked out once per CRD
    object (``Core.crd_plan``): an update of the CRD, or its deletion and re-creation, applies to
    the very next write."""
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    crd = json.loads(json.dumps(WIDGET_CRD))
    crd["metadata"]["name"] = "gadgets.test.example.com"
    crd["spec"]["names"] = {"plural": "gadgets", "kind": "Gadget"}
    code, _, stored = raw.call("POST", crds, crd)
    assert code == 201, stored
    gadgets = "/apis/test.example.com/v1/gadgets"

    def create(name: str, color: str, version: str = "v1") -> tuple[int, Any]:
        code, _, body = raw.call("POST", f"/apis/test.example.com/{version}/gadgets", {
            "apiVersion": f"test.example.com/{version}", "kind": "Gadget", "metadata": {"name": name},
            "spec": {"color": color}})
        return code, body

    try:
        assert create("a", "green")[0] == 422  # the enum: red, blue
        schema = stored["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        schema["color"]["enum"] = ["red", "blue", "green"]
        schema["size"]["default"] = 5
        code, _, stored = raw.call("PUT", f"{crds}/gadgets.test.example.com", stored)
        assert code == 200, stored
        code, body = create("b", "green")
        assert code == 201 and body["spec"]["size"] == 5, body  # the new enum and default at once
        for version in stored["spec"]["versions"]:
            version["storage"] = version["name"] == "v1beta1"
        code, _, stored = raw.call("PUT", f"{crds}/gadgets.test.example.com", stored)
        assert code == 200, stored
        code, body = create("c", "green", "v1beta1")
        assert code == 201, body
        def stored_as(name: str) -> str:
            entry = server.call(lambda core: core.store.get("test.example.com/gadgets", "", name))
            assert entry is not None
            return str(entry.obj["apiVersion"])
        assert (stored_as("b"), stored_as("c")) == ("test.example.com/v1", "test.example.com/v1beta1")
    finally:
        assert raw.call("DELETE", f"{crds}/gadgets.test.example.com")[0] == 200
        wait_until(lambda: raw.call("GET", f"{crds}/gadgets.test.example.com")[0] == 404)
    code, _, stored = raw.call("POST", crds, crd)  # the first schema again, in a new CRD object
    assert code == 201, stored
    try:
        wait_until(lambda: raw.call("GET", gadgets)[0] == 200)
        code, body = create("d", "green")
        assert code == 422 and "supported values" in body["message"], body
        code, body = create("e", "red")
        assert code == 201 and body["spec"]["size"] == 3, body
    finally:
        assert raw.call("DELETE", f"{crds}/gadgets.test.example.com")[0] == 200
        wait_until(lambda: raw.call("GET", f"{crds}/gadgets.test.example.com")[0] == 404)


def test_protected_group_needs_approval(raw: Raw) -> None:
    crd = json.loads(json.dumps(WIDGET_CRD))
    crd["metadata"]["name"] = "widgets.test.k8s.io"
    crd["spec"]["group"] = "test.k8s.io"
    code, _, body = raw.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert code == 422 and "api-approved.kubernetes.io" in body["message"]


def test_request_log_records_user_agents(server: LocalAPIServer, raw: Raw) -> None:
    raw.call("GET", "/apis/apps/v1/namespaces/default/deployments")
    assert ("", "list", "apps/deployments") in [(r.user_agent.replace("Python-urllib/3.11", ""), r.verb, r.resource)
                                                for r in server.requests] or any(
        r.verb == "list" and r.resource == "apps/deployments" for r in server.requests)


def test_deployment_simulator(tmp_path: Any) -> None:
    with LocalAPIServer(simulate_deployments=True, simulate_delay=0.05, kubeconfig_path=tmp_path / "kc") as s:
        r = Raw(s)
        dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
               "spec": {"replicas": 2, "selector": {"matchLabels": {"a": "b"}},
                        "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
        assert r.call("POST", "/apis/apps/v1/namespaces/default/deployments", dep)[0] == 201
        status = wait_until(lambda: r.call("GET", "/apis/apps/v1/namespaces/default/deployments/d")[2]["status"]
                            .get("availableReplicas"))
        assert status == 2


def test_builtin_objects_are_decoded_like_go(raw: Raw, ns: str) -> None:
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    code, _, status = raw.call("POST", cms, {"metadata": {"name": "typed"}, "data": {"a": 5}})
    assert code == 400 and status["reason"] == "BadRequest"
    assert status["message"] == ('ConfigMap in version "v1" cannot be handled as a ConfigMap: '
                                 "json: cannot unmarshal number into Go struct field ConfigMap.data.a of type string")
    code, headers, obj = raw.call("POST", cms, {"metadata": {"name": "loose"}, "data": {"a": "b"}, "bogus": 1})
    assert code == 201 and "bogus" not in obj and 'unknown field \\"bogus\\"' in headers["warning"]
    code, _, status = raw.call("POST", cms + "?fieldValidation=Strict", {"metadata": {"name": "strict"}, "bogus": 1})
    assert code == 400 and status["message"] == ('ConfigMap in version "v1" cannot be handled as a ConfigMap: '
                                                'strict decoding error: unknown field "bogus"')


def test_webhook_configurations_are_validated(raw: Raw) -> None:
    url = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
    bad = {"metadata": {"name": "bad"}, "webhooks": [{
        "name": "short", "clientConfig": {"url": "http://example.com"}, "sideEffects": "Some",
        "admissionReviewVersions": ["v2"], "failurePolicy": "Maybe", "timeoutSeconds": 60,
        "rules": [{"operations": ["CREATE", "READ"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}],
        "namespaceSelector": {"matchExpressions": [{"key": "a", "operator": "Bogus"}]}}]}
    code, _, status = raw.call("POST", url, bad)
    assert code == 422 and status["reason"] == "Invalid"
    fields = sorted({c["field"] for c in status["details"]["causes"]})
    assert fields == [f"webhooks[0].{f}" for f in ("admissionReviewVersions", "clientConfig.url", "failurePolicy",
                                                   "name", "namespaceSelector", "rules[0].operations",
                                                   "sideEffects", "timeoutSeconds")]


def test_paging_across_namespaces_whose_names_share_a_prefix(raw: Raw) -> None:
    """A continue token resumes after the last item in the list's own order: namespaces "pgx"
    and "pgx-b" (where "pgx/z" sorts after "pgx-b/a" as a string but not as a key) lose nothing."""
    for name in ("pgx", "pgx-b"):
        raw.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    created = {("pgx", "z"), ("pgx", "a"), ("pgx-b", "a"), ("pgx-b", "m")}
    for ns_name, name in created:
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"paging": "yes"}}}
        assert raw.call("POST", f"/api/v1/namespaces/{ns_name}/configmaps", cm)[0] == 201
    seen: list[tuple[str, str]] = []
    token = ""
    while True:
        _, _, page = raw.call("GET", f"/api/v1/configmaps?labelSelector=paging%3Dyes&limit=1&continue={token}")
        seen += [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in page["items"]]
        token = page["metadata"].get("continue", "")
        if not token:
            break
    assert sorted(seen) == sorted(created) and len(seen) == len(created), seen


def test_pages_of_a_list_are_one_snapshot_while_objects_change(raw: Raw, ns: str) -> None:
    """Every page after the first is served at the first page's resourceVersion: objects updated,
    deleted or created between the pages show as they were then (kube-apiserver's continue
    token holds the revision and the last key)."""
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    for i in range(7):
        assert raw.call("POST", cms, {"metadata": {"name": f"cm{i}", "labels": {"walk": "yes"}}, "data": {"v": "0"}})[0] == 201
    code, _, page = raw.call("GET", cms + "?labelSelector=walk%3Dyes&limit=3")
    assert code == 200
    rv = page["metadata"]["resourceVersion"]
    seen = [(o["metadata"]["name"], o["data"]["v"]) for o in page["items"]]
    assert raw.call("PATCH", cms + "/cm4", {"data": {"v": "1"}}, ctype="application/merge-patch+json")[0] == 200
    assert raw.call("DELETE", cms + "/cm5")[0] == 200
    assert raw.call("POST", cms, {"metadata": {"name": "cm9", "labels": {"walk": "yes"}}, "data": {"v": "0"}})[0] == 201
    while page["metadata"].get("continue"):
        code, _, page = raw.call("GET", cms + f"?labelSelector=walk%3Dyes&limit=3&continue={page['metadata']['continue']}")
        assert code == 200 and page["metadata"]["resourceVersion"] == rv
        seen += [(o["metadata"]["name"], o["data"]["v"]) for o in page["items"]]
    assert seen == [(f"cm{i}", "0") for i in range(7)]
    _, _, page = raw.call("GET", cms + "?limit=2")
    assert page["metadata"]["remainingItemCount"] == len(raw.call("GET", cms)[2]["items"]) - 2


def test_a_continue_token_of_a_compacted_revision_is_410_with_an_inconsistent_continuation(
        server: LocalAPIServer, raw: Raw, ns: str) -> None:
    """As kube-apiserver: 410 Expired, and the Status' metadata.continue resumes after the same
    key at the latest revision."""
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    for i in range(4):
        assert raw.call("POST", cms, {"metadata": {"name": f"c{i}"}})[0] == 201
    _, _, page = raw.call("GET", cms + "?limit=2")
    assert [o["metadata"]["name"] for o in page["items"]][:2] == ["c0", "c1"]
    assert raw.call("PATCH", cms + "/c3", {"data": {"v": "new"}}, ctype="application/merge-patch+json")[0] == 200
    server.compact()
    code, _, status = raw.call("GET", cms + f"?limit=2&continue={page['metadata']['continue']}")
    assert code == 410 and status["reason"] == "Expired", status
    assert status["message"].startswith("The provided continue parameter is too old to display a consistent list result.")
    code, _, rest = raw.call("GET", cms + f"?limit=10&continue={status['metadata']['continue']}")
    assert code == 200
    assert [(o["metadata"]["name"], (o.get("data") or {}).get("v")) for o in rest["items"]] == [
        ("c2", None), ("c3", "new"), ("kube-root-ca.crt", None)]


def test_yaml_answers_for_clients_that_ask_for_yaml(raw: Raw, ns: str, tmp_path: Path) -> None:
    """``Accept: application/yaml`` gets YAML, as kube-apiserver writes it (sigs.k8s.io/yaml): the
    object, a list, discovery and a Status; byte for byte what ``kubectl -o yaml`` prints of the
    same object (kubectl turns the JSON into YAML with the same library). A watch has no YAML
    form: 406, unless the client also accepts JSON."""
    data = {"flag": "true", "when": "2024-01-01T00:00:00Z", "text": "multi\nline\n", "empty": "",
            "long": " ".join(["word"] * 30), "odd": "a: b", "a10": "x", "a2": "y"}
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "yaml", "labels": {"n": "1"}}, "data": data}
    assert raw.call("POST", f"/api/v1/namespaces/{ns}/configmaps", cm)[0] == 201
    path = f"/api/v1/namespaces/{ns}/configmaps/yaml"
    _, _, as_json = raw.call("GET", path)
    code, headers, text = raw.call("GET", path, accept="application/yaml")
    assert code == 200 and headers["content-type"] == "application/yaml"
    assert isinstance(text, str) and k8syaml.load(text) == as_json
    assert 'flag: "true"' in text and 'empty: ""' in text and "text: |\n" in text
    printed = make_kubectl(tmp_path, raw.server)("get", "configmap", "yaml", "-n", ns, "-o", "yaml",
                                                 "--show-managed-fields", check=True)
    assert printed.stdout == text
    code, headers, text = raw.call("GET", f"/api/v1/namespaces/{ns}/configmaps", accept="application/yaml")
    assert code == 200 and k8syaml.load(text)["kind"] == "ConfigMapList"
    code, headers, text = raw.call("GET", f"/api/v1/namespaces/{ns}/configmaps/none", accept="application/yaml")
    assert code == 404 and headers["content-type"] == "application/yaml"
    status = k8syaml.load(text)
    assert status["kind"] == "Status" and status["reason"] == "NotFound" and status["code"] == 404
    code, headers, text = raw.call("GET", "/apis/apps", accept="application/yaml")
    assert code == 200 and k8syaml.load(text)["kind"] == "APIGroup"
    watch = f"/api/v1/namespaces/{ns}/configmaps?watch=true"
    code, _, body = raw.call("GET", watch, accept="application/yaml")
    assert code == 406 and body["reason"] == "NotAcceptable"
    events = raw.watch(watch, accept="application/yaml, application/json")
    assert next(events)["type"] == "ADDED"
    events.close()
