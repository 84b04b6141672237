"""The controllers' caches keep no managedFields (they never read them; see app.informer_factory)."""

from __future__ import annotations

import threading

import msgspec

from generated.apis.samplecontroller.v1alpha1 import Foo, FooSpec
from generated.clientset import Clientset
from samplecontroller.apiserver.server import LocalAPIServer
from samplecontroller.app import informer_factory
from samplecontroller.cache import strip_managed_fields
from samplecontroller.foo_reconciler import new_manager
from samplecontroller.rest import RESTClient

NS = "caches-test"


def test_the_classic_informers_cache_no_managed_fields(apiserver: LocalAPIServer) -> None:
    cs = Clientset(RESTClient.from_kubeconfig(apiserver.kubeconfig_path))
    cs.core_v1.namespaces().create({"metadata": {"name": NS}})
    foo = Foo(metadata={"name": "a", "namespace": NS}, spec=FooSpec(deployment_name="a", replicas=1))  # type: ignore[arg-type]
    created = cs.samplecontroller_v1alpha1.foos(NS).create(foo, field_manager="test")
    assert created.metadata.managed_fields is not msgspec.UNSET  # the server keeps them
    factory = informer_factory(cs, 0, NS)
    lister = factory.samplecontroller.v1alpha1.foos.lister()
    stop = threading.Event()
    factory.start(stop)
    try:
        assert factory.wait_for_cache_sync(stop)
        cached = lister.foos(NS).get("a")
        assert cached.metadata.managed_fields is msgspec.UNSET
        assert cached.metadata.resource_version == created.metadata.resource_version
    finally:
        stop.set()
        factory.shutdown()


def test_the_runtime_manager_cache_strips_managed_fields(apiserver: LocalAPIServer) -> None:
    mgr = new_manager(RESTClient.from_kubeconfig(apiserver.kubeconfig_path), resync=0)
    assert mgr.options.cache.default_transform is strip_managed_fields
