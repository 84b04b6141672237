"""Warnings as kube-apiserver sends them, and Go's quoting of client-supplied text.

- ``go_quote(text)`` is Go's ``strconv.Quote`` (``%q``): what kube-apiserver's messages use for
  names that come from the client (``unknown field "spec.a\\x01b"``), so that control characters
  in a field name never reach a header raw.
- ``header_value(warnings)`` is the ``Warning`` header of a response, after the apiserver's
  warning recorder (k8s.io/apiserver/pkg/endpoints/filters/warning.go) and
  ``net.NewWarningHeader`` (k8s.io/apimachinery/pkg/util/net/http.go): empty and repeated texts
  are dropped, a text with a control character (``unicode.IsControl``) or that is not valid
  UTF-8 is dropped (the recorder refuses it), and ``"`` and ``\\`` are backslash-escaped inside
  the quoted text. Each warning is ``299 - "<text>"``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

__all__ = ["MAX_WARNINGS", "go_quote", "header_value"]

MAX_WARNINGS = 20  # the most a response carries (the rest are dropped)

_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
               '"': '\\"', "\\": "\\\\"}


def _go_printable(char: str) -> bool:
    """Go's ``unicode.IsPrint``: letters, marks, numbers, punctuation, symbols and ASCII space."""
    return char == " " or unicodedata.category(char)[0] in "LMNPS"


def go_quote(text: str) -> str:
    """``text`` as Go's ``strconv.Quote`` writes it. A surrogate-escaped byte (U+DC80..U+DCFF: a
    byte of a header or path that was not UTF-8) is ``\\xNN``, as Go quotes invalid UTF-8; any
    other lone surrogate (which Go's JSON decoder would have turned into U+FFFD) is U+FFFD."""
    out = ['"']
    for char in text:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\ufffd")
        elif char in _GO_ESCAPES:
            out.append(_GO_ESCAPES[char])
        elif _go_printable(char):
            out.append(char)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def _acceptable(text: str) -> bool:
    """Whether ``NewWarningHeader`` accepts ``text``: valid UTF-8 without control characters."""
    if not text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates
        return False
    return not any(unicodedata.category(char) == "Cc" for char in text)


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def header_value(warnings: Iterable[str]) -> str:
    """The ``Warning`` header for ``warnings`` ("" when none is left: send no header)."""
    seen: list[str] = []
    for text in warnings:
        if _acceptable(text) and text not in seen:
            seen.append(text)
            if len(seen) == MAX_WARNINGS:
                break
    return ", ".join("299 - " + _quoted(text) for text in seen)
