"""Tables for kubectl get: columns, cells, ages and the JSONPath subset."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from samplecontroller.apiserver.tables import (
    builtin_columns,
    crd_columns,
    evaluate_jsonpath,
    human_duration,
    to_table,
)

NOW = datetime(2026, 1, 10, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(("seconds", "text"), [
    (-5, "<invalid>"), (-1, "0s"), (0, "0s"), (5, "5s"), (119, "119s"), (182, "3m2s"), (240, "4m"),
    (600, "10m"), (3 * 3600 - 1, "179m"), (5 * 3600 + 180, "5h3m"), (8 * 3600, "8h"), (47 * 3600, "47h"),
    (2 * 86400, "2d"), (2 * 86400 + 3600, "2d1h"), (10 * 86400, "10d"), (3 * 365 * 86400 + 12 * 86400, "3y12d"),
    (9 * 365 * 86400, "9y"),
])
def test_human_duration(seconds: int, text: str) -> None:
    assert human_duration(seconds) == text


def test_jsonpath_subset() -> None:
    obj = {"spec": {"replicas": 3, "items": [{"a": 1}, {"a": 2}]},
           "status": {"conditions": [{"type": "A", "status": "False"}, {"type": "Ready", "status": "True"}]}}
    assert evaluate_jsonpath(obj, ".spec.replicas") == [3]
    assert evaluate_jsonpath(obj, "{.spec.items[1].a}") == [2]
    assert evaluate_jsonpath(obj, ".spec.items[*].a") == [1, 2]
    assert evaluate_jsonpath(obj, '.status.conditions[?(@.type=="Ready")].status') == ["True"]
    assert evaluate_jsonpath(obj, ".missing.field") == []
    with pytest.raises(ValueError):
        evaluate_jsonpath(obj, ".spec[")


def _foo(name: str, replicas: Any) -> dict[str, Any]:
    return {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
            "metadata": {"name": name, "namespace": "default", "creationTimestamp": "2026-01-10T11:56:58Z"},
            "spec": {"replicas": replicas, "deploymentName": f"{name}-dep"},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}


def test_crd_table_with_printer_columns(foo_crd: dict[str, Any]) -> None:
    foo_crd["spec"]["versions"][0]["additionalPrinterColumns"] = [
        {"name": "Deployment", "type": "string", "jsonPath": ".spec.deploymentName"},
        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
        {"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status', "priority": 1},
    ]
    table = to_table([_foo("a", 2), _foo("b", "oops")], crd_columns(foo_crd, "v1alpha1"), resource_version="42",
                     continue_="tok", now=NOW)
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert table["metadata"] == {"resourceVersion": "42", "continue": "tok"}
    names = [(c["name"], c["type"], c["priority"]) for c in table["columnDefinitions"]]
    assert names == [("Name", "string", 0), ("Deployment", "string", 0), ("Replicas", "integer", 0), ("Ready", "string", 1), ("Age", "date", 0)]
    assert table["rows"][0]["cells"] == ["a", "a-dep", 2, "True", "3m2s"]
    assert table["rows"][1]["cells"][2] is None, "a value of the wrong type gives an empty cell"
    obj = table["rows"][0]["object"]
    assert obj["kind"] == "PartialObjectMetadata" and obj["apiVersion"] == "meta.k8s.io/v1"
    assert obj["metadata"]["name"] == "a" and "spec" not in obj


def test_crd_without_printer_columns_has_name_and_age(foo_crd: dict[str, Any]) -> None:
    table = to_table([_foo("a", 1)], crd_columns(foo_crd, "v1alpha1"), resource_version="1", include_object="None", now=NOW)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Age"]
    assert table["rows"] == [{"cells": ["a", "3m2s"]}]
    full = to_table([_foo("a", 1)], crd_columns(foo_crd, "v1alpha1"), resource_version="1", include_object="Object", now=NOW)
    assert full["rows"][0]["object"]["spec"]["replicas"] == 1


def test_column_dicts_accepted() -> None:
    table = to_table([_foo("a", 7)], [{"name": "R", "type": "integer", "jsonPath": ".spec.replicas"}], resource_version="1")
    assert table["rows"][0]["cells"] == [7]


@pytest.mark.parametrize(("group", "kind", "headers"), [
    ("apps", "Deployment", ["Name", "Ready", "Up-to-date", "Available", "Age"]),
    ("", "Pod", ["Name", "Ready", "Status", "Restarts", "Age"]),
    ("", "Namespace", ["Name", "Status", "Age"]),
    ("coordination.k8s.io", "Lease", ["Name", "Holder", "Age"]),
    ("apiextensions.k8s.io", "CustomResourceDefinition", ["Name", "Created At"]),
    ("", "Event", ["Last Seen", "Type", "Reason", "Object", "Message"]),
    ("", "ConfigMap", ["Name", "Data", "Age"]),
])
def test_builtin_columns(group: str, kind: str, headers: list[str]) -> None:
    assert [c.name for c in builtin_columns(group, kind) if c.priority == 0] == headers


def test_builtin_cells() -> None:
    deploy = {"metadata": {"name": "web", "creationTimestamp": "2026-01-10T11:00:00Z"},
              "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                       "template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
              "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}}
    row = to_table([deploy], builtin_columns("apps", "Deployment"), resource_version="1", now=NOW)["rows"][0]
    assert row["cells"] == ["web", "2/3", 3, 2, "60m", "c", "nginx", "app=web"]
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
           "status": {"phase": "Running", "containerStatuses": [{"ready": True, "restartCount": 2}, {"ready": False, "restartCount": 1}]}}
    cells = to_table([pod], builtin_columns("", "Pod"), resource_version="1", now=NOW)["rows"][0]["cells"]
    assert cells[:5] == ["p", "1/2", "Running", "3", "<unknown>"]
    lease = {"metadata": {"name": "l"}, "spec": {"holderIdentity": "me"}}
    assert to_table([lease], builtin_columns("coordination.k8s.io", "Lease"), resource_version="1")["rows"][0]["cells"][1] == "me"
    event = {"metadata": {"name": "e"}, "type": "Normal", "reason": "Synced", "message": "ok",
             "involvedObject": {"kind": "Foo", "name": "x"}, "lastTimestamp": "2026-01-10T11:59:55Z"}
    assert to_table([event], builtin_columns("", "Event"), resource_version="1", now=NOW)["rows"][0]["cells"] == [
        "5s", "Normal", "Synced", "foo/x", "", "", "ok", "<unknown>", 0, "e"]
