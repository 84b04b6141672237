"""kopf's 14-daemons: a sync daemon and an async one, each failing 3 times first."""
import asyncio
import time
from typing import Any

from samplecontroller.client.types import MERGE_PATCH
from samplecontroller.client.unstructured import unstructured
from samplecontroller.runtime import daemon
from samplecontroller.runtime.client import RawPatch
from samplecontroller.runtime.manager import Manager
from samplecontroller.runtime.reconcile import TemporaryError

KEX = unstructured("kopf.dev/v1", "KopfExample")
SCALE = 1.0  # the test shortens the delays


def setup(mgr: Manager) -> None:
    def patch_status(d: daemon.Context, **status: Any) -> None:
        patch = RawPatch(MERGE_PATCH, {"status": status})
        mgr.get_client().status().patch(d.object, patch)

    # Sync daemons in threads are non-interruptable, they must check ``stopped``.
    # This daemon exits after 3 attempts and then 30 s of running (unless stopped).
    def background_sync(d: daemon.Context) -> None:
        if d.retries < 3:
            patch_status(d, message=f"Failed {d.retries + 1} times.")
            raise TemporaryError("Simulated failure.", delay=SCALE)
        started = time.time()
        while not d.stopped.is_set() and time.time() - started <= 30 * SCALE:
            field = d.object["spec"]["field"]
            d.logger.info(f"=> Ping from a sync daemon: field={field!r}, "
                          f"retry={d.retries}")
            d.sleep(5.0 * SCALE)
        patch_status(d, message="Accompanying is finished.")

    # Async daemons are cancelled (asyncio.CancelledError) to stop them.
    # This daemon runs until stopped (cancelled). Yet fails to start for 3 first times.
    async def background_async(d: daemon.Context) -> None:
        if d.retries < 3:
            raise TemporaryError("Simulated failure.", delay=SCALE)
        while True:
            field = d.object["spec"]["field"]
            d.logger.info(f"=> Ping from an async daemon: field={field!r}")
            await asyncio.sleep(5.0 * SCALE)

    daemon.add_daemon(mgr, KEX, background_sync, backoff=3, cancellation_timeout=5,
                      finalizer="kopf.dev/daemons")
    daemon.add_daemon(mgr, KEX, background_async, backoff=3, cancellation_timeout=0.5,
                      when=lambda b: b["metadata"].get("annotations", {})
                      .get("someannotation") == "somevalue")
