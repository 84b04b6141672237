"""JSON bodies laid out as kube-apiserver's encoder writes them (issue 43 item 15): a Status in its
Go struct's field order (kind, apiVersion, metadata, status, message, reason, details {name, group,
kind, uid, causes [{reason, message, field}], retryAfterSeconds}, code) and every body of the API
ended by a newline (Go's json.Encoder); ``/version`` as ``WriteRawJSON`` writes it (indented, no
newline). The expected bytes are kube-apiserver's."""

from __future__ import annotations

import http.client
import json
from typing import Any

from samplecontroller.apiserver import LocalAPIServer
from tests.apiserver.conftest import Raw

NS = "layout"
FOOS = f"/apis/samplecontroller.k8s.io/v1alpha1/namespaces/{NS}/foos"


def _exchange(raw: Raw, method: str, path: str, body: Any = None, token: str | None = "") -> tuple[int, bytes]:
    conn: http.client.HTTPSConnection = raw.conn()
    headers = {"Accept": "application/json", "Content-Type": "application/json"}
    tok = raw.server.token if token == "" else token
    if tok:
        headers["Authorization"] = f"Bearer {tok}"
    conn.request(method, path, body=json.dumps(body).encode() if body is not None else None, headers=headers)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, data


def _keys(data: bytes) -> list[Any]:
    """The keys of every JSON object in ``data``, in document order (nested lists after their parent)."""
    found: list[Any] = []

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found.append([k for k, _ in pairs])
        return dict(pairs)

    json.loads(data, object_pairs_hook=hook)
    return found


def _namespace(raw: Raw) -> None:
    if raw.call("GET", f"/api/v1/namespaces/{NS}")[0] == 404:
        assert raw.call("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})[0] == 201


def test_errors_are_laid_out_as_kubes_status(raw: Raw) -> None:
    _namespace(raw)
    cm = {"metadata": {"name": "twice"}}
    assert _exchange(raw, "POST", f"/api/v1/namespaces/{NS}/configmaps", cm)[0] == 201
    assert _exchange(raw, "POST", f"/api/v1/namespaces/{NS}/configmaps", cm) == (409, (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        b'"message":"configmaps \\"twice\\" already exists","reason":"AlreadyExists",'
        b'"details":{"name":"twice","kind":"configmaps"},"code":409}\n'))
    assert _exchange(raw, "GET", f"{FOOS}/missing") == (404, (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        b'"message":"foos.samplecontroller.k8s.io \\"missing\\" not found","reason":"NotFound",'
        b'"details":{"name":"missing","group":"samplecontroller.k8s.io","kind":"foos"},"code":404}\n'))
    assert _exchange(raw, "GET", f"/api/v1/namespaces/{NS}/configmaps", token="wrong") == (401, (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized",'
        b'"reason":"Unauthorized","code":401}\n'))


def test_an_invalid_objects_causes_are_laid_out_as_kubes(raw: Raw) -> None:
    _namespace(raw)
    code, data = _exchange(raw, "POST", f"/api/v1/namespaces/{NS}/configmaps", {"metadata": {"name": "Not_Valid"}})
    assert code == 422 and data.endswith(b"}\n"), data
    *_, cause, details, status = _keys(data)  # innermost objects first
    assert status == ["kind", "apiVersion", "metadata", "status", "message", "reason", "details", "code"]
    assert details == ["name", "kind", "causes"]
    assert cause == ["reason", "message", "field"]


def test_objects_lists_and_delete_answers_end_with_a_newline(raw: Raw) -> None:
    _namespace(raw)
    code, created = _exchange(raw, "POST", f"/api/v1/namespaces/{NS}/configmaps", {"metadata": {"name": "ended"}})
    assert code == 201 and created.endswith(b"}\n"), created
    code, got = _exchange(raw, "GET", f"/api/v1/namespaces/{NS}/configmaps/ended")
    assert code == 200 and got.endswith(b"}\n") and got.count(b"\n") == 1, got
    code, listed = _exchange(raw, "GET", f"/api/v1/namespaces/{NS}/configmaps")
    assert code == 200 and listed.endswith(b"]}\n"), listed[-40:]
    uid = json.loads(created)["metadata"]["uid"]
    assert _exchange(raw, "DELETE", f"/api/v1/namespaces/{NS}/configmaps/ended") == (200, (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success",'
        b'"details":{"name":"ended","kind":"configmaps","uid":"' + uid.encode() + b'"}}\n'))
    code, discovery = _exchange(raw, "GET", "/api/v1")
    assert code == 200 and discovery.endswith(b"}\n"), discovery[-40:]


def test_version_is_written_raw_as_kube_writes_it(server: LocalAPIServer, raw: Raw) -> None:
    code, data = _exchange(raw, "GET", "/version")
    assert code == 200 and data.startswith(b'{\n  "major": "1",\n') and data.endswith(b"\n}"), data
