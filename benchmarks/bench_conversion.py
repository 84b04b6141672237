"""Benchmark of CRD conversion in the embedded API server (prints a table; not a test): the cost
per object of a conversion webhook (``conversion.strategy: Webhook``) against ``strategy: None``
(apiVersion rewritten only), on reads in a version other than the storage version.

Two identical Widget CRDs (``tests.conversion_webhook``: v1 stored, v2 served), one converting
through that webhook (HTTPS, served by a thread of this process), one with ``strategy: None``.
The server runs as a separate process (``_apiserver_process``). Objects are written in the
storage version (no conversion), then read in v2:

- get: ``--gets`` sequential GETs of single objects (one review each)
- list: ``--lists`` GETs of all ``--objects`` objects (one review per list)
- watch: one watch of v2, ``--events`` merge patches written in v1; time until every event arrived
  (one review per event)
- create in v2: sequential POSTs (two reviews each: to the storage version and back)

Usage: ``.venv/bin/python benchmarks/bench_conversion.py [--objects 1000] [--gets 300] [--lists 5]
[--events 500] [--creates 200] [--rounds 3]``. The strategies alternate for ``--rounds`` rounds and
each figure is the best round's. Figures depend on the machine's load; run it on a quiet machine
to compare.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import urllib3

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _apiserver_process import ServerProcess  # noqa: E402

from tests.conversion_webhook import ConversionWebhook, widget_crd  # noqa: E402

GROUPS = {"None": "none.example.com", "Webhook": "webhook.example.com"}


class Api:
    """Sequential JSON requests to the server over one keep-alive pool."""

    def __init__(self, server: ServerProcess) -> None:
        self.url = server.url
        self.pool = urllib3.PoolManager(ssl_context=server.ssl, maxsize=4)
        self.headers = {"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"}

    def call(self, method: str, path: str, body: Any = None, ctype: str = "application/json") -> Any:
        r = self.pool.request(method, self.url + path, headers={**self.headers, "Content-Type": ctype},
                              body=json.dumps(body).encode() if body is not None else None)
        if r.status >= 300:
            raise RuntimeError(f"{method} {path}: {r.status} {r.data[:300]!r}")
        return json.loads(r.data)


def widgets(group: str, version: str) -> str:
    return f"/apis/{group}/{version}/namespaces/default/widgets"


def widget(group: str, version: str, name: str, amount: int) -> dict[str, Any]:
    key = "replicas" if version == "v1" else "count"
    return {"apiVersion": f"{group}/{version}", "kind": "Widget", "metadata": {"name": name}, "spec": {key: amount}}


def measure(api: Api, server: ServerProcess, group: str, names: list[str],
            args: argparse.Namespace, round_: int) -> dict[str, float]:
    """Seconds per object of each operation on the Widgets of ``group`` (read in v2)."""
    for name in names[:20]:  # connections and caches warm
        api.call("GET", f"{widgets(group, 'v2')}/{name}")
    per: dict[str, float] = {}
    t0 = time.perf_counter()
    for i in range(args.gets):
        api.call("GET", f"{widgets(group, 'v2')}/{names[i % len(names)]}")
    per["get (1 object)"] = (time.perf_counter() - t0) / args.gets
    t0 = time.perf_counter()
    for _ in range(args.lists):
        api.call("GET", widgets(group, "v2"))
    per[f"list ({len(names)} objects)"] = (time.perf_counter() - t0) / (args.lists * len(names))
    per["watch (1 event)"] = bench_watch(api, server, group, names[:args.events], round_) / args.events
    t0 = time.perf_counter()
    for i in range(args.creates):
        api.call("POST", widgets(group, "v2"), widget(group, "v2", f"c{round_}-{i:05d}", i))
    per["create in v2"] = (time.perf_counter() - t0) / args.creates
    return per


def bench_watch(api: Api, server: ServerProcess, group: str, names: list[str], round_: int) -> float:
    """Seconds from the first patch (in v1) to the last event seen by a v2 watch."""
    rv = api.call("GET", widgets(group, "v1") + "?limit=1")["metadata"]["resourceVersion"]
    seen = threading.Event()
    want = len(names)

    pool = urllib3.PoolManager(ssl_context=server.ssl)  # its own connection: the stream is left unfinished

    def watch() -> None:
        r = pool.request("GET", f"{api.url}{widgets(group, 'v2')}?watch=1&resourceVersion={rv}",
                             headers=api.headers, preload_content=False,
                             timeout=urllib3.Timeout(connect=5, read=120))
        count, buf = 0, b""
        for chunk in r.stream(65536):
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if json.loads(line)["object"]["apiVersion"] != f"{group}/v2":
                    raise RuntimeError("an event not in v2")
                count += 1
                if count == want:
                    seen.set()
                    pool.clear()
                    return

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    time.sleep(0.5)  # let the watch be established before the writes it measures
    t0 = time.perf_counter()
    for i, name in enumerate(names):
        api.call("PATCH", f"{widgets(group, 'v1')}/{name}", {"spec": {"replicas": 10_000 * (round_ + 1) + i}},
                 ctype="application/merge-patch+json")
    if not seen.wait(300):
        raise RuntimeError("the watch did not see every event")
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--gets", type=int, default=300)
    parser.add_argument("--lists", type=int, default=5)
    parser.add_argument("--events", type=int, default=500)
    parser.add_argument("--creates", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ConversionWebhook(Path(tmp) / "certs") as hook:
        server = ServerProcess(Path(tmp))
        try:
            api = Api(server)
            for strategy, group in GROUPS.items():
                crd = widget_crd(hook.url, hook.ca_bundle, group=group)
                if strategy == "None":
                    crd["spec"]["conversion"] = {"strategy": "None"}
                api.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
            time.sleep(0.5)  # the CRDs served
            rows: dict[str, dict[str, float]] = {}
            names = [f"w{i:05d}" for i in range(args.objects)]
            for group in GROUPS.values():
                for i, name in enumerate(names):
                    api.call("POST", widgets(group, "v1"), widget(group, "v1", name, i))
            for round_ in range(args.rounds):  # strategies alternate; the best round counts (a loaded machine)
                for strategy, group in GROUPS.items():
                    per = measure(api, server, group, names, args, round_)
                    best = rows.setdefault(strategy, per)
                    for op, value in per.items():
                        best[op] = min(best[op], value)
            reviews = len(hook.reviews)
        finally:
            server.stop()
    print(f"CRD conversion, {args.objects} objects stored in v1, read in v2 (ms per object, best of {args.rounds} "
          "rounds; watch: per event incl. the v1 write; create: two reviews per object)")
    print(f"{'operation':<22} {'None':>10} {'Webhook':>10} {'webhook +':>10} {'x':>6}")
    for op in rows["None"]:
        none, webhook = rows["None"][op] * 1000, rows["Webhook"][op] * 1000
        print(f"{op:<22} {none:>10.3f} {webhook:>10.3f} {webhook - none:>10.3f} {webhook / none:>6.1f}")
    print(f"({reviews} ConversionReviews answered by the webhook)")


if __name__ == "__main__":
    main()
