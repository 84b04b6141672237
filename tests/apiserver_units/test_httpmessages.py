"""Request heads as the embedded API server's HTTP/1.1 server reads them (``httpmessages.parse_request_head``):
what Go's net/http accepts is read the same way, anything else is a ``BadRequest`` naming the bad part."""

from __future__ import annotations

import pytest

from samplecontroller.apiserver.httpmessages import BadRequest, parse_request_head


def _head(*lines: bytes, request_line: bytes = b"POST /api/v1/namespaces/d/events HTTP/1.1") -> bytes:
    return b"\r\n".join((request_line, *lines)) + b"\r\n\r\n"


def test_header_values_are_trimmed_and_names_case_insensitive() -> None:
    method, target, version, headers = parse_request_head(_head(
        b"Host: x", b"Content-Type:\t application/json \t", b"X-Empty:", b"x-multi: a", b"X-Multi: b",
        b"User-Agent: caf\xc3\xa9/1", b"X-Raw: \xff"))
    assert (method, target, version) == ("POST", "/api/v1/namespaces/d/events", (1, 1))
    assert headers["content-type"] == "application/json"
    assert headers["X-Empty"] == ""
    assert headers.getall("X-MULTI") == ["a", "b"]
    assert headers["User-Agent"] == "café/1"
    assert headers["X-Raw"] == "\udcff"  # undecodable bytes kept as surrogates


def test_a_head_without_headers() -> None:
    assert list(parse_request_head(b"GET /version HTTP/1.0\r\n\r\n")[3].items()) == []


@pytest.mark.parametrize(("lines", "message"), [
    ((b"Host: x", b"no colon"), "malformed header line 'no colon'"),
    ((b"Bad Name: x", b"Host: x"), "malformed header line 'Bad Name: x'"),
    ((b"Host : x",), "malformed header line 'Host : x'"),  # no space before the colon
    ((b": x",), "malformed header line ': x'"),
    ((b"Host: x", b"X-Bad: a\x00b"), "invalid header value for 'X-Bad'"),
    ((b"X-Bad: a\rb",), "invalid header value for 'X-Bad'"),  # a bare CR inside a line
    ((b"X-Bad: a\nb",), "invalid header value for 'X-Bad'"),  # a bare LF
    ((b"X-Bad: \x7f",), "invalid header value for 'X-Bad'"),
    ((b"Host: x", b" folded"), "malformed header line ' folded'"),  # obsolete line folding
])
def test_a_malformed_header_line_is_named(lines: tuple[bytes, ...], message: str) -> None:
    with pytest.raises(BadRequest, match="^" + message.replace("\\", "\\\\").replace("(", r"\(") + "$") as err:
        parse_request_head(_head(*lines))
    assert err.value.code == 400


def test_the_header_block_is_checked_after_a_non_ascii_request_line() -> None:
    """The header block's offset in the raw bytes is the request line's length in bytes, not in
    decoded characters."""
    raw = _head(b"Host: x", b"X-Bad: \x01", request_line=b"GET /caf\xc3\xa9\xc3\xa9 HTTP/1.1")
    with pytest.raises(BadRequest, match="invalid header value for 'X-Bad'"):
        parse_request_head(raw)
    assert parse_request_head(_head(b"Host: x", request_line=b"GET /caf\xc3\xa9 HTTP/1.1"))[3]["Host"] == "x"
