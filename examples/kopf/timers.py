from samplecontroller.client.unstructured import unstructured
from samplecontroller.runtime import daemon
from samplecontroller.runtime.manager import Manager


def every_few_seconds_sync(d: daemon.Context) -> None:
    d.logger.info(f"Ping from a sync timer: field={d.object['spec']['field']!r}")


async def every_few_seconds_async(d: daemon.Context) -> None:
    d.logger.info(f"Ping from an async timer: field={d.object['spec']['field']!r}")


def setup(mgr: Manager, s: float = 1.0) -> None:  # s: the test's time scale
    for fn, i, n in ((every_few_seconds_sync, 5, 2), (every_few_seconds_async, 10, 4)):
        daemon.add_timer(mgr, unstructured("kopf.dev/v1", "KopfExample"), fn, idle=i * s, interval=n * s)
