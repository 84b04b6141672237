"""The runtime client's ``apply`` with apply configurations (controller-runtime's ``client.Apply``
of applyconfigurations), against the embedded API server: only the fields set are sent, so an
apply of one field neither changes nor takes ownership of the others."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from generated.apis.samplecontroller.v1alpha1 import Foo, FooSpec
from generated.applyconfigurations.samplecontroller.v1alpha1 import Foo as FooApply
from generated.applyconfigurations.samplecontroller.v1alpha1 import FooSpec as FooSpecApply
from generated.applyconfigurations.samplecontroller.v1alpha1 import FooStatus as FooStatusApply
from samplecontroller.apimachinery import errors, objects
from samplecontroller.apimachinery.managedfields import managed_fieldset
from samplecontroller.foo_reconciler import SCHEME
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.rest.aio import AsyncRESTClient
from samplecontroller.runtime.client import Client
from samplecontroller.runtime.client.aio import AsyncClient


def _created(c: Client, ns: str, name: str) -> Foo:
    return c.create(Foo(metadata=ObjectMeta(name=name, namespace=ns),
                        spec=FooSpec(deployment_name="web", replicas=1)), field_owner="creator")


def test_apply_configuration_sends_only_the_fields_set(rest: Any, ns: str) -> None:
    c = Client.for_rest_client(rest, scheme=SCHEME, field_owner="scaler")
    _created(c, ns, "partial")
    config = FooApply(metadata=ObjectMeta(name="partial", namespace=ns), spec=FooSpecApply(replicas=1))
    applied = c.apply(config)
    assert isinstance(applied, FooApply)  # the server's answer, in the shape applied
    assert objects.to_dict(applied)["spec"] == {"deploymentName": "web", "replicas": 1}  # not overwritten
    live = c.get(Foo, ns, "partial")
    assert objects.to_dict(live)["spec"] == {"deploymentName": "web", "replicas": 1}
    assert managed_fieldset(live, "scaler") == {"f:spec": {"f:replicas": {}}}  # deploymentName stays creator's
    # replicas is shared with its creator now: changing it conflicts, naming the other manager
    with pytest.raises(errors.ConflictError, match="creator"):
        c.apply(FooApply(metadata=ObjectMeta(name="partial", namespace=ns), spec=FooSpecApply(replicas=3)))
    forced = c.apply(FooApply(metadata=ObjectMeta(name="partial", namespace=ns), spec=FooSpecApply(replicas=3)),
                     force=True)
    assert objects.to_dict(forced)["spec"] == {"deploymentName": "web", "replicas": 3}


def test_apply_dict_and_status_writer(rest: Any, ns: str) -> None:
    c = Client.for_rest_client(rest, scheme=SCHEME, field_owner="status-owner")
    _created(c, ns, "st")
    out = c.status().apply(_status_config(ns, "st", 2))
    assert objects.to_dict(out)["status"] == {"availableReplicas": 2}
    live = c.get(Foo, ns, "st")
    assert objects.to_dict(live)["spec"]["deploymentName"] == "web"
    assert managed_fieldset(live, "status-owner", "status") == {"f:status": {"f:availableReplicas": {}}}
    as_dict = c.apply({"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                       "metadata": {"name": "st", "namespace": ns}, "spec": {"deploymentName": "web"}},
                      field_owner="dict-owner")
    assert isinstance(as_dict, dict) and as_dict["spec"] == {"deploymentName": "web", "replicas": 1}
    assert managed_fieldset(c.get(Foo, ns, "st"), "dict-owner") == {"f:spec": {"f:deploymentName": {}}}


def _status_config(ns: str, name: str, available: int) -> FooApply:
    return FooApply(metadata=ObjectMeta(name=name, namespace=ns), status=FooStatusApply(available_replicas=available))


def test_async_client_applies_configurations(rest: Any, apiserver: Any, ns: str) -> None:
    Client.for_rest_client(rest, scheme=SCHEME).create(
        Foo(metadata=ObjectMeta(name="aio", namespace=ns), spec=FooSpec(deployment_name="web", replicas=1)),
        field_owner="creator")

    async def run() -> Any:
        arest = AsyncRESTClient.from_kubeconfig(str(apiserver.kubeconfig_path))
        try:
            c = AsyncClient.for_rest_client(arest, scheme=SCHEME, field_owner="aio-scaler")
            spec = await c.apply(FooApply(metadata=ObjectMeta(name="aio", namespace=ns),
                                          spec=FooSpecApply(replicas=1)))
            status = await c.status().apply(_status_config(ns, "aio", 1))
            return spec, status
        finally:
            await arest.close()

    spec, status = asyncio.run(run())
    assert isinstance(spec, FooApply) and objects.to_dict(spec)["spec"] == {"deploymentName": "web", "replicas": 1}
    assert objects.to_dict(status)["status"] == {"availableReplicas": 1}
    live = Client.for_rest_client(rest, scheme=SCHEME).get(Foo, ns, "aio")
    assert managed_fieldset(live, "aio-scaler") == {"f:spec": {"f:replicas": {}}}


def test_async_client_writes_are_recorded_for_read_your_own_writes(rest: Any, apiserver: Any, ns: str) -> None:
    """Inside a reconcile's recording the AsyncClient records every write as the sync Client does
    (create, update, patch, apply, status and delete; dry runs not), so the controller holds the key."""
    from samplecontroller.runtime.client import MergeFrom
    from samplecontroller.runtime.consistency import recorder

    async def run() -> list[tuple[str, str, bool]]:
        arest = AsyncRESTClient.from_kubeconfig(str(apiserver.kubeconfig_path))
        try:
            c = AsyncClient.for_rest_client(arest, scheme=SCHEME, field_owner="aio-writer")
            with recorder.recording() as rec:
                foo = Foo(metadata=ObjectMeta(name="rec", namespace=ns), spec=FooSpec(deployment_name="web"))
                await c.create(foo, dry_run=True)  # not recorded
                created = await c.create(foo)
                patched = await c.patch(created, MergeFrom(created))
                await c.apply(FooApply(metadata=ObjectMeta(name="rec", namespace=ns), spec=FooSpecApply(replicas=2)))
                await c.status().apply(_status_config(ns, "rec", 1))
                await c.delete(patched)
            return [(w.name, w.resource_version, w.deleted) for w in rec.writes]
        finally:
            await arest.close()

    writes = asyncio.run(run())
    assert [name for name, _, _ in writes] == ["rec"] * 5
    assert all(rv for _, rv, deleted in writes if not deleted) and [d for _, _, d in writes] == [False] * 4 + [True]
