"""JSON merge patch (RFC 7386): the RFC's appendix table and the patch algebra."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samplecontroller.apimachinery.mergepatch import PatchError, apply_merge_patch, create_merge_patch

RFC_CASES: list[tuple[Any, Any, Any]] = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("doc", "patch", "expected"), RFC_CASES)
def test_rfc7386_appendix(doc: Any, patch: Any, expected: Any) -> None:
    before = copy.deepcopy(doc)
    assert apply_merge_patch(doc, patch) == expected
    assert doc == before


def test_create_merge_patch_minimal() -> None:
    original = {"spec": {"replicas": 1, "name": "x"}, "metadata": {"labels": {"a": "1"}}}
    modified = {"spec": {"replicas": 2, "name": "x"}, "metadata": {"labels": {}}}
    assert create_merge_patch(original, modified) == {"spec": {"replicas": 2}, "metadata": {"labels": {"a": None}}}
    assert create_merge_patch(original, original) == {}


def test_create_merge_patch_rejects_non_objects() -> None:
    with pytest.raises(PatchError):
        create_merge_patch([], {})


_keys = st.sampled_from(["a", "b", "c", "spec", "x"])
_scalars = st.booleans() | st.integers() | st.text(max_size=3) | st.floats(allow_nan=False, allow_infinity=False)
_json = st.recursive(_scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(_keys, c, max_size=3), max_leaves=10)
_objects = st.dictionaries(_keys, _json, max_size=4)


@settings(max_examples=200, deadline=None)
@given(_objects, _objects)
def test_apply_of_created_patch_gives_target(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert apply_merge_patch(a, create_merge_patch(a, b)) == b


@settings(max_examples=100, deadline=None)
@given(_objects, _objects)
def test_patches_are_idempotent(a: dict[str, Any], patch: dict[str, Any]) -> None:
    once = apply_merge_patch(a, patch)
    assert apply_merge_patch(once, patch) == once
