"""The Memcached controller against the embedded API server (the samplecontroller pytest
plugin's ``apiserver`` has config/crd/bases installed): a new Memcached gets its
Deployment, becomes Ready when the Deployment reports its Pods available, and a new size
reaches the Deployment."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import msgspec
import pytest
from samplecontroller.kubernetes.apis.apps.v1 import DeploymentStatus
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.kubernetes.clientset import Clientset as KubeClientset
from samplecontroller.rest import RESTClient

from memcachedop.controllers import memcached
from memcachedop.generated.apis.cache.v1alpha1 import Memcached, MemcachedSpec
from memcachedop.generated.clientset import Clientset

T = TypeVar("T")


def wait_for(what: str, probe: Callable[[], T | None], timeout: float = 30.0) -> T:
    """Poll ``probe`` until it returns something other than None (a deadline, not a
    timing assert)."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value is not None:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def ready(obj: Memcached) -> Memcached | None:
    """``obj`` when its status says Ready for its current generation."""
    return (
        obj
        if memcached.ready_of(obj.status) == "True"
        and obj.status
        and obj.status.observed_generation == obj.metadata.generation
        else None
    )


# --8<-- [start:test]
@pytest.mark.usefixtures("running")
def test_a_memcached_gets_its_deployment_and_becomes_ready(
    clientset: Clientset, rest_client: RESTClient, namespace: str
) -> None:
    memcacheds = clientset.cache_v1alpha1().memcacheds(namespace)
    deployments = KubeClientset(rest_client).apps_v1().deployments(namespace)
    memcacheds.create(
        Memcached(metadata=ObjectMeta(name="cache"), spec=MemcachedSpec(size=3))
    )

    deployment = wait_for(
        "the Deployment", lambda: next(iter(deployments.list().items), None)
    )
    assert deployment.spec and deployment.spec.replicas == 3
    # the server defaulted the spec (the CRD's `default`s), so the controller used the
    # image it names
    assert deployment.spec.template and deployment.spec.template.spec
    assert [c.image for c in deployment.spec.template.spec.containers or ()] == [
        "memcached:1.6-alpine"
    ]

    # No kube-controller-manager here (as with envtest): play the Deployment
    # controller's part.
    deployments.update_status(
        msgspec.structs.replace(
            deployment,
            status=DeploymentStatus(replicas=3, ready_replicas=3, available_replicas=3),
        )
    )
    done = wait_for(
        "the Memcached to become Ready", lambda: ready(memcacheds.get("cache"))
    )
    assert done.status and done.status.available_replicas == 3

    memcacheds.patch("cache", {"spec": {"size": 1}})
    wait_for(
        "the new size in the Deployment",
        lambda: (
            d if (d := deployments.get("cache")).spec and d.spec.replicas == 1 else None
        ),
    )


# --8<-- [end:test]
