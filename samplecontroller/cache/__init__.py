"""Informer caches: stores, indexers, DeltaFIFO, reflector, shared informers, listers (client-go's tools/cache).

One module per idea: ``keys`` (key functions, tombstone), ``index`` (index functions),
``thread_safe_store`` (the Store/Indexer implementation), ``store`` (protocols, constructors),
``delta_fifo``, ``pager``, ``reflector``, ``processor`` (per-handler delivery), ``handlers``,
``shared_informer``, ``listers``, ``dynamic``.
"""

from samplecontroller.cache.compaction import compact
from samplecontroller.cache.delta_fifo import (
    ADDED,
    DELETED,
    REPLACED,
    SYNC,
    UPDATED,
    Delta,
    DeltaFIFO,
    DeltaType,
)
from samplecontroller.cache.dynamic import new_dynamic_informer, tweaked
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
    IndexFunc,
    KeyFuncError,
    Store,
    ThreadSafeStore,
    deletion_handling_meta_namespace_key_func,
    meta_namespace_index_func,
    meta_namespace_key_func,
    new_indexer,
    new_store,
    split_meta_namespace_key,
)
from samplecontroller.cache.transforms import strip_managed_fields

__all__ = [
    "ADDED",
    "DELETED",
    "NAMESPACE_INDEX",
    "REPLACED",
    "SYNC",
    "UPDATED",
    "compact",
    "DeletedFinalStateUnknown",
    "Delta",
    "DeltaFIFO",
    "DeltaType",
    "FilteringResourceEventHandler",
    "GenericLister",
    "GenericNamespaceLister",
    "IndexFunc",
    "Indexer",
    "KeyFuncError",
    "Reflector",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    "ResourceEventHandlerRegistration",
    "SharedIndexInformer",
    "Store",
    "ThreadSafeStore",
    "deletion_handling_meta_namespace_key_func",
    "meta_namespace_index_func",
    "meta_namespace_key_func",
    "new_dynamic_informer",
    "new_indexer",
    "new_store",
    "split_meta_namespace_key",
    "strip_managed_fields",
    "tweaked",
    "wait_for_cache_sync",
]
