"""Event recording, like client-go's tools/record (event.go).

``EventBroadcaster`` hands each event a recorder gives it to its watchers: the sink writer
(``start_recording_to_sink``), the structured logger (``start_structured_logging``) and any
``start_event_watcher`` function. Each watcher runs on a thread of its own with its own bounded
buffer of ``queue_size`` events (Go: 1000); when a buffer is full the event is dropped for that
watcher and counted in ``dropped``: the caller is never blocked, and a slow API server never
stalls logging or the controller. Delivery is best effort, as in Go: events may be lost.

Unlike Go there is no distributing thread between the recorders and the watchers, and events are
handed over in batches, in order: a recorder appends to each watcher's buffer and wakes its thread
only when that thread waits; the thread takes everything buffered at once and, after a small batch,
pauses ``batch_linger`` seconds (0.05) so that the events of a burst gather without a wakeup each
(a thread wakeup per event cost more CPU than writing the event).

Sink writes follow Go: every sink gets its own ``EventCorrelator``, which decides create /
patch / skip; a patch of an event that no longer exists (NotFound) becomes a create; a failed
write is retried up to 12 times, the first sleep a random fraction of ``sleep_duration`` (10 s)
and the others the full duration (the sleep is injectable); an API rejection (a Status error)
is never retried. ``shutdown`` stops the broadcaster and interrupts retry sleeps.
"""

from __future__ import annotations

import random
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from samplecontroller.apimachinery import errors, meta
from samplecontroller.logs import get_logger
from samplecontroller.record.correlator import EventCorrelator, format_time

log = get_logger("record")

EVENT_TYPE_NORMAL = "Normal"
EVENT_TYPE_WARNING = "Warning"
MAX_TRIES_PER_EVENT = 12
DEFAULT_SLEEP_DURATION = 10.0
MAX_QUEUED_EVENTS = 1000
DEFAULT_BATCH_LINGER = 0.05
"""Seconds a watcher waits after a small batch of events before taking the next one (events are
best effort and asynchronous; the pause lets a burst be handed over in batches)."""
LINGER_BELOW = 64
"""A batch of fewer events than this is small (see ``DEFAULT_BATCH_LINGER``)."""
NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"


class EventRecorder(Protocol):
    """What controllers call. Never blocks and never raises; may drop events under pressure."""

    def event(self, obj: Any, event_type: str, reason: str, message: str) -> None:
        """Record an Event about ``obj`` (``event_type`` Normal or Warning, a CamelCase ``reason``, a message)."""

    def eventf(self, obj: Any, event_type: str, reason: str, fmt: str, *args: Any) -> None:
        """``event`` with a printf-style message (``fmt % args``; a bad format is reported, never raised)."""

    def annotated_eventf(self, obj: Any, annotations: Mapping[str, str], event_type: str, reason: str,
                         fmt: str, *args: Any) -> None:
        """``eventf`` with ``annotations`` on the Event object."""


class EventSink(Protocol):
    """Writes core/v1 Events (dicts) to the API; returns the server's copy.

    Raise ``apimachinery.errors.StatusError`` for an API answer (not retried) and any other
    exception for a transport failure (retried).
    """

    def create(self, event: dict[str, Any]) -> dict[str, Any]:
        """Create the Event."""

    def update(self, event: dict[str, Any]) -> dict[str, Any]:
        """Replace the Event (a series' count and last timestamp)."""

    def patch(self, event: dict[str, Any], data: bytes) -> dict[str, Any]:
        """Patch the Event with the merge patch ``data``."""


def format_message(fmt: str, args: tuple[Any, ...]) -> str:
    """printf-style formatting that never raises (a bad format is reported in the message, like Go's %!)."""
    if not args:
        return fmt
    try:
        return fmt % args
    except (TypeError, ValueError) as err:
        return f"{fmt} %!({type(err).__name__}: {err}; args={args!r})"


class _Buffer:
    """A bounded FIFO feeding one consumer thread in batches. A put never blocks (a full buffer
    refuses the item) and wakes the consumer only when it is waiting: one wakeup per batch instead
    of a Condition.notify per event, which cost more than the event itself under load."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: deque[dict[str, Any]] = deque()
        self._cond = threading.Condition(threading.Lock())
        self._waiting = False
        self._closed = False

    def put(self, item: dict[str, Any]) -> bool:
        """Append ``item``; False when the buffer is full or closed."""
        with self._cond:
            if self._closed or len(self._items) >= self._size:
                return False
            self._items.append(item)
            if self._waiting:
                self._waiting = False
                self._cond.notify()
            return True

    def take(self) -> list[dict[str, Any]] | None:
        """Block until there is something; every buffered item, oldest first, or None once closed
        and empty."""
        with self._cond:
            while not self._items:
                if self._closed:
                    return None
                self._waiting = True
                self._cond.wait()
            items = list(self._items)
            self._items.clear()
            return items

    def close(self, discard: bool = False) -> None:
        """Refuse further items; ``take`` returns what is buffered (nothing with ``discard``), then None."""
        with self._cond:
            self._closed = True
            if discard:
                self._items.clear()
            self._cond.notify_all()


def _call_logged(fn: Callable[[dict[str, Any]], None], event: dict[str, Any]) -> None:
    """``fn(event)``; an exception from it is logged, not raised (a watcher never stops on one)."""
    try:
        fn(event)
    except Exception as err:
        log.error("Event watcher failed", error=f"{type(err).__name__}: {err}")


class _Watcher:
    def __init__(self, fn: Callable[[dict[str, Any]], None], size: int, name: str, linger: float) -> None:
        self.fn = fn
        self.linger = linger
        self.buffer = _Buffer(size)
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while (events := self.buffer.take()) is not None:
            for event in events:
                _call_logged(self.fn, event)
            if self.linger and len(events) < LINGER_BELOW:
                # A small batch: let the next events gather (recorders then add them without a wakeup).
                time.sleep(self.linger)

    def put(self, event: dict[str, Any]) -> bool:
        """Buffer ``event`` for the thread; False when the buffer is full or closed."""
        return self.buffer.put(event)

    def stop(self) -> None:
        """Ask the thread to end after the events already buffered (never blocks)."""
        self.buffer.close()


class _InlineWatcher:
    """A watcher whose function runs on the recording thread, at once: for a function as cheap as
    a log line, where handing the event to a thread would cost more than the function."""

    def __init__(self, fn: Callable[[dict[str, Any]], None]) -> None:
        self.fn = fn
        self.stopped = False

    def put(self, event: dict[str, Any]) -> bool:
        """Call the function with ``event`` (errors are logged); False once stopped."""
        if self.stopped:
            return False
        _call_logged(self.fn, event)
        return True

    def stop(self) -> None:
        """No more calls."""
        self.stopped = True


class EventBroadcaster:
    """Fans recorded events out to watchers. Create with ``new_broadcaster``.

    ``clock`` (seconds since the epoch) stamps events and drives the correlators; ``sleep`` is
    called with each retry delay (default: an interruptible wait ended by ``shutdown``);
    ``correlator_factory`` builds the correlator of each sink (default: Go's defaults on ``clock``);
    ``batch_linger`` is each watcher's pause after a small batch (0: none).
    """

    def __init__(self, queue_size: int = MAX_QUEUED_EVENTS, *, sleep: Callable[[float], None] | None = None,
                 sleep_duration: float = DEFAULT_SLEEP_DURATION, clock: Callable[[], float] = time.time,
                 correlator_factory: Callable[[], EventCorrelator] | None = None,
                 batch_linger: float = DEFAULT_BATCH_LINGER) -> None:
        if queue_size < 1:
            raise ValueError(f"queue_size must be at least 1, got {queue_size}")
        self.queue_size = queue_size
        self.sleep_duration = sleep_duration
        self.clock = clock
        self._stopped = threading.Event()
        self._sleep = sleep if sleep is not None else self._interruptible_sleep
        self._new_correlator = correlator_factory or (lambda: EventCorrelator(clock))
        self._lock = threading.Lock()
        self._dropped = 0
        self.batch_linger = batch_linger
        self._watchers: tuple[_Watcher | _InlineWatcher, ...] = ()  # replaced, never changed in place: ``action`` reads it unlocked

    @property
    def dropped(self) -> int:
        """Events dropped so far because a watcher's buffer was full (counted once per watcher)."""
        with self._lock:
            return self._dropped

    def _interruptible_sleep(self, seconds: float) -> None:
        self._stopped.wait(seconds)

    def action(self, event: dict[str, Any]) -> bool:
        """Hand ``event`` to every watcher without blocking; False if the broadcaster is shut down or a
        watcher's buffer was full (that watcher's copy is dropped and counted in ``dropped``)."""
        if self._stopped.is_set():
            return False
        refused = 0
        for w in self._watchers:
            if not w.put(event):
                refused += 1
        if not refused:
            return True
        with self._lock:
            self._dropped += refused
        return False

    def start_event_watcher(self, fn: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
        """Call ``fn`` for every event from now on, on a thread of its own; returns a function that stops it.

        ``fn`` gets the broadcaster's copy of the event and must not mutate it.
        """
        return self._add_watcher(_Watcher(fn, self.queue_size, "event-watcher", self.batch_linger))

    def _add_watcher(self, w: _Watcher | _InlineWatcher) -> Callable[[], None]:
        with self._lock:
            self._watchers = (*self._watchers, w)

        def stop() -> None:
            with self._lock:
                self._watchers = tuple(x for x in self._watchers if x is not w)
            w.stop()

        return stop

    def start_structured_logging(self, level: str = "info") -> Callable[[], None]:
        """Log every event as "Event occurred" with object, kind, apiVersion, type, reason, message.

        The line is logged by the thread recording the event, when it records it (Go logs from a
        goroutine of its own; a Python thread woken per event would cost more than the line).
        """
        if level not in ("debug", "info", "warning", "error"):
            raise ValueError(f"unknown log level {level!r} (debug, info, warning or error)")

        def write(event: dict[str, Any]) -> None:
            obj = event.get("involvedObject") or {}
            ref = f"{obj.get('namespace')}/{obj.get('name', '')}" if obj.get("namespace") else obj.get("name", "")
            getattr(log, level)("Event occurred", object=ref, fieldPath=obj.get("fieldPath", ""),
                                kind=obj.get("kind", ""), apiVersion=obj.get("apiVersion", ""),
                                type=event.get("type", ""), reason=event.get("reason", ""),
                                message=event.get("message", ""))

        return self._add_watcher(_InlineWatcher(write))

    def start_recording_to_sink(self, sink: EventSink) -> Callable[[], None]:
        """Write every event to ``sink`` through a correlator of its own; returns a stop function."""
        correlator = self._new_correlator()
        return self.start_event_watcher(lambda event: self._record_to_sink(sink, event, correlator))

    def _record_to_sink(self, sink: EventSink, event: dict[str, Any], correlator: EventCorrelator) -> None:
        result = correlator.correlate(event)
        if result.skip:
            return
        tries = 0
        while not record_event(sink, result.event, result.patch, correlator):
            tries += 1
            if tries >= MAX_TRIES_PER_EVENT:
                log.error("Unable to write event (retry limit exceeded)", name=_name(result.event))
                return
            # Randomize the first sleep so that clients do not retry in step after an outage.
            delay = self.sleep_duration * random.random() if tries == 1 else self.sleep_duration
            self._sleep(delay)
            if self._stopped.is_set():
                log.error("Unable to write event (broadcaster is shut down)", name=_name(result.event))
                return

    def new_recorder(self, source_component: str, host: str | None = None) -> EventRecorder:
        """A recorder whose events carry ``source.component`` (and reportingComponent) ``source_component``."""
        if not source_component:
            raise ValueError("source_component must not be empty")
        return _Recorder(self, source_component, host if host is not None else socket.gethostname())

    def shutdown(self) -> None:
        """Stop accepting events, stop every watcher, interrupt retry sleeps. Events not yet written may be lost."""
        self._stopped.set()
        with self._lock:
            watchers = self._watchers
            self._watchers = ()
        for w in watchers:
            w.stop()

    @property
    def is_shut_down(self) -> bool:
        return self._stopped.is_set()


def _name(event: dict[str, Any]) -> str:
    md = event.get("metadata") or {}
    return f"{md.get('namespace', '')}/{md.get('name', '')}"


def _has_cause(err: errors.StatusError, cause: str) -> bool:
    return any(isinstance(c, dict) and c.get("reason") == cause for c in err.details.get("causes") or ())


def _server_copy(written: Any, sent: dict[str, Any]) -> dict[str, Any]:
    return written if isinstance(written, dict) and written.get("metadata") else sent


def record_event(sink: EventSink, event: dict[str, Any], patch: bytes | None, correlator: EventCorrelator) -> bool:
    """One write attempt (Go's recordEvent): True when done (written, or given up for good), False to retry."""
    try:
        if patch is not None and int(event.get("count") or 1) > 1:
            try:
                correlator.update_state(_server_copy(sink.patch(event, patch), event))
                return True
            except errors.StatusError as err:
                if not errors.is_not_found(err):
                    raise
            # The earlier event is gone (expired): create it anew, keeping the count.
        fresh = dict(event)
        fresh["metadata"] = {k: v for k, v in (event.get("metadata") or {}).items() if k != "resourceVersion"}
        correlator.update_state(_server_copy(sink.create(fresh), fresh))
        return True
    except errors.StatusError as err:
        if errors.is_already_exists(err) or _has_cause(err, NAMESPACE_TERMINATING_CAUSE):
            log.debug("Server rejected event (will not retry)", name=_name(event), error=str(err))
        else:
            log.error("Server rejected event (will not retry)", name=_name(event), error=str(err))
        return True
    except Exception as err:
        log.error("Unable to write event (may retry after sleeping)", name=_name(event),
                  error=f"{type(err).__name__}: {err}")
        return False


class _Recorder:
    def __init__(self, broadcaster: EventBroadcaster, component: str, host: str) -> None:
        self.broadcaster = broadcaster
        self.component = component
        self.host = host
        self._lock = threading.Lock()
        self._last_nanos = 0

    def _nanos(self, now: float) -> int:
        """Event-name timestamps, strictly increasing per recorder so names never collide."""
        nanos = int(now * 1e9)
        with self._lock:
            nanos = max(nanos, self._last_nanos + 1)
            self._last_nanos = nanos
        return nanos

    def _make(self, obj: Any, annotations: Mapping[str, str] | None, event_type: str, reason: str,
              message: str) -> dict[str, Any] | None:
        kind = meta.get_kind(obj)
        name = meta.get_name(obj)
        if not kind or not name:
            log.error("Could not construct reference: the object has no kind or name; will not report event",
                      kind=kind, name=name, type=event_type, reason=reason, message=message)
            return None
        if event_type not in (EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING):
            log.error("Unsupported event type", type=event_type)
            return None
        namespace = meta.get_namespace(obj)
        now = self.broadcaster.clock()
        stamp = format_time(now)
        involved = {"kind": kind, "namespace": namespace, "name": name, "uid": meta.get_uid(obj),
                    "apiVersion": meta.get_api_version(obj), "resourceVersion": meta.get_resource_version(obj)}
        md: dict[str, Any] = {"name": f"{name}.{self._nanos(now):x}", "namespace": namespace or "default"}
        if annotations:
            md["annotations"] = dict(annotations)
        return {
            "apiVersion": "v1", "kind": "Event", "metadata": md,
            "involvedObject": {k: v for k, v in involved.items() if v},
            "reason": reason, "message": message, "type": event_type, "count": 1,
            "firstTimestamp": stamp, "lastTimestamp": stamp,
            "source": {"component": self.component, "host": self.host},
            "reportingComponent": self.component, "reportingInstance": self.host,
        }

    def _generate(self, obj: Any, annotations: Mapping[str, str] | None, event_type: str, reason: str,
                  message: str) -> None:
        ev = self._make(obj, annotations, event_type, reason, message)
        if ev is None or self.broadcaster.action(ev):
            return
        if self.broadcaster.is_shut_down:
            log.debug("Unable to record event: the broadcaster is shut down", object=_name(ev), reason=reason)
        else:
            log.error("Unable to record event: too many queued events, dropped event", object=_name(ev), reason=reason)

    def event(self, obj: Any, event_type: str, reason: str, message: str) -> None:
        self._generate(obj, None, event_type, reason, message)

    def eventf(self, obj: Any, event_type: str, reason: str, fmt: str, *args: Any) -> None:
        self._generate(obj, None, event_type, reason, format_message(fmt, args))

    def annotated_eventf(self, obj: Any, annotations: Mapping[str, str], event_type: str, reason: str,
                         fmt: str, *args: Any) -> None:
        self._generate(obj, annotations, event_type, reason, format_message(fmt, args))


def new_broadcaster(queue_size: int = MAX_QUEUED_EVENTS, *, sleep: Callable[[float], None] | None = None,
                    sleep_duration: float = DEFAULT_SLEEP_DURATION, clock: Callable[[], float] = time.time,
                    correlator_factory: Callable[[], EventCorrelator] | None = None,
                    batch_linger: float = DEFAULT_BATCH_LINGER) -> EventBroadcaster:
    """A broadcaster with a ``queue_size`` bounded queue (Go: 1000, drop when full). See ``EventBroadcaster``."""
    return EventBroadcaster(queue_size, sleep=sleep, sleep_duration=sleep_duration, clock=clock,
                            correlator_factory=correlator_factory, batch_linger=batch_linger)
