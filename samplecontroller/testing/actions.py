"""Recorded client actions and reactors, like client-go's testing/actions.go and fake.go.

Every call on a fake client records an ``Action``; then the reactor chain runs: the first
reactor whose verb and resource match (``"*"`` matches anything) and that returns
``handled=True`` decides the result. The default reactor at the end is the ObjectTracker.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from samplecontroller.testing.tracker import GroupVersionResource, ObjectTracker, TrackerWatch

__all__ = ["Action", "FakeClientsetBase", "Reactor", "WatchReactor"]


@dataclass
class Action:
    """One client call. ``object`` is what the caller passed (create/update), ``patch`` the bytes."""

    verb: str
    resource: GroupVersionResource
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    object: Any = None
    patch: bytes = b""
    patch_type: str = ""
    label_selector: str = ""
    field_selector: str = ""
    options: dict[str, Any] = field(default_factory=dict)

    # client-go's Action accessors, for tests ported from Go
    def get_verb(self) -> str:
        """The verb (get, list, watch, create, update, patch, delete, delete-collection)."""
        return self.verb

    def get_namespace(self) -> str:
        """The namespace ("" for cluster-scoped resources and all-namespace calls)."""
        return self.namespace

    def get_name(self) -> str:
        """The object's name ("" for list, watch and create without a name)."""
        return self.name

    def get_resource(self) -> GroupVersionResource:
        """The group/version/resource called."""
        return self.resource

    def get_subresource(self) -> str:
        """The subresource ("status", ...), or ""."""
        return self.subresource

    def get_object(self) -> Any:
        """The object passed to create or update, else None."""
        return self.object

    def get_patch(self) -> bytes:
        """The patch body of a patch, else b""."""
        return self.patch

    def matches(self, verb: str, resource: str) -> bool:
        """True when the verb and the resource match (``"*"`` matches any)."""
        return (verb in ("*", self.verb)) and (resource in ("*", self.resource.resource))


# A reactor returns (handled, object, error).
Reactor = Callable[[Action], tuple[bool, Any, BaseException | None]]
WatchReactor = Callable[[Action], tuple[bool, Any, BaseException | None]]


class FakeClientsetBase:
    """Holds the tracker, the recorded actions and the reactor chains. Thread-safe."""

    def __init__(self, tracker: ObjectTracker | None = None) -> None:
        self.tracker = tracker or ObjectTracker()
        self._lock = threading.Lock()
        self._actions: list[Action] = []
        self._reactors: list[tuple[str, str, Reactor]] = []
        self._watch_reactors: list[tuple[str, WatchReactor]] = []

    def actions(self) -> list[Action]:
        """Every recorded action so far, oldest first (a copy)."""
        with self._lock:
            return list(self._actions)

    def clear_actions(self) -> None:
        """Forget the recorded actions."""
        with self._lock:
            self._actions.clear()

    def prepend_reactor(self, verb: str, resource: str, fn: Reactor) -> None:
        """Run ``fn`` before the other reactors for ``verb`` on ``resource`` (``"*"`` matches any)."""
        with self._lock:
            self._reactors.insert(0, (verb, resource, fn))

    def add_reactor(self, verb: str, resource: str, fn: Reactor) -> None:
        """Run ``fn`` after the reactors added before (before the tracker)."""
        with self._lock:
            self._reactors.append((verb, resource, fn))

    def prepend_watch_reactor(self, resource: str, fn: WatchReactor) -> None:
        """Run ``fn`` first for watches of ``resource``; it returns the watch to hand out."""
        with self._lock:
            self._watch_reactors.insert(0, (resource, fn))

    def invokes(self, action: Action, default: Callable[[], Any]) -> Any:
        """Record ``action``, run the reactors, fall back to ``default``; raise a reactor's error."""
        with self._lock:
            self._actions.append(action)
            reactors = list(self._reactors) if action.verb != "watch" else [
                ("watch", r, fn) for r, fn in self._watch_reactors]
        for verb, resource, fn in reactors:
            if not action.matches(verb, resource):
                continue
            handled, obj, err = fn(action)
            if not handled:
                continue
            if err is not None:
                raise err
            return obj
        return default()


def is_tracker_watch(obj: Any) -> bool:
    return isinstance(obj, TrackerWatch)
