"""Benchmark: the Foo controller's memory at N Foos (default 16,000), and informer bytes per cached object.

For each controller style (``classic``: client-go style ``samplecontroller/controller.py``;
``runtime``: controller-runtime style ``samplecontroller/foo_reconciler.py``): a fresh embedded API
server in its own process (Deployment simulator on), the CRDs, ``main.py --controller STYLE`` as a
subprocess with its default flags (events on, its own managedFields transform), then N Foos created
at once by 16 client threads. The controller's RSS is sampled every 0.1 s until every Deployment
exists and every Foo's status shows the simulated availableReplicas. Printed: RSS once started
(caches empty), peak RSS, RSS at the end, and seconds until all synced.

Then, against the last server (N Deployments and N Foos as the embedded server returns them,
managedFields and all), a fresh process per variant runs one ``SharedIndexInformer`` of
Deployments or Foos (no transform, the informer's defaults) until synced, and prints RSS growth
per cached object: ``default`` (the informer as it ships), ``compact off``
(``compact_objects=False``) and ``strip`` (``cache.strip_managed_fields`` as transform, what both
sample controllers set).

    python benchmarks/bench_memory.py [--foos 16000] [--styles classic,runtime] [--no-informer]

Not a test: machines are noisy, so numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import gc
import inspect
import json
import os
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
INFORMER_VARIANTS = ("default", "compact off", "strip")


def run_controller(server: ServerProcess, style: str, n: int, tmp: Path) -> dict[str, float]:
    """Start ``main.py --controller style``, create ``n`` Foos, sample its RSS until all are synced."""
    http = urllib3.PoolManager(maxsize=32, ca_certs=str(server.ca_path), cert_reqs="CERT_REQUIRED")
    api = JsonApi(server.url, server.token, http)
    deployed: set[str] = set()
    synced: set[str] = set()
    done = threading.Event()

    def on_deployment(ev: dict[str, Any], _t: float) -> None:
        deployed.add(ev["object"]["metadata"]["name"])
        if len(deployed) >= n and len(synced) >= n:
            done.set()

    def on_foo(ev: dict[str, Any], _t: float) -> None:
        obj = ev["object"]
        if (obj.get("status") or {}).get("availableReplicas") == obj["spec"]["replicas"]:
            synced.add(obj["metadata"]["name"])
            if len(deployed) >= n and len(synced) >= n:
                done.set()

    stop = threading.Event()
    api.watch(DEPLOYMENTS_WATCH, on_deployment, stop)
    api.watch(FOOS_WATCH, on_foo, stop)
    log = open(tmp / f"controller-{style}.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, str(ROOT / "main.py"), "--kubeconfig", str(server.kubeconfig_path),
                             "--controller", style], stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    ps = psutil.Process(proc.pid)
    try:
        time.sleep(2.0)  # let the controller start and sync its (empty) caches
        idle = ps.memory_info().rss
        peak = idle

        def create(i: int) -> None:
            name = f"foo-{i:05d}"
            api.post(FOOS, {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                            "metadata": {"name": name}, "spec": {"deploymentName": name, "replicas": 1}})

        t0 = time.perf_counter()
        creator = threading.Thread(target=lambda: list(ThreadPoolExecutor(16).map(create, range(n))), daemon=True)
        creator.start()
        deadline = time.monotonic() + 1800
        while not done.is_set() and time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"the {style} controller exited with {proc.returncode}; see its log")
            peak = max(peak, ps.memory_info().rss)
            time.sleep(0.1)
        elapsed = time.perf_counter() - t0
        end = ps.memory_info().rss
        creator.join()
    finally:
        stop.set()
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
    return {"idle": idle / 2**20, "peak": max(peak, end) / 2**20, "end": end / 2**20, "seconds": elapsed,
            "deployed": len(deployed), "synced": len(synced)}


def informer_child(kubeconfig: str, resource: str, variant: str) -> None:
    """In a fresh process: RSS growth per object of one informer, printed as JSON."""
    from generated.apis.samplecontroller.v1alpha1 import FOOS as FOO_INFO
    from samplecontroller.cache import SharedIndexInformer, strip_managed_fields
    from samplecontroller.client import ResourceClient
    from samplecontroller.kubernetes.apis.apps.v1 import DEPLOYMENTS

    info = DEPLOYMENTS if resource == "deployments" else FOO_INFO
    rc: ResourceClient[Any, Any] = ResourceClient(load_rest_client(kubeconfig=kubeconfig), info, "default")
    kwargs: dict[str, Any] = {}
    if variant == "compact off":
        if "compact_objects" not in inspect.signature(SharedIndexInformer).parameters:
            print(json.dumps({"skipped": True}), flush=True)
            os._exit(0)
        kwargs["compact_objects"] = False
    inf: SharedIndexInformer[Any] = SharedIndexInformer(rc.lister_watcher(), info.model, 0.0, **kwargs)
    if variant == "strip":
        inf.set_transform(strip_managed_fields)
    gc.collect()
    before = psutil.Process().memory_info().rss
    stop = threading.Event()
    threading.Thread(target=inf.run, args=(stop,), daemon=True).start()
    while not inf.has_synced():
        time.sleep(0.005)
    gc.collect()
    after = psutil.Process().memory_info().rss
    n = len(inf.get_store().list_keys())
    print(json.dumps({"n": n, "bytes": after - before}), flush=True)
    os._exit(0)


def run_informer(kubeconfig: Path, resource: str, variant: str) -> dict[str, Any] | None:
    proc = subprocess.run([sys.executable, __file__, "--child", resource, "--variant", variant,
                           "--kubeconfig", str(kubeconfig)], capture_output=True, text=True, timeout=900, check=False)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        print(f"  informer {resource}/{variant}: failed: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    out: dict[str, Any] = json.loads(lines[-1])
    return None if out.get("skipped") else out


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--foos", type=int, default=16000)
    p.add_argument("--styles", default="classic,runtime")
    p.add_argument("--no-informer", action="store_true", help="skip the bytes-per-cached-object table")
    p.add_argument("--child")
    p.add_argument("--variant")
    p.add_argument("--kubeconfig")
    args = p.parse_args()
    if args.child:
        informer_child(args.kubeconfig, args.child, args.variant)
        return
    print(f"Foo controller memory, {args.foos} Foos created at once; python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs; root {ROOT}")
    header = f"{'style':>8} | {'RSS MB idle':>11} | {'peak':>7} | {'end':>7} | {'all synced s':>12} | {'load before/after':>30}"
    print(header)
    print("-" * len(header))
    styles = [s for s in args.styles.split(",") if s]
    with tempfile.TemporaryDirectory() as tmp:
        last: ServerProcess | None = None
        try:
            for i, style in enumerate(styles):
                workdir = Path(tmp) / style
                workdir.mkdir()
                server = ServerProcess(workdir, "--simulate-deployments")
                install_crds(load_rest_client(kubeconfig=str(server.kubeconfig_path)), ROOT / "crds")
                before = load()
                r = run_controller(server, style, args.foos, workdir)
                print(f"{style:>8} | {r['idle']:>11.1f} | {r['peak']:>7.1f} | {r['end']:>7.1f} | {r['seconds']:>12.1f} | "
                      f"{before} / {load():>14}" + ("" if r["synced"] >= args.foos else f"  (only {r['synced']:.0f} synced)"),
                      flush=True)
                if i < len(styles) - 1 or args.no_informer:
                    server.stop()
                else:
                    last = server
            if last is not None:
                print()
                print(f"informer bytes per cached object (objects as the embedded server returned them), load {load()}")
                print(f"{'resource':>12} | {'variant':>12} | {'objects':>7} | {'RSS MB':>7} | {'KB/object':>9}")
                for resource in ("deployments", "foos"):
                    for variant in INFORMER_VARIANTS:
                        out = run_informer(last.kubeconfig_path, resource, variant)
                        if out is not None:
                            print(f"{resource:>12} | {variant:>12} | {out['n']:>7} | {out['bytes'] / 2**20:>7.1f} | "
                                  f"{out['bytes'] / max(out['n'], 1) / 1024:>9.2f}", flush=True)
        finally:
            if last is not None:
                last.stop()


if __name__ == "__main__":
    main()
