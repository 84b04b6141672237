"""The Foo controller a third time: ``foo_reconciler``'s behaviour as an async reconciler.

Line for line ``foo_reconciler.FooReconciler`` (same domain, same writes, same events, same
wiring through ``foo_reconciler.setup_foo_controller``), with every client call awaited on an
``AsyncClient`` (``mgr.get_async_client()``: cache reads, writes over ``rest.http11``). The Manager runs
its reconciles as tasks on its event loop; ``workers`` bounds the tasks in flight.
``main.py --controller async`` selects it.
"""

from __future__ import annotations

import argparse
import threading
from typing import Any

from generated.apis.samplecontroller.v1alpha1 import Foo
from samplecontroller import foo as domain
from samplecontroller.apimachinery import errors, meta
from samplecontroller.client.types import MERGE_PATCH
from samplecontroller.foo_reconciler import manager_options, new_manager, setup_foo_controller
from samplecontroller.kubernetes.apis.apps.v1 import Deployment
from samplecontroller.logs import get_logger
from samplecontroller.record import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING, EventRecorder
from samplecontroller.runtime import controller as rt_controller
from samplecontroller.runtime import healthz
from samplecontroller.runtime.client import RawPatch
from samplecontroller.runtime.client.aio import AsyncClient
from samplecontroller.runtime.manager import ListenError, Manager
from samplecontroller.runtime.reconcile import Request, Result

log = get_logger("foo-reconciler")


class AsyncFooReconciler:
    """Reconciles one Foo per call, awaited (see ``foo_reconciler.FooReconciler``)."""

    def __init__(self, client: AsyncClient, recorder: EventRecorder, *, not_owned_backoff_base: float = 1.0,
                 not_owned_backoff_cap: float = 300.0, api_reader: AsyncClient | None = None) -> None:
        self.client = client
        self.api_reader = api_reader  # sharded: see foo_reconciler.FooReconciler
        self.recorder = recorder
        self._not_owned = domain.NotOwnedBackoff(not_owned_backoff_base, not_owned_backoff_cap)
        self.own_writes = domain.OwnWrites()

    async def reconcile(self, request: Request) -> Result:
        try:
            foo = await self.client.get(Foo, request.namespace, request.name)
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
            deployment = await self.client.get(Deployment, request.namespace, names[0])
        except errors.NotFoundError:
            desired = domain.new_deployment(foo)
            self.own_writes.expect_created(desired)  # its add event is what this reconcile sees
            try:
                deployment = await self.client.create(desired, field_owner=domain.FIELD_MANAGER)
            except BaseException as err:
                reader = self.api_reader
                if not self.own_writes.create_failed(desired, err, sharded=reader is not None) or reader is None:
                    raise
                deployment = await reader.get(Deployment, request.namespace, names[0])

        if not domain.is_controlled_by(deployment, foo):
            delay = self._not_owned.warn(request, foo, deployment, self.recorder)
            log.info("Deployment not owned, retrying later", foo=str(request), delay=round(delay, 3))
            return Result(requeue_after=delay)
        self._not_owned.forget(request)

        patch = domain.replicas_patch(foo, deployment)
        if patch is not None:
            log.info("Updating deployment replicas", foo=str(request), replicas=patch["spec"]["replicas"])
            deployment = await self.client.patch(deployment, RawPatch(MERGE_PATCH, patch),
                                                 field_owner=domain.FIELD_MANAGER)
        await self._update_status(foo, deployment)
        self.recorder.event(foo, EVENT_TYPE_NORMAL, domain.SUCCESS_SYNCED, domain.MESSAGE_RESOURCE_SYNCED)
        return Result()

    async def _update_status(self, foo: Foo, deployment: Deployment) -> None:
        patch = domain.status_patch(foo, deployment)
        if patch is None:
            return
        self.own_writes.expect_status(foo, patch["status"]["availableReplicas"])  # its event needs no reconcile
        try:
            await self.client.status().patch(foo, RawPatch(MERGE_PATCH, patch), field_owner=domain.FIELD_MANAGER)
        except BaseException as err:
            self.own_writes.forget_status(foo)
            if not isinstance(err, errors.NotFoundError):
                raise
            log.info("Foo no longer exists", foo=f"{meta.get_namespace(foo)}/{meta.get_name(foo)}")

    def setup_with_manager(self, mgr: Manager, workers: int = 2) -> rt_controller.Controller:
        return setup_foo_controller(mgr, self, workers, own_writes=self.own_writes)


def run(rest: Any, args: argparse.Namespace, stop: threading.Event) -> int:
    """``main.py --controller async``: ``foo_reconciler.run`` with the async reconciler."""
    mgr = new_manager(rest, resync=args.resync, namespace=args.namespace, shutdown_timeout=args.shutdown_timeout,
                      **manager_options(args))
    reconciler = AsyncFooReconciler(mgr.get_async_client(),
                                    mgr.get_event_recorder_for(domain.CONTROLLER_AGENT_NAME),
                                    api_reader=mgr.get_async_api_reader() if mgr.sharding is not None else None)
    reconciler.setup_with_manager(mgr, args.workers)
    mgr.add_healthz_check("ping", healthz.ping)
    mgr.add_readyz_check("informers", mgr.cache_synced_check)
    log.info("Starting manager", controller="foo", workers=args.workers, style="async")
    try:
        mgr.start(stop)
    except ListenError:
        raise
    except Exception as err:
        log.error("Problem running manager", error=f"{type(err).__name__}: {err}")
        return 1
    log.info("Controller stopped")
    return 0
