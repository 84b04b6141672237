"""The upstream Kubernetes OpenAPI definitions (v1.37), vendored as package data.

``openapi_definitions.json.xz`` beside this module is the ``_definitions.json`` of the pinned
``kubernetes-validate`` package (``SCHEMA_VERSION``), byte for byte, xz-compressed; only
``hack/update_openapi_schemas.py`` reads that package (it regenerates the file; ``--verify``
checks it, run by ``make test``). Nothing here needs kubernetes-validate at run time.

Contract: the definitions are decompressed and decoded once, lazily, and cached for the life of
the process; callers must treat every returned dict as read-only (they are shared). References
look like ``{"$ref": "#/$defs/<name>"}``; ``resolve`` follows them. Types are JSON-schema style
(``"type": ["string", "null"]``) exactly as upstream ships them.
"""

from __future__ import annotations

import functools
import importlib.resources
import lzma
from typing import Any

import msgspec

__all__ = [
    "SCHEMA_VERSION",
    "VENDORED_FILE",
    "definition",
    "definition_name_for_gvk",
    "definitions",
    "raw_definitions",
    "ref_name",
    "resolve",
    "resolve_static",
]

# The kubernetes-validate directory the vendored file comes from (its Kubernetes version).
SCHEMA_VERSION = "v1.37.0-local"
# The vendored file, package data of this package.
VENDORED_FILE = "openapi_definitions.json.xz"
_REF_PREFIXES = ("#/$defs/", "#/definitions/", "#/components/schemas/")


def raw_definitions() -> bytes:
    """The vendored file decompressed: upstream's ``_definitions.json`` bytes (not cached)."""
    resource = importlib.resources.files(__package__ or "samplecontroller.apimachinery") / VENDORED_FILE
    return lzma.decompress(resource.read_bytes())


@functools.cache
def definitions() -> dict[str, Any]:
    """All upstream definitions by name (``io.k8s.api.apps.v1.Deployment`` ...)."""
    data = msgspec.json.decode(raw_definitions())
    defs = data.get("$defs") or data.get("definitions") or {}
    if not isinstance(defs, dict):
        raise RuntimeError(f"unexpected layout of {VENDORED_FILE}")
    return defs


def definition(name: str) -> dict[str, Any]:
    """The definition called ``name``; ``KeyError`` if there is none."""
    found = definitions().get(name)
    if not isinstance(found, dict):
        raise KeyError(f"no OpenAPI definition named {name!r}")
    return found


@functools.cache
def _gvk_index() -> dict[tuple[str, str, str], str]:
    index: dict[tuple[str, str, str], str] = {}
    for name, schema in definitions().items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or ():
            key = (gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", ""))
            # Prefer the canonical (non-meta) definition when several claim one GVK.
            if key not in index or ".apimachinery." in index[key]:
                index[key] = name
    return index


def definition_name_for_gvk(group: str, version: str, kind: str) -> str | None:
    """The definition name for a built-in group/version/kind, or None if unknown."""
    return _gvk_index().get((group, version, kind))


def ref_name(ref: str) -> str:
    """The definition name inside a ``$ref`` string."""
    for prefix in _REF_PREFIXES:
        if ref.startswith(prefix):
            return ref[len(prefix):]
    return ref


def resolve(schema: Any) -> dict[str, Any]:
    """Follow ``$ref`` (also one wrapped in ``allOf``) until a concrete schema; {} if unknown.

    Sibling keywords of a ``$ref`` (description, patch strategy...) are merged on top of
    the referenced schema, so a field's ``x-kubernetes-*`` extensions are kept.
    """
    if not isinstance(schema, dict):
        return {}
    seen = 0
    cur: dict[str, Any] = schema
    while seen < 64:
        ref = cur.get("$ref")
        if ref is None:
            all_of = cur.get("allOf")
            if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict) and "$ref" in all_of[0]:
                ref = all_of[0]["$ref"]
            else:
                return cur
        target = definitions().get(ref_name(str(ref)))
        if target is None:
            return {}
        extras = {k: v for k, v in cur.items() if k not in ("$ref", "allOf")}
        cur = {**target, **extras} if extras else target
        seen += 1
    return cur


_RESOLVED: dict[int, tuple[Any, dict[str, Any]]] = {}


def resolve_static(schema: Any) -> dict[str, Any]:
    """``resolve(schema)``, memoized by identity, for schemas that live in ``definitions()``
    (loaded once, never changed): hot paths walk the same property schemas on every request.
    Do not pass temporary dicts: the cache keeps each key alive (which also keeps ids unique)."""
    hit = _RESOLVED.get(id(schema))
    if hit is None:
        hit = (schema, resolve(schema))
        _RESOLVED[id(schema)] = hit
    return hit[1]
