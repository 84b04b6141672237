"""Strategic merge patch for built-in kinds (k8s.io/apimachinery/pkg/util/strategicpatch).

Lists whose schema says ``x-kubernetes-patch-strategy: merge`` merge element-wise by
``x-kubernetes-patch-merge-key`` (primitive lists: union); other lists replace. Directives:
``$patch: replace|delete|merge`` on maps and list elements, ``$retainKeys``,
``$setElementOrder/<field>`` and ``$deleteFromPrimitiveList/<field>``. ``null`` deletes a key.
Inputs are never modified. Raises ``StrategicPatchError`` (ValueError) for malformed patches.
"""

from __future__ import annotations

import copy
from typing import Any

from samplecontroller.apimachinery.openapi_schemas import definitions, resolve

__all__ = ["StrategicPatchError", "apply_strategic_merge_patch"]


class StrategicPatchError(ValueError):
    pass


def apply_strategic_merge_patch(doc: Any, patch: Any, definition_name: str | None) -> Any:
    """Apply ``patch`` to ``doc`` using the schema ``definition_name`` (None: plain merge rules)."""
    schema = definitions().get(definition_name or "", {})
    if not isinstance(patch, dict):
        raise StrategicPatchError("a strategic merge patch must be a JSON object")
    return _merge_map(copy.deepcopy(doc) if isinstance(doc, dict) else {}, patch, schema)


def _prop(schema: dict[str, Any], key: str) -> dict[str, Any]:
    s = resolve(schema)
    props = s.get("properties") or {}
    if key in props:
        return dict(props[key])
    extra = s.get("additionalProperties")
    return dict(extra) if isinstance(extra, dict) else {}


def _merge_map(doc: dict[str, Any], patch: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return {}
    if directive not in (None, "merge"):
        raise StrategicPatchError(f"unknown $patch directive {directive!r}")
    retain = patch.get("$retainKeys")
    orders: dict[str, list[Any]] = {}
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys"):
            continue
        if key.startswith("$setElementOrder/"):
            orders[key.split("/", 1)[1]] = value if isinstance(value, list) else []
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            if isinstance(doc.get(field), list) and isinstance(value, list):
                doc[field] = [v for v in doc[field] if v not in value]
            continue
        if value is None:
            doc.pop(key, None)
            continue
        sub = _prop(schema, key)
        if isinstance(value, dict):
            current = doc.get(key)
            result = _merge_map(current if isinstance(current, dict) else {}, value, sub)
            if value.get("$patch") == "delete":
                doc.pop(key, None)
            else:
                doc[key] = result
        elif isinstance(value, list):
            doc[key] = _merge_list(doc.get(key), value, sub)
        else:
            doc[key] = copy.deepcopy(value)
    for field, order in orders.items():
        if isinstance(doc.get(field), list):
            doc[field] = _order(doc[field], order, _prop(schema, field).get("x-kubernetes-patch-merge-key"))
    if isinstance(retain, list):
        keep = set(retain)
        doc = {k: v for k, v in doc.items() if k in keep}
    return doc


def _merge_list(current: Any, patch: list[Any], schema: dict[str, Any]) -> list[Any]:
    strategy = str(schema.get("x-kubernetes-patch-strategy", ""))
    merge_key = schema.get("x-kubernetes-patch-merge-key")
    current_list: list[Any] = copy.deepcopy(current) if isinstance(current, list) else []
    if any(isinstance(e, dict) and e.get("$patch") == "replace" for e in patch):
        return [copy.deepcopy(e) for e in patch if not (isinstance(e, dict) and "$patch" in e)]
    if "merge" not in strategy.split(","):
        return [copy.deepcopy(e) for e in patch]
    if not merge_key:  # a primitive list with merge strategy: union, keeping order
        out = list(current_list)
        for e in patch:
            if e not in out:
                out.append(copy.deepcopy(e))
        return out
    item_schema = schema.get("items") or {}
    out = current_list
    for element in patch:
        if not isinstance(element, dict):
            raise StrategicPatchError(f"list elements merged by {merge_key!r} must be objects")
        if merge_key not in element:
            raise StrategicPatchError(f"list element is missing its merge key {merge_key!r}")
        idx = next((i for i, e in enumerate(out) if isinstance(e, dict) and e.get(merge_key) == element[merge_key]),
                   None)
        if element.get("$patch") == "delete":
            if idx is not None:
                out.pop(idx)
            continue
        if idx is None:
            out.append(_merge_map({}, element, item_schema))
        else:
            out[idx] = _merge_map(out[idx], element, item_schema)
    return out


def _order(items: list[Any], order: list[Any], merge_key: Any) -> list[Any]:
    def key_of(e: Any) -> Any:
        return e.get(merge_key) if merge_key and isinstance(e, dict) else e

    wanted = [key_of(o) if isinstance(o, dict) else o for o in order]
    position = {json_key(k): i for i, k in enumerate(wanted)}
    return sorted(items, key=lambda e: position.get(json_key(key_of(e)), len(position)))


def json_key(value: Any) -> str:
    return repr(value)
