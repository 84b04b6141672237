"""Property test: random objects drawn from each CRD schema round-trip exactly through the models."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

TESTDATA = Path(__file__).resolve().parent / "testdata"
ROOT = Path(__file__).resolve().parents[2]

_json_scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=8) | st.floats(
    allow_nan=False, allow_infinity=False)
_free_form = st.dictionaries(st.text(max_size=6), st.recursive(
    _json_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8), max_size=4)


def strategy(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values valid for a structural CRD schema (constraints the models ignore are ignored here too)."""
    base = _strategy(schema)
    return st.none() | base if schema.get("nullable") else base


def _strategy(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    if schema.get("x-kubernetes-int-or-string"):
        return st.integers(-(2**31), 2**31) | st.text(max_size=8)
    if schema.get("x-kubernetes-preserve-unknown-fields") or schema.get("x-kubernetes-embedded-resource"):
        return _free_form
    typ = schema.get("type")
    if typ == "object":
        if schema.get("properties"):
            # A required property is always there (the server sees to it; absent, it decodes as Go's zero value).
            required = set(schema.get("required") or [])
            props = schema["properties"].items()
            return st.fixed_dictionaries({k: strategy(v) for k, v in props if k in required},
                                         optional={k: strategy(v) for k, v in props if k not in required})
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            return st.dictionaries(st.text(max_size=6), strategy(extra), max_size=3)
        return _free_form
    if typ == "array":
        return st.lists(strategy(schema["items"]), max_size=3)
    if typ == "integer":
        return st.integers(-(2**63), 2**63 - 1)
    if typ == "number":
        return st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False)
    if typ == "boolean":
        return st.booleans()
    return st.text(max_size=10)


def canonical(body: bytes) -> str:
    """Parsed, then re-serialized with sorted keys: 2 and 2.0 stay different (unlike ==)."""
    return json.dumps(json.loads(body), sort_keys=True)


def served_versions(path: Path) -> list[tuple[str, str, str, dict[str, Any]]]:
    crd = yaml.safe_load(path.read_text())
    group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
    pkg = group.split(".")[0].replace("-", "_")
    return [(pkg, v["name"], kind, v["schema"]["openAPIV3Schema"]) for v in crd["spec"]["versions"] if v["served"]]


CASES = [(path, *version) for path in (TESTDATA / "crds" / "widgets.yaml", ROOT / "crds" / "foo.yaml",
                                       ROOT / "crds" / "podset.yaml") for version in served_versions(path)]


@pytest.mark.parametrize(("path", "pkg", "version", "kind", "schema"), CASES,
                         ids=[f"{c[1]}/{c[2]}/{c[3]}" for c in CASES])
def test_random_objects_round_trip(load_module: Callable[[str], ModuleType], path: Path, pkg: str, version: str,
                                   kind: str, schema: dict[str, Any]) -> None:
    if path.is_relative_to(TESTDATA):
        module = load_module(f"apis/{pkg}/{version}/__init__.py")
    else:
        module = __import__(f"generated.apis.{pkg}.{version}", fromlist=[kind])
    model = getattr(module, kind)
    body = {k: v for k, v in schema.get("properties", {}).items() if k not in ("apiVersion", "kind", "metadata")}
    objects = st.fixed_dictionaries(
        {"apiVersion": st.just(f"{model().api_version}"), "kind": st.just(kind),
         "metadata": st.fixed_dictionaries({"name": st.text(min_size=1, max_size=10)},
                                           optional={"labels": st.dictionaries(st.text(max_size=5),
                                                                               st.text(max_size=5), max_size=2)})},
        optional={k: strategy(v) for k, v in body.items()})

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(objects)
    def check(obj: dict[str, Any]) -> None:
        wire = json.dumps(obj)
        again = msgspec.json.encode(msgspec.json.decode(wire, type=model))
        assert canonical(again) == canonical(wire.encode())

    check()
