"""Benchmark: informer initial sync of N Deployments served over local HTTP (N = 10,000 and 100,000).

Compared, each in a fresh process against the same static server (benchmarks/_deployments_server.py,
in its own process):
- ``samplecontroller``: ``cache.SharedIndexInformer`` over the typed ``ResourceClient`` (msgspec
  straight into the generated gc=False models, paged lists of 500), from start until ``has_synced``;
- ``samplecontroller+strip``: the same with ``set_transform`` dropping managedFields;
- ``compact off``: ``samplecontroller`` with ``compact_objects=False`` (no sharing of equal strings
  and sub-objects between cached objects; managedFields keep their list page alive);
- ``official informer``: ``kubernetes.informer.SharedInformer`` (kubernetes 37) over
  ``AppsV1Api.list_namespaced_deployment``, until its cache holds N objects;
- ``fetch+json.loads``: one unpaged GET with urllib3 and ``json.loads`` into a dict by key.

Printed: seconds to sync, RSS growth (MB) and RSS per cached object (KB), speed relative to the
official informer. A second table, for the samplecontroller cache, times a full ``gc.collect()``
after the sync with the cache frozen (``gc.freeze()``, what the informer does) and unfrozen, and
counts the objects the collector tracks: this is the measurement behind choosing gc.freeze() on
top of gc=False models.

    python benchmarks/bench_informer.py [--sizes 10000,100000]

Not a test: numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
HERE = Path(__file__).resolve().parent


def rss() -> int:
    return int(psutil.Process().memory_info().rss)


def _ours(url: str, n: int, strip: bool, compact: bool = True) -> dict[str, Any]:
    import msgspec
    from kubernetes import client as k8s

    from samplecontroller.cache import SharedIndexInformer
    from samplecontroller.client import ResourceClient
    from samplecontroller.kubernetes.apis.apps.v1 import DEPLOYMENTS
    from samplecontroller.rest import RESTClient

    cfg = k8s.Configuration()
    cfg.host = url
    rc: ResourceClient[Any, Any] = ResourceClient(RESTClient.from_config(cfg), DEPLOYMENTS, "default")
    inf: SharedIndexInformer[Any] = SharedIndexInformer(rc.lister_watcher(), DEPLOYMENTS.model, 0.0,
                                                        compact_objects=compact)
    if strip:
        def drop(o: Any) -> Any:
            return msgspec.structs.replace(o, metadata=msgspec.structs.replace(o.metadata, managed_fields=msgspec.UNSET))
        inf.set_transform(drop)
    gc.collect()
    before = rss()
    stop = threading.Event()
    t0 = time.perf_counter()
    threading.Thread(target=inf.run, args=(stop,), daemon=True).start()
    while not inf.has_synced():
        time.sleep(0.002)
    elapsed = time.perf_counter() - t0
    assert len(inf.get_store().list_keys()) == n
    after = rss()
    frozen_t0 = time.perf_counter()
    gc.collect()
    frozen_gc = time.perf_counter() - frozen_t0
    frozen_tracked = len(gc.get_objects())
    permanent = gc.get_freeze_count()
    gc.unfreeze()
    t1 = time.perf_counter()
    gc.collect()
    unfrozen_gc = time.perf_counter() - t1
    unfrozen_tracked = len(gc.get_objects())
    freeze_t0 = time.perf_counter()
    gc.freeze()
    freeze_cost = time.perf_counter() - freeze_t0
    stop.set()
    return {"seconds": elapsed, "rss": after - before, "gc_frozen": frozen_gc, "gc_unfrozen": unfrozen_gc,
            "tracked_frozen": frozen_tracked, "tracked_unfrozen": unfrozen_tracked, "permanent": permanent,
            "freeze_cost": freeze_cost}


def _official(url: str, n: int) -> dict[str, Any]:
    from kubernetes import client as k8s
    from kubernetes.informer import SharedInformer

    cfg = k8s.Configuration()
    cfg.host = url
    api = k8s.AppsV1Api(k8s.ApiClient(cfg))
    inf = SharedInformer(api.list_namespaced_deployment, namespace="default")  # type: ignore[no-untyped-call]
    gc.collect()
    before = rss()
    t0 = time.perf_counter()
    inf.start()  # type: ignore[no-untyped-call]
    while len(inf.cache.list_keys()) < n:
        time.sleep(0.002)
    elapsed = time.perf_counter() - t0
    after = rss()
    inf._stop_event.set()
    return {"seconds": elapsed, "rss": after - before}


def _fetch(url: str, n: int) -> dict[str, Any]:
    import urllib3

    pool = urllib3.PoolManager()
    gc.collect()
    before = rss()
    t0 = time.perf_counter()
    resp = pool.request("GET", f"{url}/apis/apps/v1/namespaces/default/deployments")
    data = json.loads(resp.data)
    cache = {f"{o['metadata']['namespace']}/{o['metadata']['name']}": o for o in data["items"]}
    del resp, data
    elapsed = time.perf_counter() - t0
    assert len(cache) == n
    after = rss()
    return {"seconds": elapsed, "rss": after - before}


VARIANTS = ["samplecontroller", "samplecontroller+strip", "compact off", "official informer", "fetch+json.loads"]


def child(variant: str, url: str, n: int) -> None:
    if variant == "samplecontroller":
        out = _ours(url, n, strip=False)
    elif variant == "samplecontroller+strip":
        out = _ours(url, n, strip=True)
    elif variant == "compact off":
        out = _ours(url, n, strip=False, compact=False)
    elif variant == "official informer":
        out = _official(url, n)
    else:
        out = _fetch(url, n)
    print(json.dumps(out), flush=True)
    os._exit(0)


def run_child(variant: str, url: str, n: int, timeout: float) -> dict[str, Any] | None:
    proc = subprocess.run([sys.executable, __file__, "--child", variant, "--url", url, "--n", str(n)],
                          capture_output=True, text=True, timeout=timeout, check=False)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        print(f"  {variant}: failed: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--child")
    parser.add_argument("--url")
    parser.add_argument("--n", type=int)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.url, args.n)
        return
    gc_rows = []
    print(f"{'objects':>8} {'variant':<24} {'sync s':>8} {'RSS MB':>8} {'KB/obj':>7} {'vs official':>11}")
    for n in (int(s) for s in args.sizes.split(",")):
        server = subprocess.Popen([sys.executable, str(HERE / "_deployments_server.py"), str(n)],
                                  stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None
            url = f"http://127.0.0.1:{server.stdout.readline().strip()}"
            results = {v: run_child(v, url, n, args.timeout) for v in VARIANTS}
        finally:
            server.terminate()
            server.wait(10)
        official = results.get("official informer")
        for v, r in results.items():
            if r is None:
                continue
            ratio = f"{official['seconds'] / r['seconds']:.1f}x" if official else "-"
            print(f"{n:>8} {v:<24} {r['seconds']:>8.2f} {r['rss'] / 2**20:>8.1f} {r['rss'] / n / 1024:>7.2f} "
                  f"{ratio:>11}")
            if "gc_frozen" in r:
                gc_rows.append((n, v, r))
    print()
    print(f"{'objects':>8} {'variant':<24} {'full gc frozen ms':>18} {'unfrozen ms':>12} {'tracked frozen':>15} "
          f"{'unfrozen':>9} {'freeze() us':>11}")
    for n, v, r in gc_rows:
        print(f"{n:>8} {v:<24} {r['gc_frozen'] * 1000:>18.1f} {r['gc_unfrozen'] * 1000:>12.1f} "
              f"{r['tracked_frozen']:>15} {r['tracked_unfrozen']:>9} {r['freeze_cost'] * 1e6:>11.0f}")


if __name__ == "__main__":
    main()
