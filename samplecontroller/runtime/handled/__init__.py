"""Handled state (kopf's "last handled" annotation): what changed since a reconcile last
finished, with ``old``, ``new`` and ``diff``, on top of a reconcile (never instead of it).

    from samplecontroller.runtime import handled

    LAST = handled.LastHandled("example.com/last-handled")

    def reconcile(self, request):
        obj = self.client.get(Tank, request.namespace, request.name)
        change = LAST.change(obj)  # or LAST.change(obj, field="spec.size")
        if change.reason == handled.CREATE:  # never handled: kopf's on.create
            ...
        elif change.reason == handled.UPDATE:  # kopf's on.update / on.field
            for op, path, old, new in change.diff:  # ("change", ("spec", "size"), 1, 2)
                ...
        elif change.reason == handled.RESUME:  # handled before this process: on.resume
            ...
        LAST.mark(self.client, obj)  # after the work succeeded
        return Result()

- The *essence* of an object (``essence(obj)``) is what kopf compares: everything but
  ``status`` and ``metadata``, plus ``metadata.labels`` and ``metadata.annotations`` (without
  handled-state annotations, whose name starts with ``last-handled``, and
  ``kubectl.kubernetes.io/last-applied-configuration``).
- ``change(obj, field=None)``: ``old`` is the essence recorded by the last ``mark`` (None when
  never marked), ``new`` the current one, ``diff`` kopf's tuple of ``(op, path, old, new)``
  with ``op`` in ``add``/``change``/``remove``. ``reason``: ``CREATE`` (never marked),
  ``UPDATE`` (the essence differs), ``RESUME`` (unchanged, and the first time this process
  sees the object: kopf's on.resume), ``None`` (nothing to do). With ``field="spec.size"``
  (a dotted path) ``old``/``new`` are that field's values (None when absent), ``diff`` is
  relative to it and ``UPDATE`` means that field changed.
- ``mark(client, obj)`` writes the essence into the annotation (one merge patch); call it
  once the reconcile's work for this change is done, so a failure retries the same change.
  Nothing is marked for a deleted object: the reconcile's deletion branch (finalizer) handles it.

``Handler(client, Model, fn, ...)`` is that pattern as a ``Reconciler`` (kopf's ``on.create``,
``on.update``, ``on.resume``, ``on.field``, ``on.delete`` with ``retries``/``errors``/``backoff``):
``fn(obj, change)`` is called only when something changed (see ``Handler``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from samplecontroller.apimachinery import meta
from samplecontroller.apimachinery.errors import NotFoundError
from samplecontroller.apimachinery.finalizers import add_finalizer, contains_finalizer, remove_finalizer
from samplecontroller.apimachinery.objects import to_dict
from samplecontroller.client.types import MERGE_PATCH
from samplecontroller.runtime.client import MergeFrom, RawPatch
from samplecontroller.runtime.reconcile import Request, Result, TemporaryError, TerminalError, context

__all__ = ["CREATE", "DELETE", "RESUME", "UPDATE", "Change", "DiffItem", "Handler", "LastHandled", "add_handler",
           "diff", "essence", "resolve"]

CREATE = "create"
UPDATE = "update"
RESUME = "resume"

DiffItem = tuple[str, tuple[str, ...], Any, Any]
"""``(op, path, old, new)``: ``op`` is ``add``, ``change`` or ``remove`` (kopf's diff)."""

_SKIPPED_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)


def essence(obj: Any, *, annotation: str = "") -> dict[str, Any]:
    """What is compared: the object without ``status`` and without ``metadata`` other than its
    labels and annotations (``annotation`` and kubectl's last-applied one left out)."""
    body = to_dict(obj) if not isinstance(obj, Mapping) else dict(obj)
    out = {k: v for k, v in body.items() if k not in ("status", "metadata", "apiVersion", "kind")}
    md = body.get("metadata") or {}
    labels = dict(md.get("labels") or {})
    annotations = {k: v for k, v in (md.get("annotations") or {}).items()
                   if k != annotation and k not in _SKIPPED_ANNOTATIONS and not _is_handled_state(k)}
    if labels or annotations:
        out["metadata"] = {k: v for k, v in (("labels", labels), ("annotations", annotations)) if v}
    return out


def _is_handled_state(key: str) -> bool:
    """A handled-state annotation of any handler (its name starts with ``last-handled``)."""
    return key.rpartition("/")[2].startswith("last-handled")


def resolve(body: Any, path: tuple[str, ...]) -> Any:
    """The value at ``path`` in nested dicts, None when any part is absent."""
    for key in path:
        if not isinstance(body, Mapping) or key not in body:
            return None
        body = body[key]
    return body


def diff(old: Any, new: Any, path: tuple[str, ...] = ()) -> tuple[DiffItem, ...]:
    """kopf's diff of two JSON-like values: dicts are compared key by key (sorted), anything
    else as a whole."""
    if old == new:
        return ()
    if old is None:
        return (("add", path, None, new),)
    if new is None:
        return (("remove", path, old, None),)
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        out: list[DiffItem] = []
        for key in sorted(set(old) | set(new)):
            out.extend(diff(old.get(key), new.get(key), (*path, key)))
        return tuple(out)
    return (("change", path, old, new),)


@dataclass(frozen=True)
class Change:
    """What changed since the last ``mark`` (see the module docstring). True when ``reason`` is set."""

    reason: str | None
    old: Any
    new: Any
    diff: tuple[DiffItem, ...] = ()

    def __bool__(self) -> bool:
        return self.reason is not None


@dataclass
class LastHandled:
    """The handled state kept in annotation ``annotation`` of each object (kopf's
    ``kopf.zalando.org/last-handled-configuration``)."""

    annotation: str = "samplecontroller.io/last-handled-configuration"
    _seen: set[str] = field(default_factory=set, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def recorded(self, obj: Any) -> dict[str, Any] | None:
        """The essence the last ``mark`` wrote, or None (never marked, or unreadable)."""
        raw = (meta.get_annotations(obj) or {}).get(self.annotation)
        if not raw:
            return None
        try:
            value = json.loads(raw)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def change(self, obj: Any, *, field: str | None = None) -> Change:
        """What changed in ``obj`` since the last ``mark`` (see the module docstring)."""
        old = self.recorded(obj)
        new = essence(obj, annotation=self.annotation)
        uid = meta.get_uid(obj) or f"{meta.get_namespace(obj)}/{meta.get_name(obj)}"
        with self._lock:
            first_seen = uid not in self._seen
            self._seen.add(uid)
        if field:
            path = tuple(field.split("."))
            old_value = resolve(old, path) if old is not None else None
            new_value = resolve(new, path)
            if old is None:
                return Change(CREATE, None, new_value, diff(None, new_value))
            changes = diff(old_value, new_value)
            if changes:
                return Change(UPDATE, old_value, new_value, changes)
            return Change(RESUME if first_seen else None, old_value, new_value)
        if old is None:
            return Change(CREATE, None, new, diff(None, new))
        changes = diff(old, new)
        if changes:
            return Change(UPDATE, old, new, changes)
        return Change(RESUME if first_seen else None, old, new)

    def mark(self, client: Any, obj: Any) -> Any:
        """Record ``obj``'s essence as handled (a merge patch of the annotation, without a
        resourceVersion: it records what this reconcile saw); returns the patched object."""
        value = json.dumps(essence(obj, annotation=self.annotation), sort_keys=True, separators=(",", ":"))
        if (meta.get_annotations(obj) or {}).get(self.annotation) == value:
            return obj
        return client.patch(obj, RawPatch(MERGE_PATCH, {"metadata": {"annotations": {self.annotation: value}}}))


DELETE = "delete"

HandlerFunc = Callable[[Any, Change], "Result | None"]


class Handler:
    """kopf's per-event handler model on top of a reconcile: a ``Reconciler`` that reads the
    object a request names (nothing when it is gone), asks ``last`` what changed and calls
    ``fn(obj, change)`` only when something did (``CREATE``, ``UPDATE``, ``RESUME``, and
    ``DELETE`` with a ``finalizer``), then marks the object handled. ``fn`` raising leaves it
    unmarked, so the same change is retried, except a ``PermanentError``/``TerminalError``
    (or the last of ``retries``), which marks it (kopf: that change has been handled, failing);
    ``fn`` may return a ``Result``.

    - ``on=CREATE`` (or a tuple of reasons): kopf's ``on.create``/``on.update``/``on.resume``/
      ``on.delete``: ``fn`` is called for those only (other changes are just marked);
    - ``field="spec.size"``: kopf's ``field=`` (``on.field``): only that field's changes;
    - ``finalizer``: kopf's ``on.delete``: added while the object lives; on deletion
      ``fn(obj, Change(DELETE, ...))`` runs, then the finalizer is removed (also after a
      permanent failure; an ordinary error keeps it, and the deletion is retried);
    - ``retries=N``: the Nth failure in a row is final (a ``TerminalError`` from the error);
    - ``errors="permanent"``: kopf's ``ErrorsMode.PERMANENT``: any error other than a
      ``TemporaryError`` is final at once;
    - ``backoff=s``: retry an ordinary error after ``s`` seconds (a ``TemporaryError`` from
      it, still logged with its traceback) instead of the rate limiter's backoff.
    Give each handler of one kind its own ``last`` annotation (kopf records each handler).
    """

    def __init__(self, client: Any, model: type[Any], fn: HandlerFunc, *, last: LastHandled | None = None,
                 on: str | tuple[str, ...] = (), field: str | None = None, finalizer: str | None = None,
                 retries: int | None = None, errors: str = "temporary", backoff: float | None = None) -> None:
        if errors not in ("temporary", "permanent"):
            raise ValueError(f"errors must be 'temporary' or 'permanent', not {errors!r}")
        if retries is not None and retries < 1:
            raise ValueError("retries must be at least 1 (the number of attempts), or None for no limit")
        self.client, self.model, self.fn = client, model, fn
        self.on = (on,) if isinstance(on, str) else tuple(on)
        unknown = set(self.on) - {CREATE, UPDATE, RESUME, DELETE}
        if unknown:
            raise ValueError(f"unknown handler reasons {sorted(unknown)}: use handled.CREATE, UPDATE, RESUME, DELETE")
        if DELETE in self.on and not finalizer:
            raise ValueError("a DELETE handler needs finalizer= (kopf's on.delete adds one the same way)")
        self.last = last or LastHandled()
        self.field, self.finalizer, self.retries, self.errors, self.backoff = field, finalizer, retries, errors, backoff

    def reconcile(self, request: Request) -> Result:
        """Read, compare, call ``fn`` (see the class docstring)."""
        try:
            obj = self.client.get(self.model, request.namespace, request.name)
        except NotFoundError:
            return Result()
        if meta.get_deletion_timestamp(obj):
            if not self.finalizer or not contains_finalizer(obj, self.finalizer):
                return Result()
            release = MergeFrom(obj, optimistic_lock=True)
            try:
                result = self._call(obj, Change(DELETE, self.last.recorded(obj), None)) if self._wants(DELETE) \
                    else Result()
            except TerminalError:  # kopf: a permanent failure ends the handling: the object goes
                self.client.patch(remove_finalizer(obj, self.finalizer)[0], release)
                raise
            self.client.patch(remove_finalizer(obj, self.finalizer)[0], release)
            return result
        if self.finalizer and not contains_finalizer(obj, self.finalizer):
            obj = self.client.patch(add_finalizer(obj, self.finalizer)[0], MergeFrom(obj, optimistic_lock=True))
        change = self.last.change(obj, field=self.field)
        if not change:
            return Result()
        try:
            result = self._call(obj, change) if self._wants(change.reason) else Result()
        except TerminalError:
            self.last.mark(self.client, obj)  # kopf: a permanent failure is handled, not retried
            raise
        self.last.mark(self.client, obj)
        return result

    def _wants(self, reason: str | None) -> bool:
        return not self.on or reason in self.on

    def _call(self, obj: Any, change: Change) -> Result:
        try:
            return self.fn(obj, change) or Result()
        except (TemporaryError, TerminalError):
            raise
        except Exception as err:
            attempt = context.current().retries + 1
            if self.errors == "permanent":
                raise TerminalError(f"{type(err).__name__}: {err}") from err
            if self.retries is not None and attempt >= self.retries:
                raise TerminalError(f"gave up after {attempt} attempts: {type(err).__name__}: {err}") from err
            if self.backoff is not None:
                raise TemporaryError(f"{type(err).__name__}: {err}", delay=self.backoff) from err
            raise


def add_handler(mgr: Any, model: type[Any], fn: HandlerFunc, *, on: str | tuple[str, ...] = (),
                name: str | None = None, predicates: tuple[Any, ...] = (), controller_options: Any = None,
                **options: Any) -> Any:
    """kopf's ``@kopf.on.create(...)`` (and update/resume/delete/field) as one call: a controller
    named ``name`` (default: ``fn``'s name) for ``model`` whose reconciler is a ``Handler`` with
    its own last-handled annotation (``<prefix>/last-handled.<name>``). ``options`` are
    ``Handler``'s (``field``, ``finalizer``, ``retries``, ``errors``, ``backoff``, ``last``);
    ``predicates`` filter the events (kopf's ``labels=``/``annotations=``/``when=``).
    ``controller_options`` (a ``controller.Options``) defaults to kopf's behaviour:
    ``keep_requested_delay=True`` (a ``TemporaryError``'s delay is kept; events coalesce into it)."""
    from samplecontroller.runtime import builder
    from samplecontroller.runtime.controller import Options

    name = name or str(getattr(fn, "__name__", "handler")).replace("_", "-")
    options.setdefault("last", LastHandled(f"samplecontroller.io/last-handled.{name}"))
    return (builder.controller_managed_by(mgr).named(name).for_(model, *predicates)
            .with_options(controller_options or Options(keep_requested_delay=True))
            .complete(Handler(mgr.get_client(), model, fn, on=on, **options)))
