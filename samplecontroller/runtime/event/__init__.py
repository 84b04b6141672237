"""Events that sources hand to predicates and event handlers (pkg/event).

``object`` is the API object (a generated Struct or a dict). A ``DeleteEvent`` built from a
tombstone carries the last known state and ``delete_state_unknown=True``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CreateEvent:
    object: Any
    is_in_initial_list: bool = False


@dataclass(frozen=True)
class UpdateEvent:
    object_old: Any
    object_new: Any


@dataclass(frozen=True)
class DeleteEvent:
    object: Any
    delete_state_unknown: bool = False


@dataclass(frozen=True)
class GenericEvent:
    object: Any


__all__ = ["CreateEvent", "DeleteEvent", "GenericEvent", "UpdateEvent"]
