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
5. The Foo's status is written only when it changes, not on every resync.
6. A Foo without ``spec.deploymentName`` gets a Warning event, not only a log line.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Any, NamedTuple

import msgspec

from generated.apis.apps.v1 import Deployment, DeploymentSpec
from generated.apis.core.v1 import Container, PodSpec, PodTemplateSpec
from generated.apis.meta.v1 import LabelSelector, ObjectMeta, OwnerReference
from generated.apis.samplecontroller.v1alpha1 import Foo, FooStatus
from generated.clientset import Clientset
from generated.informers.apps.v1 import DeploymentInformer
from generated.informers.samplecontroller.v1alpha1 import FooInformer
from samplecontroller import wait
from samplecontroller.apimachinery import errors, meta
from samplecontroller.cache import DeletedFinalStateUnknown, ResourceEventHandlerFuncs, wait_for_cache_sync
from samplecontroller.client.types import MERGE_PATCH
from samplecontroller.logs import get_logger
from samplecontroller.record import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING, EventRecorder
from samplecontroller.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    RateLimitingQueue,
    shut_down_workers,
)

log = get_logger("controller")

CONTROLLER_AGENT_NAME = "sample-controller"
FIELD_MANAGER = CONTROLLER_AGENT_NAME

# Event reasons and messages, as in Go.
SUCCESS_SYNCED = "Synced"
ERR_RESOURCE_EXISTS = "ErrResourceExists"
MESSAGE_RESOURCE_EXISTS = 'Resource "{}" already exists and is not managed by Foo'
MESSAGE_RESOURCE_SYNCED = "Foo synced successfully"
# Improvement 6: a Foo without spec.deploymentName is reported on the Foo itself.
ERR_INVALID_SPEC = "InvalidSpec"
MESSAGE_NO_DEPLOYMENT_NAME = "spec.deploymentName must be specified"

FOO_GROUP = "samplecontroller.k8s.io"
FOO_VERSION = "v1alpha1"
FOO_KIND = "Foo"
# Foo informer index: "namespace/deploymentName" -> the Foos that name that Deployment.
DEPLOYMENT_NAME_INDEX = "spec.deploymentName"


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


def sample_controller_rate_limiter() -> RateLimiter[ObjectName]:
    """sample-controller's own limiter: MaxOf(exponential 5 ms .. 1000 s, bucket 50 qps burst 300)."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(qps=50.0, burst=300),
    )


def _deployment_name_index(obj: Any) -> list[str]:
    spec = getattr(obj, "spec", None)
    name = getattr(spec, "deployment_name", None)
    if not isinstance(name, str) or not name:
        return []
    return [f"{meta.get_namespace(obj)}/{name}"]


class NotOwnedBackoff:
    """Per-key memory of the "Deployment not owned" situation (improvement 1).

    ``observe`` says whether the situation is new (so a Warning is due) and returns the delay
    before the next retry: ``base * 2**n`` capped at ``cap``, reset whenever the situation changes.
    """

    def __init__(self, base: float, cap: float) -> None:
        self._base = base
        self._cap = cap
        self._lock = threading.Lock()
        self._state: dict[Hashable, tuple[tuple[str, ...], int]] = {}

    def observe(self, key: Hashable, situation: tuple[str, ...]) -> tuple[bool, float]:
        with self._lock:
            previous = self._state.get(key)
            if previous is None or previous[0] != situation:
                self._state[key] = (situation, 1)
                return True, self._base
            attempts = previous[1]
            self._state[key] = (situation, attempts + 1)
            return False, min(self._cap, self._base * (2**attempts))

    def forget(self, key: Hashable) -> None:
        with self._lock:
            self._state.pop(key, None)


def not_owned_situation(foo: Foo, deployment: Deployment) -> tuple[str, ...]:
    """What identifies a "Deployment not owned" situation: a change of either object is a new one."""
    return (meta.get_uid(foo), str(meta.get_generation(foo)), meta.get_uid(deployment),
            meta.get_resource_version(deployment))


class Controller:
    """The Foo controller. Build it, start the informer factories, then call ``run``."""

    def __init__(
        self,
        clientset: Clientset,
        deployment_informer: DeploymentInformer,
        foo_informer: FooInformer,
        recorder: EventRecorder,
        *,
        rate_limiter: RateLimiter[ObjectName] | None = None,
        not_owned_backoff_base: float = 1.0,
        not_owned_backoff_cap: float = 300.0,
    ) -> None:
        self.clientset = clientset
        self.recorder = recorder
        self.deployments_lister = deployment_informer.lister()
        self.deployments_synced = deployment_informer.informer().has_synced
        self.foos_lister = foo_informer.lister()
        self._foo_indexer = foo_informer.informer().get_indexer()
        self.foos_synced = foo_informer.informer().has_synced
        self.workqueue: RateLimitingQueue[ObjectName] = RateLimitingQueue(
            rate_limiter or sample_controller_rate_limiter(), name="Foos"
        )
        self._not_owned = NotOwnedBackoff(not_owned_backoff_base, not_owned_backoff_cap)

        log.info("Setting up event handlers")
        foo_informer.informer().add_indexers({DEPLOYMENT_NAME_INDEX: _deployment_name_index})
        foo_informer.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self._on_foo_add,
                update_func=lambda _old, new: self.enqueue_foo(new),
            )
        )
        deployment_informer.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self._on_deployment_add,
                update_func=self._on_deployment_update,
                delete_func=self.handle_object,
            )
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
        key, shutdown = self.workqueue.get()
        if shutdown:
            return False
        try:
            self.sync_handler(key)
        except ResourceNotOwnedError as err:
            # Improvement 1: our own capped backoff, not the generic limiter's endless retries.
            self.workqueue.forget(key)
            log.info("Deployment not owned, retrying later", key=str(key), delay=round(err.retry_after, 3), error=str(err))
            self.workqueue.add_after(key, err.retry_after)
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

        spec = foo.spec
        deployment_name = spec.deployment_name if spec is not msgspec.UNSET else msgspec.UNSET
        if not isinstance(deployment_name, str) or not deployment_name:
            log.error("deployment name must be specified", key=str(key))
            self.recorder.event(foo, EVENT_TYPE_WARNING, ERR_INVALID_SPEC, MESSAGE_NO_DEPLOYMENT_NAME)
            return

        deployments = self.clientset.apps_v1.deployments(key.namespace)
        try:
            deployment = self.deployments_lister.deployments(key.namespace).get(deployment_name)
        except errors.NotFoundError:
            deployment = deployments.create(new_deployment(foo), field_manager=FIELD_MANAGER)

        if not is_controlled_by(deployment, foo):
            delay = self._not_owned_situation(key, foo, deployment)
            raise ResourceNotOwnedError(MESSAGE_RESOURCE_EXISTS.format(deployment_name), delay)
        self._not_owned.forget(key)

        desired = foo_replicas(foo)
        if desired is not None and desired != deployment_replicas(deployment):
            log.info("Updating deployment replicas", foo=str(key), replicas=desired)
            patch = msgspec.json.encode({"spec": {"replicas": desired}})
            deployment = deployments.patch(
                deployment_name, patch, MERGE_PATCH, field_manager=FIELD_MANAGER
            )

        self.update_foo_status(foo, deployment)
        self.recorder.event(foo, EVENT_TYPE_NORMAL, SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED)

    def _not_owned_situation(self, key: ObjectName, foo: Foo, deployment: Deployment) -> float:
        """Warn once per new situation; return the delay before the next retry."""
        is_new, delay = self._not_owned.observe(key, not_owned_situation(foo, deployment))
        if is_new:
            self.recorder.event(
                foo, EVENT_TYPE_WARNING, ERR_RESOURCE_EXISTS, MESSAGE_RESOURCE_EXISTS.format(meta.get_name(deployment))
            )
        return delay

    def update_foo_status(self, foo: Foo, deployment: Deployment) -> None:
        """Copy availableReplicas into the Foo's status subresource, only when it changed."""
        foo_copy = foo_with_status(foo, deployment)
        if foo_copy is None:
            return
        self.clientset.samplecontroller_v1alpha1.foos(meta.get_namespace(foo)).update_status(
            foo_copy, field_manager=FIELD_MANAGER
        )

    # -- event handlers --------------------------------------------------------------------

    def _on_foo_add(self, obj: Any, is_in_initial_list: bool) -> None:
        self.enqueue_foo(obj)

    def _on_deployment_add(self, obj: Any, is_in_initial_list: bool) -> None:
        self.handle_object(obj)

    def enqueue_foo(self, obj: Any) -> None:
        """Put the Foo's namespace/name on the queue."""
        self.workqueue.add(ObjectName(meta.get_namespace(obj), meta.get_name(obj)))

    def _on_deployment_update(self, old: Any, new: Any) -> None:
        # Periodic resyncs send updates for every Deployment; same resourceVersion = no change.
        if meta.get_resource_version(old) == meta.get_resource_version(new):
            return
        self.handle_object(new)

    def handle_object(self, obj: Any) -> None:
        """Enqueue the Foo that controls ``obj``, or, for an uncontrolled Deployment, the Foos naming it."""
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
            log.info("Recovered deleted object", name=meta.get_name(obj))
        namespace = meta.get_namespace(obj)
        owner = meta.get_controller_of(obj)
        if owner is None:
            # Improvement 1: a Foo blocked on this unowned Deployment resumes as soon as it changes.
            for foo in self._foo_indexer.by_index(DEPLOYMENT_NAME_INDEX, f"{namespace}/{meta.get_name(obj)}"):
                self.enqueue_foo(foo)
            return
        # Improvement 4: group and kind, not only kind.
        if owner.kind != FOO_KIND or owner.group != FOO_GROUP:
            return
        try:
            foo = self.foos_lister.foos(namespace).get(owner.name)
        except errors.NotFoundError:
            log.info("Ignore orphaned object", object=f"{namespace}/{meta.get_name(obj)}", foo=owner.name)
            return
        self.enqueue_foo(foo)


def foo_with_status(foo: Foo, deployment: Deployment) -> Foo | None:
    """A copy of ``foo`` whose status.availableReplicas is the Deployment's, or None when the
    Foo's status already says so (improvement 5: no status write per resync)."""
    available = 0
    if deployment.status is not msgspec.UNSET and isinstance(deployment.status.available_replicas, int):
        available = deployment.status.available_replicas
    current = foo.status.available_replicas if foo.status is not msgspec.UNSET else msgspec.UNSET
    if current == available:
        return None
    return msgspec.structs.replace(foo, status=FooStatus(available_replicas=available))


def foo_replicas(foo: Foo) -> int | None:
    """spec.replicas of the Foo, or None when unset (never a crash: improvement 3)."""
    if foo.spec is msgspec.UNSET or not isinstance(foo.spec.replicas, int):
        return None
    return foo.spec.replicas


def deployment_replicas(deployment: Deployment) -> int:
    """spec.replicas of the Deployment; unset means 1, as the API server defaults it."""
    if deployment.spec is msgspec.UNSET or not isinstance(deployment.spec.replicas, int):
        return 1
    return deployment.spec.replicas


def is_controlled_by(obj: Any, owner: Foo) -> bool:
    """True when ``obj``'s controller reference is this Foo: UID, API group and kind (improvement 4)."""
    ref = meta.get_controller_of(obj)
    return (
        ref is not None
        and ref.uid == meta.get_uid(owner)
        and ref.group == FOO_GROUP
        and ref.kind == FOO_KIND
    )


def new_deployment(foo: Foo) -> Deployment:
    """The Deployment a Foo asks for: nginx, labelled app=nginx,controller=<foo>, owned by the Foo."""
    labels = {"app": "nginx", "controller": meta.get_name(foo)}
    replicas = foo_replicas(foo)
    deployment_name = foo.spec.deployment_name if foo.spec is not msgspec.UNSET else msgspec.UNSET
    return Deployment(
        metadata=ObjectMeta(
            name=deployment_name,
            namespace=meta.get_namespace(foo),
            owner_references=(
                OwnerReference(
                    api_version=f"{FOO_GROUP}/{FOO_VERSION}",
                    kind=FOO_KIND,
                    name=meta.get_name(foo),
                    uid=meta.get_uid(foo),
                    controller=True,
                    block_owner_deletion=True,
                ),
            ),
        ),
        spec=DeploymentSpec(
            replicas=replicas if replicas is not None else msgspec.UNSET,
            selector=LabelSelector(match_labels=dict(labels)),
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels=dict(labels)),
                spec=PodSpec(containers=(Container(name="nginx", image="nginx:latest"),)),
            ),
        ),
    )
