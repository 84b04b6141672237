"""Schema-driven fuzzing from the served OpenAPI v3 (issue 19 item 5).

Every operation of a few group-version documents the server serves (``/openapi/v3``) on
namespaced paths is a target: path parameters, the query parameters the operation declares and
request bodies are drawn from the document's own schemas (``from_openapi``: types, properties
and extra properties, arrays, enums, $ref/allOf, int-or-string, preserve-unknown-fields; the
resource's schema for create/update/merge/apply, anything for the other patch types), sent as
JSON or as YAML. (hypothesis-jsonschema was tried: 0.23 fails on current hypothesis internals.) Every answer must come (no dropped connection), be below 500 and, for errors,
be a Status; objects outside the fuzzed namespace must not change. The example count is bounded
(``FUZZ_EXAMPLES``) to keep the test to a few tens of seconds.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.testing import install_crds
from tests.reliability.test_fuzz import FUZZ_NS, NAMES, Wire, _snapshot, sentinel

__all__ = ["sentinel"]  # the fixture, shared with test_fuzz

FUZZ_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "600"))
DOCUMENTS = ("apis/samplecontroller.k8s.io/v1alpha1", "api/v1", "apis/apps/v1", "apis/coordination.k8s.io/v1")
RESOURCES = ("foos", "configmaps", "secrets", "serviceaccounts", "deployments", "leases", "pods", "services")
JSON_VALUE = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                          lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
                          max_leaves=10)


PLAUSIBLE = {"dryRun": ["All"], "fieldValidation": ["Strict", "Warn", "Ignore"], "fieldManager": ["fuzz", "kubectl"],
             "pretty": ["true", "false"], "force": ["true", "false"], "gracePeriodSeconds": ["0", "30"],
             "propagationPolicy": ["Foreground", "Background", "Orphan"], "orphanDependents": ["true", "false"],
             "labelSelector": ["app=a", "x in (a,b)", "!x"], "fieldSelector": ["metadata.name=a"],
             "resourceVersion": ["0", "1", "18446744073709551616"], "limit": ["1", "500"], "watch": ["true"]}


@dataclass(frozen=True)
class Operation:
    """One method on one path template of a served document."""

    method: str
    path: str
    query: tuple[tuple[str, dict[str, Any]], ...]  # (name, schema)
    content_types: tuple[str, ...]
    body: dict[str, Any] | None  # the resource's schema (with the document's components)
    gvk: dict[str, str] | None


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalAPIServer]:
    with LocalAPIServer(kubeconfig_path=tmp_path_factory.mktemp("openapi-fuzz") / "kubeconfig") as s:
        install_crds(s, Path(__file__).resolve().parents[2] / "crds")
        yield s


def _get(wire: Wire, token: str, path: str) -> Any:
    code, _, body = wire.send(b"GET", path.encode(), [(b"Authorization", f"Bearer {token}".encode())], b"")
    assert code == 200, body[:300]
    return json.loads(body)


def _kind_schema(doc: dict[str, Any], gvk: dict[str, str]) -> dict[str, Any] | None:
    for name, definition in doc["components"]["schemas"].items():
        for candidate in definition.get("x-kubernetes-group-version-kind") or ():
            if candidate == gvk:
                return {"$ref": f"#/components/schemas/{name}", "components": doc["components"]}
    return None


SCALAR = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=12)


def from_openapi(schema: dict[str, Any], components: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values shaped by an OpenAPI v3 schema, mostly valid, sometimes not (a wrong type, an
    extra property), so that decoding, pruning and validation all get exercised."""
    if depth > 6:
        return SCALAR
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = components["schemas"].get(ref.rsplit("/", 1)[-1], {})
        return from_openapi(target, components, depth + 1)
    for key in ("allOf", "anyOf", "oneOf"):
        if schema.get(key):
            return st.one_of([from_openapi(s, components, depth + 1) for s in schema[key]])
    if schema.get("enum"):
        shaped: st.SearchStrategy[Any] = st.sampled_from(schema["enum"])
    elif schema.get("x-kubernetes-int-or-string"):
        shaped = st.integers(-5, 100) | st.text(max_size=6)
    else:
        shaped = _typed(schema, components, depth)
    return st.one_of(shaped, shaped, shaped, shaped, shaped, shaped, shaped, SCALAR)


def _typed(schema: dict[str, Any], components: dict[str, Any], depth: int) -> st.SearchStrategy[Any]:
    kind = schema.get("type")
    if kind == "string":
        return st.text(max_size=20) | st.sampled_from(["2024-01-02T03:04:05Z", "1Gi", "a.b/c", "", "1e300"])
    if kind == "integer":
        return st.integers(-(2**64), 2**64)
    if kind == "number":
        return st.floats(allow_nan=False) | st.integers()
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(from_openapi(schema.get("items") or {}, components, depth + 1), max_size=3)
    props = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    if props or isinstance(extra, dict) or kind == "object":
        fields = {k: from_openapi(v, components, depth + 1) for k, v in props.items()}
        known = st.fixed_dictionaries({}, optional=fields) if fields else st.just({})
        values = from_openapi(extra, components, depth + 1) if isinstance(extra, dict) else SCALAR
        more = st.dictionaries(st.text(max_size=10) | st.sampled_from(["1e300", "-1e39", "0x1F", "~", "on"]),
                               values, max_size=2 if (isinstance(extra, dict) or not props) else 1)
        return st.builds(lambda a, b: {**b, **a}, known, more)
    return JSON_VALUE


def operations(server: LocalAPIServer) -> list[Operation]:
    """The fuzzed operations of ``DOCUMENTS`` (namespaced paths of ``RESOURCES``, no streams)."""
    wire = Wire(server)
    index = _get(wire, server.token, "/openapi/v3")
    found: list[Operation] = []
    for name in DOCUMENTS:
        doc = _get(wire, server.token, index["paths"][name]["serverRelativeURL"])
        for path, item in doc["paths"].items():
            parts = path.split("/")
            if "{namespace}" not in parts or not any(r in parts for r in RESOURCES) or "watch" in parts:
                continue
            shared = item.get("parameters") or []
            for method in ("get", "post", "put", "patch", "delete"):
                op = item.get(method)
                if op is None:
                    continue
                params = [p for p in [*shared, *(op.get("parameters") or [])] if p.get("in") == "query"]
                content = (op.get("requestBody") or {}).get("content") or {}
                gvk = op.get("x-kubernetes-group-version-kind")
                found.append(Operation(method.upper(), path, tuple((p["name"], p.get("schema") or {}) for p in params),
                                       tuple(content), _kind_schema(doc, gvk) if gvk and content else None, gvk))
    return found


@st.composite
def query_strings(draw: st.DrawFn, op: Operation) -> str:
    pairs: list[tuple[str, str]] = []
    for name, schema in op.query:
        if draw(st.integers(0, 3)):
            continue
        if name in PLAUSIBLE and draw(st.integers(0, 5)):
            value: Any = draw(st.sampled_from(PLAUSIBLE[name]))
        else:
            value = draw(st.one_of(_typed(schema, {}, 6), st.text(max_size=8)))
        pairs.append((name, json.dumps(value) if isinstance(value, bool) else str(value)))
    if any(name == "watch" for name, _ in pairs):
        pairs.append(("timeoutSeconds", "1"))
    return "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in pairs)


def _encode(value: Any, ctype: str) -> bytes:
    if "yaml" in ctype:
        return yaml.safe_dump(value, allow_unicode=True).encode("utf-8", "surrogatepass")
    return json.dumps(value).encode("utf-8", "surrogatepass")


@st.composite
def requests(draw: st.DrawFn, ops: list[Operation], token: str) -> tuple[bytes, bytes, list[tuple[bytes, bytes]], bytes]:
    op = draw(st.sampled_from(ops))
    name = draw(st.sampled_from(NAMES)) if draw(st.integers(0, 4)) else draw(st.text(min_size=1, max_size=12))
    path = op.path.replace("{namespace}", FUZZ_NS).replace("{name}", quote(name, safe=""))
    query = draw(query_strings(op))
    if query:
        path += "?" + query
    headers = [(b"Authorization", f"Bearer {token}".encode()), (b"Accept", b"application/json")]
    body = b""
    if op.content_types:
        ctype = draw(st.sampled_from(op.content_types))
        headers.append((b"Content-Type", ctype.encode()))
        if ctype == "application/json-patch+json":
            value: Any = draw(st.lists(st.fixed_dictionaries(
                {"op": st.sampled_from(["add", "replace", "remove", "test"]),
                 "path": st.sampled_from(["/metadata/labels/a", "/spec", "/data/k", "/metadata/name", "/x"])},
                optional={"value": JSON_VALUE}), max_size=3))
        elif op.body is not None and draw(st.integers(0, 9)):
            components = op.body["components"]
            value = draw(_typed(components["schemas"][op.body["$ref"].rsplit("/", 1)[-1]], components, 0))
            if isinstance(value, dict) and op.gvk and draw(st.integers(0, 4)):  # mostly the right kind and name
                group, version = op.gvk["group"], op.gvk["version"]
                value["apiVersion"] = f"{group}/{version}" if group else version
                value["kind"] = op.gvk["kind"]
                meta: dict[str, Any] = value["metadata"] if isinstance(value.get("metadata"), dict) else {}
                value["metadata"] = {**meta, "name": name}
        else:
            value = draw(JSON_VALUE)
        body = _encode(value, ctype)
        if ctype == "application/apply-patch+yaml" and "fieldManager" not in path:
            path += ("&" if "?" in path else "?") + "fieldManager=fuzz"
    return op.method.encode(), path.encode("utf-8", "surrogatepass"), headers, body


@pytest.mark.slow
def test_openapi_driven_requests_get_no_5xx(server: LocalAPIServer, sentinel: dict[tuple[str, str, str], str]) -> None:
    ops = operations(server)
    assert len(ops) > 40, [f"{o.method} {o.path}" for o in ops]
    wire = Wire(server)
    seen: dict[int, int] = {}

    @settings(max_examples=FUZZ_EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much])
    @given(req=requests(ops, server.token))
    def one(req: tuple[bytes, bytes, list[tuple[bytes, bytes]], bytes]) -> None:
        method, target, headers, body = req
        try:
            code, _, payload = wire.send(method, target, headers, body)
        except (IndexError, ConnectionError) as err:
            raise AssertionError(f"no answer to {method!r} {target!r} {body[:300]!r}: {err!r}") from None
        seen[code] = seen.get(code, 0) + 1
        assert code < 500, (method, target, body[:300], payload[:500])
        if code >= 400 and payload:
            status = json.loads(payload)
            assert status["kind"] == "Status" and status["code"] == code, status

    one()
    print(f"openapi fuzz: {len(ops)} operations, status codes {sorted(seen.items())}")
    assert sum(seen.values()) >= FUZZ_EXAMPLES // 2 and any(200 <= c < 300 for c in seen), seen
    after = _snapshot(server)
    changed = {key: (rv, after.get(key)) for key, rv in sentinel.items() if after.get(key) != rv}
    assert not changed, changed
