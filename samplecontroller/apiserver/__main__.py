"""``python -m samplecontroller.apiserver``: serve until SIGINT/SIGTERM, then exit 0.

Prints exactly one line, ``ready <url> kubeconfig=<path>``, once requests are accepted (and the
CRDs of ``--crds DIR [DIR...]`` are served). A ``--crds`` directory that does not exist, a file
that is not YAML, a document that is not a CRD: one line on stderr, exit 2, before anything
starts; a CRD the server rejects: one line, exit 1.

The process is the server's own, so it tunes the interpreter's cycle collector for a heap of
long-lived stored objects (``server.tune_gc``): what startup built (modules, the OpenAPI definitions,
the bootstrap policy) is frozen out of every collection once the server is ready, and the young
generation is collected every ``server.GC_THRESHOLD`` allocations instead of 700 (a write allocates
hundreds of containers; most are freed by reference counting, never by the collector).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from samplecontroller.apimachinery.durations import parse_duration
from samplecontroller.apiserver.preload import CRDError, create_crds, load_crds
from samplecontroller.apiserver.server import LocalAPIServer, big_stack_thread, is_https_url, tune_gc
from samplecontroller.apiserver.version import EmulationVersionError, parse_emulated_version


def _positive_duration(text: str) -> float:
    try:
        seconds = parse_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
    return seconds


def _emulated_version(text: str) -> int:
    try:
        return parse_emulated_version(text)
    except EmulationVersionError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m samplecontroller.apiserver",
                                     description="An embedded Kubernetes-compatible API server for development and tests.")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0 picks a free port)")
    parser.add_argument("--bind", default="127.0.0.1", help="address to listen on (default loopback only)")
    parser.add_argument("--data-dir", default=None, help="keep state in DIR (SQLite, WAL); default in memory")
    parser.add_argument("--kubeconfig", default=".local/kubeconfig", help="where to write the kubeconfig")
    parser.add_argument("--insecure-http", action="store_true", help="serve plain HTTP (debugging only)")
    parser.add_argument("--simulate-deployments", action="store_true",
                        help="set Deployment status replicas from spec after a short delay")
    parser.add_argument("--simulate-jobs", action="store_true",
                        help="run Jobs as the job controller would: Pods per parallelism/completions, status and "
                             "Complete/Failed conditions (Pods finish when their status.phase is set)")
    parser.add_argument("--event-ttl", type=_positive_duration, default=3600.0, metavar="DURATION",
                        help="how long an Event is kept after its last write (default 1h, as kube-apiserver)")
    parser.add_argument("--history-window", type=_positive_duration, default=75.0, metavar="DURATION",
                        help="how long watch history is kept (default 75s, as kube-apiserver's watch cache); "
                             "a watch from an older resourceVersion gets 410 Expired")
    parser.add_argument("--bookmark-interval", type=_positive_duration, default=60.0, metavar="DURATION",
                        help="how often a watch that allows bookmarks gets one (default 1m, as kube-apiserver's "
                             "watch cache; also 2s before a watch's timeout)")
    parser.add_argument("--api-audiences", default="", metavar="AUDIENCES",
                        help="comma-separated audiences a service account token must name one of to authenticate "
                             "(default: the issuer, as kube-apiserver's --api-audiences)")
    parser.add_argument("--service-account-jwks-uri", default="", metavar="URI",
                        help="the jwks_uri of /.well-known/openid-configuration (default: this server's "
                             "own address + /openid/v1/jwks, as kube-apiserver's --service-account-jwks-uri)")
    parser.add_argument("--crds", nargs="+", action="extend", default=[], metavar="DIR", type=Path,
                        help="install the CustomResourceDefinitions of every *.yaml file in DIR before serving "
                             "(repeatable)")
    parser.add_argument("--emulated-version", type=_emulated_version, default=None, metavar="1.MINOR",
                        help="serve the API of an older Kubernetes minor version (1.33 to 1.36), as "
                             "kube-apiserver's --emulated-version: /version, discovery and the served "
                             "group/versions follow it (default: 1.37, this server's)")
    args = parser.parse_args(argv)
    if args.service_account_jwks_uri and not is_https_url(args.service_account_jwks_uri):
        parser.error(f"--service-account-jwks-uri requires an https URL, got {args.service_account_jwks_uri!r}")
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be between 0 and 65535, got {args.port}")
    return args


class _Stopper:
    """SIGINT/SIGTERM, caught on the main thread, set the serving loop's stop event (the loop runs
    on a thread of its own: ``server.big_stack_thread``)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requested = False
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stop: asyncio.Event | None = None

    def attach(self, loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> None:
        with self.lock:
            self.loop, self.stop = loop, stop
            if self.requested:
                stop.set()

    def request(self, *_: object) -> None:
        with self.lock:
            self.requested = True
            if self.loop is not None and self.stop is not None:
                try:
                    self.loop.call_soon_threadsafe(self.stop.set)
                except RuntimeError:  # the loop is already closed
                    pass


async def _serve(args: argparse.Namespace, crds: list[dict[str, Any]], stopper: _Stopper) -> None:
    server = LocalAPIServer(data_dir=args.data_dir, simulate_deployments=args.simulate_deployments,
                            simulate_jobs=args.simulate_jobs,
                            kubeconfig_path=Path(args.kubeconfig), port=args.port, bind=args.bind,
                            insecure_http=args.insecure_http, event_ttl=args.event_ttl,
                            history_window=args.history_window, bookmark_interval=args.bookmark_interval,
                            api_audiences=tuple(a for a in args.api_audiences.split(",") if a),
                            service_account_jwks_uri=args.service_account_jwks_uri,
                            emulated_version=args.emulated_version)
    stop = asyncio.Event()
    stopper.attach(asyncio.get_running_loop(), stop)
    await server.serve_async()
    try:
        if crds:
            assert server.core is not None
            create_crds(server.core, crds)
    except BaseException:
        await server.shutdown_async()
        raise
    tune_gc()
    print(f"ready {server.url} kubeconfig={server.kubeconfig_path}", flush=True)
    try:
        await stop.wait()
    finally:
        await server.shutdown_async()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        crds = load_crds(args.crds)
    except CRDError as err:
        print(f"error: --crds: {err}", file=sys.stderr)
        return 2
    stopper = _Stopper()
    failed: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(_serve(args, crds, stopper))
        except BaseException as err:  # reported by the main thread
            failed.append(err)

    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, stopper.request)
    # the loop runs on a thread with a large stack: values nested 10,000 deep (see bodies)
    thread = big_stack_thread(run, "apiserver")
    while thread.is_alive():
        thread.join(0.5)
    try:
        if failed:
            raise failed[0]
    except CRDError as err:
        print(f"error: --crds: {err}", file=sys.stderr)
        return 1
    except OSError as err:
        print(f"error: cannot start the API server: {err}", file=sys.stderr)
        return 1
    # state is flushed and closed; skip freeing a possibly large heap object by object
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
