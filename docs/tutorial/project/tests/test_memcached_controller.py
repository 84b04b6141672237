"""Unit tests of the Memcached reconciler on the fake client
(``runtime.client.fake.ClientBuilder``: an in-memory tracker with the server's status
subresource and resourceVersion semantics; no server)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from samplecontroller.apimachinery import errors
from samplecontroller.apimachinery.ownerreferences import is_controlled_by
from samplecontroller.kubernetes.apis.apps.v1 import Deployment, DeploymentStatus
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.record import FakeRecorder
from samplecontroller.runtime.client import Client
from samplecontroller.runtime.client.fake import ClientBuilder
from samplecontroller.runtime.client.interceptor import Funcs
from samplecontroller.runtime.reconcile import Request, Result

from memcachedop.controllers.memcached import MemcachedReconciler, ready_of
from memcachedop.generated.apis.cache.v1alpha1 import (
    Memcached,
    MemcachedSpec,
    MemcachedStatus,
)
from memcachedop.scheme import SCHEME

NAMESPACE = "default"
REQUEST = Request(NAMESPACE, "cache")


# --8<-- [start:fixture]
def new_memcached(size: int = 3, generation: int = 1) -> Memcached:
    return Memcached(
        metadata=ObjectMeta(
            name="cache", namespace=NAMESPACE, uid="uid-1", generation=generation
        ),
        spec=MemcachedSpec(size=size),
    )


def reconciler_for(
    *objects: Memcached | Deployment,
) -> tuple[MemcachedReconciler, Client, FakeRecorder]:
    """The reconciler on a fake client holding ``objects``, and its recorder."""
    client = (
        ClientBuilder()
        .with_scheme(SCHEME)
        .with_objects(*objects)
        .with_status_subresource(Memcached, Deployment)
        .build()
    )
    recorder = FakeRecorder(10)
    return MemcachedReconciler(client, recorder), client, recorder


# --8<-- [end:fixture]


# --8<-- [start:creates]
def test_creates_a_deployment_of_size_replicas_controlled_by_the_memcached() -> None:
    memcached = new_memcached(size=3)
    reconciler, client, recorder = reconciler_for(memcached)
    assert reconciler.reconcile(REQUEST) == Result()

    deployment = client.get(Deployment, NAMESPACE, "cache")
    assert deployment.spec and deployment.spec.replicas == 3
    assert is_controlled_by(deployment, memcached)
    status = client.get(Memcached, NAMESPACE, "cache").status
    assert isinstance(status, MemcachedStatus)
    assert (
        status.available_replicas,
        status.observed_generation,
        ready_of(status),
    ) == (0, 1, "False")
    assert recorder.drain() == [
        "Normal Created Created Deployment cache",
        "Normal Reconciled Ready is False: 0/3 available",
    ]


# --8<-- [end:creates]


# --8<-- [start:ready]
def test_ready_once_every_pod_is_available() -> None:
    reconciler, client, recorder = reconciler_for(new_memcached(size=2))
    reconciler.reconcile(REQUEST)
    # what the Deployment controller would do (there is none here): report two available
    # Pods
    deployment = client.get(Deployment, NAMESPACE, "cache")
    client.status().update(
        msgspec.structs.replace(
            deployment, status=DeploymentStatus(available_replicas=2)
        )
    )
    recorder.drain()

    reconciler.reconcile(REQUEST)
    status = client.get(Memcached, NAMESPACE, "cache").status
    assert isinstance(status, MemcachedStatus) and (
        status.available_replicas,
        ready_of(status),
    ) == (2, "True")
    assert recorder.drain() == ["Normal Reconciled Ready is True: 2/2 available"]


# --8<-- [end:ready]


def test_a_new_size_is_patched_into_the_deployment() -> None:
    reconciler, client, _ = reconciler_for(new_memcached(size=1))
    reconciler.reconcile(REQUEST)
    client.update(
        msgspec.structs.replace(
            client.get(Memcached, NAMESPACE, "cache"),
            spec=MemcachedSpec(size=4, image="memcached:1.6.38"),
        )
    )
    reconciler.reconcile(REQUEST)
    deployment = client.get(Deployment, NAMESPACE, "cache")
    assert deployment.spec and deployment.spec.replicas == 4
    assert deployment.spec.template and deployment.spec.template.spec
    assert [c.image for c in deployment.spec.template.spec.containers or ()] == [
        "memcached:1.6.38"
    ]


def test_a_deployment_owned_by_someone_else_is_left_alone() -> None:
    theirs = Deployment(
        metadata=ObjectMeta(name="cache", namespace=NAMESPACE, labels={"team": "other"})
    )
    reconciler, client, recorder = reconciler_for(new_memcached(), theirs)
    reconciler.reconcile(REQUEST)
    assert client.get(Deployment, NAMESPACE, "cache").metadata.labels == {
        "team": "other"
    }
    assert ready_of(client.get(Memcached, NAMESPACE, "cache").status) == "False"
    assert recorder.drain()[0] == (
        "Warning DeploymentNotOwned Deployment cache exists and is not controlled "
        "by this Memcached"
    )


def test_a_deleted_memcached_is_done() -> None:
    reconciler, _, recorder = reconciler_for()
    assert reconciler.reconcile(REQUEST) == Result()
    assert recorder.drain() == []


# --8<-- [start:interceptor]
def test_a_conflict_on_the_status_write_is_raised_for_a_retry() -> None:
    def stale(
        client: Client, subresource: str, obj: Any, patch: Any, /, **options: Any
    ) -> Any:
        raise errors.new_conflict(
            "cache.example.com", "memcacheds", "cache", "the object has been modified"
        )

    client = (
        ClientBuilder()
        .with_scheme(SCHEME)
        .with_objects(new_memcached())
        .with_status_subresource(Memcached, Deployment)
        .with_interceptor_funcs(Funcs(sub_resource_patch=stale))
        .build()
    )
    reconciler = MemcachedReconciler(client, FakeRecorder(10))
    with pytest.raises(
        errors.ConflictError
    ):  # the controller requeues the request with backoff
        reconciler.reconcile(REQUEST)
    assert client.get(
        Deployment, NAMESPACE, "cache"
    )  # the Deployment was created before the status write


# --8<-- [end:interceptor]
