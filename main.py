#!/usr/bin/env python3
"""Run the sample-controller against a cluster, or against the embedded API server (--local).

A port of k8s.io/sample-controller's main.go. A user mistake (a missing or invalid kubeconfig,
an unreachable server, the Foo CRD not installed, a bad flag) is one clear line on stderr and
exit status 1, never a traceback. SIGINT/SIGTERM stop the informers, let work in progress
finish (bounded by --shutdown-timeout) and exit 0; a second signal exits 1.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from samplecontroller.flags import OneLineParser, port, positive_int

ROOT = Path(__file__).resolve().parent
LOCAL_DIR = ROOT / ".local"
LOCAL_PORT = 6443
DEFAULT_WORKERS = 4
"""Go's sample-controller runs 2 workers (goroutines are cheap and its round trips short). A
worker here is a thread that spends most of a sync waiting on round trips to the API server, so
4 overlap more of that waiting; more than that mostly contends for the GIL and the server, and
lets a burst outrun the single event-sink thread (best-effort events get dropped). See
docs/reference/sample-controller.md."""


def _non_negative(value: str) -> float:
    try:
        n = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if n < 0 or n != n:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return n


def _duration(value: str) -> float:
    """Seconds, or a Go-style duration: 30s, 5m, 1h, 500ms."""
    v = value.strip()
    units = (("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0))
    try:
        for suffix, scale in units:
            if v.endswith(suffix) and not (suffix == "s" and v.endswith("ms")):
                seconds = float(v[: -len(suffix)]) * scale
                break
        else:
            seconds = float(v)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a duration (examples: 30, 30s, 5m, 1h)") from None
    if seconds < 0:
        raise argparse.ArgumentTypeError(f"{value!r} is negative")
    return seconds


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = OneLineParser(prog="main.py", description="The sample-controller: keeps a Deployment per Foo.")
    p.add_argument("--kubeconfig", default="", help="Path to a kubeconfig. Only required if out-of-cluster.")
    p.add_argument("--master", default="",
                   help="The address of the Kubernetes API server. Overrides any value in kubeconfig. "
                        "Only required if out-of-cluster.")
    p.add_argument("--local", action="store_true",
                   help="Start the embedded API server (data under .local/), install crds/, run the controller on it.")
    p.add_argument("--local-dir", type=Path, default=LOCAL_DIR,
                   help="With --local: where the embedded API server keeps its data and kubeconfig (default .local/).")
    p.add_argument("--port", type=port, default=None,
                   help=f"With --local: the embedded API server's HTTPS port (default {LOCAL_PORT}, the usual "
                        "Kubernetes API port, so .local/kubeconfig stays valid across runs; 0 picks a free port).")
    p.add_argument("--emulated-version", default="", metavar="1.MINOR",
                   help="With --local: serve the API of Kubernetes 1.MINOR (1.33 to 1.36) as kube-apiserver's "
                        "--emulated-version does (default: 1.37).")
    p.add_argument("--workers", type=positive_int, default=DEFAULT_WORKERS,
                   help=f"Number of concurrent workers (default {DEFAULT_WORKERS}).")
    p.add_argument("--resync", type=_duration, default=30.0, help="Informer resync period (default 30s).")
    p.add_argument("--namespace", default="", help="Only watch this namespace (default: all namespaces).")
    p.add_argument("--controller", choices=("classic", "runtime", "async"), default="classic",
                   help="classic: controller.py (client-go style); runtime: the controller-runtime style FooReconciler; "
                        "async: the same as an async reconciler (tasks on one event loop; --workers bounds them).")
    p.add_argument("--leader-elect", action="store_true", help="Use a Lease for leader election.")
    p.add_argument("--leader-election-namespace", default="",
                   help="Namespace of the leader election Lease (default: the pod's namespace, else default).")
    p.add_argument("--leader-election-id", default="sample-controller-lock", help="Name of the leader election Lease.")
    p.add_argument("--shard-ring", default="",
                   help="Shard the controller across replicas (any --controller): this replica holds its own "
                        "shard Lease labelled with this ring (in --leader-election-namespace) and reconciles "
                        "only the Foos assigned to it; an elected sharder assigns them. Excludes --leader-elect.")
    p.add_argument("--metrics-bind-address", default="0",
                   help='Address for the Prometheus /metrics endpoint, e.g. ":8080"; "0" disables it.')
    p.add_argument("--health-probe-bind-address", default="0",
                   help='Address for /healthz and /readyz, e.g. ":8081"; "0" disables it.')
    p.add_argument("--kube-api-qps", type=_non_negative, default=0.0,
                   help="Client-side limit of requests per second to the API server (client-go's QPS); "
                        "0 (the default) leaves flow control to the server.")
    p.add_argument("--kube-api-burst", type=positive_int, default=10,
                   help="Requests allowed in a burst above --kube-api-qps (default 10).")
    p.add_argument("-v", "--log-level", default="info",
                   help="debug, info, warning, error, or a klog verbosity number (>=4 is debug).")
    p.add_argument("--exec-plugin-timeout", type=_duration, default=60.0,
                   help="Bound on one run of a kubeconfig exec credential plugin: past it the plugin is killed "
                        "and main.py exits naming it (default 60s; client-go has no bound).")
    p.add_argument("--shutdown-timeout", type=_duration, default=30.0,
                   help="Bound on the whole shutdown after a stop signal: items in progress may finish, "
                        "queued ones are dropped (default 30s).")
    args = p.parse_args(argv)
    if args.port is not None and not args.local:
        p.error("--port applies only with --local (the embedded API server)")
    if args.emulated_version and not args.local:
        p.error("--emulated-version applies only with --local (the embedded API server)")
    if args.port is None:
        args.port = LOCAL_PORT
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    from samplecontroller import logs

    try:
        level = logs.parse_level(args.log_level)
    except ValueError as err:
        print(f"main.py: error: {err}", file=sys.stderr)
        return 1
    logs.setup(level)

    from samplecontroller import signals
    from samplecontroller.app import run

    stop = signals.setup_signal_handler()
    try:
        return run(args, stop, local_dir=args.local_dir, crds_dir=ROOT / "crds")
    except KeyboardInterrupt:
        return 1


def _missing_dependency(err: ModuleNotFoundError) -> bool:
    """Whether ``err`` is a third-party package that is not installed (a Python without .venv)."""
    return bool(err.name) and str(err.name).split(".")[0] not in ("samplecontroller", "generated")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    try:
        sys.exit(main())
    except ModuleNotFoundError as err:
        if not _missing_dependency(err):
            raise
        print(f"main.py: error: the Python package {err.name!r} is not installed in {sys.executable}; "
              "run `make run` (it sets up .venv), or `make venv` then `.venv/bin/python main.py ...`", file=sys.stderr)
        sys.exit(1)
