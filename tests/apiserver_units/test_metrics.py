"""The request counters' verb derivation (samplecontroller.apiserver.metrics)."""

from __future__ import annotations

import pytest

from samplecontroller.apiserver.metrics import verb_of


@pytest.mark.parametrize(("method", "path", "watch", "verb"), [
    ("GET", "/api/v1/namespaces/default/pods", "", "list"),
    ("GET", "/api/v1/namespaces/default/pods", "true", "watch"),
    ("GET", "/api/v1/namespaces/default/pods", "false", "list"),
    ("GET", "/api/v1/namespaces/default/pods/p", "", "get"),
    ("GET", "/api/v1/namespaces", "1", "watch"),
    ("GET", "/api/v1/namespaces/default", "", "get"),
    ("PUT", "/api/v1/namespaces/default/finalize", "", "update"),
    ("GET", "/apis/apps/v1/deployments", "", "list"),
    ("POST", "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/ns/foos", "", "create"),
    ("PUT", "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/ns/foos/a/status", "", "update"),
    ("PATCH", "/apis/apps/v1/namespaces/ns/deployments/d", "", "patch"),
    ("DELETE", "/api/v1/namespaces/ns/events/e", "", "delete"),
    ("DELETE", "/api/v1/namespaces/ns/events", "", "deletecollection"),
    ("GET", "/apis/apps/v1", "", "get"),  # discovery: the HTTP method
    ("GET", "/version", "", "get"),
    ("HEAD", "/healthz", "", "head"),
])
def test_verb_of(method: str, path: str, watch: str, verb: str) -> None:
    assert verb_of(method, path, watch) == verb


def test_connections_are_counted_for_transports_that_cannot_be_weakly_referenced() -> None:
    # uvloop's transports refuse weak references: the counter made every request fail with a TypeError
    from aiohttp.test_utils import make_mocked_request

    from samplecontroller.apiserver.metrics import RequestCounter

    class Transport:
        __slots__ = ()  # no __weakref__, as uvloop's

        def get_extra_info(self, name: str, default: object = None) -> object:
            return default

    counter = RequestCounter()
    plain, other = Transport(), Transport()
    for transport in (plain, plain, other):
        counter.count(make_mocked_request("GET", "/api/v1/namespaces/default/pods", headers={"User-Agent": "t"},
                                          transport=transport))
    assert counter.connections == 2
    assert counter.snapshot() == {"t": {"list": 3}}
