"""The Foo controller written a second time, on the controller-runtime layer.

Same acceptance behaviour as ``samplecontroller.controller`` (the client-go style controller):
for every Foo a Deployment named ``spec.deploymentName``, controlled by the Foo, with
``spec.replicas`` copied from the Foo; ``status.availableReplicas`` copied back (written only
when it changes); a ``Synced`` event per successful sync; an ``ErrResourceExists`` Warning once
per new situation when the Deployment exists but is not the Foo's (retries back off
exponentially up to ``not_owned_backoff_cap``); an ``InvalidSpec`` Warning when
``spec.deploymentName`` is missing; replicas changed with a merge patch only.

Wiring: ``for_(Foo)``, ``owns(Deployment)``, and Deployments mapped back to the Foos naming them
(a cache field index on ``spec.deploymentName``) so an unowned Deployment's change resumes its
Foo at once. Compare with ``controller.py`` side by side; ``main.py --controller runtime``
selects this one.
"""

from __future__ import annotations

import argparse
import threading
from collections.abc import Callable
from typing import Any

from generated.apis.apps.v1 import Deployment
from generated.apis.samplecontroller.v1alpha1 import Foo
from generated.scheme import SCHEME
from samplecontroller.apimachinery import errors, meta
from samplecontroller.controller import (
    CONTROLLER_AGENT_NAME,
    ERR_INVALID_SPEC,
    ERR_RESOURCE_EXISTS,
    FIELD_MANAGER,
    MESSAGE_NO_DEPLOYMENT_NAME,
    MESSAGE_RESOURCE_EXISTS,
    MESSAGE_RESOURCE_SYNCED,
    SUCCESS_SYNCED,
    NotOwnedBackoff,
    deployment_replicas,
    foo_replicas,
    foo_with_status,
    is_controlled_by,
    new_deployment,
    not_owned_situation,
)
from samplecontroller.logs import get_logger
from samplecontroller.record import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING, EventRecorder
from samplecontroller.runtime import controller as rt_controller
from samplecontroller.runtime.builder import controller_managed_by
from samplecontroller.runtime.cache import Options as CacheOptions
from samplecontroller.runtime.cache import strip_managed_fields
from samplecontroller.runtime.client import Client, RawPatch
from samplecontroller.runtime.handler import EnqueueRequestsFromMapFunc
from samplecontroller.runtime.manager import Manager, Options, runnable_func
from samplecontroller.runtime.predicate import ResourceVersionChanged
from samplecontroller.runtime.reconcile import Request, Result
from samplecontroller.workqueue import BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter

log = get_logger("foo-reconciler")

DEPLOYMENT_NAME_FIELD = "spec.deploymentName"
MERGE_PATCH = "application/merge-patch+json"


def _deployment_names(foo: Any) -> list[str]:
    spec = getattr(foo, "spec", None)
    name = getattr(spec, "deployment_name", None)
    return [name] if isinstance(name, str) and name else []


class FooReconciler:
    """Reconciles one Foo per call (see the module docstring)."""

    def __init__(self, client: Client, recorder: EventRecorder, *, not_owned_backoff_base: float = 1.0,
                 not_owned_backoff_cap: float = 300.0) -> None:
        self.client = client
        self.recorder = recorder
        self._not_owned = NotOwnedBackoff(not_owned_backoff_base, not_owned_backoff_cap)

    def reconcile(self, request: Request) -> Result:
        try:
            foo = self.client.get(Foo, request.namespace, request.name)
        except errors.NotFoundError:
            log.info("Foo no longer exists", foo=str(request))
            self._not_owned.forget(request)
            return Result()
        names = _deployment_names(foo)
        if not names:
            log.error("deployment name must be specified", foo=str(request))
            self.recorder.event(foo, EVENT_TYPE_WARNING, ERR_INVALID_SPEC, MESSAGE_NO_DEPLOYMENT_NAME)
            return Result()
        try:
            deployment = self.client.get(Deployment, request.namespace, names[0])
        except errors.NotFoundError:
            deployment = self.client.create(new_deployment(foo), field_owner=FIELD_MANAGER)

        if not is_controlled_by(deployment, foo):
            return Result(requeue_after=self._not_owned_situation(request, foo, deployment))
        self._not_owned.forget(request)

        desired = foo_replicas(foo)
        if desired is not None and desired != deployment_replicas(deployment):
            log.info("Updating deployment replicas", foo=str(request), replicas=desired)
            deployment = self.client.patch(deployment, RawPatch(MERGE_PATCH, {"spec": {"replicas": desired}}),
                                           field_owner=FIELD_MANAGER)
        self._update_status(foo, deployment)
        self.recorder.event(foo, EVENT_TYPE_NORMAL, SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED)
        return Result()

    def _not_owned_situation(self, key: Request, foo: Foo, deployment: Deployment) -> float:
        is_new, delay = self._not_owned.observe(key, not_owned_situation(foo, deployment))
        if is_new:
            self.recorder.event(foo, EVENT_TYPE_WARNING, ERR_RESOURCE_EXISTS,
                                MESSAGE_RESOURCE_EXISTS.format(meta.get_name(deployment)))
        log.info("Deployment not owned, retrying later", foo=str(key), delay=round(delay, 3))
        return delay

    def _update_status(self, foo: Foo, deployment: Deployment) -> None:
        updated = foo_with_status(foo, deployment)
        if updated is not None:
            self.client.status().update(updated, field_owner=FIELD_MANAGER)

    def map_deployment_to_foos(self, obj: Any) -> list[Request]:
        """The Foos that name this Deployment (owned or not)."""
        ns = meta.get_namespace(obj)
        foos = self.client.list(Foo, namespace=ns, matching_fields={DEPLOYMENT_NAME_FIELD: meta.get_name(obj)})
        return [Request(ns, meta.get_name(f)) for f in foos]

    def setup_with_manager(self, mgr: Manager, workers: int = 2) -> rt_controller.Controller:
        """Index Foos by deployment name and register the controller with ``mgr``."""
        mgr.get_cache().index_field(Foo, DEPLOYMENT_NAME_FIELD, _deployment_names)
        limiter: MaxOfRateLimiter[Any] = MaxOfRateLimiter(ItemExponentialFailureRateLimiter(0.005, 1000.0),
                                   BucketRateLimiter(qps=50.0, burst=300))
        return (controller_managed_by(mgr)
                .for_(Foo)
                .owns(Deployment, ResourceVersionChanged())
                .watches(Deployment, EnqueueRequestsFromMapFunc(self.map_deployment_to_foos),
                         ResourceVersionChanged())
                .with_options(rt_controller.Options(max_concurrent_reconciles=workers, rate_limiter=limiter))
                .named("foo")
                .complete(self))


def new_manager(rest: Any, *, resync: float, namespace: str = "", shutdown_timeout: float = 30.0,
                **options: Any) -> Manager:
    """The FooReconciler's manager; its cache keeps no managedFields (never read here)."""
    options.setdefault("cache", CacheOptions(default_transform=strip_managed_fields))
    return Manager(rest, Options(sync_period=resync, namespaces=(namespace,) if namespace else (),
                                 graceful_shutdown_timeout=shutdown_timeout, field_owner=FIELD_MANAGER, **options),
                   scheme=SCHEME)


def run(rest: Any, args: argparse.Namespace, stop: threading.Event, *,
        set_ready: Callable[[bool], None] = lambda _: None) -> int:
    """``main.py --controller runtime``: run the FooReconciler until ``stop``; exit status."""
    mgr = new_manager(rest, resync=args.resync, namespace=args.namespace, shutdown_timeout=args.shutdown_timeout)
    reconciler = FooReconciler(mgr.get_client(), mgr.get_event_recorder_for(CONTROLLER_AGENT_NAME))
    reconciler.setup_with_manager(mgr, args.workers)

    def ready(s: threading.Event) -> None:  # non-leader runnables start once the cache has synced
        set_ready(True)
        s.wait()

    mgr.add(runnable_func(ready, need_leader_election=False))
    log.info("Starting manager", controller="foo", workers=args.workers)
    try:
        mgr.start(stop)
    except Exception as err:
        log.error("Problem running manager", error=f"{type(err).__name__}: {err}")
        return 1
    finally:
        set_ready(False)
    log.info("Controller stopped")
    return 0
