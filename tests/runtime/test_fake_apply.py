"""The fake runtime client tracks managed fields and reports apply conflicts as the API server
does: the same sequence of writes gives the same ``metadata.managedFields`` and the same 409 on the
fake and on the embedded server."""

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
from samplecontroller.kubernetes.apis.apps.v1 import Deployment, DeploymentSpec
from samplecontroller.kubernetes.apis.core.v1 import Container, PodSpec, PodTemplateSpec
from samplecontroller.kubernetes.apis.meta.v1 import LabelSelector, ObjectMeta
from samplecontroller.runtime.client import Client
from samplecontroller.runtime.client.fake import ClientBuilder
from samplecontroller.runtime.client.interceptor import Funcs


def _scenario(c: Client, ns: str) -> tuple[list[dict[str, Any]], str, Foo]:
    """Create as one manager, apply part of it as another, conflict, force, apply status."""
    c.create(Foo(metadata=ObjectMeta(name="foo", namespace=ns), spec=FooSpec(deployment_name="web", replicas=1)),
             field_owner="creator")
    key = ObjectMeta(name="foo", namespace=ns)
    c.apply(FooApply(metadata=key, spec=FooSpecApply(replicas=1)), field_owner="scaler")
    with pytest.raises(errors.ConflictError) as conflict:
        c.apply(FooApply(metadata=key, spec=FooSpecApply(replicas=3)), field_owner="scaler")
    assert conflict.value.code == 409
    c.apply(FooApply(metadata=key, spec=FooSpecApply(replicas=3)), field_owner="scaler", force=True)
    c.status().apply(FooApply(metadata=key, status=FooStatusApply(available_replicas=3)), field_owner="status")
    live = c.get(Foo, ns, "foo")
    entries = [{k: v for k, v in e.items() if k != "time"}
               for e in objects.to_dict(live)["metadata"]["managedFields"]]
    return entries, str(conflict.value), live


def test_fake_client_manages_fields_as_the_server_does(rest: Any, ns: str) -> None:
    fake = ClientBuilder().with_scheme(SCHEME).build()
    fake_entries, fake_conflict, fake_live = _scenario(fake, ns)
    server_entries, server_conflict, _ = _scenario(Client.for_rest_client(rest, scheme=SCHEME), ns)
    assert fake_conflict == server_conflict
    assert 'conflict with "creator"' in fake_conflict and ".spec.replicas" in fake_conflict
    assert fake_entries == server_entries
    live = objects.to_dict(fake_live)
    assert live["spec"] == {"deploymentName": "web", "replicas": 3} and live["status"] == {"availableReplicas": 3}
    assert managed_fieldset(fake_live, "scaler") == {"f:spec": {"f:replicas": {}}}


def test_fake_apply_removes_fields_the_manager_stops_applying_and_merges_lists_by_key() -> None:
    fake = ClientBuilder().with_scheme(SCHEME).with_field_owner("ctrl").build()

    def deployment(*containers: str, labels: dict[str, str] | None = None) -> Deployment:
        md = ObjectMeta(name="web", namespace="default", labels=labels) if labels else ObjectMeta(
            name="web", namespace="default")
        return Deployment(metadata=md, spec=DeploymentSpec(
            selector=LabelSelector(match_labels={"app": "web"}),
            template=PodTemplateSpec(metadata=ObjectMeta(labels={"app": "web"}), spec=PodSpec(
                containers=tuple(Container(name=n, image=f"{n}:1") for n in containers)))))

    fake.apply(deployment("app", labels={"team": "a"}))
    # another manager adds a container of its own: containers merge by name, no conflict
    fake.apply(deployment("sidecar"), field_owner="injector")
    assert _containers(fake) == ["app", "sidecar"]
    # the first manager stops applying its label: removed; the injector's container stays
    fake.apply(deployment("app"))
    live = objects.to_dict(fake.get(Deployment, "default", "web"))
    assert "labels" not in live["metadata"] and _containers(fake) == ["app", "sidecar"]


def _containers(c: Client) -> list[str]:
    live = objects.to_dict(c.get(Deployment, "default", "web"))
    return [x["name"] for x in live["spec"]["template"]["spec"]["containers"]]


def test_async_fake_and_interceptors_apply_with_conflicts() -> None:
    seen: list[str] = []

    def patch(client: Client, obj: Any, patch: Any, /, **options: Any) -> Any:
        seen.append(type(patch).__name__)
        return client.patch(obj, patch, **options)

    builder = ClientBuilder().with_scheme(SCHEME).with_field_owner("async-owner")
    fake = builder.with_interceptor_funcs(Funcs(patch=patch)).build_async()
    key = ObjectMeta(name="a", namespace="default")

    async def run() -> None:
        await fake.apply(FooApply(metadata=key, spec=FooSpecApply(replicas=1)))
        with pytest.raises(errors.ConflictError, match='conflict with "async-owner"'):
            await fake.apply(FooApply(metadata=key, spec=FooSpecApply(replicas=2)), field_owner="other")
        await fake.status().apply(FooApply(metadata=key, status=FooStatusApply(available_replicas=1)))

    asyncio.run(run())
    live = fake.sync.get(Foo, "default", "a")
    assert managed_fieldset(live, "async-owner") == {"f:spec": {"f:replicas": {}}}
    assert managed_fieldset(live, "async-owner", "status") == {"f:status": {"f:availableReplicas": {}}}
    assert seen == ["Apply", "Apply"]  # the conflicting apply and the main one went through the interceptor
