"""A Foo is not synced again for the watch events of the controller's own writes (issue 27).

Go's sample-controller syncs a Foo once more for the event of its own status write and for the
add of the Deployment it created; those syncs change nothing and only record another ``Synced``
event. Both controllers here filter exactly those events (``foo.OwnWrites``) and still sync on
every other change: a new spec, a status someone else wrote, a changed or deleted Deployment,
a resync.
"""

from __future__ import annotations

from typing import Any

import msgspec

from generated.apis.samplecontroller.v1alpha1 import Foo, FooSpec, FooStatus
from samplecontroller.cache import DeletedFinalStateUnknown
from samplecontroller.controller import Controller
from samplecontroller.foo import OwnWrites, new_deployment
from samplecontroller.foo_reconciler import own_write_predicates
from samplecontroller.kubernetes.apis.apps.v1 import Deployment, DeploymentStatus
from samplecontroller.runtime.event import CreateEvent, DeleteEvent, UpdateEvent
from samplecontroller.testing import Action
from tests.controller.test_controller import Fixture, key_of, new_foo


def with_status(foo: Foo, available: int | None, rv: str) -> Foo:
    status = msgspec.UNSET if available is None else FooStatus(available_replicas=available)
    return msgspec.structs.replace(foo, status=status,
                                   metadata=msgspec.structs.replace(foo.metadata, resource_version=rv))


def with_rv(obj: Deployment, rv: str, available: int | None = None) -> Deployment:
    out = msgspec.structs.replace(obj, metadata=msgspec.structs.replace(obj.metadata, resource_version=rv))
    if available is not None:
        out = msgspec.structs.replace(out, status=DeploymentStatus(available_replicas=available))
    return out


def with_replicas(foo: Foo, replicas: int) -> FooSpec:
    assert isinstance(foo.spec, FooSpec)
    return msgspec.structs.replace(foo.spec, replicas=replicas)


def drain(controller: Controller) -> int:
    """Take every queued key off the work queue; how many there were."""
    n = controller.workqueue.len()
    for _ in range(n):
        got = controller.workqueue.get()
        assert not got[1]
        controller.workqueue.done(got[0])
    return n


def synced_foo(replicas: int = 1) -> tuple[Controller, Foo, Deployment, Foo]:
    """A controller that has synced a new Foo once: (controller, the Foo as it was, the Deployment
    it created, the Foo after its status write)."""
    foo = new_foo("test", replicas)
    controller, clients, recorder = Fixture(foos=[foo]).new_controller()
    controller.sync_handler(key_of(foo))
    assert recorder.drain() == ["Normal Synced Foo synced successfully"]
    created = clients.kube.apps_v1().deployments("default").get("test-deployment")
    return controller, foo, created, with_status(foo, 0, "2")


def test_events_of_its_own_create_and_status_write_sync_nothing() -> None:
    controller, foo, created, written = synced_foo()
    controller._on_deployment_add(created, False)
    controller._on_foo_update(foo, written)
    assert drain(controller) == 0 and len(controller.own_writes) == 0


def test_every_other_change_still_syncs() -> None:
    controller, foo, created, written = synced_foo()
    controller._on_deployment_add(created, False)
    controller._on_foo_update(foo, written)
    spec_changed = msgspec.structs.replace(written, spec=with_replicas(written, 3),
                                           metadata=msgspec.structs.replace(written.metadata, resource_version="3"))
    controller._on_foo_update(written, spec_changed)
    assert drain(controller) == 1
    controller._on_foo_update(spec_changed, with_status(spec_changed, 7, "4"))  # another writer's status
    assert drain(controller) == 1
    controller._on_foo_update(written, written)  # a resync
    assert drain(controller) == 1
    controller._on_deployment_update(created, with_rv(created, "5", available=1))  # the Deployment changed
    assert drain(controller) == 1
    controller.handle_object(DeletedFinalStateUnknown("default/test-deployment", created))  # and went away
    assert drain(controller) == 1


def test_a_status_write_with_a_changed_spec_syncs() -> None:
    """The announced value arrives, but the spec changed in the same update (a re-list's diff)."""
    controller, foo, _, written = synced_foo()
    changed = msgspec.structs.replace(written, spec=with_replicas(written, 2))
    controller._on_foo_update(foo, changed)
    assert drain(controller) == 1


def test_a_deployment_not_in_the_state_created_syncs() -> None:
    """Listed after the simulator or someone else changed it: not what the creating sync saw."""
    controller, _, created, _ = synced_foo()
    controller._on_deployment_add(with_rv(created, "9", available=1), False)
    assert drain(controller) == 1
    controller._on_deployment_add(created, False)  # the expectation was consumed: a later add syncs
    assert drain(controller) == 1


def test_events_of_earlier_writes_overtaken_by_later_ones_sync_nothing() -> None:
    """The cache lags: the second status write was sent before the first one's event arrived."""
    own = OwnWrites()
    foo = new_foo("test", 1)
    own.expect_status(foo, 0)
    own.expect_status(foo, 1)
    zero = with_status(foo, 0, "2")
    assert own.is_own_status_write(foo, zero)
    assert own.is_own_status_write(zero, with_status(foo, 1, "3"))
    assert len(own) == 0


def test_a_later_write_event_consumes_the_missed_earlier_ones() -> None:
    own = OwnWrites()
    foo = new_foo("test", 1)
    own.expect_status(foo, 0)
    own.expect_status(foo, 1)
    assert own.is_own_status_write(foo, with_status(foo, 1, "3"))  # a re-list skipped the first event
    assert len(own) == 0


def test_a_label_change_keeps_the_expectation_and_syncs() -> None:
    own = OwnWrites()
    foo = with_status(new_foo("test", 1), 0, "2")
    own.expect_status(foo, 1)
    labelled = msgspec.structs.replace(foo, metadata=msgspec.structs.replace(foo.metadata, resource_version="3",
                                                                             labels={"a": "b"}))
    assert not own.is_own_status_write(foo, labelled)
    assert own.is_own_status_write(labelled, with_status(labelled, 1, "4"))


def test_failed_writes_and_deleted_foos_are_forgotten() -> None:
    own = OwnWrites()
    foo = new_foo("test", 1)
    deployment = new_deployment(foo)
    own.expect_status(foo, 0)
    own.expect_created(deployment)
    own.forget_status(foo)
    own.forget_created(deployment)
    assert len(own) == 0 and not own.is_own_status_write(foo, with_status(foo, 0, "2"))
    own.expect_status(foo, 0)
    own.forget("default", "test")
    assert len(own) == 0


def test_a_failed_status_write_is_forgotten_by_the_controller() -> None:
    foo = new_foo("test", 1)
    controller, clients, _ = Fixture(foos=[foo]).new_controller()

    def refuse(_: Action) -> tuple[bool, Any, BaseException | None]:
        return True, None, RuntimeError("the server went away")

    clients.sample.prepend_reactor("patch", "foos", refuse)
    try:
        controller.sync_handler(key_of(foo))
    except RuntimeError:
        pass
    assert len(controller.own_writes) == 1  # the Deployment create (its add event is still due)
    assert not controller.own_writes.is_own_status_write(foo, with_status(foo, 0, "2"))


def test_runtime_predicates_filter_the_same_events() -> None:
    own = OwnWrites()
    foo_preds, deployment_preds = own_write_predicates(own)
    (foo_pred,), (deployment_pred,) = foo_preds, deployment_preds
    foo = new_foo("test", 1)
    deployment = new_deployment(foo)
    own.expect_created(deployment)
    own.expect_status(foo, 0)
    assert not deployment_pred.create(CreateEvent(deployment))
    assert deployment_pred.create(CreateEvent(deployment))  # consumed
    assert not foo_pred.update(UpdateEvent(foo, with_status(foo, 0, "2")))
    assert foo_pred.update(UpdateEvent(foo, with_status(foo, 0, "2")))  # consumed
    own.expect_status(foo, 1)
    assert foo_pred.delete(DeleteEvent(foo)) and len(own) == 0
