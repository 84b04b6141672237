"""The CEL engine, the Kubernetes libraries and the x-kubernetes-validations error formats."""

from __future__ import annotations

from typing import Any

import pytest

from samplecontroller.apiserver import cel
from samplecontroller.apiserver.cel import engine, formats, validator
from samplecontroller.apiserver.cel.library import FUNCTIONS, parse_quantity
from samplecontroller.apiserver.cel.values import escape, to_cel

ENV = cel.Env({"self": engine.DYN}, FUNCTIONS + formats.FUNCTIONS, formats.rewrite)


def ev(source: str, self: Any = None) -> Any:
    return ENV.compile(source).evaluate({"self": self})


@pytest.mark.parametrize(("source", "expected"), [
    # macros and the standard library
    ("[1, 2, 3].all(x, x > 0) && [1, 2].exists(x, x == 2) && [1, 2].exists_one(x, x == 1)", True),
    ("[1, 2, 3].map(x, x * 2).filter(x, x > 2)", [4, 6]),
    ("has(self.a) && !has(self.b)", True),
    ("self.?b.orValue('default')", "default"),
    ("self[?'a'].hasValue()", True),
    ("timestamp('2024-01-01T00:00:00Z') + duration('1h') > timestamp('2024-01-01T00:30:00Z')", True),
    ("duration('1h30m') == duration('90m')", True),
    ("uint(1) + 2u", 3),
    ("self.a < 1.5", True),  # cross-type numeric comparison (on in the Kubernetes base env)
    # strings extension
    ("'ABC'.lowerAscii() + 'x'.upperAscii()", "abcX"),
    ("'a,b'.split(',').join('-')", "a-b"),
    ("'%s-%d'.format(['a', 1])", "a-1"),
    ("' x '.trim() + 'hello'.substring(1, 3) + 'abc'.charAt(1)", "xelb"),
    ("'hello'.indexOf('l') + 'hello'.lastIndexOf('l')", 5),
    ("'a.b.c'.replace('.', '/')", "a/b/c"),
    # lists
    ("[1, 2, 2].isSorted() && !['b', 'a'].isSorted()", True),
    ("[1, 2, 3].sum() + [4, 9].min() + [4, 9].max()", 19),
    ("[1, 2, 1].indexOf(1) + [1, 2, 1].lastIndexOf(1) + ['a'].indexOf('b') + 'abc'.indexOf('c')", 3),
    # sets
    ("sets.contains([1, 2, 3], [3, 1]) && !sets.contains(self.l, [true]) && sets.contains(self.l, [1.0])", True),
    ("sets.equivalent([1, 2, 2], [2, 1]) && sets.intersects(['a'], ['b', 'a']) && !sets.intersects([1], [])", True),
    # regex
    ("'abc 123 def 456'.find('[0-9]+')", "123"),
    ("'abc 123 def 456'.findAll('[0-9]+')", ["123", "456"]),
    ("'a1b2c3'.findAll('[0-9]', 2)", ["1", "2"]),
    ("'abc'.matches('^[a-c]+$')", True),
    # quantity
    ("quantity('1Gi') == quantity('1024Mi')", True),
    ("quantity('1.5n') == quantity('2n') && isQuantity('.') && !isQuantity('1 Gi')", True),  # as ParseQuantity reads them
    ("quantity('1Gi').isGreaterThan(quantity('1G')) && quantity('500m').isLessThan(quantity('1'))", True),
    ("quantity('1.5').isInteger() || quantity('2k').asInteger() != 2000", False),
    ("quantity('500m').asApproximateFloat()", 0.5),
    ("quantity('1').add(quantity('500m')).compareTo(quantity('1500m'))", 0),
    ("quantity('3').sub(1).asInteger() + quantity('-1').sign()", 1),
    ("isQuantity('1Zi') || isQuantity('')", False),
    # URLs
    ("url('https://user@example.com:8443/a%20b?x=1&x=2').getHost()", "example.com:8443"),
    ("url('https://[::1]:80/').getHostname() + '|' + url('https://[::1]:80/').getPort()", "::1|80"),
    ("url('https://e.com/a%20b?x=1&x=2').getQuery()", {"x": ["1", "2"]}),
    ("url('https://e.com/p').getScheme() + url('https://e.com/p').getEscapedPath()", "https/p"),
    ("isURL('https://e.com') && isURL('/absolute/path') && !isURL('relative')", True),
    # IP and CIDR
    ("ip('10.0.0.1').family() == 4 && ip('::1').family() == 6 && ip('::1').isLoopback()", True),
    ("ip('0.0.0.0').isUnspecified() && ip('fe80::1').isLinkLocalUnicast() && ip('224.0.0.1').isLinkLocalMulticast()",
     True),
    ("ip('192.168.0.1').isGlobalUnicast() && !ip('127.0.0.1').isGlobalUnicast()", True),
    ("ip.isCanonical('2001:db8::1') && !ip.isCanonical('2001:db8::0')", True),
    ("isIP('1.2.3.4') && !isIP('1.2.3') && !isIP('::ffff:1.2.3.4') && !isIP('fe80::1%eth0')", True),
    ("cidr('10.0.0.0/8').containsIP('10.1.2.3') && cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))", True),
    ("cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && !cidr('10.0.0.0/16').containsCIDR(cidr('10.0.0.0/8'))", True),
    ("cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8') && cidr('10.1.2.3/8').ip() == ip('10.1.2.3')", True),
    ("cidr('fd00::/64').prefixLength()", 64),
    ("string(ip('2001:db8::0')) + ' ' + string(cidr('10.0.0.0/8')) + ' ' + string(1)", "2001:db8:: 10.0.0.0/8 1"),
    ("isCIDR('10.0.0.0/8') && !isCIDR('10.0.0.0')", True),
    # format
    ("format.dns1123Label().validate('my-name').hasValue()", False),
    ("format.dns1123Label().validate('My_Name').value().size()", 1),
    ("!format.qualifiedName().validate('example.com/x').hasValue() && format.uuid().validate('x').hasValue()", True),
])
def test_engine_and_libraries(source: str, expected: Any) -> None:
    assert ev(source, {"a": 1, "l": [1]}) == expected


@pytest.mark.parametrize(("source", "message"), [
    ("self.missing == 1", "no such key: missing"),
    ("[1][3] == 1", "index out of bounds: 3"),
    ("9223372036854775807 + 1 > 0", "integer overflow"),
    ("1 / 0 == 1", "division by zero"),
    ("quantity('x').sign() == 1", "quantities must match the regular expression"),
    ("ip('1.2.3').family() == 4", 'IP Address "1.2.3" parse error during conversion from string'),
    ("[].min() == 1", "min(list) called on empty list"),
])
def test_evaluation_errors_read_as_cel_go(source: str, message: str) -> None:
    with pytest.raises(cel.EvalError) as raised:
        ev(source, {})
    assert str(raised.value).startswith(message)


def test_compile_errors_read_as_cel_go() -> None:
    with pytest.raises(cel.CompileError) as raised:
        ENV.compile("self.x ==")
    assert raised.value.detail.startswith("ERROR: <input>:1:10: Syntax error: mismatched input '<EOF>' expecting")
    assert raised.value.detail.endswith(" | self.x ==\n | .........^")
    with pytest.raises(cel.CompileError, match=r"found no matching overload for '_==_' applied to '\(int, uint\)'"):
        ENV.compile("1 == 1u")
    with pytest.raises(cel.CompileError, match="undeclared reference to 'nope'"):
        ENV.compile("nope(self)")


def test_programs_are_cached() -> None:
    assert ENV.compile("self == 1") is ENV.compile("self == 1")


def test_format_rewrite_keeps_strings_and_nesting() -> None:
    assert formats.rewrite("'format.dns1123Label().validate(x)'") == "'format.dns1123Label().validate(x)'"
    out = formats.rewrite("format.dns1123Label().validate(self.a + ')').hasValue()")
    assert "__formatValidate('dns1123Label', (self.a + ')'))" in out and out.endswith(".hasValue()")


def test_quantities() -> None:
    assert parse_quantity("1Gi") == 2**30
    assert parse_quantity("1.5k") == 1500
    assert parse_quantity("100m") * 10 == 1
    assert parse_quantity("1e3") == 1000
    for bad in ("", "1.2.3", "1 Gi", "1iB", "1e5000"):
        with pytest.raises(ValueError):
            parse_quantity(bad)
    # resource.ParseQuantity's scanner: no digits is 0, rounding up to the nano scale
    assert parse_quantity("Gi") == 0 and parse_quantity(".") == 0
    assert parse_quantity("0.1n") == parse_quantity("1n") == parse_quantity("1e-9")


def test_escaping_and_values() -> None:
    assert [escape(n) for n in ("a", "namespace", "x-y", "a.b/c", "a__b", "1x", "a b")] == [
        "a", "__namespace__", "x__dash__y", "a__dot__b__slash__c", "a__underscores__b", None, None]
    sch = {"type": "object", "properties": {
        "metadata": {"type": "object"}, "n": {"type": "number"}, "x-y": {"type": "string"},
        "m": {"type": "object", "additionalProperties": {"type": "number"}}}}
    obj = {"apiVersion": "v", "kind": "K", "metadata": {"name": "a", "labels": {"a": "b"}},
           "n": 1, "x-y": "z", "m": {"x-y": 2}, "unknown": 1}
    assert to_cel(obj, sch, resource_root=True) == {
        "apiVersion": "v", "kind": "K", "metadata": {"name": "a"}, "n": 1.0, "x__dash__y": "z", "m": {"x-y": 2.0}}


def rules_schema(**rule: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "a": {"type": "integer"}, "b": {"type": "integer"}, "s": {"type": "object", "additionalProperties": {"type": "string"}}},
        "x-kubernetes-validations": [rule]}}}


@pytest.mark.parametrize(("rule", "expected"), [
    ({"rule": "self.a < self.b"}, 'spec: Invalid value: "object": failed rule: self.a < self.b'),
    ({"rule": "self.a < self.b", "message": " a must be below b "}, 'spec: Invalid value: "object": a must be below b'),
    ({"rule": "self.a < self.b", "messageExpression": "'a is ' + string(self.a)"}, 'spec: Invalid value: "object": a is 2'),
    ({"rule": "self.a < self.b", "messageExpression": "'two\\nlines'", "message": "fallback"},
     'spec: Invalid value: "object": fallback'),
    ({"rule": "self.a < self.b", "reason": "FieldValueForbidden", "message": "no"}, "spec: Forbidden: no"),
    ({"rule": "self.a < self.b", "reason": "FieldValueRequired", "message": "need"}, "spec: Required value: need"),
    ({"rule": "self.a < self.b", "reason": "FieldValueDuplicate"}, 'spec: Duplicate value: "object"'),
    ({"rule": "self.a < self.b", "fieldPath": ".a"}, 'spec.a: Invalid value: "object": failed rule: self.a < self.b'),
    ({"rule": "self.a < self.b", "fieldPath": ".s['k.1']"},
     'spec.s[k.1]: Invalid value: "object": failed rule: self.a < self.b'),
    ({"rule": "self.s.size() == 1"}, 'spec: Invalid value: "object": no such key: s evaluating rule: self.s.size() == 1'),
])
def test_rule_error_formats(rule: dict[str, Any], expected: str) -> None:
    errors, warnings = validator.validate({"spec": {"a": 2, "b": 1}}, None, rules_schema(**rule))
    assert [str(e) for e in errors] == [expected] and warnings == []


def test_transition_rules_need_an_old_value() -> None:
    sch = rules_schema(rule="self.a == oldSelf.a", message="immutable")
    assert validator.validate({"spec": {"a": 2}}, None, sch) == ([], [])
    errors, _ = validator.validate({"spec": {"a": 2}}, {"spec": {"a": 1}}, sch)
    assert [str(e) for e in errors] == ['spec: Invalid value: "object": immutable']
    optional = rules_schema(rule="oldSelf.hasValue() ? oldSelf.value().a == self.a : self.a == 0", optionalOldSelf=True)
    assert [str(e) for e in validator.validate({"spec": {"a": 2}}, None, optional)[0]] == [
        'spec: Invalid value: "object": failed rule: oldSelf.hasValue() ? oldSelf.value().a == self.a : self.a == 0']
    assert validator.validate({"spec": {"a": 2}}, {"spec": {"a": 2}}, optional) == ([], [])


def test_crd_time_errors() -> None:
    sch = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "a": {"type": "string"},
        "l": {"type": "array", "maxItems": 8, "items": {"type": "string", "maxLength": 16,
                                                        "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}},
        "x-kubernetes-validations": [
            {"rule": "self.a =="}, {"rule": "1"}, {"rule": "self.a == 'x'", "optionalOldSelf": True},
            {"rule": "true", "messageExpression": "1"}]}}}
    errors = cel.schema_errors(sch, "spec.validation.openAPIV3Schema")
    base = "spec.validation.openAPIV3Schema.properties[spec]"
    rules = f"{base}.x-kubernetes-validations"
    assert [(e.field, e.type) for e in errors] == [
        (f"{base}.properties[l].items.x-kubernetes-validations[0].rule", "FieldValueInvalid"),
        (f"{rules}[0].rule", "FieldValueInvalid"), (f"{rules}[1].rule", "FieldValueInvalid"),
        (f"{rules}[2].optionalOldSelf", "FieldValueInvalid"), (f"{rules}[3].messageExpression", "FieldValueInvalid")]
    assert str(errors[0]) == (f'{base}.properties[l].items.x-kubernetes-validations[0].rule: Invalid value: '
                              '"self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema '
                              f"within {base}.properties[l]")
    assert str(errors[1]).startswith(
        f'{rules}[0].rule: Invalid value: apiextensions.ValidationRule{{Rule:"self.a ==", Message:"", '
        'MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", '
        "OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:10: Syntax error:")
    assert errors[2].detail == "cel expression must evaluate to a bool"
    assert str(errors[3]) == f"{rules}[2].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule"
    assert errors[4].detail == "must evaluate to a string"


def test_rule_checks_come_first_and_skip_compilation() -> None:
    sch = {"type": "object", "properties": {"a": {"type": "string"}}, "x-kubernetes-validations": [
        {"rule": ""}, {"rule": "self.a ==", "fieldPath": ".b"}, {"rule": "self.a\n== 'x'"},
        {"rule": "true", "reason": "Nope", "message": "two\nlines"}]}
    assert [str(e) for e in cel.schema_errors(sch, "s")] == [
        "s.x-kubernetes-validations[0].rule: Required value: rule is not specified",
        's.x-kubernetes-validations[1].fieldPath: Invalid value: ".b": fieldPath must be a valid path',
        "s.x-kubernetes-validations[2].message: Required value: message must be specified if rule contains line breaks",
        's.x-kubernetes-validations[3].message: Invalid value: "two\\nlines": message must not contain line breaks',
        's.x-kubernetes-validations[3].reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", '
        '"FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"']


def test_undefined_fields_fail_to_compile_as_in_cel_go() -> None:
    sch = {"type": "object", "properties": {
        "metadata": {"type": "object"},
        "spec": {"type": "object", "properties": {
            "a": {"type": "string"}, "x-y": {"type": "string"},
            "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"v": {"type": "string"}}}},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
            "x-kubernetes-validations": [
                {"rule": "self.a == 'self.nope' && self.x__dash__y.startsWith('b') && self.m.k.v == '' && self.free.any"},
                {"rule": "has(self.nope) ||\n  self.?a.orValue('') == oldSelf.other", "message": "m"}]}},
        "x-kubernetes-validations": [{"rule": "self.metadata.name == 'x' && self.metadata.namespace == 'y'"}]}
    errors = cel.schema_errors(sch, "s")
    assert [(e.field, e.detail) for e in errors] == [
        ("s.properties[spec].x-kubernetes-validations[1].rule",
         "compilation failed: ERROR: <input>:1:9: undefined field 'nope'\n | has(self.nope) ||\n | ........^\n"
         "ERROR: <input>:2:33: undefined field 'other'\n |   self.?a.orValue('') == oldSelf.other\n"
         " | " + "." * 32 + "^"),
        ("s.x-kubernetes-validations[0].rule",
         "compilation failed: ERROR: <input>:1:43: undefined field 'namespace'\n"
         " | self.metadata.name == 'x' && self.metadata.namespace == 'y'\n"
         " | " + "." * 42 + "^")]


def test_date_time_and_duration_strings_are_timestamps_and_durations_in_rules() -> None:
    sch = {"type": "object", "properties": {
        "t": {"type": "string", "format": "date-time", "x-kubernetes-validations": [
            {"rule": "self > timestamp('2000-01-01T00:00:00Z')", "message": "too old"}]},
        "d": {"type": "string", "format": "duration"},
        "end": {"type": "string", "format": "date-time"}},
        "x-kubernetes-validations": [
            {"rule": "!has(self.end) || self.t + duration(self.d) <= self.end", "messageExpression":
             "'ends ' + string(self.end - self.t) + ' after the start'"},
            {"rule": "self.t.getFullYear() >= 2020"}]}
    ok = {"t": "2024-01-01T00:00:00Z", "d": "1h", "end": "2024-01-01T02:00:00Z"}
    assert validator.validate(ok, None, sch) == ([], [])
    bad = {"t": "1999-01-01T00:00:00Z", "d": "1h", "end": "1999-01-01T00:30:00Z"}
    assert [str(e) for e in validator.validate(bad, None, sch)[0]] == [
        '<nil>: Invalid value: "object": ends 1800s after the start',
        '<nil>: Invalid value: "object": failed rule: self.t.getFullYear() >= 2020',
        't: Invalid value: "string": too old']
    wrong = {"type": "object", "properties": {"t": {"type": "string", "format": "date-time"}},
             "x-kubernetes-validations": [{"rule": "self.t > 'x'"}]}
    errors = cel.schema_errors(wrong, "s")
    assert len(errors) == 1 and "found no matching overload for '_>_' applied to '(google.protobuf.Timestamp, string)'" \
        in errors[0].detail, errors


def test_invalid_regex_duration_and_timestamp_literals_fail_to_compile() -> None:
    """cel-go's literal validators, in Kubernetes' base environment since 1.29."""
    sch = {"type": "object", "properties": {"s": {"type": "string"}}, "x-kubernetes-validations": [
        {"rule": "self.s.matches('(?=lookahead)')"}, {"rule": "self.s.matches('^[a-z]+$') && duration('5m') > duration('1s')"},
        {"rule": "timestamp('yesterday') < timestamp('2024-01-01T00:00:00Z')"}]}
    errors = cel.schema_errors(sch, "s")
    assert [(e.field, e.detail) for e in errors] == [
        ("s.x-kubernetes-validations[0].rule", "compilation failed: ERROR: <input>:1:16: invalid matches argument\n"
                                               " | self.s.matches('(?=lookahead)')\n | " + "." * 15 + "^"),
        ("s.x-kubernetes-validations[2].rule", "compilation failed: ERROR: <input>:1:11: invalid timestamp argument\n"
                                               " | timestamp('yesterday') < timestamp('2024-01-01T00:00:00Z')\n"
                                               " | " + "." * 10 + "^")]
    from samplecontroller.apiserver import admission_policy
    assert admission_policy.compile_error("duration('1y') > duration('1s')").startswith(
        "compilation failed: ERROR: <input>:1:10: invalid duration argument")
