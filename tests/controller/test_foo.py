"""samplecontroller.foo: the Foo domain both controllers share, on its own."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from generated.apis.samplecontroller.v1alpha1 import Foo, FooSpec
from samplecontroller.foo import (
    NotOwnedBackoff,
    deployment_names,
    is_controlled_by,
    new_deployment,
    rate_limiter,
    replicas_patch,
)
from samplecontroller.kubernetes.apis.apps.v1 import Deployment, DeploymentSpec
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.record import FakeRecorder
from samplecontroller.workqueue import MaxOfRateLimiter


def new_foo(replicas: int | None, deployment_name: Any = "d") -> Foo:
    return Foo(metadata=ObjectMeta(name="f", namespace="ns", uid="u1", generation=1),
               spec=FooSpec(deployment_name=deployment_name,
                            replicas=msgspec.UNSET if replicas is None else replicas))


def deployment(replicas: int | None, rv: str = "1") -> Deployment:
    return Deployment(metadata=ObjectMeta(name="d", namespace="ns", uid="u2", resource_version=rv),
                      spec=DeploymentSpec(replicas=msgspec.UNSET if replicas is None else replicas))


@pytest.mark.parametrize(("obj", "expected"), [
    (new_foo(1), ["d"]),
    (new_foo(1, msgspec.UNSET), []),
    (new_foo(1, ""), []),
    (Foo(metadata=ObjectMeta(name="f")), []),
    ({"spec": {"deploymentName": "d"}}, []),  # not a Foo struct: no name, no crash
    (None, []),
])
def test_deployment_names_never_raises(obj: Any, expected: list[str]) -> None:
    assert deployment_names(obj) == expected


@pytest.mark.parametrize(("foo_replicas", "dep_replicas", "patch"), [
    (3, 1, {"spec": {"replicas": 3}}),
    (1, None, None),  # unset Deployment replicas is the API default, 1
    (2, None, {"spec": {"replicas": 2}}),
    (None, 5, None),  # an unset Foo replicas leaves the Deployment alone
    (4, 4, None),
])
def test_replicas_patch(foo_replicas: int | None, dep_replicas: int | None, patch: Any) -> None:
    assert replicas_patch(new_foo(foo_replicas), deployment(dep_replicas)) == patch


def test_new_deployment_is_controlled_by_its_foo_only() -> None:
    foo = new_foo(2)
    dep = new_deployment(foo)
    assert is_controlled_by(dep, foo)
    other = msgspec.structs.replace(foo, metadata=msgspec.structs.replace(foo.metadata, uid="u9"))
    assert not is_controlled_by(dep, other)
    assert not is_controlled_by(deployment(1), foo)


def test_not_owned_warns_once_per_situation_and_backs_off_to_the_cap() -> None:
    recorder = FakeRecorder(10)
    backoff = NotOwnedBackoff(1.0, 4.0)
    foo = new_foo(1)
    delays = [backoff.warn("k", foo, deployment(1), recorder) for _ in range(4)]
    assert delays == [1.0, 2.0, 4.0, 4.0]
    assert recorder.events.qsize() == 1
    assert backoff.warn("k", foo, deployment(1, rv="2"), recorder) == 1.0  # the Deployment changed
    assert recorder.events.qsize() == 2
    backoff.forget("k")
    assert backoff.warn("k", foo, deployment(1, rv="2"), recorder) == 1.0
    assert recorder.events.qsize() == 3


def test_rate_limiter_is_exponential_per_item() -> None:
    limiter: MaxOfRateLimiter[str] = rate_limiter()
    assert [limiter.when("a") for _ in range(3)] == [0.005, 0.01, 0.02]
    limiter.forget("a")
    assert limiter.when("a") == 0.005

