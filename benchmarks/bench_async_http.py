"""Benchmark: what the async transport's requests cost, against the sync transport and the libraries.

The embedded API server runs in its own process (TLS, token auth); this process sends ``--n``
requests per row, with ``--concurrency`` in flight: ``get`` reads one Namespace, ``patch``
merge-patches a ConfigMap (one per request in flight, a write as the Foo controller's). It
reports wall time and this process's CPU per request:
- ``sync RESTClient``: the sync transport (urllib3 pool, http.client), one thread per request
  in flight;
- ``AsyncRESTClient``: ``samplecontroller.rest.aio`` as shipped (``rest.http11``, the lean
  HTTP/1.1 client on asyncio protocols);
- ``aiohttp raw`` / ``httpx raw``: the bare libraries (same TLS context and headers, body read,
  nothing decoded), so the transport's own overhead shows beside a library's. aiohttp is what
  the async transport used before ``rest.http11`` (it still does through a proxy).
httpx is not a dependency: the rows appear when it is importable (for example
``PYTHONPATH=/tmp/hxlib`` after ``uv pip install --target /tmp/hxlib httpx``).

    python benchmarks/bench_async_http.py [--n 2000] [--concurrency 1,100] [--verbs get,patch]

Numbers are printed, never asserted (machines are noisy).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import aiohttp  # noqa: E402
from _apiserver_process import ServerProcess  # noqa: E402

from samplecontroller.rest import load_rest_client  # noqa: E402
from samplecontroller.rest.aio import AsyncRESTClient  # noqa: E402

PATH = "/api/v1/namespaces/default"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
MERGE_PATCH = "application/merge-patch+json"


class Verb:
    """One kind of request: ``args(i, worker)`` gives (method, path, body, content type)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def args(self, i: int, worker: int) -> tuple[str, str, bytes | None, str | None]:
        if self.name == "get":
            return "GET", PATH, None, None
        return "PATCH", f"{CONFIGMAPS}/bench-{worker}", b'{"data":{"i":"%d"}}' % i, MERGE_PATCH


def measure(run: Callable[[], None], n: int) -> tuple[float, float]:
    wall0, cpu0 = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall0, (time.process_time() - cpu0) / n * 1e6


async def fan_out(n: int, concurrency: int, one: Callable[[int, int], Awaitable[Any]]) -> None:
    left = iter(range(n))

    async def worker(w: int) -> None:
        for i in left:
            await one(i, w)

    await asyncio.gather(*(worker(w) for w in range(concurrency)))


async def timed(n: int, fn: Callable[[], Awaitable[None]]) -> tuple[float, float]:
    wall0, cpu0 = time.perf_counter(), time.process_time()
    await fn()
    return time.perf_counter() - wall0, (time.process_time() - cpu0) / n * 1e6


async def ours(rest: Any, verb: Verb, n: int, c: int) -> tuple[float, float]:
    client = AsyncRESTClient(rest, pool_size=max(c, 1))

    async def one(i: int, w: int) -> bytes:
        method, path, body, content_type = verb.args(i, w)
        return await client.request(method, path, body=body, content_type=content_type)

    try:
        await one(0, 0)
        return await timed(n, lambda: fan_out(n, c, one))
    finally:
        await client.close()


async def raw_aiohttp(server: ServerProcess, headers: dict[str, str], verb: Verb, n: int,
                      c: int) -> tuple[float, float]:
    conn = aiohttp.TCPConnector(limit=max(c, 1), ssl=server.ssl)
    async with aiohttp.ClientSession(connector=conn) as s:
        async def one(i: int, w: int) -> bytes:
            method, path, body, content_type = verb.args(i, w)
            h = {**headers, "Content-Type": content_type} if content_type else headers
            async with s.request(method, server.url + path, data=body, headers=h) as r:
                return await r.read()

        await one(0, 0)
        return await timed(n, lambda: fan_out(n, c, one))


async def raw_httpx(server: ServerProcess, headers: dict[str, str], verb: Verb, n: int,
                    c: int) -> tuple[float, float]:
    import httpx

    limits = httpx.Limits(max_connections=max(c, 1), max_keepalive_connections=max(c, 1))
    async with httpx.AsyncClient(verify=server.ssl, limits=limits) as s:
        async def one(i: int, w: int) -> bytes:
            method, path, body, content_type = verb.args(i, w)
            h = {**headers, "Content-Type": content_type} if content_type else headers
            data: bytes = (await s.request(method, server.url + path, content=body, headers=h)).content
            return data

        await one(0, 0)
        return await timed(n, lambda: fan_out(n, c, one))


def sync_row(rest: Any, verb: Verb, n: int, c: int) -> tuple[float, float]:
    """``c`` threads sending the ``n`` requests between them (one thread: the caller's own)."""
    left = iter(range(n))

    def worker(w: int) -> None:
        for i in left:
            method, path, body, content_type = verb.args(i, w)
            rest.request(method, path, body=body, content_type=content_type)

    def all_workers() -> None:
        with ThreadPoolExecutor(c) as pool:
            list(pool.map(worker, range(c)))

    return measure(lambda: worker(0), n) if c == 1 else measure(all_workers, n)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--concurrency", default="1,100")
    parser.add_argument("--verbs", default="get,patch")
    args = parser.parse_args()
    try:
        import httpx  # noqa: F401
        have_httpx = True
    except ImportError:
        have_httpx = False
    n = args.n
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp))
        try:
            rest = load_rest_client(kubeconfig=str(server.kubeconfig_path), pool_size=200)
            concurrency = [int(x) for x in args.concurrency.split(",")]
            for w in range(max(concurrency)):
                rest.request("POST", CONFIGMAPS, body=b'{"metadata":{"name":"bench-%d"}}' % w)
            headers = {"Authorization": f"Bearer {server.token}", "Accept": "application/json"}
            print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
                  f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
            print(f"{'client':<22}{'verb':>6}{'in flight':>10}{'wall s':>9}{'req/s':>9}{'CPU us/req':>12}")
            for verb in (Verb(v) for v in args.verbs.split(",")):
                for c in concurrency:
                    rows = [("sync RESTClient", *sync_row(rest, verb, n, c)),
                            ("AsyncRESTClient", *asyncio.run(ours(rest, verb, n, c))),
                            ("aiohttp raw", *asyncio.run(raw_aiohttp(server, headers, verb, n, c)))]
                    if have_httpx:
                        rows.append(("httpx raw", *asyncio.run(raw_httpx(server, headers, verb, n, c))))
                    for name, wall, cpu in rows:
                        print(f"{name:<22}{verb.name:>6}{c:>10}{wall:>9.2f}{n / wall:>9.0f}{cpu:>12.0f}")
            if not have_httpx:
                print("(httpx not importable: its rows are missing)")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
