"""Listers: read-only typed views over an informer's Indexer (client-go's generic listers).

``get`` raises ``apimachinery.errors.NotFoundError`` naming the resource; lists are snapshots
of shared, immutable objects. A ``selector`` is None (everything), a label selector string
(a bad one raises ValueError) or a ``samplecontroller.apimachinery.labels.Selector``.

The group/resource is given as ``"deployments.apps"`` (or ``"pods"`` for the core group), as
``("apps", "deployments")``, or, as the generated listers do, as two arguments
``group, resource``.
"""

from __future__ import annotations

import builtins
from typing import Generic, TypeVar

from samplecontroller.apimachinery import errors, labels, meta
from samplecontroller.cache.index import NAMESPACE_INDEX
from samplecontroller.cache.store import Indexer

T = TypeVar("T")

SelectorLike = labels.Selector | str | None
GroupResource = str | tuple[str, str]


def as_selector(selector: SelectorLike) -> labels.Selector | None:
    """None for "everything"; parses strings (ValueError on bad syntax)."""
    if selector is None:
        return None
    if isinstance(selector, str):
        return labels.parse(selector) if selector.strip() else None
    return selector


def _group_resource(group_resource: GroupResource, resource: str | None) -> tuple[str, str]:
    if resource is not None:
        return str(group_resource), resource
    if isinstance(group_resource, tuple):
        return group_resource
    res, _, group = group_resource.partition(".")
    return group, res


def _filter(objs: builtins.list[T], selector: SelectorLike) -> builtins.list[T]:
    sel = as_selector(selector)
    if sel is None or sel.empty():
        return objs
    return [o for o in objs if sel.matches(meta.get_labels(o))]


class GenericLister(Generic[T]):
    """Lists across namespaces; ``get(name)`` for cluster-scoped resources."""

    def __init__(self, indexer: Indexer[T], group_resource: GroupResource, resource: str | None = None) -> None:
        self.indexer = indexer
        self.group, self.resource = _group_resource(group_resource, resource)

    def list(self, selector: SelectorLike = None) -> builtins.list[T]:
        """Every cached object matching ``selector`` (None: all), across namespaces."""
        return _filter(self.indexer.list(), selector)

    def get(self, name: str) -> T:
        """The object called ``name`` (cluster-scoped key); NotFoundError if absent."""
        obj = self.indexer.get_by_key(name)
        if obj is None:
            raise errors.new_not_found(self.group, self.resource, name)
        return obj

    def by_namespace(self, namespace: str) -> GenericNamespaceLister[T]:
        """A lister of one namespace's objects."""
        return GenericNamespaceLister(self.indexer, namespace, (self.group, self.resource))


class GenericNamespaceLister(Generic[T]):
    """The objects of one namespace."""

    def __init__(self, indexer: Indexer[T], namespace: str, group_resource: GroupResource,
                 resource: str | None = None) -> None:
        self.indexer = indexer
        self.namespace = namespace
        self.group, self.resource = _group_resource(group_resource, resource)

    def list(self, selector: SelectorLike = None) -> builtins.list[T]:
        """The namespace's cached objects matching ``selector`` (None: all)."""
        try:
            objs = self.indexer.by_index(NAMESPACE_INDEX, self.namespace)
        except KeyError:
            objs = [o for o in self.indexer.list() if meta.get_namespace(o) == self.namespace]
        return _filter(objs, selector)

    def get(self, name: str) -> T:
        """The object ``namespace/name``; NotFoundError if absent."""
        obj = self.indexer.get_by_key(f"{self.namespace}/{name}")
        if obj is None:
            raise errors.new_not_found(self.group, self.resource, name)
        return obj


