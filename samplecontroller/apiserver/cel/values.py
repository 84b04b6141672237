"""Custom-resource values as CEL sees them (apiextensions' UnstructuredToVal over the
structural schema): property names escaped, ``number`` fields as doubles, unknown fields of
typed objects hidden, resource roots showing only ``apiVersion``, ``kind`` and
``metadata.name``/``metadata.generateName``.

``format: date-time``/``duration`` strings stay strings here (the engine cannot take timestamps
inside objects); the rules convert them where they select them (``fields.typed_source``).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["escape", "to_cel"]

_IDENT = re.compile(r"^[_a-zA-Z][_a-zA-Z0-9]*$")
_ESCAPABLE = re.compile(r"^[_a-zA-Z][-._/a-zA-Z0-9]*$")
_RESERVED = frozenset({
    "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if",
    "import", "let", "loop", "package", "namespace", "return", "var", "void", "while"})
_ROOT_META = ("name", "generateName")


def escape(name: str) -> str | None:
    """The CEL name of a property (``x-y`` -> ``x__dash__y``, ``namespace`` ->
    ``__namespace__``), or None when it cannot be referenced (k8s.io/apiserver/pkg/cel.Escape)."""
    if name in _RESERVED:
        return f"__{name}__"
    if _IDENT.match(name) and "__" not in name:
        return name
    if not _ESCAPABLE.match(name):
        return None
    out = name.replace("__", "__underscores__")
    return out.replace(".", "__dot__").replace("-", "__dash__").replace("/", "__slash__")


def to_cel(value: Any, schema: dict[str, Any], resource_root: bool = False,
           memo: dict[tuple[int, int, bool], Any] | None = None) -> Any:
    """``value`` (decoded JSON) converted for CEL by its structural ``schema``. ``memo`` (one per
    validated object) keeps each converted subtree, so rules at several levels convert it once."""
    if memo is None:
        memo = {}
    key = (id(value), id(schema), resource_root)
    if key in memo:
        return memo[key]
    converted = _convert(value, schema, resource_root, memo)
    memo[key] = converted
    return converted


def _convert(value: Any, schema: dict[str, Any], resource_root: bool, memo: dict[tuple[int, int, bool], Any]) -> Any:
    if value is None:
        return None
    typ = schema.get("type")
    if typ == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, list):
        items = schema.get("items")
        items = items if isinstance(items, dict) else {}
        return [to_cel(v, items, _embedded(items), memo) for v in value]
    if not isinstance(value, dict):
        return value
    props = schema.get("properties")
    additional = schema.get("additionalProperties")
    if (isinstance(props, dict) and props) or resource_root:
        return _object(value, props if isinstance(props, dict) else {}, resource_root, memo)
    if isinstance(additional, dict):
        return {k: to_cel(v, additional, _embedded(additional), memo) for k, v in value.items()}
    if schema.get("x-kubernetes-preserve-unknown-fields") or not typ:
        return value
    return {}


def _embedded(schema: Any) -> bool:
    return isinstance(schema, dict) and bool(schema.get("x-kubernetes-embedded-resource"))


def _object(value: dict[str, Any], props: dict[str, Any], resource_root: bool,
            memo: dict[tuple[int, int, bool], Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        if resource_root and key in ("apiVersion", "kind"):
            out[key] = item
            continue
        if resource_root and key == "metadata":
            if isinstance(item, dict):
                out[key] = {k: item[k] for k in _ROOT_META if k in item}
            continue
        sub = props.get(key)
        name = escape(key)
        if isinstance(sub, dict) and name is not None:
            out[name] = to_cel(item, sub, _embedded(sub), memo)
    return out
