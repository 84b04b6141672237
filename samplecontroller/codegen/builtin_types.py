"""Built-in types inside CRD schemas: which schema objects are ``samplecontroller.kubernetes`` types.

controller-gen copies a Go type's schema into a CRD wherever a field has a built-in type
(``batchv1.JobTemplateSpec``, ``corev1.ObjectReference``, ``[]corev1.Container``...). The
generator refers to the library's model of that type instead of generating hundreds of anonymous
classes (``CronJobSpecJobTemplateSpecTemplateSpecContainersItem``...). The reference is the
vendored upstream OpenAPI definitions (``apimachinery.openapi_schemas``), the same ones
``samplecontroller.kubernetes`` is generated from.

Never a wrong match: ``incompatibility(schema, definition)`` is None only if the built-in model
decodes everything the CRD schema lets the server store, with the same types, and encodes it back
unchanged: every property the schema has exists in the definition (recursively) with a type the
model decodes it as (a string stays a string; an integer may be a number, never the reverse;
int-or-string only where the model has ``int | str``; a free-form or preserve-unknown-fields
value only where the model keeps any JSON), the schema's enum values are among the definition's
ones, and a ``nullable`` value is one the model decodes ``null`` for. A property-less
``type: object`` (controller-gen's ``metadata`` of an embedded ObjectMeta, which the server prunes
to ``{}``) fits any object.

Found by matching (``BuiltinIndex.match``) only when that is unambiguous and not a coincidence:
the candidates are the definitions holding every property the schema has; the ones with the
fewest properties the schema lacks win, and they must all be the same shape (the same type in
two versions of a group); the schema must have ``MIN_COVERAGE`` of the winner's properties and
weigh ``MIN_WEIGHT`` leaf values or more, or carry the definition's description or that of a
field of its type in the upstream definitions (controller-gen copies a field's doc comment, or the
type's on an array's items; compared by their first sentence, which a newer Kubernetes keeps
when it extends a doc comment) and have ``MIN_DOCUMENTED_COVERAGE`` of its properties. (A schema
written against an older Kubernetes lacks a few newer fields, so a CRD generated from any
Kubernetes version up to the built-ins' matches; ``{group, kind, name}`` is not
``StatusDetails``.) ``match_why`` also says why a close built-in type did not match (what
``--explain`` prints). Of several types of one shape (``SecretKeySelector`` and
``ConfigMapKeySelector``), the one sharing most words with the field's name is taken. A schema
object under a matched one is not matched again: it is part of the built-in; the kind's own
``spec`` and ``status`` are never matched (they are the CRD's own types, as in Go).

A built-in *kind* found inside a CRD (``BuiltinIndex.is_kind``: a PersistentVolumeClaim template)
is not the library's model of the kind, which always encodes its own apiVersion and kind: the
normalizer gives it a class of its own over the kind's field types (``Normalizer.embedded_kind``).

What matching cannot decide is declared: ``--builtin-type Kind.path=pkg/version.Type`` (``none``
keeps the path generated), and a declared mapping that would lose or mistype a field is an error.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from samplecontroller.codegen.errors import CodegenError

BUILTIN_PACKAGE = "samplecontroller.kubernetes"
# A schema this light (leaf values in its subtree) is matched only by its description.
MIN_WEIGHT = 3
# The share of a definition's properties a schema must have: without, and with the definition's description.
MIN_COVERAGE = 0.75
MIN_DOCUMENTED_COVERAGE = 0.5
# Upstream definitions whose model is a free-form JSON object (``dict[str, Any]``).
FREE_FORM = frozenset({"io.k8s.apimachinery.pkg.runtime.RawExtension", "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1"})
INT_OR_STRING = frozenset({"io.k8s.apimachinery.pkg.util.intstr.IntOrString",
                           "io.k8s.apimachinery.pkg.api.resource.Quantity"})
# Definitions whose model decodes JSON null (Go encodes a zero metav1.Time as null).
NULLABLE = frozenset({"io.k8s.apimachinery.pkg.apis.meta.v1.Time", "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"})
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_REF = "#/$defs/"
SHAPE_KEYS = frozenset({"type", "properties", "items", "additionalProperties", "anyOf", "oneOf", "allOf", "$ref"})
_PREFIXES = (
    re.compile(r"io\.k8s\.api\.(\w+)\.(\w+)\.(\w+)"),
    re.compile(r"io\.k8s\.apiextensions-apiserver\.pkg\.apis\.(apiextensions)\.(\w+)\.(\w+)"),
    re.compile(r"io\.k8s\.kube-aggregator\.pkg\.apis\.(apiregistration)\.(\w+)\.(\w+)"),
)


@dataclass(frozen=True)
class BuiltinType:
    """One built-in model: the upstream definition and where the library has it."""

    definition: str  # io.k8s.api.batch.v1.JobTemplateSpec
    pkg: str  # batch
    version: str  # v1
    name: str  # JobTemplateSpec

    @property
    def module(self) -> str:
        return f"{BUILTIN_PACKAGE}.apis.{self.pkg}.{self.version}"

    @property
    def label(self) -> str:
        """``batch/v1.JobTemplateSpec``, as ``--builtin-type`` spells it."""
        return f"{self.pkg}/{self.version}.{self.name}"


def builtin_type(definition: str) -> BuiltinType | None:
    """Where the library's model of an upstream definition is (None: it has none)."""
    if definition.startswith("io.k8s.apimachinery."):
        return BuiltinType(definition, "meta", "v1", definition.rsplit(".", 1)[-1])
    for pattern in _PREFIXES:
        m = pattern.fullmatch(definition)
        if m:
            return BuiltinType(definition, m.group(1), m.group(2), m.group(3))
    return None


def _types(node: Mapping[str, Any]) -> set[str]:
    typ = node.get("type")
    if isinstance(typ, list):
        return {t for t in typ if t != "null"}
    return {typ} if isinstance(typ, str) else set()


def whole_text(value: Any) -> str:
    """A description, whitespace normalized ("" for none)."""
    return " ".join(value.split()) if isinstance(value, str) else ""


_text = whole_text


def _sentence(value: Any) -> str:
    """A description's first sentence, whitespace normalized: what stays when a newer Kubernetes
    extends a type's doc comment (``ConfigMapEnvSource ... environment variables.`` gained a
    sentence in 1.37), so a schema written from any version carries its type's."""
    return re.split(r"(?<=[.:])\s", _text(value), maxsplit=1)[0]


class BuiltinIndex:
    """The upstream definitions, indexed by property name for matching."""

    def __init__(self, defs: Mapping[str, Any], doc: Callable[[Any], str] = _sentence) -> None:
        """``doc``: what of a description matching compares (its first sentence; 0.1.0 compared
        the whole text: ``compat.released_index``)."""
        self.defs = defs
        self.doc = doc
        self.by_label: dict[str, str] = {}
        self.by_prop: dict[str, set[str]] = {}
        self.props: dict[str, frozenset[str]] = {}
        self.shapes: dict[str, str] = {}
        # The descriptions a schema of a definition may carry: its own and those of the fields of its type.
        self.docs: dict[str, set[str]] = {}
        for name, schema in defs.items():
            self.docs.setdefault(name, set()).add(self.doc(schema.get("description")))
            for sub in (schema.get("properties") or {}).values():
                if isinstance(sub, dict):
                    target = sub.get("items") if isinstance(sub.get("items"), dict) else sub
                    ref = target.get("$ref") if isinstance(target, dict) else None
                    if isinstance(ref, str) and ref.startswith(_REF) and _text(sub.get("description")):
                        self.docs.setdefault(ref[len(_REF):], set()).add(self.doc(sub.get("description")))
        for name, schema in defs.items():
            where = builtin_type(name)
            if where is None:
                continue
            self.by_label[where.label] = name
            props = schema.get("properties")
            if isinstance(props, dict) and props and name not in FREE_FORM:
                self.props[name] = frozenset(props)
                for prop in props:
                    self.by_prop.setdefault(prop, set()).add(name)

    # ---- resolving upstream nodes

    def resolve(self, node: Any) -> tuple[str | None, Mapping[str, Any]]:
        """(definition name or None, the schema) of an upstream node, following ``$ref``/``allOf``."""
        name = None
        seen = 0
        while isinstance(node, dict) and seen < 8:
            seen += 1
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(_REF):
                name = ref[len(_REF):]
                node = self.defs.get(name, {})
                continue
            all_of = node.get("allOf")
            if isinstance(all_of, list) and len(all_of) == 1:
                node = all_of[0]
                continue
            break
        return name, node if isinstance(node, dict) else {}

    # ---- compatibility

    def incompatibility(self, schema: Mapping[str, Any], upstream: Any, where: str = "") -> str | None:
        """Why the model of ``upstream`` would lose or mistype something ``schema`` accepts (None: it would not)."""
        name, node = self.resolve(upstream)
        where = where or "."
        if not any(k in node for k in ("type", "properties", "items", "additionalProperties", "oneOf", "anyOf")):
            return None  # the model keeps any JSON value
        if name in FREE_FORM:
            free = schema.get("type") == "object" and (not schema.get("properties")
                                                       or schema.get("x-kubernetes-preserve-unknown-fields") is True)
            return None if free else f"{where} is typed where the built-in keeps a free-form object"
        if schema.get("nullable") is True and name not in NULLABLE:
            return f"{where} is nullable"
        if schema.get("x-kubernetes-int-or-string") is True:
            return None if name in INT_OR_STRING else f"{where} is int-or-string"
        typ = schema.get("type")
        preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
        if typ is None or (preserve and typ == "object"):
            return f"{where} keeps unknown fields"
        if name in INT_OR_STRING:
            quantity = name.endswith("Quantity")
            ok = typ in ("string", "integer") or (quantity and typ == "number")
            return None if ok else f"{where} is {typ}"
        if name in NULLABLE:
            return None if typ == "string" else f"{where} is {typ}"
        types = _types(node)
        if typ in ("string", "boolean"):
            if typ not in types:
                return f"{where} is {typ}"
            return self._enum(schema, node, where)
        if typ == "integer":
            return None if types & {"integer", "number"} else f"{where} is integer"
        if typ == "number":
            return None if "number" in types else f"{where} is number"
        if typ == "array":
            if "array" not in types:
                return f"{where} is array"
            return self.incompatibility(schema.get("items") or {}, node.get("items") or {}, where + "[]")
        if typ != "object":
            return f"{where} is {typ}"
        if "object" not in types and "properties" not in node:
            return f"{where} is object"
        return self._object(schema, node, where)

    def _enum(self, schema: Mapping[str, Any], node: Mapping[str, Any], where: str) -> str | None:
        theirs = node.get("enum")
        mine = schema.get("enum")
        if isinstance(theirs, list) and isinstance(mine, list) and not set(map(str, mine)) <= set(map(str, theirs)):
            return f"{where} has other enum values"
        return None

    def _object(self, schema: Mapping[str, Any], node: Mapping[str, Any], where: str) -> str | None:
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        theirs = node.get("properties") or {}
        their_extra = node.get("additionalProperties")
        if isinstance(props, dict) and props:
            if not theirs:
                return f"{where} has properties"
            for prop, sub in props.items():
                if prop not in theirs:
                    return f"{where}.{prop} is not a field of the built-in type"
                if not isinstance(sub, dict):
                    return f"{where}.{prop} is not a schema"
                why = self.incompatibility(sub, theirs[prop], prop if where == "." else f"{where}.{prop}")
                if why:
                    return why
            return None
        if isinstance(extra, dict):
            if not isinstance(their_extra, dict):
                return f"{where} is a map"
            return self.incompatibility(extra, their_extra, where + "[*]")
        return None  # a property-less object: the server prunes it to {}

    # ---- matching

    def candidates(self, props: frozenset[str]) -> set[str]:
        """Names of the built-in types that have every property in ``props``."""
        sets = sorted((self.by_prop.get(p, set()) for p in props), key=len)
        if not sets:
            return set()
        out = set(sets[0])
        for other in sets[1:]:
            out &= other
            if not out:
                break
        return out

    def match(self, schema: Mapping[str, Any], field_name: str = "", field_doc: str = "") -> str | None:
        """The upstream definition that ``schema`` (an object with properties; the value of
        ``field_name``) is, or None. Of types of one shape (``SecretKeySelector`` and
        ``ConfigMapKeySelector``), the one sharing most words with ``field_name`` wins."""
        return self.match_why(schema, field_name, field_doc)[0]

    def match_why(self, schema: Mapping[str, Any], field_name: str = "",
                  field_doc: str = "") -> tuple[str | None, str]:
        """``match``, and why not where a built-in type came close ("" when none did): of the
        definitions that have every property of the schema (and ``MIN_COVERAGE`` of theirs), the
        one it departs from deepest, and where (a schema from a newer Kubernetes than the
        built-ins' has a field they lack). Small schemas that several types, or a coincidence,
        would fit as well are no near miss: they stay generated silently."""
        props = schema.get("properties")
        if not isinstance(props, dict) or not props or schema.get("type") != "object":
            return None, ""
        if schema.get("x-kubernetes-embedded-resource") is True:
            return None, ""  # any kind's object: not one built-in type
        keys = frozenset(props)
        candidates = sorted(self.candidates(keys), key=lambda d: (len(self.props[d] - keys), _preference(d)))
        reasons = {d: self.incompatibility(schema, {"$ref": _REF + d}) for d in candidates}
        fitting = [d for d in candidates if reasons[d] is None]
        if not fitting:
            close = [d for d in candidates if len(keys) / len(self.props[d]) >= MIN_COVERAGE]
            if close and weight(schema) >= MIN_WEIGHT:
                nearest = max(close, key=lambda d: len(re.findall(r"[.\[]", str(reasons[d]).split(" ")[0])))
                return None, f"not {_label(nearest)}: {reasons[nearest]}"
            return None, ""
        least = min(len(self.props[d] - keys) for d in fitting)
        best = sorted((d for d in fitting if len(self.props[d] - keys) == least), key=_preference)
        if len({self.shape(d) for d in best}) != 1:
            return None, ""  # two different types fit as well: not this generator's guess
        words = _words(field_name)
        chosen = max(best, key=lambda d: len(words & _words(d.rsplit(".", 1)[-1])))
        docs = {self.doc(schema.get("description")), self.doc(field_doc)} - {""}
        documented = bool(docs & self.docs.get(chosen, set()))
        covered = len(keys) / len(self.props[chosen])
        if documented and covered >= MIN_DOCUMENTED_COVERAGE:
            return chosen, ""
        if weight(schema) >= MIN_WEIGHT and covered >= MIN_COVERAGE:
            return chosen, ""
        return None, ""  # too little to tell it from a coincidence (--builtin-type declares it)

    def is_kind(self, name: str) -> bool:
        """Is the definition a kind (``apiVersion``, ``kind``, ``metadata`` and a GVK), not a part of one?"""
        d = self.defs.get(name) or {}
        props = d.get("properties") or {}
        return bool(d.get("x-kubernetes-group-version-kind")) and "apiVersion" in props and "kind" in props

    def shape(self, name: str) -> str:
        """What the definition's model is: its structure without descriptions, validations and list or
    map types (two versions of one type, or two one-field references, compare equal)."""
        if name not in self.shapes:
            self.shapes[name] = json.dumps(_strip_docs(self.defs[name], self.defs, set()), sort_keys=True)
        return self.shapes[name]


def _strip_docs(node: Any, defs: Mapping[str, Any], seen: set[str]) -> Any:
    if isinstance(node, list):
        return [_strip_docs(n, defs, seen) for n in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_REF):
        short = ref.rsplit(".", 1)[-1]
        if ref in seen:
            return {"$ref": short}
        return _strip_docs(defs.get(ref[len(_REF):], {}), defs, seen | {ref})
    out = {k: _strip_docs(v, defs, seen) for k, v in node.items() if k in SHAPE_KEYS}
    if isinstance(out.get("type"), list):
        kept = [t for t in out["type"] if t != "null"]
        out["type"] = kept[0] if len(kept) == 1 else kept
    return out


def _label(name: str) -> str:
    where = builtin_type(name)
    return where.label if where else name


def _words(name: str) -> set[str]:
    """``secretKeyRef`` -> {secret, key, ref}."""
    return {w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", name)}


def _preference(name: str) -> tuple[int, int, str]:
    """GA versions first, then meta/v1 and the core group, then by name (1.37's
    HorizontalPodAutoscalerCondition has metav1.Condition's shape: a condition is metav1's)."""
    where = builtin_type(name)
    version = where.version if where else ""
    stable = 0 if re.fullmatch(r"v\d+", version) else 1
    return stable, 0 if where and where.pkg in ("core", "meta") else 1, name


def weight(schema: Any, depth: int = 0) -> int:
    """Leaf values in a schema's subtree (how much a match says); capped, as only small ones matter."""
    if not isinstance(schema, dict) or depth > 8:
        return 1
    props = schema.get("properties")
    if isinstance(props, dict) and props:
        return sum(weight(sub, depth + 1) for sub in props.values())
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            return weight(schema[key], depth + 1)
    return 1


@functools.lru_cache(maxsize=1)
def default_index() -> BuiltinIndex:
    """The index of the vendored definitions (built once per process)."""
    from samplecontroller.apimachinery.openapi_schemas import definitions

    return BuiltinIndex({name: schema for name, schema in definitions().items()})


def parse_builtin_types(values: list[str]) -> tuple[tuple[str, str], ...]:
    """``--builtin-type Kind.path=pkg/version.Type`` values -> ((``Kind.path``, ``pkg/version.Type`` or
    ``none``), ...); CodegenError for a malformed one."""
    out: dict[str, str] = {}
    for value in values:
        path, sep, label = value.partition("=")
        if not sep or "." not in path or not label or not re.fullmatch(r"[A-Z][A-Za-z0-9]*(\.[^.=\s]+)+", path):
            raise CodegenError(f"--builtin-type {value!r}: expected Kind.path=pkg/version.Type or Kind.path=none "
                               "(like CronJob.spec.jobTemplate=batch/v1.JobTemplateSpec)")
        if label != "none" and not re.fullmatch(r"\w+/\w+\.[A-Z]\w*", label):
            raise CodegenError(f"--builtin-type {value!r}: {label!r} is not pkg/version.Type (like core/v1.Container)")
        if out.get(path, label) != label:
            raise CodegenError(f"--builtin-type {path}: given twice ({out[path]!r} and {label!r})")
        out[path] = label
    return tuple(sorted(out.items()))


def resolve_label(index: BuiltinIndex, label: str, option: str) -> str:
    """The upstream definition of ``pkg/version.Type``; CodegenError naming ``option`` when none is."""
    name = index.by_label.get(label)
    if name is None:
        raise CodegenError(f"--builtin-type {option}: no built-in type {label} (types are named pkg/version.Type, "
                           "as in samplecontroller.kubernetes.apis.<pkg>.<version>)")
    return name
