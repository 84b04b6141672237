"""The conversions of Memcached: v1beta1 to the hub and back, then through the embedded
API server (tests/conftest.py serves /convert where the API server calls it)."""

from __future__ import annotations

from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta

from memcachedop.generated.apis.cache import v1alpha1, v1beta1
from memcachedop.generated.clientset import Clientset
from memcachedop.webhooks.memcached_conversion import MemcachedV1beta1Conversion


# --8<-- [start:unit]
def test_v1beta1_converts_to_v1alpha1_and_back() -> None:
    conversion = MemcachedV1beta1Conversion()
    metadata = ObjectMeta(name="a", labels={"app": "demo"})
    original = v1beta1.Memcached(
        metadata=metadata, spec=v1beta1.MemcachedSpec(size=3, container_port=11300)
    )
    hub = conversion.convert_to(original)
    assert hub.metadata == original.metadata and hub.spec == v1alpha1.MemcachedSpec(
        size=3, port=11300
    )
    assert conversion.convert_from(hub) == original


# --8<-- [end:unit]


# --8<-- [start:api-server]
def test_the_api_server_converts_between_v1beta1_and_v1alpha1(
    clientset: Clientset, namespace: str
) -> None:
    v1alpha1_client = clientset.cache_v1alpha1().memcacheds(namespace)
    v1beta1_client = clientset.cache_v1beta1().memcacheds(namespace)

    v1alpha1_client.create(
        v1alpha1.Memcached(
            metadata=ObjectMeta(name="from-v1alpha1"),
            spec=v1alpha1.MemcachedSpec(size=2, port=11300),
        )
    )
    as_v1beta1 = v1beta1_client.get("from-v1alpha1")
    assert (
        as_v1beta1.api_version == "cache.example.com/v1beta1"
        and as_v1beta1.spec.container_port == 11300
    )

    v1beta1_client.create(
        v1beta1.Memcached(
            metadata=ObjectMeta(name="from-v1beta1"),
            spec=v1beta1.MemcachedSpec(size=4, container_port=11400),
        )
    )
    as_v1alpha1 = v1alpha1_client.get("from-v1beta1")
    assert (
        as_v1alpha1.api_version == "cache.example.com/v1alpha1"
        and as_v1alpha1.spec.port == 11400
    )


# --8<-- [end:api-server]
