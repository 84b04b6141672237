"""Go's controller_test.go on the generated fake clientset, plus the port's improvements.

As in Go: objects are put straight into the informers' indexers (no informer is started), the
caches count as synced, ``sync_handler`` runs once for one key, and the exact list of actions
(list/watch by informers filtered out) is compared with the expected one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest

from generated.apis.samplecontroller.v1alpha1 import Foo, FooSpec, FooStatus
from generated.clientset.fake import Clientset as FakeClientset
from generated.informers import SharedInformerFactory
from samplecontroller.apimachinery import objects
from samplecontroller.cache import Indexer
from samplecontroller.client.types import MERGE_PATCH
from samplecontroller.controller import Controller, ObjectName, ResourceNotOwnedError
from samplecontroller.foo import NotOwnedBackoff, new_deployment
from samplecontroller.kubernetes.apis.apps.v1 import Deployment, DeploymentStatus
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.kubernetes.clientset.fake import Clientset as FakeKubeClientset
from samplecontroller.kubernetes.informers import SharedInformerFactory as KubeInformerFactory
from samplecontroller.record import FakeRecorder
from samplecontroller.testing import Action

FOO_UID = "6b7a6bde-6f5b-4a3a-9d4b-1f0c2d3e4f50"


def new_foo(name: str, replicas: int | None, *, status: int | None = None, deployment_name: str | None = None) -> Foo:
    return Foo(
        metadata=ObjectMeta(name=name, namespace="default", uid=FOO_UID, generation=1, resource_version="1"),
        spec=FooSpec(
            deployment_name=f"{name}-deployment" if deployment_name is None else deployment_name,
            replicas=msgspec.UNSET if replicas is None else replicas,
        ),
        status=msgspec.UNSET if status is None else FooStatus(available_replicas=status),
    )


def key_of(foo: Foo) -> ObjectName:
    assert isinstance(foo.metadata.namespace, str) and isinstance(foo.metadata.name, str)
    return ObjectName(foo.metadata.namespace, foo.metadata.name)


@dataclass
class Clients:
    """Go's fixture's two fake clientsets: ``kubeclient`` (Deployments) and ``client`` (Foos)."""

    kube: FakeKubeClientset
    sample: FakeClientset

    def actions(self) -> list[Action]:
        """The kube client's actions, then the sample client's (Go checks kubeactions and actions apart)."""
        return self.kube.actions() + self.sample.actions()


@dataclass
class Fixture:
    """Go's fixture: objects for the clientsets and the listers, expected actions."""

    foos: list[Foo] = field(default_factory=list)
    deployments: list[Deployment] = field(default_factory=list)
    deployment_indexer: Indexer[Deployment] | None = None

    def new_controller(self) -> tuple[Controller, Clients, FakeRecorder]:
        clients = Clients(FakeKubeClientset(*self.deployments), FakeClientset(*self.foos))
        kube_factory = KubeInformerFactory(clients.kube, 0)
        factory = SharedInformerFactory(clients.sample, 0)
        recorder = FakeRecorder(100)
        foo_informer = factory.samplecontroller.v1alpha1.foos
        deployment_informer = kube_factory.apps.v1.deployments
        controller = Controller(clients.kube, clients.sample, deployment_informer, foo_informer, recorder)
        for foo in self.foos:
            foo_informer.informer().get_indexer().add(foo)
        self.deployment_indexer = deployment_informer.informer().get_indexer()
        for d in self.deployments:
            self.deployment_indexer.add(d)
        return controller, clients, recorder


def filter_informer_actions(actions: list[Any]) -> list[Any]:
    """Drop the informers' list and watch calls, as Go's filterInformerActions does."""
    return [a for a in actions if a.verb not in ("list", "watch")]


def describe(action: Any) -> tuple[str, str, str]:
    return (action.verb, action.resource.resource, action.subresource or "")


def status_patch_of(action: Action) -> Any:
    """The body of a status write: a JSON merge patch (no resourceVersion, so it cannot conflict)."""
    assert (action.verb, action.subresource, action.patch_type) == ("patch", "status", MERGE_PATCH)
    return json.loads(action.patch)


def test_creates_deployment() -> None:
    foo = new_foo("test", 1)
    f = Fixture(foos=[foo])
    controller, client, recorder = f.new_controller()

    controller.sync_handler(key_of(foo))

    actions = filter_informer_actions(client.actions())
    assert [describe(a) for a in actions] == [("create", "deployments", ""), ("patch", "foos", "status")]
    created = actions[0].object
    assert objects.to_dict(created) == objects.to_dict(new_deployment(foo))
    assert status_patch_of(actions[1]) == {"status": {"availableReplicas": 0}}
    assert recorder.events.get_nowait() == "Normal Synced Foo synced successfully"


def test_do_nothing_writes_only_the_status_go_writes_every_time() -> None:
    """Go's TestDoNothing expects one status update; ours writes it only because it changed."""
    foo = new_foo("test", 1)
    d = new_deployment(foo)
    controller, client, _ = Fixture(foos=[foo], deployments=[d]).new_controller()

    controller.sync_handler(key_of(foo))

    assert [describe(a) for a in filter_informer_actions(client.actions())] == [("patch", "foos", "status")]


def test_do_nothing_when_status_is_already_in_sync() -> None:
    """Improvement 5: status unchanged -> no write at all (Go would still update it)."""
    foo = new_foo("test", 1, status=0)
    d = new_deployment(foo)
    controller, client, recorder = Fixture(foos=[foo], deployments=[d]).new_controller()

    controller.sync_handler(key_of(foo))

    assert filter_informer_actions(client.actions()) == []
    assert recorder.events.get_nowait() == "Normal Synced Foo synced successfully"


def test_updates_deployment_replicas_with_a_patch_of_replicas_only() -> None:
    """Go updates the whole Deployment; improvement 2 patches spec.replicas alone."""
    foo = new_foo("test", 1)
    d = new_deployment(foo)
    assert not isinstance(foo.spec, msgspec.UnsetType)
    foo = msgspec.structs.replace(foo, spec=msgspec.structs.replace(foo.spec, replicas=2))
    controller, client, _ = Fixture(foos=[foo], deployments=[d]).new_controller()

    controller.sync_handler(key_of(foo))

    actions = filter_informer_actions(client.actions())
    assert [describe(a) for a in actions] == [("patch", "deployments", ""), ("patch", "foos", "status")]
    patch = actions[0].patch
    assert json.loads(patch) == {"spec": {"replicas": 2}}
    assert actions[0].name == "test-deployment"


def test_not_controlled_by_us() -> None:
    foo = new_foo("test", 1)
    d = new_deployment(foo)
    d = msgspec.structs.replace(d, metadata=msgspec.structs.replace(d.metadata, owner_references=()))
    controller, client, recorder = Fixture(foos=[foo], deployments=[d]).new_controller()

    with pytest.raises(ResourceNotOwnedError):
        controller.sync_handler(key_of(foo))

    assert filter_informer_actions(client.actions()) == []
    assert recorder.events.get_nowait() == (
        'Warning ErrResourceExists Resource "test-deployment" already exists and is not managed by Foo'
    )


def test_not_controlled_by_us_warns_once_and_backs_off() -> None:
    """Improvement 1: one Warning per situation; the retry delay grows to a cap."""
    foo = new_foo("test", 1)
    d = new_deployment(foo)
    d = msgspec.structs.replace(d, metadata=msgspec.structs.replace(d.metadata, owner_references=()))
    f = Fixture(foos=[foo], deployments=[d])
    controller, _, recorder = f.new_controller()
    controller._not_owned = NotOwnedBackoff(1.0, 8.0)

    delays = []
    for _ in range(6):
        with pytest.raises(ResourceNotOwnedError) as info:
            controller.sync_handler(key_of(foo))
        delays.append(info.value.retry_after)
    assert delays == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert recorder.events.qsize() == 1

    # A new resourceVersion of the Deployment is a new situation: warn again, backoff resets.
    d2 = msgspec.structs.replace(d, metadata=msgspec.structs.replace(d.metadata, resource_version="99"))
    assert f.deployment_indexer is not None
    f.deployment_indexer.update(d2)
    with pytest.raises(ResourceNotOwnedError) as info:
        controller.sync_handler(key_of(foo))
    assert info.value.retry_after == 1.0
    assert recorder.events.qsize() == 2


def test_owner_of_another_group_is_not_ours() -> None:
    """Improvement 4: a controller ref with kind Foo in another API group does not match."""
    foo = new_foo("test", 1)
    d = new_deployment(foo)
    assert not isinstance(d.metadata.owner_references, msgspec.UnsetType)
    ref = msgspec.structs.replace(d.metadata.owner_references[0], api_version="other.example.com/v1")
    d = msgspec.structs.replace(d, metadata=msgspec.structs.replace(d.metadata, owner_references=(ref,)))
    controller, _, _ = Fixture(foos=[foo], deployments=[d]).new_controller()
    with pytest.raises(ResourceNotOwnedError):
        controller.sync_handler(key_of(foo))


def test_unset_replicas_never_crash() -> None:
    """Improvement 3: unset replicas on the Foo leave the Deployment alone; on the Deployment count as 1."""
    foo = new_foo("test", None)
    d = new_deployment(foo)
    assert d.spec is not msgspec.UNSET and d.spec.replicas is msgspec.UNSET
    controller, client, _ = Fixture(foos=[foo], deployments=[d]).new_controller()
    controller.sync_handler(key_of(foo))
    assert [describe(a) for a in filter_informer_actions(client.actions())] == [("patch", "foos", "status")]

    foo2 = new_foo("test", 1)
    controller, client, _ = Fixture(foos=[foo2], deployments=[d]).new_controller()
    controller.sync_handler(key_of(foo2))
    assert [describe(a) for a in filter_informer_actions(client.actions())] == [("patch", "foos", "status")]


def test_missing_deployment_name_is_a_warning_event_and_no_retry() -> None:
    foo = new_foo("test", 1, deployment_name="")
    controller, client, recorder = Fixture(foos=[foo]).new_controller()
    controller.sync_handler(key_of(foo))  # returns: retrying cannot help
    assert filter_informer_actions(client.actions()) == []
    assert recorder.events.get_nowait() == "Warning InvalidSpec spec.deploymentName must be specified"


def test_status_copies_available_replicas() -> None:
    foo = new_foo("test", 3, status=1)
    d = new_deployment(foo)
    d = msgspec.structs.replace(d, status=DeploymentStatus(available_replicas=3))
    controller, client, _ = Fixture(foos=[foo], deployments=[d]).new_controller()
    controller.sync_handler(key_of(foo))
    actions = filter_informer_actions(client.actions())
    assert [describe(a) for a in actions] == [("patch", "foos", "status")]
    assert status_patch_of(actions[0]) == {"status": {"availableReplicas": 3}}


def test_foo_gone_is_dropped() -> None:
    controller, client, _ = Fixture().new_controller()
    controller.sync_handler(ObjectName("default", "nope"))
    assert filter_informer_actions(client.actions()) == []


def test_a_foo_deleted_before_its_status_write_is_done() -> None:
    """The cache still has the Foo, the server no longer does: the status patch's 404 ends the sync."""
    foo = new_foo("test", 3, status=1)
    d = msgspec.structs.replace(new_deployment(foo), status=DeploymentStatus(available_replicas=3))
    controller, client, _ = Fixture(foos=[foo], deployments=[d]).new_controller()
    client.sample.samplecontroller_v1alpha1().foos("default").delete("test")
    client.sample.clear_actions()
    controller.sync_handler(key_of(foo))  # does not raise: nothing to retry
    assert [describe(a) for a in filter_informer_actions(client.actions())] == [("patch", "foos", "status")]
