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


def test_request_labels_are_kept_per_collection_request_shape_only() -> None:
    """``labels_of`` keeps the labels of collection requests (``_COLLECTION_LABELS``): requests on
    the same path that differ in what the labels are made of (watch, dryRun, an apply patch's
    Content-Type) get their own labels; requests naming an object are not kept."""
    from samplecontroller.apiserver import metrics

    metrics._COLLECTION_LABELS.clear()
    path = "/api/v1/namespaces/ns/configmaps"
    assert metrics.labels_of(make_request("GET", path)).verb == "LIST"
    assert metrics.labels_of(make_request("GET", path + "?watch=true")).verb == "WATCH"
    assert metrics.labels_of(make_request("GET", path)).verb == "LIST"
    assert metrics.labels_of(make_request("POST", path + "?dryRun=All")).dry_run == "All"
    assert metrics.labels_of(make_request("POST", path)).dry_run == ""
    apply = {"Content-Type": "application/apply-patch+yaml"}
    assert metrics.labels_of(make_request("PATCH", path + "/cm", apply)).verb == "APPLY"
    assert metrics.labels_of(make_request("PATCH", path + "/cm")).verb == "PATCH"
    assert all(labels.scope in ("namespace", "cluster") for labels in metrics._COLLECTION_LABELS.values())
    assert len(metrics._COLLECTION_LABELS) == 4


def test_the_collection_labels_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from samplecontroller.apiserver import metrics

    monkeypatch.setattr(metrics, "_COLLECTION_LABELS_LIMIT", 3)
    metrics._COLLECTION_LABELS.clear()
    for i in range(10):
        assert metrics.labels_of(make_request("POST", f"/api/v1/namespaces/ns-{i}/configmaps")).resource == "configmaps"
    assert 0 < len(metrics._COLLECTION_LABELS) <= 3
