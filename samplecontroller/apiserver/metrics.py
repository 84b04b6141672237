"""Request metrics of the embedded API server.

``RequestMetrics`` serves ``/metrics`` as kube-apiserver does (``apiserver_request_total``,
``apiserver_request_duration_seconds``, ``apiserver_current_inflight_requests``,
``apiserver_storage_objects``; Prometheus text format). ``RequestCounter`` is the cheap
always-on counter for benchmarks and connection-reuse tests:

``RequestCounter.count`` (called by ``RequestMetrics.begin`` in the filter chain) counts every request by (User-Agent, verb) and counts the
connections requests arrive on. The verb is derived from the method, the path shape and the
``watch`` query parameter alone (no registry lookup), so it is Kubernetes' verb for every
well-formed resource request (get, list, watch, create, update, patch, delete,
deletecollection) and the lower-case HTTP method for anything else (discovery, /version, ...).
Memory is bounded by the number of distinct (User-Agent, verb) pairs plus the open connections.
"""

from __future__ import annotations

import bisect
import time
from collections import Counter as Tally
from collections.abc import Callable, Iterator, Mapping
from typing import NamedTuple

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

from samplecontroller.apiserver.httpmessages import Request

__all__ = ["Observation", "RequestCounter", "RequestLabels", "RequestMetrics", "request_labels", "verb_of"]

_WATCH_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})


def verb_of(method: str, path: str, watch: str) -> str:
    """The Kubernetes verb of a request (see the module docstring), from ``request_labels``."""
    return _verb(request_labels(method, path, {"watch": watch}), method)


_VERBS = {"GET": "get", "LIST": "list", "WATCH": "watch", "POST": "create", "PUT": "update", "PATCH": "patch",
          "APPLY": "patch"}


def _verb(labels: RequestLabels, method: str) -> str:
    if not labels.resource:
        return method.lower()  # discovery and non-resource paths
    if labels.verb == "DELETE":
        return "delete" if labels.scope == "resource" else "deletecollection"
    return _VERBS.get(labels.verb, method.lower())


_LABELS_KEY = "request_labels"


_COLLECTION_LABELS: dict[tuple[str, str, str | None, str, str], RequestLabels] = {}
"""``request_labels`` of collection requests (creates, lists, watches) by what they are worked out
from: (method, path, ``dryRun``, ``watch``, the Content-Type of a PATCH); at most
``_COLLECTION_LABELS_LIMIT`` (then emptied). Requests naming an object are not kept (one key each)."""
_COLLECTION_LABELS_LIMIT = 4096


def labels_of(request: Request) -> RequestLabels:
    """``request_labels`` of ``request``, worked out once per request (both middlewares read it)
    and once per collection path (``_COLLECTION_LABELS``)."""
    labels = request.get(_LABELS_KEY)
    if isinstance(labels, RequestLabels):
        return labels
    method, query = request.method, request.query
    content_type = request.headers.get("Content-Type", "") if method == "PATCH" else ""
    key = (method, request.path, query.get("dryRun"), query.get("watch", ""), content_type)
    labels = _COLLECTION_LABELS.get(key)
    if labels is None:
        labels = request_labels(method, key[1], query, content_type)
        if labels.scope in ("namespace", "cluster"):
            if len(_COLLECTION_LABELS) >= _COLLECTION_LABELS_LIMIT:
                _COLLECTION_LABELS.clear()
            _COLLECTION_LABELS[key] = labels
    request[_LABELS_KEY] = labels
    return labels


class RequestCounter:
    """Counts of requests by (User-Agent, verb) and of the connections they came on."""

    def __init__(self) -> None:
        self.counts: Tally[tuple[str, str]] = Tally()
        self.connections = 0
        """Connections that carried at least one request since the server started."""

    def snapshot(self) -> dict[str, dict[str, int]]:
        """``{user_agent: {verb: count}}``, a copy."""
        out: dict[str, dict[str, int]] = {}
        for (ua, verb), n in list(self.counts.items()):
            out.setdefault(ua, {})[verb] = n
        return out

    def reset(self) -> None:
        self.counts.clear()
        self.connections = 0

    def count(self, request: Request) -> None:
        """Count ``request`` (and its connection, when it is the connection's first request)."""
        if request.first:
            self.connections += 1
        verb = _verb(labels_of(request), request.method)
        self.counts[(request.headers.get("User-Agent", ""), verb)] += 1



# ---------------------------------------------------------------------------- /metrics

_DURATION_BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0,
                     15.0, 20.0, 30.0, 45.0, 60.0)
_REQUEST_LABELS = ("verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component")
_READ_ONLY = frozenset({"GET", "LIST", "WATCH"})


class RequestLabels(NamedTuple):
    """The labels kube-apiserver's request metrics carry (endpoints/metrics.MonitorRequest)."""

    verb: str
    dry_run: str
    group: str
    version: str
    resource: str
    subresource: str
    scope: str
    component: str = "apiserver"


def request_labels(method: str, path: str, query: Mapping[str, str], content_type: str = "") -> RequestLabels:
    """The labels of a request from its method, path shape and query alone: the reported verb is
    upper case with GET split into GET/LIST/WATCH and apply patches as APPLY; scope is
    ``resource`` (a named object), ``namespace`` or ``cluster`` (collections); a non-resource
    request has its path as the subresource and no scope."""
    parts = [p for p in path.split("/") if p]
    dry_run = "All" if query.get("dryRun") == "All" else ""
    if len(parts) < 2 or parts[0] not in ("api", "apis") or (parts[0] == "apis" and len(parts) < 3):
        return RequestLabels(method.upper(), dry_run, "", "", "", path, "")
    group, version, rest = ("", parts[1], parts[2:]) if parts[0] == "api" else (parts[1], parts[2], parts[3:])
    if not rest:
        return RequestLabels(method.upper(), dry_run, group, version, "", "", "")
    namespaced = rest[0] == "namespaces" and len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES
    if namespaced:
        rest = rest[2:]
    resource, named, subresource = rest[0], len(rest) > 1, rest[2] if len(rest) > 2 else ""
    scope = "resource" if named else ("namespace" if namespaced else "cluster")
    verb = method.upper()
    if verb == "GET" and query.get("watch", "") in _WATCH_TRUE:
        verb = "WATCH"
    elif verb == "GET" and not named:
        verb = "LIST"
    elif verb == "PATCH" and content_type.split(";")[0].strip() == "application/apply-patch+yaml":
        verb = "APPLY"
    return RequestLabels(verb, dry_run, group, version, resource, subresource, scope)


class RequestMetrics:
    """kube-apiserver's request metrics in a registry of their own: ``apiserver_request_total``,
    ``apiserver_request_duration_seconds``, ``apiserver_current_inflight_requests`` and, read at
    scrape time from ``object_counts`` (``{"pods": n, "deployments.apps": m}``),
    ``apiserver_storage_objects``. ``render()`` is the Prometheus text exposition. ``counter``: a
    ``RequestCounter`` that ``middleware`` also counts every request in (one filter for both).

    A request costs a few integer additions: the counts, the histograms' buckets and sums and the
    requests in flight are plain numbers (the server runs on one event loop thread), turned into
    metric families only when ``/metrics`` is scraped (prometheus_client's own metrics take a lock
    and make several calls per update)."""

    def __init__(self, object_counts: Callable[[], Mapping[str, int]], counter: RequestCounter | None = None) -> None:
        self.counter = counter
        self.registry = CollectorRegistry(auto_describe=True)
        self._totals: dict[tuple[RequestLabels, int], int] = {}
        self._durations: dict[RequestLabels, _Histogram] = {}
        self._inflight = {"readOnly": 0, "mutating": 0}
        self.registry.register(_RequestFamilies(self))
        self.registry.register(_StorageObjects(object_counts))

    def render(self) -> bytes:
        """Every metric in the Prometheus text format (version 0.0.4)."""
        return generate_latest(self.registry)

    def begin(self, request: Request) -> Observation:
        """Count ``request`` (and in ``counter``) as in flight; hand the result to ``finish``."""
        if self.counter is not None:
            self.counter.count(request)
        labels = labels_of(request)
        kind = "readOnly" if labels.verb in _READ_ONLY else "mutating"
        self._inflight[kind] += 1
        return Observation(labels, kind, time.monotonic())

    def finish(self, observation: Observation, code: int) -> None:
        """The request ``begin`` saw is answered with ``code``: out of flight, counted, its duration observed."""
        labels = observation.labels
        self._inflight[observation.inflight] -= 1
        key = (labels, code)
        self._totals[key] = self._totals.get(key, 0) + 1
        histogram = self._durations.get(labels)
        if histogram is None:
            histogram = self._durations[labels] = _Histogram()
        histogram.observe(time.monotonic() - observation.started)

    def families(self) -> Iterator[CounterMetricFamily | HistogramMetricFamily | GaugeMetricFamily]:
        """The request metrics as Prometheus metric families, as counted so far."""
        total = CounterMetricFamily("apiserver_request_total",
                                    "Counter of apiserver requests broken out for each verb, dry run value, group, "
                                    "version, resource, scope, component, and HTTP response code.",
                                    labels=[*_REQUEST_LABELS, "code"])
        for (labels, code), count in list(self._totals.items()):
            total.add_metric([*labels, str(code)], count)
        yield total
        duration = HistogramMetricFamily("apiserver_request_duration_seconds",
                                         "Response latency distribution in seconds for each verb, dry run value, "
                                         "group, version, resource, subresource, scope and component.",
                                         labels=list(_REQUEST_LABELS))
        for labels, histogram in list(self._durations.items()):
            duration.add_metric(list(labels), histogram.cumulative(), histogram.sum)
        yield duration
        inflight = GaugeMetricFamily("apiserver_current_inflight_requests",
                                     "Maximal number of currently used inflight request limit of this apiserver per "
                                     "request kind in last second.", labels=["request_kind"])
        for kind, count in self._inflight.items():
            inflight.add_metric([kind], count)
        yield inflight



_BUCKET_NAMES = [*(repr(float(b)) for b in _DURATION_BUCKETS), "+Inf"]  # 0.005, 1.0, 60.0: as Go prints them


class _Histogram:
    """One label set's ``apiserver_request_duration_seconds``: observations per bucket (the last
    one is +Inf) and their sum."""

    __slots__ = ("counts", "sum")

    def __init__(self) -> None:
        self.counts = [0] * (len(_DURATION_BUCKETS) + 1)
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect.bisect_left(_DURATION_BUCKETS, seconds)] += 1  # the first bound >= seconds
        self.sum += seconds

    def cumulative(self) -> list[tuple[str, float]]:
        """The buckets as Prometheus exposes them: (le, observations at or below it)."""
        out: list[tuple[str, float]] = []
        running = 0
        for name, count in zip(_BUCKET_NAMES, self.counts, strict=True):
            running += count
            out.append((name, running))
        return out


class _RequestFamilies:
    """The collector of a ``RequestMetrics``' families (read when scraped)."""

    def __init__(self, metrics: RequestMetrics) -> None:
        self.metrics = metrics

    def describe(self) -> list[GaugeMetricFamily]:
        return []

    def collect(self) -> Iterator[CounterMetricFamily | HistogramMetricFamily | GaugeMetricFamily]:
        yield from self.metrics.families()


class Observation(NamedTuple):
    """A request in flight, as ``RequestMetrics.begin`` saw it."""

    labels: RequestLabels
    inflight: str
    """The request kind it is in flight as: ``readOnly`` or ``mutating``."""
    started: float


class _StorageObjects:
    """``apiserver_storage_objects``: the stored objects per resource, counted when scraped."""

    def __init__(self, counts: Callable[[], Mapping[str, int]]) -> None:
        self.counts = counts

    def describe(self) -> list[GaugeMetricFamily]:
        return []

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily("apiserver_storage_objects",
                                   "Number of stored objects at the time of last check split by kind.",
                                   labels=["resource"])
        for resource, count in sorted(self.counts().items()):
            family.add_metric([resource], count)
        yield family
