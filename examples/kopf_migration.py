"""A small operator written the way a kopf user would, with this toolkit's equivalents:
the code ``docs/guides/migrating-from-kopf.md`` includes (its named snippet sections),
run by ``tests/examples/test_kopf_migration.py`` against the embedded API server.

Parents are ConfigMaps labelled ``app=demo`` with ``data.size``; each gets one child
ConfigMap (adopted), a finalizer-guarded cleanup, a daemon (and an async one) and a
timer; children are indexed by parent; an admission validator refuses a non-numeric
size.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

import msgspec

from samplecontroller.apimachinery import errors
from samplecontroller.kubernetes.apis.core.v1 import ConfigMap
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.kubernetes.scheme import SCHEME
from samplecontroller.runtime import builder, daemon, predicate
from samplecontroller.runtime.client import (
    Client,
    add_finalizer,
    contains_finalizer,
    create_or_update,
    remove_finalizer,
    set_controller_reference,
)
from samplecontroller.runtime.manager import Manager
from samplecontroller.runtime.reconcile import Request, Result, TerminalError
from samplecontroller.runtime.reconcile import context as reconcile_context
from samplecontroller.runtime.webhook import webhook_managed_by

CLEANUP = "example.com/cleanup"
cleaned_up: list[str] = []  # what the on-delete part did (the test reads it)
sizes_seen: dict[str, str] = {}  # what the daemon saw
async_seen: dict[str, str] = {}  # what the async daemon saw
async_stopped: list[str] = []  # the async daemons cancelled
audits: list[str] = []  # what the timer did
_lock = threading.Lock()


# --8<-- [start:field-filter]
def size_changed() -> predicate.Funcs:
    """kopf: @kopf.on.update("configmaps", field="data.size"). Creates and deletes pass;
    an update passes only when data.size changed, or the deletion began (the on-delete
    part)."""

    def changed(e: Any) -> bool:
        old, new = e.object_old, e.object_new
        deleting = (bool(new.metadata.deletion_timestamp)
                    and not old.metadata.deletion_timestamp)
        return deleting or (old.data or {}).get("size") != (new.data or {}).get("size")

    return predicate.Funcs(update=changed)
# --8<-- [end:field-filter]


# --8<-- [start:reconciler]
class DemoReconciler:
    """kopf: @kopf.on.create / on.update / on.delete, kopf.adopt, TemporaryError,
    PermanentError, logger and kopf.info, as one level-based reconcile."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def reconcile(self, request: Request) -> Result:
        ctx = reconcile_context.current()  # kopf's retry= and logger=
        try:
            parent = self.client.get(ConfigMap, request.namespace, request.name)
        except errors.NotFoundError:
            return Result()  # gone: its adopted children are garbage-collected
        if parent.metadata.deletion_timestamp:  # kopf: @kopf.on.delete, its finalizer
            return self.on_delete(parent)
        if not contains_finalizer(parent, CLEANUP):
            parent = self.client.update(add_finalizer(parent, CLEANUP)[0])
        size = (parent.data or {}).get("size")
        if size is None:
            if ctx.retries >= 3:
                # kopf.PermanentError: no more retries
                raise TerminalError("data.size is missing")
            # kopf.TemporaryError: retried with backoff (Result(requeue_after=s) for a
            # fixed delay)
            ctx.logger.warning("data.size is not set yet; retrying")
            return Result(requeue=True)
        child = set_controller_reference(parent, ConfigMap(  # kopf.adopt(child)
            metadata=ObjectMeta(name=f"{request.name}-child",
                                namespace=request.namespace,
                                labels={"parent": request.name})), SCHEME)
        _, result = create_or_update(
            self.client, child,
            lambda c: msgspec.structs.replace(c, data={"size": size}))
        # logger.info + kopf.info
        ctx.logger.info(f"Child {result.value}", event="ChildSynced")
        return Result(requeue_after=300)  # kopf: a periodic re-check (or use a timer)

    def on_delete(self, parent: ConfigMap) -> Result:
        if contains_finalizer(parent, CLEANUP):
            with _lock:
                # the cleanup kopf's on.delete did
                cleaned_up.append(parent.metadata.name or "")
            self.client.update(remove_finalizer(parent, CLEANUP)[0])
        return Result()
# --8<-- [end:reconciler]


# --8<-- [start:daemon]
def monitor(d: daemon.Context) -> None:
    """kopf: @kopf.daemon("configmaps", labels={"app": "demo"}); ``stopped`` as in
    kopf."""
    while not d.stopped.is_set():
        with _lock:  # d.object: the latest version
            sizes_seen[d.request.name] = (d.object.data or {}).get("size", "")
        d.sleep(0.05)  # True (early) once the daemon should stop
# --8<-- [end:daemon]


# --8<-- [start:async-daemon]
async def watch_size(d: daemon.Context) -> None:
    """kopf: an ``async def`` @kopf.daemon: a task on the manager's event loop,
    cancelled to stop."""
    try:
        while True:
            async_seen[d.request.name] = (d.object.data or {}).get("size", "")
            await asyncio.sleep(0.05)  # CancelledError here once the daemon should stop
    except asyncio.CancelledError:
        # cleanup (may await) within cancellation_timeout
        async_stopped.append(d.request.name)
        raise
# --8<-- [end:async-daemon]


# --8<-- [start:timer]
def audit(d: daemon.Context) -> None:
    """kopf: @kopf.timer("configmaps", interval=..., idle=..., initial_delay=...)."""
    with _lock:
        audits.append(d.request.name)
# --8<-- [end:timer]


# --8<-- [start:admission]
class SizeValidator:
    """kopf: @kopf.on.validate("configmaps"); raising denies, the strings returned are
    warnings."""

    def validate_create(self, obj: ConfigMap) -> Sequence[str]:
        size = (obj.data or {}).get("size", "0")
        if not size.isdigit():
            raise ValueError(f"data.size must be a number, not {size!r}")
        return ["sizes above 100 are slow"] if int(size) > 100 else []

    def validate_update(self, old: ConfigMap, new: ConfigMap) -> Sequence[str]:
        return self.validate_create(new)

    def validate_delete(self, obj: ConfigMap) -> Sequence[str]:
        return []
# --8<-- [end:admission]


def is_demo(obj: Any) -> bool:
    return (obj.metadata.labels or {}).get("app") == "demo"


# --8<-- [start:setup]
def setup(mgr: Manager, *, audit_every: float = 60.0, webhooks: bool = False) -> None:
    """kopf registers handlers with decorators; here ``setup`` registers them with the
    Manager."""
    (builder.controller_managed_by(mgr)
     .for_(ConfigMap, predicate.LabelSelectorPredicate("app=demo"), size_changed())
     .owns(ConfigMap)
     .complete(DemoReconciler(mgr.get_client())))
    daemon.add_daemon(mgr, ConfigMap, monitor, when=is_demo, cancellation_timeout=5)
    # async: a task
    daemon.add_daemon(mgr, ConfigMap, watch_size, when=is_demo, cancellation_timeout=5)
    daemon.add_timer(mgr, ConfigMap, audit, when=is_demo, interval=audit_every,
                     idle=audit_every / 2, initial_delay=audit_every / 2)
    # kopf: @kopf.index("configmaps") -> an index on the cache, queried with
    # matching_fields
    mgr.get_cache().index_field(
        ConfigMap, "parent", lambda c: [(c.metadata.labels or {}).get("parent", "")])
    if webhooks:  # kopf: @kopf.on.validate; served by the Manager's webhook server
        (webhook_managed_by(mgr).for_(ConfigMap)
         .with_validator(SizeValidator()).complete())
# --8<-- [end:setup]


# --8<-- [start:index-query]
def children_of(client: Client, namespace: str, parent: str) -> list[ConfigMap]:
    """kopf: the index's contents in a handler's ``**kwargs``."""
    return client.list(ConfigMap, namespace=namespace,
                       matching_fields={"parent": parent})
# --8<-- [end:index-query]
