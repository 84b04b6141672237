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
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

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


def go_value(value: Any) -> str:
    """Render a JSON value the way Go's field errors print it (``%v`` / ``%q``)."""
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
    if isinstance(value, bool) or isinstance(value, int):
        return str(int(value))
    if math.isnan(value) or math.isinf(value):
        return {True: "+Inf", False: "-Inf"}[value > 0] if math.isinf(value) else "NaN"
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
    seen: list[str] = []
    for err in errors:
        text = str(err)
        if text not in seen:
            seen.append(text)
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
    if typ == "integer":
        return _is_integer(value)
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


def _validate(value: Any, schema: dict[str, Any], path: str, errors: list[FieldError], root: bool = False) -> None:
    if value is None:
        if schema.get("nullable") or (not schema.get("type") and not schema.get("x-kubernetes-int-or-string")):
            return
        errors.append(FieldError(ERROR_TYPE_INVALID, path, "null", f"{path} in body must be of type {schema.get('type')}: \"null\""))
        return
    if not _check_type(value, schema, path, errors):
        return
    _check_enum(value, schema, path, errors)
    if isinstance(value, str):
        _check_string(value, schema, path, errors)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _check_number(value, schema, path, errors)
    elif isinstance(value, list):
        _check_array(value, schema, path, errors)
    elif isinstance(value, dict):
        _check_object(value, schema, path, errors, root)
    for sub in schema.get("allOf") or ():
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


@functools_cache_placeholder := None  # noqa: B018  (replaced below; keeps names stable)
def _unused() -> None:  # pragma: no cover
    return None
