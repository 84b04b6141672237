"""What kube-apiserver's Go decoder enforces on built-in kinds, checked against the upstream
OpenAPI definitions (``samplecontroller.apimachinery.openapi_schemas``).

Kubernetes decodes a built-in object into Go structs before anything else, so:
- a value of the wrong JSON type is a 400 BadRequest (``json: cannot unmarshal string into Go
  struct field DeploymentSpec.spec.replicas of type int32``), as is an integer out of its
  int32/int64 range and a ``format: byte`` string that is not base64;
- a field the struct does not have is dropped: with ``fieldValidation=Strict`` it is a 400
  (``strict decoding error: unknown field "spec.bogus"``), with ``Warn`` (the default) a
  warning, with ``Ignore`` nothing;
- ``null`` becomes the zero value, which is not encoded back: null fields are dropped;
- a ``resource.Quantity`` (``1.5Gi``, ``0.5``) is parsed and written back in its canonical form
  (``1536Mi``, ``500m``: ``samplecontroller.apimachinery.quantity``); one that does not parse
  is a 400 with apimachinery's message (``quantities must match the regular expression ...``).

``normalize`` does all four in place. Free-form parts of the schema (RawExtension, FieldsV1,
objects without properties) are left alone. Custom resources are handled by ``schema``.
"""

from __future__ import annotations

import base64
import binascii
import copy
from collections.abc import Callable
from typing import Any

from samplecontroller.apimachinery import openapi_schemas
from samplecontroller.apimachinery.quantity import QuantityError, canonical
from samplecontroller.apiserver.schema import type_matches

__all__ = ["DecodeError", "normalize"]

_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_GO_TYPES = {"string": "string", "boolean": "bool", "number": "float64", "array": "array", "object": "object"}


class DecodeError(ValueError):
    """The object cannot be decoded into its Go type (the message is the Go decoder's)."""


def normalize(group: str, version: str, kind: str, obj: dict[str, Any]) -> list[str]:
    """Drop nulls and unknown fields of a built-in ``obj`` in place; return the unknown field
    paths (``spec.bogus``). Raises ``DecodeError`` for a value of the wrong type.
    Kinds without an upstream definition are left as they are.

    Each definition is compiled once into nested checker functions (the work Go's decoder does
    once per type, in its cached struct field tables): a request pays only for its values."""
    name = openapi_schemas.definition_name_for_gvk(group, version, kind)
    if name is None:
        return []
    unknown: list[str] = []
    try:
        _object_checker(openapi_schemas.definition(name), _short(name))(obj, "", unknown)
    except DecodeError as err:
        raise DecodeError(f'{kind} in version "{version}" cannot be handled as a {kind}: {err}') from None
    return unknown


Checker = Callable[[Any, str, list[str]], None]
"""``check(value, path, unknown)``: normalize ``value`` (at ``path``) in place, appending the
paths of unknown fields to ``unknown``; ``DecodeError`` for a value of the wrong type."""

_CHECKERS: dict[tuple[int, str, str], Checker] = {}
_PLAIN_STRINGS: set[Checker] = set()
"""The compiled checkers of strings without a format to check (``format: byte``): a str passes them."""


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _value_checker(schema: Any, struct: str) -> Checker:
    """The compiled ``_value`` of a property schema (``schema`` lives in the static definitions)."""
    cache_key = (id(schema), struct, "value")
    found = _CHECKERS.get(cache_key)
    if found is None:
        found = _CHECKERS[cache_key] = _compile_value(schema, struct)
    return found


def _object_checker(schema: dict[str, Any], struct: str) -> Checker:
    cache_key = (id(schema), struct, "object")
    found = _CHECKERS.get(cache_key)
    if found is None:
        found = _CHECKERS[cache_key] = _compile_object(schema, struct)
    return found


def _noop(value: Any, path: str, unknown: list[str]) -> None:
    return None


_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"


def _check_quantity(value: Any, path: str, unknown: list[str]) -> None:
    """The checker of a ``resource.Quantity``: its container replaces the value with
    ``_quantity(value)`` (a checker cannot replace what it is given)."""
    _quantity(value)


def _quantity(value: Any) -> str:
    """What Go's ``Quantity.UnmarshalJSON`` then ``MarshalJSON`` make of ``value``: its canonical
    text. Any JSON value reaches ``UnmarshalJSON`` (``true`` too), whose error has no field path."""
    try:
        return canonical(value)
    except QuantityError as err:
        raise DecodeError(str(err)) from None


def _compile_value(prop: Any, struct: str) -> Checker:
    ref = _ref(prop)
    if ref and openapi_schemas.ref_name(ref) == _QUANTITY:
        return _check_quantity
    schema = openapi_schemas.resolve_static(prop)
    options = schema.get("oneOf")
    if isinstance(options, list):  # IntOrString, Quantity: any of the listed scalar types
        allowed = [t for option in options if isinstance(option, dict) for t in _types(option)]
        if not allowed:
            return _noop
        want = " or ".join(allowed)

        def check_one_of(value: Any, path: str, unknown: list[str]) -> None:
            if not any(_is(value, t) for t in allowed):
                _fail(value, path, struct, want)
        return check_one_of
    types = _types(schema)
    if not types:
        return _noop  # free-form
    typ = types[0]
    if typ == "integer":
        low, high = _INT_RANGES.get(str(schema.get("format")), _INT_RANGES["int64"])

        def check_integer(value: Any, path: str, unknown: list[str]) -> None:
            if type(value) is not int and not _is(value, "integer"):
                _fail(value, path, struct, _go_type(schema, typ))
            if not low <= value <= high:
                raise DecodeError(f"json: cannot unmarshal number {value} into Go struct field {struct}.{path} "
                                  f"of type {_go_type(schema, typ)}")
        return check_integer
    if typ == "string":
        byte = schema.get("format") == "byte"

        def check_string(value: Any, path: str, unknown: list[str]) -> None:
            if type(value) is not str:
                _fail(value, path, struct, _go_type(schema, typ))
            if byte:
                try:
                    base64.b64decode(value, validate=True)
                except (binascii.Error, ValueError):
                    raise DecodeError(f"illegal base64 data in {struct}.{path}") from None
        if not byte:
            _PLAIN_STRINGS.add(check_string)
        return check_string
    if typ == "array":
        items_schema = schema.get("items")
        zero = _zero(items_schema)
        holder: list[Checker] = []

        def check_array(value: Any, path: str, unknown: list[str]) -> None:
            if type(value) is not list:
                _fail(value, path, struct, _go_type(schema, typ))
            if not holder:
                holder.append(_value_checker(items_schema, struct))
            check = holder[0]
            for i, item in enumerate(value):
                if item is None:
                    value[i] = copy.copy(zero)
                elif check is _check_quantity:
                    value[i] = _quantity(item)
                elif check is not _noop:
                    check(item, f"{path}[{i}]", unknown)
        return check_array
    if typ == "object":
        inner = _short(openapi_schemas.ref_name(ref)) if ref else struct
        compiled: list[Checker] = []

        def check_object(value: Any, path: str, unknown: list[str]) -> None:
            if type(value) is not dict:
                _fail(value, path, struct, _go_type(schema, typ))
            if not compiled:  # compiled on first use: definitions refer to each other in cycles
                compiled.append(_object_checker(schema, inner))
            compiled[0](value, path, unknown)
        return check_object

    def check_scalar(value: Any, path: str, unknown: list[str]) -> None:
        if not _is(value, typ):
            _fail(value, path, struct, _go_type(schema, typ))
    return check_scalar


def _compile_object(schema: dict[str, Any], struct: str) -> Checker:
    props = schema.get("properties")
    extra = schema.get("additionalProperties")
    known: dict[str, Any] = props if isinstance(props, dict) else {}
    checkers: dict[str, Checker] = {}
    closed = isinstance(props, dict)
    extra_schema = extra if isinstance(extra, dict) else None
    extra_zero = _zero(extra_schema) if extra_schema is not None else None
    extra_checker: list[Checker] = []
    plain: set[str] = set()  # the properties whose checker is a plain string's (``_PLAIN_STRINGS``)

    def check(obj: Any, path: str, unknown: list[str]) -> None:
        gone: list[str] = []  # deleted after the walk (a dict's values may change while it is walked, not its keys)
        for key, value in obj.items():
            if type(value) is str and key in plain:
                continue  # what check_string would find: nothing (no path built for it)
            prop = known.get(key)
            if prop is not None:
                if value is None:
                    gone.append(key)  # a struct field: the zero value, not encoded back
                    continue
                fn = checkers.get(key)
                if fn is None:
                    fn = checkers[key] = _value_checker(prop, struct)
                    if fn in _PLAIN_STRINGS:
                        plain.add(key)
                        if type(value) is str:
                            continue
                if fn is _check_quantity:
                    obj[key] = _quantity(value)
                elif fn is not _noop:
                    fn(value, _join(path, key), unknown)
            elif extra_schema is not None:
                if value is None:
                    obj[key] = copy.copy(extra_zero)  # a map entry keeps its key with the zero value
                    continue
                if not extra_checker:
                    extra_checker.append(_value_checker(extra_schema, struct))
                if extra_checker[0] is _check_quantity:
                    obj[key] = _quantity(value)
                elif extra_checker[0] is not _noop:
                    extra_checker[0](value, _join(path, key), unknown)
            elif closed:
                unknown.append(_join(path, key))
                gone.append(key)
        for key in gone:
            del obj[key]
    return check


def _short(definition_name: str) -> str:
    return definition_name.rsplit(".", 1)[-1]


def _types(schema: dict[str, Any]) -> list[str]:
    typ = schema.get("type")
    if isinstance(typ, str):
        return [typ]
    return [t for t in typ if t != "null"] if isinstance(typ, list) else []


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


def _zero(schema: Any) -> Any:
    """The JSON of Go's zero value for ``schema`` (what a null list element or map value becomes)."""
    ref = _ref(schema)
    if ref and openapi_schemas.ref_name(ref) == _QUANTITY:
        return "0"  # UnmarshalJSON(null) leaves a zero Quantity, written "0"
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
