"""The sharder: assigns the partitioned objects of one ring to its live shards (see the package
docstring). A Manager runnable that runs everywhere and works only while it holds the Lease
``<ring>-sharder``."""

from __future__ import annotations

import contextlib
import datetime
import json
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from prometheus_client import Counter

from samplecontroller.apimachinery import meta
from samplecontroller.apimachinery.errors import ConflictError, GoneError, NotFoundError, StatusError
from samplecontroller.cache import ResourceEventHandlerFuncs, SharedIndexInformer
from samplecontroller.client import ResourceClient
from samplecontroller.client.metadata import MetadataClient, PartialObjectMetadata
from samplecontroller.client.types import ListOptions
from samplecontroller.leaderelection import LeaderCallbacks, LeaderElectionConfig, LeaderElector, LeaseLock
from samplecontroller.leaderelection.resourcelock import LEASES
from samplecontroller.logs import get_logger
from samplecontroller.runtime.sharding import RING_LABEL, SHARDER_IDENTITY_SUFFIX
from samplecontroller.runtime.sharding.ring import Ring
from samplecontroller.runtime.sharding.shard import Partition, Shard

log = get_logger("runtime.sharding")

# the anchor's controller_sharding_* counters (one set per process)
DRAINS = Counter("controller_sharding_drains", "Objects drained from a live shard, per ring", ["ring"])
MOVEMENTS = Counter("controller_sharding_movements",
                    "Objects assigned to a shard (new, or moved from a dead one), per ring", ["ring"])

__all__ = ["Sharder", "lease_state"]


def _time(value: Any) -> datetime.datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def lease_state(lease: dict[str, Any], now: datetime.datetime) -> str:
    """"ready" (held by the shard it names, not expired), "expired" (held by it, expired: to be
    taken over) or "dead" (released, or held by someone else: taken over)."""
    spec = lease.get("spec") or {}
    name = (lease.get("metadata") or {}).get("name")
    if not spec.get("holderIdentity") or spec.get("holderIdentity") != name:
        return "dead"
    renew = _time(spec.get("renewTime"))
    duration = spec.get("leaseDurationSeconds")
    if renew is None or not duration or renew + datetime.timedelta(seconds=float(duration)) <= now:
        return "expired"
    return "ready"


ORPHAN_TTL = 60.0  # seconds a dead shard Lease is kept (the anchor's leaseTTL)


def _orphaned(lease: dict[str, Any], now: datetime.datetime) -> bool:
    """A dead Lease last renewed (or acquired, or released) over ``ORPHAN_TTL`` plus its duration ago."""
    spec = lease.get("spec") or {}
    last = _time(spec.get("renewTime")) or _time(spec.get("acquireTime"))
    if last is None:
        return False
    duration = float(spec.get("leaseDurationSeconds") or 0)
    return last + datetime.timedelta(seconds=duration + ORPHAN_TTL) < now


class _Selecting:
    """A ListerWatcher that adds a label selector."""

    def __init__(self, inner: Any, selector: str) -> None:
        self.inner = inner
        self.selector = selector

    def list(self, options: ListOptions) -> Any:
        return self.inner.list(replace(options, label_selector=self.selector))

    def watch(self, options: ListOptions) -> Any:
        return self.inner.watch(replace(options, label_selector=self.selector))


class Sharder:
    """See the module docstring. ``poll_period``: how often the shard Leases are read (a shard
    whose Lease expired is noticed within it); ``resync_period``: a full pass over the objects
    even without a change of membership (assignments that failed)."""

    def __init__(self, rest: Any, shard: Shard, *, lease_duration: float = 15.0, renew_deadline: float = 10.0,
                 retry_period: float = 2.0, poll_period: float | None = None, resync_period: float = 300.0,
                 namespaces: tuple[str, ...] = ()) -> None:
        self.rest = rest
        self.shard = shard
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.poll_period = poll_period if poll_period is not None else retry_period
        self.resync_period = resync_period
        self.leases: ResourceClient[dict[str, Any], dict[str, Any]] = ResourceClient(rest, LEASES, shard.namespace)
        self.metadata = MetadataClient(rest)
        self.identity = shard.identity
        self.namespaces = namespaces  # the Manager's cache's; empty: all
        self._cond = threading.Condition()
        self._pending: dict[tuple[type[Any], str, str], PartialObjectMetadata] = {}
        self.live: frozenset[str] = frozenset()
        self.ring = Ring(())
        self.leading = threading.Event()
        # the assignment webhook (runtime.sharding.webhook): its configuration while leading (None:
        # the server is not listening yet), installed once per term; None: no webhook
        self.webhook_configuration: Callable[[threading.Event], dict[str, Any] | None] | None = None
        self.webhook_installed = threading.Event()
        self._webhook_error = ""
        self.moves = 0  # objects assigned or moved (for tests and benchmarks)
        self.drains = 0  # drains asked of live shards

    def need_leader_election(self) -> bool:
        """False: every Manager runs it; it elects its own leader."""
        return False

    def start(self, stop: threading.Event) -> None:
        """Campaign for ``<ring>-sharder`` until ``stop``; assign while leading."""
        name = self.shard.ring + SHARDER_IDENTITY_SUFFIX
        while not stop.is_set():
            lock = LeaseLock(self.shard.namespace, name, self.leases, self.identity)
            config = LeaderElectionConfig(
                lock=lock, lease_duration=self.lease_duration, renew_deadline=self.renew_deadline,
                retry_period=self.retry_period, release_on_cancel=True, name=name,
                callbacks=LeaderCallbacks(on_started_leading=self._lead))
            LeaderElector(config).run(stop)

    # -- while leading -----------------------------------------------------------------------

    def _lead(self, leading: threading.Event) -> None:
        log.info("Sharder leading", ring=self.shard.ring, identity=self.identity)
        self.leading.set()
        informers = [stop for p in list(self.shard.partitions.values()) for stop in self._unassigned_informer(p, leading)]
        next_resync = 0.0
        webhook_installed = self.webhook_configuration is None
        try:
            while not leading.is_set():
                try:
                    live = self._live_shards()
                    now = time.monotonic()
                    if live != self.live or now >= next_resync:
                        if live != self.live:
                            log.info("Shard ring changed", ring=self.shard.ring, shards=sorted(live))
                        self.live, self.ring = live, Ring(live)
                        if not webhook_installed:  # after the ring is known: its answers are right
                            webhook_installed = self._install_webhook(leading)
                        self._resync()
                        next_resync = now + self.resync_period
                    elif not webhook_installed:
                        webhook_installed = self._install_webhook(leading)
                    self._assign_pending()
                except (StatusError, OSError) as err:
                    log.error("Sharder pass failed; retrying", ring=self.shard.ring, error=f"{type(err).__name__}: {err}")
                with self._cond:
                    if not self._pending and not leading.is_set():
                        self._cond.wait(self.poll_period)
        finally:
            self.leading.clear()
            self.webhook_installed.clear()
            for stop in informers:
                stop.set()

    def _install_webhook(self, leading: threading.Event) -> bool:
        """Server-side apply the assignment webhook's configuration (``webhook``), pointing at this
        replica's server when it has no client config of its own; False to try again next pass."""
        assert self.webhook_configuration is not None
        try:
            config = self.webhook_configuration(leading)
        except ValueError as err:  # a configuration mistake (said once; retried: a CA may appear), the watch assigns
            if str(err) != self._webhook_error:
                log.error("Sharder webhook not installed", ring=self.shard.ring, error=str(err))
                self._webhook_error = str(err)
            return False
        if config is None:
            return False  # the webhook server is not listening yet
        name = config["metadata"]["name"]
        self.rest.request("PATCH", f"/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/{name}",
                          query={"fieldManager": "samplecontroller-sharder", "force": "true"},
                          body=json.dumps(config).encode(), content_type="application/apply-patch+yaml")
        log.info("Sharder webhook installed", ring=self.shard.ring, configuration=name)
        self.webhook_installed.set()
        return True

    def _clients(self, part: Partition) -> list[Any]:
        """Metadata clients of ``part``'s objects: one per namespace of the Manager's cache, or one for all."""
        client = self.metadata.for_info(part.info)
        if not self.namespaces or not part.info.namespaced:
            return [client]
        return [client.namespace(ns) for ns in self.namespaces]

    def _unassigned_informer(self, part: Partition, leading: threading.Event) -> list[threading.Event]:
        """Watch the metadata of ``part``'s objects without the shard label; each is queued for assignment."""
        return [self._watch_unassigned(part, client) for client in self._clients(part)]

    def _watch_unassigned(self, part: Partition, client: Any) -> threading.Event:
        lw = _Selecting(client.lister_watcher(), f"!{self.shard.shard_label}")
        informer: SharedIndexInformer[Any] = SharedIndexInformer(lw, PartialObjectMetadata)

        def queue(obj: Any, *_: Any) -> None:
            with self._cond:
                self._pending[(part.model, meta.get_namespace(obj), meta.get_name(obj))] = obj
                self._cond.notify()

        informer.add_event_handler(ResourceEventHandlerFuncs(add_func=queue, update_func=lambda o, n: queue(n)),
                                   inline=True)
        stop = threading.Event()
        threading.Thread(target=informer.run, args=(stop,), name=f"sharder-{part.info.resource}", daemon=True).start()
        return stop

    def _live_shards(self) -> frozenset[str]:
        """The names of the ready shard Leases; expired ones are taken over (then dead)."""
        leases = self.leases.list(label_selector=f"{RING_LABEL}={self.shard.ring}")
        now = datetime.datetime.now(datetime.UTC)
        live = set()
        for lease in leases.get("items") or []:
            state = lease_state(lease, now)
            if state == "ready":
                live.add(lease["metadata"]["name"])
            elif state == "expired":
                self._take_over(lease, now)
            elif _orphaned(lease, now):
                self._delete(lease)
        return frozenset(live)

    def _delete(self, lease: dict[str, Any]) -> None:
        """Delete a shard Lease dead for over ``ORPHAN_TTL`` (as the anchor: each process start makes one)."""
        try:
            self.leases.delete(lease["metadata"]["name"],
                               preconditions={"resourceVersion": lease["metadata"].get("resourceVersion", "")})
            log.info("Deleted an orphaned shard lease", shard=lease["metadata"]["name"])
        except (ConflictError, NotFoundError):
            pass  # renewed (a new holder) or gone meanwhile

    def _take_over(self, lease: dict[str, Any], now: datetime.datetime) -> None:
        """Hold an expired shard Lease (guarded by its resourceVersion): its shard can no longer
        renew it, so its objects can move without a drain."""
        spec = dict(lease.get("spec") or {})
        stamp = now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        spec.update(holderIdentity=self.identity, acquireTime=stamp, renewTime=stamp,
                    leaseTransitions=int(spec.get("leaseTransitions") or 0) + 1)
        try:
            self.leases.update({**lease, "spec": spec})
            log.info("Took over an expired shard lease", shard=lease["metadata"]["name"])
        except (ConflictError, NotFoundError):
            pass  # renewed or gone meanwhile: looked at again next pass

    @staticmethod
    def key_owner(part: Partition, obj: Any, namespace: str, ring: Ring) -> str:
        """The shard ``ring`` places ``obj`` (of ``part``, in ``namespace``) on; "" when it has no
        hash key (an owned object without a controller of the owner kind) or the ring is empty."""
        if part.owner is None:
            key = f"{part.info.group}/{part.info.kind}/{namespace}/{meta.get_name(obj)}"
        else:
            owners = [r for r in meta.get_owner_references(obj) if r.controller and (r.group, r.kind) == part.owner]
            if not owners:
                return ""
            key = f"{part.owner[0]}/{part.owner[1]}/{namespace}/{owners[0].name}"
        return ring.owner(key)

    def _desired(self, part: Partition, obj: Any) -> str:
        return self.key_owner(part, obj, meta.get_namespace(obj), self.ring)

    def _resync(self) -> None:
        """One pass over every partitioned object: assign, move or drain what the ring places elsewhere."""
        for part in sorted(self.shard.partitions.values(), key=lambda p: p.owner is not None):
            for client in self._clients(part):
                self._resync_one(part, client)

    def _resync_one(self, part: Partition, client: Any) -> None:
        """Place every object of ``part`` page by page. The pages are one snapshot, so a pass
        that patches many objects can outlive the history behind its continue token (410
        Expired: 75 s on the embedded server, the compaction interval on kube-apiserver); the
        listing then starts over, where the objects placed already cost nothing. Objects queued
        by the watch of unassigned objects (a drain just acknowledged) are placed between pages."""
        cont: str | None = None
        while True:
            try:
                page = client.list(ListOptions(limit=500, continue_=cont))
            except GoneError:
                if cont is None:
                    raise
                log.info("Sharder listing expired; listing again", ring=self.shard.ring, resource=part.info.resource)
                cont = None
                continue
            for obj in page.items:
                self._place(part, obj)
            self._assign_pending()
            following = page.metadata.continue_
            if not isinstance(following, str) or not following:
                break
            cont = following

    def _assign_pending(self) -> None:
        with self._cond:
            pending, self._pending = self._pending, {}
        for (model, _ns, _name), obj in pending.items():
            self._place(self.shard.partitions[model], obj)

    def _place(self, part: Partition, obj: Any, attempts: int = 3) -> None:
        """Assign, move or drain ``obj`` as the ring says; on a conflict (the object changed since it
        was listed: status writes do that often) read it again and retry, ``attempts`` times."""
        desired = self._desired(part, obj)
        if not desired:
            return
        labels = meta.get_labels(obj)
        current = labels.get(self.shard.shard_label, "")
        if current == desired:
            return
        shard, drain = self.shard.shard_label, self.shard.drain_label
        if current and current in self.live and part.owner is None:
            if drain in labels:
                return  # drained already: waiting for the shard's acknowledgement
            body: dict[str, Any] = {drain: "true"}
        else:
            body = {shard: desired, drain: None}
        client = self.metadata.for_info(part.info).namespace(meta.get_namespace(obj))
        patch = {"metadata": {"resourceVersion": meta.get_resource_version(obj), "labels": body}}
        try:
            client.patch(meta.get_name(obj), json.dumps(patch).encode())
            if drain in body and body[drain] is not None:
                self.drains += 1
                DRAINS.labels(self.shard.ring).inc()
            else:
                self.moves += 1
                MOVEMENTS.labels(self.shard.ring).inc()
        except NotFoundError:
            pass  # deleted meanwhile
        except ConflictError:
            if attempts > 1:
                with contextlib.suppress(NotFoundError):
                    self._place(part, client.get(meta.get_name(obj)), attempts - 1)
