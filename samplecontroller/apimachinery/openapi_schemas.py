"""The upstream OpenAPI definitions of built-in kinds, from the pinned kubernetes-validate package.

``definitions()`` returns the ``$defs`` map (keys like ``io.k8s.api.apps.v1.Deployment``), loaded
once per process. ``definition_name_for_gvk`` finds a kind's definition (None when unknown);
``resolve`` follows a ``$ref``.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

__all__ = ["SCHEMA_VERSION", "definition_name_for_gvk", "definitions", "resolve"]

SCHEMA_VERSION = "v1.32.0-local"


@functools.cache
def definitions() -> dict[str, Any]:
    path = resources.files("kubernetes_validate") / "kubernetes-json-schema" / SCHEMA_VERSION / "_definitions.json"
    data = json.loads(path.read_text())
    defs: dict[str, Any] = data.get("$defs") or data.get("definitions") or {}
    return defs


@functools.cache
def _gvk_index() -> dict[tuple[str, str, str], str]:
    index: dict[tuple[str, str, str], str] = {}
    for name, schema in definitions().items():
        for gvk in schema.get("x-kubernetes-group-version-kind", ()):
            index[(gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", ""))] = name
    return index


def definition_name_for_gvk(group: str, version: str, kind: str) -> str | None:
    return _gvk_index().get((group, version, kind))


def resolve(schema: Any) -> dict[str, Any]:
    """The schema itself, or the definition its ``$ref`` (or single ``allOf``) points to."""
    if not isinstance(schema, dict):
        return {}
    ref = schema.get("$ref")
    if ref is None and isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1:
        ref = schema["allOf"][0].get("$ref")
    if isinstance(ref, str):
        found: dict[str, Any] = definitions().get(ref.rsplit("/", 1)[-1], {})
        return found
    return schema
