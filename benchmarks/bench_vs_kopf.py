"""Benchmark: this project's controller (classic and runtime) beside kopf doing the same job.

For each controller and each N: a fresh embedded API server in its own process (Deployment
simulator on, request counters on), the CRDs, the controller as a subprocess with its default
flags, then N Foos created at once by 16 client threads. Two watches record when every
Deployment exists and when every Foo's status shows the simulated availableReplicas.

Printed per run: seconds from the first create to all Deployments and to all statuses synced,
the controller process's CPU milliseconds per Foo (until the last sync; "settled": until the
Events still queued then were written too), the Synced Events written (their counts summed) and
the Events the recorder dropped (its queue full, as Go's drops), its RSS once started (idle, caches empty) and
its peak, the API server's CPU milliseconds per Foo, and the requests per Foo the controller
sent by verb (counted by the server, startup requests excluded); then the ratios to kopf.
kopf is ``benchmarks/kopf_foo_operator.py`` (kopf with the official kubernetes client), run as
``kopf run --standalone --all-namespaces``; main.py runs with its defaults. The ``kopf`` row has kopf
post its handlers' outcomes as Events (``KOPF_POST_EVENTS=1``; kopf 1.45 no longer does by default),
as the sample-controller records ``Synced``, and so logs at its default level (INFO: kopf makes its Events
from those records); ``kopf-quiet`` is kopf at its fastest, ``--quiet`` and posting no Events.
The requests column shows what each one posted. Everything logs to a file.

    python benchmarks/bench_vs_kopf.py [--n 500,2000] [--controllers classic,runtime,kopf]
                                       [--workers W] [--repeat 1] [--baseline DIR]

``--baseline DIR`` also runs this project's controllers from another checkout (``git worktree add
DIR <commit>``, or ``git archive <commit> | tar -x -C DIR``), with this checkout's Python, listed as
``classic@base`` etc. right after their own run: a before/after comparison side by side in one run.

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import urllib3
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "benchmarks"))
from _apiserver_process import FOOS, FOOS_WATCH, JsonApi  # noqa: E402

from samplecontroller.app import install_crds  # noqa: E402
from samplecontroller.rest import load_rest_client  # noqa: E402

BENCH_UA = "bench-vs-kopf"
DEPLOYMENTS_WATCH = "/apis/apps/v1/namespaces/default/deployments?watch=1"
VERBS = ("get", "list", "watch", "create", "update", "patch", "delete")


class CountingServer:
    """benchmarks/_counting_apiserver.py as a subprocess."""

    def __init__(self, tmp: Path) -> None:
        self.kubeconfig_path = tmp / "kubeconfig"
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "_counting_apiserver.py"),
                                      str(self.kubeconfig_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, cwd=ROOT)
        assert self.proc.stdout is not None and self.proc.stdin is not None
        line = self.proc.stdout.readline().split()
        if len(line) < 2 or line[0] != "ready":
            raise RuntimeError(f"the API server did not start: {line}")
        self.url = line[1]
        user = yaml.safe_load(self.kubeconfig_path.read_text())["users"][0]["user"]
        self.token = user["token"]

    def counts(self) -> dict[str, dict[str, int]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("counts\n")
        self.proc.stdin.flush()
        counts: dict[str, dict[str, int]] = json.loads(self.proc.stdout.readline())["counts"]
        return counts

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@dataclass
class Result:
    controller: str
    n: int
    deployed: int = 0
    synced: int = 0
    deployed_s: float = float("nan")
    synced_s: float = float("nan")
    cpu_s: float = float("nan")
    rss_mb: float = float("nan")
    idle_rss_mb: float = float("nan")
    server_cpu_s: float = float("nan")
    peak_threads: int = 0
    per_foo: dict[str, float] = field(default_factory=dict)
    synced_events: int = 0
    """The count of every Synced Event written (one per successful sync, the repeats aggregated)."""
    settled_cpu_s: float = float("nan")
    """CPU seconds until the events queued at the end were written too (``cpu_s`` stops at the last sync)."""
    events_dropped: int = 0
    """Events the controller's recorder dropped ("too many queued events", logged), so never written."""


BASELINE_SUFFIX = "@base"
KOPF = {"kopf": "1", "kopf-quiet": "0"}
"""The kopf rows, and their KOPF_POST_EVENTS (see kopf_foo_operator.py)."""


def controller_command(controller: str, kubeconfig: Path, workers: int | None, baseline: Path | None = None) -> list[str]:
    """The command line of ``controller``; ``name@base`` runs ``name`` from the ``baseline`` checkout."""
    if controller in KOPF:
        quiet = ["--quiet"] if controller == "kopf-quiet" else []  # kopf's fastest: its INFO records (and Events) off
        return [sys.executable, "-m", "kopf", "run", "--standalone", "--all-namespaces", *quiet,
                str(ROOT / "benchmarks" / "kopf_foo_operator.py")]
    root = ROOT
    if controller.endswith(BASELINE_SUFFIX):
        if baseline is None:
            raise SystemExit(f"{controller} needs --baseline DIR")
        controller, root = controller.removesuffix(BASELINE_SUFFIX), baseline
    cmd = [sys.executable, str(root / "main.py"), "--kubeconfig", str(kubeconfig), "--controller", controller]
    return cmd + (["--workers", str(workers)] if workers else [])


def controller_requests(counts: dict[str, dict[str, int]]) -> dict[str, int]:
    """Requests by verb from every client but the benchmark itself."""
    out: dict[str, int] = {}
    for ua, verbs in counts.items():
        if ua != BENCH_UA:
            for verb, k in verbs.items():
                out[verb] = out.get(verb, 0) + k
    return out


def run_once(controller: str, n: int, workers: int | None, baseline: Path | None = None) -> Result:
    with tempfile.TemporaryDirectory() as tmp:
        server = CountingServer(Path(tmp))
        try:
            return _measure(server, controller, n, workers, Path(tmp), baseline)
        finally:
            server.stop()


def _measure(server: CountingServer, controller: str, n: int, workers: int | None, tmp: Path,
             baseline: Path | None = None) -> Result:
    install_crds(load_rest_client(kubeconfig=str(server.kubeconfig_path)), ROOT / "crds")
    urllib3.disable_warnings()
    api = JsonApi(server.url, server.token, urllib3.PoolManager(maxsize=32, cert_reqs="CERT_NONE"), BENCH_UA)
    result = Result(controller, n)
    deployed: set[str] = set()
    synced: set[str] = set()
    done_deploying, done_syncing = threading.Event(), threading.Event()
    times: dict[str, float] = {}

    def on_deployment(ev: dict[str, Any], t: float) -> None:
        deployed.add(ev["object"]["metadata"]["name"])
        if len(deployed) == n and not done_deploying.is_set():
            times["deployed"] = t
            done_deploying.set()

    def on_foo(ev: dict[str, Any], t: float) -> None:
        obj = ev["object"]
        if (obj.get("status") or {}).get("availableReplicas") == obj["spec"]["replicas"]:
            synced.add(obj["metadata"]["name"])
            if len(synced) == n and not done_syncing.is_set():
                times["synced"] = t
                done_syncing.set()

    api.watch(DEPLOYMENTS_WATCH, on_deployment)
    api.watch(FOOS_WATCH, on_foo)
    log = open(tmp / "controller.log", "w")  # noqa: SIM115 - closed below
    env = dict(os.environ, KUBECONFIG=str(server.kubeconfig_path), KOPF_POST_EVENTS=KOPF.get(controller, "0"))
    cmd = controller_command(controller, server.kubeconfig_path, workers, baseline)
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                            cwd=Path(cmd[1]).parent if cmd[1].endswith("main.py") else ROOT)
    try:
        ps = psutil.Process(proc.pid)
        try:
            _wait_for_watches(server, proc)
        except RuntimeError as err:
            log.flush()
            tail = (tmp / "controller.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"{controller}: {err}; the end of its log:\n{tail}") from None
        before = controller_requests(server.counts())
        server_ps = psutil.Process(server.proc.pid)
        cpu0, server_cpu0 = sum(ps.cpu_times()[:2]), sum(server_ps.cpu_times()[:2])
        result.idle_rss_mb = ps.memory_info().rss / 2**20
        t0 = time.perf_counter()
        _create_foos(api, n)
        peak = 0
        deadline = time.monotonic() + 900
        while not (done_deploying.is_set() and done_syncing.is_set()) and time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"{controller} exited with {proc.returncode}; see its log")
            peak = max(peak, ps.memory_info().rss)
            result.peak_threads = max(result.peak_threads, ps.num_threads())
            time.sleep(0.1)
        result.cpu_s = sum(ps.cpu_times()[:2]) - cpu0
        result.server_cpu_s = sum(server_ps.cpu_times()[:2]) - server_cpu0
        result.rss_mb = max(peak, ps.memory_info().rss) / 2**20
        after = controller_requests(server.counts())
        result.synced_events = _settled_synced_events(api)  # after the measurement: the queued events land
        result.settled_cpu_s = sum(ps.cpu_times()[:2]) - cpu0
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
    result.deployed, result.synced = len(deployed), len(synced)
    result.events_dropped = sum(line.count(EVENT_DROPPED) for line in (tmp / "controller.log").open(errors="replace"))
    result.deployed_s = times.get("deployed", float("nan")) - t0
    result.synced_s = times.get("synced", float("nan")) - t0
    result.per_foo = {v: (after.get(v, 0) - before.get(v, 0)) / n for v in set(after) | set(before)}
    return result


EVENT_DROPPED = "too many queued events"
"""What the recorder logs for each event it drops (``samplecontroller.record``)."""


def _settled_synced_events(api: JsonApi, quiet: float = 1.0, bound: float = 30.0) -> int:
    """The summed count of the Synced Events in default, once it stopped changing for ``quiet``
    seconds (the controller writes its queued events after the last sync)."""
    last, since, deadline = -1, time.monotonic(), time.monotonic() + bound
    while time.monotonic() < deadline:
        items = api.get("/api/v1/namespaces/default/events").get("items") or []
        total = sum(int(e.get("count") or 1) for e in items if e.get("reason") == "Synced")
        if total != last:
            last, since = total, time.monotonic()
        elif time.monotonic() - since >= quiet:
            break
        time.sleep(0.2)
    return max(last, 0)


def _wait_for_watches(server: CountingServer, proc: subprocess.Popen[Any]) -> None:
    """Until the controller has opened its Foo and Deployment watches (its caches are synced)."""
    deadline = time.monotonic() + 60
    while controller_requests(server.counts()).get("watch", 0) < 2:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("the controller did not start watching")
        time.sleep(0.1)
    time.sleep(0.5)


def _create_foos(api: JsonApi, n: int) -> None:
    def create(i: int) -> None:
        name = f"foo-{i:05d}"
        api.post(FOOS, {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                        "metadata": {"name": name}, "spec": {"deploymentName": name, "replicas": 1}})

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(create, range(n)))


def print_table(results: list[Result]) -> None:
    header = (f"{'controller':>14} | {'N':>5} | {'deployed':>8} | {'all deployments s':>17} | {'all synced s':>12} | "
              f"{'CPU ms/Foo':>10} | {'settled':>7} | {'Synced ev/dropped':>17} | {'RSS MB idle/peak':>16} | "
              f"{'server CPU ms/Foo':>17} | requests per Foo by verb")
    print(header)
    print("-" * len(header))
    for r in results:
        verbs = " ".join(f"{v} {r.per_foo[v]:.2f}" for v in (*VERBS, *sorted(set(r.per_foo) - set(VERBS)))
                         if r.per_foo.get(v))
        print(f"{r.controller:>14} | {r.n:>5} | {r.deployed:>8} | {r.deployed_s:>17.2f} | {r.synced_s:>12.2f} | "
              f"{r.cpu_s / r.n * 1000:>10.2f} | {r.settled_cpu_s / r.n * 1000:>7.2f} | "
              f"{r.synced_events:>8} / {r.events_dropped:>6} | {r.idle_rss_mb:>7.1f} / {r.rss_mb:>6.1f} | "
              f"{r.server_cpu_s / r.n * 1000:>17.2f} | {verbs}")


def print_ratios(results: list[Result]) -> None:
    for name in KOPF:
        _print_ratios(results, name)


def _print_ratios(results: list[Result], name: str) -> None:
    kopf = {r.n: r for r in results if r.controller == name}
    ours = [r for r in results if r.controller not in KOPF and r.n in kopf]
    if not ours:
        return
    print()
    print(f"ratios to {name} (throughput: {name}'s time / ours; CPU and RSS: ours / {name}'s)")
    header = f"{'controller':>14} | {'N':>5} | {'deployments x':>13} | {'synced x':>8} | {'CPU':>5} | {'RSS':>5}"
    print(header)
    print("-" * len(header))
    for r in ours:
        k = kopf[r.n]
        print(f"{r.controller:>14} | {r.n:>5} | {k.deployed_s / r.deployed_s:>13.2f} | {k.synced_s / r.synced_s:>8.2f} | "
              f"{r.cpu_s / k.cpu_s:>5.2f} | {r.rss_mb / k.rss_mb:>5.2f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", default="500,2000", help="comma-separated Foo counts (a quick run: --n 100)")
    p.add_argument("--controllers", default="classic,runtime,kopf")
    p.add_argument("--workers", type=int, default=None, help="pass --workers to main.py (default: its default)")
    p.add_argument("--repeat", type=int, default=1, help="run the whole comparison this many times")
    p.add_argument("--baseline", type=Path, default=None,
                   help="another checkout: also run each of our controllers from it (as NAME@base)")
    args = p.parse_args()
    print(f"Foo -> Deployment, N Foos created at once; python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    controllers = args.controllers.split(",")
    if args.baseline is not None:
        controllers = [x for c in controllers for x in ((c,) if c in KOPF else (c, c + BASELINE_SUFFIX))]
    for i in range(args.repeat):
        results = [run_once(c, int(n), args.workers, args.baseline)
                   for n in args.n.split(",") for c in controllers]
        print(f"\nrun {i + 1} (load average now: {' '.join(f'{x:.2f}' for x in os.getloadavg())}):")
        print_table(results)
        print_ratios(results)


if __name__ == "__main__":
    main()
