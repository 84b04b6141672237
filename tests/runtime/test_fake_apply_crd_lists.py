"""The fake runtime client merges a custom resource's lists and maps as the API server does: by the
CRD schema's ``x-kubernetes-list-type`` (map with ``x-kubernetes-list-map-keys``, set) and
``x-kubernetes-map-type``. The same server-side apply sequence (two managers, list-map items owned
by each, conflicts on atomic fields, force, status) runs against the fake and against the embedded
API server over HTTP; the objects and their managedFields must be equal.

The fake learns the schema three ways: automatically from the generated package of the kinds in
its Scheme (``<package>.applyconfigurations.new_type_converter()``), from CRD YAML
(``with_crds(dir)``, as envtest's ``CRDDirectoryPaths``) or from explicit type converters
(``with_type_converters``, controller-runtime's ``WithTypeConverters``)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from samplecontroller.apimachinery import errors, fieldmanager, objects
from samplecontroller.apiserver.testing import install_crds
from samplecontroller.client.scheme import Scheme
from samplecontroller.codegen import generator
from samplecontroller.runtime.client import Client
from samplecontroller.runtime.client.fake import ClientBuilder

CRDS = Path(__file__).resolve().parents[1] / "testdata" / "listmaps" / "crds"
API_VERSION = "net.example.org/v1"


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The package generated from the test CRD (``listmaps_pkg``), importable for the module."""
    root = tmp_path_factory.mktemp("listmaps")
    assert generator.main(["--crds", str(CRDS), "--output", str(root / "listmaps_pkg"),
                           "--package", "listmaps_pkg"]) == 0
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("listmaps_pkg")
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == "listmaps_pkg" or m.startswith("listmaps_pkg.")]:
            del sys.modules[name]


def _scheme(pkg: Any) -> Scheme:
    scheme: Scheme = importlib.import_module(f"{pkg.__name__}.scheme").SCHEME
    return scheme


def _route(ns: str, spec: dict[str, Any] | None = None, status: dict[str, Any] | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": API_VERSION, "kind": "Route", "metadata": {"name": "r", "namespace": ns}}
    if spec is not None:
        obj["spec"] = spec
    if status is not None:
        obj["status"] = status
    return obj


def scenario(c: Client, ns: str, model: type[Any]) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """Two managers apply list-map items, set members and atomic fields of one Route; returns
    (spec and status, managedFields without times, the conflict messages)."""
    conflicts: list[str] = []
    c.apply(_route(ns, {"backends": [{"name": "a", "port": 80, "weight": 1, "headers": ["x-a"]}],
                        "hosts": ["a.example.org"], "rules": [{"path": "/a"}], "selector": {"app": "a"},
                        "options": {"a": "1"}, "tls": {"secretName": "a", "mode": "strict"}}), field_owner="alpha")
    # beta adds its own backend, a header to alpha's backend, a host and an option: merged, no conflict
    c.apply(_route(ns, {"backends": [{"name": "b", "port": 80, "weight": 2},
                                     {"name": "a", "port": 80, "headers": ["x-b"]}],
                        "hosts": ["b.example.org"], "options": {"b": "2"}}), field_owner="beta")
    # an atomic list, an atomic map and an atomic struct owned by alpha: conflicts, then force
    take = _route(ns, {"backends": [{"name": "b", "port": 80, "weight": 2}, {"name": "a", "port": 80, "headers": ["x-b"]}],
                       "hosts": ["b.example.org"], "options": {"b": "2"}, "rules": [{"path": "/b"}],
                       "selector": {"app": "b"}, "tls": {"secretName": "a"}})
    with pytest.raises(errors.ConflictError) as conflict:
        c.apply(take, field_owner="beta")
    conflicts.append(str(conflict.value))
    c.apply(take, field_owner="beta", force=True)
    # a key beta does not own yet, but with the same value: shared, no conflict
    c.apply(_route(ns, {"backends": [{"name": "a", "port": 80, "weight": 1}]}), field_owner="gamma")
    # alpha stops applying backend a (gamma and beta keep parts of it) and option a, adds backend c
    c.apply(_route(ns, {"backends": [{"name": "c", "port": 443}], "hosts": ["a.example.org"]}), field_owner="alpha")
    # gamma changes a weight alpha no longer owns: no conflict; then a value beta owns: conflict
    c.apply(_route(ns, {"backends": [{"name": "a", "port": 80, "weight": 5}]}), field_owner="gamma")
    with pytest.raises(errors.ConflictError) as conflict:
        c.apply(_route(ns, {"backends": [{"name": "b", "port": 80, "weight": 9}], "hosts": ["b.example.org"]}),
                field_owner="gamma")
    conflicts.append(str(conflict.value))
    c.status().apply(_route(ns, status={"conditions": [{"type": "Ready", "status": "True"}]}), field_owner="alpha")
    c.status().apply(_route(ns, status={"conditions": [{"type": "Synced", "status": "False", "reason": "Wait"}]}),
                     field_owner="beta")
    with pytest.raises(errors.ConflictError) as conflict:
        c.status().apply(_route(ns, status={"conditions": [{"type": "Ready", "status": "False"}]}), field_owner="beta")
    conflicts.append(str(conflict.value))
    live = objects.to_dict(c.get(model, ns, "r"))
    entries = [{k: v for k, v in e.items() if k != "time"} for e in live["metadata"]["managedFields"]]
    return {"spec": live.get("spec"), "status": live.get("status")}, entries, conflicts


def _builders(pkg: Any) -> dict[str, Callable[[], ClientBuilder]]:
    scheme = _scheme(pkg)
    converter = importlib.import_module(f"{pkg.__name__}.applyconfigurations").new_type_converter()
    return {
        "automatic": lambda: ClientBuilder().with_scheme(scheme),
        "with_crds": lambda: ClientBuilder().with_scheme(scheme).with_crds(CRDS),
        "with_type_converters": lambda: ClientBuilder().with_scheme(scheme).with_type_converters(
            converter, fieldmanager.BuiltinTypeConverter()),
    }


@pytest.mark.parametrize("how", ["automatic", "with_crds", "with_type_converters"])
def test_fake_merges_crd_lists_as_the_server_does(pkg: Any, apiserver: Any, rest: Any, ns: str, how: str) -> None:
    install_crds(apiserver, CRDS)
    model = importlib.import_module(f"{pkg.__name__}.apis.net.v1").Route
    server = scenario(Client.for_rest_client(rest, scheme=_scheme(pkg)), ns, model)
    fake = scenario(_builders(pkg)[how]().build(), ns, model)
    assert fake[2] == server[2]
    assert fake[0] == server[0]
    assert fake[1] == server[1]
    spec = server[0]["spec"]
    # what the server did, spelled out: list-map items of both managers, set members of both
    assert [(b["name"], b["port"]) for b in spec["backends"]] == [("a", 80), ("b", 80), ("c", 443)]
    assert spec["backends"][0] == {"name": "a", "port": 80, "weight": 5, "headers": ["x-b"]}
    assert spec["hosts"] == ["a.example.org", "b.example.org"]
    assert spec["rules"] == [{"path": "/b"}] and spec["selector"] == {"app": "b"} and spec["tls"] == {"secretName": "a"}
    assert spec["options"] == {"b": "2"}
    assert [c["type"] for c in server[0]["status"]["conditions"]] == ["Ready", "Synced"]
    assert server[2][0].startswith('Apply failed with 3 conflicts: conflicts with "alpha":')
    assert all(f".spec.{f}" in server[2][0] for f in ("rules", "selector", "tls"))
    assert '.spec.backends[name="b",port=80].weight' in server[2][1]


def test_the_default_fake_without_schemas_treats_crd_lists_as_atomic_and_says_so(pkg: Any) -> None:
    """A kind no type converter knows (a dict kind, or a package generated without schemas) falls
    back to the deduced converter: lists atomic, as controller-runtime's default."""
    converter = fieldmanager.DeducedTypeConverter()
    fake = ClientBuilder().with_scheme(_scheme(pkg)).with_type_converters(converter).build()
    fake.apply(_route("default", {"backends": [{"name": "a", "port": 80}]}), field_owner="alpha")
    with pytest.raises(errors.ConflictError, match=r"conflict with \"alpha\": \.spec\.backends"):
        fake.apply(_route("default", {"backends": [{"name": "b", "port": 80}]}), field_owner="beta")


def test_a_kind_no_type_converter_knows_is_refused_by_name(pkg: Any) -> None:
    fake = ClientBuilder().with_scheme(_scheme(pkg)).with_type_converters(fieldmanager.BuiltinTypeConverter()).build()
    with pytest.raises(ValueError, match=r"no type converter knows net\.example\.org/v1 Route"):
        fake.apply(_route("default", {"hosts": ["a"]}), field_owner="alpha")


def test_with_crds_refuses_a_missing_directory() -> None:
    with pytest.raises(ValueError, match="not a directory of CRD YAML files"):
        ClientBuilder().with_crds(CRDS / "missing")
