"""What kube-apiserver's Go decoder enforces on built-in kinds, checked against the upstream
OpenAPI definitions (``samplecontroller.apimachinery.openapi_schemas``).

Kubernetes decodes a built-in object into Go structs before anything else, so:
- a value of the wrong JSON type is a 400 BadRequest (``json: cannot unmarshal string into Go
  struct field DeploymentSpec.spec.replicas of type int32``), as is an integer out of its
  int32/int64 range and a ``format: byte`` string that is not base64;
- a field the struct does not have is dropped: with ``fieldValidation=Strict`` it is a 400
  (``strict decoding error: unknown field "spec.bogus"``), with ``Warn`` (the default) a
  warning, with ``Ignore`` nothing;
- ``null`` becomes the zero value, which is not encoded back: null fields are dropped.

``normalize`` does all three in place. Free-form parts of the schema (RawExtension, FieldsV1,
objects without properties) are left alone. Custom resources are handled by ``schema``.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from samplecontroller.apimachinery import openapi_schemas
from samplecontroller.apiserver.schema import type_matches

__all__ = ["DecodeError", "normalize"]

_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_GO_TYPES = {"string": "string", "boolean": "bool", "number": "float64", "array": "array", "object": "object"}


class DecodeError(ValueError):
    """The object cannot be decoded into its Go type (the message is the Go decoder's)."""


def normalize(group: str, version: str, kind: str, obj: dict[str, Any]) -> list[str]:
    """Drop nulls and unknown fields of a built-in ``obj`` in place; return the unknown field
    paths (``spec.bogus``). Raises ``DecodeError`` for a value of the wrong type.
    Kinds without an upstream definition are left as they are."""
    name = openapi_schemas.definition_name_for_gvk(group, version, kind)
    if name is None:
        return []
    unknown: list[str] = []
    try:
        _object(obj, openapi_schemas.definition(name), "", _short(name), unknown)
    except DecodeError as err:
        raise DecodeError(f'{kind} in version "{version}" cannot be handled as a {kind}: {err}') from None
    return unknown


def _short(definition_name: str) -> str:
    return definition_name.rsplit(".", 1)[-1]


def _types(schema: dict[str, Any]) -> list[str]:
    typ = schema.get("type")
    if isinstance(typ, str):
        return [typ]
    return [t for t in typ if t != "null"] if isinstance(typ, list) else []


def _value(value: Any, schema: Any, path: str, struct: str, unknown: list[str]) -> None:
    ref = _ref(schema)
    schema = openapi_schemas.resolve_static(schema)
    options = schema.get("oneOf")
    if isinstance(options, list):  # IntOrString, Quantity: any of the listed scalar types
        allowed = [t for option in options if isinstance(option, dict) for t in _types(option)]
        if allowed and not any(_is(value, t) for t in allowed):
            _fail(value, path, struct, " or ".join(allowed))
        return
    types = _types(schema)
    if not types:
        return  # free-form
    typ = types[0]
    if not _is(value, typ):
        _fail(value, path, struct, _go_type(schema, typ))
    if typ == "integer":
        low, high = _INT_RANGES.get(str(schema.get("format")), _INT_RANGES["int64"])
        if not low <= value <= high:
            raise DecodeError(f"json: cannot unmarshal number {value} into Go struct field {struct}.{path} "
                              f"of type {_go_type(schema, typ)}")
    elif typ == "string" and schema.get("format") == "byte":
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise DecodeError(f"illegal base64 data in {struct}.{path}") from None
    elif typ == "array":
        items = schema.get("items")
        for i, item in enumerate(value):
            if item is None:
                value[i] = _zero(items)
            else:
                _value(item, items, f"{path}[{i}]", struct, unknown)
    elif typ == "object":
        _object(value, schema, path, _short(openapi_schemas.ref_name(ref)) if ref else struct, unknown)


def _ref(schema: Any) -> str:
    """The ``$ref`` of a property schema (also one wrapped in a one-element ``allOf``), or ""."""
    if not isinstance(schema, dict):
        return ""
    if "$ref" in schema:
        return str(schema["$ref"])
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
        return str(all_of[0].get("$ref") or "")
    return ""


def _object(obj: dict[str, Any], schema: dict[str, Any], path: str, struct: str, unknown: list[str]) -> None:
    props = schema.get("properties")
    extra = schema.get("additionalProperties")
    for key in list(obj):
        child = f"{path}.{key}" if path else key
        if isinstance(props, dict) and key in props:
            if obj[key] is None:
                del obj[key]  # a struct field: the zero value, not encoded back
            else:
                _value(obj[key], props[key], child, struct, unknown)
        elif isinstance(extra, dict):
            if obj[key] is None:
                obj[key] = _zero(extra)  # a map entry keeps its key with the zero value
            else:
                _value(obj[key], extra, child, struct, unknown)
        elif isinstance(props, dict):
            unknown.append(child)
            del obj[key]


def _zero(schema: Any) -> Any:
    """The JSON of Go's zero value for ``schema`` (what a null list element or map value becomes)."""
    types = _types(openapi_schemas.resolve(schema))
    return {"string": "", "integer": 0, "number": 0, "boolean": False, "array": []}.get(
        types[0] if types else "object", {})


def _is(value: Any, typ: str) -> bool:
    return type_matches(value, typ, integral_floats=False)


def _go_type(schema: dict[str, Any], typ: str) -> str:
    if typ == "integer":
        return str(schema.get("format") or "int64")
    if typ == "array":
        items = openapi_schemas.resolve(schema.get("items"))
        inner = _types(items)
        return "[]" + (_GO_TYPES.get(inner[0], inner[0]) if inner else "interface {}")
    if typ == "object" and isinstance(schema.get("additionalProperties"), dict):
        return "map[string]" + "".join(_go_type(openapi_schemas.resolve(schema["additionalProperties"]), t)
                                       for t in _types(openapi_schemas.resolve(schema["additionalProperties"]))[:1])
    return _GO_TYPES.get(typ, typ)


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _fail(value: Any, path: str, struct: str, want: str) -> None:
    raise DecodeError(f"json: cannot unmarshal {_json_type(value)} into Go struct field {struct}.{path} of type {want}")
