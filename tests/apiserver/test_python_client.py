"""The official ``kubernetes`` Python client, unchanged, against the embedded server."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client, dynamic, watch
from kubernetes.client.exceptions import ApiException

from samplecontroller.apiserver import LocalAPIServer
from tests.apiserver.conftest import foo, official_client

_ns = itertools.count()
GROUP, VERSION, PLURAL = "samplecontroller.k8s.io", "v1alpha1", "foos"


@pytest.fixture(scope="module")
def api(server: LocalAPIServer) -> Iterator[client.ApiClient]:
    with official_client(server) as api_client:
        yield api_client


@pytest.fixture
def ns(api: client.ApiClient) -> str:
    name = f"py-{next(_ns)}"
    client.CoreV1Api(api).create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    return name


def test_core_v1_crud(api: client.ApiClient, ns: str) -> None:
    core = client.CoreV1Api(api)
    cm = core.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c"), data={"a": "1"}))
    assert cm.metadata.uid
    got = core.read_namespaced_config_map("c", ns)
    got.data["b"] = "2"
    replaced = core.replace_namespaced_config_map("c", ns, got)
    assert replaced.data == {"a": "1", "b": "2"}
    patched = core.patch_namespaced_config_map("c", ns, {"data": {"a": "x"}})
    assert patched.data["a"] == "x"
    # every namespace also has kube-root-ca.crt, as on a real cluster
    assert [i.metadata.name for i in core.list_namespaced_config_map(ns).items] == ["c", "kube-root-ca.crt"]
    with pytest.raises(ApiException) as err:
        core.replace_namespaced_config_map("c", ns, got)
    assert err.value.status == 409
    core.delete_namespaced_config_map("c", ns)
    with pytest.raises(ApiException) as err:
        core.read_namespaced_config_map("c", ns)
    assert err.value.status == 404
    pod = core.create_namespaced_pod(ns, client.V1Pod(metadata=client.V1ObjectMeta(name="p"), spec=client.V1PodSpec(
        containers=[client.V1Container(name="c", image="busybox")])))
    assert pod.status.phase == "Pending"
    core.delete_namespaced_pod("p", ns)
    assert core.list_namespaced_pod(ns).items == []


def test_apps_v1_crud(api: client.ApiClient, ns: str) -> None:
    apps = client.AppsV1Api(api)
    dep = client.V1Deployment(
        metadata=client.V1ObjectMeta(name="d", labels={"app": "d"}),
        spec=client.V1DeploymentSpec(
            replicas=2, selector=client.V1LabelSelector(match_labels={"app": "d"}),
            template=client.V1PodTemplateSpec(metadata=client.V1ObjectMeta(labels={"app": "d"}),
                                              spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx")]))))
    created = apps.create_namespaced_deployment(ns, dep)
    assert created.spec.replicas == 2 and created.metadata.generation == 1
    patched = apps.patch_namespaced_deployment("d", ns, {"spec": {"replicas": 3}})
    assert patched.spec.replicas == 3 and patched.metadata.generation == 2
    # (a valid status: kube-apiserver refuses more available replicas than ready ones)
    status = apps.patch_namespaced_deployment_status("d", ns, {"status": {"replicas": 3, "readyReplicas": 3,
                                                                          "availableReplicas": 3}})
    assert status.status.available_replicas == 3 and status.metadata.generation == 2
    scale = apps.read_namespaced_deployment_scale("d", ns)
    assert scale.spec.replicas == 3
    assert [d.metadata.name for d in apps.list_deployment_for_all_namespaces(label_selector="app=d").items] == ["d"]
    apps.delete_namespaced_deployment("d", ns, propagation_policy="Foreground")
    deadline = time.monotonic() + 30
    while apps.list_namespaced_deployment(ns).items and time.monotonic() < deadline:
        time.sleep(0.05)
    assert apps.list_namespaced_deployment(ns).items == []


def test_custom_objects_crud(api: client.ApiClient, ns: str) -> None:
    co = client.CustomObjectsApi(api)
    created = co.create_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, foo("f"))
    assert created["metadata"]["generation"] == 1
    got: Any = co.get_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "f")
    got["spec"]["replicas"] = 2
    replaced = co.replace_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "f", got)
    assert replaced["spec"]["replicas"] == 2
    patched = co.patch_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "f", {"spec": {"replicas": 3}})
    assert patched["spec"]["replicas"] == 3
    status = co.patch_namespaced_custom_object_status(GROUP, VERSION, ns, PLURAL, "f",
                                                      {"status": {"availableReplicas": 3}})
    assert status["status"]["availableReplicas"] == 3
    listed = co.list_namespaced_custom_object(GROUP, VERSION, ns, PLURAL)
    assert [i["metadata"]["name"] for i in listed["items"]] == ["f"]
    with pytest.raises(ApiException) as err:
        co.create_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, foo("bad", 0))
    assert err.value.status == 422
    co.delete_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "f")
    assert co.list_namespaced_custom_object(GROUP, VERSION, ns, PLURAL)["items"] == []


def test_watch_stream(api: client.ApiClient, ns: str) -> None:
    co = client.CustomObjectsApi(api)
    rv = co.list_namespaced_custom_object(GROUP, VERSION, ns, PLURAL)["metadata"]["resourceVersion"]

    def writer() -> None:
        time.sleep(0.2)
        co.create_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, foo("w"))
        co.patch_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "w", {"spec": {"replicas": 2}})
        co.delete_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "w")

    threading.Thread(target=writer).start()
    w = watch.Watch()
    seen: list[str] = []
    for event in w.stream(co.list_namespaced_custom_object, GROUP, VERSION, ns, PLURAL, resource_version=rv,
                          timeout_seconds=5):
        seen.append(event["type"])
        if event["type"] == "DELETED":
            w.stop()
    assert seen == ["ADDED", "MODIFIED", "DELETED"]


def test_watch_resumes_after_410(api: client.ApiClient, ns: str, server: LocalAPIServer) -> None:
    core = client.CoreV1Api(api)
    old_rv = core.list_namespaced_config_map(ns).metadata.resource_version
    core.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="a")))
    server.compact()
    w = watch.Watch()
    with pytest.raises(ApiException) as err:
        for _ in w.stream(core.list_namespaced_config_map, ns, resource_version=old_rv, timeout_seconds=5):
            pass
    assert err.value.status == 410
    # the reflector's answer: re-list, then watch from the fresh resourceVersion
    listing = core.list_namespaced_config_map(ns)
    assert [c.metadata.name for c in listing.items] == ["a", "kube-root-ca.crt"]
    threading.Timer(0.2, lambda: core.create_namespaced_config_map(
        ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="b")))).start()
    for event in w.stream(core.list_namespaced_config_map, ns, resource_version=listing.metadata.resource_version,
                          timeout_seconds=5):
        assert event["type"] == "ADDED" and event["object"].metadata.name == "b"
        w.stop()


def test_dynamic_client_discovery(api: client.ApiClient, ns: str) -> None:
    dyn = dynamic.DynamicClient(api)
    foos = dyn.resources.get(api_version=f"{GROUP}/{VERSION}", kind="Foo")
    assert foos.namespaced and foos.name == "foos"
    created: Any = foos.create(body=foo("dyn"), namespace=ns)
    assert created.metadata.name == "dyn"
    assert [i.metadata.name for i in foos.get(namespace=ns).items] == ["dyn"]
    deps = dyn.resources.get(api_version="apps/v1", kind="Deployment")
    assert deps.name == "deployments"
