"""Strategic merge patch over the upstream schemas: merge keys, directives, errors, two-way patches."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samplecontroller.apimachinery.strategicpatch import (
    PatchError,
    StrategicPatchError,
    apply_strategic_merge_patch,
    create_two_way_merge_patch,
)

DEPLOYMENT = "io.k8s.api.apps.v1.Deployment"
POD = "io.k8s.api.core.v1.Pod"


def _deploy(containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {**spec, "template": {"spec": {"containers": containers}}}}


def test_containers_merge_by_name() -> None:
    doc = _deploy([{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}])
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "b:2"}]}}}}
    out = apply_strategic_merge_patch(doc, patch, DEPLOYMENT)
    assert out["spec"]["template"]["spec"]["containers"] == [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:2"}]
    assert doc["spec"]["template"]["spec"]["containers"][1]["image"] == "b:1", "input untouched"


def test_without_schema_lists_are_replaced() -> None:
    doc = _deploy([{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}])
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "b:2"}]}}}}
    out = apply_strategic_merge_patch(doc, patch, None)
    assert out["spec"]["template"]["spec"]["containers"] == [{"name": "b", "image": "b:2"}]


def test_kubectl_client_side_apply_patch_with_set_element_order() -> None:
    # The shape kubectl apply sends for a changed Deployment (image and env changed, replicas set).
    doc = _deploy([{"name": "web", "image": "nginx:1.25", "env": [{"name": "A", "value": "1"}]}], replicas=1)
    patch = {
        "metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
        "spec": {"replicas": 3, "template": {"spec": {
            "$setElementOrder/containers": [{"name": "web"}],
            "containers": [{"$setElementOrder/env": [{"name": "B"}, {"name": "A"}],
                            "env": [{"name": "B", "value": "2"}], "image": "nginx:1.27", "name": "web"}]}}},
    }
    out = apply_strategic_merge_patch(doc, patch, DEPLOYMENT)
    container = out["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "nginx:1.27"
    assert container["env"] == [{"name": "B", "value": "2"}, {"name": "A", "value": "1"}]
    assert out["spec"]["replicas"] == 3
    assert "kubectl.kubernetes.io/last-applied-configuration" in out["metadata"]["annotations"]


def test_delete_element_and_null_field() -> None:
    doc = _deploy([{"name": "a", "image": "a"}, {"name": "b", "image": "b", "args": ["x"]}], paused=True)
    patch = {"spec": {"paused": None, "template": {"spec": {"containers": [
        {"name": "a", "$patch": "delete"}, {"name": "b", "args": None}]}}}}
    out = apply_strategic_merge_patch(doc, patch, DEPLOYMENT)
    assert out["spec"]["template"]["spec"]["containers"] == [{"name": "b", "image": "b"}]
    assert "paused" not in out["spec"]


def test_replace_directive_in_list_and_map() -> None:
    doc = _deploy([{"name": "a", "image": "a"}, {"name": "b", "image": "b"}])
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "c"}, {"$patch": "replace"}]}}}}
    out = apply_strategic_merge_patch(doc, patch, DEPLOYMENT)
    assert out["spec"]["template"]["spec"]["containers"] == [{"name": "c", "image": "c"}]
    doc2 = {"metadata": {"labels": {"a": "1", "b": "2"}}}
    out2 = apply_strategic_merge_patch(doc2, {"metadata": {"labels": {"$patch": "replace", "c": "3"}}}, DEPLOYMENT)
    assert out2["metadata"]["labels"] == {"c": "3"}


def test_delete_directive_on_map() -> None:
    doc = {"metadata": {"labels": {"a": "1"}, "name": "x"}}
    out = apply_strategic_merge_patch(doc, {"metadata": {"labels": {"$patch": "delete"}}}, DEPLOYMENT)
    assert out == {"metadata": {"name": "x"}}


def test_retain_keys_for_strategy() -> None:
    doc = {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}}
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    out = apply_strategic_merge_patch(doc, patch, DEPLOYMENT)
    assert out["spec"]["strategy"] == {"type": "Recreate"}


def test_primitive_merge_list_and_delete_from_primitive_list() -> None:
    doc = {"metadata": {"finalizers": ["a", "b"]}}
    out = apply_strategic_merge_patch(doc, {"metadata": {"finalizers": ["c"], "$deleteFromPrimitiveList/finalizers": ["a"]}}, POD)
    assert out["metadata"]["finalizers"] == ["b", "c"]


def test_owner_references_merge_by_uid() -> None:
    doc = {"metadata": {"ownerReferences": [{"uid": "1", "name": "a"}, {"uid": "2", "name": "b"}]}}
    out = apply_strategic_merge_patch(doc, {"metadata": {"ownerReferences": [{"uid": "2", "name": "B"}]}}, POD)
    assert out["metadata"]["ownerReferences"] == [{"uid": "1", "name": "a"}, {"uid": "2", "name": "B"}]


@pytest.mark.parametrize("patch", [
    [],
    "x",
    {"$patch": "bogus"},
    {"spec": {"template": {"spec": {"containers": [{"image": "no-name"}]}}}},
    {"spec": {"template": {"spec": {"containers": ["not-a-map"]}}}},
    {"spec": {"$setElementOrder/x": "not-a-list"}},
    {"metadata": {"$deleteFromPrimitiveList/finalizers": "x"}},
    {"spec": {"strategy": {"$retainKeys": "type"}}},
])
def test_malformed_patches_raise_patch_error(patch: Any) -> None:
    with pytest.raises(PatchError):
        apply_strategic_merge_patch(_deploy([{"name": "a", "image": "a"}]), patch, DEPLOYMENT)
    assert StrategicPatchError is PatchError and issubclass(PatchError, ValueError)


def test_two_way_patch_round_trip_on_deployment() -> None:
    a = _deploy([{"name": "a", "image": "x"}, {"name": "b", "image": "y", "env": [{"name": "E", "value": "1"}]}], replicas=1)
    a["metadata"]["finalizers"] = ["f1", "f2"]
    b = copy.deepcopy(a)
    b["spec"]["replicas"] = 2
    b["metadata"]["finalizers"] = ["f2", "f3"]
    b["spec"]["template"]["spec"]["containers"] = [
        {"name": "b", "image": "z", "env": [{"name": "E", "value": "1"}, {"name": "F", "value": "2"}]},
        {"name": "c", "image": "w"},
    ]
    patch = create_two_way_merge_patch(a, b, DEPLOYMENT)
    assert {"name": "a", "$patch": "delete"} in patch["spec"]["template"]["spec"]["containers"]
    assert patch["spec"]["template"]["spec"]["$setElementOrder/containers"] == [{"name": "b"}, {"name": "c"}]
    assert apply_strategic_merge_patch(a, patch, DEPLOYMENT) == b


_name = st.sampled_from(["a", "b", "c", "d"])
_container = st.fixed_dictionaries({"name": _name, "image": st.sampled_from(["x", "y"])},
                                   optional={"args": st.lists(st.sampled_from(["1", "2"]), max_size=2)})
_containers = st.lists(_container, min_size=1, max_size=4, unique_by=lambda c: str(c["name"]))


@settings(max_examples=100, deadline=None)
@given(_containers, _containers, st.integers(0, 5), st.integers(0, 5))
def test_two_way_patch_property(c1: list[dict[str, Any]], c2: list[dict[str, Any]], r1: int, r2: int) -> None:
    a, b = _deploy(c1, replicas=r1), _deploy(c2, replicas=r2)
    assert apply_strategic_merge_patch(a, create_two_way_merge_patch(a, b, DEPLOYMENT), DEPLOYMENT) == b
