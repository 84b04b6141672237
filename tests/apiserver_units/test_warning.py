"""``warning``: Go's %q quoting and the Warning header as kube-apiserver's recorder writes it."""

from __future__ import annotations

import pytest

from samplecontroller.apiserver.warning import MAX_WARNINGS, go_quote, header_value


@pytest.mark.parametrize(("text", "quoted"), [
    ("spec.bogus", '"spec.bogus"'),
    ("a\x01b", '"a\\x01b"'),
    ("\x00\x7f", '"\\x00\\x7f"'),
    ("\a\b\f\n\r\t\v", '"\\a\\b\\f\\n\\r\\t\\v"'),
    ('say "hi" \\ there', '"say \\"hi\\" \\\\ there"'),
    ("c1\x85", '"c1\\u0085"'),
    ("nbsp\u00a0", '"nbsp\\u00a0"'),
    ("\U000e0001", '"\\U000e0001"'),
    ("é😀", '"é😀"'),
    ("lone\ud800", '"lone\ufffd"'),
])
def test_go_quote(text: str, quoted: str) -> None:
    assert go_quote(text) == quoted


def test_header_escapes_quotes_and_backslashes() -> None:
    assert header_value(['unknown field "spec.a\\x01b"']) == '299 - "unknown field \\"spec.a\\\\x01b\\""'


def test_header_drops_what_the_recorder_refuses_and_repeats() -> None:
    assert header_value(["", "a\x01b", "x\ny", "tab\t", "c1\x85", "lone\udc00", "ok", "ok"]) == '299 - "ok"'
    assert header_value([]) == ""


def test_header_keeps_at_most_max_warnings() -> None:
    value = header_value([f"w{i}" for i in range(MAX_WARNINGS + 5)])
    assert value.count("299 - ") == MAX_WARNINGS
