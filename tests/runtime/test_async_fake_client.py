"""The async fake client (``ClientBuilder.build_async()``): the sync fake's tracker semantics
awaited, and the async Foo reconciler unit-tested with it (issue 25). These are ``async def``
tests, run by the samplecontroller pytest plugin."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from generated.apis.samplecontroller.v1alpha1 import Foo, FooStatus
from samplecontroller import foo as domain
from samplecontroller.apimachinery import errors, meta
from samplecontroller.apimachinery.finalizers import add_finalizer, remove_finalizer
from samplecontroller.foo_reconciler import SCHEME
from samplecontroller.foo_reconciler_async import AsyncFooReconciler
from samplecontroller.kubernetes.apis.apps.v1 import Deployment, DeploymentStatus
from samplecontroller.kubernetes.apis.core.v1 import ConfigMap
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.record import FakeRecorder
from samplecontroller.runtime.client import Client, MergeFrom, Patch
from samplecontroller.runtime.client.aio import (
    AsyncClient,
    FakeAsyncClient,
    create_or_patch,
    create_or_update,
)
from samplecontroller.runtime.client.fake import ClientBuilder
from samplecontroller.runtime.client.interceptor import Funcs
from samplecontroller.runtime.reconcile import Request, Result
from tests.runtime.objects import deployment, foo

F = "example.com/cleanup"


def fake(*objs: Any) -> FakeAsyncClient:
    return ClientBuilder().with_scheme(SCHEME).with_objects(*objs).build_async()


async def test_reads_writes_status_and_conflicts() -> None:
    c = fake(foo(replicas=1))
    assert isinstance(c, AsyncClient)
    live = await c.get(Foo, "ns", "f")
    assert live.spec is not msgspec.UNSET
    changed = msgspec.structs.replace(live, spec=msgspec.structs.replace(live.spec, replicas=5),
                                      status=FooStatus(available_replicas=9))
    updated = await c.update(changed)
    assert updated.status is msgspec.UNSET  # the status subresource ignores .status on update
    with pytest.raises(errors.ConflictError):
        await c.update(changed)  # stale resourceVersion
    status = await c.status().update(msgspec.structs.replace(updated, status=FooStatus(available_replicas=2)))
    assert status.status == FooStatus(available_replicas=2)
    labelled = msgspec.structs.replace(status, metadata=msgspec.structs.replace(status.metadata, labels={"a": "b"}))
    patched = await c.patch(labelled, MergeFrom(status, optimistic_lock=True))
    assert patched.metadata.labels == {"a": "b"}
    with pytest.raises(errors.ConflictError):
        await c.patch(labelled, MergeFrom(status, optimistic_lock=True))  # status is stale now
    assert [meta.get_name(f) for f in await c.list(Foo, namespace="ns")] == ["f"]
    with pytest.raises(errors.NotFoundError):
        await c.get(Foo, "ns", "missing")


async def test_generate_name_and_finalizers() -> None:
    c = fake()
    cm = await c.create(ConfigMap(metadata=ObjectMeta(generate_name="cm-", namespace="ns")))
    assert (cm.metadata.name or "").startswith("cm-") and len(cm.metadata.name or "") > 3
    held = await c.create(add_finalizer(ConfigMap(metadata=ObjectMeta(name="held", namespace="ns")), F)[0])
    await c.delete(held)
    deleting = await c.get(ConfigMap, "ns", "held")
    assert deleting.metadata.deletion_timestamp
    await c.update(remove_finalizer(deleting, F)[0])
    with pytest.raises(errors.NotFoundError):
        await c.get(ConfigMap, "ns", "held")


async def test_interceptors_and_controllerutil() -> None:
    seen: list[str] = []

    def status_patch(client: Client, subresource: str, obj: Any, patch: Patch, /, **options: Any) -> Any:
        seen.append(subresource)
        return client.status().patch(obj, patch, **options)

    c = ClientBuilder().with_scheme(SCHEME).with_interceptor_funcs(Funcs(sub_resource_patch=status_patch)) \
        .build_async()
    cm, result = await create_or_update(c, ConfigMap(metadata=ObjectMeta(name="c", namespace="ns")),
                                        lambda o: msgspec.structs.replace(o, data={"a": "1"}))
    assert result == "created" and cm.data == {"a": "1"}
    _, result = await create_or_update(c, cm, lambda o: o)
    assert result == "unchanged"
    await c.create(foo())
    _, result = await create_or_patch(c, foo(), lambda o: msgspec.structs.replace(
        o, status=FooStatus(available_replicas=4)))
    assert result == "updatedStatusOnly" and seen == ["status"]
    assert (await c.get(Foo, "ns", "f")).status == FooStatus(available_replicas=4)


async def test_async_foo_reconciler_creates_the_deployment_and_copies_the_status() -> None:
    owner = foo(replicas=2)
    c = fake(owner)
    recorder = FakeRecorder()
    reconciler = AsyncFooReconciler(c, recorder)
    assert await reconciler.reconcile(Request("ns", "f")) == Result()
    dep = await c.get(Deployment, "ns", "d")
    assert dep.spec is not msgspec.UNSET and dep.spec.replicas == 2
    assert domain.is_controlled_by(dep, owner)
    assert recorder.drain() == [f"Normal {domain.SUCCESS_SYNCED} {domain.MESSAGE_RESOURCE_SYNCED}"]
    await c.status().update(msgspec.structs.replace(dep, status=DeploymentStatus(available_replicas=2)))
    await reconciler.reconcile(Request("ns", "f"))
    got = await c.get(Foo, "ns", "f")
    assert got.status is not msgspec.UNSET and got.status.available_replicas == 2


async def test_async_foo_reconciler_warns_about_a_deployment_it_does_not_own_and_ignores_a_missing_foo() -> None:
    c = fake(foo(), deployment())
    recorder = FakeRecorder()
    reconciler = AsyncFooReconciler(c, recorder)
    assert (await reconciler.reconcile(Request("ns", "f"))).requeue_after
    assert recorder.drain() == [f"Warning {domain.ERR_RESOURCE_EXISTS} {domain.MESSAGE_RESOURCE_EXISTS.format('d')}"]
    assert await reconciler.reconcile(Request("ns", "gone")) == Result()
