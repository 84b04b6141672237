"""The request counters' verb derivation (samplecontroller.apiserver.metrics)."""

from __future__ import annotations

from typing import cast

import pytest
from multidict import CIMultiDict, CIMultiDictProxy

from samplecontroller.apiserver.httpmessages import BodyReader, Request, Writer
from samplecontroller.apiserver.metrics import RequestMetrics, verb_of


def make_request(method: str, target: str, headers: dict[str, str] | None = None, first: bool = True) -> Request:
    """A request as the server's connection makes it (no body)."""
    return Request(cast(Writer, object()), method, target, (1, 1), CIMultiDictProxy(CIMultiDict(headers or {})),
                   BodyReader("none", 0, False), scheme="https", remote="127.0.0.1", max_body=0, first=first)


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


def test_connections_are_counted_by_their_first_request() -> None:
    from samplecontroller.apiserver.metrics import RequestCounter

    counter = RequestCounter()
    for first in (True, False, True):
        counter.count(make_request("GET", "/api/v1/namespaces/default/pods", headers={"User-Agent": "t"},
                                   first=first))
    assert counter.connections == 2
    assert counter.snapshot() == {"t": {"list": 3}}


def test_request_metrics_count_in_flight_totals_and_duration_buckets_as_prometheus_exposes_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    metrics = RequestMetrics(lambda: {})
    clock = iter([0.0, 0.0, 0.025, 0.0, 60.0])  # begin, begin, finish (0.025 s), begin, finish (60 s)
    monkeypatch.setattr("samplecontroller.apiserver.metrics.time.monotonic", lambda: next(clock))
    path = "/api/v1/namespaces/ns/configmaps"
    first = metrics.begin(make_request("POST", path))
    second = metrics.begin(make_request("GET", path))
    text = metrics.render().decode()
    assert 'apiserver_current_inflight_requests{request_kind="mutating"} 1.0' in text
    assert 'apiserver_current_inflight_requests{request_kind="readOnly"} 1.0' in text
    metrics.finish(first, 201)
    metrics.finish(metrics.begin(make_request("POST", path)), 201)
    text = metrics.render().decode()
    labels = ('component="apiserver",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",'
              'verb="POST",version="v1"')
    assert f'apiserver_request_total{{code="201",{labels}}} 2.0' in text
    assert 'apiserver_current_inflight_requests{request_kind="mutating"} 0.0' in text
    assert 'apiserver_current_inflight_requests{request_kind="readOnly"} 1.0' in text  # second is not finished
    bucket = 'apiserver_request_duration_seconds_bucket{{component="apiserver",dry_run="",group="",le="{}",' \
             'resource="configmaps",scope="namespace",subresource="",verb="POST",version="v1"}} {}'
    assert bucket.format("0.005", "0.0") in text
    assert bucket.format("0.025", "1.0") in text  # a bound is inclusive (le)
    assert bucket.format("45.0", "1.0") in text
    assert bucket.format("60.0", "2.0") in text
    assert bucket.format("+Inf", "2.0") in text
    assert f"apiserver_request_duration_seconds_count{{{labels}}} 2.0" in text
    assert f"apiserver_request_duration_seconds_sum{{{labels}}} 60.025" in text
    del second
