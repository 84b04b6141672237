"""Events that sources hand to predicates and event handlers (pkg/event).

``object`` is the API object (a generated Struct or a dict). A ``DeleteEvent`` built from a
tombstone carries the last known state and ``delete_state_unknown=True``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CreateEvent:
    """An object was created, or listed when its informer started (``is_in_initial_list``)."""

    object: Any
    is_in_initial_list: bool = False


@dataclass(frozen=True)
class UpdateEvent:
    """An object changed from ``object_old`` to ``object_new`` (a resync has both equal)."""

    object_old: Any
    object_new: Any


@dataclass(frozen=True)
class DeleteEvent:
    """An object was deleted; ``delete_state_unknown`` when only a tombstone (its last known state) was seen."""

    object: Any
    delete_state_unknown: bool = False


@dataclass(frozen=True)
class GenericEvent:
    """An event that does not come from the API server (``source.Channel``, ``source.Func``)."""

    object: Any


__all__ = ["CreateEvent", "DeleteEvent", "GenericEvent", "UpdateEvent"]
