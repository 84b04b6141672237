"""Generated models: exact round trips, defaults, immutability, shapes (generated/ of the repo)."""

from __future__ import annotations

import copy
import json
from types import ModuleType
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generated.apis.samplecontroller.v1alpha1 import FOOS, Foo, FooList, FooSpec
from generated.apis.workloads.v1alpha1 import PODSETS, PodSet, PodSetSpec
from samplecontroller.kubernetes.apis.apps.v1 import DEPLOYMENTS, Deployment, DeploymentList
from samplecontroller.kubernetes.apis.coordination.v1 import Lease
from samplecontroller.kubernetes.apis.core.v1 import Event, Namespace, Pod
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta


def roundtrip(model: type[Any], obj: dict[str, Any]) -> Any:
    raw = json.dumps(obj).encode()
    decoded = msgspec.json.decode(raw, type=model)
    # sorted-key text, not ==: an int that came back as a float (2 == 2.0) must fail
    assert json.dumps(json.loads(msgspec.json.encode(decoded)), sort_keys=True) == json.dumps(obj, sort_keys=True)
    return decoded


@pytest.mark.parametrize(("model", "name"), [(Deployment, "DEPLOYMENT"), (Foo, "FOO"), (Pod, "POD"),
                                             (Event, "EVENT"), (Lease, "LEASE"), (Namespace, "NAMESPACE")])
def test_exact_round_trip(wire: ModuleType, model: type[Any], name: str) -> None:
    roundtrip(model, getattr(wire, name))


def test_list_round_trip(wire: ModuleType) -> None:
    lst = {"apiVersion": "apps/v1", "kind": "DeploymentList",
           "metadata": {"resourceVersion": "99", "continue": "abc", "remainingItemCount": 3},
           "items": [wire.DEPLOYMENT, wire.DEPLOYMENT]}
    decoded = roundtrip(DeploymentList, lst)
    assert decoded.metadata.continue_ == "abc"
    assert isinstance(decoded.items, tuple) and len(decoded.items) == 2


def test_deployment_fields_are_typed(wire: ModuleType) -> None:
    d = roundtrip(Deployment, wire.DEPLOYMENT)
    assert d.spec.strategy.rolling_update.max_surge == "25%"
    assert d.spec.strategy.rolling_update.max_unavailable == 1
    assert d.spec.template.metadata.creation_timestamp is None
    assert d.metadata.owner_references[0].block_owner_deletion is True
    assert isinstance(d.spec.template.spec.containers, tuple)
    assert d.spec.template.spec.containers[0].resources.requests == {"cpu": 0.25}
    assert d.metadata.labels == {"app": "nginx", "controller": "example-foo"}


def test_managed_fields_stay_raw(wire: ModuleType) -> None:
    d = msgspec.json.decode(json.dumps(wire.DEPLOYMENT), type=Deployment)
    assert isinstance(d.metadata.managed_fields, msgspec.Raw)
    assert json.loads(bytes(d.metadata.managed_fields)) == wire.MANAGED_FIELDS


def test_absent_fields_stay_absent() -> None:
    foo = msgspec.json.decode(b'{"apiVersion":"samplecontroller.k8s.io/v1alpha1","kind":"Foo","metadata":{}}',
                              type=Foo)
    assert foo.spec is msgspec.UNSET
    assert json.loads(msgspec.json.encode(foo)) == {"apiVersion": "samplecontroller.k8s.io/v1alpha1",
                                                    "kind": "Foo", "metadata": {}}


def test_kind_defaults() -> None:
    foo = Foo(metadata=ObjectMeta(name="a", namespace="ns"), spec=FooSpec(deployment_name="d", replicas=2))
    assert json.loads(msgspec.json.encode(foo)) == {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
        "metadata": {"name": "a", "namespace": "ns"}, "spec": {"deploymentName": "d", "replicas": 2}}
    assert FooList().kind == "FooList"
    assert Deployment().api_version == "apps/v1"
    assert Pod().api_version == "v1"
    assert PodSet().api_version == "workloads.example.com/v1alpha1"


def test_frozen_and_replace() -> None:
    foo = Foo(spec=FooSpec(replicas=1))
    with pytest.raises(AttributeError):
        foo.spec = FooSpec(replicas=2)  # type: ignore[misc]
    changed = msgspec.structs.replace(foo, spec=FooSpec(replicas=2))
    assert changed.spec == FooSpec(replicas=2) and foo.spec == FooSpec(replicas=1)


def test_structs_are_untracked_by_gc(wire: ModuleType) -> None:
    import gc

    d = msgspec.json.decode(json.dumps(wire.DEPLOYMENT), type=Deployment)
    assert not gc.is_tracked(d) and not gc.is_tracked(d.metadata)


def test_wrong_type_is_a_clear_error() -> None:
    with pytest.raises(msgspec.ValidationError, match=r"\$\.spec\.replicas"):
        msgspec.json.decode(b'{"spec": {"replicas": "two"}}', type=Foo)


def test_resource_infos() -> None:
    assert (FOOS.group, FOOS.version, FOOS.resource, FOOS.kind, FOOS.namespaced) == (
        "samplecontroller.k8s.io", "v1alpha1", "foos", "Foo", True)
    assert FOOS.model is Foo and FOOS.list_model is FooList and "status" in FOOS.subresources
    assert DEPLOYMENTS.strategic_merge and not FOOS.strategic_merge
    assert PODSETS.short_names == ("ps",) and PODSETS.subresources == ("status",)


def test_podset_template_is_free_form() -> None:
    obj = {"apiVersion": "workloads.example.com/v1alpha1", "kind": "PodSet", "metadata": {"name": "ps"},
           "spec": {"replicas": 0, "template": {"metadata": {"labels": {"a": "b"}},
                                                "spec": {"containers": [{"name": "c", "image": "i"}]}}},
           "status": {"desired": 0, "current": 0, "podList": [], "state": "Pending", "message": ""}}
    ps = roundtrip(PodSet, obj)
    assert isinstance(ps.spec, PodSetSpec) and isinstance(ps.spec.template, dict)
    assert ps.spec.template["spec"]["containers"][0]["name"] == "c"
    assert ps.status.pod_list == ()


def test_scheme_registers_every_kind() -> None:
    """generated's scheme holds its own kinds only (Go's pkg/generated/.../scheme); combined with
    the built-in one as a kubebuilder main.go does."""
    from generated import scheme
    from samplecontroller.client.scheme import Scheme
    from samplecontroller.kubernetes import scheme as kubescheme

    assert scheme.SCHEME.info_for(Foo) is FOOS
    assert scheme.SCHEME.info_for_gvk("workloads.example.com", "v1alpha1", "PodSet") is PODSETS
    assert not scheme.SCHEME.recognizes(Deployment)
    combined = Scheme()
    kubescheme.add_to_scheme(combined)
    scheme.add_to_scheme(combined)
    assert combined.info_for_gvk("apps", "v1", "Deployment") is DEPLOYMENTS
    assert combined.info_for(Foo) is FOOS


_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=20)
_labels = st.dictionaries(_names, st.text(max_size=10), max_size=3)
_foo_objects = st.fixed_dictionaries(
    {"apiVersion": st.just("samplecontroller.k8s.io/v1alpha1"), "kind": st.just("Foo"),
     "metadata": st.fixed_dictionaries({"name": _names}, optional={"labels": _labels,
                                                                     "resourceVersion": st.text(max_size=5),
                                                                     "generation": st.integers(0, 2**53)})},
    optional={"spec": st.fixed_dictionaries({}, optional={"deploymentName": st.text(),
                                                          "replicas": st.integers(-(2**63), 2**63 - 1)}),
              "status": st.fixed_dictionaries({}, optional={"availableReplicas": st.integers(0, 2**31)})})


@settings(max_examples=150, deadline=None)
@given(_foo_objects)
def test_foo_round_trip_property(obj: dict[str, Any]) -> None:
    roundtrip(Foo, copy.deepcopy(obj))
