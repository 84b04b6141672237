"""Static cost estimation of CEL rules, as kube-apiserver estimates them when a CRD is written:
cel-go's checker/cost.go estimator (v0.22, Kubernetes 1.32) with Kubernetes' size estimator
(apiextensions-apiserver's schema/cel ``sizeEstimator`` over the schema's ``DeclType``) and its
library cost estimator (k8s.io/apiserver/pkg/cel/library/cost.go, with the semver library's
and the authorizer library's entries: a ``check`` 350,000, its builders and accessors 1, a
selector's parse by its length) and cel-go's ext lists v3 overload estimators (ext/lists.go), ported over the checked AST
the engine serializes (``checked``).

- ``decl_type(schema, root)``: the ``DeclType`` of a structural schema node: sizes bounded by
  ``maxLength`` (times 4 for plain strings), ``maxItems``, ``maxProperties``, the longest ``enum``
  value; unbounded ones estimated from the 3 MiB request limit and the smallest serialized
  element (``MinSerializedSize``), as kube's ``SchemaDeclType``.
- ``estimate(program, decl)``: a rule's ``CostEstimate`` (min, max) with ``self``/``oldSelf`` of
  type ``decl``. Comprehensions multiply their step by the size of their range (nested ones
  multiply), string functions scale with string length, regular expressions with both lengths.
  ``has()`` costs nothing (Kubernetes' ``PresenceTestHasCost(false)``).
- ``max_cardinality(decl)``: how often a node can occur in an unbounded request (kube's
  ``maxCardinality``).

The engine checks ``self`` as ``dyn``, so the types cel-go's checker would give from the
schema are inferred here: paths from ``self`` follow the ``DeclType``, calls on them resolve to
the overloads their argument types select. Deviations, documented: the format library's
``validate`` is costed on its rewritten form (``formats``), within a few units of kube's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from samplecontroller.apiserver.cel import checked
from samplecontroller.apiserver.cel.checked import DYN, Checked, Expr, Type
from samplecontroller.apiserver.cel.values import escape

__all__ = ["MAX_REQUEST_SIZE", "PER_CALL_LIMIT", "RUNTIME_BUDGET", "STATIC_CRD_COST_LIMIT", "STATIC_RULE_COST_LIMIT",
           "CostEstimate", "Decl", "Sizes", "cost_error_message", "decl_type", "estimate", "max_cardinality",
           "value_sizes"]

MAX_REQUEST_SIZE = 3 * 1024 * 1024
"""celconfig.MaxRequestSizeBytes: the request size unbounded sizes are estimated from."""
PER_CALL_LIMIT = 1_000_000
"""celconfig.PerCallLimit: the runtime cost one evaluation may use."""
RUNTIME_BUDGET = 10_000_000
"""celconfig.RuntimeCELCostBudget: the runtime cost of all rules on one object."""
STATIC_RULE_COST_LIMIT = 10_000_000
"""StaticEstimatedCostLimit: a rule's estimated cost times its cardinality, at most."""
STATIC_CRD_COST_LIMIT = 100_000_000
"""StaticEstimatedCRDCostLimit: the estimated cost of all the rules of a schema, at most."""

_MAX_U64 = (1 << 64) - 1
_STRING_TRAVERSAL = 0.1
_REGEX_LENGTH = 0.25
_LIST_CREATE, _MAP_CREATE, _STRUCT_CREATE = 10, 30, 40
_MAX_NAME_FORMAT_REGEX = 128
_MIN_STRING, _MIN_BOOL, _MIN_NUMBER = 2, 4, 1
_JSON_DATE, _MIN_DATETIME, _MAX_DATETIME, _MIN_DURATION, _MAX_DURATION = 12, 21, 32, 3, 32


# ---------------------------------------------------------------------------- arithmetic


def _add(x: int, y: int) -> int:
    return _MAX_U64 if x + y > _MAX_U64 else x + y


def _mul(x: int, y: int) -> int:
    return _MAX_U64 if x * y > _MAX_U64 else x * y


def _factor(x: int, f: float) -> int:
    """multiplyByCostFactor: ``x * f`` rounded up, saturating."""
    xf = float(x)
    if xf > 0 and f > 0 and xf > float(_MAX_U64) / f:
        return _MAX_U64
    product = math.ceil(xf * f)
    return _MAX_U64 if product >= 2.0 ** 64 else int(product)


@dataclass(frozen=True)
class CostEstimate:
    """A cost (or size) range; operations saturate at 2**64-1 as cel-go's do."""

    min: int
    max: int

    def add(self, other: CostEstimate) -> CostEstimate:
        """The sum."""
        return CostEstimate(_add(self.min, other.min), _add(self.max, other.max))

    def multiply(self, other: CostEstimate) -> CostEstimate:
        """The product."""
        return CostEstimate(_mul(self.min, other.min), _mul(self.max, other.max))

    def factor(self, f: float) -> CostEstimate:
        """Both ends times ``f``, rounded up."""
        return CostEstimate(_factor(self.min, f), _factor(self.max, f))

    def union(self, other: CostEstimate) -> CostEstimate:
        """The range covering both."""
        return CostEstimate(min(self.min, other.min), max(self.max, other.max))


Sizes = Callable[[Sequence[str]], "int | None"]
"""The size of the values at a path (``value_sizes``)."""

_ZERO = CostEstimate(0, 0)
_ONE = CostEstimate(1, 1)


# ---------------------------------------------------------------------------- DeclType


@dataclass
class Decl:
    """k8s.io/apiserver/pkg/cel DeclType, the part cost estimation uses: ``kind`` (object, map,
    list, string, bytes, int, double, bool, timestamp, duration, dyn), ``fields`` (escaped
    names), ``elem`` (list items, map values), ``key``, ``max_elements``, ``min_size``
    (MinSerializedSize)."""

    kind: str
    max_elements: int = 0
    min_size: int = 0
    fields: dict[str, Decl] = field(default_factory=dict)
    elem: Decl | None = None
    key: Decl | None = None

    @property
    def type(self) -> Type:
        """The CEL type of values of this declaration."""
        if self.kind == "object":
            return Type("struct", name="object", decl=self)
        if self.kind == "list":
            return Type("list", (self.elem.type if self.elem else DYN,))
        if self.kind == "map":
            return Type("map", (Type("string"), self.elem.type if self.elem else DYN))
        return Type(self.kind)


_STRING_KEY = Decl("string", min_size=_MIN_STRING)


def _bounded(value: Any) -> int | None:
    return max(int(value), 0) if isinstance(value, int) and not isinstance(value, bool) else None


def _with_meta(schema: dict[str, Any]) -> dict[str, Any]:
    """WithTypeAndObjectMeta: ``kind``, ``apiVersion``, ``metadata.name``/``generateName`` declared."""
    props = dict(schema.get("properties") or {})
    string = {"type": "string"}
    props["kind"], props["apiVersion"] = string, string
    props["metadata"] = {"type": "object", "properties": {"name": string, "generateName": string}}
    return {**schema, "properties": props}


def decl_type(schema: Any, root: bool = False) -> Decl | None:
    """The DeclType of a structural schema node (``root``: a resource root, which always has
    ``apiVersion``, ``kind`` and ``metadata.name``/``generateName``); None when CEL cannot see it
    (no type, an array without items)."""
    if not isinstance(schema, dict):
        return None
    if schema.get("x-kubernetes-int-or-string"):
        return Decl("dyn", max_elements=MAX_REQUEST_SIZE - 2, min_size=1)
    if root:
        schema = _with_meta(schema)
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        item = decl_type(items, isinstance(items, dict) and bool(items.get("x-kubernetes-embedded-resource")))
        if item is None:
            return None
        limit = _bounded(schema.get("maxItems"))
        return Decl("list", (MAX_REQUEST_SIZE - 2) // (item.min_size + 1) if limit is None else limit, 2, elem=item)
    if kind == "object":
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            value = decl_type(additional, bool(additional.get("x-kubernetes-embedded-resource")))
            if value is None:
                return None
            limit = _bounded(schema.get("maxProperties"))
            return Decl("map", (MAX_REQUEST_SIZE - 2) // (value.min_size + 6) if limit is None else limit, 2,
                        elem=value, key=_STRING_KEY)
        required = set(schema.get("required") or ())
        fields: dict[str, Decl] = {}
        min_size = 2
        for name, prop in (schema.get("properties") or {}).items():
            sub = decl_type(prop, isinstance(prop, dict) and bool(prop.get("x-kubernetes-embedded-resource")))
            if sub is None:
                continue
            escaped = escape(name)
            if escaped is not None:
                fields[escaped] = sub
            if name in required and isinstance(prop, dict) and "default" not in prop:
                min_size += len(name) + sub.min_size + 4
        return Decl("object", min_size=min_size, fields=fields)
    if kind == "string":
        return _string_decl(schema)
    if kind == "boolean":
        return Decl("bool", min_size=_MIN_BOOL)
    if kind == "number":
        return Decl("double", min_size=_MIN_NUMBER)
    if kind == "integer":
        return Decl("int", min_size=_MIN_NUMBER)
    return None


def _string_decl(schema: dict[str, Any]) -> Decl:
    fmt = schema.get("format")
    limit = _bounded(schema.get("maxLength"))
    unbounded = MAX_REQUEST_SIZE - 2
    if fmt == "byte":
        return Decl("bytes", unbounded if limit is None else limit, _MIN_STRING)
    if fmt == "duration":
        return Decl("duration", _MAX_DURATION, _MIN_DURATION)
    if fmt == "date":
        return Decl("timestamp", _JSON_DATE, _JSON_DATE)
    if fmt == "date-time":
        return Decl("timestamp", _MAX_DATETIME, _MIN_DATETIME)
    if limit is not None:
        return Decl("string", limit * 4, _MIN_STRING)
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return Decl("string", max((len(v.encode()) for v in enum if isinstance(v, str)), default=0), _MIN_STRING)
    return Decl("string", unbounded, _MIN_STRING)


def max_cardinality(decl: Decl) -> int:
    """How many times data of ``decl`` fits in one request (kube's maxCardinality)."""
    return MAX_REQUEST_SIZE // (decl.min_size + 1)


def cost_error_message(name: str, cost: int, limit: int) -> str:
    """getCostErrorMessage: ``<name> exceeds budget by factor of <f> (try simplifying ...)``."""
    factor = cost / limit
    if factor > 100.0:
        text = "more than 100x"
    elif factor < 1.5:
        text = f"{factor:f}x"
    else:
        text = f"{factor:.1f}x"
    return (f"{name} exceeds budget by factor of {text} (try simplifying the rule, or adding maxItems, "
            "maxProperties, and maxLength where arrays, maps, and strings are declared)")


# ---------------------------------------------------------------------------- types


_SCALARS = frozenset({"bool", "double", "duration", "int", "timestamp", "uint"})
# result kinds of the standard overloads and library functions when the checker says dyn
_RESULTS = {
    "size": "int", "int": "int", "uint": "uint", "double": "double", "string": "string", "bytes": "bytes",
    "timestamp": "timestamp", "duration": "duration", "bool": "bool", "matches": "bool", "startsWith": "bool",
    "endsWith": "bool", "contains": "bool", "lowerAscii": "string", "upperAscii": "string", "trim": "string",
    "substring": "string", "replace": "string", "charAt": "string", "join": "string", "format": "string",
    "reverse": "string", "strings.quote": "string", "find": "string", "indexOf": "int", "lastIndexOf": "int",
    "isSorted": "bool", "includes": "bool", "sign": "int", "asInteger": "int", "isInteger": "bool", "compareTo": "int",
    "asApproximateFloat": "double", "isGreaterThan": "bool", "isLessThan": "bool", "getScheme": "string",
    "getHost": "string", "getHostname": "string", "getPort": "string", "getEscapedPath": "string",
    "family": "int", "prefixLength": "int", "isIP": "bool", "isCIDR": "bool", "isURL": "bool",
    "isQuantity": "bool", "containsIP": "bool", "containsCIDR": "bool", "isSemver": "bool", "major": "int",
    "minor": "int", "patch": "int",
}
_OPAQUE_RESULTS = {"quantity": ("struct", "kubernetes.Quantity"), "add": ("struct", "kubernetes.Quantity"),
                   "sub": ("struct", "kubernetes.Quantity"), "url": ("struct", "kubernetes.URL"),
                   "ip": ("opaque", "net.IP"), "cidr": ("opaque", "net.CIDR"), "masked": ("opaque", "net.CIDR"),
                   "semver": ("struct", "kubernetes.Semver")}
_ARITHMETIC = {"_+_", "_-_", "_*_", "_/_", "_%_", "-_"}
_O1_EQUALITY = {"kubernetes.Quantity", "net.IP", "net.CIDR", "kubernetes.Semver"}


@dataclass
class _Node:
    """checker.AstNode: an argument as the cost functions see it."""

    expr: Expr | None
    type: Type
    path: list[str] | None
    computed: CostEstimate | None


class _Coster:
    """checker/cost.go's coster with Kubernetes' size and library estimators."""

    def __init__(self, ast: Checked, root: Decl | None, sizes: Sizes | None = None) -> None:
        self.ast = ast
        self.root = root
        self.sizes = sizes
        self.paths: dict[int, list[str]] = {}
        self.iter_ranges: dict[str, list[Expr]] = {}
        self.accus: dict[str, list[Expr]] = {}  # accumulator (and cel.bind) variables' inits
        self.computed: dict[int, CostEstimate] = {}
        self.types: dict[int, Type] = {}

    # ------------------------------------------------------------------ types

    def type_of(self, e: Expr) -> Type:
        """The type cel-go's checker gives ``e`` with ``self`` typed by the schema."""
        found = self.types.get(e.id)
        if found is not None:
            return found
        found = self._infer(e)
        self.types[e.id] = found
        return found

    def _infer(self, e: Expr) -> Type:
        declared = self.ast.type_of(e)
        path = self.paths.get(e.id)
        if path and path[0] in ("self", "oldSelf"):
            decl = self._decl_at(path)
            if decl is not None:
                return decl.type
        if e.kind == checked.CALL and declared.kind in ("dyn", "typeparam", "map", "list", "optional"):
            return self._call_type(e, declared)
        if e.kind == checked.SELECT and declared.kind == "dyn" and e.operand is not None:
            operand = self.type_of(e.operand)
            if operand.kind == "map" and len(operand.params) == 2:
                return operand.params[1]
            if operand.kind == "struct" and isinstance(operand.decl, Decl) and e.name in operand.decl.fields:
                return operand.decl.fields[e.name].type
        if e.kind == checked.IDENT and self.iter_ranges.get(e.name):
            return self._element(self.type_of(self.iter_ranges[e.name][-1]))
        if e.kind == checked.IDENT and declared.kind == "dyn" and self.accus.get(e.name):
            return self.type_of(self.accus[e.name][-1])  # the checker types it as its init
        return declared

    def _element(self, t: Type) -> Type:
        if t.kind == "list" and t.params:
            return t.params[0]
        if t.kind == "map" and t.params:
            return t.params[0]
        return DYN

    def _call_type(self, e: Expr, declared: Type) -> Type:
        args = [self.type_of(a) for a in e.args]
        if e.name in _OPAQUE_RESULTS and not (e.name in ("add", "sub") and e.target is None):
            kind, name = _OPAQUE_RESULTS[e.name]
            if not (e.name == "ip" and e.target is not None and self.type_of(e.target).kind == "string"):
                return Type(kind, name=name)
        if e.name == "_[_]" and args:
            container = args[0]
            if container.kind == "list" and container.params:
                return container.params[0]
            if container.kind == "map" and len(container.params) == 2:
                return container.params[1]
            return declared
        if e.name in ("value", "orValue") and e.target is not None:
            target = self.type_of(e.target)
            if target.kind == "optional" and target.params:
                return target.params[0]
            if e.target.kind == checked.IDENT and e.target.name == "oldSelf":
                return target  # optionalOldSelf: oldSelf is an optional of self's type
            return declared
        if e.name == "_?._" and len(e.args) == 2 and e.args[1].kind == checked.CONST:
            field_type = self._field_type(e.args[0], args[0], str(e.args[1].value))
            return Type("optional", (field_type,)) if field_type is not None else declared
        if e.name == "_?_:_" and len(args) == 3:
            return args[1] if args[1].kind != "dyn" else args[2]
        if e.name in _ARITHMETIC:
            known = [a for a in args if a.kind != "dyn"]
            if known:
                if e.name in ("_-_",) and len(known) == 2 and known[0].kind == known[1].kind == "timestamp":
                    return Type("duration")
                return known[0]
            return declared
        if e.name in _RESULTS and declared.kind in ("dyn", "typeparam"):
            return Type(_RESULTS[e.name])
        if e.name in ("split", "findAll") and declared.kind in ("dyn", "typeparam", "list"):
            return Type("list", (Type("string"),))
        if e.name in ("sum", "min", "max") and e.target is not None:
            return self._element(self.type_of(e.target))
        return declared

    def _field_type(self, operand: Expr, operand_type: Type, name: str) -> Type | None:
        """The type of field ``name`` of ``operand`` (a map's values, an object's declared field)."""
        if operand_type.kind == "map" and len(operand_type.params) == 2:
            return operand_type.params[1]
        if operand_type.kind == "struct" and isinstance(operand_type.decl, Decl):
            found = operand_type.decl.fields.get(name)
            return found.type if found is not None else None
        path = self.paths.get(operand.id)
        if path and path[0] in ("self", "oldSelf"):
            decl = self._decl_at([*path, name])
            return decl.type if decl is not None else None
        return None

    def _decl_at(self, path: Sequence[str]) -> Decl | None:
        """The DeclType at a path from ``self`` (None when it leaves the schema)."""
        node = self.root
        for name in path[1:]:
            if node is None:
                return None
            if name in ("@items", "@values"):
                node = node.elem
            elif name == "@keys":
                node = node.key
            else:
                node = node.fields.get(name)
        return node

    # ------------------------------------------------------------------ sizes

    def _node(self, e: Expr) -> _Node:
        path = self.paths.get(e.id)
        if path and path[0] == "@result":
            path = None
        return _Node(e, self.type_of(e), path, self.computed.get(e.id))

    @staticmethod
    def _computed_size(node: _Node) -> CostEstimate | None:
        if node.computed is not None:
            return node.computed
        e = node.expr
        if e is None:
            return None
        if e.kind == checked.CONST:
            if isinstance(e.value, str):
                return CostEstimate(len(e.value), len(e.value))
            if isinstance(e.value, bytes):
                return CostEstimate(len(e.value), len(e.value))
            return _ONE
        if e.kind == checked.LIST:
            return CostEstimate(len(e.args), len(e.args))
        if e.kind == checked.MAP:
            return CostEstimate(len(e.entries), len(e.entries))
        return None

    def _estimated_size(self, node: _Node) -> CostEstimate | None:
        """sizeEstimator.EstimateSize: the MaxElements at the node's path (the path's first
        element, the variable, is skipped as kube skips ``self``)."""
        if not node.path:
            return None
        if self.sizes is not None and node.path[0] in ("self", "oldSelf") and self._decl_at(node.path) is not None:
            actual = self.sizes(node.path)
            return CostEstimate(0, actual) if actual is not None else None
        decl = self.root
        for name in node.path[1:]:
            if decl is None:
                return None
            if name in ("@items", "@values"):
                decl = decl.elem
            elif name == "@keys":
                decl = decl.key
            else:
                decl = decl.fields.get(name)
        if decl is None:
            return None
        return CostEstimate(0, decl.max_elements)

    def size(self, node: _Node) -> CostEstimate:
        """coster.sizeEstimate: computed, else estimated, else 1 for scalars, else unbounded."""
        found = self._computed_size(node) or self._estimated_size(node)
        if found is not None:
            return found
        if node.type.kind in _SCALARS:
            return _ONE
        return CostEstimate(0, _MAX_U64)

    def _library_size(self, node: _Node) -> CostEstimate:
        """library.CostEstimator.sizeEstimate (no scalar shortcut)."""
        return self._computed_size(node) or self._estimated_size(node) or CostEstimate(0, _MAX_U64)

    # ------------------------------------------------------------------ walk

    def cost(self, e: Expr | None) -> CostEstimate:
        """The cost of ``e``."""
        if e is None:
            return _ZERO
        if e.kind == checked.CONST:
            return _ZERO
        if e.kind == checked.IDENT:
            return self._ident(e)
        if e.kind == checked.SELECT:
            return self._select(e)
        if e.kind == checked.CALL:
            return self._call(e)
        if e.kind == checked.LIST:
            total = _ZERO
            for element in e.args:
                total = total.add(self.cost(element))
            return total.add(CostEstimate(_LIST_CREATE, _LIST_CREATE))
        if e.kind in (checked.MAP, checked.STRUCT):
            total = _ZERO
            for key, value in e.entries:
                total = total.add(self.cost(key)).add(self.cost(value))
            base = _MAP_CREATE if e.kind == checked.MAP else _STRUCT_CREATE
            return total.add(CostEstimate(base, base))
        if e.kind == checked.COMPREHENSION:
            return self._comprehension(e)
        return _ZERO

    def _ident(self, e: Expr) -> CostEstimate:
        scopes = self.iter_ranges.get(e.name)
        if scopes:
            iter_range = scopes[-1]
            kind = self.type_of(iter_range).kind
            if kind == "list":
                self.paths[e.id] = [*self.paths.get(iter_range.id, []), "@items"]
            elif kind == "map":
                self.paths[e.id] = [*self.paths.get(iter_range.id, []), "@keys"]
        else:
            self.paths[e.id] = [e.name]
        return _ONE

    def _select(self, e: Expr) -> CostEstimate:
        total = self.cost(e.operand)
        if e.test_only:
            return total  # has(): PresenceTestHasCost(false)
        assert e.operand is not None
        if self.type_of(e.operand).kind in ("map", "struct", "typeparam"):
            total = total.add(_ONE)
        self.paths[e.id] = [*self.paths.get(e.operand.id, []), e.name]
        return total

    def _comprehension(self, e: Expr) -> CostEstimate:
        total = self.cost(e.iter_range).add(self.cost(e.accu_init))
        assert e.iter_range is not None and e.accu_init is not None
        self.iter_ranges.setdefault(e.iter_var, []).append(e.iter_range)
        self.accus.setdefault(e.accu_var, []).append(e.accu_init)
        loop = self.cost(e.loop_condition)
        step = self.cost(e.loop_step)
        self.iter_ranges[e.iter_var].pop()
        total = total.add(self.cost(e.result))
        self.accus[e.accu_var].pop()
        count = self.size(self._node(e.iter_range))
        self.computed[e.id] = count
        return total.add(count.multiply(step.add(loop)))

    def _call(self, e: Expr) -> CostEstimate:
        arg_costs = [self.cost(a) for a in e.args]
        args = [self._node(a) for a in e.args]
        # the target's cost before the overloads are narrowed by its type (cel-go adds it after
        # the arguments'; the order changes nothing but the paths known when typing)
        target_cost = self.cost(e.target) if e.target is not None else _ZERO
        ids = self._overloads(e)
        if not ids:
            return _ZERO
        total = _ZERO
        target: _Node | None = None
        if e.target is not None:
            total = total.add(target_cost)
            target = self._node(e.target)
        function_cost = CostEstimate(_MAX_U64, 0)
        result_size: CostEstimate | None = None
        for overload in ids:
            cost, size = self._function_cost(e.name, overload, target, args, arg_costs)
            function_cost = function_cost.union(cost)
            if size is not None:
                result_size = size if result_size is None else result_size.union(size)
            if overload == "index_list" and e.args:
                self.paths[e.id] = [*self.paths.get(e.args[0].id, []), "@items"]
            elif overload == "index_map" and e.args:
                self.paths[e.id] = [*self.paths.get(e.args[0].id, []), "@values"]
        if result_size is not None:
            self.computed[e.id] = result_size
        self.types.pop(e.id, None)
        return total.add(function_cost)

    def _overloads(self, e: Expr) -> list[str]:
        """The call's overload ids as cel-go's checker resolves them with the schema's types:
        the engine's candidates, narrowed by the argument types inferred here."""
        ids = self.ast.overloads.get(e.id) or []
        if len(ids) <= 1:
            return ids
        kinds = [self.type_of(a).kind for a in ([e.target] if e.target is not None else []) + e.args]
        narrowed = [oid for oid in ids if _fits(oid, kinds)]
        sorted_list = e.args[0] if e.args else e.target
        if sorted_list is not None and all(_SORT_OVERLOAD.match(oid) for oid in ids):
            # ext lists' sort/sortBy: the overload of the (key) list's element type
            listed = self.type_of(sorted_list)
            kind = listed.params[0].kind if listed.kind == "list" and listed.params else "dyn"
            step = sorted_list.loop_step if sorted_list.kind == checked.COMPREHENSION else None
            if kind == "dyn" and step is not None and step.kind == checked.CALL and len(step.args) == 2 \
                    and step.args[1].kind == checked.LIST and len(step.args[1].args) == 1:
                # sortBy's keys: a map macro's, typed with its variable bound again
                assert sorted_list.iter_range is not None
                self.iter_ranges.setdefault(sorted_list.iter_var, []).append(sorted_list.iter_range)
                kind = self.type_of(step.args[1].args[0]).kind
                self.iter_ranges[sorted_list.iter_var].pop()
            element = _SORTED_KINDS.get(kind)
            narrowed = [oid for oid in ids if element is None or oid.startswith(f"list_{element}_")]
        return narrowed or ids

    # ------------------------------------------------------------------ functions

    def _function_cost(self, function: str, overload: str, target: _Node | None, args: list[_Node],
                       arg_costs: list[CostEstimate]) -> tuple[CostEstimate, CostEstimate | None]:
        arg_sum = _ZERO
        for c in arg_costs:
            arg_sum = arg_sum.add(c)
        if overload in _SETS and len(args) == 2:
            cost = self._library_size(args[0]).multiply(self._library_size(args[1])).factor(_SETS[overload]).add(_ONE)
            return cost.add(arg_sum), None
        library = self._library_cost(function, overload, target, args)
        if library is not None:
            return library[0].add(arg_sum), library[1]
        return self._standard_cost(overload, target, args, arg_costs, arg_sum)

    def _standard_cost(self, overload: str, target: _Node | None, args: list[_Node], arg_costs: list[CostEstimate],
                       arg_sum: CostEstimate) -> tuple[CostEstimate, CostEstimate | None]:
        """cel-go's own cases (``functionCost``); note that cel-go passes a target to every call
        (possibly an empty one), so ``target != nil`` holds for global calls too."""
        if overload in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return self.size(args[0]).factor(_STRING_TRAVERSAL).add(arg_sum), None
        if overload == "in_list" and len(args) == 2:
            return self.size(args[1]).factor(1).add(arg_sum), None
        if overload == "matches_string" and target is not None and len(args) == 1:
            text = self.size(target).add(_ONE).factor(_STRING_TRAVERSAL)
            regex = self.size(args[0]).factor(_REGEX_LENGTH)
            return text.multiply(regex).add(arg_sum), None
        if overload == "contains_string" and target is not None and len(args) == 1:
            text = self.size(target).factor(_STRING_TRAVERSAL)
            sub = self.size(args[0]).factor(_STRING_TRAVERSAL)
            return text.multiply(sub).add(arg_sum), None
        if overload in ("logical_or", "logical_and"):
            lhs, rhs = arg_costs[0], arg_costs[1]
            return CostEstimate(lhs.min, lhs.add(rhs).max), None
        if overload == "conditional":
            size = self.size(args[1]).union(self.size(args[2]))
            return arg_costs[0].add(arg_costs[1].union(arg_costs[2])), size
        if overload in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            result = self.size(args[0]).add(self.size(args[1]))
            if overload == "add_list":
                return _ONE.add(arg_sum), result
            return result.factor(_STRING_TRAVERSAL).add(arg_sum), result
        if overload in _SIZED_COMPARISONS:
            lhs, rhs = self.size(args[0]), self.size(args[1])
            smallest = min(lhs.max, rhs.max)
            return CostEstimate(1 if smallest > 0 else 0, smallest).factor(_STRING_TRAVERSAL).add(arg_sum), None
        if overload in ("string_to_bytes", "bytes_to_string") and len(args) == 1:
            size = self.size(args[0])
            result = (CostEstimate(size.min, _mul(size.max, 4)) if overload == "string_to_bytes"
                      else CostEstimate(size.min // 4, size.max))
            return size.factor(_STRING_TRAVERSAL).add(arg_sum), result
        if overload == "strings_quote" and len(args) == 1:
            size = self.size(args[0])
            return size.factor(_STRING_TRAVERSAL).add(arg_sum), CostEstimate(size.min + 2, _add(_mul(size.max, 2), 2))
        if overload == "string_format" and target is not None:
            return self.size(target).factor(_STRING_TRAVERSAL).add(arg_sum), None
        return _ONE.add(arg_sum), None

    def _library_cost(self, function: str, overload: str, target: _Node | None,
                      args: list[_Node]) -> tuple[CostEstimate, CostEstimate | None] | None:
        """library.CostEstimator.EstimateCallCost (by function name)."""
        size = self._library_size
        if function in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes") \
                and target is not None:
            element = self._list_element(target)
            if element is not None:
                per = _ONE
                if element.type.kind in ("string", "bytes"):
                    per = per.add(size(element).factor(_STRING_TRAVERSAL))
                return size(target).multiply(per), None
            if function == "includes":  # a dyn target: a list's size times one comparison each
                return size(target), None
            return size(target).factor(_STRING_TRAVERSAL), None
        if function == "url" and len(args) == 1:
            sz = size(args[0])
            return sz.factor(_STRING_TRAVERSAL), sz
        if function in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
            sz = size(target)
            return sz.factor(_STRING_TRAVERSAL), sz
        if function == "replace" and target is not None and len(args) >= 2:
            return self._replace(size(target), size(args[0]), size(args[1]))
        if function == "split" and target is not None:
            sz = size(target)
            limit = sz.max
            if len(args) > 1 and args[1].expr is not None and args[1].expr.kind == checked.CONST \
                    and isinstance(args[1].expr.value, int) and not isinstance(args[1].expr.value, bool):
                limit = args[1].expr.value & _MAX_U64
            return sz.factor(2 * _STRING_TRAVERSAL), CostEstimate(0, limit)
        if function == "join" and target is not None:
            return self._join(target, args)
        if function in ("find", "findAll") and target is not None and args:
            sz = size(target)
            text = sz.add(_ONE).factor(_STRING_TRAVERSAL)
            regex = size(args[0]).factor(_REGEX_LENGTH)
            return text.multiply(regex), CostEstimate(0, sz.max)
        if function in ("cidr", "isIP", "isCIDR", "quantity", "isQuantity", "semver", "isSemver") and args:
            return size(args[0]).factor(_STRING_TRAVERSAL), None
        if function == "ip":
            if overload == "cidr_ip" or not args:
                return _ONE, None
            return size(args[0]).factor(_STRING_TRAVERSAL), None
        if function == "ip.isCanonical" and args:
            return size(args[0]).factor(2 * _STRING_TRAVERSAL), None
        if function in ("containsIP", "containsCIDR") and target is not None and args:
            ip = CostEstimate(4, 16)
            cost = ip.add(ip).factor(_STRING_TRAVERSAL)
            if function == "containsCIDR":
                cost = cost.add(ip.factor(_STRING_TRAVERSAL)).add(_ONE)
            if overload in ("cidr_contains_ip_string", "cidr_contains_cidr_string"):
                cost = cost.add(size(args[0]).factor(_STRING_TRAVERSAL))
            return cost, None
        if overload in _EXT_LISTS or _SORT_OVERLOAD.match(overload):
            return self._ext_lists(overload, target, args)
        if function == "__formatValidate" and len(args) == 2:  # format.<name>().validate(x)
            return size(args[1]).factor(_STRING_TRAVERSAL).factor(_MAX_NAME_FORMAT_REGEX * _REGEX_LENGTH), None
        if function in _NOMINAL:
            return _ONE, None
        if function == "check":  # an authorization check: "only two authorization checks per expression"
            return _fixed(_AUTHZ_CHECK), None
        if function in _AUTHZ_NOMINAL:
            return _ONE, None
        if function in ("fieldSelector", "labelSelector") and len(args) == 1:
            length = size(args[0])
            requirements = length.factor(_SELECTOR_REQUIREMENTS).factor(_LIST_CREATE + _STRUCT_CREATE)
            return _fixed(_LIST_CREATE).add(length.factor(_STRING_TRAVERSAL)).add(requirements), None
        if function == "_==_" and len(args) == 2:
            lhs, rhs = args[0].type, args[1].type
            if lhs == rhs and lhs.name in _O1_EQUALITY:
                return _ONE, None
            if lhs == rhs and lhs.name == "kubernetes.URL":
                sizes = CostEstimate(1, 1)
                if rhs and args[1].computed is not None:
                    sizes = args[1].computed
                return CostEstimate(1, sizes.max).factor(_STRING_TRAVERSAL), None
        return None

    def _ext_lists(self, overload: str, target: _Node | None,
                   args: list[_Node]) -> tuple[CostEstimate, CostEstimate | None] | None:
        """cel-go ext lists' overload estimators (ListsVersion(3)): the result list's size times
        a factor, plus the call and the list's creation."""
        size = self._library_size
        if overload == "lists_range":
            if target is not None or len(args) != 1:
                return None
            return _allocating_list(1, _fixed(_as_uint(args[0], _MAX_U64)))
        if target is None:
            return None
        if overload == "list_slice" and len(args) == 2:
            sz = size(target)
            start, end = _as_uint(args[0], 0), _as_uint(args[1], sz.max)
            return _allocating_list(1, _fixed((end - start) & _MAX_U64))
        if overload == "list_reverse" and not args:
            return _allocating_list(1, size(target))
        if overload in ("list_flatten", "list_flatten_int") and len(args) <= 1:
            depth = _as_uint(args[0], _MAX_U64) if args else 1
            return _allocating_list(float(depth), size(target))
        if overload == "list_distinct" and not args:
            sz = size(target)
            return _allocating_list(2.0, sz.multiply(sz))
        sort = _SORT_OVERLOAD.match(overload)
        if sort is not None and len(args) == (1 if sort.group(2) else 0):
            # estimateListSortCost of the sorted list (sort) or of the keys (sortBy)
            sz = size(args[0] if args else target)
            factor = 2.0 + (_STRING_TRAVERSAL if sort.group(1) in ("string", "bytes") else 0.0)
            return _allocating_list(factor, sz.multiply(sz))
        return None

    def _replace(self, sz: CostEstimate, old: CostEstimate,
                 new: CostEstimate) -> tuple[CostEstimate, CostEstimate]:
        count_max = retained_max = count_min = retained_min = 0
        if old.min == 0:
            count_max = sz.max + 1 if sz.max < _MAX_U64 else sz.max
            retained_max = sz.max
        elif new.max <= old.min:
            retained_max = sz.max
        else:
            count_max = math.ceil(sz.max / old.min)
        if old.max == 0:
            count_min = sz.min + 1 if sz.min < _MAX_U64 else sz.min
            retained_min = sz.min
        elif old.max <= new.min:
            retained_min = sz.min
        else:
            count_min = math.ceil(sz.min / old.max)
        result = CostEstimate(count_min, count_max).multiply(new).add(CostEstimate(retained_min, retained_max))
        return sz.factor(2 * _STRING_TRAVERSAL), result

    def _join(self, target: _Node, args: list[_Node]) -> tuple[CostEstimate, CostEstimate]:
        list_size = self._library_size(target)
        sz = _ZERO
        element = self._list_element(target)
        if element is not None:
            sz = list_size.multiply(self._library_size(element))
        if args:
            separators = CostEstimate(max(list_size.min - 1, 0), max(list_size.max - 1, 0))
            sz = sz.add(self._library_size(args[0]).multiply(separators))
        return sz.factor(_STRING_TRAVERSAL), sz

    def _list_element(self, node: _Node) -> _Node | None:
        """listElementNode: the items of a list (with their path when the list has one)."""
        if node.type.kind != "list" or not node.type.params:
            return None
        path = [*node.path, "@items"] if node.path is not None else None
        return _Node(None, node.type.params[0], path, None)


_EXT_LISTS = frozenset({"list_slice", "list_flatten", "list_flatten_int", "lists_range", "list_reverse",
                        "list_distinct"})
_SORTED_KINDS = {"int": "int", "uint": "uint", "double": "double", "bool": "bool", "string": "string",
                 "bytes": "bytes", "duration": "google.protobuf.Duration", "timestamp": "google.protobuf.Timestamp"}
# ext lists' typed sort overloads (cel-go's and cel-cpp's ids): list_<type>_sort, and the
# list_<type>_sortByAssociatedKeys the sortBy macro expands to
_SORT_OVERLOAD = re.compile(r"^list_(int|uint|double|bool|string|bytes|google\.protobuf\.Duration|"
                            r"google\.protobuf\.Timestamp)_sort(ByAssociatedKeys)?$")


def _fixed(n: int) -> CostEstimate:
    return CostEstimate(n, n)


def _as_uint(node: _Node, default: int) -> int:
    """ext lists' nodeAsUintValue: an int or uint literal as uint64, else ``default``."""
    if node.expr is not None and node.expr.kind == checked.CONST and isinstance(node.expr.value, int) \
            and not isinstance(node.expr.value, bool):
        return node.expr.value & _MAX_U64
    return default


def _allocating_list(factor: float, size: CostEstimate) -> tuple[CostEstimate, CostEstimate]:
    """estimateAllocatingListCall: the size times ``factor``, the call (1) and the list (10)."""
    return size.factor(factor).add(_ONE).add(_fixed(_LIST_CREATE)), size


_SETS = {"list_sets_contains_list": 1.0, "list_sets_intersects_list": 1.0, "list_sets_equivalent_list": 2.0}
_AUTHZ_CHECK = 350_000  # the authorizer library's check (authz.CHECK_COST)
_AUTHZ_NOMINAL = frozenset({"serviceAccount", "path", "group", "resource", "subresource", "namespace", "name",
                            "allowed", "reason", "error", "errored"})
_SELECTOR_REQUIREMENTS = 0.5  # selectorLengthToRequirementCount
_NOMINAL = frozenset({
    "masked", "prefixLength", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast",
    "isLinkLocalUnicast", "isGlobalUnicast", "format.named", "sign", "asInteger", "isInteger",
    "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add", "sub", "getScheme",
    "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery", "major", "minor", "patch"})
_SIZED_COMPARISONS = frozenset({
    "less_string", "greater_string", "less_equals_string", "greater_equals_string", "less_bytes",
    "greater_bytes", "less_equals_bytes", "greater_equals_bytes", "equals", "not_equals"})

# the operand kinds of overloads whose name says them (the rest fit anything)
_OVERLOAD_KINDS = {
    "index_list": ("list", None), "index_map": ("map", None),
    "optional_list_index_int": ("list", None), "optional_map_index_value": ("map", None),
    "size_string": ("string",), "size_bytes": ("bytes",), "size_list": ("list",), "size_map": ("map",),
    "string_size": ("string",), "bytes_size": ("bytes",), "list_size": ("list",), "map_size": ("map",),
    "in_list": (None, "list"), "in_map": (None, "map"),
    "add_string": ("string", "string"), "add_bytes": ("bytes", "bytes"), "add_list": ("list", "list"),
    "add_int64": ("int", "int"), "add_uint64": ("uint", "uint"), "add_double": ("double", "double"),
    "add_timestamp_duration": ("timestamp", "duration"), "add_duration_timestamp": ("duration", "timestamp"),
    "add_duration_duration": ("duration", "duration"),
    "list_reverse": ("list",), "string_reverse": ("string",),
}
_COMPARED = {"string": "string", "bytes": "bytes", "int64": "int", "uint64": "uint", "double": "double",
             "bool": "bool", "timestamp": "timestamp", "duration": "duration"}


def _fits(overload: str, kinds: list[str]) -> bool:
    """Whether an overload can take operands of ``kinds`` (dyn fits anything)."""
    wanted: tuple[str | None, ...] | None = _OVERLOAD_KINDS.get(overload)
    if wanted is None:
        for prefix in ("less_equals_", "greater_equals_", "less_", "greater_", "subtract_", "multiply_",
                       "divide_", "modulo_"):
            if overload.startswith(prefix):
                parts = overload[len(prefix):].split("_")
                names = [_COMPARED.get(p) for p in parts]
                if all(names):
                    wanted = (names[0], names[-1]) if len(names) > 1 else (names[0], names[0])
                break
    if wanted is None:
        return True
    return all(w is None or k in ("dyn", "typeparam") or k == w for w, k in zip(wanted, kinds, strict=False))


def estimate(serialized: bytes | Checked, decl: Decl | None, sizes: Sizes | None = None) -> CostEstimate:
    """The estimated cost of a checked expression (``Program.serialized()``, or its parsed form)
    whose ``self`` and ``oldSelf`` are values of ``decl``. ``sizes``: the sizes of actual
    values by path (``value_sizes``) instead of the schema's bounds, for a bound of the cost of
    one evaluation."""
    ast = checked.parse(serialized) if isinstance(serialized, bytes) else serialized
    return _Coster(ast, decl, sizes).cost(ast.expr)


def value_sizes(self_value: Any, old_value: Any = None) -> Sizes:
    """Sizes by path in actual values (CEL-converted, ``values.to_cel``): the largest size
    (string length, list or map length; 1 for scalars) of the values a path reaches from ``self``
    (``oldSelf`` paths in ``old_value``), 0 when it reaches none."""

    def size(path: Sequence[str]) -> int | None:
        values = [old_value if path[0] == "oldSelf" else self_value]
        for name in path[1:]:
            step: list[Any] = []
            for value in values:
                if name == "@items" and isinstance(value, list):
                    step += value
                elif name == "@values" and isinstance(value, dict):
                    step += list(value.values())
                elif name == "@keys" and isinstance(value, dict):
                    step += list(value)
                elif isinstance(value, dict) and name in value:
                    step.append(value[name])
            values = step
        sizes = [len(v) if isinstance(v, (str, bytes, list, dict)) else 1 for v in values if v is not None]
        return max(sizes) if sizes else 0

    return size
