"""Model source: CRD schemas -> normalized definitions -> datamodel-code-generator -> a syntax tree
-> the project's msgspec Structs.

``Normalizer`` turns an ``openAPIV3Schema`` into named definitions in the small vocabulary the
models need (every nested object is its own definition, ``FooSpec``, ``FooSpecPortsItem``...) and
keeps what the models document (``description``, ``required``, ``enum``) beside it.
datamodel-code-generator (no formatter) maps those definitions to msgspec Structs and picks the
attribute names (snake_case, keywords with a trailing ``_``). Its output is never edited as text:
``parse_models`` reads it with ``ast`` into ``ModelClass``/``ModelAlias`` values (imports resolved,
so an alias such as ``list as list_aliased`` is just ``list``), and ``render_models`` writes each
definition again in the project's shape:

- ``class X(Struct, frozen=True, kw_only=True, gc=False)`` with the schema's description as the
  class docstring and each property's description as its attribute docstring;
- arrays are ``tuple[X, ...]``; an object without properties is ``dict[str, Any]``; a property with
  no type at all (``x-kubernetes-preserve-unknown-fields`` alone) is ``Any`` (any JSON value);
- an optional property is ``X | UnsetType = UNSET`` (absent stays absent), and so is a ``required``
  one with a schema ``default`` (the server fills it in); another ``required`` one is
  plain ``X`` defaulting to Go's zero value (``''``, ``0``, ``False``, ``()``, an empty dict or
  Struct, ``None`` for a nullable or ``Any`` one), so an object without it still decodes, as in Go;
- a property whose name shadows a name its class's annotations or defaults use (``str``, ``dict``,
  ``Any``, ``field``...) gets a trailing ``_`` (its wire name is kept);
- the values of an ``enum`` are a constants class next to the Struct (``PodSetStatusState.RUNNING``,
  ``typing.Final``, so mypy sees each as its ``Literal``); the property stays ``str`` so that a
  value a newer server adds still decodes;
- kinds get ``api_version``/``kind`` (defaulting to their own) and ``metadata`` first, a List's
  ``items`` defaults to ``()``, ``ObjectMeta.managed_fields`` stays ``msgspec.Raw``;
- an array item that is exactly metav1.Condition's schema (as kubebuilder emits it) is the shared
  meta/v1 ``Condition`` (imported from ``meta_v1_module(root)``), not a copy;
- a nested class identical to one another version of the same CRD defines (``Normalizer.crd_shared``)
  is imported from that version's module and re-exported under this module's name (``A as A``, or
  ``B = _B``), its enum constants classes rendered here too; the apply configurations import the
  other version's apply configuration.
"""

from __future__ import annotations

import ast
import json
import keyword
import re
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from samplecontroller.codegen.builtin_types import BUILTIN_PACKAGE, OBJECT_META, BuiltinIndex, builtin_type
from samplecontroller.codegen.compat import BUILTIN_MATCH, alias_block, live_aliases, released_index
from samplecontroller.codegen.errors import CodegenError

# JSON numbers: an integral value stays an int, so decoding then encoding gives the same JSON.
NUMBER: dict[str, Any] = {"anyOf": [{"type": "integer"}, {"type": "number"}]}
# Marks a definition that a models module imports instead of defining (the value is the module),
# and the name it has there when the module imports it under another.
IMPORTED = "x-samplecontroller-imported"
IMPORTED_NAME = "x-samplecontroller-imported-name"
# The body of a class imported from another version of the CRD (its enum constants are rendered locally).
SHARED_BODY = "x-samplecontroller-shared-body"
# The keys of a normalized definition that only the rendering reads (datamodel-code-generator never sees them).
DOC_KEYS = ("description", "required", "enum", "x-samplecontroller-constants")
# metav1.Condition's properties and their types, as controller-gen emits them.
CONDITION_PROPERTIES = {"type": "string", "status": "string", "lastTransitionTime": "string", "reason": "string",
                        "message": "string", "observedGeneration": "integer"}
CONDITION_REQUIRED = {"type", "status", "lastTransitionTime", "reason", "message"}
TYPING_NAMES = ("TYPE_CHECKING", "Any", "Final", "TypeAlias")
MSGSPEC_NAMES = ("UNSET", "Raw", "Struct", "UnsetType", "field")
# Names every models module uses for itself: an imported built-in type never takes one.
RESERVED_NAMES = frozenset({*TYPING_NAMES, *MSGSPEC_NAMES, "ObjectMeta", "ListMeta", "ResourceInfo"})
# Go's zero values of the scalar types (Any: JSON null).
ZEROS: dict[str | None, str | int | float | bool | None] = {"str": "", "int": 0, "float": 0.0, "bool": False,
                                                            "Any": None}
# Wider than this, a docstring line is wrapped.
DOC_WIDTH = 100


# The library's generated package of the built-in API groups (``codegen.builtins``): a package
# generated from CRDs imports meta/v1 and built-in types from it and never regenerates them.
META_MODULE = f"{BUILTIN_PACKAGE}.apis.meta.v1"


def meta_v1_module(root: str) -> str:
    """The module of ObjectMeta, ListMeta and Condition for a generated package imported as ``root``:
    the library's ``META_MODULE`` (``root`` is the generated package's own import path; meta/v1 is
    never generated into it)."""
    del root
    return META_MODULE


def camel(name: str) -> str:
    """``deploymentName`` -> ``DeploymentName``, ``x-y_z`` -> ``XYZ``."""
    parts = re.split(r"[^A-Za-z0-9]", name)
    return "".join(p[:1].upper() + p[1:] for p in parts if p)


# --------------------------------------------------------------------------------------------
# Schema normalization
# --------------------------------------------------------------------------------------------


def is_meta_condition(schema: Any) -> bool:
    """Is ``schema`` metav1.Condition's: exactly its properties (observedGeneration optional), typed as its?"""
    if not isinstance(schema, dict) or schema.get("type") != "object" or schema.get("nullable") is True:
        return False
    if schema.get("x-kubernetes-preserve-unknown-fields") is True or "additionalProperties" in schema:
        return False
    props = schema.get("properties")
    if not isinstance(props, dict) or not CONDITION_REQUIRED <= set(props) <= set(CONDITION_PROPERTIES):
        return False
    for name, sub in props.items():
        if not isinstance(sub, dict) or sub.get("type") != CONDITION_PROPERTIES[name] or sub.get("nullable") is True:
            return False
        if any(k in sub for k in ("properties", "items", "additionalProperties", "x-kubernetes-int-or-string",
                                  "x-kubernetes-preserve-unknown-fields")):
            return False
    return True


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _field_name(path: str) -> str:
    """The name of the field a schema path ends in (``spec.containers[]`` -> ``containers``), the
    words matching compares with a built-in type's name."""
    return re.sub(r"(\[\]|\[\*\])+$", "", path).rsplit(".", 1)[-1]


class Normalizer:
    """Hoists nested objects into named definitions and simplifies types for the generator.

    ``defs`` maps class names to definitions: ``{"type": "object", "properties": {...}}`` plus
    ``description`` and ``required`` where the schema has them; a property node may carry its
    ``description`` and, for an enum, ``enum`` and ``x-samplecontroller-constants`` (the name of
    its constants class).
    """

    def __init__(self, condition: str | None = "Condition", builtins: BuiltinIndex | None = None,
                 declared: Mapping[str, str | None] | None = None, prefixes: Iterable[str] = ()) -> None:
        self.defs: dict[str, Any] = {}
        self.condition = condition  # the shared Condition's class name (None: never substituted)
        # Built-in types (``builtin_types``): matched with ``builtins`` (None: never), and declared
        # (schema path -> upstream definition, None: generated). An imported type whose name starts
        # with one of ``prefixes`` (the kinds, whose classes are named after them) gets a qualified name.
        self.builtins = builtins
        self.declared = dict(declared or {})
        self.used_declarations: set[str] = set()
        # Generated names a generator change replaced: old -> (new, rule) (codegen.compat: deprecated aliases)
        self.renamed: dict[str, tuple[str, str]] = {}
        self.prefixes = tuple(prefixes)
        self.kind = ""  # the kind whose schema this is (named in errors)
        # What ``--explain`` prints: one line per schema object that is (or nearly is) a built-in type.
        self.explained: list[str] = []
        # The fields of an embedded built-in kind: schema path -> the upstream definition of its type.
        self.implied: dict[str, str] = {}
        # Class bodies already defined in the package (JSON -> class name), shared by its kinds' normalizers.
        self.shared: dict[str, str] | None = None
        # Across the versions of one CRD (shared by their normalizers): class bodies already defined in
        # another version's module (JSON -> (module, class name)), imported from there instead of copied;
        # ``module`` is this version's models module.
        self.crd_shared: dict[str, tuple[str, str]] | None = None
        self.module = ""

    def object_def(self, name: str, schema: dict[str, Any], drop: Iterable[str] = (), path: str = "") -> dict[str, Any]:
        """Define the object ``schema`` as the class ``name`` in ``defs`` and return a ``$ref`` node to it.

        Its properties (but those in ``drop``, like a kind's ``apiVersion``/``kind``/``metadata``)
        become nodes, each nested object its own definition named ``name`` + the property's
        CamelCase name. ``required`` keeps only properties present and without a schema
        ``default``. ``path`` is the schema's dotted path in the kind (matched against the
        ``--builtin-type`` declarations; "" for a kind's root). A nested object whose body is
        identical to one defined already in the package (``shared``) reuses that class instead
        of a copy; two different objects mapping to one class name raise ``CodegenError``.
        """
        dropped = set(drop)
        props = {k: v for k, v in (schema.get("properties") or {}).items() if k not in dropped}
        body: dict[str, Any] = {"type": "object", "properties": {}}
        if _text(schema.get("description")):
            body["description"] = schema["description"]
        # A required property with a schema default is one the server fills in: optional to a client
        # (absent stays absent; a zero value sent for it would override the default).
        required = [r for r in schema.get("required") or [] if isinstance(r, str) and r in props
                    and not (isinstance(props[r], dict) and "default" in props[r])]
        if required:
            body["required"] = sorted(set(required))
        embedded = schema.get("x-kubernetes-embedded-resource") is True
        for prop, sub in sorted(props.items()):
            sub_path = f"{path}.{prop}" if path else prop
            if embedded and prop == "metadata" and self.builtins is not None and sub_path not in self.declared:
                meta = self.builtins.incompatibility(sub, {"$ref": "#/$defs/" + OBJECT_META})
                node = self.builtin_ref(OBJECT_META) if meta is None else self.node(name + camel(prop), sub, sub_path)
            else:
                node = self.node(name + camel(prop), sub, sub_path)
            if _text(sub.get("description")):
                node = {**node, "description": sub["description"]}
            body["properties"][prop] = node
        key = None
        if path and self.shared is not None:
            # The same schema object twice in a package (a Container's in containers and initContainers,
            # one WorkflowSpec in four kinds): one class, named after the first.
            key = self.body_key(body)
            if key in self.shared:
                return {"$ref": f"#/$defs/{self.shared[key]}"}
        if name in self.defs:
            raise CodegenError(f"two schema objects map to the class name {name}")
        owner = self.crd_shared.get(key) if key is not None and self.crd_shared is not None else None
        if owner is not None and owner[0] != self.module:
            # The same schema object in another version of the CRD: that version's class, imported under
            # this version's name (so a conversion assigns it across versions, and the name stays).
            self.defs[name] = {"type": "object", "additionalProperties": True, IMPORTED: owner[0],
                               IMPORTED_NAME: owner[1], SHARED_BODY: body}
        else:
            self.defs[name] = body
            if key is not None and self.crd_shared is not None:
                self.crd_shared.setdefault(key, (self.module, name))
        if key is not None and self.shared is not None:
            self.shared[key] = name
        return {"$ref": f"#/$defs/{name}"}

    def body_key(self, body: dict[str, Any]) -> str:
        """What identifies a class body: its JSON, constants class names left out and each class it
        refers to named by (module, class) wherever it is defined (so a body referring to a class
        another version defines, imported here under another name, equals that version's)."""
        def ident(match: re.Match[str]) -> str:
            local = match.group(1)
            d = self.defs.get(local)
            if isinstance(d, dict) and is_imported(d):
                return f'"$ref": "{d[IMPORTED]}:{d.get(IMPORTED_NAME) or local}"'
            return f'"$ref": "{self.module}:{local}"'

        key = json.dumps(body, sort_keys=True, default=str)
        key = re.sub(r'"x-samplecontroller-constants": "[^"]*"', "", key)
        return re.sub(r'"\$ref": "#/\$defs/([^"]+)"', ident, key)

    def builtin_ref(self, definition: str) -> dict[str, Any]:
        """A reference to the library's model of an upstream definition, imported into the module."""
        where = builtin_type(definition)
        if where is None:
            raise CodegenError(f"the built-in type {definition} has no model in {BUILTIN_PACKAGE}")
        local = where.name
        taken = self.defs.get(local)
        if local in ("ObjectMeta", "ListMeta") and where.module == META_MODULE:
            pass  # imported by every models module
        elif (local in RESERVED_NAMES or local.startswith(self.prefixes)
                or (taken is not None and taken.get(IMPORTED) != where.module)):
            local = camel(where.pkg) + camel(where.version) + where.name
        self.defs.setdefault(local, {"type": "object", "additionalProperties": True, IMPORTED: where.module,
                                     IMPORTED_NAME: where.name})
        return {"$ref": f"#/$defs/{local}"}

    def builtin_of(self, schema: dict[str, Any], path: str, field_doc: str = "") -> str | None:
        """The upstream definition this schema object is (a field of an embedded kind, declared, else
        matched), or None."""
        if path in self.implied:
            return self.implied[path]
        if path in self.declared:
            self.used_declarations.add(path)
            definition = self.declared[path]
            if definition is not None and self.builtins is not None:
                why = self.builtins.incompatibility(schema, {"$ref": "#/$defs/" + definition})
                if why:
                    label = builtin_type(definition)
                    raise CodegenError(f"--builtin-type {self.kind}.{path}={label.label if label else definition}: "
                                       f"the built-in type would lose or mistype what the schema accepts ({why})")
            self._explain(path, definition, "declared" if definition else "declared none: generated")
            return definition
        if self.builtins is None or schema.get("type") != "object" or not schema.get("properties"):
            return None
        if "." not in path:
            return None  # the kind's own spec and status: the CRD's types (declare one to map it)
        if schema.get("x-kubernetes-preserve-unknown-fields") is True:
            return None
        found, why = self.builtins.match_why(schema, _field_name(path), field_doc)
        self._explain(path, found, "matched" if found else f"generated: {why}" if why else "")
        return found

    def _explain(self, path: str, definition: str | None, how: str) -> None:
        if not how:
            return
        where = builtin_type(definition) if definition else None
        target = f"{where.label} ({how})" if where else how
        self.explained.append(f"{self.kind}.{path}: {target}")

    def embedded_kind(self, name: str, schema: dict[str, Any], path: str, definition: str) -> dict[str, Any]:
        """A built-in kind inside a CRD (Argo's ``volumeClaimTemplates``, a PersistentVolumeClaim):
        a class of its own whose fields are the built-in kind's types (its ``spec`` the library's
        ``PersistentVolumeClaimSpec``...), as Go's struct is, but with ``apiVersion``, ``kind`` and
        ``metadata`` optional like Go's ``omitempty`` TypeMeta: the library's model of the kind
        always encodes its own apiVersion and kind (right for an object sent on its own), which
        an embedded one was not given."""
        assert self.builtins is not None
        upstream = self.builtins.defs[definition].get("properties") or {}
        for prop in schema.get("properties") or {}:
            ref, _ = self.builtins.resolve(upstream.get(prop) or {})
            if ref is not None and builtin_type(ref) is not None:
                self.implied[f"{path}.{prop}"] = ref
        if self.explained and self.explained[-1].startswith(f"{self.kind}.{path}: "):
            self.explained[-1] += ": an embedded kind, its own class of the built-in's field types"
        return self.object_def(name, schema, path=path)

    def node(self, name: str, schema: dict[str, Any], path: str = "", field_doc: str = "") -> dict[str, Any]:
        """The normalized node of ``schema`` (at ``path``; an array's items get the array's
        description as ``field_doc``, the field's doc comment that matching compares)."""
        definition = self.builtin_of(schema, path, field_doc) if isinstance(schema, dict) else None
        if definition is not None and self.builtins is not None and self.builtins.is_kind(definition):
            out = self.embedded_kind(name, schema, path, definition)
        elif definition is not None:
            out = self.builtin_ref(definition)
            if path not in self.declared and name:  # matched: builds before 0.1.0 generated a class ``name``
                self.renamed[name] = (out["$ref"].rsplit("/", 1)[-1], BUILTIN_MATCH)
                if self._released_class(schema, path, field_doc):
                    self._alias_released(name, schema, definition, path)
            if schema.get("nullable") is True:
                out = {"anyOf": [out, {"type": "null"}]}
            return out
        else:
            out = self._node(name, schema, path)
        values = [v for v in schema.get("enum") or [] if isinstance(v, str | int | float | bool)]
        if values and "$ref" not in out and out.get("type") not in ("object", "array"):
            out = {**out, "enum": values, "x-samplecontroller-constants": name}
        if schema.get("nullable") is True and out:
            out = {"anyOf": [out, {"type": "null"}], **{k: out[k] for k in DOC_KEYS if k in out}}
        return out

    @staticmethod
    def _released_class(schema: dict[str, Any], path: str, field_doc: str) -> bool:
        """Did samplecontroller 0.1.0 generate a class for this schema object (it matched no built-in
        type then: ``compat.released_index``)?"""
        return released_index().match_why(schema, _field_name(path), field_doc)[0] is None

    def _alias_released(self, name: str, schema: dict[str, Any], definition: str, path: str) -> None:
        """``name`` (a class in 0.1.0) is the built-in ``definition`` now: alias the classes 0.1.0
        generated under it (``name`` + the property's CamelCase name, ``Item`` for an array's items,
        ``Value`` for a map's values, as ``_node`` names them) to the built-in types at their places,
        so that a project's imports of them keep working (codegen.compat)."""
        assert self.builtins is not None
        upstream = self.builtins.defs[definition].get("properties") or {}
        for prop, sub in sorted((schema.get("properties") or {}).items()):
            child, child_path, field_doc = name + camel(prop), f"{path}.{prop}", ""
            node, up = sub, upstream.get(prop)
            while isinstance(node, dict):
                _, shape = self.builtins.resolve(up)
                if node.get("type") == "array" and isinstance(node.get("items"), dict):
                    child, child_path, field_doc = child + "Item", child_path + "[]", _text(node.get("description")) or ""
                    node, up = node["items"], shape.get("items")
                elif (node.get("type") == "object" and not node.get("properties")
                      and isinstance(node.get("additionalProperties"), dict)):
                    child, child_path = child + "Value", child_path + "[*]"
                    node, up = node["additionalProperties"], shape.get("additionalProperties")
                else:
                    break
            if not isinstance(node, dict) or node.get("type") != "object" or not node.get("properties"):
                continue
            ref, _ = self.builtins.resolve(up)
            if ref is None or builtin_type(ref) is None or not self._released_class(node, child_path, field_doc):
                continue  # 0.1.0 used a built-in type there too (or nothing maps it): no class to alias
            self.renamed.setdefault(child, (self.builtin_ref(ref)["$ref"].rsplit("/", 1)[-1], BUILTIN_MATCH))
            self._alias_released(child, node, ref, child_path)

    def _node(self, name: str, schema: dict[str, Any], path: str) -> dict[str, Any]:
        if schema.get("x-kubernetes-int-or-string") is True:
            return {"anyOf": [{"type": "integer"}, {"type": "string"}]}
        typ = schema.get("type")
        if typ is None:
            # No type (preserve-unknown-fields alone): any JSON value, a string as well as an object.
            return {}
        if schema.get("x-kubernetes-preserve-unknown-fields") is True or schema.get("x-kubernetes-embedded-resource"):
            if typ == "array" and isinstance(schema.get("items"), dict):
                return {"type": "array", "items": self.node(name + "Item", schema["items"], path + "[]")}
            if typ == "object" and (schema.get("x-kubernetes-preserve-unknown-fields") is True
                                    or not schema.get("properties")):
                return {"type": "object", "additionalProperties": True}
        if typ == "object":
            if schema.get("properties"):
                return self.object_def(name, schema, path=path)
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict):
                return {"type": "object", "additionalProperties": self.node(name + "Value", extra, path + "[*]")}
            return {"type": "object", "additionalProperties": True}
        if typ == "array":
            items = schema.get("items") or {}
            if self.condition is not None and is_meta_condition(items):
                self.defs.setdefault(self.condition, {"type": "object", "additionalProperties": True,
                                                      IMPORTED: META_MODULE, IMPORTED_NAME: "Condition"})
                return {"type": "array", "items": {"$ref": f"#/$defs/{self.condition}"}}
            return {"type": "array", "items": self.node(name + "Item", items, path + "[]",
                                                        _text(schema.get("description")) or "")}
        if typ == "number":
            return dict(NUMBER)
        if typ in ("string", "integer", "boolean"):
            return {"type": typ}
        return {}


def is_imported(definition: Any) -> bool:
    """Is this definition a stand-in for a class the models module imports (the shared Condition)?"""
    return isinstance(definition, dict) and IMPORTED in definition


def for_datamodel(schema: Any) -> Any:
    """A normalized schema without the keys only the rendering reads (property names are kept:
    a property may well be called ``description`` or ``required``)."""
    if isinstance(schema, list):
        return [for_datamodel(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in DOC_KEYS or key in (IMPORTED, IMPORTED_NAME, SHARED_BODY):
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: for_datamodel(sub) for name, sub in value.items()}
        else:
            out[key] = for_datamodel(value)
    return out


# --------------------------------------------------------------------------------------------
# datamodel-code-generator, and its output read back as a syntax tree
# --------------------------------------------------------------------------------------------


def run_datamodel_codegen(schema: dict[str, Any]) -> str:
    """One datamodel-code-generator run over ``schema`` (no formatter: the output is parsed, not used)."""
    import warnings

    warnings.filterwarnings("ignore", category=FutureWarning)
    from datamodel_code_generator import (  # type: ignore[attr-defined]
        DataModelType,
        InputFileType,
        PythonVersion,
        generate,
    )

    out = generate(json.dumps(schema, sort_keys=True), input_file_type=InputFileType.JsonSchema,
                   output_model_type=DataModelType.MsgspecStruct, snake_case_field=True,
                   use_standard_collections=True, use_union_operator=True, disable_timestamp=True,
                   target_python_version=PythonVersion.PY_311, use_schema_description=False,
                   capitalise_enum_members=False, reuse_model=False, collapse_root_models=False,
                   formatters=[])
    if not isinstance(out, str):
        raise CodegenError("datamodel-code-generator returned several modules; expected one")
    return out


@dataclass
class ModelField:
    """One attribute of a Struct: ``attr: annotation = default`` encoded as ``wire``."""

    attr: str
    wire: str
    annotation: ast.expr
    default: ast.expr | None = None  # None: no default
    factory: bool = False  # ``default`` is a default_factory
    doc: str | None = None


@dataclass
class ModelClass:
    """A Struct of the generated models: its class name, its fields in order, its docstring (None: none)."""

    name: str
    fields: list[ModelField]
    doc: str | None = None


@dataclass
class ModelAlias:
    """``name: TypeAlias = value``."""

    name: str
    value: ast.expr


Definition = ModelClass | ModelAlias


def _name(node: ast.expr) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


class _Canonical(ast.NodeTransformer):
    """Imported aliases back to their names (``list_aliased`` -> ``list``); ``list[X]`` -> ``tuple[X, ...]``."""

    def __init__(self, aliases: Mapping[str, str]) -> None:
        self.aliases = aliases

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return ast.Name(self.aliases.get(node.id, node.id), ast.Load())

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        if isinstance(node.value, ast.Name) and node.value.id in ("builtins", "typing", "msgspec"):
            return ast.Name(node.attr, ast.Load())
        return self.generic_visit(node)  # type: ignore[return-value]

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        node = self.generic_visit(node)  # type: ignore[assignment]
        if _name(node.value) in ("list", "List", "Sequence"):
            return ast.Subscript(ast.Name("tuple", ast.Load()),
                                 ast.Tuple([node.slice, ast.Constant(...)], ast.Load()), ast.Load())
        return node


def _field_call(value: ast.expr) -> ast.Call | None:
    if isinstance(value, ast.Call) and _name(value.func) == "field":
        return value
    return None


def _parse_field(stmt: ast.AnnAssign, canon: _Canonical, where: str) -> ModelField:
    if not isinstance(stmt.target, ast.Name):
        raise CodegenError(f"datamodel-code-generator output: unexpected field target in {where}")
    attr = stmt.target.id
    annotation = canon.visit(stmt.annotation)
    value = canon.visit(stmt.value) if stmt.value is not None else None
    call = _field_call(value) if value is not None else None
    if call is None:
        return ModelField(attr, attr, annotation, value)
    kwargs = {k.arg: k.value for k in call.keywords}
    if call.args or set(kwargs) - {"name", "default", "default_factory"}:
        raise CodegenError(f"datamodel-code-generator output: unexpected field() arguments in {where}.{attr}")
    wire = attr
    if "name" in kwargs:
        name = kwargs["name"]
        if not isinstance(name, ast.Constant) or not isinstance(name.value, str):
            raise CodegenError(f"datamodel-code-generator output: unexpected field name in {where}.{attr}")
        wire = name.value
    if "default_factory" in kwargs:
        return ModelField(attr, wire, annotation, kwargs["default_factory"], factory=True)
    return ModelField(attr, wire, annotation, kwargs.get("default"))


def parse_models(source: str) -> dict[str, Definition]:
    """The classes and type aliases of datamodel-code-generator's output, in its order."""
    tree = ast.parse(source)
    aliases: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            aliases.update({a.asname: a.name for a in node.names if a.asname})
    canon = _Canonical(aliases)
    out: dict[str, Definition] = {}
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring
        if isinstance(node, ast.ClassDef):
            fields = []
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign):
                    fields.append(_parse_field(stmt, canon, node.name))
                elif not (isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr)
                                                          and isinstance(stmt.value, ast.Constant))):
                    raise CodegenError(f"datamodel-code-generator output: unexpected statement in class {node.name}")
            out[node.name] = ModelClass(node.name, fields)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            out[node.target.id] = ModelAlias(node.target.id, canon.visit(node.value))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = ModelAlias(node.targets[0].id, canon.visit(node.value))
        else:
            raise CodegenError(f"datamodel-code-generator output: unexpected statement at line {node.lineno}")
    return out


def model_blocks(schema_defs: dict[str, Any], roots: Iterable[str]) -> dict[str, Definition]:
    """Run the generator once over ``schema_defs`` and return its definitions by name."""
    root = {"$defs": {name: for_datamodel(d) for name, d in schema_defs.items()}, "title": "CodegenRoot", "type": "object",
            "properties": {f"p{i}": {"$ref": f"#/$defs/{name}"} for i, name in enumerate(sorted(roots))}}
    return parse_models(run_datamodel_codegen(root))


# --------------------------------------------------------------------------------------------
# Shaping the definitions
# --------------------------------------------------------------------------------------------


class KindLike(Protocol):
    """What rendering needs of a kind (``generator.Kind``)."""

    @property
    def kind(self) -> str: ...

    @property
    def list_kind(self) -> str: ...

    @property
    def api_version(self) -> str: ...


def _union(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union(node.left) + _union(node.right)
    return [node]


def _join(parts: list[ast.expr]) -> ast.expr:
    out = parts[0]
    for part in parts[1:]:
        out = ast.BinOp(out, ast.BitOr(), part)
    return out


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _load(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


class Shaper:
    """Turns the parsed definitions of one module into the project's shape (see the module docstring)."""

    def __init__(self, parsed: Mapping[str, Definition], schema_defs: Mapping[str, Any]) -> None:
        self.parsed = parsed
        self.schema_defs = schema_defs

    def zero(self, annotation: ast.expr, seen: frozenset[str] = frozenset()) -> tuple[ast.expr, bool]:
        """Go's zero value of a (required) type: (expression, is a default_factory)."""
        parts = _union(annotation)
        if any(_is_none(p) for p in parts):
            return ast.Constant(None), False
        first = parts[0]
        if isinstance(first, ast.Subscript):
            base = _name(first.value)
            if base == "tuple":
                return ast.Tuple([], ast.Load()), False
            if base == "dict":
                return _load("dict"), True
        name = _name(first)
        if name in ZEROS:
            return ast.Constant(ZEROS[name]), False
        if is_imported(self.schema_defs.get(name or "")):
            return _load(name or ""), True  # a built-in Struct (every field of which is optional)
        target = self.parsed.get(name or "")
        if isinstance(target, ModelAlias) and name not in seen:
            return self.zero(target.value, seen | {name or ""})
        if isinstance(target, ModelClass) and not target.fields:
            return _load("dict"), True  # rendered as dict[str, Any]
        if name is not None:
            return _load(name), True  # a Struct (every field of which has a default)
        raise CodegenError(f"no zero value for the type {ast.unparse(annotation)}")

    def shape_class(self, cls: ModelClass, kind: KindLike | None, list_kind: KindLike | None) -> ModelClass:
        """``cls`` as datamodel-code-generator parsed it, in the project's shape (see the module docstring).

        A required field loses ``UnsetType`` and defaults to Go's zero value (``zero``), so does a
        List's ``items``; ``None`` goes last in a union; each field gets its property's
        description. When ``cls`` is a kind (``kind``) or its list (``list_kind``), the
        generated ``apiVersion``/``kind``/``metadata`` fields are replaced by ``api_version`` and
        ``kind`` defaulting to the kind's own and ``metadata`` (ObjectMeta or ListMeta), first.
        """
        schema = self.schema_defs.get(cls.name) or {}
        props = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        fields: list[ModelField] = []
        for f in cls.fields:
            if (kind or list_kind) and f.wire in ("apiVersion", "kind", "metadata"):
                continue
            annotation, default, factory = f.annotation, f.default, f.factory
            if f.wire == "managedFields" and cls.name == "ObjectMeta":
                annotation = ast.BinOp(_load("Raw"), ast.BitOr(), _load("UnsetType"))
            if f.wire in required or (list_kind is not None and f.wire == "items"):
                # Required (the server always sends it): no UnsetType to narrow away; Go's zero value if absent.
                kept = [p for p in _union(annotation) if _name(p) != "UnsetType"]
                annotation = _join(kept)
                default, factory = self.zero(annotation)
            doc = (props.get(f.wire) or {}).get("description")
            parts = _union(annotation)
            annotation = _join([p for p in parts if not _is_none(p)] + [p for p in parts if _is_none(p)])  # None last
            fields.append(ModelField(f.attr, f.wire, annotation, default, factory, _text(doc)))
        head: list[ModelField] = []
        owner = kind or list_kind
        if owner is not None:
            meta = "ListMeta" if list_kind is not None else "ObjectMeta"
            head = [
                ModelField("api_version", "apiVersion", _load("str"), ast.Constant(owner.api_version)),
                ModelField("kind", "kind", _load("str"), ast.Constant(cls.name)),
                ModelField("metadata", "metadata", _load(meta), _load(meta), factory=True),
            ]
        return ModelClass(cls.name, _safe_attrs(head + fields), _text(schema.get("description")))


def _safe_attrs(fields: list[ModelField]) -> list[ModelField]:
    """Attribute names that shadow nothing the class body or its annotations use, and are unique.

    msgspec and mypy read a Struct's annotations in the class namespace, where a field named
    ``str`` would hide the type ``str``; such a field gets a trailing ``_`` (its wire name stays).
    """
    used = {"field", "UNSET"}
    for f in fields:
        used |= _names(f.annotation) | (_names(f.default) if f.default is not None else set())
    taken: set[str] = set()
    out = []
    for f in fields:
        attr = f.attr
        while attr in used or attr in taken or keyword.iskeyword(attr) or not attr.isidentifier():
            attr += "_"
        taken.add(attr)
        out.append(ModelField(attr, f.wire, f.annotation, f.default, f.factory, f.doc))
    return out


# --------------------------------------------------------------------------------------------
# Writing source
# --------------------------------------------------------------------------------------------


def _escape_doc(text: str) -> str:
    """Docstring content: backslashes and non-ASCII escaped, no run of three quotes, no closing quote."""
    out = []
    for i, ch in enumerate(text):
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"' and (i + 1 == len(text) or text[i + 1] == '"'):
            out.append('\\"')
        elif ch == "\n" or (" " <= ch <= "~"):
            out.append(ch)
        else:
            out.append(ch.encode("unicode_escape").decode("ascii"))
    return "".join(out)


def docstring(text: str, indent: str) -> list[str]:
    """The lines of a docstring holding ``text`` (wrapped, escaped), indented by ``indent``."""
    lines: list[str] = []
    for raw in text.replace("\t", "    ").strip().splitlines():
        stripped = raw.strip()
        if not stripped:
            lines.append("")
            continue
        lead = raw[:len(raw) - len(raw.lstrip())]
        lines += textwrap.wrap(stripped, DOC_WIDTH - len(indent), initial_indent=lead, subsequent_indent=lead,
                               break_long_words=False, break_on_hyphens=False)
    while lines and not lines[-1]:
        lines.pop()
    escaped = [_escape_doc(line) for line in lines]
    if len(escaped) == 1:
        return [f'{indent}"""{escaped[0]}"""']
    body = [f"{indent}{line}" if line else "" for line in escaped[1:]]
    return [f'{indent}"""{escaped[0]}', *body, f'{indent}"""']


def _literal(value: Any) -> str:
    """A Python literal for a JSON scalar, ASCII only."""
    if isinstance(value, str):
        return ascii(value)
    return repr(value)


def _field_source(f: ModelField) -> str:
    annotation = ast.unparse(f.annotation)
    default = ast.unparse(f.default) if f.default is not None else None
    if f.default is not None and not f.factory and isinstance(f.default, ast.Constant):
        default = _literal(f.default.value)
    args = [f"name={_literal(f.wire)}"] if f.attr != f.wire else []
    if default is not None:
        args.append(f"default_factory={default}" if f.factory else f"default={default}")
    if f.factory or (args and f.attr != f.wire):
        return f"{f.attr}: {annotation} = field({', '.join(args)})"
    return f"{f.attr}: {annotation}" + (f" = {default}" if default is not None else "")


def _class_source(cls: ModelClass) -> str:
    if not cls.fields:
        # A free-form object (FieldsV1): an empty Struct would drop its content, a dict keeps it.
        return f"{cls.name}: TypeAlias = dict[str, Any]"
    lines = [f"class {cls.name}(Struct, frozen=True, kw_only=True, gc=False):"]
    if cls.doc:
        lines += [*docstring(cls.doc, "    "), ""]
    for f in cls.fields:
        lines.append("    " + _field_source(f))
        if f.doc:
            lines += docstring(f.doc, "    ")
    return "\n".join(lines)


def constant_name(value: Any) -> str:
    """``ReadWriteOnce`` -> ``READ_WRITE_ONCE``, ``application/json`` -> ``APPLICATION_JSON``, ``IPv4`` ->
    ``IPV4``, ``10s`` -> ``VALUE_10S``, ``""`` -> ``EMPTY``."""
    text = str(value)
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z]{2,})", r"\1_\2", text)  # HTTPSProxy -> HTTPS_Proxy, IPv4 stays
    text = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").upper()
    if not text:
        return "EMPTY"
    if text[0].isdigit():
        text = "VALUE_" + text
    return text


@dataclass
class Constants:
    """An enum's values as a class of typed constants."""

    name: str
    owner: str  # ``PodSetStatus.state``
    values: list[Any] = field(default_factory=list)

    def source(self) -> str:
        """The class's Python source: one ``Final`` constant per value, in order.

        Names come from ``constant_name`` (upper snake case); a name already taken gets a
        trailing ``_``.
        """
        lines = [f"class {self.name}:", f'    """Values of ``{self.owner}`` (the server may add others)."""', ""]
        seen: set[str] = set()
        for value in self.values:
            name = constant_name(value)
            while name in seen:
                name += "_"
            seen.add(name)
            lines.append(f"    {name}: Final = {_literal(value)}")
        return "\n".join(lines)


def enum_constants(cls_name: str, schema: Mapping[str, Any]) -> list[Constants]:
    """The constants classes of the enums among ``schema``'s properties (items and map values too)."""
    out: list[Constants] = []

    def visit(node: Any, owner: str) -> None:
        if not isinstance(node, dict):
            return
        name = node.get("x-samplecontroller-constants")
        if isinstance(name, str) and node.get("enum"):
            values = list(dict.fromkeys(v for v in node["enum"] if not isinstance(v, dict | list)))
            out.append(Constants(name, owner, values))
        for key in ("items", "additionalProperties"):
            visit(node.get(key), owner + ("[]" if key == "items" else "[*]"))
        for sub in node.get("anyOf") or []:
            visit(sub, owner)

    for prop, node in (schema.get("properties") or {}).items():
        visit(node, f"{cls_name}.{prop}")
    return out


def _add_constants(chunks: list[str], taken: set[str], found: Iterable[Constants]) -> bool:
    """Append the source of each enum constants class in ``found`` to ``chunks``, renamed past the
    names already ``taken`` (``Values``, then ``_`` suffixes); whether there was any."""
    added = False
    for constants in found:
        base = constants.name
        while constants.name in taken:
            constants.name += "Values" if constants.name == base else "_"
        taken.add(constants.name)
        chunks.append(constants.source())
        added = True
    return added


def render_models(parsed: Mapping[str, Definition], own: list[str], imports: dict[str, list[str]],
                  kinds: Mapping[str, KindLike], schema_defs: Mapping[str, Any] | None = None,
                  with_resource_info: bool = False, with_constants: bool = True,
                  renamed: Mapping[str, tuple[str, str]] | None = None) -> str:
    """The module source (after its docstring) of the definitions named in ``own``; the others it
    uses are imported from ``imports`` (module -> names). ``schema_defs`` are the normalized
    definitions, read for descriptions, ``required`` and enums; ``renamed`` (old -> (new, rule))
    the deprecated aliases to define (``codegen.compat``)."""
    defs = schema_defs or {}
    list_kinds = {k.list_kind: k for k in kinds.values()}
    missing = set(own) - set(parsed)
    if missing:
        raise CodegenError(f"datamodel-code-generator produced no model for {sorted(missing)}")
    shaper = Shaper(parsed, defs)
    taken = set(parsed) | {n.split(" as ")[-1] for names in imports.values() for n in names} | set(RESERVED_NAMES)
    taken.add("ResourceInfo")
    chunks: list[str] = []
    used: set[str] = set()
    own_set = set(own)
    for name, definition in parsed.items():
        if name not in own_set:
            continue
        if isinstance(definition, ModelAlias):
            chunks.append(f"{name}: TypeAlias = {ast.unparse(definition.value)}")
            used |= _names(definition.value) | {"TypeAlias"}
            continue
        cls = shaper.shape_class(definition, kinds.get(name), list_kinds.get(name))
        chunks.append(_class_source(cls))
        if cls.fields:
            used.add("Struct")
            for f in cls.fields:
                used |= _names(f.annotation) | (_names(f.default) if f.default is not None else set())
                if f.factory or f.attr != f.wire:
                    used.add("field")
        else:
            used |= {"TypeAlias", "Any"}
        if _add_constants(chunks, taken, enum_constants(name, defs.get(name) or {})):
            used.add("Final")

    aliases: list[str] = []
    for name, definition in sorted(defs.items()):
        # A class imported from another version of the CRD: its enum constants classes are this
        # module's too (under this module's names, which they had when the class was defined here).
        body = definition.get(SHARED_BODY) if isinstance(definition, dict) else None
        if isinstance(body, dict):
            if (definition.get(IMPORTED_NAME) or name) == name:
                used.add(name)
            else:
                used.add("_" + name)
                aliases.append(f"{name} = _{name}")
        if isinstance(body, dict) and with_constants and _add_constants(chunks, taken, enum_constants(name, body)):
            used.add("Final")

    from samplecontroller._version import __version__

    defined = own_set | {n.split(" as ")[-1] for names in imports.values() for n in names}
    deprecated = alias_block(renamed or {}, defined, __version__)
    if deprecated:
        # the new names the aliases name are imported even where no class of this module uses them
        # (a class shared with another version of the CRD is imported from there)
        used |= {"TYPE_CHECKING", "TypeAlias", "Any"}
        used |= {new for new, _ in live_aliases(renamed or {}, defined, __version__).values()}

    def pick(names: Iterable[str]) -> list[str]:
        return sorted((n for n in names if n.split(" as ")[-1] in used), key=_import_order)

    lines = ["from __future__ import annotations", ""]
    if pick(TYPING_NAMES):
        lines += [f"from typing import {', '.join(pick(TYPING_NAMES))}", ""]
    if pick(MSGSPEC_NAMES):
        lines += [f"from msgspec import {', '.join(pick(MSGSPEC_NAMES))}", ""]
    first_party = {module: pick(names) for module, names in imports.items() if pick(names)}
    if with_resource_info:
        first_party["samplecontroller.client.types"] = ["ResourceInfo"]
    if deprecated:
        first_party["samplecontroller.apimachinery"] = ["deprecation"]
    if first_party:
        for module, names in sorted(first_party.items()):
            # isort (ruff) without combine-as-imports: each ``X as Y`` is a statement of its own, after the others
            plain = [n for n in names if " as " not in n]
            if plain:
                lines.append(from_import(module, plain))
            lines += [from_import(module, [n]) for n in sorted(n for n in names if " as " in n)]
        lines.append("")
    # Aliases first (a class's default_factory may name one), one blank line after the imports (isort's);
    # isort (ruff): two blank lines after the imports before a class, one before a statement (a TypeAlias)
    head = "\n".join(lines).rstrip("\n") + ("\n\n" + "\n".join(aliases) if aliases else "")
    after_head = "\n\n\n" if aliases or (chunks and chunks[0].startswith(("class ", "@"))) else "\n\n"
    return head + after_head + "\n\n\n".join(chunks) + "\n" + deprecated


def package_models(schema_defs: dict[str, Any], kinds: Mapping[str, KindLike], root: str,
                   with_resource_info: bool = True) -> str:
    """The models module source of one CRD package/version: its own definitions, ObjectMeta,
    ListMeta and the shared Condition imported from meta/v1."""
    return package_model_sources(schema_defs, kinds, root, with_resource_info)[0]


def package_model_sources(schema_defs: dict[str, Any], kinds: Mapping[str, KindLike], root: str,
                          with_resource_info: bool = True,
                          renamed: Mapping[str, tuple[str, str]] | None = None) -> tuple[str, str]:
    """(the models module source, the apply configurations module source) of one CRD package/version,
    from one datamodel-code-generator run.

    Apply configurations (applyconfiguration-gen's): the same classes with every field optional
    (``X | UnsetType = UNSET``; no ``required``, no enum constants), so that a server-side apply
    sends only the fields set; the kinds keep ``apiVersion``/``kind``; built-in types are the
    library's models (every field of which is optional already)."""
    own = sorted(n for n, d in schema_defs.items() if not is_imported(d))
    imports: dict[str, list[str]] = {meta_v1_module(root): ["ObjectMeta", "ListMeta"]}
    for name, d in sorted(schema_defs.items()):
        if is_imported(d):
            original = d.get(IMPORTED_NAME) or name
            entry = name if original == name else f"{original} as {name}"
            if SHARED_BODY in d:
                # Another version's class: re-exported (``A as A``, or ``B = _B`` under another name),
                # so that every class name the module had stays importable from it (mypy --strict too).
                entry = f"{original} as {name}" if original == name else f"{original} as _{name}"
            if entry not in imports.setdefault(d[IMPORTED], []):
                imports[d[IMPORTED]].append(entry)
    parsed = model_blocks(schema_defs, schema_defs)
    models = render_models(parsed, own, imports, kinds, schema_defs, with_resource_info, renamed=renamed)
    lists = {k.list_kind for k in kinds.values()}
    optional = {name: _all_optional(d) for name, d in schema_defs.items()}
    apply_own = [n for n in own if n not in lists]
    apply_kinds = {name: k for name, k in kinds.items() if name in apply_own}
    # A class another version of the CRD defines: its apply configuration is that version's.
    models_prefix, apply_prefix = f"{root}.apis.", f"{root}.applyconfigurations."
    apply_imports = {(apply_prefix + m.removeprefix(models_prefix) if m.startswith(models_prefix) else m): names
                     for m, names in imports.items()}
    return models, render_models(parsed, apply_own, apply_imports, apply_kinds, optional, False, with_constants=False)


def _all_optional(definition: Any) -> Any:
    """A normalized definition without ``required`` and enum constants (descriptions kept)."""
    if isinstance(definition, list):
        return [_all_optional(d) for d in definition]
    if not isinstance(definition, dict):
        return definition
    out = {}
    for key, value in definition.items():
        if key in ("required", "enum", "x-samplecontroller-constants"):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {prop: _all_optional(sub) for prop, sub in value.items()}
        else:
            out[key] = _all_optional(value)
    return out


def from_import(module: str, names: list[str], indent: str = "") -> str:
    """``from module import a, b`` (in ruff's order; ``a as b`` sorts as ``a``), indented by ``indent``,
    wrapped one name per line as ruff formats it when too long."""
    names = sorted(names, key=lambda n: _import_order(n.split(" as ")[0]))
    line = f"{indent}from {module} import {', '.join(names)}"
    if len(line) <= 110:
        return line
    return f"{indent}from {module} import (\n" + "".join(f"{indent}    {n},\n" for n in names) + f"{indent})"


def _import_order(name: str) -> tuple[int, list[tuple[int, str]]]:
    """ruff's (isort's) order of imported names: CONSTANTS, then Classes, then functions; within
    each, case-insensitive natural order (``V2`` before ``V10``)."""
    natural = [(int(part), "") if part.isdigit() else (-1, part.lower()) for part in re.split(r"(\d+)", name) if part]
    if name.isupper():
        return 0, natural
    return (1 if name[:1].isupper() else 2), natural
