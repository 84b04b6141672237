"""Shared informer factories (client-go's informers.SharedInformerFactory).

``SharedInformerFactoryBase`` keeps one ``SharedIndexInformer`` per key (the object type); the
generated ``generated.informers.SharedInformerFactory`` adds typed accessors.

Contracts:
- ``informer_for(key, new)`` returns the same informer for the same key; the factory's
  ``transform`` is set on each new informer. ``tweak_list_options`` is applied to the
  ListOptions of every list and watch of informers built with ``tweaked(lw, factory.tweak_list_options)``
  (the generated code and ``DynamicSharedInformerFactory`` do this).
- ``start(stop)`` runs, each in its own thread, every informer requested so far and not yet
  started; call it again after requesting more. After ``shutdown`` it does nothing. The
  informers run on the factory's own ``wait.Context``, cancelled by a done-callback on ``stop``
  (adapted with ``wait.as_context``) or by ``shutdown``.
- ``wait_for_cache_sync`` waits for the started informers and returns key -> synced.
- ``shutdown()`` stops every informer (``stop`` need not be set) and joins their threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar, cast

from samplecontroller.cache import SharedIndexInformer, wait_for_cache_sync
from samplecontroller.cache.dynamic import TweakedListerWatcher, TweakListOptions, tweaked
from samplecontroller.client.types import ResourceInfo
from samplecontroller.wait import Context, as_context

T = TypeVar("T")

__all__ = ["DynamicSharedInformerFactory", "SharedInformerFactoryBase", "TweakListOptions", "TweakedListerWatcher",
           "tweaked"]


class SharedInformerFactoryBase:
    """One informer per key (the object type), shared by every caller asking for it.

    ``transform`` maps every object of every informer before it is cached (the same function
    for all types, e.g. ``cache.strip_managed_fields``-like; it must return an object of the type
    it was given)."""

    def __init__(self, resync: float = 0.0, namespace: str | None = None,
                 tweak_list_options: TweakListOptions | None = None,
                 transform: Callable[[Any], Any] | None = None) -> None:
        self.default_resync = resync
        self.namespace = namespace or None
        self.tweak_list_options = tweak_list_options
        self.transform = transform
        self._lock = threading.Lock()
        self._informers: dict[Hashable, SharedIndexInformer[Any]] = {}
        self._started: set[Hashable] = set()
        self._threads: list[threading.Thread] = []
        self._stop = Context()
        self._relaying = False
        self._shutting_down = False

    def informer_for(self, key: Hashable, new_informer: Callable[[], SharedIndexInformer[T]]) -> SharedIndexInformer[T]:
        """The shared informer for ``key``, created with ``new_informer()`` the first time.

        One key must always come with informers of one object type (the generated factories use
        the model type itself as the key), so the informer found is the one ``new_informer`` makes.
        """
        with self._lock:
            found = self._informers.get(key)
            if found is not None:
                return cast(SharedIndexInformer[T], found)
            informer = new_informer()
            if self.transform is not None:
                informer.set_transform(self.transform)
            self._informers[key] = informer
            return informer

    def start(self, stop: threading.Event) -> None:
        """Run every informer not yet running until ``stop`` is set (or ``shutdown``)."""
        with self._lock:
            if self._shutting_down:
                return
            if not self._relaying:
                self._relaying = True
                as_context(stop).add_done_callback(self._stop.cancel)
            for key, informer in self._informers.items():
                if key in self._started:
                    continue
                name = getattr(key, "__name__", str(key))
                t = threading.Thread(target=informer.run, args=(self._stop,), name=f"informer-{name}", daemon=True)
                t.start()
                self._threads.append(t)
                self._started.add(key)

    def wait_for_cache_sync(self, stop: threading.Event | None = None,
                            timeout: float | None = None) -> dict[Hashable, bool]:
        """Wait for the started informers (until all synced, ``stop`` or ``timeout``); key -> synced."""
        with self._lock:
            started = {k: i for k, i in self._informers.items() if k in self._started}
        wait_for_cache_sync(*started.values(), stop=stop, timeout=timeout)
        return {k: i.has_synced() for k, i in started.items()}

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop every informer and wait (up to ``timeout`` each) for their threads."""
        with self._lock:
            self._shutting_down = True
            self._stop.cancel()
            threads = list(self._threads)
        for t in threads:
            t.join(timeout)


class DynamicSharedInformerFactory(SharedInformerFactoryBase):
    """Informers of plain dicts for any resource: ``for_resource(info)``.

    ``dynamic_client`` is a ``DynamicClient`` (``resource(info, namespace)`` returns a dict-based
    resource client with ``lister_watcher()``), or a function ``(info, namespace) -> client``.
    """

    def __init__(self, dynamic_client: Any, resync: float = 0.0, namespace: str | None = None,
                 tweak_list_options: TweakListOptions | None = None,
                 transform: Callable[[Any], Any] | None = None) -> None:
        super().__init__(resync, namespace, tweak_list_options, transform)
        self.dynamic_client = dynamic_client

    def _client(self, info: ResourceInfo[Any]) -> Any:
        resource = getattr(self.dynamic_client, "resource", None)
        if resource is not None:
            return resource(info, self.namespace)
        if callable(self.dynamic_client):
            return self.dynamic_client(info, self.namespace)
        raise TypeError(f"{type(self.dynamic_client).__name__} is not a dynamic client (no resource())")

    def for_resource(self, info: ResourceInfo[Any]) -> SharedIndexInformer[dict[str, Any]]:
        """The shared informer of ``info``'s resource (objects are dicts)."""
        def new() -> SharedIndexInformer[dict[str, Any]]:
            lw = tweaked(self._client(info).lister_watcher(), self.tweak_list_options)
            return SharedIndexInformer(lw, dict, self.default_resync, name=info.group_resource)

        return self.informer_for((info.group, info.version, info.resource), new)
