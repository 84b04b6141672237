"""Reflector: list then watch, feeding a store (client-go's tools/cache/reflector.go).

Behaviour (Go's numbers and rules):
- ``run(stop)`` calls ``list_and_watch`` again and again, waiting a backoff between calls:
  0.8 s doubling to 30 s with jitter 1.0, reset after 2 minutes without a failure wait.
  An exception from ``list_and_watch`` goes to the watch-error hook first.
- List resourceVersion: "0" first (any cached state is fine), then the last synced version;
  "" (a consistent read) once that version is known to be unavailable: a list answered with
  410 Expired or "too large resource version" is retried at once with "".
- Lists are paged (``limit=500`` + ``continue``) when asking for "0" or "", and for later
  versions only if the server paged the first "0" list (Go: a specific version is served
  unpaged from the watch cache). An expired continue token falls back to one unpaged list.
- The list replaces the store's content (``store.replace(items, rv)``); no re-encoding happens:
  items are whatever the ListerWatcher decoded, passed through ``compact`` when one is given
  (each listed item as its page arrives, so a page's buffer goes before the next is read; each
  added or modified object of a watch before the store sees it).
- Watches start at the last synced version with ``allowWatchBookmarks`` and a random
  ``timeoutSeconds`` in [300, 600). Every event updates the last synced version (BOOKMARK
  events only do that). A watch that ends (server timeout, dropped connection) is re-opened at
  that version without a re-list; one that ends within a second without events counts as a
  failure (backoff and re-list).
- An ERROR event ends the watch; 410 Expired then re-lists at the last synced version (and
  from "" if that list is expired too). Opening a watch that fails with 429 or a refused
  connection backs off and re-opens the watch; any other failure re-lists after the backoff.
- ``run`` returns promptly after ``stop`` is set: the open watch is stopped. A list in
  progress is not interrupted.
"""

from __future__ import annotations

import builtins
import random
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from samplecontroller.apimachinery import errors, meta
from samplecontroller.cache.pager import DEFAULT_PAGE_SIZE, list_all
from samplecontroller.client.types import ListerWatcher, ListOptions, Watch
from samplecontroller.logs import get_logger
from samplecontroller.rest import TransportError
from samplecontroller.wait import BackoffManager, ExponentialBackoffManager, as_context

log = get_logger("reflector")

MIN_WATCH_TIMEOUT = 300.0
PAGE_SIZE = DEFAULT_PAGE_SIZE

WatchErrorHandler = Callable[[str, BaseException], None]


class ReflectorStore(Protocol):
    """What a Reflector writes to (a DeltaFIFO, or any Store)."""

    def add(self, obj: Any) -> None:
        """A watch ADDED event."""

    def update(self, obj: Any) -> None:
        """A watch MODIFIED event."""

    def delete(self, obj: Any) -> None:
        """A watch DELETED event."""

    def replace(self, objects: Iterable[Any], resource_version: str = "") -> None:
        """A complete list: the store's content becomes ``objects`` (at ``resource_version``)."""


class WatchEndedError(Exception):
    """A watch ended in a way that needs a backoff and a re-list (for example it closed at once)."""


def default_backoff() -> BackoffManager:
    """client-go's reflector backoff: 0.8 s doubling to 30 s, jitter 1.0, reset after 2 minutes."""
    return ExponentialBackoffManager(0.8, 30.0, 120.0, 2.0, 1.0)


def is_expired(err: BaseException) -> bool:
    """410 Expired or Gone (Go's isExpiredError)."""
    return errors.is_resource_expired(err) or errors.is_gone(err)


def is_too_large_resource_version(err: BaseException) -> bool:
    """The server has not caught up with the requested version (504 with cause ResourceVersionTooLarge)."""
    if not isinstance(err, errors.StatusError) or not errors.is_timeout(err):
        return False
    causes = (err.details or {}).get("causes") or []
    if any(isinstance(c, dict) and c.get("reason") == "ResourceVersionTooLarge" for c in causes):
        return True
    return "too large resource version" in err.message.lower()


def is_watch_error_retriable(err: BaseException) -> bool:
    """Opening a watch failed in a way worth retrying without a re-list (refused connection, 429)."""
    if errors.is_too_many_requests(err) or isinstance(err, ConnectionRefusedError):
        return True
    return isinstance(err, TransportError) and "refused" in str(err).lower()


def default_watch_error_handler(name: str, err: BaseException) -> None:
    """Log the failure (expired versions at info level, like client-go)."""
    if is_expired(err):
        log.info("Watch closed with expired resource version", reflector=name, error=str(err))
    else:
        log.warning("Failed to watch or list", reflector=name, error=f"{type(err).__name__}: {err}")


class Reflector:
    """Keeps ``store`` in step with the server's objects of one resource."""

    def __init__(self, lister_watcher: ListerWatcher[Any], store: ReflectorStore, *, name: str = "",
                 page_size: int = PAGE_SIZE, watch_error_handler: WatchErrorHandler | None = None,
                 backoff: BackoffManager | None = None, min_watch_timeout: float = MIN_WATCH_TIMEOUT,
                 compact: Callable[[Any], Any] | None = None) -> None:
        self.lister_watcher = lister_watcher
        self.store = store
        self.name = name or "reflector"
        self.page_size = page_size
        self.watch_error_handler: WatchErrorHandler = watch_error_handler or default_watch_error_handler
        self.backoff = backoff or default_backoff()
        self.min_watch_timeout = min_watch_timeout
        self.compact = compact
        self._last_sync_rv = ""
        self._rv_unavailable = False
        self._paginated_result = False
        self._rv_lock = threading.Lock()
        self._watch: Watch[Any] | None = None
        self._watch_lock = threading.Lock()

    # -- resource versions -----------------------------------------------------------------

    def last_sync_resource_version(self) -> str:
        """The resourceVersion of the last list or watch event seen ("" before the first list)."""
        with self._rv_lock:
            return self._last_sync_rv

    def _set_rv(self, rv: str) -> None:
        with self._rv_lock:
            self._last_sync_rv = rv

    def relist_resource_version(self) -> str:
        """The version the next list asks for: "" if the last one is unavailable, "0" at first."""
        with self._rv_lock:
            if self._rv_unavailable:
                return ""
            return self._last_sync_rv or "0"

    # -- running ---------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """list_and_watch until ``stop`` (a ``wait.Context``, or an Event adapted to one) is set,
        waiting ``backoff`` between attempts. The open watch is stopped by a done-callback."""
        ctx = as_context(stop)
        handle = ctx.add_done_callback(self._stop_watch)
        try:
            while not ctx.done():
                try:
                    self.list_and_watch(ctx)
                except Exception as err:
                    if ctx.done():
                        return
                    self._report(err)
                if ctx.wait(self.backoff.backoff()):
                    return
        finally:
            ctx.remove_done_callback(handle)

    def _report(self, err: BaseException) -> None:
        try:
            self.watch_error_handler(self.name, err)
        except Exception as hook_err:
            log.error("Watch error handler failed", reflector=self.name, error=repr(hook_err))

    def _stop_watch(self) -> None:
        with self._watch_lock:
            if self._watch is not None:
                self._watch.stop()

    def list(self) -> str:
        """List everything (paged) into the store; returns the list's resourceVersion."""
        rv = self.relist_resource_version()
        try:
            items, list_rv = self._list_at(rv)
        except errors.StatusError as err:
            if not (is_expired(err) or is_too_large_resource_version(err)):
                raise
            with self._rv_lock:
                self._rv_unavailable = True
            items, list_rv = self._list_at("")
        with self._rv_lock:
            self._rv_unavailable = False
        self.store.replace(items, list_rv)
        self._set_rv(list_rv)
        return list_rv

    def _list_at(self, rv: str) -> tuple[builtins.list[Any], str]:
        page_size = self.page_size
        if rv not in ("", "0") and not self._paginated_result:
            page_size = 0
        items, list_rv, paginated = list_all(self.lister_watcher.list, ListOptions(resource_version=rv), page_size,
                                             self.compact)
        if rv == "0" and paginated:
            self._paginated_result = True
        return items, list_rv

    def list_and_watch(self, stop: threading.Event) -> None:
        """One list, then watches until one fails (returns) or ``stop`` is set."""
        self.list()
        while not stop.is_set():
            timeout = int(self.min_watch_timeout * (random.random() + 1.0))
            options = ListOptions(resource_version=self.last_sync_resource_version(), timeout_seconds=timeout,
                                  allow_watch_bookmarks=True)
            try:
                w = self.lister_watcher.watch(options)
            except Exception as err:
                if stop.is_set():
                    return
                if is_watch_error_retriable(err):
                    log.info("Watch could not be opened; backing off", reflector=self.name, error=str(err))
                    if stop.wait(self.backoff.backoff()):
                        return
                    continue
                raise
            if not self._handle_watch(w, stop):
                return

    def _handle_watch(self, w: Watch[Any], stop: threading.Event) -> bool:
        """Run one watch; True to open another, False to re-list (after the backoff)."""
        with self._watch_lock:
            if stop.is_set():
                w.stop()
                return False
            self._watch = w
        started = time.monotonic()
        try:
            count = self._watch_events(w, stop)
        except errors.StatusError as err:
            self._report(err)
            return False
        except (TransportError, OSError) as err:
            # A broken stream ends the watch like a server-side close; resume from the last version.
            log.info("Watch stream broke", reflector=self.name, error=str(err))
            count = -1
        finally:
            with self._watch_lock:
                self._watch = None
            w.stop()
        if stop.is_set():
            return False
        if count == 0 and time.monotonic() - started < 1.0:
            self._report(WatchEndedError("very short watch: the watch closed within a second and received nothing"))
            return False
        return True

    def _watch_events(self, w: Watch[Any], stop: threading.Event) -> int:
        """Apply events to the store until the watch ends; returns how many were seen."""
        store = self.store
        compact = self.compact
        count = 0
        for event in w:
            if stop.is_set():
                break
            kind = event.type
            if kind == "ERROR":
                raise errors.from_status(event.status or {})
            obj = event.object
            if compact is not None and (kind == "ADDED" or kind == "MODIFIED"):
                obj = compact(obj)
            if kind == "ADDED":
                store.add(obj)
            elif kind == "MODIFIED":
                store.update(obj)
            elif kind == "DELETED":
                store.delete(obj)
            elif kind != "BOOKMARK":
                log.warning("Unknown watch event type", reflector=self.name, type=kind)
                continue
            count += 1
            rv = meta.get_resource_version(obj)
            if rv:
                self._set_rv(rv)
        return count
