"""Shared informer factories (client-go's informers.SharedInformerFactory).

``SharedInformerFactoryBase`` keeps one ``SharedIndexInformer`` per object type; the generated
``generated.informers.SharedInformerFactory`` adds typed accessors. ``start`` runs every informer
requested so far (and is safe to call again after requesting more); ``wait_for_cache_sync``
waits for them; ``shutdown`` stops them and waits for their threads.
``DynamicSharedInformerFactory`` does the same for resources without generated code, by
``ResourceInfo`` with ``model=dict``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from samplecontroller.cache import SharedIndexInformer, wait_for_cache_sync
from samplecontroller.client.types import ListerWatcher, ListOptions, ListResult, ResourceInfo, Watch

__all__ = ["DynamicSharedInformerFactory", "SharedInformerFactoryBase", "TweakListOptions", "tweaked"]

TweakListOptions = Callable[[ListOptions], None]


class _TweakedListerWatcher:
    """Applies a tweak (label/field selectors, ...) to every list and watch."""

    def __init__(self, inner: ListerWatcher[Any], tweak: TweakListOptions) -> None:
        self.inner = inner
        self.tweak = tweak

    def list(self, options: ListOptions) -> ListResult[Any]:
        self.tweak(options)
        return self.inner.list(options)

    def watch(self, options: ListOptions) -> Watch[Any]:
        self.tweak(options)
        return self.inner.watch(options)


def tweaked(lw: ListerWatcher[Any], tweak: TweakListOptions | None) -> ListerWatcher[Any]:
    return lw if tweak is None else _TweakedListerWatcher(lw, tweak)


class SharedInformerFactoryBase:
    """One informer per key (the object type), shared by every caller asking for it."""

    def __init__(self, resync: float = 0.0, namespace: str | None = None,
                 tweak_list_options: TweakListOptions | None = None,
                 transform: Callable[[Any], Any] | None = None) -> None:
        self.default_resync = resync
        self.namespace = namespace or None
        self.tweak_list_options = tweak_list_options
        self.transform = transform
        self._lock = threading.Lock()
        self._informers: dict[Any, SharedIndexInformer[Any]] = {}
        self._started: set[Any] = set()
        self._threads: list[threading.Thread] = []
        self._stop: threading.Event | None = None
        self._shutting_down = False

    def informer_for(self, key: Any, new_informer: Callable[[], SharedIndexInformer[Any]]) -> SharedIndexInformer[Any]:
        """The shared informer for ``key``, created with ``new_informer`` the first time."""
        with self._lock:
            informer = self._informers.get(key)
            if informer is None:
                informer = new_informer()
                if self.transform is not None:
                    informer.set_transform(self.transform)
                self._informers[key] = informer
            return informer

    def start(self, stop: threading.Event) -> None:
        """Run every informer not yet running until ``stop`` (or ``shutdown``)."""
        with self._lock:
            if self._shutting_down:
                return
            if self._stop is None:
                self._stop = threading.Event()
                threading.Thread(target=self._relay, args=(stop, self._stop), daemon=True).start()
            for key, informer in self._informers.items():
                if key in self._started:
                    continue
                t = threading.Thread(target=informer.run, args=(self._stop,), name=f"informer-{key}", daemon=True)
                t.start()
                self._threads.append(t)
                self._started.add(key)

    @staticmethod
    def _relay(outer: threading.Event, inner: threading.Event) -> None:
        while not inner.is_set():
            if outer.wait(0.2):
                inner.set()

    def wait_for_cache_sync(self, stop: threading.Event | None = None,
                            timeout: float | None = None) -> dict[Any, bool]:
        """Wait for the started informers; returns key -> synced."""
        with self._lock:
            started = {k: i for k, i in self._informers.items() if k in self._started}
        wait_for_cache_sync(*(i.has_synced for i in started.values()), stop=stop, timeout=timeout)
        return {k: i.has_synced() for k, i in started.items()}

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop every informer and wait (up to ``timeout``) for their threads."""
        with self._lock:
            self._shutting_down = True
            if self._stop is not None:
                self._stop.set()
            threads = list(self._threads)
        for t in threads:
            t.join(timeout)


class DynamicSharedInformerFactory(SharedInformerFactoryBase):
    """Informers over plain dicts for any resource: ``for_resource(info)``.

    ``client_for(info, namespace)`` must return something with ``lister_watcher()`` (a dynamic
    ``ResourceClient``).
    """

    def __init__(self, client_for: Callable[[ResourceInfo[Any], str | None], Any], resync: float = 0.0,
                 namespace: str | None = None, tweak_list_options: TweakListOptions | None = None) -> None:
        super().__init__(resync, namespace, tweak_list_options)
        self._client_for = client_for

    def for_resource(self, info: ResourceInfo[Any]) -> SharedIndexInformer[Any]:
        def new() -> SharedIndexInformer[Any]:
            lw = tweaked(self._client_for(info, self.namespace).lister_watcher(), self.tweak_list_options)
            return SharedIndexInformer(lw, dict, self.default_resync)

        return self.informer_for((info.group, info.version, info.resource), new)
