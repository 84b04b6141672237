"""Unstructured objects (dicts by group/version/kind) in the Manager's cache and in for_/owns/watches,
against the embedded API server."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from samplecontroller.client.unstructured import Unstructured, guess_plural, unstructured
from samplecontroller.kubernetes.clientset import Clientset
from samplecontroller.kubernetes.scheme import SCHEME
from samplecontroller.rest import RESTClient
from samplecontroller.runtime.builder import Builder
from samplecontroller.runtime.handler import EnqueueRequestsFromMapFunc
from samplecontroller.runtime.manager import Manager, Options
from samplecontroller.runtime.reconcile import Request, Result
from tests.live import ns, rest, wait_for
from tests.runtime.test_integration import started

__all__ = ["ns", "rest", "started"]

CONFIGMAP = unstructured("v1", "ConfigMap")
SECRET = unstructured("v1", "Secret")


class Recorder:
    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.lock = threading.Lock()

    def reconcile(self, request: Request) -> Result:
        with self.lock:
            self.requests.append(request)
        return Result()


def test_cache_and_client_read_dicts(rest: RESTClient, ns: str, started: Callable[[Manager], Any]) -> None:
    core = Clientset(rest).core_v1()
    core.configmaps(ns).create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}})
    mgr = Manager(rest, scheme=SCHEME, options=Options(namespaces=(ns,)))
    informer = mgr.get_cache().get_informer(CONFIGMAP)
    started(mgr)
    got = mgr.get_client().get(CONFIGMAP, ns, "a")
    assert isinstance(got, dict) and got["data"] == {"k": "v"} and got["kind"] == "ConfigMap"
    assert "a" in [o["metadata"]["name"] for o in mgr.get_client().list(CONFIGMAP, namespace=ns)]
    assert informer is mgr.get_cache().get_informer(unstructured("v1", "ConfigMap"))


def test_for_owns_and_watches_unstructured(rest: RESTClient, ns: str, started: Callable[[Manager], Any]) -> None:
    core = Clientset(rest).core_v1()
    mgr = Manager(rest, scheme=SCHEME, options=Options(namespaces=(ns,)))
    recorder = Recorder()
    mapped = EnqueueRequestsFromMapFunc(lambda obj: [Request(ns, "from-secret")])
    (Builder(mgr).for_(CONFIGMAP).owns(SECRET).watches(unstructured("v1", "ServiceAccount"), mapped)
     .named(f"unstructured-{ns}").complete(recorder))
    started(mgr)
    owner = core.configmaps(ns).create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner"}})
    core.secrets(ns).create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "owned", "ownerReferences": [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid, "controller": True}]}})
    core.serviceaccounts(ns).create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}})

    def seen() -> set[str]:
        with recorder.lock:
            return {r.name for r in recorder.requests}

    wait_for(lambda: {"owner", "from-secret"} <= seen(), what="requests from for_, owns and watches")

    def owner_count() -> int:
        with recorder.lock:
            return recorder.requests.count(Request(ns, "owner"))

    before = owner_count()
    core.secrets(ns).patch("owned", {"metadata": {"labels": {"changed": "yes"}}})  # an owned object changes
    wait_for(lambda: owner_count() > before, what="the owner reconciled for its owned Secret")


def test_unstructured_keys() -> None:
    assert Unstructured("batch/v1", "Job").info.path("x", "j") == "/apis/batch/v1/namespaces/x/jobs/j"
    assert guess_plural("Ingress") == "ingresses" and guess_plural("NetworkPolicy") == "networkpolicies"
    assert Unstructured("example.com/v1", "Widget", "widgetz").resource == "widgetz"
    with pytest.raises(ValueError, match="apiVersion and a kind"):
        Unstructured("", "Job")
