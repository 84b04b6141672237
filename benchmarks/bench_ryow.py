"""Benchmark: read your own writes (issue 26) on and off, per 1,000 parents.

The duplicate-children scenario of ``tests/runtime/children.py`` against a fresh embedded API
server in its own process: N parent ConfigMaps created at once (each followed by B data patches
from another writer: "bursts"), an operator that creates one child per parent with
``generateName`` and then marks the parent. For each operator shape, child kind and setting,
printed per 1,000 parents: duplicate children, extra writes (beyond one child and one mark per
parent), 409 Conflicts, reconciles, requests held back by the guard, their mean wait and the bound hits (timeouts),
p50/p99 latency from a parent's creation to the reconcile that marked it, and the wall time until
every parent is marked and the controller is idle.

    python benchmarks/bench_ryow.py [--parents 1000] [--bursts 0,3] [--workers 4] [--repeat 1]

Not a test: machines are noisy, so numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _apiserver_process import ServerProcess  # noqa: E402
from prometheus_client import REGISTRY  # noqa: E402

from samplecontroller.kubernetes.apis.core.v1 import ConfigMap, Secret  # noqa: E402
from samplecontroller.kubernetes.clientset import Clientset  # noqa: E402
from samplecontroller.rest import load_rest_client  # noqa: E402
from tests.runtime import children  # noqa: E402

_ns = itertools.count()


def _metric(name: str, controller: str) -> float:
    return REGISTRY.get_sample_value(name, {"controller": controller}) or 0.0


def _mean_wait(controller: str) -> float:
    """The mean time a held-back request waited for the cache (0 when none was held)."""
    n = _metric("controller_runtime_read_your_writes_wait_seconds_count", controller)
    return _metric("controller_runtime_read_your_writes_wait_seconds_sum", controller) / n if n else 0.0


def run(rest: Any, operator: type[Any], child: type[Any], on: bool, parents: int, bursts: int,
        workers: int) -> dict[str, float]:
    ns = f"bench-{next(_ns)}"
    Clientset(rest).core_v1().namespaces().create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    out = children.run_scenario(rest, ns, operator, parents=parents, bursts=bursts, workers=workers,
                                child=child, read_your_writes=on, timeout=600)
    name = f"children-{ns}"
    per = 1000.0 / parents
    return {
        "dups": out.duplicates * per, "extra": out.extra_writes * per, "409": out.counts.conflicts * per,
        "reconciles": out.counts.reconciles * per,
        "held": _metric("controller_runtime_read_your_writes_deferred_total", name) * per,
        "timeouts": _metric("controller_runtime_read_your_writes_timeouts_total", name),
        "wait_ms": _mean_wait(name) * 1000,
        "p50": out.latency(0.5) * 1000, "p99": out.latency(0.99) * 1000, "seconds": out.seconds,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parents", type=int, default=1000)
    ap.add_argument("--bursts", default="0,3")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    cols = ["dups", "extra", "409", "reconciles", "held", "wait_ms", "timeouts", "p50", "p99", "seconds"]
    print(f"{args.parents} parents, {args.workers} workers; counts per 1,000 parents; latency in ms "
          "(parent created -> marked); wait_ms = mean time a held request waited for the cache; "
          "timeouts = bound hits (total)")
    header = f"{'operator':<20} {'child':<10} {'bursts':>6} {'ryow':<4} " + " ".join(f"{c:>10}" for c in cols)
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp))
        try:
            rest = load_rest_client(kubeconfig=str(server.kubeconfig_path))
            for operator, child, bursts in itertools.product(
                    (children.AnnotateAfterCreate, children.ListThenUpdate), (ConfigMap, Secret),
                    [int(b) for b in args.bursts.split(",")]):
                for on in (False, True):
                    for _ in range(args.repeat):
                        row = run(rest, operator, child, on, args.parents, bursts, args.workers)
                        print(f"{operator.__name__:<20} {child.__name__:<10} {bursts:>6} {'on' if on else 'off':<4} "
                              + " ".join(f"{row[c]:>10.1f}" for c in cols), flush=True)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
