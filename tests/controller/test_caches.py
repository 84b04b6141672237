"""The controllers' caches keep no managedFields (they never read them; see app.informer_factories)."""

from __future__ import annotations

import threading

import msgspec

from generated.apis.samplecontroller.v1alpha1 import Foo, FooSpec
from generated.clientset import Clientset
from samplecontroller.apiserver.server import LocalAPIServer
from samplecontroller.app import informer_factories
from samplecontroller.cache import strip_managed_fields
from samplecontroller.foo import new_deployment
from samplecontroller.foo_reconciler import new_manager
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.kubernetes.clientset import Clientset as KubeClientset
from samplecontroller.rest import RESTClient

NS = "caches-test"


def test_the_classic_informers_cache_no_managed_fields(apiserver: LocalAPIServer) -> None:
    """Both factories (built-in Deployments, generated Foos) start on one stop, sync, and strip."""
    rest = RESTClient.from_kubeconfig(apiserver.kubeconfig_path)
    cs, kube = Clientset(rest), KubeClientset(rest)
    kube.core_v1().namespaces().create({"metadata": {"name": NS}})
    foo = Foo(metadata=ObjectMeta(name="a", namespace=NS), spec=FooSpec(deployment_name="a", replicas=1))
    created = cs.samplecontroller_v1alpha1().foos(NS).create(foo, field_manager="test")
    assert created.metadata.managed_fields is not msgspec.UNSET  # the server keeps them
    deployment = kube.apps_v1().deployments(NS).create(new_deployment(created), field_manager="test")
    kube_factory, sample_factory = informer_factories(kube, cs, 0, NS)
    foos = sample_factory.samplecontroller.v1alpha1.foos.lister()
    deployments = kube_factory.apps.v1.deployments.lister()
    stop = threading.Event()
    kube_factory.start(stop)
    sample_factory.start(stop)
    try:
        assert all(kube_factory.wait_for_cache_sync(stop).values())
        assert all(sample_factory.wait_for_cache_sync(stop).values())
        cached = foos.foos(NS).get("a")
        assert cached.metadata.managed_fields is msgspec.UNSET
        assert cached.metadata.resource_version == created.metadata.resource_version
        cached_deployment = deployments.deployments(NS).get("a")
        assert cached_deployment.metadata.managed_fields is msgspec.UNSET
        assert cached_deployment.metadata.resource_version == deployment.metadata.resource_version
    finally:
        stop.set()
        kube_factory.shutdown()
        sample_factory.shutdown()


def test_the_runtime_manager_cache_strips_managed_fields(apiserver: LocalAPIServer) -> None:
    mgr = new_manager(RESTClient.from_kubeconfig(apiserver.kubeconfig_path), resync=0)
    assert mgr.options.cache.default_transform is strip_managed_fields
