"""The event correlator, like client-go's tools/record/events_cache.go.

``EventCorrelator.correlate`` runs three stages, in Go's order:

1. Aggregator: events that differ only in message are grouped per (source, involved object,
   type, reason, reporting controller/instance). Once 10 distinct messages were seen in a group
   within 10 minutes of each other, the event is replaced by a new one whose message is
   "(combined from similar events): <message>" and which is counted under the group's key (so
   later similar events patch that one aggregate event instead of creating new ones).
2. Logger: an event seen before under the same key (source, object, type, reason, message; or
   the group key for aggregates) takes the earlier event's name, resourceVersion and
   firstTimestamp, its count is incremented and it comes with a merge patch of
   ``count``/``lastTimestamp``/``message`` to apply to the earlier event.
3. Spam filter: a token bucket per (source, involved object): burst 25, refilled one token per
   5 minutes. An event without a token is skipped (counting still advanced in stage 2, as in Go).

Every cache is an LRU of 4096 entries. Thread-safe. Time comes from the injectable ``clock``
(seconds since the epoch, like ``time.time``).
"""

from __future__ import annotations

import copy
import datetime
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import msgspec

MAX_LRU_CACHE_ENTRIES = 4096
DEFAULT_AGGREGATE_MAX_EVENTS = 10
DEFAULT_AGGREGATE_INTERVAL_SECONDS = 600.0
DEFAULT_SPAM_BURST = 25
DEFAULT_SPAM_QPS = 1.0 / 300.0
AGGREGATE_MESSAGE_PREFIX = "(combined from similar events): "

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """A bounded mapping that evicts the least recently used entry. Not thread-safe."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        """The value of ``key`` (now the most recently used), or None."""
        value = self.data.get(key)
        if value is not None:
            self.data.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        """Store ``value`` under ``key``, evicting the least recently used beyond the size."""
        self.data[key] = value
        self.data.move_to_end(key)
        while len(self.data) > self.size:
            self.data.popitem(last=False)

    def __len__(self) -> int:
        return len(self.data)


_last_formatted: tuple[int, str] = (-1, "")


def format_time(seconds: float) -> str:
    """RFC 3339 at second precision (metav1.Time's wire format)."""
    global _last_formatted
    whole = int(seconds // 1)
    last = _last_formatted  # one tuple: read and replaced whole, so threads need no lock
    if last[0] == whole:
        return last[1]
    text = datetime.datetime.fromtimestamp(whole, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    _last_formatted = (whole, text)
    return text


def _src_obj(event: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    return event.get("source") or {}, event.get("involvedObject") or {}


def spam_key(event: dict[str, Any]) -> tuple[str, ...]:
    """Source + involved object (getSpamKey)."""
    src, obj = _src_obj(event)
    return (src.get("component", ""), src.get("host", ""), obj.get("kind", ""), obj.get("namespace", ""),
            obj.get("name", ""), obj.get("uid", ""), obj.get("apiVersion", ""))


def event_key(event: dict[str, Any]) -> tuple[str, ...]:
    """Source, involved object (with fieldPath), type, reason and message (getEventKey)."""
    src, obj = _src_obj(event)
    return (src.get("component", ""), src.get("host", ""), obj.get("kind", ""), obj.get("namespace", ""),
            obj.get("name", ""), obj.get("fieldPath", ""), obj.get("uid", ""), obj.get("apiVersion", ""),
            event.get("type", ""), event.get("reason", ""), event.get("message", ""))


def aggregate_key(event: dict[str, Any]) -> tuple[tuple[str, ...], str]:
    """(group key, local key): group by everything but the message (EventAggregatorByReasonFunc)."""
    return (*spam_key(event), event.get("type", ""), event.get("reason", ""),
            event.get("reportingComponent", ""), event.get("reportingInstance", ""), "aggregate"), \
        event.get("message", "")


class TokenBucket:
    """A token bucket: ``burst`` tokens, refilled at ``qps`` per second. Not thread-safe."""

    def __init__(self, qps: float, burst: int, now: float) -> None:
        self.qps = qps
        self.burst = float(burst)
        self.tokens = float(burst)
        self.last = now

    def try_accept(self, now: float) -> bool:
        """Take a token if one is available at time ``now``; True if taken."""
        self.tokens = min(self.burst, self.tokens + max(0.0, now - self.last) * self.qps)
        self.last = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True


@dataclass
class _AggregateRecord:
    local_keys: set[str]
    last: float


@dataclass
class _EventLog:
    count: int
    first_timestamp: Any
    name: str
    resource_version: str


@dataclass
class CorrelationResult:
    """``event`` to write; ``patch`` (JSON merge patch bytes) when it updates an earlier event;
    ``skip`` when the spam filter dropped it (``event`` is then the observed event, unused)."""

    event: dict[str, Any]
    patch: bytes | None
    skip: bool


class EventCorrelator:
    """Decides, per event, whether to drop it, create it, or patch an earlier one. Thread-safe.

    Events are core/v1 Event dicts as built by the recorder; ``correlate`` never mutates its
    argument (it returns a copy when anything changes).
    """

    def __init__(self, clock: Callable[[], float] = time.time, *, burst: int = DEFAULT_SPAM_BURST,
                 qps: float = DEFAULT_SPAM_QPS, max_events: int = DEFAULT_AGGREGATE_MAX_EVENTS,
                 max_interval: float = DEFAULT_AGGREGATE_INTERVAL_SECONDS,
                 cache_size: int = MAX_LRU_CACHE_ENTRIES) -> None:
        if burst < 1 or qps < 0 or max_events < 1 or max_interval < 0 or cache_size < 1:
            raise ValueError("correlator options: burst, max_events and cache_size must be >= 1, "
                             "qps and max_interval >= 0")
        self.clock = clock
        self.burst = burst
        self.qps = qps
        self.max_events = max_events
        self.max_interval = max_interval
        self._lock = threading.Lock()
        self._spam: LRU[tuple[str, ...], TokenBucket] = LRU(cache_size)
        self._aggregate: LRU[tuple[str, ...], _AggregateRecord] = LRU(cache_size)
        self._logs: LRU[tuple[str, ...], _EventLog] = LRU(cache_size)

    def _aggregated(self, event: dict[str, Any], now: float) -> tuple[dict[str, Any], tuple[str, ...]]:
        group, local = aggregate_key(event)
        record = self._aggregate.get(group)
        if record is None or now - record.last > self.max_interval:
            record = _AggregateRecord(set(), now)
        record.local_keys.add(local)
        record.last = now
        self._aggregate.put(group, record)
        if len(record.local_keys) < self.max_events:
            return event, event_key(event)
        record.local_keys.pop()  # do not grow past max (Go's PopAny)
        stamp = format_time(now)
        obj = event.get("involvedObject") or {}
        aggregated: dict[str, Any] = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{obj.get('name', '')}.{int(now * 1e9):x}",
                         "namespace": (event.get("metadata") or {}).get("namespace", "")},
            "involvedObject": copy.deepcopy(obj), "count": 1, "firstTimestamp": stamp, "lastTimestamp": stamp,
            "message": AGGREGATE_MESSAGE_PREFIX + event.get("message", ""),
            "type": event.get("type", ""), "reason": event.get("reason", ""),
            "source": copy.deepcopy(event.get("source") or {}),
        }
        return aggregated, group

    def _observe(self, event: dict[str, Any], key: tuple[str, ...]) -> tuple[dict[str, Any], bytes | None]:
        last = self._logs.get(key)
        patch: bytes | None = None
        if last is not None and last.count > 0:
            # A copy of the parts changed here (the event may be another watcher's too); nothing
            # downstream changes the nested parts, so they are shared as they are.
            event = dict(event)
            md = event["metadata"] = dict(event.get("metadata") or {})
            md["name"] = last.name
            if last.resource_version:
                md["resourceVersion"] = last.resource_version
            else:
                md.pop("resourceVersion", None)
            event["firstTimestamp"] = last.first_timestamp
            event["count"] = last.count + 1
            body: dict[str, Any] = {"count": event["count"], "lastTimestamp": event.get("lastTimestamp")}
            if event.get("message"):
                body["message"] = event["message"]
            patch = msgspec.json.encode(body)
        md = event.get("metadata") or {}
        self._logs.put(key, _EventLog(int(event.get("count") or 1), event.get("firstTimestamp"),
                                      md.get("name", ""), md.get("resourceVersion", "")))
        return event, patch

    def _filtered(self, event: dict[str, Any], now: float) -> bool:
        key = spam_key(event)
        bucket = self._spam.get(key)
        if bucket is None:
            bucket = TokenBucket(self.qps, self.burst, now)
        accepted = bucket.try_accept(now)
        self._spam.put(key, bucket)
        return not accepted

    def correlate(self, event: dict[str, Any]) -> CorrelationResult:
        """Aggregate, count, then spam-filter ``event`` (see the module docstring)."""
        now = self.clock()
        with self._lock:
            aggregated, key = self._aggregated(event, now)
            observed, patch = self._observe(aggregated, key)
            if self._filtered(observed, now):
                return CorrelationResult(observed, None, True)
        return CorrelationResult(observed, patch, False)

    def update_state(self, event: dict[str, Any]) -> None:
        """Remember the server's copy (name, resourceVersion, count) of a written event."""
        md = event.get("metadata") or {}
        log = _EventLog(int(event.get("count") or 1), event.get("firstTimestamp"), md.get("name", ""),
                        md.get("resourceVersion", ""))
        with self._lock:
            self._logs.put(event_key(event), log)
