"""Listers: read-only typed views over an informer's Indexer (client-go's generic listers).

``get`` raises ``apimachinery.errors.NotFoundError`` naming the resource; lists are snapshots.
A ``selector`` is a ``samplecontroller.apimachinery.labels.Selector`` (None: everything).
"""

from __future__ import annotations

import builtins
from typing import Any, Generic, TypeVar

from samplecontroller.apimachinery import errors, meta
from samplecontroller.apimachinery.labels import Selector
from samplecontroller.cache.store import NAMESPACE_INDEX, Indexer

T = TypeVar("T")


def _matches(selector: Selector | None, obj: Any) -> bool:
    return selector is None or selector.matches(meta.get_labels(obj))


class GenericLister(Generic[T]):
    """Lists across namespaces; ``get`` for cluster-scoped resources."""

    def __init__(self, indexer: Indexer[T], group: str, resource: str) -> None:
        self.indexer = indexer
        self.group = group
        self.resource = resource

    def list(self, selector: Selector | None = None) -> builtins.list[T]:
        return [o for o in self.indexer.list() if _matches(selector, o)]

    def get(self, name: str) -> T:
        obj = self.indexer.get_by_key(name)
        if obj is None:
            raise errors.new_not_found(self.group, self.resource, name)
        return obj

    def by_namespace(self, namespace: str) -> GenericNamespaceLister[T]:
        return GenericNamespaceLister(self.indexer, namespace, self.group, self.resource)


class GenericNamespaceLister(Generic[T]):
    """Objects of one namespace."""

    def __init__(self, indexer: Indexer[T], namespace: str, group: str, resource: str) -> None:
        self.indexer = indexer
        self.namespace = namespace
        self.group = group
        self.resource = resource

    def list(self, selector: Selector | None = None) -> builtins.list[T]:
        try:
            objs = self.indexer.by_index(NAMESPACE_INDEX, self.namespace)
        except KeyError:
            objs = [o for o in self.indexer.list() if meta.get_namespace(o) == self.namespace]
        return [o for o in objs if _matches(selector, o)]

    def get(self, name: str) -> T:
        obj = self.indexer.get_by_key(f"{self.namespace}/{name}")
        if obj is None:
            raise errors.new_not_found(self.group, self.resource, name)
        return obj
