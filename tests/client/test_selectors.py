"""Label and field selectors: grammar, matching semantics, canonical strings."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from samplecontroller.apimachinery import fields, labels

L = {"app": "web", "tier": "front", "version": "3"}


@pytest.mark.parametrize(("text", "expected"), [
    ("", True),
    ("app=web", True),
    ("app==web", True),
    ("app=db", False),
    ("app!=db", True),
    ("missing!=x", True),  # != matches an absent key
    ("app in (web,db)", True),
    ("app in (db)", False),
    ("missing in (x)", False),
    ("app notin (db)", True),
    ("missing notin (x)", True),
    ("app", True),
    ("missing", False),
    ("!missing", True),
    ("!app", False),
    ("version>2", True),
    ("version > 3", False),
    ("version<4", True),
    ("missing<4", False),
    ("app=web,tier in (front,back),!missing,version notin (1)", True),
    ("app=web,tier=back", False),
    ("  app = web , tier  ", True),
    ("app=", False),
    ("missing in ()", False),
])
def test_label_selector_matching(text: str, expected: bool) -> None:
    assert labels.parse(text).matches(L) is expected


def test_empty_value_selectors() -> None:
    assert labels.parse("a=").matches({"a": ""})
    assert labels.parse("a in ()").matches({"a": ""})
    assert labels.parse("a in ()").requirements[0].values == ("",)


@pytest.mark.parametrize("text", [
    "app=web,", "=web", "app=(x)", "app in x", "app in (x", "app notin", "!app=web", "app web",
    "a b=c", "app=web,,tier", "-bad=x", "app=" + "v" * 64, "k" * 64, "app>x", "app gt 2",
    "app=we b", "UPPER/prefix=x", "a/b/c=d",
])
def test_label_selector_syntax_errors_are_value_errors(text: str) -> None:
    with pytest.raises(ValueError, match="selector"):
        labels.parse(text)


def test_canonical_string_and_equality() -> None:
    sel = labels.parse("z=1, a in (y,x,x), !b, c, d notin (q), n>5")
    assert str(sel) == "a in (x,y),!b,c,d notin (q),n > 5,z=1"
    assert labels.parse(str(sel)) == sel
    assert hash(labels.parse(str(sel))) == hash(sel)
    assert labels.parse("a==b") == labels.parse("a=b")


def test_everything_nothing_and_sets() -> None:
    assert labels.everything().empty() and labels.everything().matches({})
    assert not labels.nothing().empty() and not labels.nothing().matches({"a": "b"})
    assert labels.nothing() != labels.everything()
    sel = labels.selector_from_set({"a": "b", "c": "d"})
    assert sel.matches({"a": "b", "c": "d", "e": "f"}) and not sel.matches({"a": "b"})
    assert str(sel) == "a=b,c=d"
    assert labels.selector_from_set({}).empty()


def test_selector_from_label_selector() -> None:
    ls = {"matchLabels": {"app": "web"},
          "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front", "back"]},
                               {"key": "gone", "operator": "DoesNotExist"},
                               {"key": "version", "operator": "Exists"},
                               {"key": "env", "operator": "NotIn", "values": ["prod"]}]}
    sel = labels.selector_from_label_selector(ls)
    assert sel.matches(L) and not sel.matches({**L, "gone": "1"})
    assert labels.selector_from_label_selector({}).empty()
    assert not labels.selector_from_label_selector(None).matches(L)
    with pytest.raises(ValueError, match="needs at least one value"):
        labels.selector_from_label_selector({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]})
    with pytest.raises(ValueError, match="takes no values"):
        labels.selector_from_label_selector({"matchExpressions": [{"key": "a", "operator": "Exists",
                                                                   "values": ["x"]}]})
    with pytest.raises(ValueError, match="Sometimes"):
        labels.selector_from_label_selector({"matchExpressions": [{"key": "a", "operator": "Sometimes"}]})


def test_selector_from_label_selector_struct() -> None:
    import msgspec

    class Expr(msgspec.Struct, frozen=True):
        key: str
        operator: str
        values: tuple[str, ...] | msgspec.UnsetType = msgspec.UNSET

    class LS(msgspec.Struct, frozen=True):
        match_labels: dict[str, str] | msgspec.UnsetType = msgspec.UNSET
        match_expressions: tuple[Expr, ...] | msgspec.UnsetType = msgspec.UNSET

    sel = labels.selector_from_label_selector(LS(match_labels={"app": "web"},
                                                 match_expressions=(Expr("x", "DoesNotExist"),)))
    assert sel.matches(L) and not sel.matches({"app": "web", "x": ""})
    assert labels.selector_from_label_selector(LS()).empty()


_name = st.text(string.ascii_lowercase + string.digits, min_size=1, max_size=8)
_value = st.one_of(st.just(""), _name)


@st.composite
def _requirements(draw: st.DrawFn) -> labels.Requirement:
    key = draw(_name)
    op = draw(st.sampled_from(["=", "!=", "in", "notin", "exists", "!", "gt", "lt"]))
    if op in ("=", "!="):
        return labels.Requirement(key, op, (draw(_value),))
    if op in ("in", "notin"):
        return labels.Requirement(key, op, tuple(sorted(draw(st.sets(_name, min_size=1, max_size=3)))))
    if op in ("gt", "lt"):
        return labels.Requirement(key, op, (str(draw(st.integers(-99, 99))),))
    return labels.Requirement(key, op)


@given(st.lists(_requirements(), max_size=5),
       st.dictionaries(_name, st.one_of(_value, st.integers(-100, 100).map(str)), max_size=5))
def test_string_round_trip_preserves_meaning(reqs: list[labels.Requirement], lbls: dict[str, str]) -> None:
    sel = labels.Selector(reqs)
    again = labels.parse(str(sel))
    assert again == sel
    assert again.matches(lbls) == all(r.matches(lbls) for r in reqs)


# -- field selectors ---------------------------------------------------------------------------------


def _getter(values: dict[str, str]):  # type: ignore[no-untyped-def]
    return values.get


def test_field_selector_matching() -> None:
    obj = {"metadata.name": "a", "metadata.namespace": "ns"}
    assert fields.parse("metadata.name=a,metadata.namespace!=other").matches(obj.get)
    assert fields.parse("metadata.name==a").matches(obj.get)
    assert not fields.parse("metadata.name!=a").matches(obj.get)
    assert fields.parse("spec.nodeName=").matches(obj.get)  # absent compares as ""
    assert fields.parse("").empty() and fields.parse("  ").matches(obj.get)
    assert fields.parse("metadata.name=a,").matches_fields(obj)
    assert fields.parse("metadata.name=b,metadata.name=a").requires_exact_match("metadata.name") == "b"


def test_field_selector_splits_at_the_first_operator_and_escapes() -> None:
    sel = fields.parse(r"a=b!=c,d\=e=f\,g")
    assert [(r.field, r.operator, r.value) for r in sel.requirements] == [("a", "=", "b!=c"), ("d=e", "=", "f,g")]
    assert fields.parse(str(sel)) == sel
    assert str(fields.selector_from_set({"b": "2", "a": "1"})) == "a=1,b=2"


@pytest.mark.parametrize("text", ["metadata.name", "=a", "a=b,c", r"a=b\x"])
def test_field_selector_errors(text: str) -> None:
    with pytest.raises(ValueError, match="field selector"):
        fields.parse(text)


# field paths never contain "!" (Go's escaping cannot express a field ending in "!" either)
_field_alphabet = string.ascii_letters + string.digits + ".=,\\-_"


@given(st.dictionaries(st.text(_field_alphabet, min_size=1, max_size=6),
                       st.text(_field_alphabet + "! ", max_size=6).filter(lambda s: s.strip() == s), max_size=4))
def test_field_selector_round_trip(values: dict[str, str]) -> None:
    sel = fields.selector_from_set(values)
    assert fields.parse(str(sel)) == sel
    assert sel.matches_fields(values)
