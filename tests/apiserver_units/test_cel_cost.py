"""Static cost estimation of CEL rules (``cel.cost``) against kube-apiserver's own expectations.

The cases are apiextensions-apiserver's ``TestCostEstimation`` (pkg/apiserver/schema/cel/
compilation_test.go, Kubernetes 1.32): each rule on a schema without limits ("calc") and with
``maxItems``/``maxProperties``/``maxLength`` set ("set"), with kube's expected maximum costs. The
CRD-level cases are apiextensions' validation_test.go (``forbid double-nested rule ...``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from samplecontroller.apiserver.cel import cost, validator
from samplecontroller.apiserver.cel.validator import _ENV

Schema = dict[str, Any]
Gen = Callable[[int | None], Schema]


def _limit(key: str, value: int | None) -> Schema:
    return {key: value} if value is not None else {}


def _prim(kind: str) -> Schema:
    if kind == "int-or-string":
        return {"x-kubernetes-int-or-string": True}
    if kind in ("duration", "date", "date-time"):
        return {"type": "string", "format": kind}
    return {"type": kind}


OBJ: Schema = {"type": "object", "properties": {"required": {"type": "string"}, "optional": {"type": "string"}},
               "required": ["required"]}


def array(kind: str) -> Gen:
    return lambda m: {"type": "array", "items": _prim(kind), **_limit("maxItems", m)}


def array_of_arrays(kind: str) -> Gen:
    return lambda m: {"type": "array", "items": {"type": "array", "items": {"type": kind}}, **_limit("maxItems", m)}


def object_array(m: int | None) -> Schema:
    return {"type": "array", "items": OBJ, **_limit("maxItems", m)}


def map_array(kind: str) -> Gen:
    return lambda m: {"type": "array", "items": {"type": "object", "additionalProperties": {"type": kind}},
                      **_limit("maxItems", m)}


def map_of(kind: str | Schema) -> Gen:
    item = _prim(kind) if isinstance(kind, str) else kind
    return lambda m: {"type": "object", "additionalProperties": item, **_limit("maxProperties", m)}


def string(m: int | None) -> Schema:
    return {"type": "string", **_limit("maxLength", m)}


def enum(*values: str) -> Gen:
    return lambda m: {"type": "string", "enum": list(values), **_limit("maxLength", m)}


def byte_string(m: int | None) -> Schema:
    return {"type": "string", "format": "byte", **_limit("maxLength", m)}


def nested(m: int | None) -> Schema:
    return {"type": "object", "additionalProperties": {"type": "string", **_limit("maxLength", m)},
            **_limit("maxProperties", m)}


def all_max_nested(m: int | None) -> Schema:
    return {"type": "array", "items": {"type": "object", "additionalProperties": {**OBJ, **_limit("maxProperties", m)},
                                       **_limit("maxProperties", m)}, **_limit("maxItems", m)}


def one_max_nested(m: int | None) -> Schema:
    return {"type": "array", "items": {"type": "object", "additionalProperties": OBJ, **_limit("maxProperties", m)}}


def string_array(m: int | None) -> Schema:
    return {"type": "array", "items": {"type": "string", **_limit("maxLength", m)}, **_limit("maxItems", m)}


def replace_fields(m: int | None) -> Schema:
    return {"type": "object", "properties": {"str": string(m), "before": string(2), "after": string(4)}}


def split_fields(m: int | None) -> Schema:
    return {"type": "object", "properties": {"str": string(m), "separator": string(m)}}


# (name, schema generator, rule, kube's cost without limits (None: "exceeds the limit"), the limit, kube's cost with it)
CASES: list[tuple[str, Gen, str, int | None, int, int]] = [
    ("number array with all", array("number"), "self.all(x, true)", 4718591, 10, 32),
    ("string array with all", array("string"), "self.all(x, true)", 3145727, 20, 62),
    ("boolean array with all", array("boolean"), "self.all(x, true)", 1887437, 5, 17),
    ("array of number arrays with all", array_of_arrays("number"), "self.all(x, true)", 3145727, 100, 302),
    ("array of objects with all", object_array, "self.all(x, true)", 555128, 50, 152),
    ("map of numbers with all", map_of("number"), "self.all(x, true)", 1348169, 10, 32),
    ("map of strings with all", map_of("string"), "self.all(x, true)", 1179647, 3, 11),
    ("map of booleans with all", map_of("boolean"), "self.all(x, true)", 943718, 100, 302),
    ("string with contains", string, "self.contains('test')", 314574, 10, 5),
    ("string with startsWith", string, "self.startsWith('test')", 2, 15, 2),
    ("string with endsWith", string, "self.endsWith('test')", 2, 30, 2),
    ("concat string", string, 'size(self + "hello") > size("hello")', 314578, 4, 7),
    ("index of array with numbers", array("number"), "self[1] == 0.0", 2, 5000, 2),
    ("index of array with strings", array("string"), "self[1] == self[1]", 314577, 8, 314577),
    ("O(n^2) loop with numbers", array("number"), "self.all(x, self.all(y, true))", None, 10, 352),
    ("O(n^3) loop with numbers", array("number"), "self.all(x, self.all(y, self.all(z, true)))", None, 10, 3552),
    ("regex matches simple", string, 'self.matches("x")', 314574, 50, 22),
    ("regex matches empty string", string, '"".matches("(((((((((())))))))))[0-9]")', 7, 10, 7),
    ("regex matches empty regex", string, 'self.matches("")', 1, 100, 1),
    ("map of strings with value length", nested, "self.all(x, x.contains(self[x]))", 2752507, 10, 72),
    ("set array maxLength to zero", array("number"), "self[3] == 0.0", 2, 0, 2),
    ("set map maxLength to zero", map_of("number"), 'self["x"] == 0.0', 2, 0, 2),
    ("set string maxLength to zero", string, 'self == "x"', 2, 0, 1),
    ("set bytes maxLength to zero", byte_string, 'self == b"x"', 2, 0, 1),
    ("set maxLength greater than estimated maxLength", array("number"), "self.all(x, x == 0.0)", 6291454,
     3 * 1024 * 2048, 25165826),
    ("nested types with root rule with all supporting maxLength", all_max_nested,
     'self.all(x, x["y"].required == "z")', 7340027, 10, 72),
    ("nested types with root rule with one supporting maxLength", one_max_nested,
     'self.all(x, x["y"].required == "z")', 7340027, 10, 7340027),
    ("int-or-string array with all", array("int-or-string"), "self.all(x, true)", 4718591, 10, 32),
    ("index of array with int-or-strings", array("int-or-string"), "self[0] == 5", 3, 10, 3),
    ("index of array with booleans", array("boolean"), "self[0] == false", 2, 25, 2),
    ("index of array of objects", object_array, "self[0] == null", 2, 422, 2),
    ("index of array of array of numnbers", array_of_arrays("number"), "self[0][0] == -1.0", 3, 51, 3),
    ("array of number maps with all", map_array("number"), "self.all(x, x.y == 25.2)", 6291452, 12, 74),
    ("index of array of number maps", map_array("number"), "self[0].x > 2.0", 4, 3000, 4),
    ("duration array with all", array("duration"), "self.all(x, true)", 2359295, 5, 17),
    ("index of duration array", array("duration"), "self[0].getHours() == 2", 4, 525, 4),
    ("date array with all", array("date"), "self.all(x, true)", 725936, 15, 47),
    ("index of date array", array("date"), "self[2].getDayOfMonth() == 13", 4, 42, 4),
    ("date-time array with all", array("date-time"), "self.all(x, true)", 428963, 25, 77),
    ("index of date-time array", array("date-time"), "self[2].getMinutes() == 45", 4, 99, 4),
    ("map of int-or-strings with all", map_of("int-or-string"), "self.all(x, true)", 1348169, 15, 47),
    ("map of objects with all", map_of(OBJ), "self.all(x, true)", 428963, 20, 62),
    ("map of number maps with all", map_of({"type": "object", "additionalProperties": {"type": "number"}}),
     "self.all(x, true)", 1179647, 10, 32),
    ("map of number arrays with all", map_of({"type": "array", "items": {"type": "number"}}), "self.all(x, true)",
     1179647, 25, 77),
    ("map of durations with all", map_of("duration"), "self.all(x, true)", 1048577, 5, 17),
    ("map of dates with all", map_of("date"), "self.all(x, true)", 524288, 10, 32),
    ("map of date-times with all", map_of("date-time"), "self.all(x, true)", 349526, 25, 77),
    ("extended library regex find", string, "self.find('[0-9]+') == ''", 629147, 10, 11),
    ("extended library join", string_array, "self.join(' ') == 'aa bb'", 329853068905, 10, 43),
    ("extended library isSorted", string_array, "self.isSorted() == true", 329854432052, 10, 52),
    ("extended library replace", replace_fields, "self.str.replace(self.before, self.after) == 'does not matter'",
     629154, 4, 12),
    ("extended library split", split_fields, "self.str.split(self.separator) == []", 629160, 10, 22),
    ("extended library lowerAscii", string, "self.lowerAscii() == 'lower!'", 314575, 10, 6),
    ("check cost of size call", map_of("integer"), "oldSelf.size() == self.size()", 5, 10, 5),
    ("check cost of timestamp comparison", map_of("date-time"), 'self["a"] == self["b"]', 8, 7, 8),
    ("check cost of duration comparison", map_of("duration"), 'self["c"] == self["d"]', 8, 42, 8),
    ("enums with maxLength equals to the longest possible value", enum("A", "B", "C", "LongValue"),
     "self.contains('A')", 2, 1000, 401),
]


def max_cost(rule: str, schema: Schema) -> int:
    return cost.estimate(_ENV.compile(rule).serialized(), cost.decl_type(schema)).max


@pytest.mark.parametrize(("name", "gen", "rule", "calc", "limit", "expected"), CASES, ids=[c[0] for c in CASES])
def test_estimated_cost_matches_kube(name: str, gen: Gen, rule: str, calc: int | None, limit: int,
                                     expected: int) -> None:
    unbounded = max_cost(rule, gen(None))
    if calc is None:
        assert unbounded >= cost.PER_CALL_LIMIT  # kube: "expectCalcCostExceedsLimit: costLimit"
    else:
        assert unbounded == calc
    assert max_cost(rule, gen(limit)) == expected


@pytest.mark.parametrize("gen", [map_of("number"), map_of("string"), map_of("int-or-string"), map_of(OBJ)])
def test_has_costs_the_select_operand_only(gen: Gen) -> None:
    """``has()`` is free (PresenceTestHasCost(false)); its operand ``self`` costs 1, as in cel-go's
    cost_test ("select: field test only no has() cost": 1). kube's cases give 0, which its test
    treats as "not checked"."""
    assert max_cost("has(self.x)", gen(None)) == max_cost("has(self.x)", gen(5)) == 1


@pytest.mark.parametrize(("cost_value", "text"), [
    (25_001_420, "2.5x"), (10_839_502, "1.083950x"), (1_000_000_000, "100.0x"), (1_000_000_001, "more than 100x")])
def test_cost_error_message_factor(cost_value: int, text: str) -> None:
    assert cost.cost_error_message("estimated rule cost", cost_value, cost.STATIC_RULE_COST_LIMIT) == (
        f"estimated rule cost exceeds budget by factor of {text} (try simplifying the rule, or adding maxItems, "
        "maxProperties, and maxLength where arrays, maps, and strings are declared)")


def double_nested(key: Schema, max_items: int | None = None, max_properties: int | None = None) -> Schema:
    value = {"type": "array", **_limit("maxItems", max_items),
             "items": {"type": "object", **_limit("maxProperties", max_properties), "additionalProperties": {
                 "type": "object", "required": ["key"], "properties": {"key": key}}},
             "x-kubernetes-validations": [{"rule": "self.all(x, x.all(y, x[y].key == x[y].key))"}]}
    return {"type": "object", "properties": {"value": value}}


ROOT = "spec.validation.openAPIV3Schema"
VALUE_RULE = f"{ROOT}.properties[value].x-kubernetes-validations[0].rule"


@pytest.mark.parametrize(("schema", "expected"), [
    (double_nested({"type": "string"}), [VALUE_RULE, VALUE_RULE, ROOT]),
    (double_nested({"type": "string", "maxLength": 10}), [VALUE_RULE, VALUE_RULE, ROOT]),
    (double_nested({"type": "string", "maxLength": 10}, max_items=10, max_properties=10), []),
    (double_nested({"type": "number"}, max_items=4), []),
    ({"type": "object", "properties": {"value": {"type": "integer", "x-kubernetes-validations": [
        {"rule": "self < 1024"}]}}}, []),
], ids=["no limit", "one limit", "three limits", "limit on the outer array", "cardinality 1 under the root"])
def test_crd_cost_limits_as_kube_validation_tests(schema: Schema, expected: list[str]) -> None:
    errors = validator.schema_errors(schema, ROOT)
    assert [(e.field, e.type) for e in errors] == [(f, "FieldValueForbidden") for f in expected]


def test_total_cost_of_a_crd() -> None:
    """kube's "forbid validation rules where cost total exceeds total limit": the list rule exceeds
    the per-rule limit and the total; the map rule only contributes; the cheap rule is not named."""
    item = {"type": "string", "maxLength": 5000, "x-kubernetes-validations": [{"rule": "self.contains('keyword')"}]}
    schema = {"type": "object", "properties": {
        "list": {"type": "array", "maxItems": 100000, "items": item},
        "map": {"type": "object", "maxProperties": 1000, "additionalProperties": item},
        "field": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 50 && self < 100"}]}}}
    errors = validator.schema_errors(schema, ROOT)
    list_rule = f"{ROOT}.properties[list].items.x-kubernetes-validations[0].rule"
    map_rule = f"{ROOT}.properties[map].additionalProperties.x-kubernetes-validations[0].rule"
    assert [str(e) for e in errors] == [
        f"{list_rule}: Forbidden: " + cost.cost_error_message("estimated rule cost", 200_100_000, 10_000_000),
        f"{list_rule}: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire "
        "OpenAPIv3 schema",
        f"{map_rule}: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire "
        "OpenAPIv3 schema",
        f"{ROOT}: Forbidden: " + cost.cost_error_message(
            "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema", 202_101_007,
            100_000_000)]


def test_unchanged_schema_suppresses_the_per_rule_limit_only() -> None:
    schema = {"type": "object", "properties": {"value": {"type": "array", "maxItems": 2886, "items": {"type": "number"},
                                                         "x-kubernetes-validations": [
                                                             {"rule": "self.all(x, self.all(y, true))"}]}}}
    assert [e.detail for e in validator.schema_errors(schema, ROOT)] == [
        cost.cost_error_message("estimated rule cost", 25_001_420, 10_000_000)]
    assert validator.schema_errors(schema, ROOT, suppress_rule_cost=True) == []


def test_runtime_budget_over_many_cheap_evaluations() -> None:
    """Evaluations of a rule estimated within the per-call limit are charged their estimate
    (979,303 here) until the estimates would exhaust the 10,000,000 budget; then each is charged
    its bound on the actual value (244,903 for 24,000 characters): 40 fit, the 41st runs out of
    budget, and no further rule runs (the sibling's rule neither)."""
    pattern = "^(" + "|".join(f"x{i:03d}" for i in range(80)) + "|a)*$"
    item = {"type": "string", "maxLength": 24000, "x-kubernetes-validations": [{"rule": f"self.matches('{pattern}')"}]}
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "names": {"type": "array", "items": item},
        "other": {"type": "string", "x-kubernetes-validations": [{"rule": "self == 'x'"}]}}}}}
    rule = validator._rules_of(item, False)[0]
    assert rule.max_cost == 979_303
    assert validator.validate({"spec": {"names": ["a" * 24000] * 40, "other": "x"}}, None, schema) == ([], [])
    errors, _ = validator.validate({"spec": {"names": ["a" * 24000] * 41, "other": "y"}}, None, schema)
    assert [str(e) for e in errors] == [
        'spec.names[40]: Invalid value: "string": validation failed due to running out of cost budget, no further '
        "validation rules will be run"]


OBJECT: Schema = {"type": "object", "properties": {"o": {"type": "object", "properties": {"a": {"type": "integer"}}}}}


@pytest.mark.parametrize(("rule", "expected"), [
    # cel.bind: the empty range's list (10) + init self.o (2) + x.a > 1 (x 1, select on an object 1, call 1)
    ("cel.bind(x, self.o, x.a > 1)", 15),
    # _?._ (self 1, call 1) + orValue (call 1, self.o 2) + .a on the object (1) + > (1)
    ("self.?o.orValue(self.o).a > 1", 7),
    # oldSelf.value() (2) .o (1) .a (1), self.o.a (3), == (scaled by the int sizes: 0)
    ("oldSelf.value().o.a == self.o.a", 7),
])
def test_types_the_engine_leaves_dynamic_are_the_schemas(rule: str, expected: int) -> None:
    """The engine checks ``self`` as dyn; the estimator types variables bound by ``cel.bind``,
    ``oldSelf.value()`` and optional selections as cel-go's checker does with the schema's types,
    so a field selection on them costs 1 as on an object (costs worked out by cel-go's rules)."""
    assert max_cost(rule, OBJECT) == expected
