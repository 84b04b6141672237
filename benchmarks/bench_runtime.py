"""Benchmark: the runtime layer (FooReconciler) beside controller.py on the same work.

For each controller style (``main.py --controller classic`` and ``--controller runtime``) and
worker count: a fresh embedded API server (deployment-status simulator on), ``main.py`` as a
subprocess, N Foos created at once; time until every Deployment exists and every Foo's status
is synced. Printed: seconds, reconciles/s (N / seconds), controller CPU seconds, and the runtime
layer's overhead against the classic controller (target: under 20%).

    python benchmarks/bench_runtime.py [--foos 1000] [--workers 2]

Not a test: numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _bench_controller() -> Any:
    spec = importlib.util.spec_from_file_location("bench_controller", ROOT / "benchmarks" / "bench_controller.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_style(bc: Any, style: str, n_foos: int, workers: int) -> dict[str, float]:
    """bench_controller.run_once with ``--controller style`` added to main.py's arguments."""
    real_popen = subprocess.Popen

    def popen(args: list[str], *a: Any, **kw: Any) -> Any:
        if any(str(arg).endswith("main.py") for arg in args):
            args = [*args, "--controller", style]
        return real_popen(args, *a, **kw)

    bc.subprocess.Popen = popen
    try:
        result: dict[str, float] = bc.run_once(n_foos, workers)
        return result
    finally:
        bc.subprocess.Popen = real_popen


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--foos", type=int, default=1000)
    p.add_argument("--workers", default="2")
    args = p.parse_args()
    bc = _bench_controller()
    print(f"runtime layer vs controller.py: {args.foos} Foos created at once (embedded API server, simulator on)")
    print(f"{'style':>8} {'workers':>7} {'done':>6} {'total s':>8} {'rec/s':>8} {'p50 ms':>8} {'cpu s':>7} {'rss MB':>7}")
    for workers in (int(w) for w in args.workers.split(",")):
        rows = {}
        for style in ("classic", "runtime"):
            r = run_style(bc, style, args.foos, workers)
            rows[style] = r
            print(f"{style:>8} {workers:>7} {int(r['synced']):>6} {r['total_s']:>8.2f} "
                  f"{args.foos / r['total_s']:>8.1f} {r['p50_ms']:>8.1f} {r['cpu_s']:>7.2f} {r['rss_mb']:>7.1f}")
        overhead = rows["runtime"]["total_s"] / rows["classic"]["total_s"] - 1
        cpu_overhead = rows["runtime"]["cpu_s"] / max(rows["classic"]["cpu_s"], 1e-9) - 1
        print(f"{'':>8} {workers:>7} runtime overhead: wall {overhead:+.1%}, controller CPU {cpu_overhead:+.1%}")


if __name__ == "__main__":
    main()
