"""The Memcached controller: for every Memcached, a Deployment of ``spec.size``
memcached Pods.

The Deployment has the Memcached's name and namespace and is controlled by it (an owner
reference with ``controller: true``), so deleting the Memcached deletes it and any
change to it queues its Memcached again (``owns(Deployment)``). The controller creates
it, keeps its replicas, image and port as the spec says (a merge patch of what differs),
and reports in the status the Deployment's available replicas, ``observedGeneration``
and a ``Ready`` condition (``True`` once every Pod is available). A Deployment of that
name that another owner controls is left alone and reported (a Warning Event and
``Ready=False``, reason ``DeploymentNotOwned``).

Status is written as a JSON merge patch of the status subresource, only when it changes.
"""

from __future__ import annotations

import argparse

import msgspec
from samplecontroller.apimachinery import errors, meta
from samplecontroller.apimachinery.conditions import now, set_status_condition
from samplecontroller.apimachinery.ownerreferences import is_controlled_by
from samplecontroller.kubernetes.apis.apps.v1 import Deployment, DeploymentSpec
from samplecontroller.kubernetes.apis.core.v1 import (
    Container,
    ContainerPort,
    PodSpec,
    PodTemplateSpec,
)
from samplecontroller.kubernetes.apis.meta.v1 import (
    Condition,
    LabelSelector,
    ObjectMeta,
)
from samplecontroller.record import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING, EventRecorder
from samplecontroller.runtime import controller as rt_controller
from samplecontroller.runtime import rbac
from samplecontroller.runtime.builder import controller_managed_by
from samplecontroller.runtime.client import Client, MergeFrom, set_controller_reference
from samplecontroller.runtime.manager import Manager
from samplecontroller.runtime.reconcile import Request, Result

from memcachedop.generated.apis.cache.v1alpha1 import Memcached, MemcachedStatus

NAME = "memcached-controller"
"""The controller's name (its work queue and metrics) and the source of its Events."""
CONDITION_READY = "Ready"
REASON_RECONCILED = "Reconciled"
REASON_PROGRESSING = "Progressing"
REASON_NOT_OWNED = "DeploymentNotOwned"
DEFAULT_IMAGE = "memcached:1.6-alpine"
DEFAULT_PORT = 11211


# --8<-- [start:desired]
def desired_deployment(memcached: Memcached) -> Deployment:
    """The Deployment ``memcached`` asks for, controlled by it."""
    name, namespace = memcached.metadata.name, memcached.metadata.namespace
    labels = {
        "app.kubernetes.io/name": "memcached",
        "app.kubernetes.io/instance": str(name),
    }
    image = (
        memcached.spec.image if isinstance(memcached.spec.image, str) else DEFAULT_IMAGE
    )
    port = memcached.spec.port if isinstance(memcached.spec.port, int) else DEFAULT_PORT
    container = Container(
        name="memcached",
        image=image,
        command=("memcached", "--memory-limit=64", "--port", str(port)),
        ports=(ContainerPort(name="memcached", container_port=port),),
    )
    deployment = Deployment(
        metadata=ObjectMeta(name=name, namespace=namespace, labels=labels),
        spec=DeploymentSpec(
            replicas=memcached.spec.size,
            selector=LabelSelector(match_labels=labels),
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels=labels),
                spec=PodSpec(containers=(container,)),
            ),
        ),
    )
    return set_controller_reference(memcached, deployment)


# --8<-- [end:desired]


# --8<-- [start:status]
def next_status(
    memcached: Memcached, available: int, *, not_owned: bool = False
) -> MemcachedStatus:
    """The status to write: available replicas, observedGeneration and Ready."""
    generation = (
        memcached.metadata.generation
        if isinstance(memcached.metadata.generation, int)
        else 0
    )
    status = (
        memcached.status
        if isinstance(memcached.status, MemcachedStatus)
        else MemcachedStatus()
    )
    current = status.conditions if isinstance(status.conditions, tuple) else ()
    size = memcached.spec.size
    if not_owned:
        state, reason, message = (
            "False",
            REASON_NOT_OWNED,
            "a Deployment of that name belongs to someone else",
        )
    elif available >= size:
        state, reason, message = (
            "True",
            REASON_RECONCILED,
            f"{available}/{size} Pods available",
        )
    else:
        state, reason, message = (
            "False",
            REASON_PROGRESSING,
            f"{available}/{size} Pods available",
        )
    ready = Condition(
        type=CONDITION_READY,
        status=state,
        reason=reason,
        message=message,
        observed_generation=generation,
        last_transition_time=now(),
    )
    conditions, _ = set_status_condition(current, ready)
    return msgspec.structs.replace(
        status,
        available_replicas=available,
        observed_generation=generation,
        conditions=conditions,
    )


# --8<-- [end:status]


# --8<-- [start:rbac]
# What reconcile writes; make manifests adds what the Manager shows (get, list and
# watch of Memcacheds and of the Deployments it owns, Events) and writes
# config/rbac/role.yaml.
@rbac.rule(groups="cache.example.com", resources="memcacheds/status", verbs="patch")
@rbac.rule(groups="apps", resources="deployments", verbs="create;patch")
# --8<-- [end:rbac]
class MemcachedReconciler:
    """Reconciles one Memcached per call (see the module docstring)."""

    def __init__(self, client: Client, recorder: EventRecorder) -> None:
        self.client = client
        self.recorder = recorder

    # --8<-- [start:reconcile]
    def reconcile(self, request: Request) -> Result:
        """Make the Memcached's Deployment match its spec, then report its state."""
        try:
            memcached = self.client.get(Memcached, request.namespace, request.name)
        except errors.NotFoundError:
            return Result()  # deleted: its Deployment is garbage collected
        if meta.get_deletion_timestamp(memcached) is not None:
            return Result()

        deployment = self.ensure_deployment(memcached)
        if deployment is None:
            self.write_status(memcached, next_status(memcached, 0, not_owned=True))
            return Result()
        status = deployment.status
        available = (
            status.available_replicas
            if status and isinstance(status.available_replicas, int)
            else 0
        )
        self.write_status(memcached, next_status(memcached, available))
        return Result()

    # --8<-- [end:reconcile]

    # --8<-- [start:ensure]
    def ensure_deployment(self, memcached: Memcached) -> Deployment | None:
        """Create the Deployment or patch what differs; None if another owns it."""
        desired = desired_deployment(memcached)
        try:
            current = self.client.get(
                Deployment,
                str(memcached.metadata.namespace),
                str(memcached.metadata.name),
            )
        except errors.NotFoundError:
            created = self.client.create(desired)
            self.recorder.event(
                memcached,
                EVENT_TYPE_NORMAL,
                "Created",
                f"Created Deployment {created.metadata.name}",
            )
            return created
        if not is_controlled_by(current, memcached):
            self.recorder.event(
                memcached,
                EVENT_TYPE_WARNING,
                REASON_NOT_OWNED,
                f"Deployment {current.metadata.name} exists and is not controlled"
                " by this Memcached",
            )
            return None
        assert current.spec and desired.spec
        if (current.spec.replicas, current.spec.template) == (
            desired.spec.replicas,
            desired.spec.template,
        ):
            return current
        changed = msgspec.structs.replace(
            current,
            spec=msgspec.structs.replace(
                current.spec,
                replicas=desired.spec.replicas,
                template=desired.spec.template,
            ),
        )
        return self.client.patch(changed, MergeFrom(current))

    # --8<-- [end:ensure]

    def write_status(self, memcached: Memcached, status: MemcachedStatus) -> None:
        """Patch the status subresource when it differs; a Ready change is an Event."""
        if status == memcached.status:
            return
        self.client.status().patch(
            msgspec.structs.replace(memcached, status=status), MergeFrom(memcached)
        )
        if ready_of(status) != ready_of(memcached.status):
            self.recorder.event(
                memcached,
                EVENT_TYPE_NORMAL,
                REASON_RECONCILED,
                f"Ready is {ready_of(status)}: "
                f"{available_of(status)}/{memcached.spec.size} available",
            )

    # --8<-- [start:setup]
    def setup_with_manager(
        self, mgr: Manager, workers: int = 1
    ) -> rt_controller.Controller:
        """Watch Memcacheds and their Deployments; register with ``mgr``."""
        return (
            controller_managed_by(mgr)
            .for_(Memcached)
            .owns(Deployment)
            .with_options(rt_controller.Options(max_concurrent_reconciles=workers))
            .named(NAME)
            .complete(self)
        )

    # --8<-- [end:setup]


def ready_of(status: MemcachedStatus | msgspec.UnsetType) -> str:
    """The status of the Ready condition ("True", "False"), "" without one."""
    if not isinstance(status, MemcachedStatus) or not isinstance(
        status.conditions, tuple
    ):
        return ""
    return next(
        (str(c.status) for c in status.conditions if c.type == CONDITION_READY), ""
    )


def available_of(status: MemcachedStatus) -> int:
    """``status.availableReplicas``, 0 when unset."""
    return (
        status.available_replicas if isinstance(status.available_replicas, int) else 0
    )


def setup(mgr: Manager, args: argparse.Namespace) -> None:
    """Add the Memcached controller to ``mgr`` (``args.workers`` reconciles at once)."""
    MemcachedReconciler(
        mgr.get_client(), mgr.get_event_recorder_for(NAME)
    ).setup_with_manager(mgr, args.workers)
