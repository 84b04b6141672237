"""The generated fake clientsets track field ownership as the API server does (client-go's
``fake.NewClientset`` over ``testing.NewFieldManagedObjectTracker``): ``new_clientset`` records
managedFields, ``apply``/``apply_status`` answer a field another manager owns with a 409 Conflict
naming fields and managers, ``force`` takes them over, fields a manager stops applying go. Each
sequence runs against the fake and against the embedded API server over HTTP and must give the
same objects, managedFields and messages. ``new_simple_clientset`` (deprecated, as
``NewSimpleClientset``) and ``Clientset(*objects)`` keep the old apply: a merge patch, no owners."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from generated.apis.samplecontroller.v1alpha1 import Foo, FooSpec
from generated.applyconfigurations.samplecontroller.v1alpha1 import Foo as FooApply
from generated.applyconfigurations.samplecontroller.v1alpha1 import FooSpec as FooSpecApply
from generated.applyconfigurations.samplecontroller.v1alpha1 import FooStatus as FooStatusApply
from generated.clientset import Clientset
from generated.clientset.fake import Clientset as FakeClientset
from generated.clientset.fake import new_clientset, new_simple_clientset
from samplecontroller.apimachinery import errors, fieldmanager, objects
from samplecontroller.apimachinery.managedfields import managed_fieldset
from samplecontroller.apiserver.testing import install_crds
from samplecontroller.client.types import APPLY_PATCH
from samplecontroller.kubernetes.apis.apps.v1 import Deployment, DeploymentSpec
from samplecontroller.kubernetes.apis.core.v1 import Container, PodSpec, PodTemplateSpec
from samplecontroller.kubernetes.apis.meta.v1 import LabelSelector, ObjectMeta
from samplecontroller.kubernetes.clientset import Clientset as KubeClientset
from samplecontroller.kubernetes.clientset import fake as kube_fake
from samplecontroller.testing import (
    FakeClientsetBase,
    FakeResourceClient,
    FieldManagedObjectTracker,
    GroupVersionResource,
)
from tests.listmaps import CRDS, check_server_result, generate_package, normalized, run_steps
from tests.live import ns, rest

__all__ = ["ns", "rest"]


def foo_scenario(cs: Any, ns: str) -> tuple[dict[str, Any], str, list[dict[str, str]]]:
    """Create as one manager, apply part of it as another (shared, then a conflict, then force),
    apply status, update without a field manager, stop applying a field; returns (the normalized
    Foo, the conflict message, its details.causes)."""
    foos = cs.samplecontroller_v1alpha1().foos(ns)
    key = ObjectMeta(name="foo", namespace=ns)
    foos.create(Foo(metadata=key, spec=FooSpec(deployment_name="web", replicas=1)), field_manager="creator")
    foos.apply(FooApply(metadata=key, spec=FooSpecApply(replicas=1)), field_manager="scaler")  # the same value: shared
    with pytest.raises(errors.ConflictError) as conflict:
        foos.apply(FooApply(metadata=key, spec=FooSpecApply(replicas=3)), field_manager="scaler")
    assert conflict.value.code == 409 and conflict.value.reason == "Conflict"
    foos.apply(FooApply(metadata=key, spec=FooSpecApply(replicas=3)), field_manager="scaler", force=True)
    foos.apply_status(FooApply(metadata=key, status=FooStatusApply(available_replicas=3)), field_manager="status")
    got = foos.get("foo")  # an update without a field manager: the User-Agent's first word owns what it adds
    foos.update(msgspec.structs.replace(got, metadata=msgspec.structs.replace(got.metadata, labels={"tier": "web"})))
    # scaler stops applying replicas, which it alone owns since the force: removed
    foos.apply(FooApply(metadata=key, spec=FooSpecApply(deployment_name="web")), field_manager="scaler")
    return normalized(foos.get("foo")), str(conflict.value), conflict.value.details.get("causes") or []


def test_new_clientset_applies_as_the_server_does(rest: Any, ns: str) -> None:
    server = foo_scenario(Clientset(rest), ns)
    fake = foo_scenario(new_clientset(), ns)
    assert fake == server
    result, message, causes = server
    assert message == ('Apply failed with 1 conflict: conflict with "creator" using samplecontroller.k8s.io/v1alpha1: '
                       ".spec.replicas")
    assert causes == [{"reason": "FieldManagerConflict", "message": 'conflict with "creator" using '
                       "samplecontroller.k8s.io/v1alpha1", "field": ".spec.replicas"}]
    assert result["spec"] == {"deploymentName": "web"} and result["status"] == {"availableReplicas": 3}
    managers = [(e["manager"], e["operation"], e.get("subresource", "")) for e in result["managedFields"]]
    assert managers == [("creator", "Update", ""), ("scaler", "Apply", ""), ("status", "Apply", "status"),
                        ("samplecontroller", "Update", "")]


@pytest.fixture(scope="module")
def listmaps(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with generate_package(tmp_path_factory.mktemp("listmaps")) as package:
        yield package


def routes_scenario(cs: Any, ns: str) -> tuple[dict[str, Any], list[str]]:
    routes = cs.net_v1().routes(ns)

    def apply(body: dict[str, Any], manager: str, force: bool, status: bool) -> Any:
        return (routes.apply_status if status else routes.apply)(body, field_manager=manager, force=force)

    conflicts = run_steps(apply, ns)
    return normalized(routes.get("r")), conflicts


def test_new_clientset_merges_crd_lists_as_the_server_does(listmaps: Any, apiserver: Any, rest: Any, ns: str) -> None:
    install_crds(apiserver, CRDS)
    server = routes_scenario(importlib.import_module(f"{listmaps.__name__}.clientset").Clientset(rest), ns)
    fake = routes_scenario(importlib.import_module(f"{listmaps.__name__}.clientset.fake").new_clientset(), ns)
    assert fake == server
    check_server_result(*server)


def _deployment(ns: str, *containers: tuple[str, str], replicas: int | None = None) -> Deployment:
    spec = DeploymentSpec(selector=LabelSelector(match_labels={"app": "web"}), template=PodTemplateSpec(
        metadata=ObjectMeta(labels={"app": "web"}),
        spec=PodSpec(containers=tuple(Container(name=n, image=i) for n, i in containers))))
    if replicas is not None:
        spec = msgspec.structs.replace(spec, replicas=replicas)
    return Deployment(metadata=ObjectMeta(name="web", namespace=ns), spec=spec)


def deployment_scenario(cs: Any, ns: str) -> tuple[list[dict[str, Any]], list[str], str]:
    """Two managers apply containers of one Deployment (merged by name), a conflict on an image,
    force; returns (the Apply entries, the container names, the conflict message)."""
    deployments = cs.apps_v1().deployments(ns)
    deployments.apply(_deployment(ns, ("app", "app:1"), replicas=2), field_manager="ctrl")
    deployments.apply(_deployment(ns, ("sidecar", "proxy:1")), field_manager="injector")
    with pytest.raises(errors.ConflictError) as conflict:
        deployments.apply(_deployment(ns, ("sidecar", "proxy:1"), ("app", "app:2")), field_manager="injector")
    deployments.apply(_deployment(ns, ("sidecar", "proxy:1"), ("app", "app:2")), field_manager="injector", force=True)
    live = objects.to_dict(deployments.get("web"))
    entries = [{k: v for k, v in e.items() if k != "time"} for e in live["metadata"]["managedFields"]
               if e["operation"] == "Apply"]
    return entries, [c["name"] for c in live["spec"]["template"]["spec"]["containers"]], str(conflict.value)


def test_the_builtin_fake_clientset_applies_as_the_server_does(rest: Any, ns: str) -> None:
    server = deployment_scenario(KubeClientset(rest), ns)
    fake = deployment_scenario(kube_fake.new_clientset(), ns)
    assert fake == server
    assert server[1] == ["app", "sidecar"]
    assert server[2] == 'Apply failed with 1 conflict: conflict with "ctrl": .spec.template.spec.containers[name="app"].image'


def test_new_simple_clientset_is_deprecated_and_keeps_the_merge_patch_apply() -> None:
    with pytest.warns(DeprecationWarning, match="new_clientset tracks managed fields"):
        cs = new_simple_clientset()
    for simple in (cs, FakeClientset()):
        foos = simple.samplecontroller_v1alpha1().foos("default")
        foos.apply(FooApply(metadata=ObjectMeta(name="foo"), spec=FooSpecApply(replicas=1)), field_manager="a")
        live = foos.apply(FooApply(metadata=ObjectMeta(name="foo"), spec=FooSpecApply(replicas=2)), field_manager="b")
        assert objects.to_dict(live)["spec"] == {"replicas": 2}  # no conflict
        assert not live.metadata.managed_fields  # and no owners


def test_reactors_see_apply_and_seeded_objects_have_no_owners() -> None:
    seeded = Foo(metadata=ObjectMeta(name="seeded", namespace="default"), spec=FooSpec(deployment_name="x", replicas=1))
    cs = new_clientset(seeded)
    foos = cs.samplecontroller_v1alpha1().foos("default")
    # a seeded object is stored as given: nobody owns its fields, any manager may apply them
    foos.apply(FooApply(metadata=ObjectMeta(name="seeded"), spec=FooSpecApply(replicas=5)), field_manager="m")
    assert managed_fieldset(foos.get("seeded"), "m") == {"f:spec": {"f:replicas": {}}}
    refused = errors.from_status(errors.new_status(403, "Forbidden", "no"))
    cs.prepend_reactor("patch", "foos", lambda action: (action.patch_type == APPLY_PATCH, None, refused))
    with pytest.raises(errors.ForbiddenError):
        foos.apply(FooApply(metadata=ObjectMeta(name="x"), spec=FooSpecApply(replicas=1)), field_manager="m")
    assert [(a.verb, a.patch_type) for a in cs.actions()][-1] == ("patch", APPLY_PATCH)


def test_apply_errors_of_the_field_managed_tracker() -> None:
    cs = new_clientset()
    foos = cs.samplecontroller_v1alpha1().foos("default")
    with pytest.raises(errors.NotFoundError):  # /status never creates
        foos.apply_status(FooApply(metadata=ObjectMeta(name="none"), status=FooStatusApply(available_replicas=1)),
                          field_manager="m")
    with pytest.raises(errors.BadRequestError, match="must have a fieldManager"):
        foos.patch("x", {"spec": {}}, APPLY_PATCH)
    with pytest.raises(errors.BadRequestError, match="must be a JSON object"):
        foos.patch("x", [1], APPLY_PATCH, field_manager="m")
    # a kind the type converter does not know: refused by name, never merged blindly
    unknown = FakeClientsetBase(FieldManagedObjectTracker(fieldmanager.SchemaTypeConverter({})))
    client: FakeResourceClient[Any, Any] = FakeResourceClient(unknown, foos.info, "default")
    with pytest.raises(ValueError, match=r"no type converter knows samplecontroller\.k8s\.io/v1alpha1 Foo"):
        client.apply(FooApply(metadata=ObjectMeta(name="x")), field_manager="m")
    assert unknown.tracker.kinds[GroupVersionResource("samplecontroller.k8s.io", "v1alpha1", "foos")] == "Foo"
