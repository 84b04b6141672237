"""Event handlers for informers, like client-go's ResourceEventHandler and friends.

``on_add(obj, is_in_initial_list)``, ``on_update(old, new)``, ``on_delete(obj)`` where a delete's
``obj`` may be a ``DeletedFinalStateUnknown`` tombstone. Handlers run on their listener's own
thread, one notification at a time, in the order the informer saw the changes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class ResourceEventHandler(Protocol):
    def on_add(self, obj: Any, is_in_initial_list: bool) -> None: ...
    def on_update(self, old: Any, new: Any) -> None: ...
    def on_delete(self, obj: Any) -> None: ...


class ResourceEventHandlerFuncs:
    """A handler from optional functions; a missing one ignores that kind of event.

    ``add_func`` is called as ``add_func(obj, is_in_initial_list)``.
    """

    def __init__(self, add_func: Callable[[Any, bool], None] | None = None,
                 update_func: Callable[[Any, Any], None] | None = None,
                 delete_func: Callable[[Any], None] | None = None) -> None:
        self.add_func = add_func
        self.update_func = update_func
        self.delete_func = delete_func

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        if self.add_func is not None:
            self.add_func(obj, is_in_initial_list)

    def on_update(self, old: Any, new: Any) -> None:
        if self.update_func is not None:
            self.update_func(old, new)

    def on_delete(self, obj: Any) -> None:
        if self.delete_func is not None:
            self.delete_func(obj)


class FilteringResourceEventHandler:
    """Passes on only objects that satisfy ``filter_func``; an update that crosses the filter
    becomes an add (now passes) or a delete (no longer passes), as in client-go."""

    def __init__(self, filter_func: Callable[[Any], bool], handler: ResourceEventHandler) -> None:
        self.filter_func = filter_func
        self.handler = handler

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        if self.filter_func(obj):
            self.handler.on_add(obj, is_in_initial_list)

    def on_update(self, old: Any, new: Any) -> None:
        was, now = self.filter_func(old), self.filter_func(new)
        if was and now:
            self.handler.on_update(old, new)
        elif now:
            self.handler.on_add(new, False)
        elif was:
            self.handler.on_delete(old)

    def on_delete(self, obj: Any) -> None:
        if self.filter_func(obj):
            self.handler.on_delete(obj)
