"""Metadata and built-in validation with Kubernetes' messages; immutable fields on update."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from samplecontroller.apiserver.strategies.validation import validate_builtin
from samplecontroller.apiserver.validation import (
    finalizer_warnings,
    qualified_name_errors,
    validate_name,
    validate_object_meta,
    validate_update,
)

SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
                 "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
                 "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def _strs(errors: list[Any]) -> list[str]:
    return [str(e) for e in errors]


def test_name_rules() -> None:
    assert validate_name("example-foo", True, "Foo") == []
    assert validate_name("a.b.c", True, "Foo") == []
    assert _strs(validate_name("Foo_Bar", True, "Foo")) == [f'metadata.name: Invalid value: "Foo_Bar": {SUBDOMAIN_MSG}']
    assert _strs(validate_name("", True, "Foo")) == ["metadata.name: Required value: name or generateName is required"]
    assert any("must be no more than 253 characters" in s for s in _strs(validate_name("a" * 254, True, "Foo")))
    assert _strs(validate_name("..", True, "Foo"))[0] == "metadata.name: Invalid value: \"..\": may not be '..'"
    assert "RFC 1123 label" in _strs(validate_name("a.b", False, "Namespace"))[0]
    assert "DNS-1035 label" in _strs(validate_name("1abc", True, "Service"))[0]


def test_qualified_names() -> None:
    assert qualified_name_errors("app.kubernetes.io/name") == []
    assert qualified_name_errors("a/b/c") != []
    assert qualified_name_errors("/x") == ["prefix part must be non-empty"]
    assert qualified_name_errors("Bad_Prefix/x")[0].startswith("prefix part a lowercase RFC 1123 subdomain")


def test_object_meta() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "ok", "namespace": "default", "labels": {"app": "web", "bad key": "x", "v": "not ok!"},
        "annotations": {"fine/key": "v"},
        "ownerReferences": [{"apiVersion": "v1", "kind": "Foo", "name": "a", "uid": "1", "controller": True},
                            {"apiVersion": "", "kind": "Foo", "name": "b", "uid": "", "controller": True}],
        "finalizers": ["kubernetes", "example.com/cleanup", "plain", "no spaces!"]}}
    messages = _strs(validate_object_meta(obj, namespaced=True))
    assert any(m.startswith('metadata.labels: Invalid value: "bad key": name part must consist') for m in messages)
    assert any(m.startswith('metadata.labels: Invalid value: "not ok!": a valid label must be an empty string') for m in messages)
    assert 'metadata.ownerReferences[1].apiVersion: Invalid value: "": version must not be empty' in messages
    assert 'metadata.ownerReferences[1].uid: Invalid value: "": uid must not be empty' in messages
    assert "metadata.ownerReferences: Invalid value: 2: Only one reference can have Controller set to true" in messages
    assert any(m.startswith('metadata.finalizers[3]: Invalid value: "no spaces!": name part must consist') for m in messages)
    assert len(messages) == 6


def test_unqualified_finalizers_are_accepted_with_a_warning() -> None:
    """Kubernetes accepts any qualified name as a finalizer and warns about names without a
    path, but only for finalizers the write adds (standard ones never warn)."""
    new = {"metadata": {"name": "x", "finalizers": ["myfinalizer", "kept", "example.com/ok", "orphan",
                                                    "customresourcecleanup.apiextensions.k8s.io"]}}
    assert validate_object_meta({"apiVersion": "v1", "kind": "ConfigMap", **new}, namespaced=False) == []
    assert finalizer_warnings(new, {"metadata": {"finalizers": ["kept"]}}) == [
        'metadata.finalizers: "myfinalizer": prefer a domain-qualified finalizer name including a path (/) to avoid '
        "accidental conflicts with other finalizer writers"]


def test_namespace_scope_and_generate_name() -> None:
    assert _strs(validate_object_meta({"metadata": {"generateName": "foo-"}}, namespaced=True)) == ["metadata.namespace: Required value"]
    assert _strs(validate_object_meta({"metadata": {"name": "n", "namespace": "x"}}, namespaced=False)) == [
        "metadata.namespace: Forbidden: not allowed on this type"]
    assert _strs(validate_object_meta({"metadata": {}})) == ["metadata.name: Required value: name or generateName is required"]
    assert validate_object_meta({"metadata": "junk"}) != []


def _deployment() -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default", "uid": "u1"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}


def test_deployment_rules() -> None:
    assert validate_builtin("apps", "Deployment", _deployment()) == []
    bad = _deployment()
    bad["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    bad["spec"]["template"]["spec"]["containers"] = [{"name": "c"}, {"image": "x"}]
    bad["spec"]["replicas"] = -1
    assert _strs(validate_builtin("apps", "Deployment", bad)) == [
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"other"}: `selector` does not match template `labels`',
        "spec.template.spec.containers[0].image: Required value",
        "spec.template.spec.containers[1].name: Required value",
    ]
    no_selector = _deployment()
    del no_selector["spec"]["selector"]
    assert "spec.selector: Required value" in _strs(validate_builtin("apps", "Deployment", no_selector))
    assert _strs(validate_builtin("apps", "Deployment", {"spec": "junk"})) == ["spec.selector: Required value", "spec.template.spec.containers: Required value"]


@pytest.mark.parametrize(("group", "kind", "obj", "expected"), [
    ("", "Pod", {"spec": {}}, ["spec.containers: Required value"]),
    ("", "Service", {"spec": {"type": "ClusterIP"}}, ["spec.ports: Required value"]),
    ("coordination.k8s.io", "Lease", {"spec": {"leaseDurationSeconds": 0}}, ["spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"]),
    ("", "Event", {"metadata": {"namespace": "a"}, "involvedObject": {"namespace": "b"}}, ['involvedObject.namespace: Invalid value: "b": does not match event.namespace']),
    ("", "ConfigMap", {"data": {"good.key": "1"}}, []),
    ("samplecontroller.k8s.io", "Foo", {"anything": 1}, []),
])
def test_other_builtins(group: str, kind: str, obj: dict[str, Any], expected: list[str]) -> None:
    assert _strs(validate_builtin(group, kind, obj)) == expected


def test_crd_rules(foo_crd: dict[str, Any]) -> None:
    assert validate_builtin("apiextensions.k8s.io", "CustomResourceDefinition", foo_crd) == []
    bad = copy.deepcopy(foo_crd)
    bad["metadata"]["name"] = "wrong"
    bad["spec"]["versions"][0]["storage"] = False
    bad["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["x"] = {"properties": {}}
    messages = _strs(validate_builtin("apiextensions.k8s.io", "CustomResourceDefinition", bad))
    assert 'metadata.name: Invalid value: "wrong": must be spec.names.plural+"."+spec.group' in messages
    assert "spec.versions: Invalid value: 0: must have exactly one version marked as storage version" in messages
    assert ("spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[x].type: Required value: "
            "must not be empty for specified object fields") in messages


def test_update_immutables(foo_crd: dict[str, Any]) -> None:
    old = _deployment()
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 5
    del new["metadata"]["uid"]
    assert validate_update(old, new) == []
    new["metadata"]["name"] = "other"
    new["spec"]["selector"] = {"matchLabels": {"app": "x"}}
    assert _strs(validate_update(old, new)) == [
        'metadata.name: Invalid value: "other": field is immutable',
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"x"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable",
    ]
    crd2 = copy.deepcopy(foo_crd)
    crd2["spec"]["group"] = "other.example.com"
    assert _strs(validate_update(foo_crd, crd2)) == ['spec.group: Invalid value: "other.example.com": field is immutable']
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "immutable": True, "data": {"a": "1"}}
    cm2 = {**cm, "data": {"a": "2"}}
    assert _strs(validate_update(cm, cm2)) == ["data: Forbidden: field is immutable when `immutable` is set"]


def test_new_uids_are_random_version_4_uuids() -> None:
    import uuid

    from samplecontroller.apiserver.objects import new_uid

    uids = {new_uid() for _ in range(1000)}
    assert len(uids) == 1000
    for text in list(uids)[:50]:
        parsed = uuid.UUID(text)
        assert str(parsed) == text and parsed.version == 4 and parsed.variant == uuid.RFC_4122


def test_a_trailing_newline_is_no_valid_name_label_or_key() -> None:
    """Go's ``$`` matches only at the end of the text (Python's also before a final newline)."""
    assert "RFC 1123 subdomain" in _strs(validate_name("abc\n", True, "Foo"))[0]
    assert "RFC 1123 label" in _strs(validate_name("abc\n", False, "Namespace"))[0]
    assert "DNS-1035 label" in _strs(validate_name("abc\n", True, "Service"))[0]
    assert qualified_name_errors("app\n") != [] and qualified_name_errors("example.com\n/app") != []
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ok", "namespace": "default",
                                                                  "labels": {"app": "web\n"}},
           "data": {"key\n": "v"}}
    assert any("a valid label must be" in m for m in _strs(validate_object_meta(obj, namespaced=True)))
    assert any("a valid config key" in m for m in _strs(validate_builtin("", "ConfigMap", obj)))
