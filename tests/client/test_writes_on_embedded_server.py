"""Typed writes and the connection pool, observed by the embedded API server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from generated.apis.samplecontroller.v1alpha1 import Foo, FooSpec, FooStatus
from generated.clientset import Clientset
from samplecontroller.apimachinery import errors
from samplecontroller.apiserver.server import LocalAPIServer
from samplecontroller.apiserver.testing import install_crds
from samplecontroller.rest import RESTClient

UA = "writes-test"
FOOS = "samplecontroller.k8s.io/foos"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LocalAPIServer]:
    with LocalAPIServer(kubeconfig_path=tmp_path / "kubeconfig", record_requests=10_000) as s:
        install_crds(s, Path(__file__).resolve().parents[2] / "crds")
        yield s


def clientset(server: LocalAPIServer) -> Clientset:
    return Clientset(RESTClient.from_kubeconfig(server.kubeconfig_path, user_agent=UA))


def sent(server: LocalAPIServer) -> list[tuple[str, str]]:
    return [(r.verb, r.resource) for r in server.requests if r.user_agent == UA]


def new_foo(name: str) -> Foo:
    return Foo(metadata={"name": name}, spec=FooSpec(deployment_name=name, replicas=1))  # type: ignore[arg-type]


def test_update_status_is_one_put_with_the_cached_resource_version(server: LocalAPIServer) -> None:
    foos = clientset(server).samplecontroller_v1alpha1().foos("default")
    cached = foos.create(new_foo("a"))
    updated = foos.update_status(msgspec.structs.replace(cached, status=FooStatus(available_replicas=1)))
    assert updated.status == FooStatus(available_replicas=1)
    assert sent(server) == [("create", FOOS), ("update", FOOS + "/status")]
    assert server.app is not None and server.app.counter.snapshot()[UA] == {"create": 1, "update": 1}

    # a write from a stale cache is a 409 Conflict (the caller requeues), still without a read
    with pytest.raises(errors.ConflictError):
        foos.update_status(msgspec.structs.replace(cached, status=FooStatus(available_replicas=2)))
    assert sent(server)[2:] == [("update", FOOS + "/status")]
    assert foos.get("a").status == FooStatus(available_replicas=1)


def test_update_is_one_put(server: LocalAPIServer) -> None:
    foos = clientset(server).samplecontroller_v1alpha1().foos("default")
    cached = foos.create(new_foo("b"))
    assert cached.spec is not msgspec.UNSET
    foos.update(msgspec.structs.replace(cached, spec=msgspec.structs.replace(cached.spec, replicas=3)))
    assert sent(server) == [("create", FOOS), ("update", FOOS)]


def test_the_read_modify_overlay_is_opt_in(server: LocalAPIServer) -> None:
    foos = clientset(server).samplecontroller_v1alpha1().foos("default")
    cached = foos.create(new_foo("c"))
    foos.update_status(msgspec.structs.replace(cached, status=FooStatus(available_replicas=1)),
                       preserve_unknown_fields=True)
    assert sent(server) == [("create", FOOS), ("get", FOOS + "/status"), ("update", FOOS + "/status")]
