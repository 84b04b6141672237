"""Informer caches: stores, indexers, DeltaFIFO, reflector, shared informers, listers (client-go's tools/cache)."""

from samplecontroller.cache.delta_fifo import Delta, DeltaFIFO
from samplecontroller.cache.handlers import (
    FilteringResourceEventHandler,
    ResourceEventHandler,
    ResourceEventHandlerFuncs,
)
from samplecontroller.cache.listers import GenericLister, GenericNamespaceLister
from samplecontroller.cache.reflector import Reflector
from samplecontroller.cache.shared_informer import (
    ResourceEventHandlerRegistration,
    SharedIndexInformer,
    wait_for_cache_sync,
)
from samplecontroller.cache.store import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    Indexer,
    Store,
    deletion_handling_meta_namespace_key_func,
    meta_namespace_index_func,
    meta_namespace_key_func,
    new_indexer,
    split_meta_namespace_key,
)

__all__ = [
    "NAMESPACE_INDEX",
    "DeletedFinalStateUnknown",
    "Delta",
    "DeltaFIFO",
    "FilteringResourceEventHandler",
    "GenericLister",
    "GenericNamespaceLister",
    "Indexer",
    "Reflector",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    "ResourceEventHandlerRegistration",
    "SharedIndexInformer",
    "Store",
    "deletion_handling_meta_namespace_key_func",
    "meta_namespace_index_func",
    "meta_namespace_key_func",
    "new_indexer",
    "split_meta_namespace_key",
    "wait_for_cache_sync",
]
