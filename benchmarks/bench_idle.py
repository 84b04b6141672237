"""Benchmark: idle cost of an informer holding 10,000 cached Deployments.

The informer lists N Deployments from a static local server (benchmarks/_deployments_server.py,
in its own process) whose watch stays open and silent; after the sync, this process's CPU time
(``time.process_time``: user + system, all threads) is measured over ``--seconds`` (default 30) with no changes.
Two rows: one handler without resync, and one handler with a (long) resync period, which
keeps the once-a-second resync check running. Target: under 1% of one core.

    python benchmarks/bench_idle.py [--objects 10000] [--seconds 30]

Not a test: numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
HERE = Path(__file__).resolve().parent

from kubernetes import client as k8s  # noqa: E402

from samplecontroller.cache import ResourceEventHandlerFuncs, SharedIndexInformer  # noqa: E402
from samplecontroller.client import ResourceClient  # noqa: E402
from samplecontroller.kubernetes.apis.apps.v1 import DEPLOYMENTS  # noqa: E402
from samplecontroller.rest import RESTClient  # noqa: E402


def measure(url: str, n: int, seconds: float, resync: float) -> tuple[float, float]:
    cfg = k8s.Configuration()
    cfg.host = url
    rc: ResourceClient[Any, Any] = ResourceClient(RESTClient.from_config(cfg), DEPLOYMENTS, "default")
    inf: SharedIndexInformer[Any] = SharedIndexInformer(rc.lister_watcher(), DEPLOYMENTS.model, 0.0)
    count = [0]
    inf.add_event_handler(ResourceEventHandlerFuncs(add_func=lambda o, initial: count.__setitem__(0, count[0] + 1)),
                          resync_period=resync)
    stop = threading.Event()
    thread = threading.Thread(target=inf.run, args=(stop,), daemon=True)
    thread.start()
    t0 = time.perf_counter()
    while count[0] < n:
        time.sleep(0.01)
    sync = time.perf_counter() - t0
    time.sleep(1.0)  # let the watch open and every thread settle
    before = time.process_time()  # CPU time of every thread of this process, ns resolution
    time.sleep(seconds)
    used = time.process_time() - before
    stop.set()
    thread.join(10)
    return sync, used / seconds * 100.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    server = subprocess.Popen([sys.executable, str(HERE / "_deployments_server.py"), str(args.objects)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{server.stdout.readline().strip()}"
        print(f"{'objects':>8} {'handler':<26} {'sync s':>7} {'idle CPU % of one core':>23}")
        for label, resync in (("no resync", 0.0), ("resync 10h (1 s checks)", 36000.0)):
            sync, pct = measure(url, args.objects, args.seconds, resync)
            print(f"{args.objects:>8} {label:<26} {sync:>7.2f} {pct:>23.3f}")
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
