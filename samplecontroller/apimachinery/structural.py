"""The structural-schema rules for value validations (``allOf``, ``anyOf``, ``oneOf``, ``not``).

kube-apiserver (apiextensions-apiserver's ``schema.ValidateStructural``) refuses a CRD whose
value validations say anything about the structure: inside a junctor a schema must not have
``type``, ``description``, ``default``, ``nullable``, ``additionalProperties`` or any
``x-kubernetes-*`` extension, and its ``properties``/``items`` must exist in the structural part
beside it. The one exception is int-or-string: with ``x-kubernetes-int-or-string: true``,
``anyOf: [{type: integer}, {type: string}]`` (also inside ``allOf``) is allowed.

``junctor_errors(schema, path)`` returns kube's messages for one schema node (not its
properties, which the caller walks), shared by the code generator and the embedded API server.
"""

from __future__ import annotations

from typing import Any

__all__ = ["JUNCTORS", "junctor_errors"]

JUNCTORS = ("allOf", "anyOf", "oneOf", "not")
INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]
# What a nested value validation must not say (kube's messages name the field).
_GENERIC = ("type", "description", "default", "nullable", "title", "additionalProperties")
_EXTENSIONS = ("x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string",
               "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type")


def _is_int_or_string_any_of(value: Any) -> bool:
    return bool(value == INT_OR_STRING_ANY_OF or value == list(reversed(INT_OR_STRING_ANY_OF)))


def junctor_errors(schema: dict[str, Any], path: str) -> list[str]:
    """Messages for the value validations of ``schema`` (at ``path``) that are not structural."""
    errors: list[str] = []
    int_or_string = schema.get("x-kubernetes-int-or-string") is True
    for key in JUNCTORS:
        value = schema.get(key)
        if value is None:
            continue
        if key == "anyOf" and int_or_string and _is_int_or_string_any_of(value):
            continue
        subs = [value] if key == "not" else value
        if not isinstance(subs, list):
            errors.append(f"{path}.{key}: Invalid value: must be a list of schemas")
            continue
        for i, sub in enumerate(subs):
            where = f"{path}.{key}" if key == "not" else f"{path}.{key}[{i}]"
            if not isinstance(sub, dict):
                errors.append(f"{where}: Invalid value: must be a schema")
                continue
            if key == "allOf" and int_or_string and _is_int_or_string_any_of(sub.get("anyOf")) \
                    and set(sub) == {"anyOf"}:
                continue
            errors += _nested(sub, schema, where)
    return errors


def _nested(sub: dict[str, Any], structural: dict[str, Any], path: str) -> list[str]:
    """A schema inside a junctor, against the structural schema ``structural`` beside it."""
    errors = [f"{path}.{key}: Forbidden: must be empty to be structural" for key in _GENERIC if key in sub]
    errors += [f"{path}.{key}: Forbidden: must be false to be structural" for key in _EXTENSIONS if sub.get(key)]
    props = sub.get("properties")
    if isinstance(props, dict):
        theirs = structural.get("properties") or {}
        for name, prop in props.items():
            where = f"{path}.properties[{name}]"
            if name not in theirs:
                errors.append(f"{where}: Forbidden: must not be specified in a value validation without a "
                              "corresponding property in the structural schema")
            elif isinstance(prop, dict) and isinstance(theirs[name], dict):
                errors += _nested(prop, theirs[name], where)
    items = sub.get("items")
    if isinstance(items, dict):
        if not isinstance(structural.get("items"), dict):
            errors.append(f"{path}.items: Forbidden: must not be specified in a value validation without items "
                          "in the structural schema")
        else:
            errors += _nested(items, structural["items"], f"{path}.items")
    for key in JUNCTORS:
        value = sub.get(key)
        for i, nested in enumerate([value] if key == "not" else value if isinstance(value, list) else []):
            if isinstance(nested, dict):
                where = f"{path}.{key}" if key == "not" else f"{path}.{key}[{i}]"
                errors += _nested(nested, structural, where)
    return errors
