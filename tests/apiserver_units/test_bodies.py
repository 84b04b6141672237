"""YAML request bodies to JSON values (bodies.load_yaml) and the nesting bound (check_depth)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from samplecontroller.apimachinery.k8syaml import STR, resolve_plain
from samplecontroller.apiserver.bodies import (
    MAX_DEPTH,
    BodyError,
    check_depth,
    decode_deep,
    depth_of,
    encode,
    encode_deep,
    equal,
    load_yaml,
)

json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63), st.text(max_size=10),
              st.floats(allow_nan=False, allow_infinity=False)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=30)


class GoYAMLDumper(yaml.SafeDumper):
    """PyYAML's emitter quoting, besides its own YAML 1.1 words, every string go-yaml v2 reads as
    another type (``N``, ``0o17``, ``+.5``), as sigs.k8s.io/yaml's JSONToYAML does."""


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    style = "'" if resolve_plain(data)[0] != STR else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


GoYAMLDumper.add_representer(str, _represent_str)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_yaml_of_json_values_round_trips(value: Any) -> None:
    for text in (yaml.dump(value, Dumper=GoYAMLDumper),
                 yaml.dump(value, Dumper=GoYAMLDumper, default_flow_style=True)):
        assert load_yaml(text.encode()) == value


def chain(levels: int, width: int) -> bytes:
    """A document whose level ``i`` holds ``width`` aliases of level ``i - 1``."""
    lines = [b"l0: &l0 [" + b",".join([b"x"] * width) + b"]"]
    for i in range(1, levels):
        lines.append(b"l%d: &l%d [%s]" % (i, i, b",".join([b"*l%d" % (i - 1)] * width)))
    return b"\n".join(lines) + b"\n"


def test_alias_expansion_within_go_yamls_ratio_is_allowed() -> None:
    doc = load_yaml(chain(3, 9))  # 9 + 81 + 729 leaves from 30-odd written nodes: under 99% aliased
    assert len(doc["l2"]) == 9 and doc["l2"][0] == doc["l1"] == [["x"] * 9] * 9
    doc["l2"][0][0][0] = "changed"
    assert doc["l1"][0][0] == "x", "aliases are expanded as copies"


def test_alias_expansion_beyond_go_yamls_ratio_is_rejected() -> None:
    with pytest.raises(BodyError, match="document contains excessive aliasing"):
        load_yaml(chain(5, 9))


def nested_lists(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


# The message names the depth problem; its wording belongs to whichever layer caught it (our own
# bound, or PyYAML's own nesting limit since 6.0.4), so only "depth" is asserted.
DEPTH_MESSAGE = r"(?i)\bdepth\b"


def test_depth_bound_is_the_same_for_json_values_and_yaml() -> None:
    """Go's 10,000 levels (encoding/json's maxNestingDepth, go-yaml's max_flow_level), past
    libyaml's own bound of 1,000 and msgspec's recursion; one more is a 400's BodyError (YAML
    this deep: tests/apiserver/test_deep_nesting.py)."""
    ok = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    too_deep = b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1)
    check_depth(nested_lists(MAX_DEPTH))
    assert equal(load_yaml(b"[" * 1500 + b"]" * 1500), nested_lists(1500))  # past libyaml's 1,000
    assert equal(decode_deep(ok), nested_lists(MAX_DEPTH))
    with pytest.raises(BodyError, match=DEPTH_MESSAGE):
        check_depth(nested_lists(MAX_DEPTH + 1))
    with pytest.raises(BodyError, match=DEPTH_MESSAGE):
        decode_deep(too_deep)
    with pytest.raises(BodyError, match=DEPTH_MESSAGE):
        load_yaml(b"[" * 100_000)
    # block style: a body of at most 3 MiB indents at most ~2,400 levels
    block = b"x:\n" + b"".join(b" " * i + b"- \n" for i in range(2000))
    assert depth_of(load_yaml(block)) == 2001


def test_deep_json_decodes_and_encodes_as_msgspec_does() -> None:
    value = {"a": [1, -2.5e-7, "x\u00e9\n\"", {"b": None, "c": True, "d": []}, {}], "e": False, "": 0}
    raw = encode(value)
    assert decode_deep(raw) == value and encode_deep(value) == raw
    assert decode_deep(b' \n{ "a" : [ 1 , 2 ] }\t') == {"a": [1, 2]}
    deep = nested_lists(MAX_DEPTH)
    assert encode(deep) == b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    for bad, message in [(b"[1,]", "invalid character ']' looking for beginning of value"),
                         (b'{"a" 1}', "invalid character '1' after object key"),
                         (b"[1 2]", "invalid character '2' after array element"),
                         (b"{}x", "invalid character 'x' after top-level value"),
                         (b"[", "unexpected end of JSON input"),
                         (b'["\\q"]', "invalid escape character")]:
        with pytest.raises(BodyError, match=re.escape(message)):
            decode_deep(bad)
    assert decode_deep(b'["\xff", "\\ud800"]') == ["\ufffd", "\ufffd"]  # as Go's encoding/json


@pytest.mark.parametrize("text, expected", [
    (b"a: !!merge x\nb: [<<]\n", {"a": "x", "b": ["<<"]}),
    (b"base: &b {k: 1, j: 2}\nm: {<<: *b, k: 3}\n", {"base": {"k": 1, "j": 2}, "m": {"k": 3, "j": 2}}),
    (b"{1: a, 1.5: b, true: c, false: d}", {"1": "a", "1.5": "b", "true": "c", "false": "d"}),
    (b"a: 2001-12-14t21:59:43.10-05:00\nb: !custom x\nc: !!binary aGk=\n",
     {"a": "2001-12-14t21:59:43.10-05:00", "b": "x", "c": "hi"}),
    (b"", None),
])
def test_conversions_follow_sigs_k8s_io_yaml(text: bytes, expected: Any) -> None:
    assert load_yaml(text) == expected


@pytest.mark.parametrize("text", [b"a: !!bool maybe", b'a: !!int ""', b"a: !!set {x}", b"? {a: 1}\n: v\n",
                                  b"<<: 1\n", b"a: -.inf", b"a: \xff\x80"])
def test_values_without_a_json_form_are_body_errors(text: bytes) -> None:
    with pytest.raises(BodyError):
        load_yaml(text)


def test_float_keys_are_spelled_as_the_client_side_loader_spells_them() -> None:
    """sigs.k8s.io/yaml turns a float key into strconv.FormatFloat(f, 'g', -1, 32): the server's
    body conversion and the client-side loader (k8syaml) agree, and Go's 32-bit form is used."""
    from samplecontroller.apimachinery import k8syaml

    text = b"{3.14159265358979: a, 1.0: b, 0.1: c}"
    assert load_yaml(text) == k8syaml.load(text) == {"3.1415927": "a", "1": "b", "0.1": "c"}
