"""Benchmark: the client layer (REST round trips, watch decoding, selectors, the fake tracker).

Rows (median of ``--repeat`` runs; loopback aiohttp server in this process, one Foo object):
- ``GET typed``: ``ResourceClient.get`` into the generated ``Foo`` (urllib3 pool + msgspec);
- ``GET official``: the ``kubernetes`` package's ``CustomObjectsApi.get_namespaced_custom_object``
  against the same server (json.loads into dicts), for comparison;
- ``UPDATE typed``: ``ResourceClient.update`` of a struct (one PUT); with
  ``preserve_unknown_fields=True`` (GET live JSON, overlay, PUT: the price of never dropping
  unknown fields); ``UPDATE dict``: the same through a dict client (PUT only);
- ``WATCH decode``: events/s through ``ResourceWatch`` over one streamed response;
- ``labels.parse`` (parsing, and a cache hit) / ``Selector.matches`` on a six-term selector;
- ``fake create+get+update``: one cycle on ``FakeResourceClient`` (tracker in memory).

    python benchmarks/bench_client.py [--requests 2000] [--events 20000] [--repeat 3]

Numbers are printed, never asserted (machines are noisy).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import kubernetes  # noqa: E402
from aiohttp import web  # noqa: E402

from generated.apis.samplecontroller.v1alpha1 import FOOS  # noqa: E402
from samplecontroller.apimachinery import labels  # noqa: E402
from samplecontroller.client import ResourceClient  # noqa: E402
from samplecontroller.client.dynamic import DynamicClient  # noqa: E402
from samplecontroller.rest import RESTClient  # noqa: E402
from samplecontroller.testing import FakeClientsetBase, FakeResourceClient  # noqa: E402

FOO = {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
       "metadata": {"name": "example-foo", "namespace": "default", "uid": "6f1c", "resourceVersion": "7",
                    "generation": 1, "creationTimestamp": "2024-01-01T00:00:00Z",
                    "labels": {"app": "web", "tier": "front"}, "annotations": {"note": "x" * 40}},
       "spec": {"deploymentName": "example-foo", "replicas": 1, "futureField": {"kept": True}},
       "status": {"availableReplicas": 1}}
FOO_BYTES = json.dumps(FOO).encode()
PATH = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos"


def start_server(events: int) -> tuple[str, asyncio.AbstractEventLoop]:
    event_line = b'{"type":"ADDED","object":' + FOO_BYTES + b"}\n"

    async def item(request: web.Request) -> web.Response:
        if request.method == "PUT":
            await request.read()
        return web.Response(body=FOO_BYTES, content_type="application/json")

    async def watch(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()
        resp.content_type = "application/json"
        await resp.prepare(request)
        batch = event_line * 100
        for _ in range(events // 100):
            await resp.write(batch)
        await resp.write_eof()
        return resp

    app = web.Application()
    app.router.add_route("*", PATH + "/{name}", item)
    app.router.add_get(PATH, watch)
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    url: list[str] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        runner = web.AppRunner(app)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        url.append(f"http://127.0.0.1:{runner.addresses[0][1]}")
        ready.set()
        loop.run_forever()

    threading.Thread(target=run, daemon=True).start()
    ready.wait(10)
    return url[0], loop


def timed(fn: Callable[[], Any], n: int, repeat: int) -> float:
    """Median seconds per call."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        runs.append((time.perf_counter() - start) / n)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    url, _ = start_server(args.events)
    cfg = kubernetes.client.Configuration()
    cfg.host = url
    rest = RESTClient(cfg)
    typed = ResourceClient(rest, FOOS, "default")
    dynamic = DynamicClient(rest).resource(FOOS, "default")
    official = kubernetes.client.CustomObjectsApi(kubernetes.client.ApiClient(cfg))
    live = typed.get("example-foo")
    live_dict = dynamic.get("example-foo")
    n = args.requests
    rows: list[tuple[str, float, str]] = []

    def add(name: str, seconds: float, unit: str = "op") -> None:
        rows.append((name, seconds, unit))

    add("GET typed (ResourceClient)", timed(lambda: typed.get("example-foo"), n, args.repeat))
    add("GET official (CustomObjectsApi)", timed(
        lambda: official.get_namespaced_custom_object("samplecontroller.k8s.io", "v1alpha1", "default", "foos",
                                                      "example-foo"), n, args.repeat))
    add("UPDATE typed (PUT)", timed(lambda: typed.update(live), n, args.repeat))
    add("UPDATE typed, preserving (GET+PUT)",
        timed(lambda: typed.update(live, preserve_unknown_fields=True), n, args.repeat))
    add("UPDATE dict (PUT)", timed(lambda: dynamic.update(live_dict), n, args.repeat))

    def watch_all() -> None:
        count = sum(1 for _ in typed.watch())
        assert count == args.events // 100 * 100, count

    add("WATCH decode (per event)", timed(watch_all, 1, args.repeat) / (args.events // 100 * 100), "event")
    text = "app=web,tier in (front,back),!gone,env notin (prod),version,release!=canary"
    sel = labels.parse(text)
    lbls = {"app": "web", "tier": "front", "version": "3", "release": "stable"}
    uncached = labels._parse.__wrapped__
    add("labels.parse (6 terms, uncached)", timed(lambda: uncached(text), 20000, args.repeat))
    add("labels.parse (6 terms, cached)", timed(lambda: labels.parse(text), 20000, args.repeat))
    add("Selector.matches (6 terms)", timed(lambda: sel.matches(lbls), 100000, args.repeat))

    fake = FakeResourceClient(FakeClientsetBase(), FOOS, "default")
    counter = iter(range(10**9))

    def fake_cycle() -> None:
        name = f"f{next(counter)}"
        obj = dict(FOO, metadata={"name": name, "namespace": "default"})
        fake.create(obj)
        got = fake.get(name)
        fake.update(got)

    add("fake create+get+update", timed(fake_cycle, 2000, args.repeat), "cycle")

    print(f"{'benchmark':<36} {'µs/unit':>10} {'units/s':>12}")
    for name, seconds, unit in rows:
        print(f"{name:<36} {seconds * 1e6:>10.1f} {1 / seconds:>12,.0f}  per {unit}")


if __name__ == "__main__":
    main()
