"""The CEL libraries kube-apiserver 1.37's base environment adds after 1.32 (environment/
base.go): the semver library (``library.SemverLib(library.SemverVersion(1))``, 1.33) and cel-go's
ext lists (``ext.Lists(ext.ListsVersion(3))``, 1.34), with their results, errors (blang/semver
v4's and cel-go's messages), estimated costs (library/cost.go, ext/lists.go's estimators) and
their availability by compatibility version."""

from __future__ import annotations

from typing import Any

import pytest

from samplecontroller.apiserver import cel
from samplecontroller.apiserver.cel import cost, engine, formats
from samplecontroller.apiserver.cel.library import FUNCTIONS, functions, parse_semver
from samplecontroller.apiserver.strategies.crd import CRDStrategy

ENV = cel.Env({"self": engine.DYN}, FUNCTIONS + formats.FUNCTIONS, formats.rewrite)


def ev(source: str, self: Any = None) -> Any:
    return ENV.compile(source).evaluate({"self": self})


@pytest.mark.parametrize(("source", "expected"), [
    ("isSemver('1.2.3') && isSemver('1.0.0-alpha.1') && isSemver('1.0.0+build.7')", True),
    ("isSemver('v1.0') || isSemver('1.0') || isSemver('01.0.0') || isSemver('')", False),
    ("isSemver('v1.0', true) && isSemver('1', true) && isSemver('01.01.01', true)", True),
    ("isSemver('1.0-rc', true)", False),  # a short version cannot carry a prerelease
    ("isSemver('1.0.0', false)", True),
    ("[semver('2.5.1').major(), semver('2.5.1').minor(), semver('2.5.1').patch()]", [2, 5, 1]),
    ("semver('v1.2', true).minor() == 2 && semver('01.01.01', true).patch() == 1", True),
    ("semver('1.2.3').compareTo(semver('1.2.3'))", 0),
    ("semver('1.2.3').compareTo(semver('2.0.0'))", -1),
    ("semver('1.2.3').compareTo(semver('0.1.2'))", 1),
    ("semver('2.0.0').isGreaterThan(semver('1.9.9')) && semver('1.0.0').isLessThan(semver('2.0.0'))", True),
    # precedence: a release above its prereleases, numeric identifiers below alphanumeric ones,
    # a longer prerelease above its prefix, build metadata ignored
    ("semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))", True),
    ("semver('1.0.0-alpha').compareTo(semver('1.0.0-alpha.1'))", -1),
    ("semver('1.0.0-1').compareTo(semver('1.0.0-alpha'))", -1),
    ("semver('1.0.0-beta.11').compareTo(semver('1.0.0-beta.2'))", 1),
    ("semver('1.0.0+a').compareTo(semver('1.0.0+b'))", 0),
    ("semver('1.0.0+a') == semver('1.0.0+b') && semver('1.0', true) == semver('1.0.0')", True),
    ("semver('1.0.0') != semver('1.0.1')", True),
    ("semver(self).major() >= 1", True),
    # quantity's comparisons still work beside semver's (they share the declarations)
    ("quantity('1Gi').compareTo(quantity('1024Mi')) == 0 && quantity('1').isLessThan(quantity('2'))", True),
])
def test_semver_results(source: str, expected: Any) -> None:
    assert ev(source, "1.4.0") == expected


@pytest.mark.parametrize(("source", "message"), [
    ("semver('1.0')", "No Major.Minor.Patch elements found"),
    ("semver('')", "Version string empty"),
    ("semver('v1.0.0')", 'Invalid character(s) found in major number "v1"'),
    ("semver('01.0.0')", 'Major number must not contain leading zeroes "01"'),
    ("semver('1.x.0')", 'Invalid character(s) found in minor number "x"'),
    ("semver('1.0.00')", 'Patch number must not contain leading zeroes "00"'),
    ("semver('1..0')", 'strconv.ParseUint: parsing "": invalid syntax'),
    ("semver('1.0.0-')", "Prerelease is empty"),
    ("semver('1.0.0-01')", 'Numeric PreRelease version must not contain leading zeroes "01"'),
    ("semver('1.0.0-a_b')", 'Invalid character(s) found in prerelease "a_b"'),
    ("semver('1.0.0+')", "Build meta data is empty"),
    ("semver('1.0.0+a..b')", "Build meta data is empty"),
    ("semver('1.0-rc', true)", "short version cannot contain PreRelease/Build meta data"),
    ("semver('1.0-rc.1', true)", 'Invalid character(s) found in minor number "0-rc"'),
    ("semver('1.0.0').compareTo(quantity('1'))", "no such overload"),
    ("quantity('1').isLessThan(semver('1.0.0'))", "no such overload"),
])
def test_semver_errors(source: str, message: str) -> None:
    with pytest.raises(cel.EvalError) as err:
        ev(source)
    assert str(err.value) == message


def test_parse_semver_normalizes_as_kube() -> None:
    assert parse_semver("v01.2", normalize=True) == (1, 2, 0, ())
    assert parse_semver("1.2.3-rc.10+sha.1") == (1, 2, 3, ("rc", 10))
    with pytest.raises(ValueError, match=r"No Major\.Minor\.Patch"):
        parse_semver("v01.2")


@pytest.mark.parametrize(("source", "schema", "expected"), [
    # library/cost.go: semver/isSemver traverse their string (0.1 per character), the accessors
    # and comparisons cost 1, semver equality is O(1)
    ("semver('1.0.0').isLessThan(semver('2.0.0'))", {"type": "string"}, (3, 3)),
    ("semver(self).major() >= 1", {"type": "string", "maxLength": 100}, (3, 43)),
    ("isSemver(self, true)", {"type": "string", "maxLength": 100}, (1, 41)),
    ("semver(self) == semver('1.0.0')", {"type": "string", "maxLength": 100}, (3, 43)),
    ("semver(self, true).minor() + semver(self).patch() > 1", {"type": "string", "maxLength": 10}, (6, 14)),
])
def test_semver_costs(source: str, schema: dict[str, Any], expected: tuple[int, int]) -> None:
    program = ENV.compile(source)
    estimate = cost.estimate(program.serialized(), cost.decl_type(schema, False))
    assert (estimate.min, estimate.max) == expected


@pytest.mark.parametrize(("source", "expected"), [
    ("[1, 2, 3, 4].slice(1, 3)", [2, 3]),
    ("[1, 2, 3, 4].slice(2, 4) == [3, 4] && [1].slice(1, 1) == []", True),
    ("[1, [2, 3], [4]].flatten()", [1, 2, 3, 4]),
    ("[1, [2, [3, 4]]].flatten()", [1, 2, [3, 4]]),
    ("[1, 2, [], [], [3, 4]].flatten()", [1, 2, 3, 4]),
    ("[1, [2, [3, [4]]]].flatten(2)", [1, 2, 3, [4]]),
    ("[3, 2, 1].sort()", [1, 2, 3]),
    ("['b', 'c', 'a'].sort()", ["a", "b", "c"]),
    ("[].sort() == [] && [true, false].sort() == [false, true]", True),
    ("lists.range(4)", [0, 1, 2, 3]),
    ("lists.range(0)", []),
    ("lists.range(-1)", []),  # cel-go's genRange: no error, an empty list
    ("[1, 2, 3].reverse()", [3, 2, 1]),
    ("[1, 2, 2, 1.0, 'a', 'a'].distinct()", [1, 2, "a"]),
    ("self.items.sort().reverse().slice(0, 2)", [3, 2]),
])
def test_ext_lists_results(source: str, expected: Any) -> None:
    assert ev(source, {"items": [2, 3, 1]}) == expected


@pytest.mark.parametrize(("source", "message"), [
    ("[1, 2].slice(-1, 1)", "cannot slice(-1, 1), negative indexes not supported"),
    ("[1, 2].slice(2, 1)", "cannot slice(2, 1), start index must be less than or equal to end index"),
    ("[1, 2].slice(0, 3)", "cannot slice(0, 3), list is length 2"),
    ("[1, [2]].flatten(-1)", "level must be non-negative"),
    ("self.lists.sort()", "list elements must be comparable"),
    ("self.mixed.sort()", "list elements must have the same type"),
])
def test_ext_lists_errors(source: str, message: str) -> None:
    with pytest.raises(cel.EvalError) as err:
        ev(source, {"mixed": [1, "a"], "lists": [[1], [2]]})
    assert str(err.value) == message


def test_sort_of_lists_does_not_compile() -> None:
    """sort's overloads are typed (cel-go's comparable types): a list of lists is refused when
    the rule is compiled."""
    with pytest.raises(cel.CompileError, match=r"^ERROR: <input>:1:16: found no matching overload for 'sort'"):
        ENV.compile("[[1], [2]].sort()")


LIST = {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 5}}
INTS = {"type": "array", "maxItems": 10, "items": {"type": "integer"}}


@pytest.mark.parametrize(("source", "schema", "expected"), [
    # estimateAllocatingListCall: result size x factor + 1 (call) + 10 (list creation)
    ("self.sort().size() > 0", LIST, (14, 224)),  # n^2 x 2.1 for strings
    ("self.sort().size() > 0", INTS, (14, 214)),  # n^2 x 2
    ("self.distinct().size() > 0", LIST, (14, 214)),
    ("self.reverse().size() > 1", LIST, (14, 24)),
    ("self.slice(1, 3).size() == 2", LIST, (16, 16)),
    ("lists.range(5).size() == 5", LIST, (18, 18)),
    ("[[1], [2]].flatten().size() == 2", LIST, (45, 45)),
])
def test_ext_lists_costs(source: str, schema: dict[str, Any], expected: tuple[int, int]) -> None:
    estimate = cost.estimate(ENV.compile(source).serialized(), cost.decl_type(schema, False))
    assert (estimate.min, estimate.max) == expected


def _crd(rule: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"v": {"type": "string", "maxLength": 64,
                                                     "x-kubernetes-validations": [{"rule": rule}]}}}
    return {"spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": schema}}]}}


def test_semver_follows_the_compatibility_version() -> None:
    """kube-apiserver compiles a new rule for its minimum compatibility version (the emulated one
    minus one): with --emulated-version 1.33 (compatibility 1.32) semver is undeclared, from 1.34
    it is there; a rule the old CRD already had compiles with every library."""
    assert len(functions(32)) < len(functions(33)) < len(functions(34)) < len(functions(37)) == len(FUNCTIONS)
    strategy = CRDStrategy()
    rule = "semver(self).major() >= 1"
    errors = strategy.validate_compatibility(_crd(rule), None, 33)
    assert [(e.field, e.detail.splitlines()[0]) for e in errors] == [(
        "spec.validation.openAPIV3Schema.properties[v].x-kubernetes-validations[0].rule",
        "compilation failed: ERROR: <input>:1:7: undeclared reference to 'semver' (in container '')")]
    assert strategy.validate_compatibility(_crd(rule), None, 34) == []
    assert strategy.validate_compatibility(_crd(rule), _crd(rule), 33) == []
    assert strategy.validate_compatibility(_crd("self.size() > 1"), None, 33) == []


def test_ext_lists_follow_the_compatibility_version() -> None:
    """ext lists v3 is in kube's base environment from 1.34: refused for a new rule under
    --emulated-version 1.34 (compatibility 1.33), accepted under 1.35."""
    strategy = CRDStrategy()
    rule = "self.split(',').sort().size() > 0"
    errors = strategy.validate_compatibility(_crd(rule), None, 34)
    assert [e.detail.splitlines()[0] for e in errors] == [
        "compilation failed: ERROR: <input>:1:21: undeclared reference to 'sort' (in container '')"]
    assert strategy.validate_compatibility(_crd(rule), None, 35) == []
    assert strategy.validate_compatibility(_crd("lists.range(2).size() == 2"), None, 34) != []
