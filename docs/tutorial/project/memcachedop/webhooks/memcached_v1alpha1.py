"""The admission webhooks of Memcached v1alpha1: defaulting and validation.

The API server calls them on every create and update of a Memcached in
cache.example.com/v1alpha1 (config/webhook/manifests.yaml): first the defaulter, whose
changes it keeps, then the validator, which may reject the request. They enforce what
the CRD's schema cannot say.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
from samplecontroller.apimachinery import errors
from samplecontroller.runtime.manager import Manager
from samplecontroller.runtime.webhook import webhook_managed_by

from memcachedop.generated.apis.cache.v1alpha1 import Memcached

# --8<-- [start:defaulter]
DEFAULT_TAG = "1.6-alpine"
"""The memcached release the operator is tested with: the tag of an image given without
one."""


class MemcachedCustomDefaulter:
    """Pins an image given without a tag or digest (``memcached`` ->
    ``memcached:1.6-alpine``), so that a Pod restarted next month runs the same
    memcached as its neighbours."""

    def default(self, obj: Memcached) -> Memcached:
        image = obj.spec.image
        if image is msgspec.UNSET or "@" in image or ":" in image.rsplit("/", 1)[-1]:
            return obj
        spec = msgspec.structs.replace(obj.spec, image=f"{image}:{DEFAULT_TAG}")
        return msgspec.structs.replace(obj, spec=spec)
# --8<-- [end:defaulter]


# --8<-- [start:validator]
class MemcachedCustomValidator:
    """``spec.port`` cannot change once set (the Pods and their clients use it); a
    single Pod is allowed, with a warning."""

    def validate_create(self, obj: Memcached) -> Sequence[str]:
        return self._warnings(obj)

    def validate_update(self, old: Memcached, new: Memcached) -> Sequence[str]:
        if old.spec.port != new.spec.port:
            name = new.metadata.name if new.metadata.name is not msgspec.UNSET else ""
            raise errors.new_invalid("cache.example.com", "Memcached", name, [
                ("spec.port", f"Invalid value: {new.spec.port}: field is immutable")])
        return self._warnings(new)

    def validate_delete(self, obj: Memcached) -> Sequence[str]:
        return []

    def _warnings(self, obj: Memcached) -> Sequence[str]:
        if obj.spec.size == 1:
            return ["spec.size: 1 Pod is no cache to rely on; use 2 or more"]
        return []
# --8<-- [end:validator]


# --8<-- [start:setup]
def setup(mgr: Manager) -> None:
    """Serve the webhooks of Memcached v1alpha1 on the Manager's webhook server."""
    builder = webhook_managed_by(mgr).for_(Memcached)
    builder.with_defaulter(MemcachedCustomDefaulter())
    builder.with_validator(MemcachedCustomValidator())
    builder.complete()
# --8<-- [end:setup]
