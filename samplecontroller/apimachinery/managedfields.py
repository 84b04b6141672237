"""The fields a manager owns, as an apply body (client-go's ``Extract<Kind>`` of applyconfigurations).

Server-side apply records, per manager, the set of fields it owns in ``metadata.managedFields``
(``fieldsType: FieldsV1``): ``f:<name>`` a field, ``k:{"name":"app"}`` a list item by its keys,
``v:<json>`` an item of a set, ``i:<n>`` an item by index, ``.`` the item itself.
``extract(obj, field_manager)`` returns the object reduced to those fields (plus ``apiVersion``,
``kind``, ``metadata.name`` and ``metadata.namespace``): applying it again as that manager changes
nothing, and changing one field of it and applying it changes that field alone — the
read-modify-apply loop client-go's extract functions exist for. ``subresource`` picks the entry of
a manager's apply to ``status`` (``"status"``).
"""

from __future__ import annotations

import json
from typing import Any

from samplecontroller.apimachinery import meta, objects

__all__ = ["extract", "managed_fieldset"]


def managed_fieldset(obj: Any, field_manager: str, subresource: str = "") -> dict[str, Any] | None:
    """The FieldsV1 set of ``field_manager``'s Apply entry for ``subresource`` ("" the main resource); None
    when it has none."""
    wire = objects.to_dict(obj)
    for entry in (wire.get("metadata") or {}).get("managedFields") or []:
        if (entry.get("manager") == field_manager and entry.get("operation") == "Apply"
                and (entry.get("subresource") or "") == subresource):
            fields = entry.get("fieldsV1")
            return fields if isinstance(fields, dict) else {}
    return None


def extract(obj: Any, field_manager: str, subresource: str = "") -> dict[str, Any]:
    """``obj`` (a model or a dict) reduced to the fields ``field_manager`` applied; see the module docstring."""
    wire = objects.to_dict(obj)
    out: dict[str, Any] = {"apiVersion": wire.get("apiVersion", ""), "kind": wire.get("kind", ""), "metadata": {}}
    fieldset = managed_fieldset(wire, field_manager, subresource)
    owned = _pick(wire, fieldset) if fieldset else {}
    if isinstance(owned, dict):
        out.update({k: v for k, v in owned.items() if k not in ("apiVersion", "kind")})
        out["metadata"] = dict(owned.get("metadata") or {})
    out["metadata"].pop("managedFields", None)
    out["metadata"]["name"] = meta.get_name(wire)
    if meta.get_namespace(wire):
        out["metadata"]["namespace"] = meta.get_namespace(wire)
    return out


def _pick(value: Any, fieldset: dict[str, Any]) -> Any:
    """The part of ``value`` that ``fieldset`` names (a leaf set: the whole value)."""
    members = {k: v for k, v in fieldset.items() if k != "."}
    if not members:
        return value
    if isinstance(value, dict):
        picked: dict[str, Any] = {}
        for key, sub in members.items():
            if key.startswith("f:") and key[2:] in value:
                picked[key[2:]] = _pick(value[key[2:]], sub if isinstance(sub, dict) else {})
        return picked
    if isinstance(value, list):
        items: list[Any] = []
        for key, sub in members.items():
            item = _list_item(value, key)
            if item is not _MISSING:
                chosen = _pick(item, sub if isinstance(sub, dict) else {})
                if key.startswith("k:") and isinstance(item, dict) and isinstance(chosen, dict):
                    chosen = {**json.loads(key[2:]), **chosen}  # an item keeps its keys
                items.append(chosen)
        return sorted(items, key=lambda item: _position(value, item))
    return value


_MISSING = object()


def _list_item(values: list[Any], key: str) -> Any:
    if key.startswith("k:"):
        wanted = json.loads(key[2:])
        return next((v for v in values if isinstance(v, dict) and all(v.get(k) == w for k, w in wanted.items())),
                    _MISSING)
    if key.startswith("v:"):
        wanted = json.loads(key[2:])
        return wanted if wanted in values else _MISSING
    if key.startswith("i:"):
        index = int(key[2:])
        return values[index] if 0 <= index < len(values) else _MISSING
    return _MISSING


def _position(values: list[Any], item: Any) -> int:
    """Where ``item`` (or the item it was picked from) is in ``values``: the extracted list keeps their order."""
    for i, v in enumerate(values):
        if v == item or (isinstance(v, dict) and isinstance(item, dict) and all(v.get(k) == w for k, w in item.items()
                                                                                 if not isinstance(w, dict | list))):
            return i
    return len(values)
