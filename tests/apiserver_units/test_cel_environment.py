"""kube-apiserver 1.37's CEL base environment (k8s.io/apiserver v0.37.0-beta.0,
pkg/cel/environment/base.go) at each compatibility version 1.32 .. 1.36 (the emulated version
minus one): the libraries and language options it adds by version, checked against what this
server compiles, evaluates and estimates."""

from __future__ import annotations

from typing import Any

import pytest

from samplecontroller.apiserver import admission_policy, cel
from samplecontroller.apiserver.cel import cost, engine, formats
from samplecontroller.apiserver.cel.library import FUNCTIONS
from samplecontroller.apiserver.strategies.crd import CRDStrategy

ENV = cel.Env({"self": engine.DYN}, FUNCTIONS + formats.FUNCTIONS, formats.rewrite)
LIST = {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 5}}


def ev(source: str, self: Any = None) -> Any:
    return ENV.compile(source).evaluate({"self": self})


def _crd(rule: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"v": {"type": "string", "maxLength": 64,
                                                     "x-kubernetes-validations": [{"rule": rule}]}}}
    return {"spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": schema}}]}}


def _first_lines(errors: list[Any]) -> list[str]:
    return [e.detail.splitlines()[0] for e in errors]


# ------------------------------------------- kube's lists library v1: includes (1.37)


@pytest.mark.parametrize(("source", "expected"), [
    ("[1, 2, 3].includes(2)", True),
    ("[1, 2, 3].includes(4)", False),
    ("'model-a'.includes('model-a') && !'model-a'.includes('model-b')", True),
    ("[1, 2].includes(2.0) && ![true].includes(1)", True),  # CEL equality: numbers across types
    ("self.includes('b') && !self.includes('z')", True),
    ("[].includes(1)", False),
])
def test_includes_results(source: str, expected: bool) -> None:
    """lists.go ``includes``: an element of the target list equal to the argument, or a target
    that is not a list equal to it."""
    assert ev(source, ["a", "b"]) is expected


def test_includes_cost() -> None:
    """library/cost.go: like indexOf, the list's size times one comparison (plus the string
    traversal of a string element); a dyn target, its size times one."""
    decl = cost.decl_type(LIST, False)
    estimate = cost.estimate(ENV.compile("self.includes('a')").serialized(), decl)
    # 1 (self) + 10 items x (1 + 20 bytes of a 5-character string x 0.1)
    assert (estimate.min, estimate.max) == (1, 31)
    index_of = cost.estimate(ENV.compile("self.indexOf('a') >= 0").serialized(), decl)
    assert (estimate.min + 1, estimate.max + 1) == (index_of.min, index_of.max)
    # a string target (dyn in kube's declaration): one per character, where indexOf has 0.1
    text = cost.decl_type({"type": "string", "maxLength": 100}, False)
    assert cost.estimate(ENV.compile("self.includes('a')").serialized(), text).max == 1 + 400
    assert cost.estimate(ENV.compile("self.indexOf('a') >= 0").serialized(), text).max == 1 + 40 + 1


def test_includes_needs_compatibility_1_37() -> None:
    """base.go adds ``library.Lists(library.ListsVersion(1))`` at 1.37: kube-apiserver 1.37
    compiles new expressions for 1.36, so a new rule using includes is refused (a stored one,
    unchanged in an update, still compiles), as in the policies' expressions."""
    strategy = CRDStrategy()
    rule = "self.includes('a')"
    assert _first_lines(strategy.validate_compatibility(_crd(rule), None, 37)) == [
        "compilation failed: ERROR: <input>:1:14: undeclared reference to 'includes' (in container '')"]
    assert strategy.validate_compatibility(_crd(rule), _crd(rule), 37) == []
    assert admission_policy.compatibility_error("[1].includes(1)", 36).splitlines()[0] == (
        "compilation failed: ERROR: <input>:1:13: undeclared reference to 'includes' (in container '')")
    assert admission_policy.compatibility_error("[1].includes(1)", 37) == ""


def test_a_rule_refused_for_the_compatibility_version_is_not_costed() -> None:
    """kube compiles a new rule in its compatibility version's environment only: one that does
    not compile there is not costed (here the literal list's strings are unbounded, which makes
    the estimate exceed the limits once the rule compiles), and the errors come in the schema's
    order."""
    strategy = CRDStrategy()
    crd = _crd("['a', 'b'].includes(self)")
    crd["metadata"] = {"name": "widgets.example.com"}
    crd["spec"] |= {"group": "example.com", "names": {"plural": "widgets"}}
    errors = strategy.validate_extra(crd, None) + strategy.validate_compatibility(crd, None, 37)
    assert [(e.field, e.detail.splitlines()[0]) for e in errors] == [(
        "spec.validation.openAPIV3Schema.properties[v].x-kubernetes-validations[0].rule",
        "compilation failed: ERROR: <input>:1:20: undeclared reference to 'includes' (in container '')")]
    # a rule the old CRD had compiles as a stored one (and is costed)
    assert "cost" in strategy.validate_compatibility(crd, crd, 37)[0].detail


# ------------------------------------------- cel-go ext lists' sortBy macro (1.34)

INTS = {"type": "array", "maxItems": 10, "items": {"type": "integer"}}


@pytest.mark.parametrize(("source", "expected"), [
    ("[3, 1, 2].sortBy(e, -e)", [3, 2, 1]),
    ("['bb', 'a', 'ccc'].sortBy(s, s.size())", ["a", "bb", "ccc"]),
    ("self.sortBy(p, p.score).map(p, p.name)", ["bar", "foo", "baz"]),
    ("self.sortBy(p, p.name)[0].score", -10),
    ("[].sortBy(e, e)", []),
    ("self.map(p, p.score).sortBy(e, e).sortBy(e, -e)", [1000, 0, -10]),
])
def test_sort_by_results(source: str, expected: Any) -> None:
    """ext/lists.go's sortBy: the list sorted by the key each element maps to."""
    players = [{"name": "foo", "score": 0}, {"name": "bar", "score": -10}, {"name": "baz", "score": 1000}]
    assert ev(source, players) == expected


@pytest.mark.parametrize(("source", "message"), [
    ("self.sortBy(e, e.a)", "list elements must have the same type"),
    ("self.sortBy(e, e)", "list elements must be comparable"),
])
def test_sort_by_evaluation_errors(source: str, message: str) -> None:
    with pytest.raises(cel.EvalError) as err:
        ev(source, [{"a": 1}, {"a": "x"}])
    assert str(err.value) == message


@pytest.mark.parametrize(("source", "detail"), [
    # parser.MakeMap's error, at the argument
    ("[1].sortBy(1, 2)", "ERROR: <input>:1:12: argument is not an identifier"),
    ("self.sortBy( x.y , x)", "ERROR: <input>:1:14: argument is not an identifier"),
    ("{'a': 1}.sortBy(e, e)", "ERROR: <input>:1:1: sortBy can only be applied to a list, identifier, comprehension, "
                              "call or select expression"),
])
def test_sort_by_compile_errors(source: str, detail: str) -> None:
    with pytest.raises(cel.CompileError) as err:
        ENV.compile(source)
    assert err.value.detail.splitlines()[0] == detail


def test_sort_by_cost() -> None:
    """The macro's expansion (a bind of the list, the keys by a map comprehension, then
    @sortByAssociatedKeys) costed as cel-go's estimator does it, with ext/lists.go's estimate of
    the keys' sort (n^2 x 2 for int keys): 10 (the bind's empty range) + 1 (self) + 1 (the
    list) + 12..142 (the map: 1 + 10 + 1, and 13 an element) + 11..211 (the sort), + 2."""
    estimate = cost.estimate(ENV.compile("self.sortBy(e, e).size() > 0").serialized(), cost.decl_type(INTS, False))
    assert (estimate.min, estimate.max) == (37, 367)


def test_sort_by_follows_the_compatibility_version() -> None:
    """sortBy came with ext lists v3 in 1.34: not a macro before (an undeclared function, its
    variable undeclared too)."""
    strategy = CRDStrategy()
    rule = "self.split(',').sortBy(e, e.size()).size() > 0"
    assert strategy.validate_compatibility(_crd(rule), None, 35) == []
    assert _first_lines(strategy.validate_compatibility(_crd(rule), None, 34)) == [
        "compilation failed: ERROR: <input>:1:23: undeclared reference to 'sortBy' (in container '')"]


# ------------------------------------------- ext.TwoVarComprehensions (1.32)


@pytest.mark.parametrize(("source", "expected"), [
    ("[10, 20].all(i, v, v == (i + 1) * 10)", True),
    ("{'a': 1, 'b': 2}.exists(k, v, k == 'b' && v == 2)", True),
    ("{'a': 1, 'b': 2}.all(k, v, v > 1)", False),
    ("[1, 2, 2].existsOne(i, v, v == 2)", False),
    ("[1, 2, 3].existsOne(i, v, i == 0 && v == 1)", True),
    ("[1, 2, 3].transformList(i, v, v * 10)", [10, 20, 30]),
    ("[1, 2, 3].transformList(i, v, i > 0, v * 10)", [20, 30]),
    ("{'a': 1}.transformList(k, v, k + string(v))", ["a1"]),
    ("self.all(name, value, value.startsWith(name))", True),
])
def test_two_variable_comprehensions(source: str, expected: Any) -> None:
    """cel-go's ext.TwoVarComprehensions, in kube's base environment since 1.32 (every
    compatibility version this server emulates): index or key, and value."""
    assert ev(source, {"a": "ab", "c": "cd"}) == expected


def test_two_variable_comprehensions_cost_as_one_variable_ones() -> None:
    decl = cost.decl_type(INTS, False)
    for two, one in (("self.all(i, v, v > 0)", "self.all(v, v > 0)"),
                     ("self.transformList(i, v, v * 2).size() > 0", "self.map(v, v * 2).size() > 0")):
        a, b = (cost.estimate(ENV.compile(s).serialized(), decl) for s in (two, one))
        assert (a.min, a.max) == (b.min, b.max)
    strategy = CRDStrategy()
    assert strategy.validate_compatibility(_crd("['a'].all(i, v, v == self)"), None, 33) == []


@pytest.mark.parametrize(("source", "name", "column"), [
    ("{'a': 1}.transformMap(k, v, v * 2) == {'a': 2}", "transformMap", 10),
    ("self.transformMapEntry(k, v, {v: k}).size() > 0", "transformMapEntry", 6),
    ("optional.unwrap([optional.of(1)]) == [1]", "unwrap", 1),
    ("[optional.of(1)].unwrapOpt() == [1]", "unwrapOpt", 18),
])
def test_what_the_engine_cannot_run_is_refused_by_name(source: str, name: str, column: int) -> None:
    """kube accepts these; cel-cpp's binding has no runtime for the map macros' cel.@mapInsert
    and no optional.unwrap: refused when the rule is compiled, naming them."""
    with pytest.raises(cel.CompileError) as err:
        ENV.compile(source)
    assert err.value.detail.startswith(f"ERROR: <input>:1:{column}: {name} (")
    assert err.value.detail.endswith("is not supported by this server's CEL engine")


# ------------------------------------------- ext.Strings(ext.StringsVersion(2)) (1.29)


def test_strings_extension_is_version_2() -> None:
    """kube's base environment has the strings extension at version 2 (format, strings.quote,
    join; not version 3's reverse): a string's reverse() does not compile."""
    assert ev("'%s-%d'.format(['a', 1]) == 'a-1' && strings.quote('a') == '\"a\"' && ['a', 'b'].join() == 'ab'")
    with pytest.raises(cel.CompileError, match=r"^ERROR: <input>:1:14: found no matching overload for 'reverse'"):
        ENV.compile("'abc'.reverse() == 'cba'")
    assert ev("[1, 2].reverse()") == [2, 1]


# ------------------------------------------- no ext.Bindings in kube; cel-go's issue text


def test_cel_bind_is_refused_as_kube_refuses_it() -> None:
    """kube's CEL environments have no ext.Bindings: ``cel.bind`` is a call of an undeclared
    ``bind`` on an undeclared ``cel``, its variable undeclared too, in a CRD rule, a
    messageExpression and a policy's expression alike (cel-go's issues, by position)."""
    rule = "cel.bind(x, self.a, x > 1)"
    schema = {"type": "object", "properties": {"a": {"type": "integer"}},
              "x-kubernetes-validations": [{"rule": rule}, {"rule": "true", "messageExpression": "cel.bind(m, 'a', m)"}]}
    errors = cel.schema_errors(schema, "spec.validation.openAPIV3Schema")
    assert [(e.field, [line for line in e.detail.splitlines() if line.startswith(("compilation", "message", "ERROR"))])
            for e in errors] == [
        ("spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule", [
            "compilation failed: ERROR: <input>:1:1: undeclared reference to 'cel' (in container '')",
            "ERROR: <input>:1:9: undeclared reference to 'bind' (in container '')",
            "ERROR: <input>:1:10: undeclared reference to 'x' (in container '')",
            "ERROR: <input>:1:21: undeclared reference to 'x' (in container '')"]),
        ("spec.validation.openAPIV3Schema.x-kubernetes-validations[1].messageExpression", [
            "messageExpression compilation failed: ERROR: <input>:1:1: undeclared reference to 'cel' (in container '')",
            "ERROR: <input>:1:9: undeclared reference to 'bind' (in container '')",
            "ERROR: <input>:1:10: undeclared reference to 'm' (in container '')",
            "ERROR: <input>:1:18: undeclared reference to 'm' (in container '')"])]
    assert admission_policy.compile_error("cel.bind(o, object, o != null)").startswith(
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'cel' (in container '')")
    # the rewrites that use it internally still compile
    assert cel.schema_errors({"type": "object", "properties": {"a": {"type": "string"}}, "x-kubernetes-validations": [
        {"rule": "self.a != 'cel.bind(x, 1, x)'"},
        {"rule": "!oldSelf.hasValue() || self.a != ''", "optionalOldSelf": True}]}, "spec") == []


@pytest.mark.parametrize(("source", "first"), [
    # the target's type before the dot, the arguments' after (checker/format.go)
    ("'a'.startsWith(1)", "ERROR: <input>:1:15: found no matching overload for 'startsWith' applied to "
                          "'string.(int)'"),
    ("[1].slice('a', 1)", "ERROR: <input>:1:10: found no matching overload for 'slice' applied to "
                          "'list(int).(string, int)'"),
    ("{'a': {'b': 1}}.exists(k, k.endsWith(1))", "ERROR: <input>:1:37: found no matching overload for 'endsWith' "
                                                "applied to 'string.(int)'"),
    # global functions and operators keep the plain form
    ("sets.contains(1, 2)", "ERROR: <input>:1:14: found no matching overload for 'sets.contains' applied to "
                            "'(int, int)'"),
    ("1 == 1u", "ERROR: <input>:1:3: found no matching overload for '_==_' applied to '(int, uint)'"),
])
def test_member_overload_errors_read_as_cel_gos(source: str, first: str) -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"}},
              "x-kubernetes-validations": [{"rule": source}]}
    errors = cel.schema_errors(schema, "spec")
    assert [e.detail.splitlines()[0] for e in errors] == ["compilation failed: " + first]


# ------------------------------------------- cel.CrossTypeNumericComparisons(true) (1.28)


@pytest.mark.parametrize(("source", "expected"), [
    ("1 < 1.5 && 2.5 > 2 && 1u <= 1 && 1 >= 1u && 1.0 < 2u && 3u > 2.5", True),
    ("2 < 1.5 || 1.5 >= 2u", False),
    ("self.replicas < 2.5", True),
])
def test_numbers_of_different_types_are_ordered(source: str, expected: bool) -> None:
    """kube's base environment has cel-go's cross-type numeric comparisons since 1.28: int,
    uint and double are ordered across types (equality across them stays a compile error)."""
    schema = {"type": "object", "properties": {"replicas": {"type": "integer"}},
              "x-kubernetes-validations": [{"rule": source}]}
    assert cel.schema_errors(schema, "spec") == []
    assert ev(source, {"replicas": 2}) is expected
    with pytest.raises(cel.CompileError, match=r"found no matching overload for '_==_' applied to '\(int, double\)'"):
        ENV.compile("1 == 1.0")
    estimate = cost.estimate(ENV.compile("1 < 1.5").serialized(), None)
    assert (estimate.min, estimate.max) == (1, 1)


# ------------------------------------------- cel.HomogeneousAggregateLiterals() (1.0)


@pytest.mark.parametrize(("source", "issue"), [
    ("[1, 2.0].size() == 2", "ERROR: <input>:1:5: expected type 'int' but found 'double'"),
    ("{'a': 1, 'b': 'x'}.size() == 2", "ERROR: <input>:1:15: expected type 'int' but found 'string'"),
    ("{1: 'a', 'b': 'c'}.size() == 2", "ERROR: <input>:1:10: expected type 'int' but found 'string'"),
    ("[[1], ['a']].size() == 2", "ERROR: <input>:1:7: expected type 'list(int)' but found 'list(string)'"),
    ("self.all(x,\n  [2, 1, 'a'].size() == 3)", "ERROR: <input>:2:10: expected type 'int' but found 'string'"),
])
def test_mixed_type_literals_are_refused(source: str, issue: str) -> None:
    """cel-go's checker with HomogeneousAggregateLiterals: a list's elements, a map's keys and
    its values of one type each (dyn fits any), else ``expected type ... but found ...`` at the
    first element of another type."""
    schema = {"type": "object", "x-kubernetes-validations": [{"rule": source, "message": "m"}]}
    errors = cel.schema_errors(schema, "spec")
    assert [e.detail.splitlines()[0] for e in errors] == ["compilation failed: " + issue]
    assert admission_policy.compile_error(source.replace("self", "object")).splitlines()[0] == (
        "compilation failed: " + issue)


def test_literals_with_dyn_elements_are_accepted() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "string", "maxLength": 5}}, "x-kubernetes-validations": [
        {"rule": "[1, dyn(self.x), 2.0].size() == 3"}, {"rule": "[[1], [dyn(self.x)], ['a']].size() == 3"},
        {"rule": "{'a': dyn(self.x), 'b': 1}.size() == 2", "messageExpression": "['a', 'b'][0]"}]}
    assert cel.schema_errors(schema, "spec") == []
    schema["x-kubernetes-validations"] = [{"rule": "true", "messageExpression": "[1, 'a'].size() > 0 ? 'x' : 'y'"}]
    assert [e.detail.splitlines()[0] for e in cel.schema_errors(schema, "spec")] == [
        "messageExpression compilation failed: ERROR: <input>:1:5: expected type 'int' but found 'string'"]


@pytest.mark.parametrize(("source", "name"), [
    ("math.greatest(1, 2) == 2", "math"),  # ext.Math: not in kube's base environment
    ("base64.encode(b'a') == 'YQ=='", "base64"),  # ext.Encoders: neither
    ("jsonpatch.escapeKey('a/b') == 'a~1b'", "jsonpatch"),  # only MutatingAdmissionPolicy's
])
def test_extensions_kube_does_not_have_are_undeclared(source: str, name: str) -> None:
    with pytest.raises(cel.CompileError) as err:
        ENV.compile(source)
    assert err.value.detail.splitlines()[0] == f"ERROR: <input>:1:1: undeclared reference to '{name}' (in container '')"
    assert ev("sets.contains([1, 2], [2]) && sets.intersects([1], [1]) && sets.equivalent([1], [1])")  # ext.Sets is


# ------------------------------------------- kube's lists library: typed overloads (1.24)


@pytest.mark.parametrize(("source", "expected"), [
    ("[true, false].isSorted()", False),
    ("[false, true].isSorted() && [false, true].max() && ![false, true].min()", True),
    ("['b', 'a', 'c'].min()", "a"),
    ("[1.5, 2.0].sum()", 3.5),
    ("[1, 2].sum() + 1", 4),
    ("self.max() == 3 && self.isSorted() == false", True),
])
def test_lists_library_over_its_comparable_types(source: str, expected: Any) -> None:
    """lists.go's comparableTypes include bool (a list of bools is sorted, has a max)."""
    assert ev(source, [3, 1]) == expected


@pytest.mark.parametrize(("source", "column", "signature"), [
    ("['a'].sum() == 'a'", 10, "list(string).()"),  # summableTypes: int, uint, double, duration
    ("[[1]].isSorted()", 15, "list(list(int)).()"),
    ("[{'a': 1}].max() != null", 15, "list(map(string, int)).()"),
])
def test_lists_library_refuses_other_element_types_when_compiled(source: str, column: int, signature: str) -> None:
    """kube declares isSorted, sum, min and max per element type: another one does not compile
    (a dyn list's elements of another type fail when evaluated)."""
    with pytest.raises(cel.CompileError) as err:
        ENV.compile(source)
    name = source.split(".")[1].split("(")[0]
    assert err.value.detail.splitlines()[0] == (
        f"ERROR: <input>:1:{column}: found no matching overload for '{name}' applied to '{signature}'")
    with pytest.raises(cel.EvalError, match=r"^no such overload$"):
        ev("self.sum()", ["a", "b"])
