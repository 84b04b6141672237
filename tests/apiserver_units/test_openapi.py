"""OpenAPI v3 documents: what kubectl's field-validation check and explain read."""

from __future__ import annotations

from typing import Any

from samplecontroller.apiserver.openapi import (
    build_index,
    builtin_document,
    crd_document,
    crd_schema_name,
    document_hash,
)


def _patch_ops(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [item["patch"] for item in doc["paths"].values() if "patch" in item]


def _supports_field_validation(doc: dict[str, Any], group: str, version: str, kind: str) -> bool:
    # What kubectl's QueryParamVerifierV3 does: a PATCH op tagged with the GVK lists the parameter.
    for op in _patch_ops(doc):
        if op["x-kubernetes-group-version-kind"] == {"group": group, "version": version, "kind": kind}:
            return any(p["name"] == "fieldValidation" and p["in"] == "query" for p in op["parameters"])
    return False


def test_index_paths_and_hashes() -> None:
    index = build_index(["v1", "apps/v1", "samplecontroller.k8s.io/v1alpha1"], {"apps/v1": "ABC"})
    assert index["paths"]["apis/apps/v1"] == {"serverRelativeURL": "/openapi/v3/apis/apps/v1?hash=ABC"}
    assert index["paths"]["api/v1"]["serverRelativeURL"].startswith("/openapi/v3/api/v1?hash=")
    assert set(index["paths"]) == {"api/v1", "apis/apps/v1", "apis/samplecontroller.k8s.io/v1alpha1"}


def test_builtin_document_for_apps() -> None:
    doc = builtin_document("apps", "v1", [{"kind": "Deployment", "plural": "deployments", "subresources": ["status", "scale"]}])
    assert doc["openapi"].startswith("3.")
    assert _supports_field_validation(doc, "apps", "v1", "Deployment")
    schemas = doc["components"]["schemas"]
    deployment = schemas["io.k8s.api.apps.v1.Deployment"]
    assert deployment["x-kubernetes-group-version-kind"] == [{"group": "apps", "kind": "Deployment", "version": "v1"}]
    assert deployment["type"] == "object"
    pod_spec = schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert pod_spec["x-kubernetes-patch-merge-key"] == "name"
    assert pod_spec["items"] == {"$ref": "#/components/schemas/io.k8s.api.core.v1.Container"}
    assert schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"] == {"type": "string", "format": "int-or-string"}
    assert "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale" in doc["paths"]
    text = str(doc)
    assert "#/$defs/" not in text


def test_core_and_cluster_scoped_paths() -> None:
    doc = builtin_document("", "v1", [{"kind": "Namespace", "plural": "namespaces", "namespaced": False}, "ConfigMap"])
    assert "/api/v1/namespaces/{name}" in doc["paths"]
    assert "/api/v1/namespaces/{namespace}/configmaps/{name}" in doc["paths"]
    assert _supports_field_validation(doc, "", "v1", "Namespace")


def test_crd_document(foo_crd: dict[str, Any]) -> None:
    doc = crd_document(foo_crd, "v1alpha1")
    name = crd_schema_name("samplecontroller.k8s.io", "v1alpha1", "Foo")
    assert name == "io.k8s.samplecontroller.v1alpha1.Foo"
    foo = doc["components"]["schemas"][name]
    assert foo["x-kubernetes-group-version-kind"] == [{"group": "samplecontroller.k8s.io", "version": "v1alpha1", "kind": "Foo"}]
    assert foo["properties"]["spec"]["properties"]["replicas"]["maximum"] == 10
    assert foo["properties"]["metadata"]["allOf"][0]["$ref"].endswith("meta.v1.ObjectMeta")
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in doc["components"]["schemas"]
    assert _supports_field_validation(doc, "samplecontroller.k8s.io", "v1alpha1", "Foo")
    assert "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/{namespace}/foos/{name}/status" in doc["paths"]
    assert "v1alpha1" not in str(foo_crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].get("properties", {}).get("metadata", ""))


def test_documents_and_hashes_are_stable(foo_crd: dict[str, Any]) -> None:
    assert document_hash(crd_document(foo_crd, "v1alpha1")) == document_hash(crd_document(foo_crd, "v1alpha1"))
    changed = dict(foo_crd, spec={**foo_crd["spec"], "group": "other.example.com"})
    assert document_hash(crd_document(changed, "v1alpha1")) != document_hash(crd_document(foo_crd, "v1alpha1"))
    assert len(document_hash({})) == 128
