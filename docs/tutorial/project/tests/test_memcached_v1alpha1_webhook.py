"""The Memcached v1alpha1 webhooks: the handlers alone, then through the embedded API
server (tests/conftest.py serves them where the API server calls them)."""

from __future__ import annotations

import msgspec
import pytest
from samplecontroller.apimachinery import errors
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta

from memcachedop.generated.apis.cache.v1alpha1 import Memcached, MemcachedSpec
from memcachedop.generated.clientset import Clientset
from memcachedop.webhooks.memcached_v1alpha1 import (
    DEFAULT_TAG,
    MemcachedCustomDefaulter,
    MemcachedCustomValidator,
)


def memcached(name: str, spec: MemcachedSpec) -> Memcached:
    return Memcached(metadata=ObjectMeta(name=name), spec=spec)


# --8<-- [start:unit]
@pytest.mark.parametrize(("image", "defaulted"), [
    ("memcached", f"memcached:{DEFAULT_TAG}"),
    ("registry.example.com:5000/cache/memcached",
     f"registry.example.com:5000/cache/memcached:{DEFAULT_TAG}"),
    ("memcached:1.6.38", "memcached:1.6.38"),
    ("memcached@sha256:" + "0" * 64, "memcached@sha256:" + "0" * 64),
])
def test_the_defaulter_pins_an_image_without_a_tag(image: str, defaulted: str) -> None:
    obj = memcached("a", MemcachedSpec(size=2, image=image))
    assert MemcachedCustomDefaulter().default(obj).spec.image == defaulted


def test_the_validator_refuses_a_port_change() -> None:
    validator = MemcachedCustomValidator()
    old = memcached("a", MemcachedSpec(size=2, port=11211))
    same_port = memcached("a", MemcachedSpec(size=3, port=11211))
    assert list(validator.validate_update(old, same_port)) == []
    new_port = memcached("a", MemcachedSpec(size=2, port=11212))
    with pytest.raises(errors.StatusError) as caught:
        validator.validate_update(old, new_port)
    assert caught.value.code == 422
    assert "spec.port: Invalid value: 11212: field is immutable" in str(caught.value)
# --8<-- [end:unit]


# --8<-- [start:api-server]
def test_the_api_server_calls_the_webhooks(
    clientset: Clientset, namespace: str
) -> None:
    memcacheds = clientset.cache_v1alpha1().memcacheds(namespace)
    spec = MemcachedSpec(size=2, image="memcached")
    created = memcacheds.create(memcached("pinned", spec))
    # the defaulter's patch was stored
    assert created.spec.image == f"memcached:{DEFAULT_TAG}"
    # the schema's default, applied before the webhooks
    assert created.spec.port == 11211

    port = msgspec.structs.replace(created.spec, port=11300)
    moved = msgspec.structs.replace(created, spec=port)
    with pytest.raises(errors.StatusError) as caught:
        memcacheds.update(moved)
    assert caught.value.code == 422
    assert "spec.port: Invalid value: 11300: field is immutable" in str(caught.value)
# --8<-- [end:api-server]
