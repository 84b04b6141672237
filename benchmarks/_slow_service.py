"""An external service that answers every GET / after ``--delay`` seconds (for bench_async.py's
awaited-call workload); GET /count answers ``{"served": n, "last": t}`` at once (how many slow
answers were sent, and the ``time.time()`` of the last). Prints ``ready <url>`` once it
listens; runs until killed."""

from __future__ import annotations

import argparse
import asyncio
import time

from aiohttp import web


async def main(delay: float) -> None:
    served = {"served": 0, "last": 0.0}

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(delay)
        served["served"] += 1
        served["last"] = time.time()
        return web.Response(text="ok")

    async def count(request: web.Request) -> web.Response:
        return web.json_response(served)

    app = web.Application()
    app.router.add_get("/", slow)
    app.router.add_get("/count", count)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=4096)  # a thousand connections at once
    await site.start()
    port = runner.addresses[0][1]
    print(f"ready http://127.0.0.1:{port}/", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=1.0)
    asyncio.run(main(parser.parse_args().delay))
