"""Benchmark: the sharded sample-controller (``runtime.sharding``) with 1, 2 and 4 replicas.

For each replica count N: a fresh embedded API server in its own process, the CRDs, N replicas as
separate processes (each the runtime-style FooReconciler under a Manager with ``shard_ring``, as
``main.py --controller runtime --shard-ring bench`` builds it, plus a recorder in the reconciler
that appends "S|E <monotonic time> <namespace/name>" to a file per replica: CLOCK_MONOTONIC is one
clock for every process of the machine), then:

1. ``--foos`` Foos created by 16 client threads; time until every Deployment exists; each
   replica's peak RSS and CPU seconds (user + system) per Foo it holds;
2. (N >= 2) one replica killed with SIGKILL while ``--foos``/10 more Foos are created: time until
   every Foo is assigned to a live replica and has its Deployment (the dead replica's Lease
   expires, the sharder takes it over and moves its Foos);
3. one replica added: time until it holds its share and nothing is left draining;
4. the recorders' files merged: Foos reconciled by two replicas at once (must be 0; a killed
   replica's reconcile in flight ends at its kill) and Foos left unowned (no live shard or no
   Deployment; must be 0).

    python benchmarks/bench_sharding.py [--foos 20000] [--replicas 1,2,4] [--lease 15]
        [--assign controller|webhook|both]
    python benchmarks/bench_sharding.py --takeover [--foos 20000] [--lease 15]

``--takeover`` measures item 2 (warm standby) instead: leader election without sharding, the
leader SIGKILLed and one Foo changed at once; seconds until the change reaches its Deployment
and until the new leader's first reconcile, with a standby running (warm: its cache synced) and
with the standby started only when the leader dies (cold).

``--assign``: how new Foos are assigned: by the sharder's watch of unassigned objects and a
label PATCH (``controller``), by its mutating webhook on create (``webhook``, the default:
``Options.shard_webhook``, each replica serving it on a free port with a self-signed
certificate), or each in turn (``both``). Also printed: seconds from a Foo's create returning
to its Deployment's ADDED event (p50, p99; a watch in this process), the API server's and the
replicas' CPU seconds, and the sharder's label PATCHes and the webhook's assignments (each
replica writes them when it stops).

Not a test: machines are noisy, so numbers are printed, never asserted (the zeros are also
asserted by tests/runtime/test_sharding.py's chaos test, with small numbers).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
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
from _apiserver_process import FOOS, JsonApi, ServerProcess  # noqa: E402

from samplecontroller.app import install_crds  # noqa: E402
from samplecontroller.rest import load_rest_client  # noqa: E402

RING = "bench"
SHARD_LABEL = "shard.alpha.sharding.timebertt.dev/" + RING
DRAIN_LABEL = "drain.alpha.sharding.timebertt.dev/" + RING
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"


def replica_main(kubeconfig: str, name: str, record: str, lease: float, elect: bool = False,
                 cert_dir: str = "") -> None:
    """One replica (a child process): the FooReconciler, sharded, with a reconcile recorder."""
    from samplecontroller import foo, logs
    from samplecontroller.foo_reconciler import FooReconciler, new_manager, setup_foo_controller
    from samplecontroller.runtime.reconcile import Request, Result

    logs.setup()  # errors with their fields in the replica's log
    fd = os.open(record, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    class Recording:
        def __init__(self, inner: FooReconciler) -> None:
            self.inner = inner

        def reconcile(self, request: Request) -> Result:
            key = f"{request.namespace}/{request.name}"
            os.write(fd, f"S {time.monotonic():.6f} {key}\n".encode())
            try:
                return self.inner.reconcile(request)
            finally:
                os.write(fd, f"E {time.monotonic():.6f} {key}\n".encode())

    rest = load_rest_client(kubeconfig=kubeconfig)
    role: dict[str, Any] = ({"leader_election": True, "leader_election_id": "bench-leader"} if elect
                            else {"shard_ring": RING, "shard_identity": name})
    if cert_dir:  # assignment on create: the sharder's webhook, on a free port of this replica
        role.update(shard_webhook=True, webhook_host="127.0.0.1", webhook_port=0, webhook_cert_dir=cert_dir)
    mgr = new_manager(rest, resync=3600, leader_election_namespace="default", leader_election_release_on_cancel=True,
                      lease_duration=lease, renew_deadline=lease * 2 / 3, retry_period=lease / 7.5, **role)
    inner = FooReconciler(mgr.get_client(), mgr.get_event_recorder_for(foo.CONTROLLER_AGENT_NAME))
    setup_foo_controller(mgr, Recording(inner), 2, own_writes=inner.own_writes)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    mgr.start(stop)
    if mgr.sharder is not None:
        stats = {"label_patches": mgr.sharder.moves, "drains": mgr.sharder.drains,
                 "webhook_assignments": mgr.shard_webhook.assigned if mgr.shard_webhook is not None else 0}
        Path(record + ".stats").write_text(json.dumps(stats))


class Replica:
    def __init__(self, server: ServerProcess, name: str, tmp: Path, lease: float, elect: bool = False,
                 cert_dir: Path | None = None) -> None:
        self.name = name
        self.record = tmp / f"{name}.rec"
        self.log = open(tmp / f"{name}.log", "w")  # noqa: SIM115 - closed in stop
        self.proc = subprocess.Popen([sys.executable, __file__, "--replica", name, "--kubeconfig",
                                      str(server.kubeconfig_path), "--record", str(self.record), "--lease", str(lease),
                                      *(["--elect"] if elect else []),
                                      *(["--cert-dir", str(cert_dir)] if cert_dir else [])],
                                     stdout=self.log, stderr=subprocess.STDOUT, cwd=ROOT)
        self.ps = psutil.Process(self.proc.pid)
        self.peak = 0
        self.killed_at: float | None = None

    def sample(self) -> None:
        if self.proc.poll() is None:
            try:
                self.peak = max(self.peak, self.ps.memory_info().rss)
            except psutil.NoSuchProcess:
                pass

    def cpu(self) -> float:
        t = self.ps.cpu_times()
        return float(t.user + t.system)

    def kill(self) -> None:
        self.killed_at = time.monotonic()
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()


def overlaps(replicas: list[Replica]) -> int:
    """Foos whose reconciles by two replicas overlap in time."""
    intervals: dict[str, list[tuple[float, float, str]]] = {}
    for r in replicas:
        if not r.record.exists():
            continue
        open_: dict[str, float] = {}
        for line in r.record.read_text().splitlines():
            kind, t, key = line.split()
            if kind == "S":
                open_[key] = float(t)
            elif key in open_:
                intervals.setdefault(key, []).append((open_.pop(key), float(t), r.name))
        end = r.killed_at if r.killed_at is not None else float("inf")
        for key, start in open_.items():
            intervals.setdefault(key, []).append((start, end, r.name))
    bad = 0
    for spans in intervals.values():
        if any(a[2] != b[2] and a[0] < b[1] and b[0] < a[1] for i, a in enumerate(spans) for b in spans[i + 1:]):
            bad += 1
    return bad


def state(api: JsonApi, live: set[str]) -> tuple[int, int, dict[str, int]]:
    """(Foos, Foos unowned: no live shard, draining or no Deployment, Foos per shard)."""
    foos = api.get(FOOS)["items"]
    deployments = {d["metadata"]["name"] for d in api.get(DEPLOYMENTS)["items"]}
    unowned = 0
    per: dict[str, int] = {}
    for f in foos:
        labels = f["metadata"].get("labels") or {}
        shard = labels.get(SHARD_LABEL, "")
        per[shard] = per.get(shard, 0) + 1
        if shard not in live or DRAIN_LABEL in labels or f["spec"]["deploymentName"] not in deployments:
            unowned += 1
    return len(foos), unowned, per


def wait_converged(api: JsonApi, live: set[str], n: int, replicas: list[Replica], need: str = "",
                   timeout: float = 1800) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        for r in replicas:
            r.sample()
        total, unowned, per = state(api, live)
        if total >= n and unowned == 0 and (not need or per.get(need, 0) > 0):
            return time.monotonic() - t0
        time.sleep(max(0.5, n / 10_000))  # two full lists per check: rarer for many Foos
    raise RuntimeError(f"not converged after {timeout}s: {state(api, live)}")


def create(api: JsonApi, names: list[str], created: dict[str, float] | None = None) -> None:
    def one(name: str) -> None:
        api.post(FOOS, {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                        "metadata": {"name": name}, "spec": {"deploymentName": name, "replicas": 1}})
        if created is not None:
            created[name] = time.perf_counter()

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(one, names))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def run(n_replicas: int, n_foos: int, lease: float, assign: str = "webhook") -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        server = ServerProcess(tmp)
        cert_dir: Path | None = None
        if assign == "webhook":
            from samplecontroller.runtime.webhook import write_self_signed

            cert_dir = tmp / "certs"
            cert_dir.mkdir()
            (cert_dir / "ca.crt").write_bytes(write_self_signed(cert_dir, ("127.0.0.1",)))
        try:
            install_crds(load_rest_client(kubeconfig=str(server.kubeconfig_path)), ROOT / "crds")
            http = urllib3.PoolManager(maxsize=32, ca_certs=str(server.ca_path), cert_reqs="CERT_REQUIRED")
            api = JsonApi(server.url, server.token, http)
            replicas = [Replica(server, f"r{i}", tmp, lease, cert_dir=cert_dir) for i in range(n_replicas)]
            everyone = list(replicas)
            live = {r.name for r in replicas}
            while len([x for x in api.get(LEASES)["items"] if x["metadata"]["name"] in live]) < n_replicas:
                time.sleep(0.2)
            if assign == "webhook":
                hooks = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
                while not api.get(hooks)["items"]:
                    time.sleep(0.2)
            added: dict[str, float] = {}
            created: dict[str, float] = {}
            watch_stop = threading.Event()

            def on_deployment(event: dict[str, Any], at: float) -> None:
                if event.get("type") == "ADDED":
                    added.setdefault(event["object"]["metadata"]["name"], at)

            api.watch(DEPLOYMENTS + "?watch=1&allowWatchBookmarks=false", on_deployment, watch_stop)
            server_ps = psutil.Process(server.proc.pid)
            server_cpu0 = sum(server_ps.cpu_times()[:2])
            cpu0 = {r.name: r.cpu() for r in replicas}
            t0 = time.monotonic()
            create(api, [f"foo-{i:05d}" for i in range(n_foos)], created)
            out: dict[str, Any] = {"replicas": n_replicas, "foos": n_foos, "assign": assign}
            out["seconds_to_all_deployments"] = round(wait_converged(api, live, n_foos, replicas) + 0, 1)
            out["seconds_from_first_create"] = round(time.monotonic() - t0, 1)
            latencies = [added[k] - created[k] for k in created if k in added]
            out["create_to_deployment_p50_p99"] = [round(percentile(latencies, 0.5), 2),
                                                   round(percentile(latencies, 0.99), 2)]
            out["server_cpu_s"] = round(sum(server_ps.cpu_times()[:2]) - server_cpu0, 1)
            out["replicas_cpu_s"] = round(sum(r.cpu() - cpu0[r.name] for r in replicas), 1)
            _, _, per = state(api, live)
            out["peak_rss_mib"] = {r.name: round(r.peak / 2**20) for r in replicas}
            out["cpu_ms_per_foo"] = {r.name: round(1000 * (r.cpu() - cpu0[r.name]) / max(1, per.get(r.name, 0)), 2)
                                     for r in replicas}
            out["foos_per_replica"] = {k: v for k, v in per.items() if k}
            total = n_foos
            if n_replicas >= 2:
                victim = replicas.pop(0)
                live.discard(victim.name)
                more = max(1, n_foos // 10)
                creator = threading.Thread(target=create, args=(api, [f"bar-{i:05d}" for i in range(more)]))
                creator.start()
                victim.kill()
                t1 = time.monotonic()
                creator.join()
                total += more
                wait_converged(api, live, total, replicas)
                out["seconds_to_converge_after_sigkill"] = round(time.monotonic() - t1, 1)
            new = Replica(server, f"r{n_replicas}", tmp, lease, cert_dir=cert_dir)
            replicas.append(new)
            everyone.append(new)
            live.add(new.name)
            t2 = time.monotonic()
            wait_converged(api, live, total, replicas, need=new.name)
            out["seconds_to_converge_after_adding_one"] = round(time.monotonic() - t2, 1)
            _, unowned, per = state(api, live)
            out["foos_per_replica_at_end"] = {k: v for k, v in per.items() if k}
            for r in replicas:
                r.stop()
            watch_stop.set()
            stats = [json.loads(p.read_text()) for p in tmp.glob("*.rec.stats")]
            out["label_patches"] = sum(x["label_patches"] for x in stats)
            out["webhook_assignments"] = sum(x["webhook_assignments"] for x in stats)
            out["reconciled_by_two_at_once"] = overlaps(everyone)
            out["unowned"] = unowned
            return out
        finally:
            for r in locals().get("everyone", []):
                r.stop()
            server.stop()


def takeover(n_foos: int, lease: float, warm: bool) -> dict[str, Any]:
    """Leader election (no sharding): a leader and, with ``warm``, a standby whose cache is synced
    (the Manager starts its cache before it is elected); without, the standby process starts when
    the leader dies (a cold take-over: it starts and lists everything then).
    The leader is SIGKILLed and one Foo changed at once: seconds until that change reaches its
    Deployment (the Lease's expiry included), and until the new leader's first reconcile."""
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        server = ServerProcess(tmp)
        started: list[Replica] = []
        try:
            install_crds(load_rest_client(kubeconfig=str(server.kubeconfig_path)), ROOT / "crds")
            http = urllib3.PoolManager(maxsize=32, ca_certs=str(server.ca_path), cert_reqs="CERT_REQUIRED")
            api = JsonApi(server.url, server.token, http)
            leader = Replica(server, "leader", tmp, lease, elect=True)
            started.append(leader)
            while not any(x["metadata"]["name"] == "bench-leader" for x in api.get(LEASES)["items"]):
                time.sleep(0.2)
            create(api, [f"foo-{i:05d}" for i in range(n_foos)])
            while len(api.get(DEPLOYMENTS)["items"]) < n_foos:
                time.sleep(0.5)
            if warm:
                started.append(Replica(server, "standby", tmp, lease, elect=True))
                time.sleep(max(5.0, n_foos / 2000))  # its cache syncs meanwhile (a standby has long been up)
            leader.kill()
            t0 = time.monotonic()
            if not warm:
                started.append(Replica(server, "standby", tmp, lease, elect=True))
            name = "foo-00000"
            body = json.dumps({"spec": {"replicas": 3}}).encode()
            http.request("PATCH", f"{server.url}{FOOS}/{name}", body=body,
                         headers={"Authorization": f"Bearer {server.token}",
                                  "Content-Type": "application/merge-patch+json"})
            while True:
                dep = api.get(f"{DEPLOYMENTS}/{name}")
                if dep["spec"]["replicas"] == 3:
                    break
                time.sleep(0.05)
            changed = time.monotonic() - t0
            record = started[-1].record
            first = min((float(line.split()[1]) for line in record.read_text().splitlines() if line[0] == "S"),
                        default=float("nan"))
            return {"takeover": "warm" if warm else "cold", "foos": n_foos, "lease_seconds": lease,
                    "seconds_to_user_change": round(changed, 2),
                    "seconds_to_first_reconcile": round(first - t0, 2)}
        finally:
            for r in started:
                r.stop()
            server.stop()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--foos", type=int, default=20_000)
    p.add_argument("--replicas", default="1,2,4")
    p.add_argument("--lease", type=float, default=15.0, help="shard Lease duration in seconds (default 15)")
    p.add_argument("--takeover", action="store_true",
                   help="measure a leader-elected take-over, warm standby against cold, instead")
    p.add_argument("--replica", help=argparse.SUPPRESS)
    p.add_argument("--elect", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--kubeconfig", help=argparse.SUPPRESS)
    p.add_argument("--assign", choices=("webhook", "controller", "both"), default="webhook",
                   help="how new Foos are assigned (default: webhook, as the Scaling out guide chooses)")
    p.add_argument("--record", help=argparse.SUPPRESS)
    p.add_argument("--cert-dir", default="", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.replica:
        replica_main(args.kubeconfig, args.replica, args.record, args.lease, args.elect, args.cert_dir)
        return
    if args.takeover:
        for warm in (True, False):
            print(json.dumps(takeover(args.foos, args.lease, warm)), flush=True)
        return
    for n in (int(x) for x in args.replicas.split(",")):
        for assign in (("controller", "webhook") if args.assign == "both" else (args.assign,)):
            print(json.dumps(run(n, args.foos, args.lease, assign)), flush=True)


if __name__ == "__main__":
    main()
