"""Benchmark of the embedded API server (prints a table; not a test).

The server runs as a separate process (``python -m samplecontroller.apiserver``, HTTPS, in-memory
storage) so that the client does not share its interpreter. Scenarios:

- create N Foos (concurrent POSTs over keep-alive connections): objects/s, p50/p99 latency
- list 10,000 and 100,000 Foos (one GET each, JSON): seconds, objects/s
- watch fan-out: 10 watchers, N creates; events/s delivered in total, p50/p99 create-to-delivery latency

Targets (issue 4): >= 2,000 creates/s, >= 20,000 watch events/s in total, a list of 100,000 Foos < 3 s.
Usage: ``.venv/bin/python benchmarks/bench_apiserver.py [--creates 10000] [--big-list 100000] [--concurrency 32]
[--data-dir] [--service-account]`` (``--data-dir``: storage on disk, every write committed before its response;
``--service-account``: every measured request as a ServiceAccount authorized by RBAC rules, not as the
``system:masters`` admin token).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import psutil
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _apiserver_process import ServerProcess  # noqa: E402

FOOS = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/{ns}/foos"


def pct(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def foo(name: str) -> bytes:
    return json.dumps({"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                       "metadata": {"name": name, "labels": {"bench": "yes"}},
                       "spec": {"deploymentName": name, "replicas": 1}}).encode()


async def setup(session: aiohttp.ClientSession, url: str) -> None:
    crd = yaml.safe_load((ROOT / "crds" / "foo.yaml").read_text())
    async with session.post(url + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd) as r:
        assert r.status in (201, 409), await r.text()
    for ns in ("bench-create", "bench-list", "bench-big", "bench-watch"):
        async with session.post(url + "/api/v1/namespaces", json={"metadata": {"name": ns}}) as r:
            assert r.status in (201, 409)


async def service_account_token(session: aiohttp.ClientSession, url: str) -> str:
    """A token of ServiceAccount default/bench, allowed everything on foos by a ClusterRoleBinding (and
    given 100 RoleBindings beside it), so that requests go through RBAC rule evaluation."""
    rbac = url + "/apis/rbac.authorization.k8s.io/v1"
    bench = {"kind": "ServiceAccount", "name": "bench", "namespace": "default"}
    objects = [
        (url + "/api/v1/namespaces/default/serviceaccounts", {"metadata": {"name": "bench"}}),
        (rbac + "/clusterroles", {"metadata": {"name": "bench-foos"}, "rules": [
            {"apiGroups": ["samplecontroller.k8s.io"], "resources": ["foos"], "verbs": ["*"]}]}),
        (rbac + "/clusterrolebindings", {"metadata": {"name": "bench-foos"}, "subjects": [bench], "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "bench-foos"}}),
    ]
    objects += [(rbac + "/namespaces/bench-create/rolebindings", {
        "metadata": {"name": f"other-{i}"}, "subjects": [{**bench, "name": f"other-{i}"}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}}) for i in range(100)]
    for path, body in objects:
        async with session.post(path, json=body) as r:
            assert r.status in (201, 409), await r.text()
    async with session.post(url + "/api/v1/namespaces/default/serviceaccounts/bench/token", json={"spec": {}}) as r:
        assert r.status == 201, await r.text()
        return str((await r.json())["status"]["token"])


async def create_many(session: aiohttp.ClientSession, url: str, ns: str, n: int, concurrency: int,
                      sent: dict[str, float] | None = None) -> tuple[float, list[float]]:
    latencies: list[float] = []
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(n):
        queue.put_nowait(i)

    async def worker() -> None:
        while True:
            try:
                i = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            name = f"foo-{i:06d}"
            t0 = time.perf_counter()
            if sent is not None:
                sent[name] = t0
            async with session.post(url + FOOS.format(ns=ns), data=foo(name),
                                    headers={"Content-Type": "application/json"}) as r:
                await r.read()
                if r.status != 201:
                    raise RuntimeError(f"create failed: {r.status}")
            latencies.append(time.perf_counter() - t0)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - start, latencies


async def list_once(session: aiohttp.ClientSession, url: str, ns: str) -> tuple[float, int]:
    t0 = time.perf_counter()
    async with session.get(url + FOOS.format(ns=ns)) as r:
        body = await r.read()
    elapsed = time.perf_counter() - t0
    return elapsed, len(json.loads(body)["items"])


async def watch_fanout(session: aiohttp.ClientSession, url: str, n: int, watchers: int,
                       concurrency: int) -> tuple[float, int, list[float]]:
    async with session.get(url + FOOS.format(ns="bench-watch")) as r:
        rv = json.loads(await r.read())["metadata"]["resourceVersion"]
    sent: dict[str, float] = {}
    latencies: list[float] = []
    done = asyncio.Event()
    counts = [0] * watchers
    total = n * watchers

    async def watch(i: int) -> None:
        async with session.get(url + FOOS.format(ns="bench-watch") + f"?watch=true&resourceVersion={rv}",
                               timeout=aiohttp.ClientTimeout(total=None, sock_read=120)) as r:
            async for line in r.content:
                if not line.strip():
                    continue
                now = time.perf_counter()
                name = line.split(b'"name":"', 1)[1].split(b'"', 1)[0].decode()
                if name in sent:
                    latencies.append(now - sent[name])
                counts[i] += 1
                if counts[i] >= n:
                    if sum(counts) >= total:
                        done.set()
                    return

    tasks = [asyncio.create_task(watch(i)) for i in range(watchers)]
    await asyncio.sleep(0.5)
    start = time.perf_counter()
    await create_many(session, url, "bench-watch", n, concurrency, sent)
    await asyncio.wait_for(done.wait(), 300)
    elapsed = time.perf_counter() - start
    for t in tasks:
        t.cancel()
    return elapsed, sum(counts), latencies


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        extra = ("--data-dir", str(Path(tmp) / "data")) if args.data_dir else ()
        server = ServerProcess(Path(tmp), *extra)
        try:
            conn = aiohttp.TCPConnector(ssl=server.ssl, limit=args.concurrency + 20)
            headers = {"Authorization": f"Bearer {server.token}"}
            async with aiohttp.ClientSession(connector=conn, headers=headers,
                                             timeout=aiohttp.ClientTimeout(total=600)) as session:
                await setup(session, server.url)
                if args.service_account:
                    session.headers["Authorization"] = f"Bearer {await service_account_token(session, server.url)}"
                rows: list[tuple[str, str, str, str, str]] = []
                proc = psutil.Process(server.proc.pid)
                cpu0 = sum(proc.cpu_times()[:2])
                secs, lat = await create_many(session, server.url, "bench-create", args.creates, args.concurrency)
                cpu = sum(proc.cpu_times()[:2]) - cpu0
                rows.append((f"create {args.creates} Foos", f"{secs:.2f}", f"{args.creates / secs:,.0f}",
                             f"{pct(lat, 0.5) * 1000:.1f}", f"{pct(lat, 0.99) * 1000:.1f}"))
                rows.append(("  per server CPU second", f"{cpu:.2f}", f"{args.creates / cpu:,.0f}", "", ""))
                for label, ns, n in (("list", "bench-create", args.creates), ("list", "bench-big", args.big_list)):
                    if ns == "bench-big":
                        await create_many(session, server.url, ns, n, args.concurrency)
                    times = []
                    count = 0
                    for _ in range(3):
                        t, count = await list_once(session, server.url, ns)
                        times.append(t)
                    best = min(times)
                    rows.append((f"{label} {count:,} Foos", f"{best:.2f}", f"{count / best:,.0f}",
                                 f"{statistics.median(times) * 1000:.0f}", f"{max(times) * 1000:.0f}"))
                secs, events, lat = await watch_fanout(session, server.url, args.watch_events, args.watchers,
                                                       args.concurrency)
                rows.append((f"watch {args.watch_events} events x {args.watchers} watchers", f"{secs:.2f}",
                             f"{events / secs:,.0f}", f"{pct(lat, 0.5) * 1000:.1f}", f"{pct(lat, 0.99) * 1000:.1f}"))
        finally:
            server.stop()
    print(f"{'scenario':<40} {'seconds':>8} {'objects/s':>10} {'p50 ms':>8} {'p99 ms':>8}")
    for row in rows:
        print(f"{row[0]:<40} {row[1]:>8} {row[2]:>10} {row[3]:>8} {row[4]:>8}")
    print("(list rows: p50/p99 columns are the median/max of 3 lists in ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--creates", type=int, default=10_000)
    parser.add_argument("--big-list", type=int, default=100_000)
    parser.add_argument("--watch-events", type=int, default=10_000)
    parser.add_argument("--watchers", type=int, default=10)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--service-account", action="store_true",
                        help="measure as a ServiceAccount authorized by RBAC rules instead of the admin token")
    parser.add_argument("--data-dir", action="store_true",
                        help="keep the server's state on disk (SQLite WAL in a temporary directory)")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
