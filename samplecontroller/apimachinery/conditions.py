"""Status conditions, as k8s.io/apimachinery/pkg/api/meta's conditions.go, for immutable objects.

A condition is any object with metav1.Condition's attributes (``type``, ``status``, ``reason``,
``message``, ``observed_generation``, ``last_transition_time``): the generated
``apis.meta.v1.Condition`` of any package, a CRD's own generated condition struct (frozen msgspec
Structs), or a plain dict in the wire form (``observedGeneration``, ``lastTransitionTime``).
Arrays of generated objects are tuples and the objects are frozen, so where Go changes a slice in
place these functions return a new tuple and whether anything changed::

    ready = Condition(type="Ready", status="True", reason="Synced", message="...",
                      observed_generation=foo.metadata.generation)
    conditions, changed = set_status_condition(foo.status.conditions, ready)
    if changed:
        ...write the status...

Contracts (those of Go's ``SetStatusCondition``):

- a condition of a new type is appended, with ``last_transition_time`` set to ``now()`` when unset;
- for an existing type, ``status``, ``reason``, ``message`` and ``observed_generation`` take the new
  values, and ``last_transition_time`` changes only when the status changes (to the new
  condition's time when set, else ``now()``): re-setting an unchanged status keeps the time of the
  last real transition, so writing the same condition every reconcile changes nothing;
- unset and empty compare equal (Go's zero values): an absent reason is the same as ``""``.

``changed`` is False exactly when the returned tuple holds the same conditions as the input, so a
controller can skip the status write.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

import msgspec

__all__ = [
    "CONDITION_FALSE",
    "CONDITION_TRUE",
    "CONDITION_UNKNOWN",
    "ConditionLike",
    "Conditions",
    "find_status_condition",
    "is_status_condition_false",
    "is_status_condition_present_and_equal",
    "is_status_condition_true",
    "now",
    "remove_status_condition",
    "set_status_condition",
]

CONDITION_TRUE = "True"
CONDITION_FALSE = "False"
CONDITION_UNKNOWN = "Unknown"


class ConditionLike(Protocol):
    """metav1.Condition's attributes, read-only (frozen structs satisfy it, required or optional)."""

    @property
    def type(self) -> str | msgspec.UnsetType: ...

    @property
    def status(self) -> str | msgspec.UnsetType: ...

    @property
    def reason(self) -> str | msgspec.UnsetType: ...

    @property
    def message(self) -> str | msgspec.UnsetType: ...

    @property
    def observed_generation(self) -> int | msgspec.UnsetType: ...

    @property
    def last_transition_time(self) -> str | msgspec.UnsetType | None: ...


C = TypeVar("C", bound=ConditionLike | Mapping[str, Any])
"""A condition: a struct with metav1.Condition's attributes or a wire-form dict."""

Conditions = Sequence[C] | msgspec.UnsetType | None
"""A status' ``conditions`` field as generated (a tuple, maybe unset) or any sequence."""

# attribute -> wire key, for plain-dict conditions
_WIRE = {
    "type": "type",
    "status": "status",
    "reason": "reason",
    "message": "message",
    "observed_generation": "observedGeneration",
    "last_transition_time": "lastTransitionTime",
}


def _wire_now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now() -> str:
    """metav1.Now() in the wire format: RFC 3339 in UTC, whole seconds, with a ``Z`` suffix.

    This is the default clock of :func:`set_status_condition`; pass ``now=`` there to control time
    in tests.
    """
    return _wire_now()


def _get(condition: ConditionLike | Mapping[str, Any], attr: str) -> Any:
    value = condition.get(_WIRE[attr]) if isinstance(condition, Mapping) else getattr(condition, attr, None)
    return None if value is msgspec.UNSET else value


def _text(condition: ConditionLike | Mapping[str, Any], attr: str) -> str:
    """A string field with Go's zero value: unset, None and "" are all ""."""
    return _get(condition, attr) or ""


def _generation(condition: ConditionLike | Mapping[str, Any]) -> int:
    return int(_get(condition, "observed_generation") or 0)


def _raw(condition: Any, attr: str) -> Any:
    """The field as stored: a struct's value (maybe UNSET), a dict's value (None when absent)."""
    if isinstance(condition, Mapping):
        return condition.get(_WIRE[attr])
    return getattr(condition, attr)


def _with(condition: Any, changes: dict[str, Any]) -> Any:
    """A copy of ``condition`` with ``changes`` (raw values; None removes a dict's key)."""
    if isinstance(condition, Mapping):
        updated = dict(condition)
        for attr, value in changes.items():
            if value is None:
                updated.pop(_WIRE[attr], None)
            else:
                updated[_WIRE[attr]] = value
        return updated
    return msgspec.structs.replace(condition, **changes)


def find_status_condition(conditions: Conditions[C], type_: str) -> C | None:
    """The first condition of type ``type_``, or None (also for unset or None ``conditions``)."""
    for condition in conditions or ():
        if _text(condition, "type") == type_:
            return condition
    return None


def set_status_condition(conditions: Conditions[C], new: C, *, now: str | None = None) -> tuple[tuple[C, ...], bool]:
    """``conditions`` with ``new`` set in them, and whether anything changed (see the module doc).

    ``now`` is the transition time to use when one is needed and ``new`` has none (default: the
    module's :func:`now`). The order of the other conditions is kept; a new type is appended.
    """
    current = tuple(conditions or ())
    new_type = _text(new, "type")
    for index, existing in enumerate(current):
        if _text(existing, "type") != new_type:
            continue
        changes: dict[str, Any] = {}
        if _text(existing, "status") != _text(new, "status"):
            changes["status"] = _raw(new, "status")
            changes["last_transition_time"] = _get(new, "last_transition_time") or now or _wire_now()
        for attr in ("reason", "message"):
            if _text(existing, attr) != _text(new, attr):
                changes[attr] = _raw(new, attr)
        if _generation(existing) != _generation(new):
            changes["observed_generation"] = _raw(new, "observed_generation")
        if not changes:
            return current, False
        return (*current[:index], _with(existing, changes), *current[index + 1:]), True
    if not _get(new, "last_transition_time"):
        new = _with(new, {"last_transition_time": now or _wire_now()})
    return (*current, new), True


def remove_status_condition(conditions: Conditions[C], type_: str) -> tuple[tuple[C, ...], bool]:
    """``conditions`` without those of type ``type_``, and whether any was removed."""
    current = tuple(conditions or ())
    kept = tuple(condition for condition in current if _text(condition, "type") != type_)
    return kept, len(kept) != len(current)


def is_status_condition_present_and_equal(
    conditions: Conditions[C], type_: str, status: str
) -> bool:
    """True when a condition of type ``type_`` is present and its status is ``status``."""
    condition = find_status_condition(conditions, type_)
    return condition is not None and _text(condition, "status") == status


def is_status_condition_true(
    conditions: Conditions[C], type_: str
) -> bool:
    """True when the condition of type ``type_`` is present with status ``"True"``."""
    return is_status_condition_present_and_equal(conditions, type_, CONDITION_TRUE)


def is_status_condition_false(
    conditions: Conditions[C], type_: str
) -> bool:
    """True when the condition of type ``type_`` is present with status ``"False"``."""
    return is_status_condition_present_and_equal(conditions, type_, CONDITION_FALSE)
