"""Event expiry: kube-apiserver's ``--event-ttl`` (default 1 h).

Kubernetes stores Events under an etcd lease renewed on every write, so an Event disappears
``ttl`` seconds after its last create or update (a DELETED watch event). ``EventExpiry`` does the
same for core/v1 and events.k8s.io/v1 Events: it listens to the store's writes, keeps the keys in
deadline order (the TTL is the same for all, so a renewed key moves to the end) and arms one loop
timer for the earliest deadline. Events found in the store at start get a full TTL from then (the
lease's remaining time is not kept across restarts).

Contract: use it on the server's event-loop thread only (as the store); ``start`` arms it,
``stop`` disarms it.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict

from samplecontroller.apiserver.storage import Event, Store

__all__ = ["EVENT_KEYS", "EventExpiry"]

EVENT_KEYS = frozenset({"/events", "events.k8s.io/events"})

Loc = tuple[str, str, str]  # (storage key, namespace, name)


class EventExpiry:
    """Deletes each Event ``ttl`` seconds after its last write (see the module docstring)."""

    def __init__(self, store: Store, ttl: float) -> None:
        if ttl <= 0:
            raise ValueError(f"the event TTL must be positive, got {ttl}")
        self.store = store
        self.ttl = ttl
        self._deadlines: OrderedDict[Loc, float] = OrderedDict()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None

    def __len__(self) -> int:
        return len(self._deadlines)

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Track the Events already stored and every later write."""
        self._loop = loop
        now = loop.time()
        for skey in EVENT_KEYS:
            for (ns, name), _ in self.store.list(skey, None):
                self._deadlines[(skey, ns, name)] = now + self.ttl
        self.store.listeners.append(self._on_event)
        self._arm()

    def stop(self) -> None:
        if self._on_event in self.store.listeners:
            self.store.listeners.remove(self._on_event)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _on_event(self, event: Event) -> None:
        if event.skey not in EVENT_KEYS or self._loop is None:
            return
        loc = (event.skey, event.namespace, event.name)
        if event.type == "DELETED":
            self._deadlines.pop(loc, None)
            return
        self._deadlines[loc] = self._loop.time() + self.ttl
        self._deadlines.move_to_end(loc)
        self._arm()

    def _arm(self) -> None:
        if self._timer is not None or not self._deadlines or self._loop is None:
            return
        first = next(iter(self._deadlines.values()))
        self._timer = self._loop.call_at(first, self._expire)

    def _expire(self) -> None:
        self._timer = None
        assert self._loop is not None
        now = self._loop.time()
        while self._deadlines:
            loc, deadline = next(iter(self._deadlines.items()))
            if deadline > now:
                break
            del self._deadlines[loc]
            self.store.delete(*loc)
        self._arm()
