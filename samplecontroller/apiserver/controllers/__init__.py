"""The controllers a real cluster runs next to the API server, as store listeners.

``Controllers`` registers one listener on the store (called synchronously for every committed
write) and runs the reactions as callbacks on the server's event loop: the garbage collector
(``garbagecollector``), the namespace lifecycle (``namespace``), CRD establishing and removal
(``crd``), the node simulator's removal of gracefully deleted Pods (``pods``), the optional Deployment simulator (``deployments``: ReplicaSets per template, revisions, status) and Job simulator (``jobs``: Pods per parallelism/completions, status, conditions); the Event TTL
(``eventttl.EventExpiry``) runs on its own. ``start`` bootstraps the cluster's objects
(``cluster``, the RBAC bootstrap policy and ClusterRole aggregation of ``authorization``) and resumes the work a restart left pending.

Controllers act through ``Core``'s and the store's public methods only; their failures are
logged (404 and 409, lost races, are dropped) and never reach clients.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from samplecontroller.apiserver import cluster
from samplecontroller.apiserver.authorization import aggregation, bootstrappolicy
from samplecontroller.apiserver.controllers.crd import CRDController
from samplecontroller.apiserver.controllers.deployments import DEPLOYMENTS, DeploymentSimulator
from samplecontroller.apiserver.controllers.garbagecollector import GarbageCollector
from samplecontroller.apiserver.controllers.jobs import JOBS, JobSimulator
from samplecontroller.apiserver.controllers.namespace import NamespaceController
from samplecontroller.apiserver.controllers.pods import PODS, NodeSimulator
from samplecontroller.apiserver.core import CRD_KEY, NS_KEY, Core
from samplecontroller.apiserver.errors import APIError
from samplecontroller.apiserver.storage import Event
from samplecontroller.apiserver.strategies import CRD_FINALIZER

__all__ = ["Controllers"]

log = logging.getLogger(__name__)
_SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


class Controllers:
    """The background controllers over ``core`` (see the module docstring)."""

    def __init__(self, core: Core, *, simulate_deployments: bool = False, simulate_delay: float = 0.3,
                 root_ca: bytes | None = None, simulate_jobs: bool = False, job_backoff: float = 10.0) -> None:
        self.core = core
        self.root_ca = root_ca  # published as every namespace's kube-root-ca.crt (``cluster``)
        self.store = core.store
        self.loop: asyncio.AbstractEventLoop | None = None
        self.gc = GarbageCollector(core, self.schedule)
        self.namespaces = NamespaceController(core, self.gc, self.schedule)
        self.crds = CRDController(core, self.gc, self.schedule, self.reconcile)
        self.node = NodeSimulator(core, self.schedule)
        self.deployments = DeploymentSimulator(core, simulate_delay) if simulate_deployments else None
        self.jobs = JobSimulator(core, self.schedule, simulate_delay, job_backoff) if simulate_jobs else None
        self.store.listeners.append(self.on_event)

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Create the default namespaces and ``cluster``'s objects if missing; resume controllers for
        pending work (and the deployment simulator for every Deployment whose status is behind its spec)."""
        self.loop = loop
        namespaces = self.core.mapper.get("", "v1", "namespaces")
        assert namespaces is not None
        for ns in _SYSTEM_NAMESPACES:
            if self.store.get(NS_KEY, "", ns) is None:
                self.core.create(namespaces, "", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
                                 manager="kube-apiserver")
        cluster.install(self.core, self.schedule, self.root_ca)
        bootstrappolicy.install(self.core)
        aggregation.install(self.core, self.schedule)
        for skey in list(self.store.data):
            for (ns, name), entry in list((self.store.data.get(skey) or {}).items()):
                meta = entry.obj.get("metadata") or {}
                if meta.get("deletionTimestamp") or meta.get("ownerReferences"):
                    self.schedule(self.reconcile, skey, ns, name)
        self.node.resume()
        if self.jobs is not None:
            self.jobs.resume()
        if self.deployments is not None:
            for ns, name, revision in self.deployments.behind():
                if self.deployments.queue(ns, name, revision):
                    self.schedule(self.deployments.simulate, ns, name, delay=self.deployments.delay)

    def schedule(self, fn: Callable[..., None], *args: Any, delay: float = 0.0) -> None:
        """Run ``fn(*args)`` on the loop (after ``delay`` s); its failures are logged."""
        loop = self.loop
        if loop is None:
            return

        def run() -> None:
            try:
                fn(*args)
            except APIError as err:
                if err.code not in (404, 409):
                    log.warning("background %s failed: %s", getattr(fn, "__name__", fn), err)
            except Exception:
                log.exception("background %s failed", getattr(fn, "__name__", fn))

        if delay > 0:
            loop.call_later(delay, run)
        else:
            loop.call_soon(run)

    def on_event(self, event: Event) -> None:
        """The store listener: route a committed write to the controllers it concerns."""
        obj = event.entry.obj
        meta = obj.get("metadata") or {}
        if event.skey == CRD_KEY:
            if event.type == "DELETED":
                self.crds.removed(obj)
            else:
                self.crds.established(obj)
        if self.jobs is not None and event.skey in (JOBS, PODS):
            self.jobs.observe(event.skey, obj)
        if event.type == "DELETED":
            if self.deployments is not None and event.skey == DEPLOYMENTS:
                self.deployments.forget(event.namespace, event.name)
            self._on_deleted(event, meta)
            return
        if meta.get("deletionTimestamp") or meta.get("ownerReferences"):
            self.schedule(self.reconcile, event.skey, event.namespace, event.name)
        if event.skey == PODS and meta.get("deletionTimestamp"):
            self.node.observe(obj)
        if (self.deployments is not None and event.skey == DEPLOYMENTS
                and self.deployments.queue(event.namespace, event.name, event.rev)):
            self.schedule(self.deployments.simulate, event.namespace, event.name, delay=self.deployments.delay)

    def _on_deleted(self, event: Event, meta: dict[str, Any]) -> None:
        uid = meta.get("uid")
        if uid and uid in self.store.dependents:
            self.schedule(self.gc.collect_dependents, str(uid))
        if event.namespace:
            ns_entry = self.store.get(NS_KEY, "", event.namespace)
            if ns_entry is not None and (ns_entry.obj.get("metadata") or {}).get("deletionTimestamp"):
                self.namespaces.request(event.namespace)
        for owner in meta.get("ownerReferences") or ():
            if isinstance(owner, dict) and owner.get("blockOwnerDeletion"):
                loc = self.store.by_uid(str(owner.get("uid")))
                if loc is not None:
                    self.schedule(self.reconcile, *loc)
        crd_name = self.crds.terminating_crd_of(event.skey)
        if crd_name:
            self.schedule(self.reconcile, CRD_KEY, "", crd_name)

    def reconcile(self, skey: str, ns: str, name: str) -> None:
        """Finish what an object's deletion/ownership state asks for (GC, namespaces, CRDs)."""
        entry = self.store.get(skey, ns, name)
        if entry is None:
            return
        meta = entry.obj.get("metadata") or {}
        if meta.get("ownerReferences") and not meta.get("deletionTimestamp"):
            self.gc.check_owners(skey, ns, name, entry.obj)
        if not meta.get("deletionTimestamp"):
            return
        if skey == NS_KEY:
            self.namespaces.request(name)
            return
        if skey == CRD_KEY and CRD_FINALIZER in (meta.get("finalizers") or ()):
            self.crds.finish(name, entry.obj)
            return
        self.gc.finish_deletion(skey, ns, name, meta)
