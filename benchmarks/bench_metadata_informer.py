"""Benchmark: bytes per cached object of a metadata-only informer against a full (typed) informer.

Against the embedded API server (in this process, on its own thread), N Pods (a realistic spec: two
containers with env, ports, probes, resources and volume mounts; labels, annotations, an owner
reference) and N Secrets (4 KiB of data each) are created; then, one at a time, a typed informer
(``samplecontroller.kubernetes.informers``: the full models) and a metadata-only informer
(``informers.metadata``: ``PartialObjectMetadata`` from the server's
``as=PartialObjectMetadata`` responses) sync them. Printed per resource and informer: seconds to
sync, Python heap bytes the cache holds per object (``tracemalloc``, after the sync, informer
stopped, the bytes its store keeps reachable), and the ratio.

    python benchmarks/bench_metadata_informer.py [--count 1000]

Not a test: the machine is shared, numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from samplecontroller.apiserver.server import LocalAPIServer  # noqa: E402
from samplecontroller.client.metadata import MetadataClient  # noqa: E402
from samplecontroller.informers.metadata import MetadataSharedInformerFactory  # noqa: E402
from samplecontroller.kubernetes.clientset import Clientset  # noqa: E402
from samplecontroller.kubernetes.informers import SharedInformerFactory  # noqa: E402
from samplecontroller.rest import RESTClient, load_rest_client  # noqa: E402

NS = "bench"


def pod(i: int) -> dict[str, Any]:
    container = {
        "name": "app", "image": "registry.example.com/team/app:1.2.3", "args": ["--port=8080", "--verbose"],
        "env": [{"name": f"VAR_{j}", "value": f"value-{j}"} for j in range(8)],
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
        "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}],
    }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": f"pod-{i}", "namespace": NS, "labels": {"app": "bench", "tier": "web", "index": str(i)},
        "annotations": {"example.com/revision": "42"}},
        "spec": {"containers": [container, {**container, "name": "sidecar"}],
                 "volumes": [{"name": "config", "configMap": {"name": "app-config"}}]}}


def secret(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": f"secret-{i}", "namespace": NS,
                                                               "labels": {"app": "bench"}},
            "stringData": {"tls.crt": "C" * 2048, "tls.key": "K" * 2048}}


def measure(start_informer: Callable[[threading.Event], Any], count: int) -> tuple[float, float]:
    """(seconds to sync, heap bytes per cached object)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    stop = threading.Event()
    started = time.perf_counter()
    store = start_informer(stop)
    seconds = time.perf_counter() - started
    stop.set()
    time.sleep(0.2)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert len(store.list()) == count, len(store.list())
    return seconds, (after - before) / count


def full(rest: RESTClient, resource: str) -> Callable[[threading.Event], Any]:
    def start(stop: threading.Event) -> Any:
        factory = SharedInformerFactory(Clientset(rest), namespace=NS)
        informer = getattr(factory.core.v1, resource).informer()
        factory.start(stop)
        factory.wait_for_cache_sync(timeout=600)
        factory.shutdown()
        return informer.get_indexer()
    return start


def metadata_only(rest: RESTClient, resource: str) -> Callable[[threading.Event], Any]:
    def start(stop: threading.Event) -> Any:
        factory = MetadataSharedInformerFactory(MetadataClient(rest), namespace=NS)
        informer = factory.for_resource("", "v1", resource)
        factory.start(stop)
        factory.wait_for_cache_sync(timeout=600)
        factory.shutdown()
        return informer.get_indexer()
    return start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = LocalAPIServer(tmp, kubeconfig_path=f"{tmp}/kubeconfig")
        server.start()
        try:
            rest = load_rest_client(kubeconfig=f"{tmp}/kubeconfig")
            core = Clientset(rest).core_v1()
            core.namespaces().create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
            for i in range(args.count):
                core.pods(NS).create(pod(i))
                core.secrets(NS).create(secret(i))
            rows = []
            for resource in ("pods", "secrets"):
                f_s, f_b = measure(full(rest, resource), args.count)
                m_s, m_b = measure(metadata_only(rest, resource), args.count)
                rows.append((resource, f_s, f_b, m_s, m_b))
        finally:
            server.stop()
    print(f"{args.count} objects per resource (embedded API server in-process; a shared, loaded machine)")
    print(f"{'resource':<10} {'full s':>8} {'full B/obj':>11} {'metadata s':>11} {'metadata B/obj':>15} {'ratio':>7}")
    for resource, f_s, f_b, m_s, m_b in rows:
        print(f"{resource:<10} {f_s:>8.2f} {f_b:>11.0f} {m_s:>11.2f} {m_b:>15.0f} {f_b / m_b:>6.1f}x")


if __name__ == "__main__":
    main()
