"""/healthz, /livez, /readyz with their named checks and /metrics with kube-apiserver's request
metrics (issue 19 item 4)."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable

import pytest

from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.metrics import request_labels
from tests.apiserver.conftest import Raw

Run = Callable[..., subprocess.CompletedProcess[str]]
_SAMPLE = re.compile(r'^(?P<name>[a-z_]+)\{(?P<labels>[^}]*)\} (?P<value>\S+)$')


def text(raw: Raw, path: str, token: str | None = "") -> tuple[int, str]:
    code, _, body = raw.call("GET", path, token=token, accept="*/*")
    return code, body if isinstance(body, str) else str(body)


def samples(exposition: str, name: str) -> list[tuple[dict[str, str], float]]:
    """The samples of metric ``name``: (labels, value)."""
    found = []
    for line in exposition.splitlines():
        match = _SAMPLE.match(line)
        if match and match["name"] == name:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', match["labels"]))
            found.append((labels, float(match["value"])))
    return found


def test_readyz_and_livez_list_their_checks(fresh_apiserver: LocalAPIServer) -> None:
    raw = Raw(fresh_apiserver)
    code, body = text(raw, "/readyz?verbose", token=None)
    assert code == 200
    lines = body.strip().splitlines()
    assert lines[0] == "[+]ping ok" and lines[-1] == "readyz check passed"
    assert {"[+]log ok", "[+]etcd ok", "[+]etcd-readiness ok", "[+]informer-sync ok", "[+]shutdown ok",
            "[+]poststarthook/scheduling/bootstrap-system-priority-classes ok"} <= set(lines)
    code, body = text(raw, "/livez?verbose", token=None)
    assert code == 200
    lines = body.strip().splitlines()
    assert lines[0] == "[+]ping ok" and lines[-1] == "livez check passed"
    assert "[+]shutdown ok" not in lines and "[+]etcd ok" in lines
    assert text(raw, "/readyz", token=None) == (200, "ok")
    assert text(raw, "/healthz?verbose", token=None)[1].strip().endswith("healthz check passed")
    assert text(raw, "/readyz/ping") == (200, "ok")
    assert text(raw, "/readyz/poststarthook/crd-informer-synced") == (200, "ok")
    assert text(raw, "/readyz/nonsense")[0] == 404
    code, body = text(raw, "/readyz?verbose&exclude=etcd&exclude=bogus", token=None)
    assert code == 200 and "[+]etcd excluded: ok" in body.splitlines()
    assert 'warn: some health checks cannot be excluded: no matches for "bogus"' in body


def test_metrics_count_requests(fresh_apiserver: LocalAPIServer) -> None:
    raw = Raw(fresh_apiserver)
    assert text(raw, "/metrics", token=None)[0] == 401
    for _ in range(3):
        assert raw.call("GET", "/api/v1/namespaces/default/pods")[0] == 200
    assert raw.call("GET", "/api/v1/namespaces/default/pods/missing")[0] == 404
    assert raw.call("POST", "/api/v1/namespaces/default/configmaps?dryRun=All",
                    {"metadata": {"name": "cm"}})[0] == 201
    code, body = text(raw, "/metrics")
    assert code == 200
    assert "# TYPE apiserver_request_total counter" in body
    assert "# TYPE apiserver_request_duration_seconds histogram" in body
    totals = samples(body, "apiserver_request_total")
    lists = [v for labels, v in totals if labels == {
        "verb": "LIST", "dry_run": "", "group": "", "version": "v1", "resource": "pods", "subresource": "",
        "scope": "namespace", "component": "apiserver", "code": "200"}]
    assert lists == [3.0]
    assert any(labels["verb"] == "GET" and labels["scope"] == "resource" and labels["code"] == "404"
               for labels, _ in totals)
    assert any(labels["verb"] == "POST" and labels["dry_run"] == "All" and labels["resource"] == "configmaps"
               for labels, _ in totals)
    buckets = [labels for labels, _ in samples(body, "apiserver_request_duration_seconds_bucket")
               if labels["verb"] == "LIST" and labels["resource"] == "pods"]
    assert {b["le"] for b in buckets} >= {"0.005", "1.0", "60.0", "+Inf"}
    objects = {labels["resource"]: v for labels, v in samples(body, "apiserver_storage_objects")}
    assert objects["namespaces"] >= 4 and objects["priorityclasses.scheduling.k8s.io"] == 2
    assert any(labels["request_kind"] == "readOnly" for labels, _ in samples(body, "apiserver_current_inflight_requests"))


@pytest.mark.parametrize("method, path, query, ctype, expected", [
    ("GET", "/apis/apps/v1/deployments", {}, "", ("LIST", "apps", "v1", "deployments", "", "cluster")),
    ("GET", "/api/v1/namespaces/ns/pods", {"watch": "true"}, "", ("WATCH", "", "v1", "pods", "", "namespace")),
    ("PUT", "/api/v1/namespaces/ns/pods/p/status", {}, "", ("PUT", "", "v1", "pods", "status", "resource")),
    ("PATCH", "/apis/apps/v1/namespaces/ns/deployments/d", {}, "application/apply-patch+yaml",
     ("APPLY", "apps", "v1", "deployments", "", "resource")),
    ("GET", "/api/v1/namespaces/default", {}, "", ("GET", "", "v1", "namespaces", "", "resource")),
    ("GET", "/readyz", {}, "", ("GET", "", "", "", "/readyz", "")),
])
def test_request_labels(method: str, path: str, query: dict[str, str], ctype: str,
                        expected: tuple[str, str, str, str, str, str]) -> None:
    labels = request_labels(method, path, query, ctype)
    assert (labels.verb, labels.group, labels.version, labels.resource, labels.subresource, labels.scope) == expected


@pytest.mark.kubectl
def test_kubectl_get_raw_readyz_verbose(kubectl: Run) -> None:
    out = kubectl("get", "--raw", "/readyz?verbose", check=True).stdout
    assert out.startswith("[+]ping ok\n") and out.rstrip().endswith("readyz check passed")
    metrics = kubectl("get", "--raw", "/metrics", check=True).stdout
    assert "apiserver_request_total{" in metrics
