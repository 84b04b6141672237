"""The runtime layer's fake client (controller-runtime's fake.NewClientBuilder) and a reconciler
tested with it: status subresource semantics, conflicts, generateName, deletion with finalizers,
indexes, interceptors."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from generated.apis.samplecontroller.v1alpha1 import Foo, FooStatus
from samplecontroller import foo as domain
from samplecontroller.apimachinery import errors, meta
from samplecontroller.apimachinery.finalizers import add_finalizer, remove_finalizer
from samplecontroller.foo_reconciler import SCHEME, FooReconciler
from samplecontroller.kubernetes.apis.apps.v1 import Deployment, DeploymentStatus
from samplecontroller.kubernetes.apis.core.v1 import ConfigMap
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.record import FakeRecorder
from samplecontroller.runtime.client import Client, MergeFrom, Patch
from samplecontroller.runtime.client.fake import ClientBuilder
from samplecontroller.runtime.client.interceptor import Funcs
from samplecontroller.runtime.reconcile import Request, Result
from tests.runtime.objects import deployment, foo

F = "example.com/cleanup"


def fake(*objs: Any) -> Client:
    return ClientBuilder().with_scheme(SCHEME).with_objects(*objs).build()


def test_build_needs_a_scheme_and_known_kinds() -> None:
    with pytest.raises(ValueError, match="with_scheme"):
        ClientBuilder().build()
    with pytest.raises(ValueError, match="not registered"):
        ClientBuilder().with_scheme(SCHEME).with_objects(msgspec.Struct()).build()


def test_seeded_objects_are_read_back_with_their_status() -> None:
    seeded = msgspec.structs.replace(foo(), status=FooStatus(available_replicas=3))
    c = fake(seeded, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "ns"}})
    got = c.get(Foo, "ns", "f")
    assert got.status == FooStatus(available_replicas=3)
    assert got.spec == seeded.spec
    assert c.get(ConfigMap, "ns", "cm").metadata.name == "cm"
    assert [meta.get_name(x) for x in c.list(Foo, namespace="ns")] == ["f"]
    with pytest.raises(errors.NotFoundError):
        c.get(Foo, "ns", "missing")


def test_update_ignores_status_and_status_update_ignores_spec() -> None:
    c = fake(foo(replicas=1))
    live = c.get(Foo, "ns", "f")
    assert live.spec is not msgspec.UNSET
    changed = msgspec.structs.replace(live, spec=msgspec.structs.replace(live.spec, replicas=5),
                                      status=FooStatus(available_replicas=9))
    updated = c.update(changed)
    assert updated.status is msgspec.UNSET
    assert updated.spec == changed.spec
    assert updated.metadata.generation == 2
    # a status write with a changed spec changes only the status
    stale_spec = msgspec.structs.replace(updated, spec=live.spec, status=FooStatus(available_replicas=2))
    after = c.status().update(stale_spec)
    assert after.status == FooStatus(available_replicas=2)
    assert after.spec == changed.spec
    assert after.metadata.generation == 2
    patched = c.status().patch(msgspec.structs.replace(after, status=FooStatus(available_replicas=4)),
                               MergeFrom(after))
    assert patched.status == FooStatus(available_replicas=4)


def test_create_drops_status_of_a_status_subresource_type() -> None:
    c = fake()
    created = c.create(msgspec.structs.replace(foo(rv=""), metadata=ObjectMeta(name="n", namespace="ns"),
                                               status=FooStatus(available_replicas=1)))
    assert created.status is msgspec.UNSET
    assert created.metadata.uid and created.metadata.resource_version and created.metadata.generation == 1


def test_explicit_status_subresource_types() -> None:
    # ConfigMap has no status subresource: a status write is NotFound, as controller-runtime's fake
    c = ClientBuilder().with_scheme(SCHEME).with_objects(foo()).with_status_subresource(Deployment).build()
    live = c.get(Foo, "ns", "f")
    # Foo is not listed, so update writes its status too and a status write is NotFound
    assert c.update(msgspec.structs.replace(live, status=FooStatus(available_replicas=7))).status == FooStatus(
        available_replicas=7)
    with pytest.raises(errors.NotFoundError):
        c.status().update(c.get(Foo, "ns", "f"))
    with pytest.raises(errors.NotFoundError):
        c.status().patch(live, MergeFrom(live))


def test_a_stale_resource_version_is_a_conflict() -> None:
    c = fake(foo())
    live = c.get(Foo, "ns", "f")
    c.update(msgspec.structs.replace(live, metadata=msgspec.structs.replace(live.metadata, labels={"a": "1"})))
    with pytest.raises(errors.ConflictError):
        c.update(live)
    with pytest.raises(errors.ConflictError):
        c.status().update(msgspec.structs.replace(live, status=FooStatus(available_replicas=1)))
    with pytest.raises(errors.ConflictError):
        c.patch(msgspec.structs.replace(live, metadata=msgspec.structs.replace(live.metadata, labels={"b": "2"})),
                MergeFrom(live, optimistic_lock=True))


def test_generate_name() -> None:
    c = fake()
    created = c.create(ConfigMap(metadata=ObjectMeta(generate_name="cm-", namespace="ns")))
    assert (created.metadata.name or "").startswith("cm-") and len(created.metadata.name or "") > 3
    with pytest.raises(errors.AlreadyExistsError):
        c.create(ConfigMap(metadata=ObjectMeta(name=created.metadata.name, namespace="ns")))


def test_delete_with_finalizers_sets_the_deletion_timestamp_until_the_last_one_is_removed() -> None:
    with_finalizer, _ = add_finalizer(ConfigMap(metadata=ObjectMeta(name="cm", namespace="ns")), F)
    c = fake(with_finalizer)
    c.delete(c.get(ConfigMap, "ns", "cm"))
    deleting = c.get(ConfigMap, "ns", "cm")
    assert isinstance(deleting.metadata.deletion_timestamp, str)
    c.delete(deleting)  # again: nothing changes
    assert c.get(ConfigMap, "ns", "cm").metadata.deletion_timestamp == deleting.metadata.deletion_timestamp
    # an update cannot clear it
    cleared = msgspec.structs.replace(deleting, metadata=msgspec.structs.replace(
        deleting.metadata, deletion_timestamp=None), data={"k": "v"})
    still = c.update(cleared)
    assert still.metadata.deletion_timestamp == deleting.metadata.deletion_timestamp
    without, changed = remove_finalizer(still, F)
    assert changed
    c.update(without)
    with pytest.raises(errors.NotFoundError):
        c.get(ConfigMap, "ns", "cm")


def test_delete_without_finalizers_and_preconditions() -> None:
    c = fake(ConfigMap(metadata=ObjectMeta(name="a", namespace="ns")), ConfigMap(metadata=ObjectMeta(
        name="b", namespace="ns")))
    c.delete(c.get(ConfigMap, "ns", "a"))
    with pytest.raises(errors.NotFoundError):
        c.get(ConfigMap, "ns", "a")
    with pytest.raises(errors.ConflictError, match="Precondition failed: uid"):
        c.delete(c.get(ConfigMap, "ns", "b"), preconditions={"uid": "not-it"})
    c.delete(c.get(ConfigMap, "ns", "b"), preconditions={"uid": c.get(ConfigMap, "ns", "b").metadata.uid or ""})
    assert c.list(ConfigMap, namespace="ns") == []


def test_an_object_being_deleted_needs_finalizers() -> None:
    doomed = ConfigMap(metadata=ObjectMeta(name="cm", namespace="ns", deletion_timestamp="2024-01-01T00:00:00Z"))
    with pytest.raises(ValueError, match="deletionTimestamp but no finalizers"):
        fake(doomed)
    with pytest.raises(errors.InvalidError, match="deletionTimestamp but no finalizers"):
        fake().create(doomed)
    fake(add_finalizer(doomed, F)[0])  # fine with a finalizer


def test_field_index_and_label_selector() -> None:
    c = (ClientBuilder().with_scheme(SCHEME)
         .with_objects(foo("a", deployment_name="x", labels={"t": "1"}), foo("b", uid="u-b", deployment_name="y"))
         .with_index(Foo, domain.DEPLOYMENT_NAME_FIELD, domain.deployment_names).build())
    assert [meta.get_name(f) for f in c.list(Foo, matching_fields={domain.DEPLOYMENT_NAME_FIELD: "y"})] == ["b"]
    assert [meta.get_name(f) for f in c.list(Foo, label_selector={"t": "1"})] == ["a"]
    assert [meta.get_name(f) for f in c.list(Foo, namespace="ns", matching_fields={"metadata.name": "a"})] == ["a"]


def test_dry_run_stores_nothing() -> None:
    c = fake(foo())
    live = c.get(Foo, "ns", "f")
    new = ConfigMap(metadata=ObjectMeta(name="dry", namespace="ns"))
    assert c.create(new, dry_run=True) is new
    changed = msgspec.structs.replace(live, status=FooStatus(available_replicas=5))
    assert c.update(changed, dry_run=True) is changed
    assert c.status().update(changed, dry_run=True) is changed
    assert c.status().patch(changed, MergeFrom(live), dry_run=True) is changed
    assert c.patch(changed, MergeFrom(live), dry_run=True) is changed
    c.delete(live, dry_run=True)
    assert c.get(Foo, "ns", "f") == live
    assert c.list(ConfigMap, namespace="ns") == []


def test_interceptors_see_the_inner_client() -> None:
    calls: list[str] = []

    def get(client: Client, model: type[Any], namespace: str, name: str, /) -> Any:
        calls.append(f"get {name}")
        return client.get(model, namespace, name)

    def update(client: Client, obj: Any, /, **options: Any) -> Any:
        raise errors.new_conflict("", "configmaps", meta.get_name(obj), "intercepted")

    c = (ClientBuilder().with_scheme(SCHEME).with_objects(ConfigMap(metadata=ObjectMeta(name="cm", namespace="ns")))
         .with_interceptor_funcs(Funcs(get=get, update=update)).build())
    live = c.get(ConfigMap, "ns", "cm")
    assert calls == ["get cm"]
    with pytest.raises(errors.ConflictError, match="intercepted"):
        c.update(live)
    assert c.create(ConfigMap(metadata=ObjectMeta(name="new", namespace="ns"))).metadata.name == "new"


# -- a reconciler on the fake client ---------------------------------------------------------


def reconcile(c: Client, recorder: FakeRecorder, name: str = "f") -> Result:
    return FooReconciler(c, recorder).reconcile(Request("ns", name))


def test_foo_reconciler_creates_the_deployment_and_records_the_event() -> None:
    c = fake(foo(replicas=2))
    recorder = FakeRecorder()
    assert reconcile(c, recorder) == Result()
    dep = c.get(Deployment, "ns", "d")
    assert dep.spec is not msgspec.UNSET and dep.spec.replicas == 2
    assert domain.is_controlled_by(dep, c.get(Foo, "ns", "f"))
    assert recorder.drain() == [f"Normal {domain.SUCCESS_SYNCED} {domain.MESSAGE_RESOURCE_SYNCED}"]


def test_foo_reconciler_copies_available_replicas_to_the_status() -> None:
    owner = foo(replicas=2)
    dep = msgspec.structs.replace(deployment(owner=owner), status=DeploymentStatus(available_replicas=2))
    c = fake(owner, dep)
    reconcile(c, FakeRecorder())
    got = c.get(Foo, "ns", "f")
    assert got.status is not msgspec.UNSET and got.status.available_replicas == 2
    # the replicas are patched to the Foo's
    d = c.get(Deployment, "ns", "d")
    assert d.spec is not msgspec.UNSET and d.spec.replicas == 2


def test_foo_reconciler_warns_about_a_deployment_it_does_not_own() -> None:
    c = fake(foo(), deployment())
    recorder = FakeRecorder()
    result = reconcile(c, recorder)
    assert result.requeue_after
    assert recorder.drain() == [f"Warning {domain.ERR_RESOURCE_EXISTS} "
                                f"{domain.MESSAGE_RESOURCE_EXISTS.format('d')}"]


def test_foo_reconciler_on_a_missing_foo_does_nothing() -> None:
    c = fake()
    assert reconcile(c, FakeRecorder(), "gone") == Result()


def test_a_status_patch_interceptor_sees_the_status_write() -> None:
    seen: list[str] = []

    def status_patch(client: Client, subresource: str, obj: Any, patch: Patch, /, **options: Any) -> Any:
        seen.append(subresource)
        return client.status().patch(obj, patch, **options)

    def status_update(client: Client, subresource: str, obj: Any, /, **options: Any) -> Any:
        seen.append(subresource)
        return client.status().update(obj, **options)

    owner = foo()
    c = (ClientBuilder().with_scheme(SCHEME)
         .with_objects(owner, msgspec.structs.replace(deployment(owner=owner),
                                                      status=DeploymentStatus(available_replicas=1)))
         .with_interceptor_funcs(Funcs(sub_resource_update=status_update, sub_resource_patch=status_patch))
         .build())
    reconcile(c, FakeRecorder())
    assert seen == ["status"]


def test_foo_reconciler_writes_the_status_as_a_merge_patch_and_a_deleted_foo_is_done() -> None:
    owner = foo(replicas=2)
    patches: list[tuple[str, bytes]] = []

    def status_patch(client: Client, subresource: str, obj: Any, patch: Patch, /, **options: Any) -> Any:
        patches.append((patch.type, patch.data(obj)))
        raise errors.new_not_found("samplecontroller.k8s.io", "foos", meta.get_name(obj))

    c = (ClientBuilder().with_scheme(SCHEME)
         .with_objects(owner, msgspec.structs.replace(deployment(owner=owner),
                                                      status=DeploymentStatus(available_replicas=2)))
         .with_interceptor_funcs(Funcs(sub_resource_patch=status_patch)).build())
    assert reconcile(c, FakeRecorder()) == Result()
    assert patches == [("application/merge-patch+json", b'{"status":{"availableReplicas":2}}')]
