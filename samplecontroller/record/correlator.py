"""The event correlator, like client-go's tools/record/events_cache.go.

Three stages, in order:
1. Spam filter: a token bucket per (source, involved object): burst 25, refilled one token per
   5 minutes; an event without a token is dropped.
2. Aggregator: events that differ only in message are counted per (source, object, type, reason)
   within 10 minutes; from the 10th on they are recorded as one event whose message is
   "(combined from similar events): <latest message>".
3. Logger: an event identical to one already recorded (same key including message) increments
   that event's count and lastTimestamp and is written as a PATCH of the earlier event.
"""

from __future__ import annotations

import copy
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MAX_LRU_CACHE_ENTRIES = 4096
DEFAULT_AGGREGATE_MAX_EVENTS = 10
DEFAULT_AGGREGATE_INTERVAL_SECONDS = 600.0
DEFAULT_SPAM_BURST = 25
DEFAULT_SPAM_QPS = 1.0 / 300.0


class _LRU:
    def __init__(self, size: int) -> None:
        self.size = size
        self.data: OrderedDict[Any, Any] = OrderedDict()

    def get(self, key: Any) -> Any:
        value = self.data.get(key)
        if value is not None:
            self.data.move_to_end(key)
        return value

    def put(self, key: Any, value: Any) -> None:
        self.data[key] = value
        self.data.move_to_end(key)
        while len(self.data) > self.size:
            self.data.popitem(last=False)


def _obj_key(event: dict[str, Any]) -> tuple[str, ...]:
    src = event.get("source") or {}
    obj = event.get("involvedObject") or {}
    return (src.get("component", ""), src.get("host", ""), obj.get("kind", ""), obj.get("namespace", ""),
            obj.get("name", ""), obj.get("uid", ""), obj.get("apiVersion", ""))


@dataclass
class CorrelationResult:
    event: dict[str, Any]
    patch: bytes | None  # set when the event updates one recorded before
    skip: bool


class EventCorrelator:
    """Decides, per event, whether to drop it, create it, or patch an earlier one. Thread-safe."""

    def __init__(self, clock: Callable[[], float] = time.time, *, burst: int = DEFAULT_SPAM_BURST,
                 qps: float = DEFAULT_SPAM_QPS, max_events: int = DEFAULT_AGGREGATE_MAX_EVENTS,
                 max_interval: float = DEFAULT_AGGREGATE_INTERVAL_SECONDS) -> None:
        self.clock = clock
        self.burst = burst
        self.qps = qps
        self.max_events = max_events
        self.max_interval = max_interval
        self._lock = threading.Lock()
        self._spam = _LRU(MAX_LRU_CACHE_ENTRIES)
        self._aggregate = _LRU(MAX_LRU_CACHE_ENTRIES)
        self._seen = _LRU(MAX_LRU_CACHE_ENTRIES)

    def _allow(self, event: dict[str, Any], now: float) -> bool:
        key = _obj_key(event)
        tokens, last = self._spam.get(key) or (float(self.burst), now)
        tokens = min(float(self.burst), tokens + (now - last) * self.qps)
        if tokens < 1.0:
            self._spam.put(key, (tokens, now))
            return False
        self._spam.put(key, (tokens - 1.0, now))
        return True

    def _aggregated(self, event: dict[str, Any], now: float) -> dict[str, Any]:
        key = (*_obj_key(event), event.get("type", ""), event.get("reason", ""))
        record = self._aggregate.get(key)
        if record is None or now - record["last"] > self.max_interval:
            record = {"messages": set(), "last": now}
        record["messages"].add(event.get("message", ""))
        record["last"] = now
        self._aggregate.put(key, record)
        if len(record["messages"]) < self.max_events:
            return event
        aggregated = copy.deepcopy(event)
        aggregated["message"] = f"(combined from similar events): {event.get('message', '')}"
        aggregated["metadata"]["name"] = f"{event['involvedObject'].get('name', '')}.{_agg_suffix(key)}"
        return aggregated

    def correlate(self, event: dict[str, Any]) -> CorrelationResult:
        now = self.clock()
        with self._lock:
            if not self._allow(event, now):
                return CorrelationResult(event, None, True)
            event = self._aggregated(event, now)
            key = (*_obj_key(event), event.get("type", ""), event.get("reason", ""), event.get("message", ""))
            seen = self._seen.get(key)
            if seen is None:
                self._seen.put(key, {"count": 1, "name": event["metadata"]["name"],
                                     "first": event.get("firstTimestamp"), "rv": ""})
                return CorrelationResult(event, None, False)
            seen["count"] += 1
            event = copy.deepcopy(event)
            event["metadata"]["name"] = seen["name"]
            event["count"] = seen["count"]
            event["firstTimestamp"] = seen["first"]
            import msgspec

            patch = msgspec.json.encode({"count": event["count"], "lastTimestamp": event.get("lastTimestamp"),
                                         "message": event.get("message")})
            return CorrelationResult(event, patch, False)

    def forget(self, event: dict[str, Any]) -> None:
        """The earlier event is gone on the server: the next identical one is created anew."""
        key = (*_obj_key(event), event.get("type", ""), event.get("reason", ""), event.get("message", ""))
        with self._lock:
            self._seen.data.pop(key, None)


def _agg_suffix(key: tuple[str, ...]) -> str:
    import hashlib

    return hashlib.sha256("\x00".join(key).encode()).hexdigest()[:16]
