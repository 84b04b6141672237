"""Structural schemas of custom resources: validation, pruning, defaulting, structural checks.

Schemas are apiextensions.k8s.io/v1 ``JSONSchemaProps`` as plain dicts (the CRD's
``openAPIV3Schema``); objects are decoded JSON. Messages follow Kubernetes' field errors
(``spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10``).

Contracts:
- ``validate`` never raises on any JSON input; it returns every error found, in document order.
- ``prune`` and ``apply_defaults`` change the object in place (and return what they say).
- ``check_structural`` returns messages; an empty list means the schema is structural.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from samplecontroller.apimachinery.structural import junctor_errors

__all__ = [
    "ERROR_DUPLICATE",
    "ERROR_FORBIDDEN",
    "ERROR_INVALID",
    "ERROR_NOT_SUPPORTED",
    "ERROR_REQUIRED",
    "ERROR_TOO_LONG",
    "ERROR_TOO_MANY",
    "ERROR_TYPE_INVALID",
    "FieldError",
    "GoRaw",
    "aggregate_message",
    "apply_defaults",
    "check_structural",
    "format_invalid_message",
    "go_value",
    "json_type",
    "prune",
    "status_details_causes",
    "validate",
]

# field.ErrorType values (the CauseType in Status details).
ERROR_NOT_FOUND = "FieldValueNotFound"
ERROR_REQUIRED = "FieldValueRequired"
ERROR_DUPLICATE = "FieldValueDuplicate"
ERROR_INVALID = "FieldValueInvalid"
ERROR_NOT_SUPPORTED = "FieldValueNotSupported"
ERROR_FORBIDDEN = "FieldValueForbidden"
ERROR_TOO_LONG = "FieldValueTooLong"
ERROR_TOO_MANY = "FieldValueTooMany"
ERROR_INTERNAL = "InternalError"
ERROR_TYPE_INVALID = "FieldValueTypeInvalid"

_TYPE_TEXT = {
    ERROR_NOT_FOUND: "Not found",
    ERROR_REQUIRED: "Required value",
    ERROR_DUPLICATE: "Duplicate value",
    ERROR_INVALID: "Invalid value",
    ERROR_NOT_SUPPORTED: "Unsupported value",
    ERROR_FORBIDDEN: "Forbidden",
    ERROR_TOO_LONG: "Too long",
    ERROR_TOO_MANY: "Too many",
    ERROR_INTERNAL: "Internal error",
    ERROR_TYPE_INVALID: "Invalid value",
}
_VALUE_OMITTED = (ERROR_REQUIRED, ERROR_FORBIDDEN, ERROR_TOO_LONG, ERROR_INTERNAL)


class _Omit:
    def __repr__(self) -> str:
        return "OMIT"


OMIT: Any = _Omit()


class GoRaw(str):
    """A value already rendered the Go way (``map[string]string{...}``); printed verbatim."""

    __slots__ = ()


def go_value(value: Any) -> str:
    """Render a JSON value the way Go's field errors print it (``%v`` / ``%q``)."""
    if isinstance(value, GoRaw):
        return str(value)
    if value is None:
        return '"null"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def go_number(value: float | int) -> str:
    """A number formatted like Go's ``%v`` of a float64 (``10``, ``1.5``, ``1e+21``)."""
    if isinstance(value, int):
        return str(int(value))
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" in text:
        mant, exp = text.split("e")
        sign = "-" if exp.startswith("-") else "+"
        digits = exp.lstrip("+-").rjust(2, "0")
        return f"{mant.removesuffix('.0')}e{sign}{digits}"
    return text


@dataclass(frozen=True, slots=True)
class FieldError:
    """One field error (k8s.io/apimachinery/pkg/util/validation/field.Error).

    ``value`` is the offending value (``OMIT`` when Kubernetes leaves it out of the message).
    """

    type: str
    field: str
    value: Any = OMIT
    detail: str = ""

    def body(self) -> str:
        """The message without the field path (Status cause ``message``)."""
        text = _TYPE_TEXT.get(self.type, self.type)
        if self.type not in _VALUE_OMITTED and self.value is not OMIT:
            text = f"{text}: {go_value(self.value)}"
        if self.detail:
            text = f"{text}: {self.detail}"
        return text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


def required(field: str, detail: str = "") -> FieldError:
    return FieldError(ERROR_REQUIRED, field, OMIT, detail)


def invalid(field: str, value: Any, detail: str) -> FieldError:
    return FieldError(ERROR_INVALID, field, value, detail)


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError(ERROR_FORBIDDEN, field, OMIT, detail)


def not_supported(field: str, value: Any, supported: Iterable[Any]) -> FieldError:
    quoted = [json.dumps(v if isinstance(v, str) else _go_sprint(v)) for v in supported]
    detail = "supported values: " + ", ".join(quoted) if quoted else ""
    return FieldError(ERROR_NOT_SUPPORTED, field, value, detail)


def too_long(field: str, max_length: int) -> FieldError:
    unit = "byte" if max_length == 1 else "bytes"
    return FieldError(ERROR_TOO_LONG, field, OMIT, f"may not be more than {max_length} {unit}")


def too_many(field: str, actual: int, limit: int) -> FieldError:
    return FieldError(ERROR_TOO_MANY, field, actual, f"must have at most {limit} items")


def duplicate(field: str, value: Any) -> FieldError:
    return FieldError(ERROR_DUPLICATE, field, value, "")


def _go_sprint(value: Any) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return go_number(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def aggregate_message(errors: list[FieldError]) -> str:
    """``err`` for one error, ``[err1, err2]`` for several (duplicates dropped), like utilerrors."""
    seen = list(dict.fromkeys(str(err) for err in errors))  # a set's linear de-duplication, in order
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def format_invalid_message(kind_dot_group: str, name: str, errors: list[FieldError]) -> str:
    """``Foo.samplecontroller.k8s.io "x" is invalid: <errors>`` (the 422 Status message)."""
    head = f"{kind_dot_group} {json.dumps(name)} is invalid"
    return f"{head}: {aggregate_message(errors)}" if errors else head


def status_details_causes(errors: list[FieldError]) -> list[dict[str, str]]:
    """The ``details.causes`` of an Invalid Status: reason (error type), message, field."""
    return [{"reason": e.type, "message": e.body(), "field": e.field} for e in errors]


# ---------------------------------------------------------------------------- types


def json_type(value: Any) -> str:
    """The JSON-schema type name of a decoded JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _type_ok(value: Any, typ: str) -> bool:
    return type_matches(value, typ)


def type_matches(value: Any, typ: str, *, integral_floats: bool = True) -> bool:
    """True when the JSON ``value`` is of the OpenAPI ``typ``. An integral float (``1.0``) is an
    integer for CRD schemas; ``integral_floats=False`` rejects it, as Go's decoder does."""
    if typ == "integer":
        return _is_integer(value) if integral_floats else isinstance(value, int) and not isinstance(value, bool)
    if typ == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if typ == "string":
        return isinstance(value, str)
    if typ == "boolean":
        return isinstance(value, bool)
    if typ == "object":
        return isinstance(value, dict)
    if typ == "array":
        return isinstance(value, list)
    return True


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _key_path(path: str, key: str) -> str:
    return f"{path}[{key}]"


# ---------------------------------------------------------------------------- validation


_ROOT_SKIP = ("apiVersion", "kind", "metadata")


def validate(obj: Any, schema: dict[str, Any], path: str = "") -> list[FieldError]:
    """Validate ``obj`` against a structural schema; returns every error (empty if valid).

    At the root (``path == ""``) ``apiVersion``, ``kind`` and ``metadata`` are left to the
    caller (ObjectMeta rules live in ``validation.validate_object_meta``).
    """
    errors: list[FieldError] = []
    _validate(obj, schema or {}, path, errors, root=(path == ""))
    return errors


_EXACT_TYPES: dict[str, type] = {"object": dict, "string": str, "array": list, "boolean": bool}
"""The schema types whose values decoded JSON holds as exactly one Python type (the fast path of
``_validate``; integers and numbers, and anything else, go through ``_check_type``)."""


def _validate(value: Any, schema: dict[str, Any], path: str, errors: list[FieldError], root: bool = False) -> None:
    if value is None:
        if schema.get("nullable") or (not schema.get("type") and not schema.get("x-kubernetes-int-or-string")):
            return
        errors.append(FieldError(ERROR_TYPE_INVALID, path, "null", f"{path} in body must be of type {schema.get('type')}: \"null\""))
        return
    kind = type(value)
    typ = schema.get("type")
    if (type(typ) is not str or _EXACT_TYPES.get(typ) is not kind or "x-kubernetes-int-or-string" in schema) \
            and not _check_type(value, schema, path, errors):
        return
    if "enum" in schema:
        _check_enum(value, schema, path, errors)
    if kind is dict:
        _check_object(value, schema, path, errors, root)
    elif isinstance(value, str):
        _check_string(value, schema, path, errors)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _check_number(value, schema, path, errors)
    elif isinstance(value, list):
        _check_array(value, schema, path, errors)
    elif isinstance(value, dict):
        _check_object(value, schema, path, errors, root)
    if "allOf" in schema:
        for sub in schema["allOf"] or ():
            if isinstance(sub, dict):
                _validate(value, sub, path, errors)


def _check_type(value: Any, schema: dict[str, Any], path: str, errors: list[FieldError]) -> bool:
    if schema.get("x-kubernetes-int-or-string"):
        if _is_integer(value) or isinstance(value, str):
            return True
        actual = json_type(value)
        errors.append(FieldError(ERROR_TYPE_INVALID, path, actual, f"{path} in body must be of type integer,string: {json.dumps(actual)}"))
        return False
    typ = schema.get("type")
    if not typ or _type_ok(value, typ):
        return True
    actual = json_type(value)
    errors.append(FieldError(ERROR_TYPE_INVALID, path, actual, f"{path} in body must be of type {typ}: {json.dumps(actual)}"))
    return False


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def _check_enum(value: Any, schema: dict[str, Any], path: str, errors: list[FieldError]) -> None:
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and not any(_json_equal(value, e) for e in enum):
        errors.append(not_supported(path, value, enum))


_FORMAT_CHECKS: dict[str, re.Pattern[str]] = {
    "uuid": re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$"),
    "byte": re.compile(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"),
    "ipv4": re.compile(r"^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$"),
    "date": re.compile(r"^\d{4}-\d{2}-\d{2}$"),
}


def _format_ok(fmt: str, value: str) -> bool:
    if fmt == "date-time":
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            return False
        return "T" in value.upper() or " " in value
    pattern = _FORMAT_CHECKS.get(fmt)
    return pattern is None or bool(pattern.match(value))


@functools.lru_cache(maxsize=512)
def _compile(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except (re.error, RecursionError):
        return None


def _check_string(value: str, schema: dict[str, Any], path: str, errors: list[FieldError]) -> None:
    max_len = schema.get("maxLength")
    if isinstance(max_len, int) and len(value) > max_len:
        errors.append(too_long(path, max_len))
    min_len = schema.get("minLength")
    if isinstance(min_len, int) and len(value) < min_len:
        errors.append(invalid(path, value, f"{path} in body should be at least {min_len} chars long"))
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        compiled = _compile(pattern)
        if compiled is not None and not compiled.search(value):
            errors.append(invalid(path, value, f"{path} in body should match '{pattern}'"))
    fmt = schema.get("format")
    if isinstance(fmt, str) and not _format_ok(fmt, value):
        errors.append(invalid(path, value, f"{path} in body must be of type {fmt}: {json.dumps(value)}"))


def _num(value: Any) -> float | int | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return None


def _check_number(value: float | int, schema: dict[str, Any], path: str, errors: list[FieldError]) -> None:
    maximum = _num(schema.get("maximum"))
    if maximum is not None:
        if schema.get("exclusiveMaximum") is True and value >= maximum:
            errors.append(invalid(path, value, f"{path} in body should be less than {go_number(maximum)}"))
        elif value > maximum:
            errors.append(invalid(path, value, f"{path} in body should be less than or equal to {go_number(maximum)}"))
    minimum = _num(schema.get("minimum"))
    if minimum is not None:
        if schema.get("exclusiveMinimum") is True and value <= minimum:
            errors.append(invalid(path, value, f"{path} in body should be greater than {go_number(minimum)}"))
        elif value < minimum:
            errors.append(invalid(path, value, f"{path} in body should be greater than or equal to {go_number(minimum)}"))
    multiple = _num(schema.get("multipleOf"))
    if multiple and not _is_multiple(value, multiple):
        errors.append(invalid(path, value, f"{path} in body should be a multiple of {go_number(multiple)}"))


def _is_multiple(value: float | int, multiple: float | int) -> bool:
    if isinstance(value, int) and isinstance(multiple, int):
        return value % multiple == 0
    quotient = value / multiple
    return math.isfinite(quotient) and abs(quotient - round(quotient)) < 1e-9


def _check_array(value: list[Any], schema: dict[str, Any], path: str, errors: list[FieldError]) -> None:
    max_items = schema.get("maxItems")
    if isinstance(max_items, int) and len(value) > max_items:
        errors.append(too_many(path, len(value), max_items))
    min_items = schema.get("minItems")
    if isinstance(min_items, int) and len(value) < min_items:
        errors.append(invalid(path, len(value), f"{path} in body should have at least {min_items} items"))
    if schema.get("uniqueItems") is True and _has_duplicates(value):
        errors.append(invalid(path, value, f"{path} in body shouldn't contain duplicates"))
    list_type = schema.get("x-kubernetes-list-type")
    if list_type == "set":
        _check_set(value, path, errors)
    elif list_type == "map":
        _check_map_list(value, schema.get("x-kubernetes-list-map-keys") or [], path, errors)
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            _validate(item, items, f"{path}[{i}]", errors)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _has_duplicates(value: list[Any]) -> bool:
    seen: set[str] = set()
    for item in value:
        key = _canonical(item)
        if key in seen:
            return True
        seen.add(key)
    return False


def _check_set(value: list[Any], path: str, errors: list[FieldError]) -> None:
    seen: set[str] = set()
    for i, item in enumerate(value):
        key = _canonical(item)
        if key in seen:
            errors.append(duplicate(f"{path}[{i}]", item))
        seen.add(key)


def _check_map_list(value: list[Any], keys: list[str], path: str, errors: list[FieldError]) -> None:
    seen: set[str] = set()
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            continue
        ident = {k: item.get(k) for k in keys}
        key = _canonical(ident)
        if key in seen:
            errors.append(duplicate(f"{path}[{i}]", ident))
        seen.add(key)


def _check_object(value: dict[str, Any], schema: dict[str, Any], path: str, errors: list[FieldError], root: bool) -> None:
    props = schema.get("properties") or {}
    for name in schema.get("required") or ():
        if name not in value or (value[name] is None and not (props.get(name) or {}).get("nullable")):
            errors.append(required(_child(path, name)))
    max_props = schema.get("maxProperties")
    if isinstance(max_props, int) and len(value) > max_props:
        errors.append(too_many(path, len(value), max_props))
    min_props = schema.get("minProperties")
    if isinstance(min_props, int) and len(value) < min_props:
        errors.append(invalid(path, len(value), f"{path} in body should have at least {min_props} properties"))
    if schema.get("x-kubernetes-embedded-resource"):
        _check_embedded(value, path, errors)
    additional = schema.get("additionalProperties")
    for key, item in value.items():
        if root and key in _ROOT_SKIP:
            continue
        sub = props.get(key)
        if isinstance(sub, dict):
            _validate(item, sub, f"{path}.{key}" if path else key, errors)  # _child, inlined
        elif isinstance(additional, dict):
            _validate(item, additional, _key_path(path, key), errors)


def _check_embedded(value: dict[str, Any], path: str, errors: list[FieldError]) -> None:
    for name in ("apiVersion", "kind"):
        if not value.get(name):
            errors.append(required(_child(path, name), "must not be empty"))
        elif not isinstance(value[name], str):
            errors.append(invalid(_child(path, name), value[name], "must be a string"))
    meta = value.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        errors.append(FieldError(ERROR_TYPE_INVALID, _child(path, "metadata"), json_type(meta), "must be an object"))


# ---------------------------------------------------------------------------- pruning

_META_FIELDS: frozenset[str] = frozenset(
    ["name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences", "finalizers", "managedFields"]
)


def prune(obj: Any, schema: dict[str, Any]) -> list[str]:
    """Remove fields the schema does not know (in place); return their paths, in order.

    Fields under ``x-kubernetes-preserve-unknown-fields: true`` are kept. At the root,
    ``apiVersion``, ``kind`` and ``metadata`` are kept, and ``metadata`` keeps only ObjectMeta
    fields. Paths look like ``spec.foo`` and ``spec.items[0].bar`` (as in ``unknown field "spec.foo"``).
    """
    removed: list[str] = []
    if isinstance(obj, dict):
        _prune_object(obj, schema or {}, "", removed, root=True)
    return removed


def _prune(value: Any, schema: dict[str, Any], path: str, removed: list[str]) -> None:
    if isinstance(value, dict):
        _prune_object(value, schema, path, removed, root=False)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                _prune(item, items, f"{path}[{i}]", removed)
        elif not schema.get("x-kubernetes-preserve-unknown-fields"):
            for i, item in enumerate(value):
                _prune(item, {}, f"{path}[{i}]", removed)


def _prune_object(value: dict[str, Any], schema: dict[str, Any], path: str, removed: list[str], root: bool) -> None:
    props = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
    embedded = root or bool(schema.get("x-kubernetes-embedded-resource"))
    for key in list(value):
        sub = props.get(key)
        if embedded and key in ("apiVersion", "kind") and sub is None:
            continue
        if embedded and key == "metadata" and isinstance(value[key], dict):
            _prune_metadata(value[key], _child(path, key), removed)
            continue
        if isinstance(sub, dict):
            item = value[key]
            if isinstance(item, (dict, list)):  # a scalar has nothing to prune: no path built for it
                _prune(item, sub, _child(path, key), removed)
        elif isinstance(additional, dict):
            item = value[key]
            if isinstance(item, (dict, list)):
                _prune(item, additional, _key_path(path, key), removed)
        elif additional is True or preserve:
            continue
        else:
            removed.append(_child(path, key))
            del value[key]


def _prune_metadata(meta: dict[str, Any], path: str, removed: list[str]) -> None:
    for key in list(meta):
        if key not in _META_FIELDS:
            removed.append(_child(path, key))
            del meta[key]


# ---------------------------------------------------------------------------- defaulting


def apply_defaults(obj: Any, schema: dict[str, Any]) -> Any:
    """Apply structural defaults in place (top-down) and return ``obj``.

    A missing property with a ``default`` gets a copy of it; a ``null`` property that is not
    ``nullable`` gets its default if it has one and is removed otherwise (like Kubernetes'
    PruneNonNullableNullsWithoutDefaults). Defaults inside list items and map values apply too.
    """
    _default(obj, schema or {})
    return obj


def _default(value: Any, schema: dict[str, Any]) -> None:
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for key, sub in props.items():
            if not isinstance(sub, dict):
                continue
            if key not in value:
                if "default" in sub:
                    value[key] = copy.deepcopy(sub["default"])
            elif value[key] is None and not sub.get("nullable"):
                if "default" in sub and sub["default"] is not None:
                    value[key] = copy.deepcopy(sub["default"])
                else:
                    del value[key]
                    continue
            if key in value:
                _default(value[key], sub)
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            for key in list(value):
                if key in props:
                    continue
                if value[key] is None and not additional.get("nullable"):
                    del value[key]
                else:
                    _default(value[key], additional)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                if item is None and "default" in items and not items.get("nullable"):
                    value[i] = copy.deepcopy(items["default"])
                _default(value[i], items)


# ---------------------------------------------------------------------------- structural check

_FORBIDDEN_KEYS = ("$ref", "definitions", "dependencies", "patternProperties", "additionalItems", "id", "$schema")


def check_structural(schema: Any, path: str = "spec.validation.openAPIV3Schema") -> list[str]:
    """Messages for each way ``schema`` is not a structural schema (empty if it is).

    Checked: a type everywhere (unless int-or-string or preserve-unknown-fields), object at
    the root, ``items`` for arrays (one schema), ``properties`` and ``additionalProperties``
    not both, no ``$ref``/``definitions``/``patternProperties``/``dependencies``/``additionalItems``,
    ``uniqueItems`` not true, int-or-string without a type, map lists with keys, and root
    ``metadata`` limited to ``name`` and ``generateName``.
    """
    errors: list[str] = []
    if not isinstance(schema, dict):
        return [f"{path}: Required value: must be an object schema"]
    if schema.get("type") != "object":
        errors.append(f"{path}.type: Unsupported value: {go_value(schema.get('type', ''))}: supported values: \"object\"")
    _structural(schema, path, errors, root=True)
    return errors


def _structural(schema: dict[str, Any], path: str, errors: list[str], root: bool = False) -> None:
    for key in _FORBIDDEN_KEYS:
        if key in schema:
            errors.append(f"{path}.{key}: Forbidden: {key} is not supported in structural schemas")
    int_or_string = bool(schema.get("x-kubernetes-int-or-string"))
    preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
    typ = schema.get("type")
    if typ is None and not (int_or_string or preserve):
        errors.append(f"{path}.type: Required value: must not be empty for specified object fields")
    if typ is not None and typ not in ("object", "array", "string", "integer", "number", "boolean"):
        errors.append(f"{path}.type: Unsupported value: {go_value(typ)}: supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\"")
    if int_or_string and typ is not None:
        errors.append(f"{path}.type: Forbidden: must be empty if x-kubernetes-int-or-string is true")
    if schema.get("uniqueItems") is True:
        errors.append(f"{path}.uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic")
    props = schema.get("properties")
    additional = schema.get("additionalProperties")
    if props and additional not in (None, False):
        errors.append(f"{path}.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive")
    if additional is False:
        errors.append(f"{path}.additionalProperties: Forbidden: must not be false")
    items = schema.get("items")
    if typ == "array" and items is None:
        errors.append(f"{path}.items: Required value: must be specified")
    if isinstance(items, list):
        errors.append(f"{path}.items: Forbidden: items must be a schema object and not an array")
    if schema.get("x-kubernetes-list-type") == "map" and not schema.get("x-kubernetes-list-map-keys"):
        errors.append(f"{path}.x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map")
    errors.extend(junctor_errors(schema, path))
    if isinstance(props, dict):
        for name, sub in props.items():
            sub_path = f"{path}.properties[{name}]"
            if root and name == "metadata" and isinstance(sub, dict):
                _check_root_metadata(sub, sub_path, errors)
            elif isinstance(sub, dict):
                _structural(sub, sub_path, errors)
    if isinstance(additional, dict):
        _structural(additional, f"{path}.additionalProperties", errors)
    if isinstance(items, dict):
        _structural(items, f"{path}.items", errors)


def _check_root_metadata(schema: dict[str, Any], path: str, errors: list[str]) -> None:
    if schema.get("type") not in (None, "object"):
        errors.append(f"{path}.type: Unsupported value: {go_value(schema.get('type'))}: supported values: \"object\"")
    for name in schema.get("properties") or {}:
        if name not in ("name", "generateName"):
            errors.append(f"{path}.properties[{name}]: Forbidden: must not be specified, only metadata.name and metadata.generateName are allowed")
