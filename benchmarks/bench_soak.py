"""Soak benchmark of the embedded API server's memory (prints a table; not a test).

The server runs as its own process (``python -m samplecontroller.apiserver``, HTTPS, in memory
unless ``--data-dir``). Each round creates N Foos, each with one core/v1 Event about it (as the
controller records), then deletes the Foos; the server's RSS (psutil) is printed after every
round. The issue's target: RSS flat within 10% between round 2 and round 4 for N = 2,000.
Usage: ``.venv/bin/python benchmarks/bench_soak.py [--foos 2000] [--rounds 4] [--event-ttl 5s]
[--history-window 5s] [--data-dir]``
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import psutil
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _apiserver_process import ServerProcess  # noqa: E402

NS = "soak"
FOOS = f"/apis/samplecontroller.k8s.io/v1alpha1/namespaces/{NS}/foos"
EVENTS = f"/api/v1/namespaces/{NS}/events"


def foo(name: str) -> dict[str, object]:
    return {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "metadata": {"name": name},
            "spec": {"deploymentName": name, "replicas": 1}}


def event(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"generateName": f"{name}."}, "type": "Normal",
            "involvedObject": {"kind": "Foo", "name": name, "namespace": NS}, "reason": "Synced",
            "message": "Foo synced successfully"}


async def run_all(session: aiohttp.ClientSession, url: str, calls: list[tuple[str, str, object]],
                  concurrency: int) -> None:
    queue: asyncio.Queue[tuple[str, str, object]] = asyncio.Queue()
    for call in calls:
        queue.put_nowait(call)

    async def worker() -> None:
        while not queue.empty():
            method, path, body = queue.get_nowait()
            async with session.request(method, url + path, json=body) as r:
                await r.read()
                if r.status >= 300:
                    raise RuntimeError(f"{method} {path}: {r.status}")

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def main_async(args: argparse.Namespace) -> None:
    rows: list[tuple[int, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        extra = ["--event-ttl", args.event_ttl]
        if args.history_window:
            extra += ["--history-window", args.history_window]
        if args.data_dir:
            extra += ["--data-dir", str(Path(tmp) / "data")]
        server = ServerProcess(Path(tmp), *extra)
        proc = psutil.Process(server.proc.pid)
        try:
            conn = aiohttp.TCPConnector(ssl=server.ssl, limit=args.concurrency + 4)
            async with aiohttp.ClientSession(connector=conn, headers={"Authorization": f"Bearer {server.token}"},
                                             timeout=aiohttp.ClientTimeout(total=600)) as session:
                crd = yaml.safe_load((ROOT / "crds" / "foo.yaml").read_text())
                await run_all(session, server.url, [("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                                                     crd), ("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})], 1)
                await asyncio.sleep(0.5)
                for round_ in range(1, args.rounds + 1):
                    t0 = time.perf_counter()
                    names = [f"foo-{i:05d}" for i in range(args.foos)]
                    await run_all(session, server.url, [("POST", FOOS, foo(n)) for n in names]
                                  + [("POST", EVENTS, event(n)) for n in names], args.concurrency)
                    await run_all(session, server.url, [("DELETE", f"{FOOS}/{n}", None) for n in names],
                                  args.concurrency)
                    await asyncio.sleep(args.pause)
                    rows.append((round_, time.perf_counter() - t0, proc.memory_info().rss / 2**20))
        finally:
            server.stop()
    print(f"{'round':>5} {'seconds':>8} {'server RSS MiB':>15}")
    for round_, secs, rss in rows:
        print(f"{round_:>5} {secs:>8.1f} {rss:>15.1f}")
    if len(rows) >= 4:
        print(f"RSS change round 2 -> round {len(rows)}: {(rows[-1][2] / rows[1][2] - 1) * 100:+.1f}%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--foos", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--event-ttl", default="5s", help="the server's --event-ttl (default 5s)")
    parser.add_argument("--history-window", default="", help="the server's --history-window (default its own)")
    parser.add_argument("--pause", type=float, default=6.0, help="seconds to wait after each round (default 6)")
    parser.add_argument("--data-dir", action="store_true", help="keep the server's state on disk")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
