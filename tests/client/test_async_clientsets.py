"""The generated async clientsets (CRD kinds and built-ins) against the embedded API server:
the same models as the sync clientsets, verbs awaited, watches as async iterators (issue 25)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from generated.apis.samplecontroller.v1alpha1 import Foo, FooSpec
from generated.clientset import AsyncClientset
from samplecontroller.apimachinery import errors
from samplecontroller.kubernetes.apis.core.v1 import ConfigMap
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.kubernetes.clientset import AsyncClientset as KubeAsyncClientset
from samplecontroller.rest import RESTClient
from samplecontroller.rest.aio import AsyncRESTClient
from tests.live import ns, rest

__all__ = ["ns", "rest"]


def test_crd_and_builtin_clientsets(rest: RESTClient, ns: str) -> None:
    async def go() -> None:
        async with AsyncRESTClient(rest) as arest:
            foos = AsyncClientset(arest).samplecontroller_v1alpha1().foos(ns)
            created = await foos.create(Foo(metadata=ObjectMeta(name="f1", namespace=ns),
                                            spec=FooSpec(deployment_name="d1", replicas=1)))
            assert isinstance(created, Foo) and created.metadata.uid
            assert (await foos.get("f1")).spec.deployment_name == "d1"  # type: ignore[union-attr]
            with pytest.raises(errors.AlreadyExistsError):
                await foos.create(created)
            cms = KubeAsyncClientset(arest).core_v1().configmaps(ns)
            listed = await cms.list()
            watch = await cms.watch(resource_version=listed.metadata.resource_version or "0")
            await cms.create(ConfigMap(metadata=ObjectMeta(name="c1", namespace=ns), data={"k": "v"}))
            async with watch:
                async for event in watch:
                    assert event.type == "ADDED" and isinstance(event.object, ConfigMap)
                    assert event.object.data == {"k": "v"}
                    break
            await cms.delete("c1")
            with pytest.raises(errors.NotFoundError):
                await cms.get("c1")

    asyncio.run(asyncio.wait_for(go(), 60))


def test_async_clientset_constructors(rest: RESTClient, apiserver: Any) -> None:
    cs = AsyncClientset.from_kubeconfig(str(apiserver.kubeconfig_path))
    assert isinstance(cs.rest, AsyncRESTClient) and cs.rest.host == rest.host

    async def go() -> int:
        async with cs.rest:
            return len((await cs.samplecontroller_v1alpha1().foos().list()).items) >= 0

    assert asyncio.run(go())
