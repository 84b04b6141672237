"""Benchmark: decoding a List of N Deployments and of N Foos (default N = 10,000).

Compared, for each list body (bytes as an API server sends them):
- ``generated``: ``msgspec.json.decode(body, type=DeploymentList)`` (the generated models; gc=False
  Structs) and the same models with the cyclic GC's tracking measured separately;
- ``json.loads``: plain dicts (what the official client returns for custom resources);
- ``official``: the ``kubernetes`` package's ``ApiClient().deserialize`` of the body (``json.loads``
  then its model deserializer into ``V1DeploymentList``). It has no Foo model: for custom resources
  it returns ``json.loads`` dicts (``response_type="object"``).

Printed per row: the best decode time of ``--repeat`` runs, objects/s, bytes held per object
(tracemalloc, measured in a separate run so that tracing does not slow the timed runs), the
speed-up and the memory ratio against the official client (Deployments) or json.loads (Foos).

    python benchmarks/bench_decode.py [--objects 10000] [--repeat 3]

Not a test: machines are noisy, so numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import gc
import inspect
import json
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generated.apis.samplecontroller.v1alpha1 import FooList  # noqa: E402
from samplecontroller.kubernetes.apis.apps.v1 import DeploymentList  # noqa: E402


def deployment(i: int) -> dict[str, Any]:
    """A Deployment as a 1.32 API server returns it (managedFields included)."""
    name = f"foo-{i:05d}"
    labels = {"app": "nginx", "controller": name}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {
            "name": name, "namespace": "default", "uid": f"6a3c1f7e-0000-4000-8000-{i:012d}",
            "resourceVersion": str(1000 + i), "generation": 1, "creationTimestamp": "2024-05-01T10:00:00Z",
            "labels": labels, "annotations": {"deployment.kubernetes.io/revision": "1"},
            "ownerReferences": [{"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "name": name,
                                 "uid": f"6a3c1f7e-0000-4000-9000-{i:012d}", "controller": True,
                                 "blockOwnerDeletion": True}],
            "managedFields": [
                {"manager": "sample-controller", "operation": "Update", "apiVersion": "apps/v1",
                 "time": "2024-05-01T10:00:00Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:ownerReferences": {".": {}, "k:{\"uid\":\"x\"}": {}}},
                              "f:spec": {"f:replicas": {}, "f:selector": {}, "f:template": {"f:spec": {}}}}},
                {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "apps/v1",
                 "time": "2024-05-01T10:00:03Z", "fieldsType": "FieldsV1", "subresource": "status",
                 "fieldsV1": {"f:status": {"f:availableReplicas": {}, "f:conditions": {}, "f:replicas": {}}}},
            ],
        },
        "spec": {
            "replicas": 1, "selector": {"matchLabels": labels}, "progressDeadlineSeconds": 600,
            "revisionHistoryLimit": 10,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "template": {
                "metadata": {"creationTimestamp": None, "labels": labels},
                "spec": {
                    "containers": [{"name": "nginx", "image": "nginx:latest", "imagePullPolicy": "Always",
                                    "resources": {}, "terminationMessagePath": "/dev/termination-log",
                                    "terminationMessagePolicy": "File"}],
                    "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                    "securityContext": {}, "terminationGracePeriodSeconds": 30,
                },
            },
        },
        "status": {
            "observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1,
            "availableReplicas": 1,
            "conditions": [
                {"type": "Available", "status": "True", "lastUpdateTime": "2024-05-01T10:00:03Z",
                 "lastTransitionTime": "2024-05-01T10:00:03Z", "reason": "MinimumReplicasAvailable",
                 "message": "Deployment has minimum availability."},
                {"type": "Progressing", "status": "True", "lastUpdateTime": "2024-05-01T10:00:03Z",
                 "lastTransitionTime": "2024-05-01T10:00:00Z", "reason": "NewReplicaSetAvailable",
                 "message": f'ReplicaSet "{name}-5d8f9c7b6" has successfully progressed.'},
            ],
        },
    }


def foo(i: int) -> dict[str, Any]:
    name = f"foo-{i:05d}"
    return {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
        "metadata": {"name": name, "namespace": "default", "uid": f"6a3c1f7e-0000-4000-9000-{i:012d}",
                     "resourceVersion": str(1000 + i), "generation": 1, "creationTimestamp": "2024-05-01T10:00:00Z",
                     "managedFields": [{"manager": "kubectl-client-side-apply", "operation": "Update",
                                        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
                                        "time": "2024-05-01T10:00:00Z", "fieldsType": "FieldsV1",
                                        "fieldsV1": {"f:spec": {".": {}, "f:deploymentName": {},
                                                                "f:replicas": {}}}}]},
        "spec": {"deploymentName": name, "replicas": 1},
        "status": {"availableReplicas": 1},
    }


def list_body(api_version: str, kind: str, items: list[dict[str, Any]]) -> bytes:
    return json.dumps({"apiVersion": api_version, "kind": kind, "metadata": {"resourceVersion": "99999"},
                       "items": items}, separators=(",", ":")).encode()


class _FakeResponse:
    """What ``ApiClient.deserialize`` reads: ``.data`` (the body)."""

    def __init__(self, data: bytes) -> None:
        self.data = data


def official_decoder(type_name: str) -> Callable[[bytes], Any]:
    from kubernetes.client import ApiClient

    client = ApiClient()
    if "content_type" in inspect.signature(client.deserialize).parameters:  # kubernetes >= 35: the body text

        def decode_text(body: bytes) -> Any:
            return client.deserialize(body.decode(), type_name, "application/json")

        return decode_text

    def decode_response(body: bytes) -> Any:  # older: a response object with .data
        return client.deserialize(_FakeResponse(body), type_name)  # type: ignore[arg-type,call-arg]

    return decode_response


def best_time(fn: Callable[[bytes], Any], body: bytes, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        result = fn(body)
        best = min(best, time.perf_counter() - started)
        del result
    return best


def held_bytes(fn: Callable[[bytes], Any], body: bytes) -> int:
    """Bytes still allocated while the decoded result is alive."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    result = fn(body)
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del result
    return held


def gc_cost(fn: Callable[[bytes], Any], body: bytes) -> tuple[int, float]:
    """(objects the cyclic GC tracks because of the result, seconds of a full collection with it alive)."""
    gc.collect()
    before = len(gc.get_objects())
    result = fn(body)
    tracked = len(gc.get_objects()) - before
    started = time.perf_counter()
    gc.collect()
    seconds = time.perf_counter() - started
    del result
    return tracked, seconds


@dataclass
class Row:
    what: str
    decoder: str
    seconds: float
    per_object: float
    tracked: int
    gc_seconds: float

    def rate(self, n: int) -> float:
        return n / self.seconds


def measure(what: str, decoder: str, fn: Callable[[bytes], Any], body: bytes, n: int, repeat: int) -> Row:
    return Row(what, decoder, best_time(fn, body, repeat), held_bytes(fn, body) / n, *gc_cost(fn, body))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    n, repeat = args.objects, args.repeat

    deployments = list_body("apps/v1", "DeploymentList", [deployment(i) for i in range(n)])
    foos = list_body("samplecontroller.k8s.io/v1alpha1", "FooList", [foo(i) for i in range(n)])
    # Sanity: the generated models decode these bodies back to the same JSON.
    for body, model in ((deployments, DeploymentList), (foos, FooList)):
        sample = json.loads(body)
        sample["items"] = sample["items"][:3]
        assert json.loads(msgspec.json.encode(msgspec.json.decode(json.dumps(sample), type=model))) == sample

    deployment_decoder = msgspec.json.Decoder(DeploymentList)
    foo_decoder = msgspec.json.Decoder(FooList)
    rows = [
        measure("Deployment", "generated (msgspec)", deployment_decoder.decode, deployments, n, repeat),
        measure("Deployment", "json.loads (dicts)", json.loads, deployments, n, repeat),
        measure("Deployment", "official ApiClient", official_decoder("V1DeploymentList"), deployments, n,
                max(1, repeat - 1)),
        measure("Foo", "generated (msgspec)", foo_decoder.decode, foos, n, repeat),
        measure("Foo", "json.loads (dicts)", json.loads, foos, n, repeat),
        measure("Foo", "official (dicts)", official_decoder("object"), foos, n, repeat),
    ]
    baselines = {"Deployment": rows[2], "Foo": rows[5]}

    print(f"decode of a List of {n:,} objects ({len(deployments) / n:,.0f} B/Deployment, "
          f"{len(foos) / n:,.0f} B/Foo on the wire); best of {repeat}")
    print(f"{'kind':<11}{'decoder':<22}{'seconds':>9}{'objects/s':>12}{'bytes/object':>14}"
          f"{'speed-up':>10}{'memory':>8}{'gc-tracked':>12}{'full gc ms':>12}")
    for row in rows:
        base = baselines[row.what]
        print(f"{row.what:<11}{row.decoder:<22}{row.seconds:>9.3f}{row.rate(n):>12,.0f}{row.per_object:>14,.0f}"
              f"{base.seconds / row.seconds:>9.1f}x{row.per_object / base.per_object:>8.2f}"
              f"{row.tracked:>12,}{row.gc_seconds * 1000:>12.1f}")
    print("speed-up and memory: against the official client's decode of the same list (Foo: its dicts);")
    print("gc-tracked: objects the cyclic GC must scan while the list is alive; full gc: one gc.collect()")
    return 0


if __name__ == "__main__":
    sys.exit(main())
