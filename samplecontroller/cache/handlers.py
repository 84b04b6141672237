"""Event handlers for informers, like client-go's ResourceEventHandler and friends.

``on_add(obj, is_in_initial_list)``, ``on_update(old, new)``, ``on_delete(obj)`` where a delete's
``obj`` may be a ``DeletedFinalStateUnknown`` tombstone. Handlers run on their listener's own
thread, one notification at a time, in the order the informer saw the changes.

The handler types are generic in the informer's object type: ``SharedIndexInformer[Foo]`` takes a
``ResourceEventHandler[Foo]``, and ``ResourceEventHandlerFuncs(add_func=..., ...)`` passed to it is
checked against Foo (a handler of a supertype, e.g. ``ResourceEventHandler[object]``, fits any
informer).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from samplecontroller.cache.keys import DeletedFinalStateUnknown

T = TypeVar("T")
T_contra = TypeVar("T_contra", contravariant=True)

__all__ = ["FilteringResourceEventHandler", "ResourceEventHandler", "ResourceEventHandlerFuncs"]


class ResourceEventHandler(Protocol[T_contra]):
    """Receives an informer's notifications, one at a time, on its listener's thread (client-go's ResourceEventHandler)."""

    def on_add(self, obj: T_contra, is_in_initial_list: bool) -> None:
        """An object appeared: created, or listed (``is_in_initial_list`` for the informer's first list)."""

    def on_update(self, old: T_contra, new: T_contra) -> None:
        """An object changed from ``old`` to ``new`` (a resync gives the same object twice)."""

    def on_delete(self, obj: T_contra | DeletedFinalStateUnknown[T_contra]) -> None:
        """An object was deleted; a ``DeletedFinalStateUnknown`` tombstone when the deletion was missed and found by a re-list."""


class ResourceEventHandlerFuncs(Generic[T]):
    """A handler from optional functions; a missing one ignores that kind of event.

    ``add_func(obj, is_in_initial_list)``, ``update_func(old, new)``, ``delete_func(obj)`` where
    ``obj`` may be a ``DeletedFinalStateUnknown`` tombstone.
    """

    def __init__(self, add_func: Callable[[T, bool], None] | None = None,
                 update_func: Callable[[T, T], None] | None = None,
                 delete_func: Callable[[T | DeletedFinalStateUnknown[T]], None] | None = None) -> None:
        self.add_func = add_func
        self.update_func = update_func
        self.delete_func = delete_func

    def on_add(self, obj: T, is_in_initial_list: bool) -> None:
        if self.add_func is not None:
            self.add_func(obj, is_in_initial_list)

    def on_update(self, old: T, new: T) -> None:
        if self.update_func is not None:
            self.update_func(old, new)

    def on_delete(self, obj: T | DeletedFinalStateUnknown[T]) -> None:
        if self.delete_func is not None:
            self.delete_func(obj)


class FilteringResourceEventHandler(Generic[T]):
    """Passes on only objects that satisfy ``filter_func``; an update that crosses the filter
    becomes an add (now passes) or a delete (no longer passes), as in client-go. The filter sees
    a delete's tombstone as it is."""

    def __init__(self, filter_func: Callable[[T | DeletedFinalStateUnknown[T]], bool],
                 handler: ResourceEventHandler[T]) -> None:
        self.filter_func = filter_func
        self.handler = handler

    def on_add(self, obj: T, is_in_initial_list: bool) -> None:
        if self.filter_func(obj):
            self.handler.on_add(obj, is_in_initial_list)

    def on_update(self, old: T, new: T) -> None:
        was, now = self.filter_func(old), self.filter_func(new)
        if was and now:
            self.handler.on_update(old, new)
        elif now:
            self.handler.on_add(new, False)
        elif was:
            self.handler.on_delete(old)

    def on_delete(self, obj: T | DeletedFinalStateUnknown[T]) -> None:
        if self.filter_func(obj):
            self.handler.on_delete(obj)
