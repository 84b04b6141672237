"""cache.compact (cache/compaction.py): equal strings and immutable sub-objects shared between cached objects, managedFields
copied out of the page they were decoded from, objects unchanged in value; and the informer applying
it before its transform."""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

import msgspec
import pytest

from samplecontroller.cache import SharedIndexInformer, compact, strip_managed_fields
from samplecontroller.client.types import ListOptions, ListResult
from samplecontroller.kubernetes.apis.apps.v1 import Deployment, DeploymentList
from tests.cache.conftest import eventually


def deployment(i: int) -> dict[str, Any]:
    """A Deployment as the embedded server returns one the sample controller created."""
    name = f"foo-{i:05d}"
    labels = {"app": "nginx", "controller": name}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {
            "name": name, "namespace": "default", "uid": f"6a3c1f7e-0000-4000-8000-{i:012d}",
            "resourceVersion": str(100 + i), "generation": 1, "creationTimestamp": "2026-11-26T08:33:34Z",
            "annotations": {"deployment.kubernetes.io/revision": "1"},
            "ownerReferences": [{"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "name": name,
                                 "uid": f"6a3c1f7e-0000-4000-9000-{i:012d}", "controller": True,
                                 "blockOwnerDeletion": True}],
            "managedFields": [{"manager": "sample-controller", "operation": "Update", "apiVersion": "apps/v1",
                               "time": "2026-11-26T08:33:34Z", "fieldsType": "FieldsV1",
                               "fieldsV1": {"f:spec": {"f:replicas": {}}}}],
        },
        "spec": {
            "replicas": 1, "selector": {"matchLabels": labels},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:latest", "imagePullPolicy": "Always",
                                         "resources": {}, "terminationMessagePolicy": "File"}],
                         "restartPolicy": "Always", "securityContext": {}, "schedulerName": "default-scheduler"},
            },
        },
        "status": {"observedGeneration": 1, "replicas": 1, "availableReplicas": 1,
                   "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                                   "lastUpdateTime": "2026-11-26T08:33:34Z",
                                   "message": "Deployment has minimum availability."}]},
    }


def page(n: int) -> bytes:
    return json.dumps({"apiVersion": "apps/v1", "kind": "DeploymentList", "metadata": {"resourceVersion": "999"},
                       "items": [deployment(i) for i in range(n)]}).encode()


def test_compacted_objects_are_equal_and_keep_their_identity() -> None:
    body = page(3)
    items = msgspec.json.decode(body, type=DeploymentList).items
    fresh = msgspec.json.decode(body, type=DeploymentList).items
    for obj, same in zip(items, fresh, strict=True):
        assert compact(obj) is obj
        assert obj == same
        assert msgspec.json.encode(obj) == msgspec.json.encode(same)


def test_equal_strings_and_sub_objects_are_shared() -> None:
    a, b = (compact(o) for o in msgspec.json.decode(page(2), type=DeploymentList).items)
    assert a.spec.template.spec is b.spec.template.spec  # the whole pod spec, containers included
    assert a.spec.strategy is b.spec.strategy
    assert a.status.conditions[0] is b.status.conditions[0]
    assert a.metadata.namespace is b.metadata.namespace
    assert a.spec.selector.match_labels["app"] is b.spec.selector.match_labels["app"]  # dict values
    assert a.metadata.name is a.spec.template.metadata.labels["controller"]  # within one object too
    # Dicts of strings: equal ones (same keys in the same order) are one dict.
    assert a.metadata.annotations is b.metadata.annotations
    assert a.spec.selector.match_labels is a.spec.template.metadata.labels
    assert a.spec.selector.match_labels is not b.spec.selector.match_labels  # they differ
    # Identities are never shared: owner references carry a uid, and differ anyway.
    assert a.metadata.owner_references[0] is not b.metadata.owner_references[0]


def test_managed_fields_no_longer_hold_the_page() -> None:
    body = page(50)
    base = sys.getrefcount(body)
    items: list[Any] = list(msgspec.json.decode(body, type=DeploymentList).items)
    assert sys.getrefcount(body) > base  # every item's managedFields is a view into the page
    for obj in items:
        compact(obj)
    assert sys.getrefcount(body) == base
    assert msgspec.json.decode(items[7].metadata.managed_fields) == deployment(7)["metadata"]["managedFields"]


class _AnyValue(msgspec.Struct, frozen=True, gc=False):
    value: Any


class _Holder(msgspec.Struct, frozen=True, gc=False):
    inner: _AnyValue
    tags: dict[str, str] | None = None


class _Top(msgspec.Struct, frozen=True, gc=False):
    holder: _Holder


def test_values_equal_only_loosely_are_not_shared() -> None:
    # 1 == True == 1.0: a field typed Any must keep its own value, never an equal one of another type.
    one = compact(_Top(_Holder(_AnyValue(1))))
    true = compact(_Top(_Holder(_AnyValue(True))))
    assert type(one.holder.inner.value) is int and type(true.holder.inner.value) is bool
    # A sub-object holding a dict is not shared (dicts are mutable), but its strings are interned.
    x = compact(_Top(_Holder(_AnyValue("a"), {"k": "".join(["v", "1"])})))
    y = compact(_Top(_Holder(_AnyValue("a"), {"k": "".join(["v", "1"])})))
    assert x.holder is not y.holder
    assert x.holder.tags is not None and y.holder.tags is not None
    assert x.holder.tags["k"] is y.holder.tags["k"]


def test_non_structs_pass_unchanged() -> None:
    obj = {"metadata": {"name": "x"}}
    assert compact(obj) is obj and obj == {"metadata": {"name": "x"}}
    assert compact("default/x") == "default/x"


class _PageListerWatcher:
    """Lists one page decoded from bytes the test keeps; its watch ends at once."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def list(self, options: ListOptions) -> ListResult[Any]:
        decoded = msgspec.json.decode(self.body, type=DeploymentList)
        return ListResult(list(decoded.items), "999", "")

    def watch(self, options: ListOptions) -> Any:
        raise ConnectionRefusedError("no watch in this test")


@pytest.mark.parametrize("compact_objects", [True, False])
def test_informer_compacts_before_its_transform(compact_objects: bool) -> None:
    body = page(20)
    lw = _PageListerWatcher(body)
    base = sys.getrefcount(body)
    inf: SharedIndexInformer[Deployment] = SharedIndexInformer(lw, Deployment, 0.0,
                                                               freeze_gc=False, compact_objects=compact_objects)
    transformed: list[Any] = []

    def transform(obj: Any) -> Any:
        transformed.append(obj.metadata.managed_fields)
        return strip_managed_fields(obj)

    inf.set_transform(transform)
    stop = threading.Event()
    runner = threading.Thread(target=inf.run, args=(stop,), daemon=True)
    runner.start()
    try:
        assert eventually(inf.has_synced)
        cached: list[Any] = sorted(inf.get_store().list(), key=lambda o: str(o.metadata.name))
        expected = [strip_managed_fields(o) for o in msgspec.json.decode(body, type=DeploymentList).items]
        assert cached == expected  # the user's transform applied, values unchanged
        assert len(transformed) == 20
        shared = cached[0].spec.template.spec is cached[1].spec.template.spec
        assert shared is compact_objects
        # The transform saw compacted objects: their managedFields no longer point into the page.
        assert (sys.getrefcount(body) - base == 0) is compact_objects
        transformed.clear()
        assert sys.getrefcount(body) == base
    finally:
        stop.set()
        runner.join(10)


class _PagedListerWatcher:
    """Serves three pages decoded from bodies it keeps; records, as each page is asked for, how many
    references the previous page's body still has beyond its own."""

    def __init__(self) -> None:
        self.bodies = [page(10) for _ in range(3)]
        self.base = [sys.getrefcount(self.bodies[i]) for i in range(3)]
        self.extra_refs_of_previous: list[int] = []

    def list(self, options: ListOptions) -> ListResult[Any]:
        k = int(options.continue_ or 0)
        if k:
            self.extra_refs_of_previous.append(sys.getrefcount(self.bodies[k - 1]) - self.base[k - 1])
        items = msgspec.json.decode(self.bodies[k], type=DeploymentList).items
        return ListResult(list(items), "999", str(k + 1) if k < 2 else "")

    def watch(self, options: ListOptions) -> Any:
        raise ConnectionRefusedError("no watch in this test")


def test_listed_pages_are_compacted_as_they_arrive() -> None:
    lw = _PagedListerWatcher()
    inf: SharedIndexInformer[Deployment] = SharedIndexInformer(lw, Deployment, 0.0, freeze_gc=False)
    inf._reflector.page_size = 10
    stop = threading.Event()
    runner = threading.Thread(target=inf.run, args=(stop,), daemon=True)
    runner.start()
    try:
        assert eventually(inf.has_synced)
        assert len(inf.get_store().list_keys()) == 10  # the three pages hold the same names
        # No page's buffer was still held (by managedFields views) when the next one was read.
        assert lw.extra_refs_of_previous == [0, 0]
    finally:
        stop.set()
        runner.join(10)


def updated(i: int) -> dict[str, Any]:
    """``deployment(i)`` after an update: a new resourceVersion and status, the spec as it was."""
    obj = deployment(i)
    obj["metadata"]["resourceVersion"] = str(5000 + i)
    obj["status"] = {**obj["status"], "readyReplicas": 1, "updatedReplicas": 1}
    return obj


def test_compacting_against_the_cached_version_takes_its_equal_parts() -> None:
    """An update compacted ``like`` the cached version takes the parts it left equal from that
    version (no walk) and stays equal, field for field and byte for byte, to what was decoded."""
    cached = compact(msgspec.json.decode(json.dumps(deployment(1)).encode(), type=Deployment))
    body = json.dumps(updated(1)).encode()
    new = msgspec.json.decode(body, type=Deployment)
    assert compact(new, cached) is new
    fresh = msgspec.json.decode(body, type=Deployment)
    assert new == fresh and msgspec.json.encode(new) == msgspec.json.encode(fresh)
    assert new.spec is cached.spec  # equal: the cached one, already compacted
    assert new.metadata.owner_references is cached.metadata.owner_references
    assert new.metadata.annotations is cached.metadata.annotations
    assert new.metadata.resource_version == str(5001) and new.status is not cached.status
    assert new.status.conditions is cached.status.conditions  # equal inside a changed part
    # a different type, or no cached version, is compacted on its own
    assert compact(msgspec.json.decode(body, type=Deployment), _Top(_Holder(_AnyValue(1)))) == fresh


def test_compacting_against_a_cached_version_never_swaps_loosely_equal_values() -> None:
    # 1 == True == 1.0: a field typed Any keeps its own value though the cached one compares equal.
    for value, cached_value in ((True, 1), (1, True), (1.0, True), (0, False)):
        cached = compact(_Top(_Holder(_AnyValue(cached_value))))
        new = compact(_Top(_Holder(_AnyValue(value))), cached)
        assert type(new.holder.inner.value) is type(value)
    # a union of bool with a number is as loose
    cached_flag = compact(_Flag(1))
    assert type(compact(_Flag(True), cached_flag).flag) is bool


class _Flag(msgspec.Struct, gc=False):
    flag: bool | int
