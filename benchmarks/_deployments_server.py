"""A static Deployments server for the informer benchmarks (run in its own process).

Serves N pre-encoded Deployments at /apis/apps/v1/namespaces/default/deployments (and the
cluster-wide path): lists honour ``limit``/``continue``; ``watch=true`` holds the stream open
(sending nothing) until the client goes away. Prints the port on stdout, then serves until killed.

    python benchmarks/_deployments_server.py N
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_decode import deployment


def main() -> None:
    n = int(sys.argv[1])
    items = [json.dumps(deployment(i), separators=(",", ":")).encode() for i in range(n)]
    rv = str(1000 + n)

    def body(start: int, end: int, token: str) -> bytes:
        meta = {"resourceVersion": rv}
        if token:
            meta["continue"] = token
        head = json.dumps({"apiVersion": "apps/v1", "kind": "DeploymentList", "metadata": meta})[:-1]
        return head.encode() + b',"items":[' + b",".join(items[start:end]) + b"]}"

    async def handle(request: web.Request) -> web.StreamResponse:
        q = request.query
        if q.get("watch") in ("true", "1"):
            resp = web.StreamResponse()
            resp.content_type = "application/json"
            await resp.prepare(request)
            while True:
                await asyncio.sleep(3600)
        start = int(q.get("continue") or 0)
        limit = int(q.get("limit") or 0)
        end = min(n, start + limit) if limit else n
        token = str(end) if end < n else ""
        return web.Response(body=body(start, end, token), content_type="application/json")

    app = web.Application()
    app.router.add_get("/apis/apps/v1/namespaces/default/deployments", handle)
    app.router.add_get("/apis/apps/v1/deployments", handle)

    async def start() -> None:
        runner = web.AppRunner(app, handle_signals=True, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        print(runner.addresses[0][1], flush=True)
        while True:
            await asyncio.sleep(3600)

    asyncio.run(start())


if __name__ == "__main__":
    main()
