"""Benchmark of the embedded API server (prints a table; not a test).

The server runs as a separate process (``python -m samplecontroller.apiserver``, HTTPS, in-memory
storage) so that the client does not share its interpreter. Scenarios (``--scenarios``, comma-separated,
default all):

- ``create``: create N Foos (concurrent POSTs over keep-alive connections): objects/s, p50/p99 latency,
  and creates per server CPU-second
- ``list``: list 10,000 and 100,000 Foos (one GET each, JSON): seconds, objects/s
- ``watch``: watch fan-out: 10 watchers, N creates; events/s delivered in total, server CPU per create (its
  events to every watcher included), p50/p99 create-to-delivery latency
- ``writes``: server CPU per write, the writes of the Foo controller (``--writes`` of each, 8 clients): Foo
  creates, Deployment creates (nginx, owned by their Foo, as ``foo.new_deployment``), status merge patches of
  the Foos (``foo.status_patch``) and Events (as ``record``'s recorder posts them)
- ``walk``: ``--walk`` ConfigMaps listed at once and walked page by page (``limit=500``, continue tokens):
  seconds of each and their ratio (linear walk: the ratio stays small as N grows)

``--compare DIR`` runs every scenario also on the server of another checkout (e.g. ``git archive main |
tar -x -C DIR``), interleaved scenario by scenario with this one, so that before and after are measured
side by side under the same machine load (``uptime`` is printed with the table).

Targets (issue 4): >= 2,000 creates/s, >= 20,000 watch events/s in total, a list of 100,000 Foos < 3 s.
Targets (issue 27): server CPU per write half of main's for creates, status patches and Events, creates per
server CPU-second 2x main's, a walk of 100,000 objects with ``limit=500`` within 3x one full list.
Usage: ``.venv/bin/python benchmarks/bench_apiserver.py [--creates 10000] [--big-list 100000] [--concurrency 32]
[--writes 2000] [--rounds 1] [--walk 100000] [--scenarios create,list,watch,writes,walk] [--compare DIR]
[--data-dir] [--service-account]`` (``--data-dir``: storage on disk, every write committed before its response;
``--service-account``: every measured request as a ServiceAccount authorized by RBAC rules, not as the
``system:masters`` admin token).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
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
    for ns in ("bench-create", "bench-list", "bench-big", "bench-watch", "bench-writes", "bench-walk"):
        async with session.post(url + "/api/v1/namespaces", json={"metadata": {"name": ns}}) as r:
            assert r.status in (201, 409)


async def service_account_token(session: aiohttp.ClientSession, url: str) -> str:
    """A token of ServiceAccount default/bench, allowed everything on foos, and the other writes of the
    scenarios, by a ClusterRoleBinding (and
    given 100 RoleBindings beside it), so that requests go through RBAC rule evaluation."""
    rbac = url + "/apis/rbac.authorization.k8s.io/v1"
    bench = {"kind": "ServiceAccount", "name": "bench", "namespace": "default"}
    objects = [
        (url + "/api/v1/namespaces/default/serviceaccounts", {"metadata": {"name": "bench"}}),
        (rbac + "/clusterroles", {"metadata": {"name": "bench-foos"}, "rules": [
            {"apiGroups": ["samplecontroller.k8s.io"], "resources": ["foos", "foos/status"], "verbs": ["*"]},
            {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["create"]},
            {"apiGroups": [""], "resources": ["events", "configmaps"], "verbs": ["create", "list"]},
            {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["create"]}]}),
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


Row = tuple[str, str, str, str, str, str]


def deployment(name: str, ns: str, owner_uid: str) -> bytes:
    labels = {"app": "nginx", "controller": name}
    return json.dumps({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {
        "name": name, "namespace": ns, "ownerReferences": [{
            "apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "name": name, "uid": owner_uid,
            "controller": True, "blockOwnerDeletion": True}]},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels}, "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]}}}},
    ).encode()


def event(name: str, ns: str, uid: str, i: int) -> bytes:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return json.dumps({"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{name}.{i:x}", "namespace": ns},
                       "involvedObject": {"kind": "Foo", "namespace": ns, "name": name, "uid": uid,
                                          "apiVersion": "samplecontroller.k8s.io/v1alpha1", "resourceVersion": "1"},
                       "reason": "Synced", "message": "Foo synced successfully", "type": "Normal", "count": 1,
                       "firstTimestamp": stamp, "lastTimestamp": stamp,
                       "source": {"component": "sample-controller", "host": "bench"},
                       "reportingComponent": "sample-controller", "reportingInstance": "bench"}).encode()


async def run_requests(session: aiohttp.ClientSession, requests: list[tuple[str, str, bytes, str, int]],
                       concurrency: int) -> tuple[float, list[float], list[bytes]]:
    """Send ``(method, url, body, content type, expected status)`` requests from ``concurrency``
    workers; (seconds, latencies, response bodies in request order)."""
    latencies: list[float] = []
    bodies: list[bytes] = [b""] * len(requests)
    todo = iter(range(len(requests)))

    async def worker() -> None:
        for i in todo:
            method, url, data, ctype, want = requests[i]
            t0 = time.perf_counter()
            async with session.request(method, url, data=data, headers={"Content-Type": ctype}) as r:
                bodies[i] = await r.read()
                if r.status != want:
                    raise RuntimeError(f"{method} {url}: {r.status} {bodies[i][:300]!r}")
            latencies.append(time.perf_counter() - t0)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - start, latencies, bodies


def cpu_seconds(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return float(times.user + times.system)


class Target:
    """One server under test: its label, URL, process and an open session."""

    def __init__(self, label: str, server: ServerProcess, session: aiohttp.ClientSession) -> None:
        self.label = label
        self.server = server
        self.url = server.url
        self.proc = psutil.Process(server.proc.pid)
        self.session = session


async def scenario_create(t: Target, args: argparse.Namespace) -> list[Row]:
    cpu0 = cpu_seconds(t.proc)
    secs, lat = await create_many(t.session, t.url, "bench-create", args.creates, args.concurrency)
    cpu = cpu_seconds(t.proc) - cpu0
    return [(f"create {args.creates} Foos", t.label, f"{secs:.2f}", f"{args.creates / secs:,.0f}",
             f"{cpu / args.creates * 1000:.3f}", f"{pct(lat, 0.5) * 1000:.1f}", f"{pct(lat, 0.99) * 1000:.1f}"),
            ("  creates per server CPU second", t.label, f"{cpu:.2f}", f"{args.creates / cpu:,.0f}", "", "", "")]


async def scenario_list(t: Target, args: argparse.Namespace) -> list[Row]:
    rows: list[Row] = []
    for ns, n in (("bench-create", args.creates), ("bench-big", args.big_list)):
        if ns == "bench-big" or "create" not in args.scenarios:
            await create_many(t.session, t.url, ns, n, args.concurrency)
        times = []
        count = 0
        for _ in range(3):
            secs, count = await list_once(t.session, t.url, ns)
            times.append(secs)
        best = min(times)
        rows.append((f"list {count:,} Foos", t.label, f"{best:.2f}", f"{count / best:,.0f}", "",
                     f"{statistics.median(times) * 1000:.0f}", f"{max(times) * 1000:.0f}"))
    return rows


async def scenario_watch(t: Target, args: argparse.Namespace) -> list[Row]:
    cpu0 = cpu_seconds(t.proc)
    secs, events, lat = await watch_fanout(t.session, t.url, args.watch_events, args.watchers, args.concurrency)
    cpu = cpu_seconds(t.proc) - cpu0
    return [(f"watch {args.watch_events} events x {args.watchers} watchers", t.label, f"{secs:.2f}",
             f"{events / secs:,.0f}", f"{cpu / args.watch_events * 1000:.3f}", f"{pct(lat, 0.5) * 1000:.1f}",
             f"{pct(lat, 0.99) * 1000:.1f}")]


async def scenario_writes(t: Target, args: argparse.Namespace) -> list[Row]:
    """Server CPU per write for the Foo controller's writes (8 clients, as the issue measured)."""
    n, ns = args.writes, f"bench-writes-{args.round}"
    async with t.session.post(t.url + "/api/v1/namespaces", json={"metadata": {"name": ns}}) as r:
        assert r.status in (201, 409), await r.text()
    foos = t.url + FOOS.format(ns=ns)
    names = [f"w-{i:06d}" for i in range(n)]
    json_ct, merge_ct = "application/json", "application/merge-patch+json"
    rows: list[Row] = []

    async def measure(label: str, requests: list[tuple[str, str, bytes, str, int]]) -> list[bytes]:
        cpu0 = cpu_seconds(t.proc)
        secs, lat, bodies = await run_requests(t.session, requests, args.write_concurrency)
        cpu = cpu_seconds(t.proc) - cpu0
        rows.append((f"{label} x {n}", t.label, f"{secs:.2f}", f"{n / secs:,.0f}", f"{cpu / n * 1000:.3f}",
                     f"{pct(lat, 0.5) * 1000:.1f}", f"{pct(lat, 0.99) * 1000:.1f}"))
        return bodies

    created = await measure("create Foo", [("POST", foos, foo(name), json_ct, 201) for name in names])
    uids = [json.loads(b)["metadata"]["uid"] for b in created]
    deployments = t.url + f"/apis/apps/v1/namespaces/{ns}/deployments"
    await measure("create Deployment", [("POST", deployments, deployment(name, ns, uid), json_ct, 201)
                                        for name, uid in zip(names, uids, strict=True)])
    status = b'{"status":{"availableReplicas":1}}'
    await measure("patch Foo status", [("PATCH", f"{foos}/{name}/status", status, merge_ct, 200) for name in names])
    events = t.url + f"/api/v1/namespaces/{ns}/events"
    await measure("create Event", [("POST", events, event(name, ns, uid, i), json_ct, 201)
                                   for i, (name, uid) in enumerate(zip(names, uids, strict=True))])
    return rows


async def scenario_walk(t: Target, args: argparse.Namespace) -> list[Row]:
    """A full list of ``--walk`` ConfigMaps against a walk of them ``limit=500`` at a time."""
    n, ns = args.walk, "bench-walk"
    cms = t.url + f"/api/v1/namespaces/{ns}/configmaps"
    await run_requests(t.session, [("POST", cms, json.dumps({"metadata": {"name": f"cm-{i:06d}"}, "data": {
        "key": f"value-{i}"}}).encode(), "application/json", 201) for i in range(n)], args.concurrency)
    t0 = time.perf_counter()
    async with t.session.get(cms) as r:
        full = len(json.loads(await r.read())["items"])
    list_secs = time.perf_counter() - t0
    cpu0 = cpu_seconds(t.proc)
    t0 = time.perf_counter()
    walked, pages, token = 0, 0, ""
    while True:
        async with t.session.get(cms, params={"limit": "500", **({"continue": token} if token else {})}) as r:
            page = json.loads(await r.read())
        if r.status != 200:
            raise RuntimeError(f"page {pages}: {r.status} {page}")
        walked += len(page["items"])
        pages += 1
        token = page["metadata"].get("continue", "")
        if not token:
            break
    walk_secs = time.perf_counter() - t0
    walk_cpu = cpu_seconds(t.proc) - cpu0
    if full < n or walked != full:  # the namespace's kube-root-ca.crt too
        raise RuntimeError(f"listed {full} and walked {walked} of {n} ConfigMaps")
    return [(f"list {n:,} ConfigMaps", t.label, f"{list_secs:.2f}", f"{n / list_secs:,.0f}", "", "", ""),
            (f"walk {n:,} ConfigMaps, {pages} pages", t.label, f"{walk_secs:.2f}", f"{n / walk_secs:,.0f}",
             f"{walk_cpu / n * 1000:.4f}", "", ""),
            ("  walk / list", t.label, f"{walk_secs / list_secs:.2f}x", "", "", "", "")]


SCENARIOS = {"create": scenario_create, "list": scenario_list, "watch": scenario_watch,
             "writes": scenario_writes, "walk": scenario_walk}


async def start(stack: contextlib.AsyncExitStack, state: Path, label: str, root: Path,
                args: argparse.Namespace) -> Target:
    """A server of the checkout ``root`` with its state in ``state``, set up, and a session to it."""
    state.mkdir()
    extra = ("--data-dir", str(state / "data")) if args.data_dir else ()
    server = ServerProcess(state, *extra, root=root)
    stack.callback(server.stop)
    conn = aiohttp.TCPConnector(ssl=server.ssl, limit=args.concurrency + 20)
    session = await stack.enter_async_context(aiohttp.ClientSession(
        connector=conn, headers={"Authorization": f"Bearer {server.token}"}, timeout=aiohttp.ClientTimeout(total=1800)))
    await setup(session, server.url)
    if args.service_account:
        session.headers["Authorization"] = f"Bearer {await service_account_token(session, server.url)}"
    return Target(label, server, session)


async def main_async(args: argparse.Namespace) -> None:
    roots = [("before", Path(args.compare).resolve())] if args.compare else []
    roots.append(("after" if args.compare else "this", ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        async with contextlib.AsyncExitStack() as stack:
            targets = [await start(stack, Path(tmp) / label, label, root, args) for label, root in roots]
            rows: list[Row] = []
            for name in args.scenarios:
                for n in range(args.rounds if name == "writes" else 1):
                    args.round = n
                    for target in targets:
                        rows += await SCENARIOS[name](target, args)
    print(f"load average (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    print(f"{'scenario':<40} {'server':>6} {'seconds':>8} {'objects/s':>10} {'CPU ms/obj':>10} {'p50 ms':>8} {'p99 ms':>8}")
    for row in rows:
        print(f"{row[0]:<40} {row[1]:>6} {row[2]:>8} {row[3]:>10} {row[4]:>10} {row[5]:>8} {row[6]:>8}")
    medians: dict[tuple[str, str], list[float]] = {}
    for row in rows:
        if row[4] and row[0].startswith(("create Foo x", "create Deployment x", "patch Foo status x", "create Event x")):
            medians.setdefault((row[0], row[1]), []).append(float(row[4]))
    if args.rounds > 1 and medians:
        print(f"\nmedian CPU ms per write over {args.rounds} interleaved rounds")
        for (label, server), values in medians.items():
            print(f"{label:<40} {server:>6} {statistics.median(values):>10.3f}   (min {min(values):.3f})")
    print("(list rows: p50/p99 columns are the median/max of 3 lists in ms; CPU ms/obj: the server process's "
          "user+system CPU per object)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--creates", type=int, default=10_000)
    parser.add_argument("--big-list", type=int, default=100_000)
    parser.add_argument("--watch-events", type=int, default=10_000)
    parser.add_argument("--watchers", type=int, default=10)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--writes", type=int, default=2_000, help="writes of each kind in the writes scenario")
    parser.add_argument("--write-concurrency", type=int, default=8, help="clients of the writes scenario")
    parser.add_argument("--rounds", type=int, default=1,
                        help="repeat the writes scenario, servers interleaved, and print the median per server")
    parser.add_argument("--walk", type=int, default=100_000, help="ConfigMaps in the walk scenario")
    parser.add_argument("--scenarios", type=lambda text: [s for s in text.split(",") if s],
                        default=list(SCENARIOS), help=f"comma-separated, of {','.join(SCENARIOS)} (default all)")
    parser.add_argument("--compare", metavar="DIR", default=None,
                        help="also run every scenario on the server of the checkout in DIR (labelled before)")
    parser.add_argument("--service-account", action="store_true",
                        help="measure as a ServiceAccount authorized by RBAC rules instead of the admin token")
    parser.add_argument("--data-dir", action="store_true",
                        help="keep the server's state on disk (SQLite WAL in a temporary directory)")
    args = parser.parse_args()
    args.round = 0
    unknown = [s for s in args.scenarios if s not in SCENARIOS]
    if unknown:
        parser.error(f"unknown scenarios {unknown}: choose from {', '.join(SCENARIOS)}")
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
