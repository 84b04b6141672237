"""The sample-controller: a port of k8s.io/sample-controller's controller.go.

For every Foo it makes sure a Deployment named ``spec.deploymentName`` exists in the Foo's
namespace, owned by (controlled by) the Foo, with ``spec.replicas`` copied from the Foo, and
copies the Deployment's ``status.availableReplicas`` back into the Foo's status.

The flow is Go's: informer events enqueue ``namespace/name`` keys; ``run`` starts workers that
loop ``process_next_work_item`` -> ``sync_handler``; an error requeues the key rate-limited,
success forgets it.

Where this port deliberately does better than Go (each covered by tests/controller):

1. A Deployment that exists but is not controlled by the Foo: Go records a Warning and retries
   with the generic rate limiter forever, recording a Warning per retry. Here the Warning is
   recorded once per *change of the situation* (a new Foo generation or a new Deployment
   resourceVersion), and retries back off exponentially to ``not_owned_backoff_cap``. A change
   of either object enqueues the Foo at once (unowned Deployments are mapped back to the Foos
   that name them through an index on ``spec.deploymentName``).
2. Go replaces the whole Deployment on update, wiping other writers' changes. Here only
   ``spec.replicas`` is changed, with a merge patch carrying the field manager.
3. An unset replicas on either side never crashes (an unset Deployment replicas counts as the
   API default, 1; an unset Foo replicas means "leave the Deployment's replicas alone").
4. The owner match checks the API group as well as the kind (and the UID in ``sync_handler``).
5. The Foo's status is written only when it changes, not on every resync, and as a JSON merge
   patch of ``status.availableReplicas`` alone to the status subresource, without a
   resourceVersion: Go PUTs the cached Foo, and since the cache lags the Foo's own last status
   write, the next sync of a new Foo (its Deployment became available) conflicted every time.
   The patch applies to the live object, so a stale cache cannot make it conflict, and it keeps
   status fields other writers own. A Foo deleted meanwhile (404 on the write) is done.
6. A Foo without ``spec.deploymentName`` gets a Warning event, not only a log line.
7. A 409 from any write (Conflict: a write based on a stale read; AlreadyExists: a create the
   lagging cache did not know was done) is an expected race with another writer, not a failure:
   the key is requeued rate-limited, logged at debug level and counted in
   ``samplecontroller_sync_conflicts_total{controller="foo"}``; Go logs it as an error. On a
   shard (``sharded``, ``--shard-ring``) a create's AlreadyExists reads the Deployment from the
   API server instead (it may be outside the shard's informers: ``OwnWrites.create_failed``).
8. The watch events of the controller's own writes (the Foo's status patch, the Deployment it
   created) do not sync the Foo again (``foo.OwnWrites``): each Foo is synced once per change
   that matters, and so gets one ``Synced`` event per such sync. Go syncs again on each of those
   events, and that sync changes nothing but records another ``Synced`` event. A changed spec, a
   status another writer changed, a changed or deleted Deployment and every resync still sync.

What a Foo asks for (the Deployment, ownership, replicas, status, event reasons, the backoff and
the rate limiter) is ``samplecontroller.foo``, shared with ``samplecontroller.foo_reconciler``;
this module is only the client-go style driving of it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec

from generated import clientset
from generated.apis.samplecontroller.v1alpha1 import Foo
from generated.informers.samplecontroller.v1alpha1 import FooInformer
from samplecontroller import wait
from samplecontroller.apimachinery import errors, meta
from samplecontroller.cache import DeletedFinalStateUnknown, ResourceEventHandlerFuncs, wait_for_cache_sync
from samplecontroller.client.types import MERGE_PATCH
from samplecontroller.foo import (
    DEPLOYMENT_NAME_FIELD,
    ERR_INVALID_SPEC,
    FIELD_MANAGER,
    MESSAGE_NO_DEPLOYMENT_NAME,
    MESSAGE_RESOURCE_EXISTS,
    MESSAGE_RESOURCE_SYNCED,
    SUCCESS_SYNCED,
    NotOwnedBackoff,
    OwnWrites,
    deployment_names,
    is_controlled_by,
    is_foo_reference,
    new_deployment,
    replicas_patch,
    status_patch,
)
from samplecontroller.foo import rate_limiter as foo_rate_limiter
from samplecontroller.kubernetes import clientset as kubernetes
from samplecontroller.kubernetes.apis.apps.v1 import Deployment
from samplecontroller.kubernetes.informers.apps.v1 import DeploymentInformer
from samplecontroller.logs import get_logger
from samplecontroller.record import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING, EventRecorder
from samplecontroller.runtime import rbac
from samplecontroller.workqueue import RateLimiter, RateLimitingQueue, shut_down_workers

log = get_logger("controller")

if TYPE_CHECKING:
    from prometheus_client.core import Metric


class ConflictCounter:
    """``samplecontroller_sync_conflicts_total{controller}``: syncs that met a 409 Conflict and were
    requeued (improvement 7). Counted in memory; a prometheus_client collector once
    ``install_metrics()`` has run (app.py does when /metrics is served), so that the controller
    does not import prometheus_client otherwise. Thread-safe."""

    NAME = "samplecontroller_sync_conflicts"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, float] = {}

    def inc(self, controller: str) -> None:
        with self._lock:
            self._counts[controller] = self._counts.get(controller, 0.0) + 1.0

    def value(self, controller: str) -> float:
        with self._lock:
            return self._counts.get(controller, 0.0)

    def collect(self) -> Iterator[Metric]:
        from prometheus_client.core import CounterMetricFamily

        family = CounterMetricFamily(self.NAME, "Syncs that met a 409 Conflict and were requeued", labels=["controller"])
        with self._lock:
            for controller, count in sorted(self._counts.items()):
                family.add_metric([controller], count)
        yield family


SYNC_CONFLICTS = ConflictCounter()
_metrics_lock = threading.Lock()
_metrics_installed = False


def install_metrics() -> None:
    """Export ``SYNC_CONFLICTS`` in prometheus_client's default registry (idempotent)."""
    global _metrics_installed
    with _metrics_lock:
        if not _metrics_installed:
            from prometheus_client import REGISTRY

            REGISTRY.register(SYNC_CONFLICTS)
            _metrics_installed = True


class ObjectName(NamedTuple):
    """A queue key, like client-go's cache.ObjectName."""

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


class ResourceNotOwnedError(Exception):
    """The Deployment named by a Foo exists and is not controlled by that Foo.

    ``retry_after`` is the capped backoff before the next attempt (improvement 1).
    """

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def _deployment_key_index(obj: Any) -> list[str]:
    """Foo informer index: "namespace/deploymentName" -> the Foos that name that Deployment."""
    return [f"{meta.get_namespace(obj)}/{name}" for name in deployment_names(obj)]


# Its informers list and watch Foos and Deployments; its recorder posts core Events (the runtime
# controller's are inferred from its Manager by samplecontroller.manifests).
@rbac.rule(groups="samplecontroller.k8s.io", resources="foos", verbs="get;list;watch")
@rbac.rule(groups="apps", resources="deployments", verbs="get;list;watch")
@rbac.rule(groups="core", resources="events", verbs="create;patch")
class Controller:
    """The Foo controller. Build it, start the informer factories, then call ``run``.

    As Go's ``NewController``: ``kubeclientset`` (Deployments) is any
    ``samplecontroller.kubernetes.clientset.Interface`` and ``sampleclientset`` (Foos) any
    ``generated.clientset.Interface``: the real clientsets or their fakes. The Deployment
    informer comes from ``samplecontroller.kubernetes.informers``' factory, the Foo informer from
    ``generated.informers``'; start both factories with the same stop (see ``app``).
    """

    def __init__(
        self,
        kubeclientset: kubernetes.Interface,
        sampleclientset: clientset.Interface,
        deployment_informer: DeploymentInformer,
        foo_informer: FooInformer,
        recorder: EventRecorder,
        *,
        rate_limiter: RateLimiter[ObjectName] | None = None,
        not_owned_backoff_base: float = 1.0,
        not_owned_backoff_cap: float = 300.0,
    ) -> None:
        self.kubeclientset = kubeclientset
        self.sampleclientset = sampleclientset
        self.recorder = recorder
        self.deployments_lister = deployment_informer.lister()
        self.deployments_informer = deployment_informer.informer()
        self.deployments_synced = deployment_informer.informer().has_synced
        self.foos_lister = foo_informer.lister()
        self._foo_indexer = foo_informer.informer().get_indexer()
        self.foos_synced = foo_informer.informer().has_synced
        self.workqueue: RateLimitingQueue[ObjectName] = RateLimitingQueue(
            rate_limiter or foo_rate_limiter(), name="Foos"
        )
        self._not_owned = NotOwnedBackoff(not_owned_backoff_base, not_owned_backoff_cap)
        self.own_writes = OwnWrites()
        # set by app's --shard-ring (its informers select one shard's objects): a create meeting
        # AlreadyExists reads the Deployment from the API server (``OwnWrites.create_failed``)
        self.sharded = False

        log.info("Setting up event handlers")
        foo_informer.informer().add_indexers({DEPLOYMENT_NAME_FIELD: _deployment_key_index})
        # The handlers only read the caches and put keys on the work queue: they run inline, on
        # the informers' threads, saving a thread hand-off per event.
        foo_informer.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self._on_foo_add,
                update_func=self._on_foo_update,
                delete_func=self._on_foo_delete,
            ),
            inline=True,
        )
        deployment_informer.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self._on_deployment_add,
                update_func=self._on_deployment_update,
                delete_func=self.handle_object,
            ),
            inline=True,
        )

    # -- running ---------------------------------------------------------------------------

    def run(self, workers: int, stop: threading.Event, *, shutdown_timeout: float = 30.0) -> None:
        """Wait for the caches, run ``workers`` workers until ``stop`` is set, then shut down.

        Raises RuntimeError if the caches cannot sync before ``stop``. On stop no new item is
        handed out (the keys still waiting are dropped: the next start lists everything again);
        the items being processed may finish, and the whole shutdown takes at most
        ``shutdown_timeout`` seconds: workers still busy then are abandoned (daemon threads).
        """
        log.info("Starting Foo controller")
        log.info("Waiting for informer caches to sync")
        if not wait_for_cache_sync(self.deployments_synced, self.foos_synced, stop=stop):
            raise RuntimeError("failed to wait for caches to sync")
        log.info("Starting workers", count=workers)
        threads = [
            threading.Thread(target=wait.until, args=(self.run_worker, 1.0, stop), name=f"foo-worker-{i}", daemon=True)
            for i in range(workers)
        ]
        for t in threads:
            t.start()
        log.info("Started workers")
        stop.wait()
        log.info("Shutting down workers", waiting=self.workqueue.len())
        finished = shut_down_workers(self.workqueue, threads, shutdown_timeout)
        if not finished:
            log.error("Shutdown timeout reached; abandoning the items still in progress", timeout=shutdown_timeout)

    def run_worker(self) -> None:
        """Process items until the queue shuts down."""
        while self.process_next_work_item():
            pass

    def process_next_work_item(self) -> bool:
        """Handle one key; False once the queue is shut down. Never raises."""
        got = self.workqueue.get()
        if got[1]:
            return False
        key = got[0]
        try:
            self.sync_handler(key)
        except ResourceNotOwnedError as err:
            # Improvement 1: our own capped backoff, not the generic limiter's endless retries.
            self.workqueue.forget(key)
            log.info("Deployment not owned, retrying later", key=str(key), delay=round(err.retry_after, 3), error=str(err))
            self.workqueue.add_after(key, err.retry_after)
        except (errors.ConflictError, errors.AlreadyExistsError) as err:
            # Improvement 7: another writer got there first; retry from a fresher cache.
            SYNC_CONFLICTS.inc("foo")
            log.debug("Conflict syncing; requeuing for later retry", key=str(key), error=str(err))
            self.workqueue.add_rate_limited(key)
        except Exception as err:
            log.error("Error syncing; requeuing for later retry", key=str(key), error=f"{type(err).__name__}: {err}")
            self.workqueue.add_rate_limited(key)
        else:
            self.workqueue.forget(key)
            log.debug("Successfully synced", key=str(key))
        finally:
            self.workqueue.done(key)
        return True

    # -- reconciling -----------------------------------------------------------------------

    def sync_handler(self, key: ObjectName) -> None:
        """Drive the Deployment and the Foo's status toward the Foo's spec.

        Returns normally when done (or when there is nothing to do); raises to be retried.
        """
        try:
            foo = self.foos_lister.foos(key.namespace).get(key.name)
        except errors.NotFoundError:
            log.info("Foo referenced by item in work queue no longer exists", key=str(key))
            self._not_owned.forget(key)
            return

        names = deployment_names(foo)
        if not names:
            log.error("deployment name must be specified", key=str(key))
            self.recorder.event(foo, EVENT_TYPE_WARNING, ERR_INVALID_SPEC, MESSAGE_NO_DEPLOYMENT_NAME)
            return

        deployments = self.kubeclientset.apps_v1().deployments(key.namespace)
        try:
            deployment = self.deployments_lister.deployments(key.namespace).get(names[0])
        except errors.NotFoundError:
            deployment = self._create_deployment(deployments, foo)

        if not is_controlled_by(deployment, foo):
            delay = self._not_owned.warn(key, foo, deployment, self.recorder)
            raise ResourceNotOwnedError(MESSAGE_RESOURCE_EXISTS.format(names[0]), delay)
        self._not_owned.forget(key)

        patch = replicas_patch(foo, deployment)
        if patch is not None:
            log.info("Updating deployment replicas", foo=str(key), replicas=patch["spec"]["replicas"])
            deployment = deployments.patch(
                names[0], msgspec.json.encode(patch), MERGE_PATCH, field_manager=FIELD_MANAGER
            )

        self.update_foo_status(foo, deployment)
        self.recorder.event(foo, EVENT_TYPE_NORMAL, SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED)

    def update_foo_status(self, foo: Foo, deployment: Deployment) -> None:
        """Copy availableReplicas into the Foo's status subresource, only when it changed: a merge
        patch of that field alone, no resourceVersion (improvement 5)."""
        patch = status_patch(foo, deployment)
        if patch is None:
            return
        self.own_writes.expect_status(foo, patch["status"]["availableReplicas"])
        try:
            self.sampleclientset.samplecontroller_v1alpha1().foos(meta.get_namespace(foo)).patch(
                meta.get_name(foo), msgspec.json.encode(patch), MERGE_PATCH, subresource="status",
                field_manager=FIELD_MANAGER,
            )
        except errors.NotFoundError:
            self.own_writes.forget_status(foo)
            log.info("Foo no longer exists", foo=f"{meta.get_namespace(foo)}/{meta.get_name(foo)}")
        except BaseException:
            self.own_writes.forget_status(foo)
            raise

    def _create_deployment(self, deployments: Any, foo: Foo) -> Deployment:
        """Create the Deployment ``foo`` asks for, announced to ``own_writes`` so that its add event
        does not sync the Foo again."""
        desired = new_deployment(foo)
        self.own_writes.expect_created(desired)
        try:
            created: Deployment = deployments.create(desired, field_manager=FIELD_MANAGER)
        except BaseException as err:
            if not self.own_writes.create_failed(desired, err, sharded=self.sharded):
                raise
            # sharded: outside this shard's cache; read, it is what the unsharded sync sees
            existing: Deployment = self.kubeclientset.apps_v1().deployments(meta.get_namespace(foo)).get(
                meta.get_name(desired))
            return existing
        return created

    # -- event handlers --------------------------------------------------------------------

    def _on_foo_add(self, obj: Foo, is_in_initial_list: bool) -> None:
        self.enqueue_foo(obj)

    def _on_foo_update(self, old: Foo, new: Foo) -> None:
        # The event of this controller's own status write changes nothing a sync reads.
        if not self.own_writes.is_own_status_write(old, new):
            self.enqueue_foo(new)

    def _on_foo_delete(self, obj: Foo | DeletedFinalStateUnknown[Foo]) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
        if obj is not None:
            self.own_writes.forget(meta.get_namespace(obj), meta.get_name(obj))

    def _on_deployment_add(self, obj: Deployment, is_in_initial_list: bool) -> None:
        # The Deployment this controller just created is what the creating sync already saw.
        if not self.own_writes.is_own_create(obj):
            self.handle_object(obj)

    def enqueue_foo(self, obj: Foo) -> None:
        """Put the Foo's namespace/name on the queue."""
        self.workqueue.add(ObjectName(meta.get_namespace(obj), meta.get_name(obj)))

    def _on_deployment_update(self, old: Deployment, new: Deployment) -> None:
        # Periodic resyncs send updates for every Deployment; same resourceVersion = no change.
        if meta.get_resource_version(old) == meta.get_resource_version(new):
            return
        self.handle_object(new)

    def handle_object(self, obj: Deployment | DeletedFinalStateUnknown[Deployment]) -> None:
        """Enqueue the Foo that controls ``obj``, or, for an uncontrolled Deployment, the Foos naming it."""
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
            log.info("Recovered deleted object", name=meta.get_name(obj))
        namespace = meta.get_namespace(obj)
        owner = meta.get_controller_of(obj)
        if owner is None:
            # Improvement 1: a Foo blocked on this unowned Deployment resumes as soon as it changes.
            for foo in self._foo_indexer.by_index(DEPLOYMENT_NAME_FIELD, f"{namespace}/{meta.get_name(obj)}"):
                self.enqueue_foo(foo)
            return
        # Improvement 4: group and kind, not only kind.
        if not is_foo_reference(owner):
            return
        try:
            foo = self.foos_lister.foos(namespace).get(owner.name)
        except errors.NotFoundError:
            log.info("Ignore orphaned object", object=f"{namespace}/{meta.get_name(obj)}", foo=owner.name)
            return
        self.enqueue_foo(foo)

