"""bench_async.py's awaited-call workload written with kopf, as a kopf user would: for every
ConfigMap labelled ``bench=awaited``, an async handler awaits the external service (aiohttp,
1 s per call, URL from $BENCH_URL, which counts the calls). Run:
``kopf run --standalone -n NAMESPACE benchmarks/kopf_awaited_call_operator.py``.
"""

import os
from typing import Any

import aiohttp
import kopf

SESSION: dict[str, aiohttp.ClientSession] = {}


@kopf.on.startup()
async def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.posting.enabled = False  # no k8s Events per handler: the others write none either
    SESSION["s"] = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1000))


@kopf.on.create("", "v1", "configmaps", labels={"bench": "awaited"})
async def call(**_: Any) -> None:
    async with SESSION["s"].get(os.environ["BENCH_URL"]) as resp:
        await resp.read()
