"""Benchmark: async reconcilers beside sync ones (and kopf), side by side in one run (issue 25).

Table 1, the Foo controller: ``main.py --controller async`` (``foo_reconciler_async``) and
``--controller runtime`` (the sync ``foo_reconciler``), same ``--workers``, each as a subprocess
on a fresh embedded API server (Deployment simulator on, request counters on; the harness of
``bench_vs_kopf.py``); N Foos created at once by 16 client threads. Per row: seconds until every
Deployment exists and every Foo's status is synced, the controller's CPU ms per Foo until then
and until the events still queued then were written too (+ 1 s idle), syncs per
Foo (the counts of the Synced Events written plus the events dropped), events dropped per Foo
(the recorder drops events while ``maxQueuedEvents`` wait, as client-go does: each dropped event
is a write less, so compare CPU between rows with like drops), RSS idle and peak, peak thread
count. ``--baseline DIR`` adds the async reconciler run from another checkout (``git worktree
add DIR REV``), before and after side by side.

Table 2, the awaited-call workload: N ConfigMaps (``--calls``, 1,000 by default) whose reconcile
calls an external HTTP service answering after 1 s (``_slow_service.py``, which counts the
answers it sent); ``max_concurrent_reconciles`` (``--concurrency``, 1,000). The objects are created
first, then the controller is started. Rows: this toolkit's async
reconciler (aiohttp, tasks on the Manager's loop), its sync reconciler at the same setting (1,000
worker threads blocking in urllib3), and kopf doing the same with an async handler
(``kopf_awaited_call_operator.py``). Per row: seconds the benchmark took to create the objects,
seconds from the controller's first list request until the service answered every call, the
controller's CPU seconds over that time, its peak RSS and peak threads.

    python benchmarks/bench_async.py [--n 2000] [--workers 2] [--repeat 1] [--calls 1000] [--concurrency 1000]
                                     [--tables foo,calls] [--skip kopf] [--baseline DIR]

Not a test: machines are noisy, so numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from statistics import mean
from typing import Any

import psutil
import urllib3

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _apiserver_process import JsonApi  # noqa: E402
from bench_vs_kopf import BENCH_UA, CountingServer, controller_requests  # noqa: E402
from bench_vs_kopf import run_once as run_foo  # noqa: E402

NAMESPACE = "bench"
CONFIGMAPS = f"/api/v1/namespaces/{NAMESPACE}/configmaps"


# -- table 1: the Foo controller -------------------------------------------------------------


def foo_table(n: int, workers: int | None, repeat: int = 1, baseline: Path | None = None) -> None:
    print(f"\n1. Foo -> Deployment, {n} Foos created at once, --workers {workers or 'default'} "
          f"(controller in its own process; {repeat} round(s), the two controllers alternating)")
    header = (f"{'controller':>16} | {'all deployments s':>17} | {'all synced s':>12} | {'CPU ms/Foo':>10} | "
              f"{'+ events written after':>22} | {'syncs/Foo':>9} | {'events dropped/Foo':>18} | "
              f"{'RSS MB idle/peak':>16} | {'peak threads':>12} | requests per Foo by verb")
    print(header)
    print("-" * len(header))
    rows: tuple[tuple[str, str], ...] = (("async", "async reconciler"), ("runtime", "sync reconciler"))
    if baseline is not None:
        rows += (("async@base", "async (baseline)"),)
    done: dict[str, list[Any]] = {label: [] for _, label in rows}
    for round_ in range(repeat):
        for controller, label in rows if round_ % 2 == 0 else rows[::-1]:
            r = run_foo(controller, n, workers, baseline)
            if r.deployed < n or r.synced < n:
                print(f"{label:>16} | incomplete: {r.deployed} deployed, {r.synced} synced")
                continue
            done[label].append(r)
            print(f"{label:>16} | {r.deployed_s:>17.2f} | {r.synced_s:>12.2f} | {r.cpu_s / n * 1000:>10.2f} | "
                  f"{r.settled_cpu_s / n * 1000:>22.2f} | {(r.synced_events + r.events_dropped) / n:>9.2f} | {r.events_dropped / n:>18.2f} | "
                  f"{r.idle_rss_mb:>7.1f} / {r.rss_mb:>6.1f} | {r.peak_threads:>12} | "
                  + " ".join(f"{v} {k:.2f}" for v, k in sorted(r.per_foo.items()) if k), flush=True)
    if repeat > 1:
        print(f"means over the rounds (load average now {' '.join(f'{x:.1f}' for x in os.getloadavg())}):")
        for label, runs in done.items():
            if runs:
                print(f"{label:>16} | {mean(r.deployed_s for r in runs):>17.2f} | "
                      f"{mean(r.synced_s for r in runs):>12.2f} | {mean(r.cpu_s for r in runs) / n * 1000:>10.2f} | "
                      f"{mean(r.settled_cpu_s for r in runs) / n * 1000:>22.2f} | "
                      f"{'':>9} | {mean(r.events_dropped for r in runs) / n:>18.2f} | ({len(runs)} rounds)")


# -- table 2: reconciles awaiting a 1-second external call -----------------------------------


@dataclass
class CallRun:
    label: str
    created_s: float = float("nan")
    done_s: float = float("nan")
    done: int = 0
    cpu_s: float = float("nan")
    rss_mb: float = float("nan")
    threads: int = 0


def _slow_service() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "_slow_service.py"), "--delay", "1"],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    if len(line) < 2 or line[0] != "ready":
        raise RuntimeError(f"the slow service did not start: {line}")
    return proc, line[1]


def _call_command(kind: str, kubeconfig: Path, url: str, concurrency: int) -> list[str]:
    if kind == "kopf":
        return [sys.executable, "-m", "kopf", "run", "--standalone", "--quiet", "-n", NAMESPACE,
                str(ROOT / "benchmarks" / "kopf_awaited_call_operator.py")]
    return [sys.executable, str(ROOT / "benchmarks" / "_awaited_call_operator.py"), "--style", kind,
            "--kubeconfig", str(kubeconfig), "--namespace", NAMESPACE, "--url", url,
            "--workers", str(concurrency)]


def run_calls(kind: str, label: str, n: int, concurrency: int) -> CallRun:
    result = CallRun(label)
    with tempfile.TemporaryDirectory() as tmp:
        server = CountingServer(Path(tmp))
        service, url = _slow_service()
        try:
            _measure_calls(server, kind, url, n, concurrency, Path(tmp), result)
        finally:
            service.kill()
            service.wait()
            server.stop()
    return result


def _measure_calls(server: CountingServer, kind: str, url: str, n: int, concurrency: int, tmp: Path,
                   result: CallRun) -> None:
    urllib3.disable_warnings()
    api = JsonApi(server.url, server.token, urllib3.PoolManager(maxsize=32, cert_reqs="CERT_NONE"), BENCH_UA)
    api.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    def create(i: int) -> None:
        api.post(CONFIGMAPS, {"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": {"name": f"cm-{i:05d}", "labels": {"bench": "awaited"}},
                              "data": {"i": str(i)}})

    t_create = time.perf_counter()
    with ThreadPoolExecutor(16) as pool:  # all objects exist before the controller starts
        list(pool.map(create, range(n)))
    result.created_s = time.perf_counter() - t_create
    log = open(tmp / "controller.log", "w")  # noqa: SIM115 - closed below
    env = dict(os.environ, KUBECONFIG=str(server.kubeconfig_path), BENCH_URL=url)
    proc = subprocess.Popen(_call_command(kind, server.kubeconfig_path, url, concurrency), stdout=log,
                            stderr=subprocess.STDOUT, cwd=ROOT, env=env)
    try:
        ps = psutil.Process(proc.pid)
        sampling = threading.Event()

        def sample() -> None:
            while not sampling.is_set():
                try:
                    result.rss_mb = max(result.rss_mb if result.rss_mb == result.rss_mb else 0,
                                        ps.memory_info().rss / 2**20)
                    result.threads = max(result.threads, ps.num_threads())
                except psutil.Error:
                    return
                sampling.wait(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        deadline = time.monotonic() + 120
        while controller_requests(server.counts()).get("list", 0) < 1:  # its first list: it has started
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{kind} did not start listing; see {tmp / 'controller.log'}")
            time.sleep(0.02)
        t0 = time.time()
        cpu0 = sum(ps.cpu_times()[:2])
        count = {"served": 0, "last": float("nan")}
        while count["served"] < n and time.time() - t0 < 600:
            time.sleep(0.02)
            count = json.loads(urllib3.request("GET", url + "count").data)
        result.cpu_s = sum(ps.cpu_times()[:2]) - cpu0
        sampling.set()
        sampler.join()
        result.done = int(count["served"])
        result.done_s = float(count["last"]) - t0
    finally:
        proc.kill()
        proc.wait(30)
        log.close()


def calls_table(n: int, concurrency: int, skip: set[str]) -> None:
    print(f"\n2. {n} objects, each reconcile awaits a 1-second external HTTP call, "
          f"max_concurrent_reconciles={concurrency} (controller in its own process)")
    print("(the objects exist before the controller starts; 'all done': from its first list request until "
          "the service answered the last call)")
    header = (f"{'controller':>22} | {'created s':>9} | {'all done s':>10} | {'done':>5} | {'CPU s':>6} | "
              f"{'peak RSS MB':>11} | {'peak threads':>12}")
    print(header)
    print("-" * len(header))
    rows = [("async", "async reconciler"), ("sync", "sync reconciler"), ("kopf", "kopf (async handler)")]
    for kind, label in rows:
        if kind in skip:
            continue
        r = run_calls(kind, label, n, concurrency)
        print(f"{r.label:>22} | {r.created_s:>9.2f} | {r.done_s:>10.2f} | {r.done:>5} | {r.cpu_s:>6.2f} | "
              f"{r.rss_mb:>11.1f} | {r.threads:>12}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=2000, help="Foos for table 1")
    p.add_argument("--workers", type=int, default=None, help="--workers for both Foo controllers (main.py's default)")
    p.add_argument("--repeat", type=int, default=1, help="rounds of table 1 (the order alternates)")
    p.add_argument("--calls", type=int, default=1000, help="objects for table 2")
    p.add_argument("--concurrency", type=int, default=1000, help="max_concurrent_reconciles for table 2")
    p.add_argument("--tables", default="foo,calls")
    p.add_argument("--baseline", type=Path, default=None,
                   help="table 1 also runs the async reconciler from this checkout (before/after side by side)")
    p.add_argument("--skip", default="", help="table 2 rows to leave out (async, sync, kopf)")
    args = p.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    tables = set(args.tables.split(","))
    if "foo" in tables:
        foo_table(args.n, args.workers, args.repeat, args.baseline)
    if "calls" in tables:
        calls_table(args.calls, args.concurrency, set(filter(None, args.skip.split(","))))


if __name__ == "__main__":
    main()
