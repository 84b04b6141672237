"""Benchmark: the sample-controller (main.py) reconciling 1,000 Foos created at once.

For 1, 2 and 8 workers: a fresh embedded API server in its own process (deployment-status
simulator on), the CRD,
``main.py`` as a subprocess, then N Foos created concurrently. Two watches record when each
Deployment appears and when each Foo's status shows the simulated availableReplicas. Printed:
time until every Deployment exists and every status is synced, p50/p99 latency from a Foo's
creation to its Deployment's creation, and the controller process's peak RSS and CPU seconds.

    python benchmarks/bench_controller.py [--foos 1000] [--workers 1,2,8]

Not a test: machines are noisy, so numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psutil
import urllib3

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "benchmarks"))
from _apiserver_process import FOOS, FOOS_WATCH, JsonApi, ServerProcess  # noqa: E402

from samplecontroller.app import install_crds  # noqa: E402
from samplecontroller.rest import load_rest_client  # noqa: E402

DEPLOYMENTS_WATCH = "/apis/apps/v1/namespaces/default/deployments?watch=1&allowWatchBookmarks=false"


def run_once(n_foos: int, workers: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp), "--simulate-deployments")
        try:
            return _measure(server, n_foos, workers, Path(tmp))
        finally:
            server.stop()


def _measure(server: ServerProcess, n_foos: int, workers: int, tmp: Path) -> dict[str, float]:
    install_crds(load_rest_client(kubeconfig=str(server.kubeconfig_path)), ROOT / "crds")
    http = urllib3.PoolManager(maxsize=32, ca_certs=str(server.ca_path), cert_reqs="CERT_REQUIRED")
    api = JsonApi(server.url, server.token, http)
    created: dict[str, float] = {}
    deployed: dict[str, float] = {}
    synced: dict[str, float] = {}
    all_deployed, all_synced, stop = threading.Event(), threading.Event(), threading.Event()

    def on_deployment(ev: dict[str, Any], t: float) -> None:
        name = ev["object"]["metadata"]["name"]
        if ev["type"] == "ADDED" and name not in deployed:
            deployed[name] = t
            if len(deployed) == n_foos:
                all_deployed.set()

    def on_foo(ev: dict[str, Any], t: float) -> None:
        obj = ev["object"]
        name = obj["metadata"]["name"]
        if obj.get("status", {}).get("availableReplicas") == obj["spec"]["replicas"] and name not in synced:
            synced[name] = t
            if len(synced) == n_foos:
                all_synced.set()

    api.watch(DEPLOYMENTS_WATCH, on_deployment, stop)
    api.watch(FOOS_WATCH, on_foo, stop)
    log = open(tmp / "controller.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "main.py"), "--kubeconfig", str(server.kubeconfig_path),
         "--workers", str(workers), "--log-level", "warning"],
        stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
    )
    ps = psutil.Process(proc.pid)
    time.sleep(1.5)  # let the controller start and sync its (empty) caches
    cpu0 = ps.cpu_times()
    peak_rss = 0

    def create(i: int) -> None:
        name = f"foo-{i:05d}"
        created[name] = time.perf_counter()
        api.post(FOOS, {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                        "metadata": {"name": name}, "spec": {"deploymentName": name, "replicas": 1}})

    t0 = time.perf_counter()
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(create, range(n_foos)))
    deadline = time.monotonic() + 600
    while not (all_deployed.is_set() and all_synced.is_set()) and time.monotonic() < deadline:
        peak_rss = max(peak_rss, ps.memory_info().rss)
        time.sleep(0.1)
    t_done = time.perf_counter()
    peak_rss = max(peak_rss, ps.memory_info().rss)
    cpu1 = ps.cpu_times()
    stop.set()
    proc.terminate()
    proc.wait(30)
    log.close()
    lat = sorted((deployed[n] - created[n]) * 1000 for n in deployed if n in created)
    return {
        "deployed": len(deployed), "synced": len(synced),
        "total_s": t_done - t0,
        "p50_ms": statistics.median(lat) if lat else float("nan"),
        "p99_ms": lat[int(len(lat) * 0.99) - 1] if lat else float("nan"),
        "rss_mb": peak_rss / 2**20,
        "cpu_s": (cpu1.user + cpu1.system) - (cpu0.user + cpu0.system),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--foos", type=int, default=1000)
    p.add_argument("--workers", default="1,2,8")
    args = p.parse_args()
    print(f"sample-controller: {args.foos} Foos created at once (embedded API server, simulator on)")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    header = f"{'workers':>7} | {'deployed':>8} | {'synced':>6} | {'all synced s':>12} | {'p50 ms':>8} | {'p99 ms':>8} | {'peak RSS MB':>11} | {'CPU s':>6}"
    print(header)
    print("-" * len(header))
    for w in (int(x) for x in args.workers.split(",")):
        r = run_once(args.foos, w)
        print(f"{w:>7} | {r['deployed']:>8.0f} | {r['synced']:>6.0f} | {r['total_s']:>12.2f} | {r['p50_ms']:>8.1f} | "
              f"{r['p99_ms']:>8.1f} | {r['rss_mb']:>11.1f} | {r['cpu_s']:>6.2f}")


if __name__ == "__main__":
    main()
