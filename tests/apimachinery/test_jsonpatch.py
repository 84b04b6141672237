"""JSON patch (RFC 6902): the RFC's examples, errors, and round-trip properties."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samplecontroller.apimachinery.jsonpatch import PatchError, apply_patch, parse_pointer

CASES: list[tuple[str, Any, list[dict[str, Any]], Any]] = [
    ("add object member", {"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux"}], {"foo": "bar", "baz": "qux"}),
    ("add array element", {"foo": ["bar", "baz"]}, [{"op": "add", "path": "/foo/1", "value": "qux"}], {"foo": ["bar", "qux", "baz"]}),
    ("append with -", {"foo": [1]}, [{"op": "add", "path": "/foo/-", "value": 2}], {"foo": [1, 2]}),
    ("remove member", {"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}], {"foo": "bar"}),
    ("remove element", {"foo": ["bar", "qux", "baz"]}, [{"op": "remove", "path": "/foo/1"}], {"foo": ["bar", "baz"]}),
    ("replace", {"baz": "qux", "foo": "bar"}, [{"op": "replace", "path": "/baz", "value": "boo"}], {"baz": "boo", "foo": "bar"}),
    ("move", {"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
     [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
     {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}}),
    ("move element", {"foo": ["all", "grass", "cows", "eat"]}, [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
     {"foo": ["all", "cows", "eat", "grass"]}),
    ("copy", {"a": {"b": 1}}, [{"op": "copy", "from": "/a", "path": "/c"}], {"a": {"b": 1}, "c": {"b": 1}}),
    ("test passes", {"baz": "qux", "foo": ["a", 2, "c"]},
     [{"op": "test", "path": "/baz", "value": "qux"}, {"op": "test", "path": "/foo/1", "value": 2}],
     {"baz": "qux", "foo": ["a", 2, "c"]}),
    ("escapes ~0 ~1", {"a/b": 1, "m~n": 2}, [{"op": "replace", "path": "/a~1b", "value": 3}, {"op": "remove", "path": "/m~0n"}], {"a/b": 3}),
    ("replace whole document", {"a": 1}, [{"op": "replace", "path": "", "value": {"b": 2}}], {"b": 2}),
    ("add nested label", {"metadata": {"labels": {}}}, [{"op": "add", "path": "/metadata/labels/app", "value": "x"}],
     {"metadata": {"labels": {"app": "x"}}}),
]


@pytest.mark.parametrize(("name", "doc", "ops", "expected"), CASES, ids=[c[0] for c in CASES])
def test_apply(name: str, doc: Any, ops: list[dict[str, Any]], expected: Any) -> None:
    before = copy.deepcopy(doc)
    assert apply_patch(doc, ops) == expected
    assert doc == before, "the input must not be mutated"


ERRORS: list[tuple[str, Any, Any]] = [
    ("not a list", {}, {"op": "add"}),
    ("unknown op", {}, [{"op": "frobnicate", "path": "/a"}]),
    ("missing path", {}, [{"op": "add", "value": 1}]),
    ("missing value", {}, [{"op": "add", "path": "/a"}]),
    ("missing parent", {}, [{"op": "add", "path": "/a/b", "value": 1}]),
    ("remove missing", {"a": 1}, [{"op": "remove", "path": "/b"}]),
    ("replace missing", {"a": 1}, [{"op": "replace", "path": "/b", "value": 1}]),
    ("index out of range", {"a": [1]}, [{"op": "add", "path": "/a/5", "value": 1}]),
    ("leading zero index", {"a": [1, 2]}, [{"op": "remove", "path": "/a/01"}]),
    ("failed test", {"a": 1}, [{"op": "test", "path": "/a", "value": 2}]),
    ("bool is not int", {"a": 1}, [{"op": "test", "path": "/a", "value": True}]),
    ("move into child", {"a": {"b": 1}}, [{"op": "move", "from": "/a", "path": "/a/b/c"}]),
    ("bad pointer", {"a": 1}, [{"op": "remove", "path": "a"}]),
    ("op not an object", {"a": 1}, ["remove"]),
    ("traverse scalar", {"a": 1}, [{"op": "add", "path": "/a/b", "value": 1}]),
]


@pytest.mark.parametrize(("name", "doc", "ops"), ERRORS, ids=[c[0] for c in ERRORS])
def test_errors_are_patch_errors(name: str, doc: Any, ops: Any) -> None:
    with pytest.raises(PatchError):
        apply_patch(doc, ops)


def test_patch_error_is_value_error() -> None:
    assert issubclass(PatchError, ValueError)


def test_parse_pointer() -> None:
    assert parse_pointer("") == []
    assert parse_pointer("/a~1b/~01") == ["a/b", "~1"]


_keys = st.text(alphabet="ab/~c", min_size=1, max_size=3)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_keys, children, max_size=3),
    max_leaves=8,
)


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(_keys, _json, max_size=4), _keys, _json)
def test_add_then_remove_round_trips(doc: dict[str, Any], key: str, value: Any) -> None:
    path = "/" + _escape(key)
    added = apply_patch(doc, [{"op": "add", "path": path, "value": value}])
    assert added[key] == value
    if key in doc:
        back = apply_patch(added, [{"op": "replace", "path": path, "value": doc[key]}])
    else:
        back = apply_patch(added, [{"op": "remove", "path": path}])
    assert back == doc


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(_keys, _json, min_size=1, max_size=4))
def test_test_op_accepts_current_values(doc: dict[str, Any]) -> None:
    ops = [{"op": "test", "path": "/" + _escape(k), "value": v} for k, v in doc.items()]
    assert apply_patch(doc, ops) == doc
