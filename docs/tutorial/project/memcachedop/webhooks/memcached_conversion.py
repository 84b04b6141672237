"""Conversion between the versions of Memcached: v1alpha1 is the hub, v1beta1 converts
through it.

The API server calls the operator's ``/convert`` webhook
(config/crd/patches/webhook_in_memcacheds.yaml) whenever a Memcached is read or written
in a version other than the one it is stored in. v1beta1 calls v1alpha1's ``spec.port``
``spec.container_port`` (``containerPort``); everything else is the same. Keep
``metadata`` as it is: the API server rejects a conversion that changes an object's
name, namespace or UID.
"""

from __future__ import annotations

import msgspec
from samplecontroller.runtime.manager import Manager
from samplecontroller.runtime.webhook import webhook_managed_by

from memcachedop.generated.apis.cache import v1alpha1, v1beta1


# --8<-- [start:conversion]
class MemcachedV1beta1Conversion:
    """Memcached v1beta1 to and from v1alpha1 (the hub)."""

    spoke = v1beta1.Memcached
    hub = v1alpha1.Memcached

    def convert_to(self, src: v1beta1.Memcached) -> v1alpha1.Memcached:
        spec = v1alpha1.MemcachedSpec(
            size=src.spec.size, image=src.spec.image, port=src.spec.container_port
        )
        status = (
            src.status
            if src.status is msgspec.UNSET
            else v1alpha1.MemcachedStatus(
                available_replicas=src.status.available_replicas,
                observed_generation=src.status.observed_generation,
                conditions=src.status.conditions,
            )
        )
        return v1alpha1.Memcached(metadata=src.metadata, spec=spec, status=status)

    def convert_from(self, hub: v1alpha1.Memcached) -> v1beta1.Memcached:
        spec = v1beta1.MemcachedSpec(
            size=hub.spec.size, image=hub.spec.image, container_port=hub.spec.port
        )
        status = (
            hub.status
            if hub.status is msgspec.UNSET
            else v1beta1.MemcachedStatus(
                available_replicas=hub.status.available_replicas,
                observed_generation=hub.status.observed_generation,
                conditions=hub.status.conditions,
            )
        )
        return v1beta1.Memcached(metadata=hub.metadata, spec=spec, status=status)


# --8<-- [end:conversion]


def setup(mgr: Manager) -> None:
    """Serve the conversions of Memcached at /convert on the Manager's webhook
    server."""
    webhook_managed_by(mgr).for_(v1alpha1.Memcached).with_conversion(
        MemcachedV1beta1Conversion(),
    ).complete()
