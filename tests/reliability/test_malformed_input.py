"""Malformed input that reached a 5xx or a dropped connection (issue 19 item 5): each answer is
a Status with kube-apiserver's code, and the connection answers."""

from __future__ import annotations

import gzip
import json
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.testing import install_crds, make_kubectl
from tests.reliability.test_fuzz import Wire

NS = "malformed"
CMS = f"/api/v1/namespaces/{NS}/configmaps"
FOOS = f"/apis/samplecontroller.k8s.io/v1alpha1/namespaces/{NS}/foos"
TOKEN = f"/api/v1/namespaces/{NS}/serviceaccounts/default/token"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalAPIServer]:
    with LocalAPIServer(kubeconfig_path=tmp_path_factory.mktemp("malformed") / "kubeconfig") as s:
        install_crds(s, Path(__file__).resolve().parents[2] / "crds")
        wire = Wire(s)
        for path, obj in (("/api/v1/namespaces", {"metadata": {"name": NS}}),
                          (f"/api/v1/namespaces/{NS}/serviceaccounts", {"metadata": {"name": "default"}}),
                          (CMS, {"metadata": {"name": "cm"}, "data": {"k": "v"}}),
                          (FOOS, {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                                  "metadata": {"name": "f"}, "spec": {"deploymentName": "f", "replicas": 1}})):
            code, _, body = wire.send(b"POST", path.encode(), _headers(s), json.dumps(obj).encode())
            assert code in (201, 409), body
        yield s


def _headers(server: LocalAPIServer, ctype: str = "application/json") -> list[tuple[bytes, bytes]]:
    return [(b"Authorization", f"Bearer {server.token}".encode()), (b"Content-Type", ctype.encode())]


def _send(server: LocalAPIServer, method: str, path: str, body: bytes = b"", ctype: str = "application/json",
          extra: tuple[tuple[bytes, bytes], ...] = ()) -> tuple[int, dict[str, str], Any]:
    try:
        code, headers, payload = Wire(server).send(method.encode(), path.encode("utf-8", "surrogatepass"),
                                                   _headers(server, ctype) + list(extra), body)
    except (IndexError, ConnectionError) as err:  # no status line: the connection was dropped
        pytest.fail(f"{method} {path} {body[:80]!r}: no response ({err!r})")
    return code, headers, json.loads(payload) if payload else None


def _status(result: tuple[int, dict[str, str], Any], code: int, reason: str, message: str = "") -> None:
    got, _, body = result
    assert got == code, body
    assert body["kind"] == "Status" and body["code"] == code and body["reason"] == reason, body
    assert re.search(message, body["message"]), body["message"]


# ------------------------------------------------------------------ Content-Encoding


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_body_not_in_its_content_encoding_is_a_400(server: LocalAPIServer, encoding: str) -> None:
    body = json.dumps({"metadata": {"name": "enc"}}).encode()
    result = _send(server, "POST", CMS, body, extra=((b"Content-Encoding", encoding.encode()),))
    _status(result, 400, "BadRequest", f'the request body is not in its Content-Encoding "{encoding}": .*decompress')
    assert _send(server, "GET", f"{CMS}/enc")[0] == 404


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_body_in_its_content_encoding_is_read(server: LocalAPIServer, encoding: str) -> None:
    name = f"enc-{encoding}"
    body = json.dumps({"metadata": {"name": name}}).encode()
    packed = gzip.compress(body) if encoding == "gzip" else zlib.compress(body)
    code, _, obj = _send(server, "POST", CMS, packed, extra=((b"Content-Encoding", encoding.encode()),))
    assert code == 201 and obj["metadata"]["name"] == name, obj


# ------------------------------------------------------------------ TokenRequest expirationSeconds


@pytest.mark.parametrize(("seconds", "code", "message"), [
    (2**32 + 1, 422, r'spec\.expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than '
                     r"2\^32 seconds"),
    (2**40, 422, "larger than 2\\^32 seconds"),
    (10**30, 400, r"cannot unmarshal number 1000000000000000000000000000000 into Go struct field "
                  r"TokenRequestSpec\.spec\.expirationSeconds of type int64"),
    (2**63, 400, "of type int64"),
    (1e30, 400, "of type int64"),
    ("3600", 400, "cannot unmarshal string into Go struct field TokenRequestSpec.spec.expirationSeconds"),
    (0, 422, "Invalid value: 0: may not specify a duration less than 10 minutes"),
    (599, 422, "less than 10 minutes"),
])
def test_token_request_expiration_out_of_range(server: LocalAPIServer, seconds: Any, code: int, message: str) -> None:
    result = _send(server, "POST", TOKEN, json.dumps({"spec": {"expirationSeconds": seconds}}).encode())
    _status(result, code, "Invalid" if code == 422 else "BadRequest", message)


@pytest.mark.parametrize("seconds", [600, 2**32, None])
def test_token_request_expiration_in_range(server: LocalAPIServer, seconds: int | None) -> None:
    code, _, answer = _send(server, "POST", TOKEN, json.dumps({"spec": {"expirationSeconds": seconds}}).encode())
    assert code == 201, answer
    assert answer["spec"]["expirationSeconds"] == (seconds or 3600) and answer["status"]["token"]


# ------------------------------------------------------------------ keys with control characters

CONTROL_KEYS = ["a\x01b", "\x00", "x\ny", "tab\there", "cr\rlf", "\x7f", "c1\x85", "bell\x07", "esc\x1b[31m", "\x1f"]


def _patch_cases() -> list[tuple[str, str, str]]:
    cases = []
    for key in CONTROL_KEYS:
        cases.append((key, "application/merge-patch+json", FOOS + "/f"))
        cases.append((key, "application/apply-patch+yaml", FOOS + "/f?fieldManager=fuzz"))
    return cases


@pytest.mark.parametrize(("key", "ctype", "path"), _patch_cases())
def test_patch_with_control_characters_in_keys_answers(server: LocalAPIServer, key: str, ctype: str,
                                                       path: str) -> None:
    patch: dict[str, Any] = {"spec": {key: 1}, key: {"x": 1}}
    if ctype.startswith("application/apply"):
        patch = {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "metadata": {"name": "f"}, **patch}
    code, headers, body = _send(server, "PATCH", path, json.dumps(patch).encode(), ctype)
    assert code == 200, body
    warning = headers.get("warning", "")
    assert all(ord(c) >= 0x20 and ord(c) != 0x7F for c in warning), warning
    escaped = json.dumps(key)[1:-1]  # the control character, written out as Go's %q writes it
    if "\\u00" in escaped or key in ("\x7f", "c1\x85"):
        assert "unknown field" in warning, headers


@pytest.mark.parametrize("ctype", ["application/merge-patch+json", "application/json", "application/yaml"])
@pytest.mark.parametrize("text", ['"\\ud800"', '"\\udfff\\u0007"', '"a\\udc00b"'])
def test_lone_surrogates_get_an_answer(server: LocalAPIServer, ctype: str, text: str) -> None:
    body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s"},"data":{KEY:"v"},KEY:1}'.replace("KEY", text)
    method, path = ("PATCH", f"{CMS}/cm") if ctype.startswith("application/merge") else ("POST", CMS)
    code, _, answer = _send(server, method, path, body.encode(), ctype)
    assert code < 500 and answer is not None, answer


@pytest.mark.kubectl
def test_kubectl_prints_the_escaped_unknown_field(server: LocalAPIServer, tmp_path: Path) -> None:
    kubectl = make_kubectl(tmp_path, server)
    proc = kubectl("-n", NS, "patch", "foo", "f", "--type=merge", "-p", json.dumps({"spec": {"a\x01b": 1}}))
    assert proc.returncode == 0, proc.stderr
    assert 'Warning: unknown field "spec.a\\x01b"' in proc.stderr


# ------------------------------------------------------------------ resourceVersion beyond uint64


@pytest.mark.parametrize("rv", ["18446744073709551616", "99999999999999999999999999"])
@pytest.mark.parametrize("path", [CMS, f"{CMS}/cm", f"{CMS}?watch=true&timeoutSeconds=1"])
def test_resource_version_beyond_uint64_is_a_400(server: LocalAPIServer, rv: str, path: str) -> None:
    sep = "&" if "?" in path else "?"
    _status(_send(server, "GET", f"{path}{sep}resourceVersion={rv}"), 400, "BadRequest",
            f'invalid resource version: .*strconv.ParseUint: parsing "{rv}": value out of range')


def test_largest_uint64_resource_version_is_too_large(server: LocalAPIServer) -> None:
    _status(_send(server, "GET", f"{CMS}?resourceVersion=18446744073709551615"), 504, "Timeout",
            "Too large resource version")


# ------------------------------------------------------------------ YAML keys and fieldValidation

ODD_META = ("apiVersion: samplecontroller.k8s.io/v1alpha1\nkind: Foo\nmetadata:\n  name: f\n  1e300: x\n"
            "  -1e39: y\n  {rv}spec: {{deploymentName: f}}\n")


def _odd_foo(server: LocalAPIServer) -> str:
    code, _, current = _send(server, "GET", FOOS + "/f")
    assert code == 200, current
    return ODD_META.format(rv=f"resourceVersion: \"{current['metadata']['resourceVersion']}\"\n")


def test_yaml_put_with_float_keys_and_a_bad_field_validation_is_a_422(server: LocalAPIServer) -> None:
    result = _send(server, "PUT", FOOS + "/f?fieldValidation=Sloppy", _odd_foo(server).encode(), "application/yaml")
    _status(result, 422, "Invalid", r'UpdateOptions\.meta\.k8s\.io "" is invalid: fieldValidation: Unsupported '
                                    r'value: "Sloppy": supported values: "", "Ignore", "Strict", "Warn"')


@pytest.mark.parametrize("method", ["POST", "PATCH"])
def test_bad_field_validation_names_the_options_kind(server: LocalAPIServer, method: str) -> None:
    path, ctype = (FOOS, "application/json") if method == "POST" else (FOOS + "/f", "application/merge-patch+json")
    kind = "CreateOptions" if method == "POST" else "PatchOptions"
    _status(_send(server, method, path + "?fieldValidation=x", b"{}", ctype), 422, "Invalid",
            f'{kind}.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "x"')


def test_yaml_put_with_float_keys_beyond_float32(server: LocalAPIServer) -> None:
    result = _send(server, "PUT", FOOS + "/f?fieldValidation=Strict", _odd_foo(server).encode(), "application/yaml")
    _status(result, 400, "BadRequest", r'strict decoding error: unknown field "metadata\.\.inf", '
                                       r'unknown field "metadata\.-\.inf"')
    code, headers, body = _send(server, "PUT", FOOS + "/f", _odd_foo(server).encode(), "application/yaml")
    assert code == 200, body
    assert 'unknown field \\"metadata..inf\\"' in headers["warning"]


@pytest.mark.parametrize(("raw", "stored"), [
    (b'"x\\ud800y"', "x\ufffdy"),  # a lone surrogate escape
    (b'"\\udc00\\ud83d\\ude00"', "\ufffd\U0001f600"),  # a lone low surrogate, then a valid pair
    (b'"a\xffb"', "a\ufffdb"),  # a byte that is not UTF-8
])
def test_json_text_is_coerced_to_utf8_as_go_does(server: LocalAPIServer, raw: bytes, stored: str) -> None:
    name = f"coerced-{zlib.crc32(raw)}"
    body = b'{"metadata":{"name":"' + name.encode() + b'","annotations":{"a":' + raw + b'}}}'
    code, _, obj = _send(server, "POST", CMS, body)
    assert code == 201, obj
    assert obj["metadata"]["annotations"]["a"] == stored


def test_json_that_is_not_json_keeps_its_error(server: LocalAPIServer) -> None:
    _status(_send(server, "POST", CMS, b'{"metadata": NaN}'), 400, "BadRequest", "error decoding request body: ")


@pytest.mark.parametrize(("method", "path", "kind"), [
    ("POST", CMS, "CreateOptions"), ("PUT", f"{CMS}/cm", "UpdateOptions"),
    ("PATCH", f"{CMS}/cm", "PatchOptions"), ("DELETE", f"{CMS}/cm", "DeleteOptions")])
def test_bad_dry_run_is_kubes_422(server: LocalAPIServer, method: str, path: str, kind: str) -> None:
    ctype = "application/merge-patch+json" if method == "PATCH" else "application/json"
    _status(_send(server, method, f"{path}?dryRun=All&dryRun=x", b"{}", ctype), 422, "Invalid",
            re.escape(f'{kind}.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{{"All", "x"}}: '
                      'supported values: "All"'))
    assert _send(server, "GET", f"{CMS}/cm")[0] == 200
