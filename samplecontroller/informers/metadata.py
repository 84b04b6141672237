"""Metadata-only shared informers (client-go's k8s.io/client-go/metadata/metadatainformer).

``MetadataSharedInformerFactory(client, resync, namespace)`` shares one
``SharedIndexInformer[PartialObjectMetadata]`` per group/version/resource
(``for_resource(group, version, resource, namespaced)``), fed by the metadata-only client
(``client.metadata``): the cache holds each object's metadata and nothing else, for controllers
that watch every Secret or Pod of a cluster but read only owner references, labels or finalizers.
``lister(...)`` reads it. ``start``, ``wait_for_cache_sync`` and ``shutdown`` are the generated
factories' (``informers.SharedInformerFactoryBase``).
"""

from __future__ import annotations

from samplecontroller.cache import GenericLister, SharedIndexInformer
from samplecontroller.client.metadata import MetadataClient, PartialObjectMetadata
from samplecontroller.informers import SharedInformerFactoryBase, tweaked

__all__ = ["MetadataSharedInformerFactory"]


class MetadataSharedInformerFactory(SharedInformerFactoryBase):
    """See the module docstring."""

    def __init__(self, client: MetadataClient, resync: float = 0.0, namespace: str | None = None) -> None:
        super().__init__(resync, namespace)
        self.client = client

    def for_resource(self, group: str, version: str, resource: str,
                     namespaced: bool = True) -> SharedIndexInformer[PartialObjectMetadata]:
        """The shared metadata informer of group/version/resource (created on first use)."""

        def new() -> SharedIndexInformer[PartialObjectMetadata]:
            rc = self.client.resource(group, version, resource, namespaced)
            if self.namespace is not None:
                rc = rc.namespace(self.namespace)
            lw = tweaked(rc.lister_watcher(), self.tweak_list_options)
            return SharedIndexInformer(lw, PartialObjectMetadata, self.default_resync,
                                       name=f"{resource}.{group or 'core'}/{version} (metadata)")

        return self.informer_for(("metadata", group, version, resource), new)

    def lister(self, group: str, version: str, resource: str,
               namespaced: bool = True) -> GenericLister[PartialObjectMetadata]:
        """A lister of the metadata-only informer of that resource (made on first use)."""
        return GenericLister(self.for_resource(group, version, resource, namespaced).get_indexer(), (group, resource))
