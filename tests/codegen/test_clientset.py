"""The generated typed clientset, fake clientset, listers and informers (generated/ of the repo)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

try:
    from generated.clientset import Clientset
    from generated.clientset.fake import Clientset as FakeClientset
    from generated.informers import SharedInformerFactory
    from generated.listers.samplecontroller.v1alpha1 import FooLister
    from samplecontroller.apimachinery import errors
    from samplecontroller.cache import ResourceEventHandlerFuncs
    from samplecontroller.client.resource import ResourceClient
    from samplecontroller.kubernetes.clientset import Clientset as KubeClientset
    from samplecontroller.kubernetes.clientset.fake import Clientset as FakeKubeClientset
    from samplecontroller.rest import RESTClient
except ImportError as exc:  # the machinery lands in parallel
    pytest.skip(f"machinery not importable yet: {exc}", allow_module_level=True)

from generated.apis.samplecontroller.v1alpha1 import Foo, FooList, FooSpec, FooStatus
from generated.apis.workloads.v1alpha1 import PodSet, PodSetSpec
from samplecontroller.kubernetes.apis.apps.v1 import Deployment, DeploymentList
from samplecontroller.kubernetes.apis.core.v1 import Namespace
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta


def foo(name: str, ns: str = "default", labels: dict[str, str] | None = None, replicas: int = 1) -> Foo:
    return Foo(metadata=ObjectMeta(name=name, namespace=ns, labels=labels or msgspec.UNSET),
               spec=FooSpec(deployment_name=name, replicas=replicas))


def test_typed_clients_wrap_resource_client() -> None:
    rest = RESTClient.__new__(RESTClient)  # never used for I/O here
    cs = Clientset(rest)
    foos = cs.samplecontroller_v1alpha1().foos("ns1")
    assert isinstance(foos, ResourceClient) and foos.namespace == "ns1"
    assert foos.info.resource == "foos" and foos.info.model is Foo
    kube = KubeClientset(rest)
    assert kube.apps_v1().deployments("x").info.kind == "Deployment"
    assert kube.core_v1().namespaces().info.namespaced is False
    assert cs.workloads_v1alpha1().podsets("p").info.short_names == ("ps",)


def test_fake_seeded_get_list_and_selectors() -> None:
    cs = FakeClientset(foo("a", labels={"app": "x"}), foo("b", labels={"app": "y"}), foo("c", ns="other"))
    got = cs.samplecontroller_v1alpha1().foos("default").get("a")
    assert isinstance(got, Foo) and got.spec == FooSpec(deployment_name="a", replicas=1)
    assert got.metadata.resource_version  # the tracker sets one
    lst = cs.samplecontroller_v1alpha1().foos("default").list(label_selector="app=y")
    assert isinstance(lst, FooList) and [f.metadata.name for f in lst.items] == ["b"]
    every = cs.samplecontroller_v1alpha1().foos(None).list()
    assert sorted(str(f.metadata.name) for f in every.items) == ["a", "b", "c"]
    assert [a.verb for a in cs.actions()] == ["get", "list", "list"]


def test_fake_create_update_status_and_delete() -> None:
    cs = FakeClientset()
    foos = cs.samplecontroller_v1alpha1().foos("default")
    created = foos.create(foo("a"))
    rv = created.metadata.resource_version
    with pytest.raises(errors.AlreadyExistsError):
        foos.create(foo("a"))
    status = foos.update_status(msgspec.structs.replace(created, status=FooStatus(available_replicas=1)))
    assert status.status == FooStatus(available_replicas=1) and status.metadata.resource_version != rv
    # the status subresource ignores spec changes, update ignores status changes
    spec_change = msgspec.structs.replace(status, spec=FooSpec(deployment_name="a", replicas=5))
    assert foos.update_status(spec_change).spec == FooSpec(deployment_name="a", replicas=1)
    foos.delete("a")
    with pytest.raises(errors.NotFoundError) as info:
        foos.get("a")
    assert errors.is_not_found(info.value)
    verbs = [(a.verb, a.subresource) for a in cs.actions()]
    assert verbs == [("create", ""), ("create", ""), ("update", "status"), ("update", "status"),
                     ("delete", ""), ("get", "")]


def test_fake_reactor_injects_errors() -> None:
    cs = FakeKubeClientset()

    def boom(action: Any) -> tuple[bool, Any, BaseException | None]:
        return True, None, errors.new_conflict("apps", "deployments", "d", "injected")

    cs.prepend_reactor("create", "deployments", boom)
    with pytest.raises(errors.ConflictError):
        cs.apps_v1().deployments("default").create(Deployment(metadata=ObjectMeta(name="d", namespace="default")))
    assert cs.core_v1().namespaces().create(Namespace(metadata=ObjectMeta(name="n"))).metadata.name == "n"
    assert isinstance(cs.apps_v1().deployments("default").list(), DeploymentList)


def test_fake_keeps_free_form_fields() -> None:
    template = {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    cs = FakeClientset(PodSet(metadata=ObjectMeta(name="p", namespace="default"),
                              spec=PodSetSpec(replicas=2, template=template)))
    got = cs.workloads_v1alpha1().podsets("default").get("p")
    assert got.spec == PodSetSpec(replicas=2, template=template)


def test_fake_refuses_a_kind_of_another_clientset() -> None:
    """Deployments are seeded into samplecontroller.kubernetes' fake, not generated's."""
    with pytest.raises(KeyError, match=r"apps/v1 Deployment is not a kind of generated\.clientset\.fake"):
        FakeClientset(Deployment(metadata=ObjectMeta(name="d", namespace="default")))
    seeded = FakeKubeClientset(Deployment(metadata=ObjectMeta(name="d", namespace="default")))
    assert seeded.apps_v1().deployments("default").get("d").metadata.name == "d"


def test_fake_seeds_from_dicts() -> None:
    cs = FakeClientset({"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                        "metadata": {"name": "d", "namespace": "default"}, "spec": {"replicas": 3}})
    assert cs.samplecontroller_v1alpha1().foos("default").get("d").spec == FooSpec(replicas=3)


def test_fake_watch_delivers_typed_events() -> None:
    cs = FakeClientset()
    foos = cs.samplecontroller_v1alpha1().foos("default")
    w = foos.watch()
    it: Iterator[Any] = iter(w)
    foos.create(foo("a"))
    event = next(it)
    assert event.type == "ADDED" and isinstance(event.object, Foo) and event.object.metadata.name == "a"
    w.stop()


@pytest.fixture
def stop() -> Iterator[threading.Event]:
    ev = threading.Event()
    yield ev
    ev.set()


def test_informer_and_lister_over_the_fake(stop: threading.Event) -> None:
    cs = FakeClientset(foo("a"), foo("b", ns="other"))
    factory = SharedInformerFactory(cs, 0.0)
    foos = factory.samplecontroller.v1alpha1.foos
    assert foos.informer() is factory.samplecontroller.v1alpha1.foos.informer()  # one shared informer
    added = threading.Event()
    names: list[str] = []

    def on_add(obj: Any, *_: Any) -> None:
        names.append(obj.metadata.name)
        if obj.metadata.name == "c":
            added.set()

    foos.informer().add_event_handler(ResourceEventHandlerFuncs(add_func=on_add))
    factory.start(stop)
    try:
        assert all(factory.wait_for_cache_sync(timeout=30).values())
        lister = foos.lister()
        assert isinstance(lister, FooLister)
        assert lister.foos("default").get("a").metadata.name == "a"
        assert sorted(str(f.metadata.name) for f in lister.list()) == ["a", "b"]
        with pytest.raises(errors.NotFoundError):
            lister.foos("default").get("b")
        cs.samplecontroller_v1alpha1().foos("default").create(foo("c"))
        assert added.wait(5)
        assert isinstance(lister.foos("default").get("c"), Foo)
    finally:
        factory.shutdown()


def test_namespaced_factory_and_tweak(stop: threading.Event) -> None:
    from samplecontroller.client.types import ListOptions

    cs = FakeClientset(foo("a", labels={"keep": "1"}), foo("b"), foo("c", ns="other", labels={"keep": "1"}))

    def tweak(options: ListOptions) -> None:  # mutates in place, like Go's TweakListOptionsFunc
        options.label_selector = "keep=1"

    factory = SharedInformerFactory(cs, 0.0, namespace="default", tweak_list_options=tweak)
    lister = factory.samplecontroller.v1alpha1.foos.lister()
    factory.start(stop)
    try:
        assert all(factory.wait_for_cache_sync(timeout=30).values())
        assert [f.metadata.name for f in lister.list()] == ["a"]
    finally:
        factory.shutdown()

