"""Fuzzing the embedded API server over raw HTTPS: request bodies, paths, query parameters and
headers drawn by hypothesis. Every answer must be below 500 (errors as Status objects), the
server must keep answering, and objects outside the fuzzed namespace must not change."""

from __future__ import annotations

import json
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.testing import install_crds

FUZZ_NS = "fuzz"
NAMES = ["a", "b", "fuzzed", "web"]


class Wire:
    """Raw HTTP/1.1 over TLS: ``send(head_lines, body) -> (status, headers, body)``; a 2xx
    streamed (chunked) answer is not read to its end (a watch could run for minutes)."""

    def __init__(self, server: LocalAPIServer) -> None:
        self.server = server
        self.ctx = ssl.create_default_context(cafile=str(server.ca_path))

    def send(self, method: bytes, target: bytes, headers: list[tuple[bytes, bytes]], body: bytes,
             ) -> tuple[int, dict[str, str], bytes]:
        lines = [method + b" " + target + b" HTTP/1.1", b"Host: 127.0.0.1", b"Connection: close",
                 b"Content-Length: " + str(len(body)).encode()]
        lines += [k + b": " + v for k, v in headers]
        with socket.create_connection(("127.0.0.1", self.server.port), timeout=15) as plain, \
                self.ctx.wrap_socket(plain, server_hostname="127.0.0.1") as sock:
            sock.sendall(b"\r\n".join(lines) + b"\r\n\r\n" + body)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
            head, _, rest = data.partition(b"\r\n\r\n")
            status_line, *header_lines = head.decode("latin-1").split("\r\n")
            code = int(status_line.split()[1])
            got = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines)}
            if code < 300 and "content-length" not in got:
                return code, got, b""
            length = int(got.get("content-length", "0"))
            while len(rest) < length:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                rest += chunk
            return code, got, rest


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalAPIServer]:
    with LocalAPIServer(kubeconfig_path=tmp_path_factory.mktemp("fuzz") / "kubeconfig") as s:
        install_crds(s, Path(__file__).resolve().parents[2] / "crds")
        yield s


def _snapshot(server: LocalAPIServer) -> dict[tuple[str, str, str], str]:
    """Every stored object outside the fuzzed namespace: (storage key, namespace, name) -> resourceVersion."""
    def collect(core: Any) -> dict[tuple[str, str, str], str]:
        out = {}
        for skey, objects in core.store.data.items():
            for (ns, name), entry in objects.items():
                if ns != FUZZ_NS and not (skey == "/namespaces" and name == FUZZ_NS):
                    out[(skey, ns, name)] = str(entry.obj["metadata"].get("resourceVersion"))
        return out
    return server.call(collect)


@pytest.fixture(scope="module")
def sentinel(server: LocalAPIServer) -> dict[tuple[str, str, str], str]:
    """Objects the fuzzer must not touch: a namespace with ConfigMaps, a Secret and a Foo
    (besides the default namespaces and the CRDs), then the fuzzed namespace's seeds."""
    wire = Wire(server)
    auth = [(b"Authorization", f"Bearer {server.token}".encode()), (b"Content-Type", b"application/json")]

    def create(path: str, obj: dict[str, Any]) -> None:
        code, _, body = wire.send(b"POST", path.encode(), auth, json.dumps(obj).encode())
        assert code == 201, body

    for ns in ("sentinel", FUZZ_NS):
        create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        for name in NAMES[:2]:
            create(f"/api/v1/namespaces/{ns}/configmaps",
                   {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}})
        create(f"/api/v1/namespaces/{ns}/secrets",
               {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a"}, "stringData": {"k": "v"}})
        create(f"/apis/samplecontroller.k8s.io/v1alpha1/namespaces/{ns}/foos",
               {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "metadata": {"name": "a"},
                "spec": {"deploymentName": "a", "replicas": 1}})
    return _snapshot(server)


# ------------------------------------------------------------------ strategies

text = st.text(max_size=20)
printable = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=30)
weird = st.sampled_from(["", "/", "%2F", "%2f", "..", ".", "%00", "%zz", "a%2Fb", "\u00e9", "\U0001f600", " ", "-",
                         "0", "-1", "99999999999999999999", "true", "null", "a" * 300, "*", "?", "#", ";"])
name = st.one_of(st.sampled_from(NAMES), weird, text)
segment = st.one_of(name, st.sampled_from(["status", "scale", "finalize", "namespaces", "configmaps"]))
resource = st.sampled_from([
    "/api/v1/namespaces/{ns}/configmaps", "/api/v1/namespaces/{ns}/secrets", "/api/v1/namespaces/{ns}/pods",
    "/api/v1/namespaces/{ns}/events", "/apis/apps/v1/namespaces/{ns}/deployments",
    "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/{ns}/foos", "/apis/events.k8s.io/v1/namespaces/{ns}/events",
    "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases", "/api/v1/namespaces/{ns}",
])


@st.composite
def paths(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 9)) == 0:  # anything at all (unreserved or not)
        return "/" + draw(st.text(max_size=40)).replace(" ", "%20")
    raw = draw(st.integers(0, 9)) == 0  # mostly percent-encoded, as clients send names

    def enc(part: str) -> str:
        return part if raw else quote(part, safe="%")

    path = draw(resource).format(ns=FUZZ_NS if draw(st.integers(0, 4)) else enc(draw(weird)))
    for _ in range(draw(st.sampled_from([0, 0, 1, 1, 1, 2, 3]))):
        path += "/" + enc(draw(st.sampled_from(NAMES)) if draw(st.booleans()) else draw(segment))
    if draw(st.booleans()):
        path += draw(st.sampled_from(["/", "//", "/%2F"]))
    return path


query_value = st.one_of(weird, text, st.sampled_from(["1", "0", "All", "Strict", "Warn", "Ignore", "Foreground",
                                                      "Orphan", "Background", "NotOlderThan", "Exact", "a=b",
                                                      "a in (b)", "metadata.name=a", "!a", "x", "abc"]))
query_key = st.one_of(st.sampled_from([
    "watch", "resourceVersion", "resourceVersionMatch", "limit", "continue", "labelSelector", "fieldSelector",
    "timeoutSeconds", "allowWatchBookmarks", "sendInitialEvents", "dryRun", "fieldManager", "fieldValidation",
    "force", "propagationPolicy", "gracePeriodSeconds", "orphanDependents", "includeObject", "pretty"]), text)


@st.composite
def queries(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        return ""
    pairs = draw(st.lists(st.tuples(query_key, query_value), max_size=3))
    keys = {k for k, _ in pairs}
    if "watch" in keys:
        pairs.append(("timeoutSeconds", "1"))  # a watch that starts must end soon
    return "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in pairs)


json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False,
                                                                                          allow_infinity=False), text)
json_value = st.recursive(json_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.one_of(text, st.sampled_from(
        ["apiVersion", "kind", "metadata", "spec", "status", "data", "name", "labels", "finalizers"])), inner, max_size=4)),
    max_leaves=20)


@st.composite
def k8s_objects(draw: st.DrawFn) -> Any:
    meta = draw(st.fixed_dictionaries({}, optional={
        "name": name, "generateName": name, "namespace": st.one_of(st.just(FUZZ_NS), name),
        "labels": st.dictionaries(text, st.one_of(text, json_value), max_size=3),
        "annotations": st.dictionaries(text, st.one_of(text, json_value), max_size=3),
        "finalizers": st.lists(st.one_of(text, json_value), max_size=2),
        "resourceVersion": st.one_of(weird, json_value), "uid": st.one_of(text, json_value),
        "ownerReferences": st.lists(st.one_of(json_value, st.fixed_dictionaries({
            "apiVersion": text, "kind": text, "name": name, "uid": text, "blockOwnerDeletion": st.booleans()})),
            max_size=2),
        "deletionTimestamp": st.one_of(text, json_value), "managedFields": json_value}))
    return draw(st.fixed_dictionaries({"metadata": st.one_of(st.just(meta), json_value)}, optional={
        "apiVersion": st.one_of(st.sampled_from(["v1", "apps/v1", "samplecontroller.k8s.io/v1alpha1", "v2"]), text),
        "kind": st.one_of(st.sampled_from(["ConfigMap", "Secret", "Foo", "Deployment", "Pod", "Status"]), text),
        "spec": json_value, "status": json_value, "data": json_value, "stringData": json_value,
        "binaryData": json_value, "type": text}))


json_patch = st.lists(st.fixed_dictionaries({"op": st.sampled_from(["add", "remove", "replace", "move", "copy",
                                                                    "test", "bogus"]),
                                             "path": st.one_of(st.sampled_from(["/", "", "/metadata", "/kind",
                                                                                "/apiVersion", "/metadata/name",
                                                                                "/metadata/labels/x", "/data/k",
                                                                                "/spec/-", "/metadata/finalizers/0"]),
                                                               text)},
                                            optional={"value": json_value, "from": st.sampled_from(
                                                ["/metadata", "/data", "/", "/x"])}), max_size=5)


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    choice = draw(st.integers(0, 9))
    if choice <= 1:
        return json.dumps(draw(k8s_objects())).encode()
    if choice <= 3:  # mostly valid: a ConfigMap, a Foo or a merge patch with fuzzed names and values
        obj: dict[str, Any] = draw(st.sampled_from([
            {"apiVersion": "v1", "kind": "ConfigMap"},
            {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "spec": {"deploymentName": "d"}},
            {}]))
        obj = {**obj, "metadata": {"name": draw(st.one_of(st.sampled_from(NAMES), name)),
                                   "labels": draw(st.dictionaries(st.sampled_from(["app", "x"]), text, max_size=2))},
               "data": draw(st.dictionaries(st.sampled_from(["k", "v"]), text, max_size=2))}
        return json.dumps(obj).encode()
    if choice == 4:
        return json.dumps(draw(json_patch)).encode()
    if choice == 5:
        return json.dumps(draw(json_value)).encode()
    if choice == 6:  # YAML-ish text: anchors, aliases, tags, keys of every type
        parts = draw(st.lists(st.sampled_from([
            "a: &x [1, 2]\n", "b: *x\n", "? null\n: v\n", "c: !!binary aGk=\n", "d: .nan\n", "<<: *x\n",
            "e: 2001-12-14\n", "f: {? [1] : 2}\n", "kind: ConfigMap\n", "apiVersion: v1\n", "metadata: {name: y}\n",
            "---\n", "g: *missing\n", "h: !custom 1\n", "- 1\n", "i: [[[[[\n", "j: 0x1F\n", "k: =\n"]), max_size=6))
        return "".join(parts).encode()
    if choice == 7:
        depth = draw(st.integers(150, 3000))
        return b'{"metadata":{"name":"deep"},"spec":' + b"[" * depth + b"]" * depth + b"}"
    if choice == 8:
        return draw(st.binary(max_size=64))
    return b""


content_types = st.one_of(st.sampled_from([
    "application/json", "application/yaml", "application/json-patch+json", "application/merge-patch+json",
    "application/strategic-merge-patch+json", "application/apply-patch+yaml", "application/vnd.kubernetes.protobuf",
    "text/plain", "", "application/json; charset=utf-8", "multipart/form-data", "*/*"]), printable)
accepts = st.one_of(st.sampled_from([
    "application/json", "application/json;as=Table;v=v1;g=meta.k8s.io",
    "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", "application/yaml", "text/html", "*/*",
    "application/vnd.kubernetes.protobuf", "application/json;as=Table;v=v9;g=meta.k8s.io", ""]), printable)
header_bytes = st.binary(max_size=30).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b""))
methods = st.sampled_from([b"GET", b"POST", b"PUT", b"PATCH", b"DELETE"] * 4
                          + [b"HEAD", b"OPTIONS", b"TRACE", b"CONNECT", b"FOO", b"get"])


@st.composite
def requests(draw: st.DrawFn, token: str) -> tuple[bytes, bytes, list[tuple[bytes, bytes]], bytes]:
    target = draw(paths())
    query = draw(queries())
    if query:
        target += "?" + query
    raw_target = target.encode("utf-8", "surrogatepass").replace(b" ", b"%20")
    auth = draw(st.sampled_from(["ok"] * 9 + ["none", "wrong", "bytes"]))
    headers: list[tuple[bytes, bytes]] = []
    if auth == "ok":
        headers.append((b"Authorization", f"Bearer {token}".encode()))
    elif auth == "wrong":
        headers.append((b"Authorization", b"Bearer " + draw(st.text(max_size=10)).encode()))
    elif auth == "bytes":
        headers.append((b"Authorization", b"Bearer " + draw(header_bytes)))
    headers.append((b"Content-Type", draw(content_types).encode()))
    headers.append((b"Accept", draw(accepts).encode()))
    if draw(st.booleans()):
        headers.append((draw(st.sampled_from([b"User-Agent", b"X-Extra", b"Content-Encoding", b"Transfer-Encoding-X",
                                              b"Impersonate-User", b"If-None-Match"])), draw(header_bytes)))
    return draw(methods), raw_target, headers, draw(bodies())


@st.composite
def valid_requests(draw: st.DrawFn, token: str) -> tuple[bytes, bytes, list[tuple[bytes, bytes]], bytes]:
    """Well-formed requests on the fuzzed namespace's ConfigMaps and Foos (names and values
    fuzzed), so that writes succeed and later requests meet real objects."""
    collection, head = draw(st.sampled_from([
        (f"/api/v1/namespaces/{FUZZ_NS}/configmaps", {"apiVersion": "v1", "kind": "ConfigMap"}),
        (f"/apis/samplecontroller.k8s.io/v1alpha1/namespaces/{FUZZ_NS}/foos",
         {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo"})]))
    obj_name = draw(st.one_of(st.sampled_from(NAMES), name))
    obj = {**head, "metadata": {"name": obj_name, "labels": draw(st.dictionaries(st.sampled_from(["app", "x"]), text,
                                                                                   max_size=2))}}
    if head["kind"] == "Foo":
        obj["spec"] = {"deploymentName": draw(text), "replicas": draw(st.one_of(st.integers(-3, 5), text))}
    else:
        obj["data"] = draw(st.dictionaries(st.sampled_from(["k", "v", "a.b"]), text, max_size=2))
    item = f"{collection}/{quote(obj_name, safe='')}"
    verb = draw(st.sampled_from(["create", "create", "get", "list", "put", "merge", "json", "apply", "delete"]))
    ctype, body, method, target = "application/json", b"", b"GET", item
    if verb == "create":
        method, target, body = b"POST", collection, json.dumps(obj).encode()
    elif verb == "list":
        target = collection
    elif verb == "put":
        method, body = b"PUT", json.dumps(obj).encode()
    elif verb in ("merge", "apply"):
        method, body = b"PATCH", json.dumps(obj).encode()
        ctype = "application/merge-patch+json" if verb == "merge" else "application/apply-patch+yaml"
        target += "?fieldManager=fuzz" if verb == "apply" else ""
    elif verb == "json":
        method, ctype, body = b"PATCH", "application/json-patch+json", json.dumps(draw(json_patch)).encode()
    elif verb == "delete":
        method = b"DELETE"
    headers = [(b"Authorization", f"Bearer {token}".encode()), (b"Content-Type", ctype.encode()),
               (b"Accept", b"application/json")]
    return method, target.encode(), headers, body


# ------------------------------------------------------------------ the test


@pytest.mark.slow
def test_fuzzed_requests_get_no_5xx_and_change_nothing_else(server: LocalAPIServer,
                                                            sentinel: dict[tuple[str, str, str], str],
                                                            tmp_path: Path) -> None:
    wire = Wire(server)
    seen: dict[int, int] = {}

    @settings(max_examples=500, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.function_scoped_fixture])
    @given(req=st.one_of(requests(server.token), valid_requests(server.token)))
    def one(req: tuple[bytes, bytes, list[tuple[bytes, bytes]], bytes]) -> None:
        method, target, headers, body = req
        code, got, payload = wire.send(method, target, headers, body)
        seen[code] = seen.get(code, 0) + 1
        assert code < 500, (method, target, headers, body[:300], payload[:500])
        if code >= 400 and payload and method != b"HEAD":
            assert got.get("content-type", "").startswith("application/json"), payload[:300]
            status = json.loads(payload)
            assert status["kind"] == "Status" and status["code"] == code, status

    one()
    assert seen, "no request was sent"
    code, _, version = wire.send(b"GET", b"/version", [], b"")
    assert code == 200 and json.loads(version)["major"] == "1"
    after = _snapshot(server)
    changed = {key: (rv, after.get(key)) for key, rv in sentinel.items() if after.get(key) != rv}
    assert not changed, changed
