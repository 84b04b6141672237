"""Benchmark: which async HTTP library the async transport uses (aiohttp or httpx), measured.

The embedded API server runs in its own process (TLS, token auth); this process sends ``--n``
GETs of one Namespace per row, with ``--concurrency`` requests in flight, and reports wall
time and this process's CPU per request:
- ``sync RESTClient``: the sync transport (urllib3 pool, http.client), one thread per request
  in flight (a thread pool of that size);
- ``AsyncRESTClient (aiohttp)``: ``samplecontroller.rest.aio`` as shipped;
- ``aiohttp raw`` / ``httpx raw``: the bare libraries (same TLS context and headers, body read,
  nothing decoded), so the transport's own overhead shows beside its library's.
httpx is not a dependency: the rows appear when it is importable (for example
``PYTHONPATH=/tmp/hxlib`` after ``uv pip install --target /tmp/hxlib httpx``).

    python benchmarks/bench_async_http.py [--n 2000] [--concurrency 1,100]

Numbers are printed, never asserted (machines are noisy).
"""

from __future__ import annotations

import argparse
import asyncio
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


def measure(run: Callable[[], None], n: int) -> tuple[float, float]:
    wall0, cpu0 = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall0, (time.process_time() - cpu0) / n * 1e6


async def fan_out(n: int, concurrency: int, one: Callable[[], Awaitable[Any]]) -> None:
    left = iter(range(n))

    async def worker() -> None:
        for _ in left:
            await one()

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def timed(n: int, fn: Callable[[], Awaitable[None]]) -> tuple[float, float]:
    wall0, cpu0 = time.perf_counter(), time.process_time()
    await fn()
    return time.perf_counter() - wall0, (time.process_time() - cpu0) / n * 1e6


async def ours(rest: Any, n: int, c: int) -> tuple[float, float]:
    client = AsyncRESTClient(rest, pool_size=max(c, 1))
    try:
        await client.request("GET", PATH)
        return await timed(n, lambda: fan_out(n, c, lambda: client.request("GET", PATH)))
    finally:
        await client.close()


async def raw_aiohttp(server: ServerProcess, headers: dict[str, str], n: int, c: int) -> tuple[float, float]:
    conn = aiohttp.TCPConnector(limit=max(c, 1), ssl=server.ssl)
    async with aiohttp.ClientSession(connector=conn) as s:
        async def one() -> bytes:
            async with s.get(server.url + PATH, headers=headers) as r:
                return await r.read()

        await one()
        return await timed(n, lambda: fan_out(n, c, one))


async def raw_httpx(server: ServerProcess, headers: dict[str, str], n: int, c: int) -> tuple[float, float]:
    import httpx

    limits = httpx.Limits(max_connections=max(c, 1), max_keepalive_connections=max(c, 1))
    async with httpx.AsyncClient(verify=server.ssl, limits=limits) as s:
        async def one() -> bytes:
            return (await s.get(server.url + PATH, headers=headers)).content

        await one()
        return await timed(n, lambda: fan_out(n, c, one))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--concurrency", default="1,100")
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
            headers = {"Authorization": f"Bearer {server.token}", "Accept": "application/json"}
            print(f"{'client':<28}{'in flight':>10}{'wall s':>9}{'req/s':>9}{'CPU us/req':>12}")
            for c in (int(x) for x in args.concurrency.split(",")):
                with ThreadPoolExecutor(c) as pool:
                    rows = [("sync RESTClient", *measure(
                        lambda pool=pool: list(pool.map(lambda _: rest.request("GET", PATH), range(n))), n))]
                rows.append(("AsyncRESTClient (aiohttp)", *asyncio.run(ours(rest, n, c))))
                rows.append(("aiohttp raw", *asyncio.run(raw_aiohttp(server, headers, n, c))))
                if have_httpx:
                    rows.append(("httpx raw", *asyncio.run(raw_httpx(server, headers, n, c))))
                for name, wall, cpu in rows:
                    print(f"{name:<28}{c:>10}{wall:>9.2f}{n / wall:>9.0f}{cpu:>12.0f}")
            if not have_httpx:
                print("(httpx not importable: its rows are missing)")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
