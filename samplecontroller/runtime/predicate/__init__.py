"""Predicates filter events before they reach an event handler (pkg/predicate).

A predicate answers ``create(e)``, ``update(e)``, ``delete(e)``, ``generic(e)`` with True (pass
the event on) or False (drop it). Combine with ``and_``, ``or_``, ``not_``.
``GenerationChanged``, ``ResourceVersionChanged``, ``LabelChanged`` and ``AnnotationChanged``
filter only updates (every create, delete and generic event passes), as in Go.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from samplecontroller.apimachinery import labels, meta
from samplecontroller.runtime.event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent


class Predicate(Protocol):
    """Decides per event whether it reaches the event handler (controller-runtime's ``predicate.Predicate``)."""

    def create(self, e: CreateEvent) -> bool:
        """True to pass a create event on."""
    def update(self, e: UpdateEvent) -> bool:
        """True to pass an update event on."""
    def delete(self, e: DeleteEvent) -> bool:
        """True to pass a delete event on."""
    def generic(self, e: GenericEvent) -> bool:
        """True to pass a generic event on."""


class Funcs:
    """A predicate from optional functions; a missing function lets its events pass."""

    def __init__(self, create: Callable[[CreateEvent], bool] | None = None,
                 update: Callable[[UpdateEvent], bool] | None = None,
                 delete: Callable[[DeleteEvent], bool] | None = None,
                 generic: Callable[[GenericEvent], bool] | None = None) -> None:
        self._create, self._update, self._delete, self._generic = create, update, delete, generic

    def create(self, e: CreateEvent) -> bool:
        """The ``create`` function's answer; True without one."""
        return self._create is None or self._create(e)

    def update(self, e: UpdateEvent) -> bool:
        """The ``update`` function's answer; True without one."""
        return self._update is None or self._update(e)

    def delete(self, e: DeleteEvent) -> bool:
        """The ``delete`` function's answer; True without one."""
        return self._delete is None or self._delete(e)

    def generic(self, e: GenericEvent) -> bool:
        """The ``generic`` function's answer; True without one."""
        return self._generic is None or self._generic(e)


def new_predicate_funcs(filter_fn: Callable[[Any], bool]) -> Funcs:
    """One object filter for every event kind (an update passes when the new object passes)."""
    return Funcs(create=lambda e: filter_fn(e.object), update=lambda e: filter_fn(e.object_new),
                 delete=lambda e: filter_fn(e.object), generic=lambda e: filter_fn(e.object))


class _UpdateOnly:
    """Base: every non-update event passes; subclasses decide updates."""

    def create(self, e: CreateEvent) -> bool:
        return True

    def delete(self, e: DeleteEvent) -> bool:
        return True

    def generic(self, e: GenericEvent) -> bool:
        return True

    def update(self, e: UpdateEvent) -> bool:
        if e.object_old is None or e.object_new is None:
            return False
        return self._changed(e.object_old, e.object_new)

    def _changed(self, old: Any, new: Any) -> bool:
        raise NotImplementedError


class ResourceVersionChanged(_UpdateOnly):
    """Updates pass only when metadata.resourceVersion changed (drops resync no-ops)."""

    def _changed(self, old: Any, new: Any) -> bool:
        return meta.get_resource_version(old) != meta.get_resource_version(new)


class GenerationChanged(_UpdateOnly):
    """Updates pass only when metadata.generation changed (spec changes, not status)."""

    def _changed(self, old: Any, new: Any) -> bool:
        return meta.get_generation(old) != meta.get_generation(new)


class LabelChanged(_UpdateOnly):
    """Updates pass only when the labels changed."""

    def _changed(self, old: Any, new: Any) -> bool:
        return dict(meta.get_labels(old)) != dict(meta.get_labels(new))


class AnnotationChanged(_UpdateOnly):
    """Updates pass only when the annotations changed."""

    def _changed(self, old: Any, new: Any) -> bool:
        return dict(meta.get_annotations(old)) != dict(meta.get_annotations(new))


class LabelSelectorPredicate:
    """Every event passes only when its object's labels match ``selector``.

    ``selector`` is a ``labels.Selector``, a selector string (``"app=x,tier!=db"``), or a
    metav1.LabelSelector (Struct or dict). A malformed selector raises ValueError at once.
    """

    def __init__(self, selector: labels.Selector | str | Any) -> None:
        if isinstance(selector, labels.Selector):
            self.selector = selector
        elif isinstance(selector, str):
            self.selector = labels.parse(selector)
        else:
            self.selector = labels.selector_from_label_selector(selector)

    def _match(self, obj: Any) -> bool:
        return obj is not None and self.selector.matches(meta.get_labels(obj))

    def create(self, e: CreateEvent) -> bool:
        """True when the created object's labels match."""
        return self._match(e.object)

    def update(self, e: UpdateEvent) -> bool:
        """True when the new object's labels match."""
        return self._match(e.object_new)

    def delete(self, e: DeleteEvent) -> bool:
        """True when the deleted object's labels match."""
        return self._match(e.object)

    def generic(self, e: GenericEvent) -> bool:
        """True when the event's object's labels match."""
        return self._match(e.object)


class _And:
    def __init__(self, preds: tuple[Predicate, ...]) -> None:
        self.preds = preds

    def create(self, e: CreateEvent) -> bool:
        return all(p.create(e) for p in self.preds)

    def update(self, e: UpdateEvent) -> bool:
        return all(p.update(e) for p in self.preds)

    def delete(self, e: DeleteEvent) -> bool:
        return all(p.delete(e) for p in self.preds)

    def generic(self, e: GenericEvent) -> bool:
        return all(p.generic(e) for p in self.preds)


class _Or(_And):
    def create(self, e: CreateEvent) -> bool:
        return any(p.create(e) for p in self.preds)

    def update(self, e: UpdateEvent) -> bool:
        return any(p.update(e) for p in self.preds)

    def delete(self, e: DeleteEvent) -> bool:
        return any(p.delete(e) for p in self.preds)

    def generic(self, e: GenericEvent) -> bool:
        return any(p.generic(e) for p in self.preds)


class _Not:
    def __init__(self, pred: Predicate) -> None:
        self.pred = pred

    def create(self, e: CreateEvent) -> bool:
        return not self.pred.create(e)

    def update(self, e: UpdateEvent) -> bool:
        return not self.pred.update(e)

    def delete(self, e: DeleteEvent) -> bool:
        return not self.pred.delete(e)

    def generic(self, e: GenericEvent) -> bool:
        return not self.pred.generic(e)


def and_(*preds: Predicate) -> Predicate:
    """Passes when every predicate passes (no predicates: everything passes)."""
    return _And(preds)


def or_(*preds: Predicate) -> Predicate:
    """Passes when any predicate passes (no predicates: nothing passes)."""
    return _Or(preds)


def not_(pred: Predicate) -> Predicate:
    """Passes exactly the events ``pred`` drops."""
    return _Not(pred)


__all__ = [
    "AnnotationChanged", "Funcs", "GenerationChanged", "LabelChanged", "LabelSelectorPredicate", "Predicate",
    "ResourceVersionChanged", "and_", "new_predicate_funcs", "not_", "or_",
]
