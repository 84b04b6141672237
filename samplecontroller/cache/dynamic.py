"""Dynamic informers: any resource by group/version/resource, objects as plain dicts
(client-go's dynamicinformer.NewFilteredDynamicInformer).

The client is a dict-based resource client (``DynamicClient.resource(info, namespace)``) or
anything else with ``lister_watcher()``. Cached objects are the decoded dicts: shared, so never
mutate them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from samplecontroller.cache.index import IndexFunc
from samplecontroller.cache.shared_informer import SharedIndexInformer
from samplecontroller.client.types import ListerWatcher, ListOptions, ListResult, Watch

TweakListOptions = Callable[[ListOptions], None]


class HasListerWatcher(Protocol):
    """Anything that gives a ``ListerWatcher`` (a resource client)."""

    def lister_watcher(self) -> ListerWatcher[Any]:
        """The ``ListerWatcher`` a Reflector lists and watches through."""


class TweakedListerWatcher:
    """Applies ``tweak`` (label/field selectors, ...) to a copy of the options of every list and watch."""

    def __init__(self, inner: ListerWatcher[Any], tweak: TweakListOptions) -> None:
        self.inner = inner
        self.tweak = tweak

    def list(self, options: ListOptions) -> ListResult[Any]:
        opts = dataclasses.replace(options)
        self.tweak(opts)
        return self.inner.list(opts)

    def watch(self, options: ListOptions) -> Watch[Any]:
        opts = dataclasses.replace(options)
        self.tweak(opts)
        return self.inner.watch(opts)


def tweaked(lw: ListerWatcher[Any], tweak: TweakListOptions | None) -> ListerWatcher[Any]:
    """``lw`` with ``tweak`` applied to every ListOptions (``lw`` itself when tweak is None)."""
    return lw if tweak is None else TweakedListerWatcher(lw, tweak)


def _scoped(client: Any, namespace: str | None) -> Any:
    """The client for ``namespace``: the same one if it already has that scope."""
    if namespace is None or getattr(client, "namespace", None) == namespace:
        return client
    info = getattr(client, "info", None)
    rest = getattr(client, "rest", None)
    if info is None or rest is None:
        raise ValueError(f"cannot scope {type(client).__name__} to namespace {namespace!r}: "
                         "pass a client created for that namespace")
    return type(client)(rest, info, namespace)


def new_dynamic_informer(client: HasListerWatcher, resync: float = 0.0, namespace: str | None = None,
                         indexers: Mapping[str, IndexFunc] | None = None,
                         tweak_list_options: TweakListOptions | None = None) -> SharedIndexInformer[dict[str, Any]]:
    """A SharedIndexInformer of dicts over ``client`` (scoped to ``namespace`` if given)."""
    scoped = _scoped(client, namespace)
    info = getattr(scoped, "info", None)
    name = getattr(info, "group_resource", "") or "dynamic"
    lw = tweaked(scoped.lister_watcher(), tweak_list_options)
    return SharedIndexInformer(lw, dict, resync, indexers, name=name)
