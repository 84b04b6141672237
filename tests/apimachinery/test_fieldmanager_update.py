"""``update_managed_fields`` of an update works out only the fields under the top-level (and
``metadata``) fields that changed: its managedFields must be those of the straightforward
computation over the whole object (``_reference`` below, the implementation it replaced), byte for
byte, whatever the entries hold (Apply entries, stale fields, trees in another order, duplicate
managers, fields owned under another schema or with or without ``.`` nodes)."""

from __future__ import annotations

import copy
import json
import types
from collections.abc import Mapping
from typing import Any
from unittest import mock

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from samplecontroller.apimachinery import fieldmanager
from samplecontroller.apimachinery.fieldmanager import (
    apply,
    field_set,
    fields_v1_to_paths,
    paths_to_fields_v1,
    update_managed_fields,
)

DEPLOYMENT = "io.k8s.api.apps.v1.Deployment"
NOW = "2030-01-01T00:00:00Z"


_MISSING: Any = object()
_encode = msgspec.json.Encoder().encode


def _child(value: Any, element: str) -> Any:
    if element.startswith("f:"):
        return value.get(element[2:], _MISSING) if isinstance(value, dict) else _MISSING
    if element.startswith("k:") and isinstance(value, list):
        try:
            wanted = json.loads(element[2:])
        except ValueError:
            return _MISSING
        for item in value:
            if isinstance(item, dict) and all(item.get(k) == v for k, v in wanted.items()):
                return item
        return _MISSING
    if element.startswith("v:") and isinstance(value, list):
        try:
            member = json.loads(element[2:])
        except ValueError:
            return _MISSING
        return member if member in value else _MISSING
    if element == ".":
        return value
    return _MISSING


def _strict_equal(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_strict_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(_strict_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _same_json(a: Any, b: Any) -> bool:
    try:
        if _encode(a) == _encode(b):
            return True
    except (TypeError, ValueError):
        pass
    return _strict_equal(a, b)


def _changed_paths(old: Mapping[str, Any], new: Mapping[str, Any], paths: set[Any]) -> set[Any]:
    """Each path looked up in both objects, prefix by prefix: unchanged under a prefix whose values
    are equal as JSON; changed when missing from ``old`` or (not a ``.``) of another value."""
    out = set()
    for path in paths:
        before: Any = old
        after: Any = new
        unchanged = False
        for element in path:
            before, after = _child(before, element), _child(after, element)
            unchanged = before is not _MISSING and after is not _MISSING and before == after and _same_json(before, after)
            if unchanged:
                break
        if unchanged:
            continue
        if before is _MISSING or (path[-1] != "." and not (type(before) is type(after) and before == after)):
            out.add(path)
    return out


def _reference(old: Mapping[str, Any] | None, new: Mapping[str, Any], manager: str, operation: str = "Update",
               subresource: str = "", definition_name: str | None = None,
               schema: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The whole-object computation: every entry's fields parsed, ``field_set`` of all of ``new``,
    every path of it compared with ``old``."""
    result = copy.deepcopy(dict(new))
    requested = (new.get("metadata") or {}).get("managedFields", None)
    if isinstance(requested, list) and not requested and old is not None:
        result.setdefault("metadata", {}).pop("managedFields", None)
        return result
    raw = ((old or {}).get("metadata") or {}).get("managedFields") or []
    entries = [dict(e) for e in raw if isinstance(e, dict)]
    new_paths = field_set(result, definition_name, schema, nodes=operation == "Update")
    changed = _changed_paths(old or {}, result, new_paths) if old is not None else new_paths

    def same(entry: Mapping[str, Any]) -> bool:
        return (entry.get("manager") == manager and entry.get("operation") == operation
                and (entry.get("subresource") or "") == subresource)

    updated: list[dict[str, Any]] = []
    for entry in entries:
        before = fields_v1_to_paths(entry.get("fieldsV1") or {})
        paths = before & new_paths
        if not same(entry):
            paths -= changed
        updated.append(entry if paths == before else {**entry, "fieldsV1": paths_to_fields_v1(paths)})
    mine = next((e for e in updated if same(e)), None)
    owned = (fields_v1_to_paths(mine.get("fieldsV1") or {}) if mine else set()) | changed
    if owned or mine is not None:
        made: dict[str, Any] = {"manager": manager, "operation": operation,
                                "apiVersion": str(result.get("apiVersion") or ""), "time": NOW,
                                "fieldsType": "FieldsV1", "fieldsV1": paths_to_fields_v1(owned)}
        if subresource:
            made["subresource"] = subresource
        index = next((i for i, e in enumerate(updated) if same(e)), len(updated))
        updated[index:index + 1] = [made]
    kept = [e for e in updated if e.get("fieldsV1")]
    meta = result.setdefault("metadata", {})
    if kept:
        meta["managedFields"] = kept
    else:
        meta.pop("managedFields", None)
    return result


def _check(old: dict[str, Any] | None, new: dict[str, Any], manager: str, operation: str = "Update",
           subresource: str = "", definition_name: str | None = None,
           schema: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Both computations agree, as JSON text (key order included); inputs untouched; the result."""
    old_text, new_text = json.dumps(old), json.dumps(new)
    with mock.patch.object(fieldmanager, "_now", lambda: NOW):
        fast = update_managed_fields(old, new, manager, operation, subresource, definition_name, schema)
        in_place = update_managed_fields(old, copy.deepcopy(new), manager, operation, subresource, definition_name,
                                         schema, in_place=True)
    expected = _reference(old, new, manager, operation, subresource, definition_name, schema)
    assert json.dumps(fast) == json.dumps(expected)
    assert json.dumps(in_place) == json.dumps(expected)
    assert json.dumps(old) == old_text and json.dumps(new) == new_text, "inputs are never modified"
    return fast


# ---------------------------------------------------------------------------- examples


def _deployment() -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default", "uid": "u1", "resourceVersion": "1",
                         "labels": {"app": "web"}, "annotations": {"a": "1"}},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                     "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [
                                      {"name": "web", "image": "nginx", "ports": [{"containerPort": 80}],
                                       "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
                                      {"name": "side", "image": "envoy", "args": ["-v"]}]}}},
            "status": {"replicas": 1, "conditions": [{"type": "Available", "status": "True"}]}}


def test_a_status_update_keeps_the_spec_owners_fields_object() -> None:
    created = _check(None, {k: v for k, v in _deployment().items() if k != "status"}, "creator",
                     definition_name=DEPLOYMENT)
    status = copy.deepcopy(created)
    status["status"] = {"replicas": 1}
    out = _check(created, status, "kcm", subresource="status", definition_name=DEPLOYMENT)
    assert out["metadata"]["managedFields"][0]["fieldsV1"] is created["metadata"]["managedFields"][0]["fieldsV1"]
    assert fields_v1_to_paths(out["metadata"]["managedFields"][1]["fieldsV1"]) == {("f:status", "f:replicas")}


def test_an_entry_losing_fields_shares_its_unchanged_parts() -> None:
    created = _check(None, _deployment(), "creator", definition_name=DEPLOYMENT)
    edited = copy.deepcopy(created)
    edited["metadata"]["annotations"]["a"] = "2"
    out = _check(created, edited, "annotator", definition_name=DEPLOYMENT)
    before, after = (obj["metadata"]["managedFields"][0]["fieldsV1"] for obj in (created, out))
    assert after is not before and after["f:spec"] is before["f:spec"]
    assert "f:a" not in after["f:metadata"]["f:annotations"]


@pytest.mark.parametrize("fields", [
    {"f:spec": {"f:replicas": {}, "f:gone": {}}},  # a field the object does not set
    {"f:spec": {"f:template": {}}},  # a struct owned as a leaf
    {"f:spec": {"f:strategy": {".": {}, "f:type": {}}}},  # a "." of a built-in value struct
    {"f:spec": {"f:replicas": {}, "f:paused": {}}, "f:apiVersion": {}, "f:kind": {}},
    {"f:metadata": {}, "f:spec": {"f:replicas": {}}},
    {"f:metadata": {"f:name": {}, ".": {}, "f:labels": {".": {}, "f:app": {}}}},
    {"f:spec": {"f:selector": {"f:matchLabels": {}}}},  # inside an atomic map
    {"f:spec": {"f:template": {"f:spec": {"f:containers": {'k:{"name":"web"}': {"f:args": {}}}}}}},
    {"f:spec": {"f:template": {"f:spec": {"f:containers": {'k:{"name":"nope"}': {".": {}}}}}}},
    {"f:spec": {"f:template": {"f:spec": {"f:containers": {'k:{"name":"web"}': {}}}}}},
    {"f:spec": {"f:template": {"f:spec": {"f:containers": {}}}}},
    {"f:spec": {"f:template": {"f:spec": {"f:containers": {'k:{"name":"web"}': {"f:ports": {
        'k:{"containerPort":80,"protocol":"TCP"}': {".": {}}}}}}}}},
    {"f:spec": {"f:replicas": {"f:x": {}}}},  # below a scalar
    {"f:spec": {"f:replicas": None, "f:paused": "x"}},  # leaves that are not {}
    {"f:spec": {"f:template": {"f:spec": {"f:containers": {'k:{"name":"web"}': {"f:image": {}, ".": {}}}}}}},  # order
    {"f:status": {"f:replicas": {}, "f:conditions": {'k:{"type":"Available"}': {"f:status": {}}}}},
    {"f:spec": {"f:replicas": {}, 5: {}}, 7: {}},  # keys that are not strings (an in-process caller's)
    "not a tree",
    {},
])
def test_stale_or_odd_entries_are_cut_as_before(fields: Any) -> None:
    created = _check(None, _deployment(), "creator", definition_name=DEPLOYMENT)
    stale = copy.deepcopy(created)
    stale["metadata"]["managedFields"].append({"manager": "odd", "operation": "Update", "apiVersion": "apps/v1",
                                               "fieldsType": "FieldsV1", "fieldsV1": fields})
    for edit in ("status", "annotation", "image", "nothing"):
        new = copy.deepcopy(stale)
        if edit == "status":
            new["status"]["replicas"] = 3
        elif edit == "annotation":
            new["metadata"]["annotations"]["a"] = "3"
        elif edit == "image":
            new["spec"]["template"]["spec"]["containers"][0]["image"] = "httpd"
        for manager in ("odd", "other"):
            _check(stale, new, manager, definition_name=DEPLOYMENT)
            _check(stale, new, manager, subresource="status", definition_name=DEPLOYMENT)


@pytest.mark.parametrize("fields", [
    {"f:spec": {"f:tags": {'v:"x"': {}, 'v:"y"': {}}}},
    {"f:spec": {"f:tags": {'v:"y"': {}, 'v:"x"': {}}}},  # order
    {"f:spec": {"f:tags": {'v:"x"': {"f:y": {}}}}},  # below a member
    {"f:spec": {"f:tags": {'v:"x"': None}}},
    {"f:spec": {"f:tags": {'v:"q"': {}}}},
    {"f:spec": {"f:tags": {}}},
    {"f:spec": {"f:items": {'k:{"name":"a"}': {".": {}, "f:tags": {'v:"x"': {}}}}}},
    {"f:spec": {"f:items": {'k:{"name":"a"}': {"f:sub": {'k:{"k":"a","p":1}': {".": {}}}}}}},
    {"f:spec": {"f:items": {'k:{"name":"a"}': {"f:sub": {'k:{"k":"a"}': {".": {}}}}}}},
    {"f:spec": {"f:fixed": {"f:a": {}}}},
    {"f:spec": {"f:fixed": {}, "f:atomic": {}}},
    {"f:spec": {"f:atomic": {"i:0": {}}}},
    {"f:spec": {".": {}, "f:spec": {".": {}, "f:a": {}}}},
    {"f:spec": {".": {}, "f:spec": {"f:a": {".": {}}}}},
])
def test_stale_or_odd_entries_of_a_custom_resource(fields: Any) -> None:
    obj = {"apiVersion": "v1", "kind": "K", "metadata": {"name": "o", "finalizers": ["f1"]},
           "spec": {"tags": ["x", "y"], "items": [{"name": "a", "tags": ["x"], "sub": [{"k": "a", "p": 1}]},
                                                  {"name": "a", "tags": ["y"]}],
                    "fixed": {"a": 1}, "atomic": [{"a": 1}], "spec": {"a": {}}},
           "status": {"conditions": [{"type": "Ready"}]}}
    created = _check(None, obj, "creator", schema=CRD_SCHEMA)
    created["metadata"]["managedFields"].insert(0, {"manager": "odd", "operation": "Update", "apiVersion": "v1",
                                                    "fieldsType": "FieldsV1", "fieldsV1": fields})
    for edit in ("status", "finalizers", "spec"):
        new = copy.deepcopy(created)
        if edit == "status":
            new["status"]["conditions"][0]["status"] = "True"
        elif edit == "finalizers":
            new["metadata"]["finalizers"].append("f2")
        else:
            new["spec"]["tags"].reverse()
        for manager in ("odd", "other"):
            _check(created, new, manager, schema=CRD_SCHEMA)
            _check(created, new, manager, subresource="status", schema=CRD_SCHEMA)


def test_entries_made_under_another_schema_or_by_apply() -> None:
    # made without a schema (lists atomic, no "." nodes), updated with the Deployment's
    created = _check(None, _deployment(), "creator", "Apply")
    new = copy.deepcopy(created)
    new["status"]["replicas"] = 5
    _check(created, new, "kcm", subresource="status", definition_name=DEPLOYMENT)
    # and the other way round
    created = _check(None, _deployment(), "creator", definition_name=DEPLOYMENT)
    _check(created, new, "kcm", "Apply", subresource="status")
    applied = apply(created, {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                              "spec": {"replicas": 2, "paused": None, "template": {"spec": {"containers": [
                                  {"name": "web", "image": "nginx", "ports": [{"containerPort": 81}]}]}}}},
                    "kubectl", True, DEPLOYMENT)
    for key in ("status", "spec"):
        new = copy.deepcopy(applied)
        new[key]["replicas"] = 7
        _check(applied, new, "someone", definition_name=DEPLOYMENT)


def test_an_explicitly_empty_list_still_resets() -> None:
    created = _check(None, _deployment(), "creator", definition_name=DEPLOYMENT)
    new = copy.deepcopy(created)
    new["metadata"]["managedFields"] = []
    assert "managedFields" not in _check(created, new, "x", definition_name=DEPLOYMENT)["metadata"]


def test_an_object_without_metadata() -> None:
    created = _check(None, _deployment(), "creator", definition_name=DEPLOYMENT)
    new = copy.deepcopy(created)
    del new["metadata"]
    _check(created, new, "x", definition_name=DEPLOYMENT)
    _check({**new, "metadata": None}, created, "z", definition_name=DEPLOYMENT)


def test_an_old_object_that_is_another_mapping() -> None:
    created = _check(None, _deployment(), "creator", definition_name=DEPLOYMENT)
    new = copy.deepcopy(created)
    new["status"]["replicas"] = 4
    with mock.patch.object(fieldmanager, "_now", lambda: NOW):
        out = update_managed_fields(types.MappingProxyType(created), new, "x", definition_name=DEPLOYMENT)
    assert json.dumps(out) == json.dumps(_reference(types.MappingProxyType(created), new, "x",
                                                    definition_name=DEPLOYMENT))


# ---------------------------------------------------------------------------- generated cases

CRD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {"type": "object", "properties": {
            "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "properties": {
                          "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                          "sub": {"type": "array", "x-kubernetes-list-type": "map",
                                  "x-kubernetes-list-map-keys": ["k", "p"], "items": {"type": "object"}}}}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "fixed": {"type": "object", "x-kubernetes-map-type": "atomic"},
            "atomic": {"type": "array", "items": {"type": "object"}},
            "spec": {"type": "object", "additionalProperties": {"type": "object"}},
        }},
        "status": {"type": "object", "properties": {
            "conditions": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"],
                           "items": {"type": "object"}}}},
    },
}

KEYS = ["a", "b", "name", "k", "p", "type", "items", "tags", "fixed", "atomic", "spec", "status", "template",
        "containers", "ports", "env", "value", "image", "containerPort", "protocol", "."]
_scalars = st.one_of(st.none(), st.booleans(), st.sampled_from([0, 1, 2, 1.0, 2.5]),
                     st.sampled_from(["a", "b", "c", "TCP", 'q"uote', "ü"]))
_json = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)), max_leaves=12)
_names = st.sampled_from(["a", "b", "c"])
_item = st.fixed_dictionaries({"name": _names}, optional={
    "value": _scalars, "tags": st.lists(st.sampled_from(["x", "y", "z"]), max_size=3),
    "sub": st.lists(st.fixed_dictionaries({"k": _names}, optional={"p": st.sampled_from([1, 2]), "v": _json}),
                    max_size=3),
    "extra": _json})
_custom_spec = st.fixed_dictionaries({}, optional={
    "items": st.lists(_item, max_size=4), "tags": st.lists(st.sampled_from(["x", "y", 1, True]), max_size=4),
    "fixed": st.dictionaries(st.sampled_from(KEYS), _json, max_size=3), "atomic": st.lists(_json, max_size=3),
    "spec": st.dictionaries(st.sampled_from(KEYS), _json, max_size=3), "other": _json})
_conditions = st.lists(st.fixed_dictionaries({"type": st.sampled_from(["Ready", "Available"])},
                                             optional={"status": st.sampled_from(["True", "False"]), "x": _json}),
                       max_size=3)
_container = st.fixed_dictionaries({"name": _names}, optional={
    "image": st.sampled_from(["nginx", "httpd"]), "args": st.lists(_scalars, max_size=2),
    "ports": st.lists(st.fixed_dictionaries({"containerPort": st.sampled_from([80, 81])},
                                            optional={"protocol": st.sampled_from(["TCP", "UDP"]),
                                                      "name": _names}), max_size=3),
    "env": st.lists(st.fixed_dictionaries({"name": _names}, optional={"value": _scalars, "valueFrom": _json}),
                    max_size=3),
    "resources": st.dictionaries(st.sampled_from(["limits", "requests"]), _json, max_size=2)})
_deployment_spec = st.fixed_dictionaries({}, optional={
    "replicas": st.sampled_from([1, 2, 1.0, None]), "paused": st.booleans(),
    "selector": st.fixed_dictionaries({"matchLabels": st.dictionaries(_names, _names, max_size=2)}),
    "strategy": st.dictionaries(st.sampled_from(["type", "rollingUpdate"]), _json, max_size=2),
    "template": st.fixed_dictionaries({}, optional={
        "metadata": st.fixed_dictionaries({}, optional={"labels": st.dictionaries(_names, _names, max_size=2)}),
        "spec": st.fixed_dictionaries({}, optional={"containers": st.lists(_container, max_size=3),
                                                    "volumes": st.lists(_json, max_size=2)})})})


def _meta() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({"name": st.just("o"), "resourceVersion": st.sampled_from(["1", "2"])}, optional={
        "labels": st.dictionaries(_names, st.one_of(_names, st.none()), max_size=3),
        "annotations": st.dictionaries(st.sampled_from(["x", "y", "z/w"]), _names, max_size=3),
        "finalizers": st.lists(st.sampled_from(["f1", "f2"]), max_size=3),
        "ownerReferences": st.lists(st.fixed_dictionaries({"uid": _names}, optional={"name": _names, "x": _json}),
                                    max_size=2),
        "generation": st.integers(1, 3), "odd": _json})


def _objects(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    spec = {"deployment": _deployment_spec, "custom": _custom_spec, "empty": _custom_spec, "json": _json}[kind]
    status = st.fixed_dictionaries({}, optional={"conditions": _conditions, "replicas": _scalars, "x": _json})
    return st.fixed_dictionaries({"apiVersion": st.just("v1"), "kind": st.just("K"), "metadata": _meta()},
                                 optional={"spec": spec, "status": status, "data": _json, "other": _json})


def _mutate(value: Any, data: st.DataObject, depth: int = 0) -> Any:
    """``value`` with one random edit somewhere inside it (a fresh copy: ``value`` is not changed)."""
    value = copy.deepcopy(value)
    if isinstance(value, dict) and value and depth < 6:
        key = data.draw(st.sampled_from(sorted(value)))
        action = data.draw(st.sampled_from(["deeper", "deeper", "drop", "replace", "none", "add"]))
        if action == "deeper":
            value[key] = _mutate(value[key], data, depth + 1)
        elif action == "drop":
            del value[key]
        elif action == "replace":
            value[key] = data.draw(_json)
        elif action == "none":
            value[key] = None
        else:
            value[data.draw(st.sampled_from(KEYS))] = data.draw(_json)
        return value
    if isinstance(value, list) and value and depth < 6:
        action = data.draw(st.sampled_from(["deeper", "deeper", "reverse", "drop", "append", "duplicate"]))
        index = data.draw(st.integers(0, len(value) - 1))
        if action == "deeper":
            value[index] = _mutate(value[index], data, depth + 1)
        elif action == "reverse":
            value.reverse()
        elif action == "drop":
            del value[index]
        elif action == "append":
            value.append(data.draw(_json))
        else:
            value.append(copy.deepcopy(value[index]))
        return value
    return data.draw(st.one_of(_scalars, _json, st.sampled_from([{}, []])))


def _edit(obj: dict[str, Any], data: st.DataObject) -> dict[str, Any]:
    """A new version of ``obj``: a few random edits of its status, spec, labels, annotations... or none."""
    new = copy.deepcopy(obj)
    for _ in range(data.draw(st.integers(0, 3))):
        where = data.draw(st.sampled_from(["spec", "status", "metadata", "data", "whole", "other"]))
        if where == "whole":
            whole = _mutate({k: v for k, v in new.items() if k != "metadata"}, data)
            new = {**(whole if isinstance(whole, dict) else {}), "metadata": new["metadata"]}
        elif where == "metadata":
            meta = new["metadata"]
            kept = {k: meta[k] for k in ("name", "resourceVersion", "managedFields") if k in meta}
            edited = _mutate({k: v for k, v in meta.items() if k not in kept}, data)
            new["metadata"] = {**(edited if isinstance(edited, dict) else {}), **kept}
        else:
            new[where] = _mutate(new.get(where, {}), data)
    new["metadata"]["resourceVersion"] = str(int(new["metadata"].get("resourceVersion") or 1) + 1)
    return new


def _odd_entry(obj: dict[str, Any], data: st.DataObject) -> dict[str, Any]:
    """An entry of odd fields: some of the object's, with stale ones, in any order."""
    paths = sorted(field_set(obj, nodes=data.draw(st.booleans())))
    picked = data.draw(st.lists(st.sampled_from(paths), max_size=6)) if paths else []
    picked += data.draw(st.lists(st.sampled_from([("f:spec", "f:gone"), ("f:kind",), ("f:metadata",),
                                                  ("f:metadata", "f:uid"), ("f:status", "."),
                                                  ("f:spec", "f:items", 'k:{"name":"z"}', ".")]), max_size=2))
    tree = paths_to_fields_v1(picked)
    if data.draw(st.booleans()):
        tree = dict(reversed(list(tree.items())))
    return {"manager": data.draw(st.sampled_from(["m1", "m2", "odd"])), "operation": "Update", "apiVersion": "v1",
            "fieldsType": "FieldsV1", "fieldsV1": tree}


SCHEMAS: dict[str, tuple[str | None, dict[str, Any] | None]] = {
    "deployment": (DEPLOYMENT, None), "custom": (None, CRD_SCHEMA), "json": (None, None), "empty": (None, {})}


def _history(kind: str, data: st.DataObject) -> None:
    """Writes of random managers to a random object, each checked against the reference."""
    obj = data.draw(_objects(kind))
    definition, schema = SCHEMAS[kind]
    current = _check(None, obj, "creator", definition_name=definition, schema=schema)
    for _ in range(data.draw(st.integers(1, 5))):
        step = data.draw(st.sampled_from(["update", "update", "update", "apply", "odd", "schema"]))
        if step == "apply":
            body = {k: v for k, v in _edit(current, data).items() if k != "status"}
            body["metadata"] = {k: v for k, v in body["metadata"].items() if k not in ("managedFields", "resourceVersion")}
            try:
                current = apply(current, body, data.draw(st.sampled_from(["m1", "applier"])), True, definition,
                                schema=schema)
            except ValueError:
                pass
            continue
        if step == "odd":
            current = copy.deepcopy(current)
            current["metadata"].setdefault("managedFields", []).insert(data.draw(st.integers(0, 2)),
                                                                       _odd_entry(current, data))
            continue
        new = _edit(current, data)
        manager = data.draw(st.sampled_from(["creator", "m1", "m2", "odd"]))
        operation = data.draw(st.sampled_from(["Update", "Update", "Apply"]))
        subresource = data.draw(st.sampled_from(["", "", "status"]))
        if step == "schema":  # the kind's schema changed since the entries were made
            other = data.draw(st.sampled_from(sorted(SCHEMAS)))
            _check(current, new, manager, operation, subresource, *SCHEMAS[other])
            continue
        current = _check(current, new, manager, operation, subresource, definition, schema)


_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(st.data())
def test_generated_deployments(data: st.DataObject) -> None:
    _history("deployment", data)


@_SETTINGS
@given(st.data())
def test_generated_custom_resources(data: st.DataObject) -> None:
    _history("custom", data)


@_SETTINGS
@given(st.data())
def test_generated_json_without_a_schema(data: st.DataObject) -> None:
    _history("json", data)
    _history("empty", data)
