"""Small object builders shared by the runtime tests."""

from __future__ import annotations

from typing import Any

from generated.apis.samplecontroller.v1alpha1 import Foo, FooSpec
from samplecontroller.kubernetes.apis.apps.v1 import Deployment, DeploymentSpec
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta, OwnerReference


def foo(name: str = "f", ns: str = "ns", *, uid: str = "uid-f", rv: str = "1", generation: int = 1,
        labels: dict[str, str] | None = None, deployment_name: str = "d", replicas: int | None = 1,
        annotations: dict[str, str] | None = None) -> Foo:
    md: dict[str, Any] = {"name": name, "namespace": ns, "uid": uid, "resource_version": rv, "generation": generation}
    if labels is not None:
        md["labels"] = labels
    if annotations is not None:
        md["annotations"] = annotations
    spec = FooSpec(deployment_name=deployment_name) if replicas is None else FooSpec(deployment_name=deployment_name,
                                                                                      replicas=replicas)
    return Foo(metadata=ObjectMeta(**md), spec=spec)


def deployment(name: str = "d", ns: str = "ns", *, owner: Foo | None = None, controller: bool = True,
               owner_kind: str = "Foo", owner_api_version: str = "samplecontroller.k8s.io/v1alpha1") -> Deployment:
    refs: tuple[OwnerReference, ...] = ()
    if owner is not None:
        refs = (OwnerReference(api_version=owner_api_version, kind=owner_kind, name=owner.metadata.name or "",
                               uid=owner.metadata.uid or "", controller=controller),)
    md = ObjectMeta(name=name, namespace=ns, owner_references=refs) if refs else ObjectMeta(name=name, namespace=ns)
    return Deployment(metadata=md, spec=DeploymentSpec(replicas=1))
