"""The metadata-only client and informer against the embedded API server: PartialObjectMetadata on the
wire and in the cache, for a resource without a model."""

from __future__ import annotations

import threading

import msgspec

from samplecontroller.cache import ResourceEventHandlerFuncs
from samplecontroller.client.metadata import MetadataClient, PartialObjectMetadata
from samplecontroller.informers.metadata import MetadataSharedInformerFactory
from samplecontroller.kubernetes.apis.core.v1 import ConfigMap, Secret
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta, OwnerReference
from samplecontroller.kubernetes.clientset import Clientset
from samplecontroller.rest import RESTClient
from tests.live import ns, rest, wait_for

__all__ = ["ns", "rest"]


def test_metadata_client_verbs(rest: RESTClient, ns: str) -> None:
    Clientset(rest).core_v1().secrets(ns).create(Secret(metadata=ObjectMeta(name="s", labels={"a": "b"}),
                                                        string_data={"password": "x" * 1000}))
    secrets = MetadataClient(rest).resource("", "v1", "secrets").namespace(ns)
    got = secrets.get("s")
    assert isinstance(got, PartialObjectMetadata) and got.kind == "PartialObjectMetadata"
    assert got.metadata.labels == {"a": "b"} and got.metadata.uid
    # the server sent metadata only: no data on the wire
    raw = rest.request("GET", f"/api/v1/namespaces/{ns}/secrets/s",
                       accept="application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
    assert b'"data"' not in raw and b"PartialObjectMetadata" in raw
    listed = secrets.list()
    assert [str(i.metadata.name) for i in listed.items] == ["s"] and listed.metadata.resource_version
    patched = secrets.patch("s", b'{"metadata":{"finalizers":["example.com/keep"]}}')
    assert patched.metadata.finalizers == ("example.com/keep",)
    secrets.patch("s", b'{"metadata":{"finalizers":null}}')
    secrets.delete("s")


def test_metadata_informer(rest: RESTClient, ns: str) -> None:
    cs = Clientset(rest)
    cm = cs.core_v1().configmaps(ns).create(ConfigMap(metadata=ObjectMeta(name="o")))
    owner = OwnerReference(api_version="v1", kind="ConfigMap", name="o", uid=str(cm.metadata.uid))
    cs.core_v1().secrets(ns).create(Secret(metadata=ObjectMeta(name="a", owner_references=(owner,)),
                                           string_data={"k": "v"}))
    factory = MetadataSharedInformerFactory(MetadataClient(rest), namespace=ns)
    informer = factory.for_resource("", "v1", "secrets")
    assert factory.for_resource("", "v1", "secrets") is informer
    added: list[str] = []
    informer.add_event_handler(ResourceEventHandlerFuncs(
        add_func=lambda obj, initial: added.append(str(obj.metadata.name))))
    stop = threading.Event()
    factory.start(stop)
    try:
        assert factory.wait_for_cache_sync(timeout=10)
        cs.core_v1().secrets(ns).create(Secret(metadata=ObjectMeta(name="b"), string_data={"k": "v"}))
        wait_for(lambda: sorted(added) == ["a", "b"], what=f"both secrets seen (seen: {added})")
        cached = factory.lister("", "v1", "secrets").by_namespace(ns).get("a")
        assert isinstance(cached, PartialObjectMetadata) and cached.metadata.owner_references == (owner,)
        assert set(msgspec.structs.asdict(cached)) == {"api_version", "kind", "metadata"}
    finally:
        stop.set()
        factory.shutdown()
