"""kopf's 13-hooks: startup hooks (one retried), cleanup, probes and a task per pod.
kopf's on.login has no equivalent to write: kubeconfig (exec plugins, tokens,
certificates) and the in-cluster service account are read by ``rest.config``."""
import asyncio
import itertools
import random

from samplecontroller.kubernetes.apis.core.v1 import Pod
from samplecontroller.logs import get_logger
from samplecontroller.runtime import daemon
from samplecontroller.runtime.manager import Manager
from samplecontroller.runtime.reconcile import TemporaryError

LOCK: asyncio.Lock  # requires a loop on creation
STOPPERS: dict[str, dict[str, asyncio.Event]] = {}  # [namespace][name]
SCALE = 1.0  # the test shortens the delays
logger = get_logger("hooks")
_attempts = itertools.count()


async def startup_fn_simple() -> None:
    logger.info("Initialising the task-lock...")
    global LOCK
    LOCK = asyncio.Lock()  # in the manager's event loop


async def startup_fn_retried() -> None:
    retry = next(_attempts)
    if retry < 3:
        raise TemporaryError(f"Going to succeed in {3 - retry}s", delay=SCALE)
    logger.info("Starting retried...")


async def cleanup_fn() -> None:
    logger.info("Cleaning up...")
    for namespace in STOPPERS:
        for flag in STOPPERS[namespace].values():
            flag.set()
    logger.info("All pod-tasks are requested to stop...")


def tasks_count() -> int:
    return sum(len(flags) for flags in STOPPERS.values())


def monitored_objects() -> dict[str, list[str]]:
    return {namespace: sorted(STOPPERS[namespace]) for namespace in STOPPERS}


async def pod_task(d: daemon.Context) -> None:  # a task per pod, cancelled when it goes
    async with LOCK:
        flags = STOPPERS.setdefault(d.request.namespace, {})
        shouldstop = flags.setdefault(d.request.name, asyncio.Event())
    try:
        while not shouldstop.is_set():
            await asyncio.sleep(random.randint(1, 10) * SCALE)
            d.logger.info("Served by the background task.")
        d.logger.info("Serving is finished by request.")
    finally:
        del STOPPERS[d.request.namespace][d.request.name]


def setup(mgr: Manager) -> None:
    mgr.add_startup_hook(startup_fn_simple)
    mgr.add_startup_hook(startup_fn_retried)
    mgr.add_cleanup_hook(cleanup_fn)
    mgr.add_probe("tasks_count", tasks_count)
    mgr.add_probe("monitored_objects", monitored_objects)
    daemon.add_daemon(mgr, Pod, pod_task, cancellation_timeout=5)
