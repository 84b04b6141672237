"""One server-side apply sequence over a custom resource whose lists and maps merge by its CRD
schema (``tests/testdata/listmaps/crds``: a Route with a list-map keyed by two fields, a set, an
atomic list, an atomic map, an atomic struct, a granular map and status conditions keyed by
type), to run against the embedded API server and against the fakes and compare.

``STEPS`` are (manager, body, force, status subresource, conflict expected); ``run_steps`` drives
them through an ``apply`` function and returns the conflict messages; ``normalized`` gives the
parts of an object to compare (spec, status, managedFields without their times).
``generate_package`` writes the CRD's generated package for a test module.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from samplecontroller.apimachinery import errors, objects
from samplecontroller.codegen import generator

CRDS = Path(__file__).resolve().parent / "testdata" / "listmaps" / "crds"
API_VERSION = "net.example.org/v1"
PACKAGE = "listmaps_pkg"


class Step(NamedTuple):
    """One apply: ``manager`` applies ``spec`` (or ``status`` through /status), maybe forced."""

    manager: str
    body: dict[str, Any]
    force: bool = False
    status: bool = False
    conflict: bool = False


def route(ns: str, spec: dict[str, Any] | None = None, status: dict[str, Any] | None = None) -> dict[str, Any]:
    """An apply configuration of Route ``r`` in ``ns``."""
    obj: dict[str, Any] = {"apiVersion": API_VERSION, "kind": "Route", "metadata": {"name": "r", "namespace": ns}}
    if spec is not None:
        obj["spec"] = spec
    if status is not None:
        obj["status"] = status
    return obj


_TAKE = {"backends": [{"name": "b", "port": 80, "weight": 2}, {"name": "a", "port": 80, "headers": ["x-b"]}],
         "hosts": ["b.example.org"], "options": {"b": "2"}, "rules": [{"path": "/b"}], "selector": {"app": "b"},
         "tls": {"secretName": "a"}}

STEPS = [
    Step("alpha", {"spec": {"backends": [{"name": "a", "port": 80, "weight": 1, "headers": ["x-a"]}],
                            "hosts": ["a.example.org"], "rules": [{"path": "/a"}], "selector": {"app": "a"},
                            "options": {"a": "1"}, "tls": {"secretName": "a", "mode": "strict"}}}),
    # beta adds its own backend, a header to alpha's backend, a host and an option: merged, no conflict
    Step("beta", {"spec": {"backends": [{"name": "b", "port": 80, "weight": 2},
                                        {"name": "a", "port": 80, "headers": ["x-b"]}],
                           "hosts": ["b.example.org"], "options": {"b": "2"}}}),
    # an atomic list, an atomic map and an atomic struct owned by alpha: a conflict, then force
    Step("beta", {"spec": _TAKE}, conflict=True),
    Step("beta", {"spec": _TAKE}, force=True),
    # a field beta does not own, with the value it has: shared, no conflict
    Step("gamma", {"spec": {"backends": [{"name": "a", "port": 80, "weight": 1}]}}),
    # alpha stops applying backend a (gamma and beta keep parts of it) and option a; adds backend c
    Step("alpha", {"spec": {"backends": [{"name": "c", "port": 443}], "hosts": ["a.example.org"]}}),
    # gamma changes a weight alpha no longer owns: no conflict; then one beta owns: conflict
    Step("gamma", {"spec": {"backends": [{"name": "a", "port": 80, "weight": 5}]}}),
    Step("gamma", {"spec": {"backends": [{"name": "b", "port": 80, "weight": 9}], "hosts": ["b.example.org"]}},
         conflict=True),
    Step("alpha", {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}, status=True),
    Step("beta", {"status": {"conditions": [{"type": "Synced", "status": "False", "reason": "Wait"}]}}, status=True),
    Step("beta", {"status": {"conditions": [{"type": "Ready", "status": "False"}]}}, status=True, conflict=True),
]

Apply = Callable[[dict[str, Any], str, bool, bool], Any]
"""apply(body, manager, force, status subresource)."""


def run_steps(apply: Apply, ns: str) -> list[str]:
    """Run ``STEPS`` in ``ns``; the messages of the conflicts (each expected one must happen, with
    code 409, and no other)."""
    conflicts: list[str] = []
    for step in STEPS:
        body = route(ns, step.body.get("spec"), step.body.get("status"))
        if not step.conflict:
            apply(body, step.manager, step.force, step.status)
            continue
        try:
            apply(body, step.manager, step.force, step.status)
        except errors.ConflictError as err:
            assert err.code == 409 and err.reason == "Conflict"
            conflicts.append(str(err))
        else:
            raise AssertionError(f"{step.manager} applied {step.body} without a conflict")
    return conflicts


def normalized(obj: Any) -> dict[str, Any]:
    """spec, status and managedFields (without their times) of ``obj``."""
    live = objects.to_dict(obj)
    entries = [{k: v for k, v in e.items() if k != "time"} for e in live["metadata"].get("managedFields") or []]
    return {"spec": live.get("spec"), "status": live.get("status"), "managedFields": entries}


def check_server_result(result: dict[str, Any], conflicts: list[str]) -> None:
    """What the API server makes of ``STEPS``, spelled out."""
    spec = result["spec"]
    assert [(b["name"], b["port"]) for b in spec["backends"]] == [("a", 80), ("b", 80), ("c", 443)]
    assert spec["backends"][0] == {"name": "a", "port": 80, "weight": 5, "headers": ["x-b"]}
    assert spec["hosts"] == ["a.example.org", "b.example.org"]
    assert spec["rules"] == [{"path": "/b"}] and spec["selector"] == {"app": "b"} and spec["tls"] == {"secretName": "a"}
    assert spec["options"] == {"b": "2"}
    assert [c["type"] for c in result["status"]["conditions"]] == ["Ready", "Synced"]
    assert conflicts[0].startswith('Apply failed with 3 conflicts: conflicts with "alpha":')
    assert all(f".spec.{f}" in conflicts[0] for f in ("rules", "selector", "tls"))
    assert conflicts[1] == 'Apply failed with 1 conflict: conflict with "beta": .spec.backends[name="b",port=80].weight'
    assert conflicts[2] == ('Apply failed with 1 conflict: conflict with "alpha" with subresource "status": '
                            '.status.conditions[type="Ready"].status')


@contextmanager
def generate_package(root: Path) -> Iterator[Any]:
    """The CRD's generated package (``listmaps_pkg``) in ``root``, importable inside the block."""
    assert generator.main(["--crds", str(CRDS), "--output", str(root / PACKAGE), "--package", PACKAGE]) == 0
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]
