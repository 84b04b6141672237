"""Values nested to kube's 10,000 levels (issue 43 item 12): a custom resource whose
``x-kubernetes-preserve-unknown-fields`` spec nests 10,000 deep is created (JSON and YAML),
read (GET, LIST, WATCH, Table), patched (merge, JSON patch, apply) and validated; 10,001
levels is kube's 400; the server serves on afterwards.

Responses this deep are beyond ``json.loads``: they are read with ``bodies.decode_deep`` (their
``metadata.managedFields`` repeat the spec's nesting a few levels further down)."""

from __future__ import annotations

from typing import Any

import pytest

from samplecontroller.apiserver.bodies import MAX_DEPTH, decode_deep, depth_of
from samplecontroller.apiserver.handlers.preflight import PREFLIGHT_BYTES
from tests.apiserver.conftest import Raw
from tests.live import wait_for

GROUP = "deep.example.com"
PATH = f"/apis/{GROUP}/v1/namespaces/default/blobs"


def deep_json(levels: int, leaf: bytes = b"1") -> bytes:
    """JSON nested ``levels`` objects deep."""
    return b'{"a":' * levels + leaf + b"}" * levels


def blob_json(name: str, depth: int) -> bytes:
    """A Blob whose whole JSON nests ``depth`` levels (the object itself is one)."""
    return (b'{"apiVersion":"%s/v1","kind":"Blob","metadata":{"name":"%s"},"spec":' % (GROUP.encode(), name.encode())
            + deep_json(depth - 1) + b"}")


def blob_yaml(name: str, depth: int) -> bytes:
    """A Blob as block YAML whose spec holds flow-style lists, ``depth`` levels in all (libyaml
    scans its open flow levels for every token: lists, which hold no keys, are the cheaper)."""
    lists = depth - 2
    return (b"apiVersion: %s/v1\nkind: Blob\nmetadata:\n  name: %s\nspec: {a: " % (GROUP.encode(), name.encode())
            + b"[" * lists + b"1" + b"]" * lists + b"}\n")


def send(raw: Raw, method: str, path: str, data: bytes | None = None, ctype: str = "application/json",
         accept: str = "application/json") -> tuple[int, bytes]:
    conn = raw.conn(60)
    headers = {"Accept": accept, "Authorization": f"Bearer {raw.server.token}"}
    if data is not None:
        headers["Content-Type"] = ctype
    conn.request(method, path, body=data, headers=headers)
    resp = conn.getresponse()
    payload = resp.read()
    conn.close()
    return resp.status, payload


def call(raw: Raw, method: str, path: str, data: bytes | None = None, ctype: str = "application/json",
         accept: str = "application/json") -> tuple[int, Any]:
    code, payload = send(raw, method, path, data, ctype, accept)
    return code, decode_deep(payload, 3 * MAX_DEPTH) if payload else None


def chain(payload: bytes) -> int:
    """How many ``{"a":`` a response holds (``deep_json``'s links; managedFields write ``f:a``):
    cheaper than decoding it, which the test does once."""
    return payload.count(b'{"a":')


def leaf_path(obj: dict[str, Any], levels: int) -> Any:
    value = obj["spec"]
    for _ in range(levels):
        value = value["a"]
    return value


@pytest.fixture(scope="module")
def blobs(raw: Raw) -> str:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"blobs.{GROUP}"},
           "spec": {"group": GROUP, "scope": "Namespaced",
                    "names": {"plural": "blobs", "singular": "blob", "kind": "Blob", "listKind": "BlobList"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "additionalPrinterColumns": [{"name": "Leaf", "type": "string",
                                                                "jsonPath": ".spec.a.a"}],
                                  "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                      "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                                               "x-kubernetes-validations": [
                                                   {"rule": "has(self.a) || has(self.x)"}]}}}}}]}}
    code, _, body = raw.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert code == 201, body
    wait_for(lambda: raw.call("GET", PATH)[0] == 200, what="blobs served")
    return PATH


def test_ten_thousand_levels_are_stored_read_and_patched(raw: Raw, blobs: str) -> None:
    code, rv = call(raw, "GET", blobs)
    assert code == 200, rv
    links = MAX_DEPTH - 1  # the spec's; the object itself is the first level
    padded = blob_json("json", MAX_DEPTH).replace(b'"name":"json"', b'"name":"json","annotations":{"pad":"'
                                                   + b"x" * 16384 + b'"}', 1)
    assert len(padded) >= PREFLIGHT_BYTES  # its dry run runs first on the preflight thread
    code, created = send(raw, "POST", blobs, padded)
    assert code == 201 and chain(created) == links, created[:300]
    code, created = send(raw, "POST", blobs, blob_yaml("yaml", MAX_DEPTH), "application/yaml")
    assert code == 201 and b'"spec":{"a":' + b"[" * (MAX_DEPTH - 2) + b"1" + b"]" * (MAX_DEPTH - 2) + b"}" in created
    yaml_lists = created.count(b"[")

    # the CRD's CEL rule holds the deep object to account: 422, not a 500
    code, status = call(raw, "POST", blobs, blob_json("invalid", MAX_DEPTH).replace(b'"spec":{"a":', b'"spec":{"b":'))
    assert code == 422 and "failed rule: has(self.a) || has(self.x)" in status["message"], status

    code, got = call(raw, "GET", f"{blobs}/json")
    assert code == 200 and depth_of(got["spec"]) == links and leaf_path(got, links) == 1, got
    code, listed = send(raw, "GET", blobs)
    assert code == 200 and chain(listed) >= links and listed.count(b"[") >= yaml_lists, listed[:300]
    code, table = call(raw, "GET", f"{blobs}?includeObject=None", accept="application/json;as=Table;g=meta.k8s.io;v=v1")
    assert code == 200 and [row["cells"][0] for row in table["rows"]][:2] == ["json", "yaml"], table
    code, rows = send(raw, "GET", blobs, accept="application/json;as=Table;g=meta.k8s.io;v=v1")
    assert code == 200 and rows.count(b'"kind":"PartialObjectMetadata"') >= 2, rows[:300]  # deep managedFields
    conn = raw.conn(60)
    conn.request("GET", f"{blobs}?watch=true&resourceVersion={rv['metadata']['resourceVersion']}&timeoutSeconds=1",
                 headers={"Authorization": f"Bearer {raw.server.token}"})
    resp = conn.getresponse()
    lines = [line for line in resp.read().splitlines() if line]
    conn.close()
    assert [line[:16] for line in lines] == [b'{"type":"ADDED",'] * 2, lines[0][:300]
    assert chain(lines[0]) == links and lines[1].count(b"[") == yaml_lists, lines[1][:300]

    # a shallow merge patch walks the stored deep object; a deep one nests a second branch
    code, patched = send(raw, "PATCH", f"{blobs}/json", b'{"metadata":{"labels":{"x":"y"}}}',
                         "application/merge-patch+json")
    assert code == 200 and b'"labels":{"x":"y"}' in patched and chain(patched) == links, patched[:300]
    code, patched = send(raw, "PATCH", f"{blobs}/json", b'{"spec":{"b":' + deep_json(MAX_DEPTH - 2) + b"}}",
                         "application/merge-patch+json")
    assert code == 200 and chain(patched) == links + MAX_DEPTH - 2, patched[:300]
    code, patched = send(raw, "PATCH", f"{blobs}/json", b'[{"op":"test","path":"/spec/a/a/a/a/a/a/a/a/a/a/a/a",'
                         b'"value":' + deep_json(MAX_DEPTH - 13) + b'},{"op":"add","path":"/spec/c","value":1}]',
                         "application/json-patch+json")
    assert code == 200 and b'"c":1' in patched and chain(patched) == links + MAX_DEPTH - 2, patched[:300]
    code, applied = send(raw, "PATCH", f"{blobs}/applied?fieldManager=deep", blob_json("applied", MAX_DEPTH),
                         "application/apply-patch+yaml")
    assert code == 201 and chain(applied) == links, applied[:300]
    code, shallow = call(raw, "PATCH", f"{blobs}/applied?fieldManager=deep", b'{"apiVersion":"%s/v1","kind":"Blob",'
                         b'"metadata":{"name":"applied","labels":{"l":"v"}},"spec":{"x":1}}' % GROUP.encode(),
                         "application/apply-patch+yaml")  # the deep branch the manager no longer applies goes
    assert code == 200 and shallow["spec"] == {"x": 1} and shallow["metadata"]["labels"] == {"l": "v"}, shallow
    code, deleted = call(raw, "DELETE", f"{blobs}/applied")
    assert code == 200, deleted


@pytest.mark.parametrize("ctype, body", [
    ("application/json", blob_json("over", MAX_DEPTH + 1)),
    ("application/yaml", blob_yaml("over", MAX_DEPTH + 1)),
    ("application/json", b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1)),
])
def test_ten_thousand_and_one_levels_are_a_400(raw: Raw, blobs: str, ctype: str, body: bytes) -> None:
    code, status = call(raw, "POST", blobs, body, ctype)
    assert code == 400 and status["reason"] == "BadRequest", status
    assert "exceeded max depth" in status["message"], status
    assert raw.call("GET", "/version")[0] == 200


def test_ten_thousand_and_one_levels_in_a_patch_are_a_400(raw: Raw, blobs: str) -> None:
    assert call(raw, "POST", blobs, blob_json("target", 3))[0] == 201
    for ptype, patch in [("application/merge-patch+json", b'{"spec":' + deep_json(MAX_DEPTH) + b"}"),
                         ("application/json-patch+json",
                          b'[{"op":"add","path":"/spec/x","value":' + deep_json(MAX_DEPTH) + b"}]"),
                         ("application/apply-patch+yaml", blob_json("target", MAX_DEPTH + 1))]:
        code, status = call(raw, "PATCH", f"{blobs}/target?fieldManager=deep", patch, ptype)
        assert code == 400 and "exceeded max depth" in status["message"], status
    assert raw.call("GET", f"{blobs}/target")[0] == 200
    assert raw.call("GET", "/api/v1/namespaces/default")[0] == 200
