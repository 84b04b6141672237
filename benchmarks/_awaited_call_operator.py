"""bench_async.py's awaited-call workload on this toolkit: a controller of the ConfigMaps labelled
``bench=awaited`` in one namespace whose reconcile reads the ConfigMap from the cache and calls
an external HTTP service (1 s per call, ``_slow_service.py``, which counts the calls), once per
ConfigMap.

    python benchmarks/_awaited_call_operator.py --style async|sync --kubeconfig K --namespace NS
                                                --url URL --workers 1000

``async``: ``async def reconcile`` awaiting aiohttp, on the Manager's event loop; ``sync``: a
``def reconcile`` blocking in urllib3, ``--workers`` worker threads. Runs until killed.
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402
import urllib3  # noqa: E402

from samplecontroller import logs  # noqa: E402
from samplecontroller.apimachinery import errors  # noqa: E402
from samplecontroller.client.scheme import Scheme  # noqa: E402
from samplecontroller.kubernetes import scheme as kubescheme  # noqa: E402
from samplecontroller.kubernetes.apis.core.v1 import ConfigMap  # noqa: E402
from samplecontroller.rest import load_rest_client  # noqa: E402
from samplecontroller.runtime import controller  # noqa: E402
from samplecontroller.runtime.builder import controller_managed_by  # noqa: E402
from samplecontroller.runtime.manager import Manager, Options  # noqa: E402
from samplecontroller.runtime.predicate import new_predicate_funcs  # noqa: E402
from samplecontroller.runtime.reconcile import Request, Result  # noqa: E402

CALLED: set[Request] = set()  # one call per object (a resync must not call again)


def labelled(obj: Any) -> bool:
    return (obj.metadata.labels or {}).get("bench") == "awaited"


class AsyncCaller:
    def __init__(self, mgr: Manager, url: str, workers: int) -> None:
        self.client = mgr.get_async_client()
        self.url = url
        self.workers = workers
        self.session: aiohttp.ClientSession | None = None

    async def reconcile(self, request: Request) -> Result:
        try:
            await self.client.get(ConfigMap, request.namespace, request.name)
        except errors.NotFoundError:
            return Result()
        if request in CALLED:
            return Result()
        CALLED.add(request)
        if self.session is None:
            self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=self.workers))
        async with self.session.get(self.url) as resp:
            await resp.read()
        return Result()


class SyncCaller:
    def __init__(self, mgr: Manager, url: str, workers: int) -> None:
        self.client = mgr.get_client()
        self.url = url
        self.http = urllib3.PoolManager(maxsize=workers)

    def reconcile(self, request: Request) -> Result:
        try:
            self.client.get(ConfigMap, request.namespace, request.name)
        except errors.NotFoundError:
            return Result()
        if request in CALLED:  # one worker per request at a time: no race on one key
            return Result()
        CALLED.add(request)
        self.http.request("GET", self.url).data  # noqa: B018 - read the body
        return Result()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--style", choices=("async", "sync"), required=True)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--workers", type=int, default=1000)
    args = parser.parse_args()
    logs.setup(logs.parse_level("warning"))
    scheme = Scheme()
    kubescheme.add_to_scheme(scheme)
    rest = load_rest_client(kubeconfig=args.kubeconfig, pool_size=args.workers)
    mgr = Manager(rest, Options(namespaces=(args.namespace,)), scheme=scheme)
    caller: Any = (AsyncCaller if args.style == "async" else SyncCaller)(mgr, args.url, args.workers)
    (controller_managed_by(mgr).for_(ConfigMap, new_predicate_funcs(labelled))
     .with_options(controller.Options(max_concurrent_reconciles=args.workers)).named("awaited-call")
     .complete(caller))
    mgr.start(threading.Event())


if __name__ == "__main__":
    main()
