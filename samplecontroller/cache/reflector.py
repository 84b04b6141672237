"""Reflector: list then watch, feeding a store (client-go's tools/cache/reflector.go).

Behaviour (Go's numbers):
- The first list asks for resourceVersion "0" (any cached version); later re-lists ask for the
  last synced version; a 410 Expired (or a too-large version) on such a list retries from "".
- Lists are paged with ``limit=500`` and ``continue``.
- Watches start from the list's resourceVersion with ``allowWatchBookmarks`` and a random
  ``timeoutSeconds`` between 5 and 10 minutes; a watch that ends normally is re-opened from the
  last seen version; an ERROR 410 event, or 410 when opening, makes it re-list.
- Failures back off 0.8 s doubling to 30 s with jitter, reset after 2 minutes of health. Each
  failure is passed to ``watch_error_handler`` (default: log it).
- ``run(stop)`` returns promptly after ``stop`` is set (the open watch is stopped).
"""

from __future__ import annotations

import builtins
import random
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from samplecontroller.apimachinery import errors, meta
from samplecontroller.client.types import ListerWatcher, ListOptions, Watch
from samplecontroller.logs import get_logger
from samplecontroller.wait import Backoff

log = get_logger("reflector")

MIN_WATCH_TIMEOUT = 300.0
PAGE_SIZE = 500


class ReflectorStore(Protocol):
    def add(self, obj: Any) -> None: ...
    def update(self, obj: Any) -> None: ...
    def delete(self, obj: Any) -> None: ...
    def replace(self, objects: list[Any], resource_version: str) -> None: ...


class _Relist(Exception):
    """The watch cannot continue from the last version: list again."""


def default_watch_error_handler(name: str, err: BaseException) -> None:
    if errors.is_resource_expired(err) or errors.is_gone(err):
        log.info("Watch closed with expired resource version; re-listing", reflector=name, error=str(err))
    else:
        log.warning("Failed to watch or list", reflector=name, error=f"{type(err).__name__}: {err}")


class Reflector:
    """Keeps ``store`` in step with the server's objects of one resource."""

    def __init__(self, lister_watcher: ListerWatcher[Any], store: ReflectorStore, *, name: str = "",
                 page_size: int = PAGE_SIZE, watch_error_handler: Callable[[str, BaseException], None] | None = None,
                 backoff: Backoff | None = None, min_watch_timeout: float = MIN_WATCH_TIMEOUT) -> None:
        self.lister_watcher = lister_watcher
        self.store = store
        self.name = name or "reflector"
        self.page_size = page_size
        self.watch_error_handler = watch_error_handler or default_watch_error_handler
        self.backoff = backoff or Backoff(0.8, 2.0, 1.0, 30.0, reset_after=120.0)
        self.min_watch_timeout = min_watch_timeout
        self._last_sync_rv = ""
        self._rv_lock = threading.Lock()
        self._watch: Watch[Any] | None = None
        self._watch_lock = threading.Lock()
        self._relist_from_scratch = False

    def last_sync_resource_version(self) -> str:
        with self._rv_lock:
            return self._last_sync_rv

    def _set_rv(self, rv: str) -> None:
        with self._rv_lock:
            self._last_sync_rv = rv

    def run(self, stop: threading.Event) -> None:
        """list_and_watch until ``stop``, backing off between failures."""
        stopper = threading.Thread(target=self._stop_watch_on, args=(stop,), name=f"{self.name}-stopper", daemon=True)
        stopper.start()
        while not stop.is_set():
            try:
                self.list_and_watch(stop)
            except Exception as err:
                if stop.is_set():
                    return
                self.watch_error_handler(self.name, err)
            if stop.wait(self.backoff.next()):
                return

    def _stop_watch_on(self, stop: threading.Event) -> None:
        stop.wait()
        with self._watch_lock:
            if self._watch is not None:
                self._watch.stop()

    def _list_rv(self) -> str:
        if self._relist_from_scratch:
            return ""
        rv = self.last_sync_resource_version()
        return rv or "0"

    def list(self) -> str:
        """List everything (paged) and replace the store; returns the list's resourceVersion."""
        rv = self._list_rv()
        try:
            items, list_rv = self._list_pages(rv)
        except errors.StatusError as err:
            if not (errors.is_resource_expired(err) or errors.is_gone(err) or errors.is_timeout(err)):
                raise
            items, list_rv = self._list_pages("")
        self._relist_from_scratch = False
        self.store.replace(items, list_rv)
        self._set_rv(list_rv)
        return list_rv

    def _list_pages(self, rv: str) -> tuple[builtins.list[Any], str]:
        items: builtins.list[Any] = []
        options = ListOptions(resource_version=rv, limit=self.page_size)
        while True:
            page = self.lister_watcher.list(options)
            items.extend(page.items)
            if not page.continue_:
                return items, page.resource_version
            options = ListOptions(continue_=page.continue_, limit=self.page_size)

    def list_and_watch(self, stop: threading.Event) -> None:
        self.list()
        while not stop.is_set():
            timeout = int(self.min_watch_timeout * (random.random() + 1.0))
            options = ListOptions(resource_version=self.last_sync_resource_version(), timeout_seconds=timeout,
                                  allow_watch_bookmarks=True)
            try:
                w = self.lister_watcher.watch(options)
            except errors.StatusError as err:
                if errors.is_resource_expired(err) or errors.is_gone(err):
                    self._relist_from_scratch = errors.is_gone(err) and not errors.is_resource_expired(err)
                    self.watch_error_handler(self.name, err)
                    return
                raise
            with self._watch_lock:
                if stop.is_set():
                    w.stop()
                    return
                self._watch = w
            started = time.monotonic()
            try:
                self._watch_handler(w, stop)
            except _Relist as err:
                self.watch_error_handler(self.name, err.__cause__ or err)
                return
            finally:
                with self._watch_lock:
                    self._watch = None
                w.stop()
            if time.monotonic() - started < 1.0 and not stop.is_set():
                # A watch that closes at once and repeatedly would spin; let run() back off.
                raise RuntimeError("watch closed immediately")

    def _watch_handler(self, w: Watch[Any], stop: threading.Event) -> None:
        for event in w:
            if stop.is_set():
                return
            if event.type == "ERROR":
                err = errors.from_status(event.status or {})
                if errors.is_resource_expired(err) or errors.is_gone(err):
                    raise _Relist() from err
                raise err
            obj = event.object
            rv = meta.get_resource_version(obj)
            if event.type == "ADDED":
                self.store.add(obj)
            elif event.type == "MODIFIED":
                self.store.update(obj)
            elif event.type == "DELETED":
                self.store.delete(obj)
            if rv:
                self._set_rv(rv)
