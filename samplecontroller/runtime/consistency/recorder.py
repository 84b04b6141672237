"""What a reconcile wrote: the runtime client's side of read-your-own-writes.

While ``recording()`` is active (the controller opens one around each reconcile), every
successful write through a ``runtime.client.Client`` (create, update, patch, apply, the status
writer's update and patch, delete) appends one ``Write`` to it: the resource, namespace, name,
uid and the resourceVersion the server answered with (for a delete: the uid of the object
deleted, no version). Nothing is recorded outside a recording, for dry runs, or for a write
that raised (its outcome is unknown). ``delete_all_of`` is not recorded: the server's answer
does not say which objects it deleted.

The current recording is a ``contextvars.ContextVar``: each worker thread, and each asyncio task,
has its own, so concurrent reconciles never see each other's writes.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from samplecontroller.apimachinery import meta
from samplecontroller.client.types import ResourceInfo


@dataclass(frozen=True)
class Write:
    """One write a reconcile made. ``deleted``: a delete (``resource_version`` is then empty)."""

    info: ResourceInfo[Any]
    namespace: str
    name: str
    uid: str
    resource_version: str
    deleted: bool = False
    labels: Mapping[str, str] | None = None

    def __str__(self) -> str:
        key = f"{self.namespace}/{self.name}" if self.namespace else self.name
        what = "delete" if self.deleted else f"rv={self.resource_version}"
        return f"{self.info.resource} {key} ({what})"


@dataclass
class Recording:
    """The writes of one reconcile, in order."""

    writes: list[Write] = field(default_factory=list)


_current: contextvars.ContextVar[Recording | None] = contextvars.ContextVar("samplecontroller_writes", default=None)


@contextlib.contextmanager
def recording() -> Iterator[Recording]:
    """Record the writes made (in this thread or task) until the block ends."""
    rec = Recording()
    token = _current.set(rec)
    try:
        yield rec
    finally:
        _current.reset(token)


def active() -> bool:
    """True inside ``recording()``: the client only then looks at what it wrote."""
    return _current.get() is not None


def record_write(info: ResourceInfo[Any], written: Any) -> None:
    """Record ``written`` (the server's answer to a create, update or patch)."""
    rec = _current.get()
    if rec is None or written is None:
        return
    rec.writes.append(Write(info, meta.get_namespace(written) if info.namespaced else "", meta.get_name(written),
                            meta.get_uid(written), meta.get_resource_version(written),
                            labels=dict(meta.get_labels(written))))


def record_delete(info: ResourceInfo[Any], deleted: Any) -> None:
    """Record the delete of ``deleted`` (the object given to the client's ``delete``)."""
    rec = _current.get()
    if rec is None:
        return
    rec.writes.append(Write(info, meta.get_namespace(deleted) if info.namespaced else "", meta.get_name(deleted),
                            meta.get_uid(deleted), "", deleted=True, labels=dict(meta.get_labels(deleted))))


__all__ = ["Recording", "Write", "active", "record_delete", "record_write", "recording"]
