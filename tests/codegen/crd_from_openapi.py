"""CRD schemas of built-in types, as controller-gen writes them, built from the vendored OpenAPI definitions.

controller-gen expands a Go field of a built-in type into the CRD's structural schema: every
``$ref`` inlined, ``IntOrString``/``Quantity`` as ``x-kubernetes-int-or-string`` with
``anyOf: [integer, string]``, ``metav1.Time`` as a ``date-time`` string, ``RawExtension`` as a
preserve-unknown-fields object, a nested ObjectMeta as a bare ``type: object`` (its fields are
pruned unless ``generateEmbeddedObjectMeta``), no ``null`` types. ``schema_of`` does the same
for one upstream definition, with or without descriptions (``crd:maxDescLen=0``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from samplecontroller.apimachinery.openapi_schemas import definitions

INT_OR_STRING = {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}
SPECIAL: dict[str, dict[str, Any]] = {
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": INT_OR_STRING,
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {**INT_OR_STRING, "pattern": "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)"},
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": {"type": "string", "format": "date-time"},
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": {"type": "string", "format": "date-time"},
    "io.k8s.apimachinery.pkg.runtime.RawExtension": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {"type": "object"},
}
KEPT = ("format", "enum", "required", "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type")


def schema_of(definition: str, descriptions: bool = True, defs: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The structural schema controller-gen writes for a field of the type ``definition`` (from ``defs``,
    another Kubernetes version's definitions; default: the vendored ones)."""
    defs = definitions() if defs is None else defs
    return _convert(defs[definition], descriptions, 0, defs)


def _convert(node: Any, descriptions: bool, depth: int, defs: Mapping[str, Any]) -> dict[str, Any]:
    if depth > 40:
        raise ValueError("recursive definition")
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.removeprefix("#/$defs/")
        special = SPECIAL.get(name)
        found = dict(special) if special is not None else _convert(defs[name], descriptions, depth + 1, defs)
        if descriptions and node.get("description"):
            found["description"] = node["description"]
        return found
    out: dict[str, Any] = {}
    typ = node.get("type")
    if isinstance(typ, list):
        typ = next(t for t in typ if t != "null")
    if typ is not None:
        out["type"] = typ
    if descriptions and node.get("description"):
        out["description"] = node["description"]
    for key in KEPT:
        if key in node:
            out[key] = node[key]
    if isinstance(node.get("properties"), dict):
        out["properties"] = {k: _convert(v, descriptions, depth + 1, defs) for k, v in node["properties"].items()}
    if isinstance(node.get("items"), dict):
        out["items"] = _convert(node["items"], descriptions, depth + 1, defs)
    if isinstance(node.get("additionalProperties"), dict):
        out["additionalProperties"] = _convert(node["additionalProperties"], descriptions, depth + 1, defs)
    return out


def crd(kind: str, spec: dict[str, Any], status: dict[str, Any] | None = None, group: str = "batch.tutorial.example.com",
        plural: str | None = None) -> dict[str, Any]:
    """A CustomResourceDefinition (v1, status subresource) with these spec and status properties."""
    props: dict[str, Any] = {"spec": {"type": "object", "properties": spec}}
    if status is not None:
        props["status"] = {"type": "object", "properties": status}
    name = plural or kind.lower() + "s"
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{name}.{group}"},
        "spec": {"group": group, "scope": "Namespaced", "names": {"kind": kind, "plural": name},
                 "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                   "apiVersion": {"type": "string"}, "kind": {"type": "string"},
                                   "metadata": {"type": "object"}, **props}}}}]},
    }
