"""Server-side apply: ownership, conflicts with Kubernetes' message, force, removal of dropped fields."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from samplecontroller.apimachinery import fieldmanager
from samplecontroller.apiserver.managedfields import (
    ApplyConflict,
    apply,
    field_set,
    fields_v1_to_paths,
    format_path,
    paths_to_fields_v1,
    update_managed_fields,
)

DEPLOYMENT = "io.k8s.api.apps.v1.Deployment"


def _deployment(replicas: int = 1) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default", "uid": "u1", "labels": {"app": "web"}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}


def _managers(obj: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["manager"], e["operation"]) for e in obj["metadata"].get("managedFields", [])]


def _owned(obj: dict[str, Any], manager: str) -> set[str]:
    for entry in obj["metadata"]["managedFields"]:
        if entry["manager"] == manager:
            return {format_path(p) for p in fields_v1_to_paths(entry["fieldsV1"])}
    return set()


def test_field_set_uses_merge_keys_and_skips_system_fields() -> None:
    fields = {format_path(p) for p in field_set(_deployment(), DEPLOYMENT)}
    assert ".spec.replicas" in fields
    assert '.spec.template.spec.containers[name="web"].image' in fields
    assert ".spec.selector" in fields, "LabelSelector is an atomic map"
    assert not any(f.startswith((".metadata.name", ".metadata.uid", ".apiVersion", ".kind")) for f in fields)


def test_fields_v1_round_trip() -> None:
    paths = field_set(_deployment(), DEPLOYMENT)
    tree = paths_to_fields_v1(paths)
    assert tree["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"web"}']["."] == {}
    assert fields_v1_to_paths(tree) == paths


def test_create_records_an_update_entry() -> None:
    obj = update_managed_fields(None, _deployment(), "kubectl-client-side-apply", "Update", definition_name=DEPLOYMENT)
    entry = obj["metadata"]["managedFields"][0]
    assert entry["manager"] == "kubectl-client-side-apply" and entry["operation"] == "Update"
    assert entry["apiVersion"] == "apps/v1" and entry["fieldsType"] == "FieldsV1" and entry["time"].endswith("Z")
    assert entry["fieldsV1"]["f:spec"]["f:replicas"] == {}


def test_update_moves_changed_fields_to_the_updater() -> None:
    created = update_managed_fields(None, _deployment(), "creator", "Update", definition_name=DEPLOYMENT)
    changed = copy.deepcopy(created)
    changed["spec"]["replicas"] = 4
    updated = update_managed_fields(created, changed, "scaler", "Update", definition_name=DEPLOYMENT)
    assert _owned(updated, "scaler") == {".spec.replicas"}
    assert ".spec.replicas" not in _owned(updated, "creator")
    assert ".spec.selector" in _owned(updated, "creator")


def test_server_side_apply_conflict_message_and_force() -> None:
    live = update_managed_fields(None, _deployment(), "kubectl-client-side-apply", "Update", definition_name=DEPLOYMENT)
    applied = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 3}}
    with pytest.raises(ApplyConflict) as info:
        apply(live, applied, "kubectl", False, DEPLOYMENT)
    assert str(info.value) == 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas'
    assert info.value.causes() == [{"reason": "FieldManagerConflict", "field": ".spec.replicas",
                                    "message": 'conflict with "kubectl-client-side-apply" using apps/v1'}]
    forced = apply(live, applied, "kubectl", True, DEPLOYMENT)
    assert forced["spec"]["replicas"] == 3
    assert _owned(forced, "kubectl") == {".spec.replicas"}
    assert ".spec.replicas" not in _owned(forced, "kubectl-client-side-apply")
    assert forced["metadata"]["uid"] == "u1"


def test_same_value_is_shared_not_a_conflict() -> None:
    live = update_managed_fields(None, _deployment(), "other", "Update", definition_name=DEPLOYMENT)
    applied = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 1}}
    out = apply(live, applied, "kubectl", False, DEPLOYMENT)
    assert ".spec.replicas" in _owned(out, "kubectl") and ".spec.replicas" in _owned(out, "other")


def test_several_conflicts_are_grouped_by_manager() -> None:
    live = update_managed_fields(None, _deployment(), "a", "Update", definition_name=DEPLOYMENT)
    applied = _deployment(replicas=5)
    applied["spec"]["template"]["spec"]["containers"][0]["image"] = "httpd"
    with pytest.raises(ApplyConflict) as info:
        apply(live, applied, "kubectl", False, DEPLOYMENT)
    assert str(info.value) == (
        'Apply failed with 2 conflicts: conflicts with "a" using apps/v1:\n- .spec.replicas\n'
        '- .spec.template.spec.containers[name="web"].image'
    )


def test_create_by_apply_then_drop_a_field() -> None:
    first: dict[str, Any] = {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "metadata": {"name": "x", "labels": {"a": "1", "b": "2"}},
             "spec": {"replicas": 1, "deploymentName": "d"}}
    created = apply(None, first, "kubectl", False)
    assert created["spec"] == {"replicas": 1, "deploymentName": "d"}
    assert _managers(created) == [("kubectl", "Apply")]
    second = copy.deepcopy(first)
    del second["spec"]["deploymentName"]
    del second["metadata"]["labels"]["b"]
    out = apply(created, second, "kubectl", False)
    assert out["spec"] == {"replicas": 1}
    assert out["metadata"]["labels"] == {"a": "1"}


def test_fields_owned_by_others_survive_when_dropped() -> None:
    created = apply(None, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}}, "one")
    shared = apply(created, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"b": "2"}}, "two")
    out = apply(shared, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}, "one")
    assert out["data"] == {"a": "1", "b": "2"}


def test_keyed_lists_merge_and_atomic_lists_replace() -> None:
    live = apply(None, _deployment(), "one", False, DEPLOYMENT)
    other: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
             "spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "envoy", "args": ["a"]}]}}}}
    out = apply(live, other, "two", False, DEPLOYMENT)
    assert [c["name"] for c in out["spec"]["template"]["spec"]["containers"]] == ["web", "sidecar"]
    again = copy.deepcopy(other)
    again["spec"]["template"]["spec"]["containers"][0]["args"] = ["b", "c"]
    out2 = apply(out, again, "two", False, DEPLOYMENT)
    assert out2["spec"]["template"]["spec"]["containers"][1]["args"] == ["b", "c"]


def test_bad_input_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        apply(None, [], "m")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        apply(None, {}, "")


def test_empty_managed_fields_resets() -> None:
    live = update_managed_fields(None, _deployment(), "one", "Update", definition_name=DEPLOYMENT)
    new = copy.deepcopy(live)
    new["metadata"]["managedFields"] = []
    assert "managedFields" not in update_managed_fields(live, new, "two", "Update")["metadata"]


def test_update_owns_the_maps_and_pointer_structs_it_adds() -> None:
    """Kubernetes' Update entries list ``.: {}`` for a map or pointer struct the write added (labels,
    annotations, rollingUpdate), never for value structs (spec, template); Apply entries never do."""
    old = _deployment()
    new = copy.deepcopy(old)
    new["metadata"]["annotations"] = {"a": "b"}
    new["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}
    out = update_managed_fields(old, new, "editor")
    fields = out["metadata"]["managedFields"][0]["fieldsV1"]
    assert fields["f:metadata"] == {"f:annotations": {".": {}, "f:a": {}}}
    assert fields["f:spec"] == {"f:strategy": {"f:rollingUpdate": {".": {}, "f:maxSurge": {}}, "f:type": {}}}
    created = update_managed_fields(None, _deployment(), "creator")["metadata"]["managedFields"][0]["fieldsV1"]
    assert "." not in created["f:spec"] and "." not in created["f:spec"]["f:template"]
    assert created["f:metadata"]["f:labels"] == {".": {}, "f:app": {}}
    assert ("f:metadata", "f:labels", ".") not in field_set(_deployment(), DEPLOYMENT)
    crd_schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"x": {"type": "string"}}}}}
    custom = field_set({"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "w"}, "spec": {"x": "y"}},
                       schema=crd_schema, nodes=True)
    assert custom == {("f:spec", "."), ("f:spec", "f:x")}


_json = st.recursive(st.none() | st.booleans() | st.integers(-2, 2) | st.floats(-2, 2, allow_nan=False) | st.text("ab", max_size=2),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
                     max_leaves=8)
_objects = st.fixed_dictionaries({"metadata": st.fixed_dictionaries({"name": st.just("x")}, optional={
    "labels": st.dictionaries(st.sampled_from(["a", "b"]), st.sampled_from(["1", "2"]), max_size=2)}),
    "spec": _json, "status": _json})


def _changed_paths(old: dict[str, Any], new: dict[str, Any], paths: set[Any], definition: str | None = None) -> set[Any]:
    """The changed paths ``update_managed_fields`` works out (``_collect_regions`` over every region of
    ``new``), its walk yielding ``paths`` (``field_set(new, definition, nodes=True)``) as it goes."""
    root, meta = fieldmanager._roots(definition, None)
    values, regions = fieldmanager._all_regions(new, root, meta)
    found: set[Any] = set()
    changed: set[Any] = set()
    fieldmanager._collect_regions(old, new, values, regions, found, changed, fieldmanager._mode(None, True))
    assert found == paths
    return changed


@given(old=_objects, new=_objects)
@example(old={"metadata": {"name": "x"}, "spec": {"a": 1}, "status": {"b": [1]}},
         new={"metadata": {"name": "x"}, "spec": {"a": True}, "status": {"b": [1.0]}})
def test_changed_paths_agree_with_comparing_every_path(old: dict[str, Any], new: dict[str, Any]) -> None:
    """The fields are compared in the walk that collects them, not below a prefix whose values are
    equal as JSON; the result is what comparing every path gives, types included (1, 1.0 and true
    are different values)."""
    paths = fieldmanager.field_set(new, nodes=True)
    expected = {p for p in paths if not fieldmanager._same_value(old, new, p)}
    assert _changed_paths(old, new, paths) == expected


@pytest.mark.parametrize("seed", range(8))
def test_an_item_a_manager_stops_applying_goes_whole(seed: int) -> None:
    """The item is removed, never stripped of its key first (then its other fields stay behind
    as an item without a key), whatever order the set of removed paths comes in."""
    base = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}

    def containers(*names: str) -> dict[str, Any]:
        spec = {"containers": [{"name": n, "image": f"img-{n}", "args": [n], "ports": [{"containerPort": 80}]}
                               for n in names]}
        return {**base, "spec": {"template": {"spec": spec}}}

    live = fieldmanager.apply(None, containers(*(f"a{i}" for i in range(seed + 1))), "alpha",
                              definition_name=DEPLOYMENT)
    live = fieldmanager.apply(live, containers("b"), "beta", definition_name=DEPLOYMENT)
    live = fieldmanager.apply(live, {**base}, "alpha", definition_name=DEPLOYMENT)
    assert live["spec"]["template"]["spec"]["containers"] == containers("b")["spec"]["template"]["spec"]["containers"]


_LISTS_SCHEMA = {"type": "object", "properties": {
    "metadata": {"type": "object"},
    "spec": {"type": "object", "properties": {
        "a": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["a"],
              "items": {"type": "object"}},
        "b": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "c": {"type": "object", "x-kubernetes-map-type": "atomic"}}}}}


def _pod_like(extra: Any) -> dict[str, Any]:
    obj = _deployment()
    obj["metadata"]["finalizers"] = ["b", "a", "b"]
    obj["metadata"]["annotations"] = {"z": "1", "a": None}
    obj["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "X", "name": "n", "uid": "u"}]
    obj["spec"]["template"]["spec"]["containers"] += [
        {"name": "side", "image": "busybox", "ports": [{"containerPort": 80}, {"containerPort": 80, "protocol": "UDP"}],
         "env": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}], "resources": {}},
        {"image": "nameless"}]
    obj["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}
    obj["status"] = extra
    return obj


@given(obj=_objects, extra=_json)
@example(obj={"metadata": {"name": "x"}, "spec": {"a": [{"a": 1, "b": 2}, {"a": 1, "c": None}, {"b": 1}],
                                                  "b": ["y", "x", "y"], "c": {"d": {}}}, "status": {}}, extra=None)
@example(obj={"metadata": {"name": "x"}, "spec": {"a": [{"a": 1, "z": {"q": 1}}, {"a": 1, "b": {"c": 1}}, {"a": 0}]},
              "status": {}}, extra=[{"k": {"b": 1}}])
def test_fields_v1_is_the_tree_of_the_field_set(obj: dict[str, Any], extra: Any) -> None:
    """``fields_v1`` (the create path's one walk) gives the very tree, key order included, that
    nesting ``field_set(..., nodes=True)`` gives, for built-in definitions and CRD schemas."""
    def same(got: dict[str, Any], want: dict[str, Any]) -> None:
        assert json.dumps(got) == json.dumps(want)

    for definition, schema in ((None, None), (None, _LISTS_SCHEMA), (DEPLOYMENT, None)):
        same(fieldmanager.fields_v1(obj, definition, schema),
             paths_to_fields_v1(field_set(obj, definition, schema, nodes=True)))
    pod = _pod_like(extra)
    same(fieldmanager.fields_v1(pod, DEPLOYMENT), paths_to_fields_v1(field_set(pod, DEPLOYMENT, nodes=True)))


@given(extra=_json, replicas=st.integers(0, 2), image=st.sampled_from(["nginx", "nginx:2"]),
       port=st.sampled_from([80, 80.0, 81]))
def test_changed_paths_of_keyed_lists_agree_with_comparing_every_path(extra: Any, replicas: int, image: str,
                                                                      port: Any) -> None:
    """The same for a built-in kind's keyed lists (containers, ports, env: ``k:`` elements)."""
    old = _pod_like({"a": 1})
    new = _pod_like(extra)
    new["spec"]["replicas"] = replicas
    new["spec"]["template"]["spec"]["containers"][0]["image"] = image
    new["spec"]["template"]["spec"]["containers"][1]["ports"][0]["containerPort"] = port
    paths = fieldmanager.field_set(new, DEPLOYMENT, nodes=True)
    expected = {p for p in paths if not fieldmanager._same_value(old, new, p)}
    assert _changed_paths(old, new, paths, DEPLOYMENT) == expected
