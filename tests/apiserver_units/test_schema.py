"""Structural schema validation, pruning, defaulting and the messages kubectl users see."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samplecontroller.apiserver.schema import (
    FieldError,
    apply_defaults,
    check_structural,
    format_invalid_message,
    go_number,
    prune,
    status_details_causes,
    validate,
)


def _messages(obj: Any, schema: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate(obj, schema)]


def test_foo_replicas_too_large_message(foo_schema: dict[str, Any]) -> None:
    errors = validate({"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "metadata": {"name": "x"},
                       "spec": {"replicas": 11, "deploymentName": "d"}}, foo_schema)
    assert format_invalid_message("Foo.samplecontroller.k8s.io", "x", errors) == (
        'Foo.samplecontroller.k8s.io "x" is invalid: spec.replicas: Invalid value: 11: '
        "spec.replicas in body should be less than or equal to 10"
    )
    assert status_details_causes(errors) == [{
        "reason": "FieldValueInvalid", "field": "spec.replicas",
        "message": "Invalid value: 11: spec.replicas in body should be less than or equal to 10"}]


def test_several_errors_are_bracketed(foo_schema: dict[str, Any]) -> None:
    errors = validate({"spec": {"replicas": "three", "deploymentName": 5}}, foo_schema)
    message = format_invalid_message("Foo.samplecontroller.k8s.io", "x", errors)
    assert message == (
        'Foo.samplecontroller.k8s.io "x" is invalid: ['
        'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string", '
        'spec.deploymentName: Invalid value: "integer": spec.deploymentName in body must be of type string: "integer"]'
    )


S = {"type": "object", "properties": {
    "i": {"type": "integer", "minimum": 0, "exclusiveMaximum": True, "maximum": 5},
    "n": {"type": "number", "multipleOf": 0.5, "exclusiveMinimum": True, "minimum": 0},
    "s": {"type": "string", "pattern": "^[a-z]+$", "minLength": 2, "maxLength": 4},
    "e": {"type": "string", "enum": ["a", "b"]},
    "l": {"type": "array", "items": {"type": "string"}, "maxItems": 2, "minItems": 1},
    "set": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
    "map": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}},
    "ios": {"x-kubernetes-int-or-string": True},
    "nul": {"type": "string", "nullable": True},
    "obj": {"type": "object", "required": ["must"], "maxProperties": 2, "properties": {"must": {"type": "string"}, "x": {"type": "string"}, "y": {"type": "string"}}},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    "t": {"type": "string", "format": "date-time"},
    "emb": {"type": "object", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True},
}}

CASES: list[tuple[dict[str, Any], list[str]]] = [
    ({"i": 5}, ["i: Invalid value: 5: i in body should be less than 5"]),
    ({"i": -1}, ["i: Invalid value: -1: i in body should be greater than or equal to 0"]),
    ({"i": True}, ['i: Invalid value: "boolean": i in body must be of type integer: "boolean"']),
    ({"i": 2.0}, []),
    ({"n": 0}, ["n: Invalid value: 0: n in body should be greater than 0"]),
    ({"n": 0.75}, ["n: Invalid value: 0.75: n in body should be a multiple of 0.5"]),
    ({"s": "ABC"}, ["s: Invalid value: \"ABC\": s in body should match '^[a-z]+$'"]),
    ({"s": "a"}, ['s: Invalid value: "a": s in body should be at least 2 chars long']),
    ({"s": "abcde"}, ["s: Too long: may not be more than 4 bytes"]),
    ({"e": "x"}, ['e: Unsupported value: "x": supported values: "a", "b"']),
    ({"l": ["a", "b", "c"]}, ["l: Too many: 3: must have at most 2 items"]),
    ({"l": []}, ["l: Invalid value: 0: l in body should have at least 1 items"]),
    ({"l": [1]}, ['l[0]: Invalid value: "integer": l[0] in body must be of type string: "integer"']),
    ({"set": ["a", "b", "a"]}, ['set[2]: Duplicate value: "a"']),
    ({"map": [{"name": "a"}, {"name": "a"}]}, ['map[1]: Duplicate value: {"name":"a"}']),
    ({"map": [{}]}, ["map[0].name: Required value"]),
    ({"ios": 3}, []),
    ({"ios": "50%"}, []),
    ({"ios": 1.5}, ['ios: Invalid value: "number": ios in body must be of type integer,string: "number"']),
    ({"nul": None}, []),
    ({"s": None}, ['s: Invalid value: "null": s in body must be of type string: "null"']),
    ({"obj": {"x": "1", "y": "2"}}, ["obj.must: Required value"]),
    ({"obj": {"must": "m", "x": "1", "y": "2"}}, ["obj: Too many: 3: must have at most 2 items"]),
    ({"labels": {"a": 1}}, ['labels[a]: Invalid value: "integer": labels[a] in body must be of type string: "integer"']),
    ({"t": "2024-01-02T03:04:05Z"}, []),
    ({"t": "yesterday"}, ['t: Invalid value: "yesterday": t in body must be of type date-time: "yesterday"']),
    ({"emb": {"kind": "Pod"}}, ["emb.apiVersion: Required value: must not be empty"]),
    ({"emb": {"apiVersion": "v1", "kind": "Pod", "anything": 1}}, []),
    ({"apiVersion": 5, "kind": [], "metadata": "ignored at the root"}, []),
]


@pytest.mark.parametrize(("obj", "expected"), CASES)
def test_validation_messages(obj: dict[str, Any], expected: list[str]) -> None:
    assert _messages(obj, S) == expected


def test_required_and_type_of_root() -> None:
    schema = {"type": "object", "required": ["spec"], "properties": {"spec": {"type": "object"}}}
    assert _messages({}, schema) == ["spec: Required value"]
    assert _messages({"spec": []}, schema) == ['spec: Invalid value: "array": spec in body must be of type object: "array"']


def test_go_number_formatting() -> None:
    assert [go_number(v) for v in (10, 10.0, 1.5, 1e21, -0.25)] == ["10", "10", "1.5", "1e+21", "-0.25"]


def test_field_error_formats() -> None:
    assert str(FieldError("FieldValueRequired", "spec.x", 5, "")) == "spec.x: Required value"
    assert str(FieldError("FieldValueForbidden", "spec.x", detail="nope")) == "spec.x: Forbidden: nope"
    assert str(FieldError("FieldValueInvalid", "spec.x", True, "bad")) == "spec.x: Invalid value: true: bad"
    assert str(FieldError("FieldValueInvalid", "spec.x", None, "bad")) == 'spec.x: Invalid value: "null": bad'


def test_duplicate_messages_are_collapsed() -> None:
    err = FieldError("FieldValueRequired", "spec.x")
    assert format_invalid_message("Foo.g.io", "n", [err, err]) == 'Foo.g.io "n" is invalid: spec.x: Required value'
    assert format_invalid_message("Pod", "n", []) == 'Pod "n" is invalid'


def test_prune_unknown_fields(foo_schema: dict[str, Any]) -> None:
    obj = {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
           "metadata": {"name": "x", "labels": {"a": "b"}, "bogus": 1},
           "spec": {"replicas": 1, "foo": "bar", "deploymentName": "d"}, "extra": {"x": 1}}
    assert prune(obj, foo_schema) == ["metadata.bogus", "spec.foo", "extra"]
    assert obj == {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                   "metadata": {"name": "x", "labels": {"a": "b"}}, "spec": {"replicas": 1, "deploymentName": "d"}}


def test_prune_respects_preserve_unknown_fields_and_lists() -> None:
    schema = {"type": "object", "properties": {
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "items": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
        "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"k": {"type": "string"}}}},
    }}
    obj = {"free": {"anything": {"deep": 1}}, "items": [{"a": "x", "b": 1}], "m": {"one": {"k": "v", "z": 1}}}
    assert prune(obj, schema) == ["items[0].b", "m[one].z"]
    assert obj == {"free": {"anything": {"deep": 1}}, "items": [{"a": "x"}], "m": {"one": {"k": "v"}}}


def test_defaults_and_null_pruning() -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "default": {}, "properties": {
        "replicas": {"type": "integer", "default": 1},
        "mode": {"type": "string", "default": "fast"},
        "note": {"type": "string"},
        "keep": {"type": "string", "nullable": True},
        "ports": {"type": "array", "items": {"type": "object", "properties": {"protocol": {"type": "string", "default": "TCP"}}}},
    }}}}
    obj: dict[str, Any] = {"spec": {"mode": None, "note": None, "keep": None, "ports": [{}, {"protocol": "UDP"}]}}
    apply_defaults(obj, schema)
    assert obj == {"spec": {"replicas": 1, "mode": "fast", "keep": None, "ports": [{"protocol": "TCP"}, {"protocol": "UDP"}]}}
    empty: dict[str, Any] = {}
    assert apply_defaults(empty, schema) == {"spec": {"replicas": 1, "mode": "fast"}}


def test_defaults_are_copies() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "object", "default": {"x": 1}}}}
    one, two = apply_defaults({}, schema), apply_defaults({}, schema)
    one["a"]["x"] = 2
    assert two["a"]["x"] == 1 and schema["properties"]["a"]["default"] == {"x": 1}


def test_structural_schema_checks(foo_schema: dict[str, Any]) -> None:
    assert check_structural(foo_schema) == []
    bad = {"type": "object", "properties": {
        "a": {"properties": {"b": {"type": "string"}}},
        "c": {"type": "array"},
        "d": {"type": "string", "x-kubernetes-int-or-string": True},
        "e": {"$ref": "#/definitions/x"},
        "f": {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": {"type": "string"}},
        "metadata": {"type": "object", "properties": {"labels": {"type": "object"}}},
        "g": {"x-kubernetes-int-or-string": True},
        "h": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    }}
    messages = check_structural(bad, "root")
    assert "root.properties[a].type: Required value: must not be empty for specified object fields" in messages
    assert "root.properties[c].items: Required value: must be specified" in messages
    assert "root.properties[d].type: Forbidden: must be empty if x-kubernetes-int-or-string is true" in messages
    assert any(m.startswith("root.properties[e].$ref: Forbidden") for m in messages)
    assert any(m.startswith("root.properties[f].additionalProperties: Forbidden") for m in messages)
    assert any(m.startswith("root.properties[metadata].properties[labels]: Forbidden") for m in messages)
    assert not any("properties[g]" in m or "properties[h]" in m for m in messages)
    assert check_structural({"type": "string"}, "r")[0].startswith("r.type: Unsupported value")
    assert check_structural("nope") != []


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
                     lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3), max_leaves=10)


@settings(max_examples=200, deadline=None)
@given(_json)
def test_never_raises_on_any_json(value: Any) -> None:
    obj = {"spec": value, "i": value, "obj": value, "map": value, "labels": value, "emb": value}
    for err in validate(obj, S):
        assert isinstance(str(err), str)
    pruned = copy.deepcopy(obj)
    prune(pruned, S)
    apply_defaults(pruned, S)


def test_structural_value_validations() -> None:
    """kube-apiserver refuses types, defaults and unknown properties inside allOf/anyOf/oneOf/not, except
    int-or-string's anyOf."""
    schema = {"type": "object", "properties": {
        "a": {"type": "integer", "anyOf": [{"type": "integer"}, {"type": "string"}]},
        "b": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
        "c": {"type": "object", "properties": {"x": {"type": "string"}}, "not": {"properties": {"y": {}}}},
        "d": {"type": "integer", "oneOf": [{"minimum": 1}, {"maximum": -1}]}}}
    assert check_structural(schema, "s") == [
        "s.properties[a].anyOf[0].type: Forbidden: must be empty to be structural",
        "s.properties[a].anyOf[1].type: Forbidden: must be empty to be structural",
        "s.properties[c].not.properties[y]: Forbidden: must not be specified in a value validation without a "
        "corresponding property in the structural schema",
    ]
