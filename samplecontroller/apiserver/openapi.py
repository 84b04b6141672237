"""OpenAPI v3 documents for ``GET /openapi/v3`` and ``/openapi/v3/<api|apis/g>/<v>``.

What kubectl needs (see kubectl-wire/RULES.md): per kind, a ``patch`` operation tagged with
``x-kubernetes-group-version-kind`` that lists the ``fieldValidation`` query parameter, and
component schemas carrying ``x-kubernetes-group-version-kind`` (``kubectl explain``) and the
``x-kubernetes-patch-*`` extensions (client-side apply of built-ins).

Contracts: outputs are plain JSON-ready dicts, deterministic for equal inputs (keys sorted by
``document_hash``); built-in documents are cached (callers must not mutate them).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from samplecontroller.apimachinery import openapi_schemas
from samplecontroller.apiserver.version import KUBERNETES_VERSION

__all__ = [
    "KindSpec",
    "builtin_document",
    "crd_document",
    "crd_schema_name",
    "document_hash",
    "gv_path",
    "v2_document",
    "build_index",
]

KindSpec = Mapping[str, Any] | str
"""A kind in a document: ``"Deployment"`` or ``{"kind", "plural", "namespaced", "subresources"}``."""

_V3_REF = "#/components/schemas/"
_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_LIST_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
_SPECIAL = {
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"type": "string", "format": "int-or-string"},
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {"type": "string", "format": "quantity"},
}
_PATCH_TYPES = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
)


def gv_path(group_version: str) -> str:
    """``v1`` -> ``api/v1``; ``apps/v1`` -> ``apis/apps/v1``."""
    return f"apis/{group_version}" if "/" in group_version else f"api/{group_version}"


def document_hash(doc: Mapping[str, Any]) -> str:
    """A stable content hash (upper-case hex SHA-512 of canonical JSON), as in ``?hash=``."""
    data = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha512(data).hexdigest().upper()


def build_index(group_versions: Iterable[str], hashes: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The ``/openapi/v3`` index for ``group_versions`` (``v1``, ``apps/v1``...).

    ``hashes`` maps a group/version to its document's ``document_hash``; pass it so that
    clients' caches notice changes (a CRD update). Missing entries hash the name only.
    """
    paths: dict[str, Any] = {}
    for gv in sorted(set(group_versions)):
        key = gv_path(gv)
        digest = (hashes or {}).get(gv) or hashlib.sha512(gv.encode()).hexdigest().upper()
        paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}
    return {"paths": paths}


# ---------------------------------------------------------------------------- schema conversion


def _convert(node: Any) -> Any:
    """Upstream JSON-schema style (``$defs``, type lists) -> OpenAPI v3 as Kubernetes serves it."""
    if isinstance(node, list):
        return [_convert(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    ref = node.get("$ref")
    for key, value in node.items():
        if key == "$ref":
            continue
        if key == "type" and isinstance(value, list):
            types = [t for t in value if t != "null"]
            if types:
                out["type"] = types[0]
        elif key == "enum" and isinstance(value, list):
            out["enum"] = [v for v in value if v is not None]
        elif key in ("properties", "additionalProperties", "items", "allOf", "oneOf", "anyOf", "not"):
            out[key] = {k: _convert(v) for k, v in value.items()} if key == "properties" else _convert(value)
        else:
            out[key] = value
    if ref is not None:
        target = _V3_REF + openapi_schemas.ref_name(str(ref))
        if out:
            out["allOf"] = [{"$ref": target}]
        else:
            out["$ref"] = target
    return out


def _refs(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            found.add(openapi_schemas.ref_name(ref))
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)


def _closure(names: Iterable[str]) -> list[str]:
    defs = openapi_schemas.definitions()
    todo = [n for n in names if n in defs]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        found: set[str] = set()
        _refs(defs[name], found)
        todo.extend(n for n in found if n in defs and n not in seen)
    return sorted(seen)


def _components(names: Iterable[str]) -> dict[str, Any]:
    defs = openapi_schemas.definitions()
    out: dict[str, Any] = {}
    for name in _closure(names):
        out[name] = copy.deepcopy(_SPECIAL[name]) if name in _SPECIAL else _without_type_enums(_convert(defs[name]))
    return out


def _without_type_enums(schema: dict[str, Any]) -> dict[str, Any]:
    """kube-apiserver's schemas do not restrict ``apiVersion``/``kind`` to one value (the upstream
    JSON-schema files add that enum; ``kubectl explain`` would print it)."""
    props = schema.get("properties")
    if isinstance(props, dict):
        for key in ("apiVersion", "kind"):
            if isinstance(props.get(key), dict):
                props[key].pop("enum", None)
    return schema


# ---------------------------------------------------------------------------- paths


def _param(name: str, where: str, description: str, required: bool = False) -> dict[str, Any]:
    param: dict[str, Any] = {"name": name, "in": where, "description": description, "schema": {"type": "string", "uniqueItems": True}}
    if required:
        param["required"] = True
    return param


_FIELD_VALIDATION = _param(
    "fieldValidation",
    "query",
    "fieldValidation instructs the server on how to handle objects in the request containing unknown or "
    "duplicate fields. Valid values are: Ignore, Warn (the default) and Strict.",
)
_DRY_RUN = _param("dryRun", "query", "When present, indicates that modifications should not be persisted.")
_FIELD_MANAGER = _param("fieldManager", "query", "fieldManager is a name associated with the actor or entity making these changes.")
_FORCE = {
    "name": "force",
    "in": "query",
    "description": "Force is going to \"force\" Apply requests. It must be unset for non-apply patch requests.",
    "schema": {"type": "boolean", "uniqueItems": True},
}
_PRETTY = _param("pretty", "query", "If 'true', then the output is pretty printed.")


def _body(ref: str) -> dict[str, Any]:
    schema = {"$ref": _V3_REF + ref}
    return {"content": {"application/json": {"schema": schema}, "application/yaml": {"schema": schema}}}


def _operation(action: str, gvk: dict[str, str], kind_ref: str, op_id: str, params: list[dict[str, Any]]) -> dict[str, Any]:
    op: dict[str, Any] = {
        "operationId": op_id,
        "parameters": params,
        "responses": {"200": {"description": "OK", **_body(kind_ref)}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": dict(gvk),
    }
    if action in ("put", "post"):
        op["requestBody"] = {**_body(kind_ref), "required": True}
        op["responses"]["201"] = {"description": "Created", **_body(kind_ref)}
    if action == "patch":
        patch_schema = {"$ref": _V3_REF + "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}
        op["requestBody"] = {"content": {t: {"schema": patch_schema} for t in _PATCH_TYPES}, "required": True}
        op["responses"]["201"] = {"description": "Created", **_body(kind_ref)}
    return op


def _kind_paths(group: str, version: str, spec: Mapping[str, Any], kind_ref: str, list_ref: str | None) -> dict[str, Any]:
    kind = str(spec["kind"])
    plural = str(spec.get("plural") or kind.lower() + "s")
    namespaced = bool(spec.get("namespaced", True))
    prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
    collection = f"{prefix}/namespaces/{{namespace}}/{plural}" if namespaced else f"{prefix}/{plural}"
    gvk = {"group": group, "version": version, "kind": kind}
    op_base = f"{kind}{'Namespaced' if namespaced else ''}"
    common = [_param("name", "path", f"name of the {kind}", required=True)]
    if namespaced:
        common.append(_param("namespace", "path", "object name and auth scope, such as for teams and projects", required=True))
    writes = [_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION]
    item_path: dict[str, Any] = {
        "parameters": [*common, _PRETTY],
        "get": _operation("get", gvk, kind_ref, f"read{op_base}", []),
        "put": _operation("put", gvk, kind_ref, f"replace{op_base}", list(writes)),
        "patch": _operation("patch", gvk, kind_ref, f"patch{op_base}", [*writes, _FORCE]),
        "delete": _operation("delete", gvk, "io.k8s.apimachinery.pkg.apis.meta.v1.Status", f"delete{op_base}", [_DRY_RUN]),
    }
    coll_params = [_PRETTY] + ([common[1]] if namespaced else [])
    coll_path: dict[str, Any] = {
        "parameters": coll_params,
        "post": _operation("post", gvk, kind_ref, f"create{op_base}", list(writes)),
    }
    if list_ref:
        coll_path["get"] = _operation("list", {**gvk}, list_ref, f"list{op_base}", [])
    paths: dict[str, Any] = {collection: coll_path, f"{collection}/{{name}}": item_path}
    for sub in spec.get("subresources") or ():
        sub_ref = "io.k8s.api.autoscaling.v1.Scale" if sub == "scale" else kind_ref
        sub_gvk = {"group": "autoscaling", "version": "v1", "kind": "Scale"} if sub == "scale" else gvk
        paths[f"{collection}/{{name}}/{sub}"] = {
            "parameters": [*common, _PRETTY],
            "get": _operation("get", sub_gvk, sub_ref, f"read{op_base}{sub.title()}", []),
            "put": _operation("put", sub_gvk, sub_ref, f"replace{op_base}{sub.title()}", list(writes)),
            "patch": _operation("patch", sub_gvk, sub_ref, f"patch{op_base}{sub.title()}", [*writes, _FORCE]),
        }
    return paths


def _kind_spec(kind: KindSpec) -> dict[str, Any]:
    return {"kind": kind} if isinstance(kind, str) else dict(kind)


def _document(paths: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": KUBERNETES_VERSION},
        "paths": dict(sorted(paths.items())),
        "components": {"schemas": dict(sorted(schemas.items()))},
    }


def builtin_document(group: str, version: str, kinds: Iterable[KindSpec]) -> dict[str, Any]:
    """The document of a built-in group/version (``group`` is ``""`` for core) for ``kinds``.

    Each kind is a name or a mapping with ``kind`` and optional ``plural`` (default lower-case
    kind + "s"), ``namespaced`` (default True) and ``subresources`` (``["status", "scale"]``).
    Kinds unknown to the upstream definitions get paths but no schema. Cached; do not mutate.
    """
    frozen = tuple(json.dumps(_kind_spec(k), sort_keys=True) for k in kinds)
    return _builtin_document(group, version, frozen)


@functools.lru_cache(maxsize=64)
def _builtin_document(group: str, version: str, frozen: tuple[str, ...]) -> dict[str, Any]:
    specs = [json.loads(f) for f in frozen]
    names: list[str] = [_OBJECT_META, _LIST_META, "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
                        "io.k8s.apimachinery.pkg.apis.meta.v1.Patch", "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"]
    paths: dict[str, Any] = {}
    for spec in specs:
        kind_ref = openapi_schemas.definition_name_for_gvk(group, version, spec["kind"]) or ""
        list_ref = openapi_schemas.definition_name_for_gvk(group, version, spec["kind"] + "List")
        if "scale" in (spec.get("subresources") or ()):
            names.append("io.k8s.api.autoscaling.v1.Scale")
        names.extend(n for n in (kind_ref, list_ref) if n)
        paths.update(_kind_paths(group, version, spec, kind_ref, list_ref))
    return _document(paths, _components(names))


def crd_schema_name(group: str, version: str, kind: str) -> str:
    """Kubernetes' component name for a custom kind: ``io.k8s.samplecontroller.v1alpha1.Foo``."""
    return ".".join([*reversed(group.split(".")), version, kind])


def _without_strategic_merge(paths: dict[str, Any]) -> dict[str, Any]:
    """Custom resources do not accept strategic merge patches, so their patch operations must not
    list it: kubectl picks strategic merge for client-side apply when the operation offers it."""
    for item in paths.values():
        patch = item.get("patch") if isinstance(item, dict) else None
        content = ((patch or {}).get("requestBody") or {}).get("content")
        if isinstance(content, dict):
            content.pop("application/strategic-merge-patch+json", None)
    return paths


def _standard_description(field: str) -> str:
    """The full upstream description of a top-level ``apiVersion``/``kind``/``metadata`` field
    (kube-apiserver gives custom resources the same text as built-in kinds)."""
    props = openapi_schemas.definition("io.k8s.api.core.v1.ConfigMap").get("properties") or {}
    return str((props.get(field) or {}).get("description") or "")


def crd_document(crd: Mapping[str, Any], version: str) -> dict[str, Any]:
    """The document for one served version of a CRD (apiextensions.k8s.io/v1 object as a dict).

    The kind's schema is the version's ``openAPIV3Schema`` with ``apiVersion``, ``kind`` and
    ``metadata`` (a reference to ObjectMeta) added; the list kind is described too.
    Raises ``KeyError`` if the CRD does not define ``version``.
    """
    spec = crd.get("spec") or {}
    group = str(spec.get("group", ""))
    names = spec.get("names") or {}
    kind = str(names.get("kind", ""))
    list_kind = str(names.get("listKind") or kind + "List")
    entry = next((v for v in spec.get("versions") or () if v.get("name") == version), None)
    if entry is None:
        raise KeyError(f"CRD {crd.get('metadata', {}).get('name')!r} has no version {version!r}")
    raw = ((entry.get("schema") or {}).get("openAPIV3Schema")) or {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    kind_name = crd_schema_name(group, version, kind)
    list_name = crd_schema_name(group, version, list_kind)
    gvk = {"group": group, "version": version, "kind": kind}
    schema = copy.deepcopy(dict(raw))
    props = dict(schema.get("properties") or {})
    props.setdefault("apiVersion", {"type": "string", "description": _standard_description("apiVersion")})
    props.setdefault("kind", {"type": "string", "description": _standard_description("kind")})
    props["metadata"] = {"allOf": [{"$ref": _V3_REF + _OBJECT_META}], "description": _standard_description("metadata")}
    schema["properties"] = props
    schema["type"] = "object"
    schema["x-kubernetes-group-version-kind"] = [gvk]
    list_schema = {
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "items": {"type": "array", "items": {"$ref": _V3_REF + kind_name}},
            "metadata": {"allOf": [{"$ref": _V3_REF + _LIST_META}]},
        },
        "x-kubernetes-group-version-kind": [{**gvk, "kind": list_kind}],
    }
    subresources = [s for s in ("status", "scale") if s in (entry.get("subresources") or {})]
    kind_spec = {"kind": kind, "plural": names.get("plural"), "namespaced": spec.get("scope", "Namespaced") == "Namespaced", "subresources": subresources}
    paths = _without_strategic_merge(_kind_paths(group, version, kind_spec, kind_name, list_name))
    meta_names = [_OBJECT_META, _LIST_META, "io.k8s.apimachinery.pkg.apis.meta.v1.Status", "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"]
    if "scale" in subresources:
        meta_names.append("io.k8s.api.autoscaling.v1.Scale")
    schemas = _components(meta_names)
    schemas[kind_name] = schema
    schemas[list_name] = list_schema
    return _document(paths, schemas)


# ---------------------------------------------------------------------------- OpenAPI v2 (swagger 2.0)

_V2_REF = "#/definitions/"
_V2_DROP = frozenset({"nullable", "anyOf", "oneOf", "not", "default", "example"})
_V2_MEDIA = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"]


def _v2_schema(node: Any) -> Any:
    """One v3 schema as swagger 2.0 (kube-openapi's proto models): ``$ref`` into
    ``#/definitions/``, a lone ``allOf`` reference folded into ``$ref`` (v2 readers ignore
    ``allOf``; a reference keeps no type), and v3-only keywords dropped."""
    if isinstance(node, list):
        return [_v2_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _V2_DROP:
            continue
        if key == "$ref":
            out[key] = _V2_REF + str(value).rsplit("/", 1)[-1]
        elif key == "properties" and isinstance(value, dict):
            out[key] = {k: _v2_schema(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "allOf"):
            out[key] = _v2_schema(value)
        else:
            out[key] = value
    all_of = out.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict) and "$ref" in all_of[0]:
        del out["allOf"]
        out["$ref"] = all_of[0]["$ref"]
        out.pop("type", None)
        out.pop("properties", None)
    if out.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
    return out


def _v2_parameter(param: Mapping[str, Any]) -> dict[str, Any]:
    schema = param.get("schema") or {}
    out = {k: v for k, v in param.items() if k != "schema"}
    out["type"] = schema.get("type", "string")
    if schema.get("uniqueItems"):
        out["uniqueItems"] = True
    return out


def _v2_response(response: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"description": response.get("description", "")}
    content = response.get("content") or {}
    schema = next((c.get("schema") for c in content.values() if isinstance(c, dict) and c.get("schema")), None)
    if schema is not None:
        out["schema"] = _v2_schema(schema)
    return out


def _v2_operation(op: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {k: v for k, v in op.items() if k.startswith("x-") or k == "operationId"}
    params = [_v2_parameter(p) for p in op.get("parameters") or ()]
    body = op.get("requestBody")
    if isinstance(body, dict):
        content = body.get("content") or {}
        out["consumes"] = list(content)
        schema: Any = next((c.get("schema") for c in content.values() if isinstance(c, dict) and c.get("schema")), {})
        params.insert(0, {"name": "body", "in": "body", "required": True, "schema": _v2_schema(schema)})
    out["produces"] = list(_V2_MEDIA)
    out["parameters"] = params
    out["responses"] = {code: _v2_response(r) for code, r in (op.get("responses") or {}).items()}
    return out


def _v2_path(item: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in item.items():
        if key == "parameters":
            out[key] = [_v2_parameter(p) for p in value]
        elif isinstance(value, dict):
            out[key] = _v2_operation(value)
    return out


def v2_document(v3_docs: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``/openapi/v2`` (swagger 2.0) document of the server, built from its per group/version
    v3 documents: the same paths (bodies as ``in: body`` parameters) and the same schemas as
    ``definitions``. Deterministic for equal inputs."""
    paths: dict[str, Any] = {}
    definitions: dict[str, Any] = {}
    for doc in v3_docs:
        for path, item in (doc.get("paths") or {}).items():
            paths[path] = _v2_path(item)
        for name, schema in ((doc.get("components") or {}).get("schemas") or {}).items():
            definitions[name] = _v2_schema(schema)
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": KUBERNETES_VERSION},
        "paths": dict(sorted(paths.items())),
        "definitions": dict(sorted(definitions.items())),
    }
