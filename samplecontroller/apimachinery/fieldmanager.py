"""Server-side apply and ``metadata.managedFields`` (FieldsV1), after structured-merge-diff.

A field set is a set of paths; a path is a tuple of FieldsV1 elements: ``f:<name>`` (a map
field), ``k:<json>`` (a list element identified by its key fields), ``v:<json>`` (a member of a
set list) and ``.`` (the list element itself). Lists are merged by key when the schema says so
(``x-kubernetes-patch-merge-key``/``x-kubernetes-list-type: map`` for built-ins, the CRD
schema's ``x-kubernetes-list-type``/``x-kubernetes-list-map-keys`` for custom resources), as
sets for ``x-kubernetes-list-type: set`` and are atomic otherwise. Maps are granular unless
``x-kubernetes-map-type: atomic``.

What a kind's lists and maps are comes from a ``TypeConverter`` (client-go's
``managedfields.TypeConverter``) wherever the caller has no schema at hand (the fakes):
``BuiltinTypeConverter`` (the vendored OpenAPI definitions of the built-in kinds),
``SchemaTypeConverter`` (custom resources: their CRD schemas, ``from_crds``, or the
``merge_schema`` a generated package's ``applyconfigurations.new_type_converter()`` carries),
``DeducedTypeConverter`` (no schema: maps granular, lists atomic) and ``MultiTypeConverter``
(the first that knows the kind).

Contracts: inputs are never modified; ``apply`` raises ``ApplyConflict`` (a ValueError) when
another manager owns a field that the applied configuration sets to a different value, unless
``force``; identity/system fields (``metadata.name``, ``uid``, ``resourceVersion``...) are never
tracked. Not ported: the status/spec reset fields of subresources (pass ``ignore``), and
version conversion of managed sets (all entries are compared as if in one version).
"""

from __future__ import annotations

import copy
import functools
import json
import re
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, NamedTuple, Protocol

import msgspec

from samplecontroller.apimachinery.openapi_schemas import (
    definition_name_for_gvk,
    definitions,
    resolve,
    resolve_static,
)

__all__ = [
    "ApplyConflict",
    "BuiltinTypeConverter",
    "DeducedTypeConverter",
    "MultiTypeConverter",
    "SchemaTypeConverter",
    "TypeConverter",
    "TypeSchema",
    "apply",
    "field_set",
    "fields_v1",
    "fields_v1_to_paths",
    "format_path",
    "merge_schema",
    "paths_to_fields_v1",
    "update_managed_fields",
    "MAX_TRACKED_DEPTH",
]

Path = tuple[str, ...]
MAX_TRACKED_DEPTH = 100
"""A value this many path elements down is owned as a whole (not field by field, as
structured-merge-diff would): paths are tuples, so deeper tracking would cost quadratic time and
memory for the rare object nested thousands deep."""
_EMPTY: Mapping[str, Any] = {}
_UNTRACKED_META = {"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
                   "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink", "generateName"}
_MISSING: Any = object()


class ApplyConflict(ValueError):
    """Fields the applied configuration sets that other managers own with a different value.

    ``conflicts`` lists ``(manager, path)`` pairs (the manager as Kubernetes prints it, e.g.
    ``"kubectl-client-side-apply" using v1``; the path like ``.spec.replicas``).
    """

    def __init__(self, conflicts: list[tuple[str, str]]) -> None:
        self.conflicts = conflicts
        super().__init__(conflict_message(conflicts))

    def causes(self) -> list[dict[str, str]]:
        """Status ``details.causes`` entries (reason FieldManagerConflict)."""
        return [{"reason": "FieldManagerConflict", "message": f"conflict with {m}", "field": p} for m, p in self.conflicts]


def conflict_message(conflicts: list[tuple[str, str]]) -> str:
    """Kubernetes' 409 message: ``Apply failed with 1 conflict: conflict with "m" using v1: .spec.x``."""
    if len(conflicts) == 1:
        manager, path = conflicts[0]
        return f"Apply failed with 1 conflict: conflict with {manager}: {path}"
    by_manager: dict[str, list[str]] = {}
    for manager, path in conflicts:
        by_manager.setdefault(manager, []).append(path)
    lines: list[str] = []
    for manager in sorted(by_manager):
        lines.append(f"conflicts with {manager}:")
        lines.extend(f"- {p}" for p in by_manager[manager])
    return f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)


# ---------------------------------------------------------------------------- type converters


class TypeSchema(NamedTuple):
    """How one kind merges: ``definition`` (a built-in's upstream OpenAPI definition name) or
    ``schema`` (a custom resource's structural schema; ``{}``: none, lists atomic). These are the
    ``definition_name`` and ``schema`` arguments of ``apply``, ``field_set`` and
    ``update_managed_fields``."""

    definition: str | None = None
    schema: Mapping[str, Any] | None = None


class TypeConverter(Protocol):
    """What server-side apply must know of a kind (client-go's ``managedfields.TypeConverter``)."""

    def schema_for(self, group: str, version: str, kind: str) -> TypeSchema | None:
        """The kind's ``TypeSchema``, or None when this converter does not know the kind."""
        ...


class BuiltinTypeConverter:
    """The built-in kinds, from the vendored OpenAPI definitions (client-go's
    ``applyconfigurations.NewTypeConverter(scheme.Scheme)``); None for any other kind."""

    def schema_for(self, group: str, version: str, kind: str) -> TypeSchema | None:
        """A built-in kind's definition name; None for a kind of no built-in group/version."""
        definition = definition_name_for_gvk(group, version, kind)
        return TypeSchema(definition=definition) if definition else None


class DeducedTypeConverter:
    """Every kind, without a schema (``managedfields.NewDeducedTypeConverter``): maps granular,
    lists atomic. Not what the API server does for a list with ``x-kubernetes-list-type``."""

    def schema_for(self, group: str, version: str, kind: str) -> TypeSchema | None:
        """An empty structural schema, for any kind."""
        return TypeSchema(schema={})


class SchemaTypeConverter:
    """Custom resources by their structural schemas: ``schemas`` maps (group, version, kind) to
    a CRD version's ``openAPIV3Schema`` (or its ``merge_schema``); None for other kinds."""

    def __init__(self, schemas: Mapping[tuple[str, str, str], Mapping[str, Any]]) -> None:
        self.schemas = dict(schemas)

    @classmethod
    def from_crds(cls, crds: Iterable[Mapping[str, Any]]) -> SchemaTypeConverter:
        """The schema of every version of every ``apiextensions.k8s.io/v1`` CRD document in
        ``crds``, as the API server merges them; ValueError naming a document that is not one."""
        schemas: dict[tuple[str, str, str], Mapping[str, Any]] = {}
        for crd in crds:
            if not isinstance(crd, Mapping) or crd.get("kind") != "CustomResourceDefinition":
                kind = crd.get("kind") if isinstance(crd, Mapping) else type(crd).__name__
                raise ValueError(f"not a CustomResourceDefinition: {kind!r}")
            spec = crd.get("spec") or {}
            group, kind = spec.get("group") or "", (spec.get("names") or {}).get("kind") or ""
            for version in spec.get("versions") or ():
                schema = ((version.get("schema") or {}).get("openAPIV3Schema")) if isinstance(version, Mapping) else None
                if isinstance(schema, Mapping) and version.get("name"):
                    schemas[(str(group), str(version["name"]), str(kind))] = schema
        return cls(schemas)

    def schema_for(self, group: str, version: str, kind: str) -> TypeSchema | None:
        """The kind's schema; None when none was given for it."""
        schema = self.schemas.get((group, version, kind))
        return TypeSchema(schema=schema) if schema is not None else None


class MultiTypeConverter:
    """The first of ``converters`` that knows a kind (controller-runtime's fake client's list)."""

    def __init__(self, *converters: TypeConverter) -> None:
        self.converters = converters

    def schema_for(self, group: str, version: str, kind: str) -> TypeSchema | None:
        """The first converter's answer that is not None."""
        for converter in self.converters:
            found = converter.schema_for(group, version, kind)
            if found is not None:
                return found
        return None


_MERGE_KEYS = ("x-kubernetes-list-type", "x-kubernetes-map-type")


def merge_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a CRD's structural schema that server-side apply reads: the ``x-kubernetes-list-type``,
    ``x-kubernetes-list-map-keys`` and ``x-kubernetes-map-type`` markers and the ``properties``,
    ``items`` and ``additionalProperties`` leading to them. ``apply`` merges with it exactly as with
    the whole schema (a structural schema declares its fields outside ``allOf``/``anyOf``/``oneOf``)."""
    out: dict[str, Any] = {k: schema[k] for k in _MERGE_KEYS if isinstance(schema.get(k), str)}
    keys = schema.get("x-kubernetes-list-map-keys")
    if isinstance(keys, list) and all(isinstance(k, str) for k in keys):
        out["x-kubernetes-list-map-keys"] = list(keys)
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        kept = {name: sub for name, sub in ((n, merge_schema(s)) for n, s in properties.items() if isinstance(s, Mapping))
                if sub}
        if kept:
            out["properties"] = kept
    for key in ("items", "additionalProperties"):
        value = schema.get(key)
        if isinstance(value, Mapping):
            sub = merge_schema(value)
            if sub:
                out[key] = sub
    return out


# ---------------------------------------------------------------------------- schema helpers


class _Schema:
    """Schema navigation over either upstream definitions (built-ins) or a CRD schema."""

    @staticmethod
    def root(definition_name: str | None, schema: Mapping[str, Any] | None) -> dict[str, Any]:
        if schema is not None:
            return dict(schema)
        if definition_name:
            found = definitions().get(definition_name)
            return found if isinstance(found, dict) else {}
        return {}

    @staticmethod
    def field(schema: Mapping[str, Any], key: str) -> dict[str, Any]:
        concrete = _concrete(schema)
        sub = (concrete.get("properties") or {}).get(key)
        if sub is None:
            sub = concrete.get("additionalProperties")
        return sub if isinstance(sub, dict) else {}

    @staticmethod
    def items(schema: Mapping[str, Any]) -> dict[str, Any]:
        concrete = _concrete(schema)
        items = concrete.get("items")
        return items if isinstance(items, dict) else {}

    @staticmethod
    def list_kind(schema: Mapping[str, Any]) -> tuple[str, list[str]]:
        """("map", keys) | ("set", []) | ("atomic", [])."""
        list_type = schema.get("x-kubernetes-list-type")
        keys = schema.get("x-kubernetes-list-map-keys")
        if list_type == "map" and isinstance(keys, list) and keys:
            return "map", [str(k) for k in keys]
        merge_key = schema.get("x-kubernetes-patch-merge-key")
        strategy = str(schema.get("x-kubernetes-patch-strategy", ""))
        if "merge" in strategy.split(",") and isinstance(merge_key, str):
            return "map", [merge_key]
        if list_type == "set" or ("merge" in strategy.split(",") and merge_key is None):
            return "set", []
        return "atomic", []

    @staticmethod
    def atomic_map(schema: Mapping[str, Any]) -> bool:
        return schema.get("x-kubernetes-map-type") == "atomic"


def _concrete(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """``schema`` with ``$ref``/``allOf`` resolved (``resolve`` keeps its sibling keys, such as
    ``x-kubernetes-*``). A schema without references is returned as it is, never copied:
    callers must not mutate the result."""
    if not schema:
        return _EMPTY
    if "$ref" not in schema and "allOf" not in schema:
        return schema
    # a $ref occurs only in the upstream definitions (static: resolved once); CRD schemas have none
    return resolve_static(schema) if "$ref" in schema else resolve(schema)


def _list_keys(schema: Mapping[str, Any], items: list[Any]) -> tuple[str, list[str]]:
    """The list kind for these items: map keys fall back to the patch merge key when elements
    omit a defaulted key (``ports`` without ``protocol``), and to atomic if still incomplete."""
    kind, keys = _Schema.list_kind(schema)
    if kind != "map" or all(_element_key(i, keys) for i in items):
        return kind, keys
    merge_key = schema.get("x-kubernetes-patch-merge-key")
    if isinstance(merge_key, str) and all(_element_key(i, [merge_key]) for i in items):
        return "map", [merge_key]
    return "atomic", []


def _keyed(node: _Node, items: list[Any]) -> tuple[str, list[str]]:
    """``_list_keys`` of ``items`` under ``node`` with, for a keyed list, each item's ``k:`` element
    (worked out once; the kind as ``node`` has it worked out when every item has its keys)."""
    kind, keys = node.list_kind
    if kind != "map":
        return kind, []
    elements = [_element_key(i, keys) for i in items]
    if not all(elements):
        kind, keys = _list_keys(node.merged, items)  # the merge key or atomic
        elements = [_element_key(i, keys) for i in items] if kind == "map" else []
    return kind, [str(e) for e in elements]


def _element_key(item: Any, keys: list[str]) -> str | None:
    if not isinstance(item, dict) or any(k not in item for k in keys):
        return None
    if len(keys) == 1:  # the common case (a name, a containerPort): no dict, no JSON encoder
        key, value = keys[0], item[keys[0]]
        if type(value) is int:
            if _PLAIN(key):
                return f'k:{{"{key}":{value}}}'
        elif type(value) is str and _PLAIN(key) and _PLAIN(value):
            return f'k:{{"{key}":"{value}"}}'
    return "k:" + _KEY_JSON({k: item[k] for k in sorted(keys)})


def _value_key(value: Any) -> str:
    return "v:" + _KEY_JSON(value)


_KEY_JSON = json.JSONEncoder(separators=(",", ":"), sort_keys=True).encode
"""``json.dumps(value, separators=(",", ":"), sort_keys=True)`` without building an encoder per call."""
_PLAIN = re.compile(r'[ !#-\[\]-~]*').fullmatch
"""Whether a string is printable ASCII without ``"`` or ``\\``: ``_KEY_JSON`` writes it as it is, in quotes."""


# ---------------------------------------------------------------------------- field sets


# Go struct fields of built-in kinds that are not pointers: present (as {}) even in an empty
# object, so an Update never "adds" them and their managedFields entries carry no ``.`` member.
_VALUE_STRUCTS = frozenset({"metadata", "spec", "status", "template", "strategy", "updateStrategy", "resources",
                            "involvedObject", "regarding", "source", "loadBalancer", "jobTemplate"})


def field_set(obj: Mapping[str, Any], definition_name: str | None = None, schema: Mapping[str, Any] | None = None,
              ignore: Iterable[str] = (), nodes: bool = False) -> set[Path]:
    """The set of leaf paths ``obj`` sets (system metadata and ``apiVersion``/``kind`` excluded).

    ``nodes`` adds ``(*path, ".")`` for every non-empty granular map or struct, as Update
    operations own them when they add them (Kubernetes' ``.: {}`` entries); built-in
    value structs (``_VALUE_STRUCTS``) and ``metadata`` itself are never added that way.
    """
    root, meta = _roots(definition_name, schema)
    out: set[Path] = set()
    skip = {"apiVersion", "kind", *ignore}
    mode = _mode(schema, nodes)
    for key, value in obj.items():
        if key in skip or value is None:
            continue
        if key == "metadata" and isinstance(value, dict):
            for mkey, mvalue in value.items():
                if mkey not in _UNTRACKED_META and mvalue is not None:
                    _collect(mvalue, meta.child(mkey), ("f:metadata", f"f:{mkey}"), out, mode)
            continue
        _collect(value, root.child(key), (f"f:{key}",), out, mode)
    return out


def _roots(definition_name: str | None, schema: Mapping[str, Any] | None) -> tuple[_Node, _Node]:
    """The nodes ``field_set`` walks an object's top-level fields and its ``metadata`` fields by."""
    found = schema if schema is not None else (definitions().get(definition_name) if definition_name else None)
    root = _node(found if isinstance(found, Mapping) else _EMPTY)
    return root, _node(_metadata_schema(root.merged))


def _mode(schema: Mapping[str, Any] | None, nodes: bool) -> str:
    """``_collect``'s mode: "" (no ``.`` nodes), "builtin" (not under ``_VALUE_STRUCTS``) or "custom"."""
    return ("custom" if schema is not None else "builtin") if nodes else ""


def fields_v1(obj: Mapping[str, Any], definition_name: str | None = None,
              schema: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The FieldsV1 tree an Update that creates ``obj`` owns: the same tree as
    ``paths_to_fields_v1(field_set(obj, definition_name, schema, nodes=True))`` (keys sorted at
    every level), built in one walk of ``obj`` without a set of paths (the API server's create path)."""
    found = schema if schema is not None else (definitions().get(definition_name) if definition_name else None)
    root = _node(found if isinstance(found, Mapping) else _EMPTY)
    builtin = schema is None
    tree: dict[str, Any] = {}
    meta: _Node | None = None
    for key, value in obj.items():
        if value is None or key == "apiVersion" or key == "kind":
            continue
        if not isinstance(value, (dict, list)):
            tree[f"f:{key}"] = {}  # a scalar: a leaf, whatever its schema (as _grow makes it)
        elif key == "metadata" and isinstance(value, dict):
            fields: dict[str, Any] = {}
            for mkey, mvalue in value.items():
                if mkey not in _UNTRACKED_META and mvalue is not None:
                    if meta is None:
                        meta = _node(_metadata_schema(root.merged))
                    _grow(mvalue, meta.child(mkey), fields, f"f:{mkey}", mkey, builtin, 2)
            if fields:
                tree["f:metadata"] = fields
        else:
            _grow(value, root.child(key), tree, f"f:{key}", key, builtin)
    return _sorted_tree(tree)


def _grow(value: Any, node: _Node, parent: dict[str, Any], element: str, name: str, builtin: bool,
          length: int = 1) -> None:
    """``_collect`` (with nodes) of ``value`` at ``parent[element]``, creating that tree node only
    when the value sets a field (an empty keyed list or set sets none); ``name``: the field's name,
    ``length``: the length of ``element``'s path."""
    if length >= MAX_TRACKED_DEPTH:  # owned as a whole
        parent.setdefault(element, {})
    elif isinstance(value, dict) and not node.atomic:
        here = parent.get(element)
        fresh = here is None
        if here is None:
            here = {}
        children = False
        for key, child in value.items():
            if child is not None:
                children = True
                if isinstance(child, (dict, list)):
                    _grow(child, node.child(key), here, f"f:{key}", key, builtin, length + 1)
                else:
                    here.setdefault(f"f:{key}", {})  # a scalar: a leaf, whatever its schema
        if children and not (builtin and name in _VALUE_STRUCTS):
            here["."] = {}
        if fresh and (here or not children):
            parent[element] = here
    elif isinstance(value, list):
        kind, keys = node.list_kind
        element_keys: list[str | None] = []
        if kind == "map":  # as _list_keys, each element's key worked out once
            element_keys = [_element_key(i, keys) for i in value]
            if not all(element_keys):
                kind, keys = _list_keys(node.merged, value)  # the merge key or atomic
                element_keys = [_element_key(i, keys) for i in value] if kind == "map" else []
        if kind == "map":
            item_node = node.item()
            for item, item_key in zip(value, element_keys, strict=True):
                member = parent.setdefault(element, {}).setdefault(str(item_key), {})
                member["."] = {}
                for key, child in item.items():
                    if isinstance(child, (dict, list)):
                        _grow(child, item_node.child(key), member, f"f:{key}", key, builtin, length + 2)
                    elif child is not None:
                        member.setdefault(f"f:{key}", {})
        elif kind == "set" and all(not isinstance(i, (dict, list)) for i in value):
            for i in value:
                parent.setdefault(element, {}).setdefault(_value_key(i), {})
        else:
            parent.setdefault(element, {})
    else:
        parent.setdefault(element, {})


def _sorted_tree(tree: dict[str, Any]) -> dict[str, Any]:
    """``tree`` (``fields_v1``'s own, shared with nothing) with its keys sorted at every level: a
    level already in order is kept and sorted below in place, another one rebuilt in order."""
    keys = sorted(tree)
    out = tree if keys == list(tree) else {key: tree[key] for key in keys}
    for key, value in out.items():
        if value:
            ordered = _sorted_tree(value)
            if ordered is not value:
                out[key] = ordered  # a value replaced, no key added: iterating stays valid
    return out


class _Node:
    """A schema as ``_collect`` walks it, worked out once: its ``$ref``/``allOf`` resolved, whether
    it is an atomic map, and its children's nodes (built on first use)."""

    __slots__ = ("atomic", "children", "items", "list_kind", "merged")

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.merged = _concrete(schema)
        self.atomic = _Schema.atomic_map(self.merged)
        self.list_kind = _Schema.list_kind(self.merged)
        self.children: dict[str, _Node] = {}
        self.items: _Node | None = None

    def child(self, key: str) -> _Node:
        found = self.children.get(key)
        if found is None:
            found = self.children[key] = _node(_Schema.field(self.merged, key))
        return found

    def item(self) -> _Node:
        if self.items is None:
            self.items = _node(_Schema.items(self.merged))
        return self.items


_NODES: dict[int, tuple[Mapping[str, Any], _Node]] = {}
_NODES_LIMIT = 20_000


def _node(schema: Mapping[str, Any]) -> _Node:
    """The ``_Node`` of ``schema``, remembered by identity (the schema is kept alive with it, so
    an identity is never reused while remembered; CRD schemas replaced by an update of their CRD
    age out when the table is full)."""
    hit = _NODES.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    if len(_NODES) >= _NODES_LIMIT:
        _NODES.clear()
    node = _Node(schema)
    _NODES[id(schema)] = (schema, node)
    return node


def _collect(value: Any, node: _Node, prefix: Path, out: set[Path], mode: str = "") -> None:
    if len(prefix) >= MAX_TRACKED_DEPTH:  # owned as a whole
        out.add(prefix)
    elif isinstance(value, dict) and not node.atomic:
        children = [(k, v) for k, v in value.items() if v is not None]
        if not children:
            out.add(prefix)
        elif mode and not (mode == "builtin" and prefix[-1][2:] in _VALUE_STRUCTS):
            out.add((*prefix, "."))
        for key, child in children:
            _collect(child, node.child(key), (*prefix, f"f:{key}"), out, mode)
    elif isinstance(value, list):
        kind, elements = _keyed(node, value)
        if kind == "map":
            item_node = node.item()
            for item, key_element in zip(value, elements, strict=True):
                element = (*prefix, key_element)
                out.add((*element, "."))
                for key, child in item.items():
                    if child is not None:
                        _collect(child, item_node.child(key), (*element, f"f:{key}"), out, mode)
        elif kind == "set" and all(not isinstance(i, (dict, list)) for i in value):
            out.update((*prefix, _value_key(i)) for i in value)
        else:
            out.add(prefix)
    else:
        out.add(prefix)


def paths_to_fields_v1(paths: Iterable[Path]) -> dict[str, Any]:
    """Nest a field set into the FieldsV1 JSON tree (``{"f:spec": {"f:replicas": {}}}``)."""
    tree: dict[str, Any] = {}
    for path in sorted(paths):
        node = tree
        for element in path:
            node = node.setdefault(element, {})
    return tree


def fields_v1_to_paths(tree: Any) -> set[Path]:
    """The leaf paths of a FieldsV1 tree (the inverse of ``paths_to_fields_v1``)."""
    out: set[Path] = set()
    _walk_tree(tree, (), out)
    return out


def _walk_tree(node: Any, prefix: Path, out: set[Path]) -> None:
    if not isinstance(node, dict) or not node or len(prefix) >= MAX_TRACKED_DEPTH:
        if prefix:
            out.add(prefix)
        return
    for key, child in node.items():
        _walk_tree(child, (*prefix, str(key)), out)


def format_path(path: Path) -> str:
    """A path as Kubernetes prints it: ``.spec.containers[name="web"].image``, ``.metadata.finalizers[="a"]``."""
    text = ""
    for element in path:
        if element.startswith("f:"):
            text += "." + element[2:]
        elif element.startswith("k:"):
            try:
                keys = json.loads(element[2:])
                text += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in keys.items()) + "]"
            except ValueError:
                text += f"[{element[2:]}]"
        elif element.startswith("v:"):
            text += f"[={element[2:]}]"
    return text


# ---------------------------------------------------------------------------- values at paths


_item_keys = functools.lru_cache(maxsize=4096)(json.loads)
"""``json.loads`` of the text of a ``k:`` element (elements repeat from write to write): ``_child``
reads the parsed keys, never hands them out."""


def _child(value: Any, element: str) -> Any:
    if element.startswith("f:"):
        return value.get(element[2:], _MISSING) if isinstance(value, dict) else _MISSING
    if element.startswith("k:") and isinstance(value, list):
        try:
            wanted = _item_keys(element[2:])
        except ValueError:
            return _MISSING
        for item in value:
            if isinstance(item, dict) and all(item.get(k) == v for k, v in wanted.items()):
                return item
        return _MISSING
    if element.startswith("v:") and isinstance(value, list):
        try:
            member = json.loads(element[2:])
        except ValueError:
            return _MISSING
        return member if member in value else _MISSING
    if element == ".":
        return value
    return _MISSING


def _lookup(obj: Any, path: Path) -> Any:
    cur = obj
    for element in path:
        cur = _child(cur, element)
        if cur is _MISSING:
            return _MISSING
    return cur


def _removal_order(path: Path) -> tuple[int, int, int]:
    """The order in which ``apply`` removes what a manager stopped applying: whole list items
    first (outermost first), then other fields innermost first, the key fields of an item last
    (an item is found by its keys: removing them first would lose the item's other fields)."""
    if len(path) >= 2 and path[-1] == "." and path[-2][:2] in ("k:", "v:", "i:"):
        return (0, len(path), 0)
    return (1, -len(path), int(_is_key_field(path)))


def _is_key_field(path: Path) -> bool:
    if len(path) < 2 or not path[-2].startswith("k:") or not path[-1].startswith("f:"):
        return False
    try:
        keys = json.loads(path[-2][2:])
    except ValueError:
        return False
    return isinstance(keys, dict) and path[-1][2:] in keys


def _remove(obj: Any, path: Path) -> None:
    if path and path[-1] == ".":
        path = path[:-1]
    if not path:
        return
    parent = _lookup(obj, path[:-1])
    last = path[-1]
    if isinstance(parent, dict) and last.startswith("f:"):
        parent.pop(last[2:], None)
    elif isinstance(parent, list):
        target = _child(parent, last)
        if target is not _MISSING:
            parent.remove(target)


# ---------------------------------------------------------------------------- merging


def _merge(live: Any, applied: Any, schema: Mapping[str, Any]) -> Any:
    merged_schema = _concrete(schema)
    if isinstance(applied, dict) and isinstance(live, dict) and not _Schema.atomic_map(merged_schema):
        out = dict(live)
        for key, value in applied.items():
            if value is None:
                out.pop(key, None)
            else:
                out[key] = _merge(live.get(key, _MISSING), value, _Schema.field(merged_schema, key))
        return out
    if isinstance(applied, list) and isinstance(live, list):
        kind, keys = _list_keys(merged_schema, [*live, *applied])
        if kind == "map":
            item_schema = _Schema.items(merged_schema)
            result = list(live)
            index = {_element_key(i, keys): n for n, i in enumerate(result)}
            for item in applied:
                key = _element_key(item, keys)
                if key in index:
                    result[index[key]] = _merge(result[index[key]], item, item_schema)
                else:
                    index[key] = len(result)
                    result.append(_strip_nulls(item))
            return result
        if kind == "set" and all(not isinstance(i, (dict, list)) for i in [*live, *applied]):
            return list(live) + [i for i in applied if i not in live]
    return _strip_nulls(applied)


def _strip_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_strip_nulls(v) for v in value]
    return copy.deepcopy(value)


# ---------------------------------------------------------------------------- managed fields entries


_clock: list[Any] = [0, ""]


def _now() -> str:
    """The current UTC time as RFC 3339 with second precision (formatted once per second)."""
    now = int(time.time())
    if _clock[0] != now:
        _clock[0] = now
        _clock[1] = datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(_clock[1])


def _entries(obj: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The managedFields entries of ``obj``, each a new dict (their values are shared: entries
    are replaced, never changed in place)."""
    raw = ((obj or {}).get("metadata") or {}).get("managedFields") or []
    return [dict(e) for e in raw if isinstance(e, dict)]


def _entry_paths(entry: Mapping[str, Any]) -> set[Path]:
    return fields_v1_to_paths(entry.get("fieldsV1") or {})


def _same_manager(entry: Mapping[str, Any], manager: str, operation: str, subresource: str) -> bool:
    return (entry.get("manager") == manager and entry.get("operation") == operation
            and (entry.get("subresource") or "") == subresource)


def _print_manager(entry: Mapping[str, Any]) -> str:
    text = json.dumps(str(entry.get("manager", "")))
    if entry.get("subresource"):
        text += f" with subresource {json.dumps(entry['subresource'])}"
    if entry.get("operation") == "Update":
        text += f" using {entry.get('apiVersion', '')}"
    return text


def _make_entry(manager: str, operation: str, api_version: str, fields: dict[str, Any], subresource: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"manager": manager, "operation": operation, "apiVersion": api_version, "time": _now(),
                             "fieldsType": "FieldsV1", "fieldsV1": fields}
    if subresource:
        entry["subresource"] = subresource
    return entry


def _store(obj: dict[str, Any], entries: list[dict[str, Any]]) -> dict[str, Any]:
    meta = obj.setdefault("metadata", {})
    kept = [e for e in entries if e.get("fieldsV1")]
    if kept:
        meta["managedFields"] = kept
    else:
        meta.pop("managedFields", None)
    return obj


def _replace_entry(entries: list[dict[str, Any]], new: dict[str, Any], manager: str, operation: str, subresource: str) -> list[dict[str, Any]]:
    for i, entry in enumerate(entries):
        if _same_manager(entry, manager, operation, subresource):
            return [*entries[:i], new, *entries[i + 1:]]
    return [*entries, new]


def apply(live: Mapping[str, Any] | None, applied: Mapping[str, Any], manager: str, force: bool = False,
          definition_name: str | None = None, *, schema: Mapping[str, Any] | None = None,
          subresource: str = "", ignore: Iterable[str] = ()) -> dict[str, Any]:
    """Server-side apply ``applied`` (the request body) by ``manager`` onto ``live`` (None: create).

    Returns the new object (``live``'s system metadata kept, ``metadata.managedFields``
    updated). Fields this manager applied before but omits now are removed unless another
    manager owns them. Raises ``ApplyConflict`` listing every conflicting (manager, path),
    unless ``force``, which moves those fields to ``manager``. ``ignore`` lists top-level
    fields the operation may not change (e.g. ``["status"]`` on the main resource).
    """
    if not isinstance(applied, Mapping):
        raise ValueError("an apply configuration must be a JSON object")
    if not manager:
        raise ValueError("fieldManager is required for apply requests")
    ignored = list(ignore)
    root = _Schema.root(definition_name, schema)
    body = {k: v for k, v in applied.items() if k not in ignored}
    base: dict[str, Any] = copy.deepcopy(dict(live)) if live is not None else {}
    entries = _entries(live)
    applied_paths = field_set(body, definition_name, schema, ignored)
    mine = next((e for e in entries if _same_manager(e, manager, "Apply", subresource)), None)
    previous = _entry_paths(mine) if mine else set()
    conflicts: list[tuple[str, str]] = []
    taken: dict[int, set[Path]] = {}
    for i, entry in enumerate(entries):
        if entry is mine:
            continue
        clash = {p for p in applied_paths & _entry_paths(entry) if not _same_value(base, body, p)}
        if clash:
            taken[i] = clash
            conflicts.extend((_print_manager(entry), format_path(p)) for p in sorted(clash))
    if conflicts and not force:
        raise ApplyConflict(conflicts)
    for i, clash in taken.items():
        remaining = _entry_paths(entries[i]) - clash
        entries[i] = {**entries[i], "fieldsV1": paths_to_fields_v1(remaining)}
    merged = _merge_body(base, body, root)
    others: set[Path] = set()
    for entry in entries:
        if entry is not mine:
            others |= _entry_paths(entry)
    for path in sorted(previous - applied_paths - others, key=_removal_order):
        _remove(merged, path)
        _prune_empty_parents(merged, path, others | applied_paths)
    api_version = str(applied.get("apiVersion") or (live or {}).get("apiVersion") or "")
    new_entry = _make_entry(manager, "Apply", api_version, paths_to_fields_v1(applied_paths), subresource)
    return _store(merged, _replace_entry(entries, new_entry, manager, "Apply", subresource))


_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def _metadata_schema(root: Mapping[str, Any]) -> Mapping[str, Any]:
    """The schema ``metadata`` merges by: ObjectMeta's for every kind with a schema, custom
    resources included (kube-apiserver builds a CRD's apply schema with ObjectMeta in place of
    the CRD's ``metadata: {type: object}``, so finalizers merge as a set and ownerReferences by
    uid); none (atomic lists) for a kind without one (``DeducedTypeConverter``)."""
    if not root:
        return _EMPTY
    found = definitions().get(_OBJECT_META)
    return found if isinstance(found, Mapping) else _EMPTY


def _merge_body(base: dict[str, Any], body: Mapping[str, Any], root: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in body.items():
        if key == "metadata" and isinstance(value, dict):
            meta = dict(out.get("metadata") or {})
            meta_schema = _metadata_schema(root)
            for mkey, mvalue in value.items():
                if mkey in _UNTRACKED_META and mkey not in ("name", "namespace", "generateName"):
                    continue
                if mkey in ("name", "namespace", "generateName") and meta.get(mkey):
                    continue
                if mvalue is None:
                    meta.pop(mkey, None)
                else:
                    meta[mkey] = _merge(meta.get(mkey, _MISSING), mvalue, _Schema.field(meta_schema, mkey))
            out["metadata"] = meta
        elif value is None:
            out.pop(key, None)
        else:
            out[key] = _merge(out.get(key, _MISSING), value, _Schema.field(root, key))
    return out


def _same_value(live: Any, applied: Any, path: Path) -> bool:
    before, after = _lookup(live, path), _lookup(applied, path)
    if path and path[-1] == ".":
        return before is not _MISSING
    return before is not _MISSING and type(before) is type(after) and before == after


def _prune_empty_parents(obj: Any, path: Path, owned: set[Path]) -> None:
    prefixes = {p[:n] for p in owned for n in range(1, len(p) + 1)}
    for n in range(len(path) - 1, 1, -1):
        parent = path[:n]
        if parent in prefixes:
            return
        value = _lookup(obj, parent)
        if isinstance(value, (dict, list)) and not value:
            _remove(obj, parent)
        else:
            return


def _strict_equal(a: Any, b: Any) -> bool:
    """Equal as JSON: ``==`` with the types compared too (``1`` is not ``1.0`` nor ``true``);
    iterative (values may nest 10,000 deep)."""
    pairs = [(a, b)]
    while pairs:
        x, y = pairs.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, dict):
            if x.keys() != y.keys():
                return False
            pairs.extend((v, y[k]) for k, v in x.items())
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            pairs.extend(zip(x, y, strict=True))
        elif x != y:
            return False
    return True


def _equal(a: Any, b: Any) -> bool:
    """``a == b``; ``_strict_equal`` for values nested beyond the interpreter's C recursion."""
    try:
        return bool(a == b)
    except RecursionError:
        return _strict_equal(a, b)


_encode = msgspec.json.Encoder().encode


_ONE_SPELLING = frozenset({str, int, bool, type(None)})


def _same_json(a: Any, b: Any) -> bool:
    """``_strict_equal`` for values already ``==``: equal JSON encodings answer at C speed (same
    keys in the same order, ``1``, ``1.0`` and ``true`` spelled apart); other encodings (keys in
    another order, a value msgspec does not encode) are compared value by value. Equal strings,
    integers and booleans of one type are spelled alike: no encoding (floats are not: ``-0.0``)."""
    if type(a) is type(b) and type(a) in _ONE_SPELLING:
        return True
    try:
        if _encode(a) == _encode(b):
            return True
    except (TypeError, ValueError, RecursionError):
        pass
    return _strict_equal(a, b)


def _unchanged(before: Any, after: Any) -> bool:
    """Nothing changed under a path whose old and new values are equal as JSON (``_same_json``)."""
    return before is not _MISSING and after is not _MISSING and _equal(before, after) and _same_json(before, after)


def _leaf_changed(path: Path, before: Any, after: Any) -> bool:
    """Whether a path of ``field_set`` is changed or added, its values (not ``_unchanged``) known:
    missing from the old object, or (a value, not a ``.`` node) of another value or type."""
    return before is _MISSING or (path[-1] != "." and not (type(before) is type(after) and _equal(before, after)))


def _collect_changes(value: Any, node: _Node, prefix: Path, out: set[Path], changed: set[Path], mode: str,
                     before: Any, after: Any) -> None:
    """``_collect(value, node, prefix, out, mode)``, adding to ``changed`` the paths whose value the
    update changed or added. ``before``/``after``: the old and new objects' values at ``prefix`` as
    ``_child`` finds them element by element (by a list item's keys, the first match: not always
    ``value``'s item); under a prefix where they are ``_unchanged``, nothing is."""
    if len(prefix) >= MAX_TRACKED_DEPTH:  # owned as a whole
        _add_leaf(prefix, before, after, out, changed)
        return
    if _unchanged(before, after):
        _collect(value, node, prefix, out, mode)
        return
    if isinstance(value, dict) and not node.atomic:
        children = [(k, v) for k, v in value.items() if v is not None]
        if not children:
            _add_leaf(prefix, before, after, out, changed)
        elif mode and not (mode == "builtin" and prefix[-1][2:] in _VALUE_STRUCTS):
            _add_leaf((*prefix, "."), before, after, out, changed)
        _fields_changes(children, node, prefix, out, changed, mode, before, after)
    elif isinstance(value, list):
        kind, elements = _keyed(node, value)
        if kind == "map":
            item_node = node.item()
            for item, element in zip(value, elements, strict=True):
                path = (*prefix, element)
                item_before, item_after = _child(before, element), _child(after, element)
                if _unchanged(item_before, item_after):
                    out.add((*path, "."))
                    for key, child in item.items():
                        if child is not None:
                            _collect(child, item_node.child(key), (*path, f"f:{key}"), out, mode)
                    continue
                _add_leaf((*path, "."), item_before, item_after, out, changed)
                _fields_changes([(k, v) for k, v in item.items() if v is not None], item_node, path, out, changed,
                                mode, item_before, item_after)
        elif kind == "set" and all(not isinstance(i, (dict, list)) for i in value):
            for i in value:
                element = _value_key(i)
                member_before, member_after = _child(before, element), _child(after, element)
                path = (*prefix, element)
                out.add(path)
                if _leaf_changed(path, member_before, member_after) and not _unchanged(member_before, member_after):
                    changed.add(path)
        else:
            _add_leaf(prefix, before, after, out, changed)
    else:
        _add_leaf(prefix, before, after, out, changed)


def _fields_changes(fields: list[tuple[str, Any]], node: _Node, prefix: Path, out: set[Path], changed: set[Path],
                    mode: str, before: Any, after: Any) -> None:
    """``_collect_changes`` of the (not None) ``fields`` of a map or list item at ``prefix`` whose
    values are ``before``/``after`` (not ``_unchanged``); a scalar field is a leaf, whatever its schema."""
    old_fields = before if isinstance(before, dict) else _EMPTY
    new_fields = after if isinstance(after, dict) else _EMPTY
    for key, child in fields:
        path = (*prefix, f"f:{key}")
        field_before, field_after = old_fields.get(key, _MISSING), new_fields.get(key, _MISSING)
        if isinstance(child, (dict, list)):
            _collect_changes(child, node.child(key), path, out, changed, mode, field_before, field_after)
            continue
        out.add(path)
        if _leaf_changed(path, field_before, field_after) and not _unchanged(field_before, field_after):
            changed.add(path)


def _add_leaf(path: Path, before: Any, after: Any, out: set[Path], changed: set[Path]) -> None:
    out.add(path)
    if _leaf_changed(path, before, after):
        changed.add(path)


def update_managed_fields(old: Mapping[str, Any] | None, new: Mapping[str, Any], manager: str, operation: str = "Update",
                          subresource: str = "", definition_name: str | None = None,
                          schema: Mapping[str, Any] | None = None, *, in_place: bool = False) -> dict[str, Any]:
    """``new`` with managedFields updated for a create/update/patch by ``manager``.

    The manager's ``operation`` entry gains every field whose value it changed or added;
    other managers lose the fields it changed; fields that disappeared leave every entry.
    On create (``old`` None) the manager owns every field. ``new``'s own managedFields are
    ignored (clients cannot rewrite them here), except that an explicitly empty list resets
    them as in Kubernetes. ``in_place``: ``new`` is a dict the caller owns and gives up: it is
    updated and returned instead of a deep copy (the API server's write path).

    Cost: an update walks only the top-level fields (and ``metadata`` fields) whose values
    differ between ``old`` and ``new``, and the fields each entry owns under the others (to
    check that they are still fields of ``new``); an entry that loses nothing keeps its
    ``fieldsV1`` as it is, a rebuilt one shares the unchanged parts of its old tree.
    """
    result = new if in_place and isinstance(new, dict) else copy.deepcopy(dict(new))
    requested = (new.get("metadata") or {}).get("managedFields", _MISSING)
    if isinstance(requested, list) and not requested and old is not None:
        result.setdefault("metadata", {}).pop("managedFields", None)
        return result
    entries = _entries(old)
    root, meta = _roots(definition_name, schema)
    mode = _mode(schema, operation == "Update")
    regions = _regions(old, result, root, meta) if old is not None else None
    if regions is None:  # a create (or a metadata that is not an object): every field is compared
        regions = _all_regions(result, root, meta)
    values, differing = regions
    new_paths: set[Path] = set()
    changed: set[Path] = set()
    if old is None:
        for region in differing:
            value, node = values[region]
            _collect(value, node, region, new_paths, mode)
        changed = new_paths
    else:
        _collect_regions(old, result, values, differing, new_paths, changed, mode)
    owned = _Owned(values, differing, new_paths, mode)
    updated: list[dict[str, Any]] = []
    mine: tuple[dict[Path, dict[str, Any]], set[Path]] | None = None
    for entry in entries:
        same = _same_manager(entry, manager, operation, subresource)
        kept, before = owned.split(entry.get("fieldsV1") or {})
        paths = before & owned.known
        if not same:
            paths -= changed
        updated.append(entry if paths == before else {**entry, "fieldsV1": _assemble(kept, paths)})
        if same and mine is None:
            mine = (kept, paths)
    if mine is None and not changed:
        return _store(result, updated)
    kept, paths = mine if mine is not None else ({}, set())
    api_version = str(result.get("apiVersion") or "")
    entry = _make_entry(manager, operation, api_version, _assemble(kept, paths | changed), subresource)
    return _store(result, _replace_entry(updated, entry, manager, operation, subresource))


def _collect_regions(old: Mapping[str, Any], new: Mapping[str, Any], values: dict[Path, tuple[Any, _Node]],
                     differing: set[Path], out: set[Path], changed: set[Path], mode: str) -> None:
    """``_collect_changes`` of every differing region that ``new`` sets, from the objects' roots."""
    meta_before, meta_after = _child(old, "f:metadata"), _child(new, "f:metadata")
    meta_same: bool | None = None  # worked out for the first differing metadata field
    for region in differing:
        found = values.get(region)
        if found is None:
            continue
        value, node = found
        if len(region) == 1:
            _collect_changes(value, node, region, out, changed, mode, _child(old, region[0]), _child(new, region[0]))
            continue
        if meta_same is None:
            meta_same = _unchanged(meta_before, meta_after)
        if meta_same:
            _collect(value, node, region, out, mode)
        else:
            _collect_changes(value, node, region, out, changed, mode,
                             _child(meta_before, region[1]), _child(meta_after, region[1]))


# A region: a top-level field (``("f:spec",)``) or a field of ``metadata`` (``("f:metadata", "f:labels")``);
# every path of ``field_set`` is under exactly one region.
_Regions = tuple[dict[Path, tuple[Any, _Node]], set[Path]]


def _regions(old: Mapping[str, Any], new: Mapping[str, Any], root: _Node, meta: _Node) -> _Regions | None:
    """The regions ``new`` sets (their values and schema nodes) and the regions whose values differ
    between ``old`` and ``new`` (as JSON: ``_same_json``; a None value is no value, as for
    ``field_set``). None when either ``metadata`` is not an object, or ``old`` is not a dict
    (``_child`` finds nothing in another mapping: every field of ``new`` counts as added)."""
    old_meta, new_meta = old.get("metadata"), new.get("metadata")
    if not isinstance(old, dict) or not isinstance(old_meta, dict) or not isinstance(new_meta, dict):
        return None
    values: dict[Path, tuple[Any, _Node]] = {}
    differing: set[Path] = set()
    for key in {*old, *new}:
        if key not in ("apiVersion", "kind", "metadata"):
            _compare((f"f:{key}",), old.get(key), new.get(key), root, key, values, differing)
    for key in {*old_meta, *new_meta}:
        if key not in _UNTRACKED_META:
            _compare(("f:metadata", f"f:{key}"), old_meta.get(key), new_meta.get(key), meta, key, values, differing)
    return values, differing


def _compare(region: Path, before: Any, after: Any, parent: _Node, key: str,
             values: dict[Path, tuple[Any, _Node]], differing: set[Path]) -> None:
    if after is not None:
        values[region] = (after, parent.child(key))
    if before is None and after is None:
        return
    if before is None or after is None or not (before == after and _same_json(before, after)):
        differing.add(region)


def _all_regions(obj: Mapping[str, Any], root: _Node, meta: _Node) -> _Regions:
    """Every region of ``obj``, all of them differing (a create, or a ``metadata`` that is not an
    object: then ``metadata`` itself is one region, as ``field_set`` walks it)."""
    values: dict[Path, tuple[Any, _Node]] = {}
    for key, value in obj.items():
        if key in ("apiVersion", "kind") or value is None:
            continue
        if key == "metadata" and isinstance(value, dict):
            for mkey, mvalue in value.items():
                if mkey not in _UNTRACKED_META and mvalue is not None:
                    values[("f:metadata", f"f:{mkey}")] = (mvalue, meta.child(mkey))
            continue
        values[(f"f:{key}",)] = (value, root.child(key))
    return values, set(values)


class _Owned:
    """Splits entries' FieldsV1 trees for ``update_managed_fields``: the subtree of a region whose
    value did not change is kept as it is when it holds only fields of the new object
    (``_tree_within``); every other path is listed, to be intersected with ``known``: the new
    object's paths under the differing regions (``new_paths``, which it extends) and under any
    unchanged region whose subtree one entry could not keep (worked out then, once)."""

    def __init__(self, values: dict[Path, tuple[Any, _Node]], differing: set[Path], new_paths: set[Path],
                 mode: str) -> None:
        self.values = values
        self.differing = differing
        self.known = new_paths
        self.mode = mode
        self.collected: set[Path] = set()

    def split(self, tree: Any) -> tuple[dict[Path, dict[str, Any]], set[Path]]:
        """(the kept subtrees by region, the paths of the rest of ``tree``)."""
        kept: dict[Path, dict[str, Any]] = {}
        listed: set[Path] = set()
        if not isinstance(tree, dict):
            return kept, listed
        for top, sub in tree.items():
            if top == "f:metadata" and isinstance(sub, dict) and sub:
                for member, msub in sub.items():
                    self._place(("f:metadata", str(member)), msub, kept, listed)
            else:
                self._place((str(top),), sub, kept, listed)
        return kept, listed

    def _place(self, region: Path, sub: Any, kept: dict[Path, dict[str, Any]], listed: set[Path]) -> None:
        found = self.values.get(region)
        if found is not None and region not in self.differing:
            value, node = found
            try:
                within = _tree_within(sub, value, node, region[-1][2:], self.mode)
            except TypeError:  # a tree with keys that are not strings (an in-process caller's): listed
                within = False
            if within:
                kept[region] = sub
                return
            if region not in self.collected:  # an unchanged region: its paths are new's, none changed
                self.collected.add(region)
                _collect(value, node, region, self.known, self.mode)
        _walk_tree(sub, region, listed)


def _tree_within(tree: Any, value: Any, node: _Node, name: str, mode: str) -> bool:
    """Whether every leaf path of the FieldsV1 ``tree`` is one that ``_collect`` yields for ``value``
    at a field named ``name``, and ``tree`` is as ``paths_to_fields_v1`` builds it (keys sorted,
    leaves ``{}``), so that it can be kept as it is. False is always safe (the caller then lists
    the tree's paths): of items with the same key, only the last is looked at."""
    if type(tree) is not dict:
        return False
    if isinstance(value, dict) and not node.atomic:
        if len(tree) < 2 and all(v is None for v in value.values()):  # (two members: one is a field)
            return not tree  # an empty map: its own path
        if not tree:
            return False
        dot = bool(mode) and not (mode == "builtin" and name in _VALUE_STRUCTS)
        return _fields_within(tree, value, node, mode, dot)
    if isinstance(value, list):
        kind, elements = _keyed(node, value)
        if kind == "map":
            items = dict(zip(elements, value, strict=True))  # of repeated keys, the last
            item_node = node.item()
            previous = ""
            for element, sub in tree.items():
                item = items.get(element)
                if element <= previous or item is None or type(sub) is not dict or not sub:
                    return False
                if not _fields_within(sub, item, item_node, mode, True):
                    return False
                previous = element
            return bool(tree)
        if kind == "set" and all(not isinstance(i, (dict, list)) for i in value):
            members = {_value_key(i) for i in value}
            previous = ""
            for element, sub in tree.items():
                if element <= previous or element not in members or type(sub) is not dict or sub:
                    return False
                previous = element
            return bool(tree)
    return not tree


def _fields_within(tree: dict[str, Any], value: Mapping[str, Any], node: _Node, mode: str, dot: bool) -> bool:
    """``_tree_within`` for the members of a granular map or list item: ``.`` (when ``dot``) and
    ``f:<field>`` of the fields ``value`` sets, in order."""
    previous = ""
    for element, sub in tree.items():
        if element <= previous:
            return False
        previous = element
        if element == ".":
            if not dot or type(sub) is not dict or sub:
                return False
        elif element[:2] == "f:":
            child = value.get(element[2:])
            if child is None:
                return False
            if type(sub) is dict and not sub and not isinstance(child, (dict, list)):
                continue  # a scalar: its own path, whatever its schema
            if not _tree_within(sub, child, node.child(element[2:]), element[2:], mode):
                return False
        else:
            return False
    return True


def _assemble(kept: Mapping[Path, dict[str, Any]], paths: Iterable[Path]) -> dict[str, Any]:
    """``paths_to_fields_v1`` of ``paths`` and of the paths of the ``kept`` subtrees (each at its
    region, already as ``paths_to_fields_v1`` builds it: shared, not copied)."""
    tree = paths_to_fields_v1(paths)
    if not kept:
        return tree
    for region, sub in kept.items():
        parent = tree
        for element in region[:-1]:
            parent = parent.setdefault(element, {})
        parent[region[-1]] = sub
    out = {key: tree[key] for key in sorted(tree)}
    members = out.get("f:metadata")
    if members:
        out["f:metadata"] = {key: members[key] for key in sorted(members)}
    return out
