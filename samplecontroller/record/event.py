"""Event recording, like client-go's tools/record (event.go).

``EventBroadcaster`` receives events from recorders into a bounded queue (full: the event is
dropped and counted, the caller is never blocked) and hands each to its watchers: the sink
writer (``start_recording_to_sink``), the structured logger (``start_structured_logging``) and
any ``start_event_watcher`` function. Each watcher runs on its own thread with its own bounded
buffer, so a slow API server never stalls logging or the controller.

Sink writes follow Go: the correlator decides create / patch / drop; a failed write is retried
up to 12 times with a jittered 10 s sleep (injectable), except API rejections (a Status error),
which are not retried; a patch of an event that no longer exists is turned into a create.
"""

from __future__ import annotations

import datetime
import queue
import random
import socket
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from samplecontroller.apimachinery import errors, meta
from samplecontroller.logs import get_logger
from samplecontroller.record.correlator import EventCorrelator

log = get_logger("record")

EVENT_TYPE_NORMAL = "Normal"
EVENT_TYPE_WARNING = "Warning"
MAX_TRIES_PER_EVENT = 12
DEFAULT_SLEEP_DURATION = 10.0
MAX_QUEUED_EVENTS = 1000


class EventRecorder(Protocol):
    """What controllers call. Never blocks; may drop events under pressure."""

    def event(self, obj: Any, event_type: str, reason: str, message: str) -> None: ...
    def eventf(self, obj: Any, event_type: str, reason: str, fmt: str, *args: Any) -> None: ...
    def annotated_eventf(self, obj: Any, annotations: Mapping[str, str], event_type: str, reason: str,
                         fmt: str, *args: Any) -> None: ...


class EventSink(Protocol):
    """Writes core/v1 Events (dicts) to the API."""

    def create(self, event: dict[str, Any]) -> dict[str, Any]: ...
    def update(self, event: dict[str, Any]) -> dict[str, Any]: ...
    def patch(self, event: dict[str, Any], data: bytes) -> dict[str, Any]: ...


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class _Watcher:
    def __init__(self, fn: Callable[[dict[str, Any]], None], size: int, name: str) -> None:
        self.fn = fn
        self.queue: queue.Queue[dict[str, Any] | None] = queue.Queue(size)
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            event = self.queue.get()
            if event is None:
                return
            try:
                self.fn(event)
            except Exception as err:
                log.error("Event watcher failed", error=f"{type(err).__name__}: {err}")


class EventBroadcaster:
    """Fans recorded events out to watchers. Create with ``new_broadcaster``."""

    def __init__(self, queue_size: int = MAX_QUEUED_EVENTS, *, sleep: Callable[[float], None] = time.sleep,
                 sleep_duration: float = DEFAULT_SLEEP_DURATION, correlator: EventCorrelator | None = None) -> None:
        self.queue_size = queue_size
        self.sleep = sleep
        self.sleep_duration = sleep_duration
        self.correlator = correlator or EventCorrelator()
        self.dropped = 0
        self._lock = threading.Lock()
        self._watchers: list[_Watcher] = []
        self._incoming: queue.Queue[dict[str, Any] | None] = queue.Queue(queue_size)
        self._shutdown = False
        self._thread = threading.Thread(target=self._distribute, name="event-broadcaster", daemon=True)
        self._thread.start()

    def _distribute(self) -> None:
        while True:
            event = self._incoming.get()
            if event is None:
                return
            with self._lock:
                watchers = list(self._watchers)
            for w in watchers:
                try:
                    w.queue.put_nowait(event)
                except queue.Full:
                    self.dropped += 1

    def action(self, event: dict[str, Any]) -> bool:
        """Queue ``event``; False (and counted in ``dropped``) when the queue is full or shut down."""
        if self._shutdown:
            return False
        try:
            self._incoming.put_nowait(event)
            return True
        except queue.Full:
            self.dropped += 1
            return False

    def start_event_watcher(self, fn: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
        """Call ``fn`` for every event (on a thread of its own); returns a function that stops it."""
        w = _Watcher(fn, self.queue_size, "event-watcher")
        with self._lock:
            self._watchers.append(w)

        def stop() -> None:
            with self._lock:
                if w in self._watchers:
                    self._watchers.remove(w)
            w.queue.put(None)

        return stop

    def start_structured_logging(self, level: str = "info") -> Callable[[], None]:
        def write(event: dict[str, Any]) -> None:
            obj = event.get("involvedObject") or {}
            getattr(log, level)("Event occurred", object=f"{obj.get('namespace', '')}/{obj.get('name', '')}",
                                kind=obj.get("kind", ""), apiVersion=obj.get("apiVersion", ""),
                                type=event.get("type", ""), reason=event.get("reason", ""),
                                message=event.get("message", ""))

        return self.start_event_watcher(write)

    def start_recording_to_sink(self, sink: EventSink) -> Callable[[], None]:
        return self.start_event_watcher(lambda event: self._record_to_sink(sink, event))

    def _record_to_sink(self, sink: EventSink, event: dict[str, Any]) -> None:
        result = self.correlator.correlate(event)
        if result.skip:
            return
        tries = 0
        while True:
            if _record_once(sink, result.event, result.patch, self.correlator):
                return
            tries += 1
            if tries >= MAX_TRIES_PER_EVENT:
                log.error("Unable to write event (retry limit exceeded)", name=result.event["metadata"]["name"])
                return
            delay = self.sleep_duration if tries == 1 else self.sleep_duration * (0.5 + random.random())
            self.sleep(delay)

    def new_recorder(self, source_component: str, host: str | None = None) -> EventRecorder:
        return _Recorder(self, source_component, host if host is not None else socket.gethostname())

    def shutdown(self) -> None:
        """Stop accepting events and stop every watcher (events still buffered are dropped)."""
        self._shutdown = True
        with self._lock:
            watchers = list(self._watchers)
            self._watchers.clear()
        for w in watchers:
            w.queue.put(None)
        self._incoming.put(None)


def _record_once(sink: EventSink, event: dict[str, Any], patch: bytes | None, correlator: EventCorrelator) -> bool:
    """True when done (written, or given up for good); False to retry."""
    try:
        if patch is not None:
            try:
                sink.patch(event, patch)
                return True
            except errors.StatusError as err:
                if not errors.is_not_found(err):
                    raise
                correlator.forget(event)
                fresh = dict(event)
                fresh["count"] = 1
                fresh["metadata"] = {k: v for k, v in event["metadata"].items() if k != "resourceVersion"}
                event = fresh
        sink.create(event)
        return True
    except errors.StatusError as err:
        # The server rejected it: retrying cannot help (Go gives up too).
        if errors.is_already_exists(err):
            log.debug("Event already exists", name=event["metadata"]["name"])
        else:
            log.error("Server rejected event (will not retry)", name=event["metadata"]["name"], error=str(err))
        return True
    except Exception as err:
        log.error("Unable to write event (may retry)", name=event["metadata"]["name"], error=str(err))
        return False


class _Recorder:
    def __init__(self, broadcaster: EventBroadcaster, component: str, host: str) -> None:
        self.broadcaster = broadcaster
        self.component = component
        self.host = host

    def _make(self, obj: Any, annotations: Mapping[str, str] | None, event_type: str, reason: str,
              message: str) -> dict[str, Any] | None:
        if event_type not in (EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING):
            log.error("Unsupported event type", type=event_type)
            return None
        name = meta.get_name(obj)
        namespace = meta.get_namespace(obj)
        now = _now()
        involved = {"kind": meta.get_kind(obj), "namespace": namespace, "name": name, "uid": meta.get_uid(obj),
                    "apiVersion": meta.get_api_version(obj), "resourceVersion": meta.get_resource_version(obj)}
        md: dict[str, Any] = {"name": f"{name}.{time.time_ns():x}", "namespace": namespace or "default"}
        if annotations:
            md["annotations"] = dict(annotations)
        return {
            "apiVersion": "v1", "kind": "Event", "metadata": md,
            "involvedObject": {k: v for k, v in involved.items() if v},
            "reason": reason, "message": message, "type": event_type, "count": 1,
            "firstTimestamp": now, "lastTimestamp": now,
            "source": {"component": self.component, "host": self.host},
            "reportingComponent": self.component, "reportingInstance": self.host,
        }

    def event(self, obj: Any, event_type: str, reason: str, message: str) -> None:
        ev = self._make(obj, None, event_type, reason, message)
        if ev is not None:
            self.broadcaster.action(ev)

    def eventf(self, obj: Any, event_type: str, reason: str, fmt: str, *args: Any) -> None:
        self.event(obj, event_type, reason, fmt % args if args else fmt)

    def annotated_eventf(self, obj: Any, annotations: Mapping[str, str], event_type: str, reason: str,
                         fmt: str, *args: Any) -> None:
        ev = self._make(obj, annotations, event_type, reason, fmt % args if args else fmt)
        if ev is not None:
            self.broadcaster.action(ev)


def new_broadcaster(queue_size: int = MAX_QUEUED_EVENTS, **kw: Any) -> EventBroadcaster:
    return EventBroadcaster(queue_size, **kw)
