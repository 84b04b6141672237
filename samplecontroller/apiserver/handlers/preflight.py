"""Large write bodies checked off the event loop, so one huge request does not stall the others.

Every handler runs on the server's single event loop; validating a body of a few megabytes (a
ConfigMap with 100,000 label keys) and rendering its error list takes seconds of CPU, during
which no other client (``/readyz`` included) would be answered. For a create, update or patch
whose body is at least ``PREFLIGHT_BYTES``, ``preflight`` first runs the same operation as a
dry run on a worker thread (one at a time: large requests queue there, bounded work); when it
fails validation (400 or 422) that answer, already encoded, is the request's answer, and the
event loop keeps serving other requests meanwhile (the worker yields the interpreter every few
milliseconds). Anything else (a valid body, another error, a surprise from reading the store
while the loop writes it) falls through to the ordinary path on the loop, which decides: the
preflight never writes and never answers anything but a validation failure.

Skipped while admission webhooks or policies are registered: they must see the object before
it is validated, as in kube-apiserver.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from samplecontroller.apiserver import bodies
from samplecontroller.apiserver.errors import APIError
from samplecontroller.apiserver.handlers.common import Scope

__all__ = ["PREFLIGHT_BYTES", "preflight"]

PREFLIGHT_BYTES = 64 * 1024
"""Bodies at least this large are validated on the worker thread first."""

_EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="apiserver-preflight")


async def preflight(scope: Scope, size: int, dry_run: Callable[[], object]) -> None:
    """Run ``dry_run()`` (the request's operation as a dry run, on its own copy of the body) on
    the worker thread when the body's ``size`` is large; re-raise its 400/422 ``APIError`` (with
    the Status already encoded), ignore any other outcome."""
    if size < PREFLIGHT_BYTES or scope.admitter.active():
        return
    if not _started:
        _start_worker()
    # in the request's context: a deep value found there raises the request's recursion limit
    failure = await asyncio.get_running_loop().run_in_executor(_EXECUTOR, contextvars.copy_context().run,
                                                               _attempt, dry_run)
    if failure is not None:
        raise failure


_started = False


def _start_worker() -> None:
    """Start the executor's one thread with a large stack (values nested 10,000 deep, see
    ``bodies``); it lives as long as the executor."""
    global _started
    with bodies.big_stack():
        _EXECUTOR.submit(int).result()
    _started = True


def _attempt(dry_run: Callable[[], object]) -> APIError | None:
    try:
        dry_run()
    except APIError as err:
        if err.code in (400, 422):
            err.encode()
            return err
    except Exception:
        return None
    return None
