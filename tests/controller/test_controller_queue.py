"""controller.py's event handlers and queue handling on the generated fake clientset.

``handle_object``: which Deployment events enqueue which Foo (owner resolution, tombstones),
called directly and through informers fed by the fake clientset. ``process_next_work_item``: a
failed sync is re-added rate-limited, a successful one forgets the key, a not-owned Deployment
is retried after its own backoff; the queue runs on a ``FakeClock`` so delays are logical time.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from prometheus_client import REGISTRY

from generated.apis.samplecontroller.v1alpha1 import Foo, FooSpec
from generated.clientset.fake import Clientset as FakeClientset
from generated.informers import SharedInformerFactory
from samplecontroller.apimachinery import errors
from samplecontroller.cache import DeletedFinalStateUnknown
from samplecontroller.controller import Controller, ObjectName, install_metrics
from samplecontroller.foo import new_deployment
from samplecontroller.kubernetes.apis.apps.v1 import Deployment
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta, OwnerReference
from samplecontroller.kubernetes.clientset.fake import Clientset as FakeKubeClientset
from samplecontroller.kubernetes.informers import SharedInformerFactory as KubeInformerFactory
from samplecontroller.record import FakeRecorder
from samplecontroller.testing import Action
from samplecontroller.wait import Context, FakeClock
from samplecontroller.workqueue import ItemExponentialFailureRateLimiter, RateLimitingQueue
from samplecontroller.workqueue.testing import get_item
from tests.live import wait_for

NS = "default"
FOO = ObjectName(NS, "foo")


def new_foo(name: str = "foo", uid: str = "uid-foo", deployment_name: str = "foo-deployment") -> Foo:
    return Foo(metadata=ObjectMeta(name=name, namespace=NS, uid=uid, generation=1, resource_version="1"),
               spec=FooSpec(deployment_name=deployment_name, replicas=1))


def with_owners(d: Deployment, *refs: OwnerReference) -> Deployment:
    return msgspec.structs.replace(d, metadata=msgspec.structs.replace(d.metadata, owner_references=refs))


def unowned(name: str) -> Deployment:
    return with_owners(new_deployment(new_foo(deployment_name=name)))


def drain(queue: RateLimitingQueue[ObjectName]) -> list[ObjectName]:
    """Every key now in the queue (marked done at once)."""
    keys = []
    while queue.len():
        key = get_item(queue)
        queue.done(key)
        keys.append(key)
    return keys


def controller_for(*objects: Foo | Deployment,
                   clock: FakeClock | None = None) -> tuple[Controller, FakeKubeClientset]:
    """A controller on fake clientsets seeded with ``objects`` (in its listers too); the kube fake."""
    kube = FakeKubeClientset(*(o for o in objects if isinstance(o, Deployment)))
    sample = FakeClientset(*(o for o in objects if isinstance(o, Foo)))
    foos = SharedInformerFactory(sample, 0).samplecontroller.v1alpha1.foos
    deployments = KubeInformerFactory(kube, 0).apps.v1.deployments
    controller = Controller(kube, sample, deployments, foos, FakeRecorder(100))
    if clock is not None:
        controller.workqueue = RateLimitingQueue(ItemExponentialFailureRateLimiter(0.005, 1000.0), clock=clock)
    for obj in objects:
        if isinstance(obj, Foo):
            foos.informer().get_indexer().add(obj)
        else:
            deployments.informer().get_indexer().add(obj)
    return controller, kube


# -- handle_object --------------------------------------------------------------------------


def test_a_deployment_controlled_by_a_foo_enqueues_that_foo() -> None:
    foo = new_foo()
    controller, _ = controller_for(foo)
    controller.handle_object(new_deployment(foo))
    assert drain(controller.workqueue) == [FOO]


def test_a_tombstone_of_a_controlled_deployment_enqueues_its_foo() -> None:
    foo = new_foo()
    controller, _ = controller_for(foo)
    controller.handle_object(DeletedFinalStateUnknown(f"{NS}/foo-deployment", new_deployment(foo)))
    assert drain(controller.workqueue) == [FOO]


def test_a_deployment_owned_by_something_else_is_ignored() -> None:
    foo = new_foo()
    controller, _ = controller_for(foo)
    replica_set = OwnerReference(api_version="apps/v1", kind="ReplicaSet", name="foo", uid="uid-rs", controller=True)
    other_group = msgspec.structs.replace(new_deployment(foo).metadata.owner_references[0],  # type: ignore[index]
                                          api_version="other.example.com/v1alpha1")
    for refs in [(replica_set,), (other_group,)]:  # the Foo naming the Deployment is not enqueued either
        controller.handle_object(with_owners(new_deployment(foo), *refs))
    assert drain(controller.workqueue) == []


def test_a_deployment_of_a_foo_that_is_gone_is_ignored() -> None:
    controller, _ = controller_for()
    controller.handle_object(new_deployment(new_foo()))
    assert drain(controller.workqueue) == []


def test_an_unowned_deployment_enqueues_only_the_foos_naming_it() -> None:
    foo, other = new_foo(), new_foo("other", "uid-other", "other-deployment")
    controller, _ = controller_for(foo, other)
    controller.handle_object(unowned("foo-deployment"))
    controller.handle_object(DeletedFinalStateUnknown(f"{NS}/foo-deployment", unowned("foo-deployment")))
    controller.handle_object(unowned("nobody-names-me"))
    assert drain(controller.workqueue) == [FOO]
    ref = new_deployment(foo).metadata.owner_references[0]  # type: ignore[index]
    controller.handle_object(with_owners(unowned("foo-deployment"), msgspec.structs.replace(ref, controller=False)))
    assert drain(controller.workqueue) == [FOO]  # an owner that is not the controller: unowned


@pytest.fixture
def running() -> Iterator[tuple[Controller, FakeKubeClientset]]:
    """A controller with both factories' informers started with one stop on the fake clientsets
    (seeded with one Foo), as Go's main.go starts them; the kube fake."""
    kube, sample = FakeKubeClientset(), FakeClientset(new_foo())
    kube_factory, factory = KubeInformerFactory(kube, 0), SharedInformerFactory(sample, 0)
    controller = Controller(kube, sample, kube_factory.apps.v1.deployments, factory.samplecontroller.v1alpha1.foos,
                            FakeRecorder(100))
    stop = Context()
    kube_factory.start(stop)
    factory.start(stop)
    try:
        assert all(kube_factory.wait_for_cache_sync(timeout=10).values())
        assert all(factory.wait_for_cache_sync(timeout=10).values())
        assert wait_for(lambda: drain(controller.workqueue) == [FOO], what="the initial add of the Foo")
        yield controller, kube
    finally:
        stop.cancel()
        kube_factory.shutdown()
        factory.shutdown()
        controller.workqueue.shut_down()


def test_informer_events_of_deployments_enqueue_their_foo(running: tuple[Controller, FakeKubeClientset]) -> None:
    controller, client = running
    deployments = client.apps_v1().deployments(NS)
    deployments.create(new_deployment(new_foo()))
    assert wait_for(lambda: drain(controller.workqueue) == [FOO], what="the add of the owned Deployment")
    deployments.create(unowned("stranger"))
    deployments.delete("foo-deployment")
    assert wait_for(lambda: drain(controller.workqueue) == [FOO], what="the delete of the owned Deployment")
    assert drain(controller.workqueue) == []  # the stranger enqueued nothing


# -- process_next_work_item: requeue and forget ------------------------------------------------


def fail_creates(client: FakeKubeClientset, failures: int) -> list[Action]:
    """Make the first ``failures`` Deployment creates fail with 500; returns the attempts seen."""
    attempts: list[Action] = []

    def react(action: Action) -> tuple[bool, Any, BaseException | None]:
        attempts.append(action)
        if len(attempts) <= failures:
            return True, None, errors.InternalError(errors.new_status(500, "InternalError", "boom"))
        return False, None, None

    client.prepend_reactor("create", "deployments", react)
    return attempts


def test_a_failed_sync_is_requeued_rate_limited_and_success_forgets_it() -> None:
    clock = FakeClock()
    controller, client = controller_for(new_foo(), clock=clock)
    queue = controller.workqueue
    attempts = fail_creates(client, 2)
    queue.add(FOO)

    assert controller.process_next_work_item()
    assert queue.num_requeues(FOO) == 1 and queue.len() == 0
    assert queue.next_ready_at() == pytest.approx(0.005)  # the limiter's first delay, in clock time

    clock.step(0.005)
    assert controller.process_next_work_item()  # blocks until the timer re-adds the key
    assert queue.num_requeues(FOO) == 2 and queue.next_ready_at() == pytest.approx(0.005 + 0.01)

    clock.step(0.01)
    assert controller.process_next_work_item()
    assert len(attempts) == 3
    assert queue.num_requeues(FOO) == 0 and queue.len() == 0 and queue.waiting_len() == 0
    assert [a.verb for a in client.actions() if a.resource.resource == "deployments"] == ["create"] * 3


@pytest.mark.parametrize("race", [
    errors.new_conflict("apps", "deployments", "foo-deployment",
                        "the object has been modified; please apply your changes to the latest version"),
    errors.new_already_exists("apps", "deployments", "foo-deployment"),
], ids=["conflict", "already-exists"])
def test_a_conflict_is_requeued_rate_limited_and_counted_without_an_error_log(
        caplog: pytest.LogCaptureFixture, race: errors.StatusError) -> None:
    """A 409 (Conflict: a write based on a stale cache; AlreadyExists: a create the cache did not
    know was done) is expected and retried: the key is re-added rate-limited, the conflict
    counted, and nothing is logged above debug (issue 18; AlreadyExists seen in test_e2e)."""
    clock = FakeClock()
    controller, client = controller_for(new_foo(), clock=clock)
    queue = controller.workqueue
    attempts: list[Action] = []

    def conflict_once(action: Action) -> tuple[bool, Any, BaseException | None]:
        attempts.append(action)
        if len(attempts) == 1:
            return True, None, race
        return False, None, None

    client.prepend_reactor("create", "deployments", conflict_once)
    before = conflicts_counted()
    queue.add(FOO)
    caplog.set_level(logging.DEBUG)
    assert controller.process_next_work_item()
    assert queue.num_requeues(FOO) == 1 and queue.next_ready_at() == pytest.approx(0.005)
    assert conflicts_counted() == before + 1
    assert [r.getMessage() for r in caplog.records if r.levelno > logging.DEBUG] == []
    clock.step(0.005)
    assert controller.process_next_work_item()
    assert len(attempts) == 2 and queue.num_requeues(FOO) == 0


def conflicts_counted() -> float:
    """The counter as /metrics shows it (``install_metrics`` is what app.py calls to serve it)."""
    install_metrics()
    return REGISTRY.get_sample_value("samplecontroller_sync_conflicts_total", {"controller": "foo"}) or 0.0


def test_a_deployment_not_owned_is_retried_after_its_own_backoff_not_the_limiter() -> None:
    clock = FakeClock()
    foo = new_foo()
    controller, _ = controller_for(foo, unowned("foo-deployment"), clock=clock)
    queue = controller.workqueue
    queue.add(FOO)

    assert controller.process_next_work_item()
    assert queue.num_requeues(FOO) == 0  # forgotten: the generic limiter is not consulted
    assert queue.next_ready_at() == pytest.approx(1.0)  # not_owned_backoff_base
    clock.step(1.0)
    assert controller.process_next_work_item()
    assert queue.next_ready_at() == pytest.approx(1.0 + 2.0)


def test_process_next_work_item_is_false_once_the_queue_shuts_down() -> None:
    controller, _ = controller_for()
    controller.workqueue.shut_down()
    assert controller.process_next_work_item() is False
