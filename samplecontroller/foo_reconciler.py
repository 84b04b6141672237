"""The Foo controller written a second time, on the controller-runtime layer.

Same acceptance behaviour as ``samplecontroller.controller`` (the client-go style controller):
for every Foo a Deployment named ``spec.deploymentName``, controlled by the Foo, with
``spec.replicas`` copied from the Foo; ``status.availableReplicas`` copied back (written only
when it changes); a ``Synced`` event per successful sync; an ``ErrResourceExists`` Warning once
per new situation when the Deployment exists but is not the Foo's (retries back off
exponentially up to ``not_owned_backoff_cap``); an ``InvalidSpec`` Warning when
``spec.deploymentName`` is missing; replicas changed with a merge patch only, and the status
written as a merge patch of ``status.availableReplicas`` to the status subresource with no
resourceVersion (``foo.status_patch``: a stale cache cannot make it conflict). A conflict from any
other write is requeued with backoff by the runtime controller, logged at debug level and counted
in ``controller_runtime_reconcile_conflicts_total``.

Wiring: ``for_(Foo)``, ``owns(Deployment)``, and Deployments mapped back to the Foos naming them
(a cache field index on ``spec.deploymentName``) so an unowned Deployment's change resumes its
Foo at once. The events of the reconciler's own writes (its status patch, the Deployment it
created) are filtered by predicates (``own_write_predicates``, ``domain.OwnWrites``): a Foo is not
reconciled again for them, as ``controller.py`` does not sync again (its improvement 8). What a Foo asks for is ``samplecontroller.foo``, shared with ``controller.py``;
compare the two side by side. ``main.py --controller runtime`` selects this one, and then the
Manager does leader election and serves /healthz, /readyz and /metrics (``run``), as a
controller-runtime main.go does.
"""

from __future__ import annotations

import argparse
import threading
from typing import Any

from generated import scheme as samplescheme
from generated.apis.samplecontroller.v1alpha1 import Foo
from samplecontroller import foo as domain
from samplecontroller.apimachinery import errors, meta
from samplecontroller.client.scheme import Scheme
from samplecontroller.client.types import MERGE_PATCH
from samplecontroller.kubernetes import scheme as kubescheme
from samplecontroller.kubernetes.apis.apps.v1 import Deployment
from samplecontroller.logs import get_logger
from samplecontroller.record import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING, EventRecorder
from samplecontroller.runtime import controller as rt_controller
from samplecontroller.runtime import healthz
from samplecontroller.runtime.builder import controller_managed_by
from samplecontroller.runtime.cache import Options as CacheOptions
from samplecontroller.runtime.cache import strip_managed_fields
from samplecontroller.runtime.client import Client, RawPatch
from samplecontroller.runtime.event import DeleteEvent
from samplecontroller.runtime.handler import EnqueueRequestsFromMapFunc
from samplecontroller.runtime.manager import ListenError, Manager, Options
from samplecontroller.runtime.predicate import Funcs, Predicate, ResourceVersionChanged
from samplecontroller.runtime.reconcile import AsyncReconciler, Reconciler, Request, Result

log = get_logger("foo-reconciler")

# The Manager's scheme, as a kubebuilder main.go builds it (clientgoscheme.AddToScheme, then the
# project's own AddToScheme): every built-in kind, then the generated ones.
SCHEME = Scheme()
kubescheme.add_to_scheme(SCHEME)
samplescheme.add_to_scheme(SCHEME)


class FooReconciler:
    """Reconciles one Foo per call (see the module docstring)."""

    def __init__(self, client: Client, recorder: EventRecorder, *, not_owned_backoff_base: float = 1.0,
                 not_owned_backoff_cap: float = 300.0, api_reader: Client | None = None) -> None:
        self.client = client
        # sharded (runtime.sharding): the cache holds this shard's Deployments only, so one that
        # exists unassigned (not a Foo's) is read from the API server when its create meets it
        self.api_reader = api_reader
        self.recorder = recorder
        self._not_owned = domain.NotOwnedBackoff(not_owned_backoff_base, not_owned_backoff_cap)
        self.own_writes = domain.OwnWrites()

    def reconcile(self, request: Request) -> Result:
        try:
            foo = self.client.get(Foo, request.namespace, request.name)
        except errors.NotFoundError:
            log.info("Foo no longer exists", foo=str(request))
            self._not_owned.forget(request)
            return Result()
        names = domain.deployment_names(foo)
        if not names:
            log.error("deployment name must be specified", foo=str(request))
            self.recorder.event(foo, EVENT_TYPE_WARNING, domain.ERR_INVALID_SPEC,
                                domain.MESSAGE_NO_DEPLOYMENT_NAME)
            return Result()
        try:
            deployment = self.client.get(Deployment, request.namespace, names[0])
        except errors.NotFoundError:
            desired = domain.new_deployment(foo)
            self.own_writes.expect_created(desired)  # its add event is what this reconcile sees
            try:
                deployment = self.client.create(desired, field_owner=domain.FIELD_MANAGER)
            except BaseException as err:
                reader = self.api_reader
                if not self.own_writes.create_failed(desired, err, sharded=reader is not None) or reader is None:
                    raise
                deployment = reader.get(Deployment, request.namespace, names[0])

        if not domain.is_controlled_by(deployment, foo):
            delay = self._not_owned.warn(request, foo, deployment, self.recorder)
            log.info("Deployment not owned, retrying later", foo=str(request), delay=round(delay, 3))
            return Result(requeue_after=delay)
        self._not_owned.forget(request)

        patch = domain.replicas_patch(foo, deployment)
        if patch is not None:
            log.info("Updating deployment replicas", foo=str(request), replicas=patch["spec"]["replicas"])
            deployment = self.client.patch(deployment, RawPatch(MERGE_PATCH, patch),
                                           field_owner=domain.FIELD_MANAGER)
        self._update_status(foo, deployment)
        self.recorder.event(foo, EVENT_TYPE_NORMAL, domain.SUCCESS_SYNCED, domain.MESSAGE_RESOURCE_SYNCED)
        return Result()

    def _update_status(self, foo: Foo, deployment: Deployment) -> None:
        """A merge patch of status.availableReplicas alone, without a resourceVersion, to the
        status subresource (``domain.status_patch``): it cannot conflict with a stale cache. A Foo
        deleted meanwhile is done."""
        patch = domain.status_patch(foo, deployment)
        if patch is None:
            return
        self.own_writes.expect_status(foo, patch["status"]["availableReplicas"])  # its event needs no reconcile
        try:
            self.client.status().patch(foo, RawPatch(MERGE_PATCH, patch), field_owner=domain.FIELD_MANAGER)
        except BaseException as err:
            self.own_writes.forget_status(foo)
            if not isinstance(err, errors.NotFoundError):
                raise
            log.info("Foo no longer exists", foo=f"{meta.get_namespace(foo)}/{meta.get_name(foo)}")

    def map_deployment_to_foos(self, obj: Any) -> list[Request]:
        """The Foos that name this Deployment (owned or not)."""
        return foos_naming(self.client, obj)

    def setup_with_manager(self, mgr: Manager, workers: int = 2) -> rt_controller.Controller:
        """Index Foos by deployment name and register the controller with ``mgr``."""
        return setup_foo_controller(mgr, self, workers, own_writes=self.own_writes)


def foos_naming(client: Client, deployment: Any) -> list[Request]:
    """The Foos (from the cache) that name ``deployment`` (owned or not)."""
    ns = meta.get_namespace(deployment)
    foos = client.list(Foo, namespace=ns,
                       matching_fields={domain.DEPLOYMENT_NAME_FIELD: meta.get_name(deployment)})
    return [Request(ns, meta.get_name(f)) for f in foos]


def uncontrolled_foos_naming(client: Client, deployment: Any) -> list[Request]:
    """``foos_naming`` less the Foo that controls ``deployment`` (``owns`` enqueues that one)."""
    ref = meta.get_controller_of(deployment)
    controller = ref.name if ref is not None and domain.is_foo_reference(ref) else None
    return [r for r in foos_naming(client, deployment) if r.name != controller]


def own_write_predicates(own_writes: domain.OwnWrites) -> tuple[tuple[Predicate], tuple[Predicate]]:
    """The predicates (for the Foos, for the owned Deployments) that drop the events of a
    reconciler's own writes: the Foo update of its status write, the add of the Deployment it
    created (``domain.OwnWrites``); and forget a deleted Foo's expectations."""
    def foo_deleted(e: DeleteEvent) -> bool:
        own_writes.forget(meta.get_namespace(e.object), meta.get_name(e.object))
        return True

    foos = Funcs(update=lambda e: not own_writes.is_own_status_write(e.object_old, e.object_new), delete=foo_deleted)
    deployments = Funcs(create=lambda e: not own_writes.is_own_create(e.object))
    return (foos,), (deployments,)


def setup_foo_controller(mgr: Manager, reconciler: Reconciler | AsyncReconciler, workers: int,
                         name: str = "foo", *, own_writes: domain.OwnWrites | None = None) -> rt_controller.Controller:
    """The Foo controller's wiring, for the sync and the async reconciler alike: Foos indexed
    by deployment name; for_(Foo), owns(Deployment), Deployments mapped to the Foos naming them
    other than their controller (which ``owns`` enqueues; read from the manager's cache);
    ``workers`` reconciles at once (tasks in flight when ``reconciler`` is async). With
    ``own_writes`` (the reconciler's ``domain.OwnWrites``), the events of the reconciler's own
    status writes and Deployment creates are filtered out (``own_write_predicates``)."""
    mgr.get_cache().index_field(Foo, domain.DEPLOYMENT_NAME_FIELD, domain.deployment_names)
    reader = mgr.get_client()
    foo_predicates, deployment_predicates = own_write_predicates(own_writes) if own_writes is not None else ((), ())
    return (controller_managed_by(mgr)
            .for_(Foo, *foo_predicates)
            .owns(Deployment, ResourceVersionChanged(), *deployment_predicates)
            .watches(Deployment, EnqueueRequestsFromMapFunc(lambda obj: uncontrolled_foos_naming(reader, obj)),
                     ResourceVersionChanged())
            .with_options(rt_controller.Options(max_concurrent_reconciles=workers,
                                                rate_limiter=domain.rate_limiter(),
                                                # predicates, handlers and the map function read
                                                # only the cache: no thread per handler
                                                inline_event_handlers=True))
            .named(name)
            .complete(reconciler))


def new_manager(rest: Any, *, resync: float, namespace: str = "", shutdown_timeout: float = 30.0,
                **options: Any) -> Manager:
    """A Manager on this repository's Scheme, writing as ``domain.FIELD_MANAGER``, caching ``namespace``
    only (all when empty); ``options`` are further ``runtime.manager.Options`` fields."""
    options.setdefault("cache", CacheOptions(default_transform=strip_managed_fields))  # never read here
    return Manager(rest, Options(sync_period=resync, namespaces=(namespace,) if namespace else (),
                                 graceful_shutdown_timeout=shutdown_timeout, field_owner=domain.FIELD_MANAGER,
                                 **options),
                   scheme=SCHEME)


def manager_options(args: argparse.Namespace) -> dict[str, Any]:
    """main.py's flags as Manager options: leader election on a Lease named by
    ``--leader-election-id`` in ``--leader-election-namespace`` (default: the pod's namespace,
    else "default"), released on stop so a standby takes over at once; the metrics and
    /healthz + /readyz servers on their bind addresses ("0" disables)."""
    return {
        "leader_election": args.leader_elect,
        "leader_election_id": args.leader_election_id,
        "leader_election_namespace": args.leader_election_namespace,
        "leader_election_release_on_cancel": True,
        "shard_ring": getattr(args, "shard_ring", ""),  # sharding: this replica's shard Lease, released on stop
        "metrics_bind_address": args.metrics_bind_address,
        "health_probe_bind_address": args.health_probe_bind_address,
    }


def run(rest: Any, args: argparse.Namespace, stop: threading.Event) -> int:
    """``main.py --controller runtime``: run the FooReconciler under a Manager until ``stop``;
    return the exit status (1 when the manager fails or loses its lease). The Manager serves
    the probes: /healthz always ok ("ping"), /readyz ok once its cache has synced ("informers").
    Raises ``ListenError`` when a metrics or probe address cannot be listened on."""
    mgr = new_manager(rest, resync=args.resync, namespace=args.namespace, shutdown_timeout=args.shutdown_timeout,
                      **manager_options(args))
    reconciler = FooReconciler(mgr.get_client(), mgr.get_event_recorder_for(domain.CONTROLLER_AGENT_NAME),
                               api_reader=mgr.get_api_reader() if mgr.sharding is not None else None)
    reconciler.setup_with_manager(mgr, args.workers)
    mgr.add_healthz_check("ping", healthz.ping)
    mgr.add_readyz_check("informers", mgr.cache_synced_check)
    log.info("Starting manager", controller="foo", workers=args.workers)
    try:
        mgr.start(stop)
    except ListenError:
        raise
    except Exception as err:
        log.error("Problem running manager", error=f"{type(err).__name__}: {err}")
        return 1
    log.info("Controller stopped")
    return 0
