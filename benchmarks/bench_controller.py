"""Benchmark: the sample-controller (main.py) reconciling 1,000 Foos created at once, or paced.

For each controller style and each worker count: a fresh embedded API server in its own process
(deployment-status simulator on), the CRD, ``main.py`` as a subprocess, then N Foos created
concurrently by 16 threads, or with ``--interval S`` one every S seconds from one thread (the
latency of a steady trickle: ``--interval 0.02`` is 50 Foos a second). Two watches record when
each Deployment appears and when each Foo's status shows the simulated availableReplicas.
Printed: time until every Deployment exists and every status is synced, p50/p99 latency from a
Foo's creation (before its POST) to its Deployment's creation (seen on the benchmark's watch),
and the controller process's peak RSS, CPU seconds and CPU milliseconds per Foo.

    python benchmarks/bench_controller.py [--foos 1000] [--workers 1,2,8] [--interval S]
                                          [--controllers classic,runtime,async] [--baseline DIR]

``--baseline DIR`` runs each controller from another checkout too (as ``NAME@base``, with this
checkout's Python), right after its own run: before/after side by side in one run.

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


def run_once(n_foos: int, workers: int, controller: str = "classic", root: Path = ROOT,
             interval: float = 0.0) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp), "--simulate-deployments")
        try:
            return _measure(server, n_foos, workers, Path(tmp), controller, root, interval)
        finally:
            server.stop()


def _measure(server: ServerProcess, n_foos: int, workers: int, tmp: Path, controller: str, root: Path,
             interval: float) -> dict[str, float]:
    install_crds(load_rest_client(kubeconfig=str(server.kubeconfig_path)), ROOT / "crds")
    http = urllib3.PoolManager(maxsize=32, ca_certs=str(server.ca_path), cert_reqs="CERT_REQUIRED")
    api = JsonApi(server.url, server.token, http)
    created: dict[str, float] = {}
    deployed: dict[str, float] = {}
    synced: dict[str, float] = {}
    all_deployed, all_synced, stop = threading.Event(), threading.Event(), threading.Event()

    warm = threading.Event()

    def on_deployment(ev: dict[str, Any], t: float) -> None:
        name = ev["object"]["metadata"]["name"]
        if name == "warmup":
            warm.set()
            return
        if ev["type"] == "ADDED" and name not in deployed:
            deployed[name] = t
            if len(deployed) == n_foos:
                all_deployed.set()

    def on_foo(ev: dict[str, Any], t: float) -> None:
        obj = ev["object"]
        name = obj["metadata"]["name"]
        if name == "warmup":
            return
        if obj.get("status", {}).get("availableReplicas") == obj["spec"]["replicas"] and name not in synced:
            synced[name] = t
            if len(synced) == n_foos:
                all_synced.set()

    api.watch(DEPLOYMENTS_WATCH, on_deployment, stop)
    api.watch(FOOS_WATCH, on_foo, stop)
    log = open(tmp / "controller.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, str(root / "main.py"), "--kubeconfig", str(server.kubeconfig_path),
         "--workers", str(workers), "--log-level", "warning", "--controller", controller],
        stdout=log, stderr=subprocess.STDOUT, cwd=root,
    )
    ps = psutil.Process(proc.pid)
    # Started and synced once a first Foo got its Deployment: startup is not part of the figures.
    api.post(FOOS, {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                    "metadata": {"name": "warmup"}, "spec": {"deploymentName": "warmup", "replicas": 1}})
    if not warm.wait(120):
        raise RuntimeError(f"the controller did not create the warm-up Deployment; see {tmp / 'controller.log'}")
    time.sleep(0.5)  # the warm-up Foo's own syncs settle
    cpu0 = ps.cpu_times()
    peak_rss = 0

    def create(i: int) -> None:
        name = f"foo-{i:05d}"
        created[name] = time.perf_counter()
        api.post(FOOS, {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                        "metadata": {"name": name}, "spec": {"deploymentName": name, "replicas": 1}})

    t0 = time.perf_counter()
    if interval > 0:
        for i in range(n_foos):  # paced: one Foo every ``interval`` seconds, on schedule
            time.sleep(max(0.0, t0 + i * interval - time.perf_counter()))
            create(i)
    else:
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
    p.add_argument("--interval", type=float, default=0.0,
                   help="create one Foo every INTERVAL seconds instead of all at once (e.g. 0.02)")
    p.add_argument("--controllers", default="classic", help="main.py --controller values, comma-separated")
    p.add_argument("--baseline", type=Path, default=None, help="another checkout: also run its controllers")
    args = p.parse_args()
    pace = f"one every {args.interval * 1000:g} ms" if args.interval > 0 else "created at once"
    print(f"sample-controller: {args.foos} Foos {pace} (embedded API server, simulator on)")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; load average at start: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    header = (f"{'controller':>14} | {'workers':>7} | {'deployed':>8} | {'synced':>6} | {'all synced s':>12} | "
              f"{'p50 ms':>8} | {'p99 ms':>8} | {'peak RSS MB':>11} | {'CPU s':>6} | {'CPU ms/Foo':>10} | load 1m")
    print(header)
    print("-" * len(header))
    runs = [(c, ROOT) for c in args.controllers.split(",")]
    if args.baseline is not None:
        runs = [x for c, root in runs for x in ((c, root), (c + "@base", args.baseline))]
    for w in (int(x) for x in args.workers.split(",")):
        for name, root in runs:
            r = run_once(args.foos, w, name.removesuffix("@base"), root, args.interval)
            print(f"{name:>14} | {w:>7} | {r['deployed']:>8.0f} | {r['synced']:>6.0f} | {r['total_s']:>12.2f} | "
                  f"{r['p50_ms']:>8.1f} | {r['p99_ms']:>8.1f} | {r['rss_mb']:>11.1f} | {r['cpu_s']:>6.2f} | "
                  f"{r['cpu_s'] / args.foos * 1000:>10.2f} | {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
