"""Strategic merge patch for built-in kinds (k8s.io/apimachinery/pkg/util/strategicpatch).

Driven by the upstream OpenAPI definitions: a list whose field carries
``x-kubernetes-patch-strategy: merge`` merges element-wise by ``x-kubernetes-patch-merge-key``
(a primitive list merges as a union); any other list is replaced. Maps merge recursively and
a ``null`` deletes a key. Directives: ``$patch: replace|delete|merge`` on maps and on list
elements (``{"$patch": "replace"}`` inside a list replaces the whole list), ``$retainKeys``,
``$setElementOrder/<field>`` and ``$deleteFromPrimitiveList/<field>``.

Contracts: inputs are never modified; with ``definition_name=None`` (or an unknown name)
every list is atomic and only maps merge. A malformed patch raises ``PatchError`` (a
``ValueError``; ``StrategicPatchError`` is the same class); nothing else is raised on JSON input.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from samplecontroller.apimachinery.jsonpatch import PatchError
from samplecontroller.apimachinery.openapi_schemas import definitions, resolve

__all__ = [
    "PatchError",
    "StrategicPatchError",
    "apply_strategic_merge_patch",
    "create_two_way_merge_patch",
]

StrategicPatchError = PatchError

_PATCH = "$patch"
_RETAIN = "$retainKeys"
_ORDER = "$setElementOrder/"
_DELETE_PRIMITIVE = "$deleteFromPrimitiveList/"


def _root_schema(definition_name: str | None) -> dict[str, Any]:
    if not definition_name:
        return {}
    found = definitions().get(definition_name)
    return found if isinstance(found, dict) else {}


def _field(schema: dict[str, Any], key: str) -> dict[str, Any]:
    """The schema of ``key`` inside an object schema ({} when unknown), with its extensions."""
    if not schema:
        return {}
    concrete = resolve(schema)
    props = concrete.get("properties") or {}
    sub = props.get(key)
    if sub is None:
        sub = concrete.get("additionalProperties")
    return sub if isinstance(sub, dict) else {}


def _items(schema: dict[str, Any]) -> dict[str, Any]:
    items = resolve(schema).get("items") if schema else None
    return items if isinstance(items, dict) else {}


def _strategy(schema: dict[str, Any]) -> tuple[set[str], str | None]:
    strategies = set(str(schema.get("x-kubernetes-patch-strategy", "")).split(","))
    key = schema.get("x-kubernetes-patch-merge-key")
    return strategies, key if isinstance(key, str) else None


def apply_strategic_merge_patch(doc: Any, patch: Any, definition_name: str | None = None) -> Any:
    """Apply a strategic merge ``patch`` to a copy of ``doc`` using ``definition_name``'s schema."""
    if not isinstance(patch, dict):
        raise PatchError("a strategic merge patch must be a JSON object")
    original = copy.deepcopy(doc) if isinstance(doc, dict) else {}
    result = _merge_map(original, patch, _root_schema(definition_name))
    return {} if result is None else result


def _merge_map(doc: dict[str, Any], patch: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any] | None:
    """Merge ``patch`` into ``doc`` (owned, mutated); None means the map is deleted."""
    directive = patch.get(_PATCH)
    if directive == "replace":
        replaced: dict[str, Any] = _strip_directives({k: v for k, v in patch.items() if k != _PATCH})
        return replaced
    if directive == "delete":
        return None
    if directive not in (None, "merge"):
        raise PatchError(f"unknown patch type: {directive!r} in map: {_short(patch)}")
    retain = patch.get(_RETAIN)
    if retain is not None and not isinstance(retain, list):
        raise PatchError(f"invalid $retainKeys directive: expected a list, got {_short(retain)}")
    orders: dict[str, list[Any]] = {}
    for key, value in patch.items():
        if key in (_PATCH, _RETAIN):
            continue
        if key.startswith(_ORDER):
            if not isinstance(value, list):
                raise PatchError(f"invalid {key}: expected a list, got {_short(value)}")
            orders[key[len(_ORDER):]] = value
        elif key.startswith(_DELETE_PRIMITIVE):
            _delete_from_primitive_list(doc, key[len(_DELETE_PRIMITIVE):], value)
        elif value is None:
            doc.pop(key, None)
        else:
            _merge_value(doc, key, value, _field(schema, key))
    for name, order in orders.items():
        if isinstance(doc.get(name), list):
            doc[name] = _apply_order(doc[name], order, _strategy(_field(schema, name))[1])
    if isinstance(retain, list):
        keep = {str(k) for k in retain}
        for key in [k for k in doc if k not in keep]:
            del doc[key]
    return doc


def _merge_value(doc: dict[str, Any], key: str, value: Any, schema: dict[str, Any]) -> None:
    if isinstance(value, dict):
        current = doc.get(key)
        merged = _merge_map(current if isinstance(current, dict) else {}, value, schema)
        if merged is None:
            doc.pop(key, None)
        else:
            doc[key] = merged
    elif isinstance(value, list):
        doc[key] = _merge_list(doc.get(key), value, schema)
    else:
        doc[key] = copy.deepcopy(value)


def _delete_from_primitive_list(doc: dict[str, Any], name: str, values: Any) -> None:
    if not isinstance(values, list):
        raise PatchError(f"invalid $deleteFromPrimitiveList/{name}: expected a list, got {_short(values)}")
    current = doc.get(name)
    if isinstance(current, list):
        doc[name] = [v for v in current if v not in values]


def _is_directive_element(element: Any, directive: str) -> bool:
    return isinstance(element, dict) and element.get(_PATCH) == directive


def _merge_list(current: Any, patch: list[Any], schema: dict[str, Any]) -> list[Any]:
    if any(_is_directive_element(e, "replace") for e in patch):
        return [_strip_directives(e) for e in patch if not (isinstance(e, dict) and _PATCH in e)]
    strategies, merge_key = _strategy(schema)
    if "merge" not in strategies:
        return [_strip_directives(e) for e in patch]
    base: list[Any] = current if isinstance(current, list) else []
    if not patch or (not isinstance(patch[0], dict) and merge_key is None):
        return _merge_primitive_list(base, patch)
    if merge_key is None:
        return [_strip_directives(e) for e in patch]
    item_schema = _items(schema)
    out = base
    for element in patch:
        if not isinstance(element, dict):
            raise PatchError(f"list of maps merged by {merge_key!r} has a non-map element: {_short(element)}")
        if merge_key not in element:
            raise PatchError(f"map: {_short(element)} does not contain declared merge key: {merge_key}")
        key_value = element[merge_key]
        idx = next((i for i, e in enumerate(out) if isinstance(e, dict) and e.get(merge_key) == key_value), None)
        if _is_directive_element(element, "delete"):
            out = [e for e in out if not (isinstance(e, dict) and e.get(merge_key) == key_value)]
            continue
        merged = _merge_map(out[idx] if idx is not None else {}, element, item_schema)
        if idx is None:
            if merged is not None:
                out.append(merged)
        elif merged is None:
            out.pop(idx)
        else:
            out[idx] = merged
    return out


def _merge_primitive_list(base: list[Any], patch: list[Any]) -> list[Any]:
    out = list(base)
    for element in patch:
        if isinstance(element, (dict, list)):
            raise PatchError(f"a primitive list cannot hold {_short(element)}")
        if element not in out:
            out.append(element)
    return out


def _identity(element: Any, merge_key: str | None) -> str:
    value = element.get(merge_key) if merge_key and isinstance(element, dict) else element
    return json.dumps(value, sort_keys=True, default=str)


def _apply_order(items: list[Any], order: list[Any], merge_key: str | None) -> list[Any]:
    """Order ``items`` like ``order``; items it does not name keep their relative order, after."""
    position = {_identity(o, merge_key): i for i, o in enumerate(order)}
    ordered = sorted((e for e in items if _identity(e, merge_key) in position), key=lambda e: position[_identity(e, merge_key)])
    rest = [e for e in items if _identity(e, merge_key) not in position]
    return ordered + rest


def _strip_directives(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_directives(v) for k, v in value.items() if not k.startswith("$")}
    if isinstance(value, list):
        return [_strip_directives(v) for v in value]
    return value


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 200 else text[:197] + "..."


# ---------------------------------------------------------------------------- two-way patches


def create_two_way_merge_patch(original: Any, modified: Any, definition_name: str | None = None) -> dict[str, Any]:
    """A strategic merge patch turning ``original`` into ``modified`` (both JSON objects).

    Merge-keyed lists produce per-element patches, ``$patch: delete`` elements and a
    ``$setElementOrder`` directive; merging primitive lists use ``$deleteFromPrimitiveList``;
    other lists are replaced whole. ``apply_strategic_merge_patch(original, p)`` gives
    ``modified`` (up to the order of elements only present on the server).
    """
    if not isinstance(original, dict) or not isinstance(modified, dict):
        raise PatchError("a strategic merge patch can only be computed between two JSON objects")
    return _diff_maps(original, modified, _root_schema(definition_name))


def _diff_maps(original: dict[str, Any], modified: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    patch: dict[str, Any] = {}
    for key in original:
        if key not in modified:
            patch[key] = None
    for key, new in modified.items():
        old = original.get(key, _ABSENT)
        if old is not _ABSENT and _equal(old, new):
            continue
        sub = _field(schema, key)
        if isinstance(new, dict) and isinstance(old, dict):
            diff = _diff_maps(old, new, sub)
            if diff:
                patch[key] = diff
        elif isinstance(new, list) and isinstance(old, list):
            _diff_lists(patch, key, old, new, sub)
        else:
            patch[key] = copy.deepcopy(new)
    return patch


def _diff_lists(patch: dict[str, Any], key: str, old: list[Any], new: list[Any], schema: dict[str, Any]) -> None:
    strategies, merge_key = _strategy(schema)
    if "merge" not in strategies:
        patch[key] = copy.deepcopy(new)
        return
    if merge_key is None:
        if any(isinstance(e, (dict, list)) for e in [*old, *new]):
            patch[key] = copy.deepcopy(new)
            return
        added = [e for e in new if e not in old]
        removed = [e for e in old if e not in new]
        if added:
            patch[key] = added
        if removed:
            patch[_DELETE_PRIMITIVE + key] = removed
        patch[_ORDER + key] = list(new)
        return
    if not all(isinstance(e, dict) and merge_key in e for e in [*old, *new]):
        patch[key] = copy.deepcopy(new)
        return
    by_key = {_identity(e, merge_key): e for e in old}
    new_keys = {_identity(e, merge_key) for e in new}
    elements: list[Any] = []
    for element in new:
        before = by_key.get(_identity(element, merge_key))
        if before is None:
            elements.append(copy.deepcopy(element))
        elif not _equal(before, element):
            diff = _diff_maps(before, element, _items(schema))
            diff[merge_key] = element[merge_key]
            elements.append(diff)
    for element in old:
        if _identity(element, merge_key) not in new_keys:
            elements.append({merge_key: element[merge_key], _PATCH: "delete"})
    if elements:
        patch[key] = elements
    patch[_ORDER + key] = [{merge_key: e[merge_key]} for e in new]


def _equal(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


_ABSENT: Any = object()
