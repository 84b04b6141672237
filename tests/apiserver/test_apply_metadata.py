"""Server-side apply merges a custom resource's ``metadata`` by ObjectMeta's schema, as
kube-apiserver does (a CRD's own schema says only ``metadata: {type: object}``): finalizers are a
set, ownerReferences a map keyed by uid, labels and annotations granular maps."""

from __future__ import annotations

import json
from typing import Any

import pytest

from samplecontroller.apiserver import LocalAPIServer

from .conftest import FOOS, Raw, foo

PATH = FOOS.format(ns="default")


def apply(raw: Raw, name: str, manager: str, **meta: Any) -> tuple[int, Any]:
    body = foo(name, replicas=None, **meta)
    del body["spec"]
    code, _, got = raw.call("PATCH", f"{PATH}/{name}?fieldManager={manager}", raw=json.dumps(body).encode(),
                            ctype="application/apply-patch+yaml")
    return code, got


OWNERS = ("owner-1", "owner-2")


@pytest.fixture(scope="module")
def owners(raw: Raw) -> dict[str, dict[str, Any]]:
    """Two ConfigMaps to own the Foos (an owner that does not exist gets its dependents collected)."""
    found: dict[str, dict[str, Any]] = {}
    for name in OWNERS:
        code, _, got = raw.call("POST", "/api/v1/namespaces/default/configmaps",
                                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
        assert code == 201, got
        found[name] = {"apiVersion": "v1", "kind": "ConfigMap", "name": name, "uid": got["metadata"]["uid"]}
    return found


@pytest.mark.parametrize(("field", "first", "second", "merged"), [
    ("finalizers", ["example.com/a"], ["example.com/b"], ["example.com/a", "example.com/b"]),
    ("ownerReferences", ["owner-1"], ["owner-2"], ["owner-1", "owner-2"]),
    ("labels", {"a": "1"}, {"b": "2"}, {"a": "1", "b": "2"}),
])
def test_two_managers_share_a_custom_resources_metadata(server: LocalAPIServer, raw: Raw, field: str, first: Any,
                                                        second: Any, merged: Any,
                                                        owners: dict[str, dict[str, Any]]) -> None:
    if field == "ownerReferences":
        first, second, merged = ([owners[n] for n in names] for names in (first, second, merged))
    name = f"meta-{field.lower()}"
    code, _ = raw.call("POST", PATH, foo(name))[:2]
    assert code == 201
    assert apply(raw, name, "alpha", **{field: first})[0] == 200
    code, got = apply(raw, name, "beta", **{field: second})
    assert code == 200, got
    assert got["metadata"][field] == merged
    owned = {e["manager"]: e["fieldsV1"]["f:metadata"][f"f:{field}"] for e in got["metadata"]["managedFields"]
             if e["operation"] == "Apply"}
    assert set(owned) == {"alpha", "beta"}
    # alpha stops applying its item: only that item goes
    code, got = apply(raw, name, "alpha")
    assert code == 200, got.get("message")
    assert got["metadata"][field] == second
