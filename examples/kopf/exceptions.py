"""kopf's 03-exceptions: a permanent error, a temporary one with a delay, retries with a
backoff (logged with tracebacks) and errors made permanent."""
from typing import Any

from samplecontroller.client.unstructured import unstructured
from samplecontroller.runtime.handled import CREATE, Change, add_handler
from samplecontroller.runtime.manager import Manager
from samplecontroller.runtime.reconcile import PermanentError, TemporaryError, context

KEX = unstructured("kopf.dev/v1", "KopfExample")
DELAY = 1.0  # kopf's delay= and backoff= (the test shortens it)


class MyException(Exception):
    pass


def instant_failure_with_only_a_message(body: Any, change: Change) -> None:
    raise PermanentError("Fail once and for all.")


def eventual_success_with_a_few_messages(body: Any, change: Change) -> None:
    if context.current().retries < 3:  # 0, 1, 2, 3
        raise TemporaryError("Expected recoverable error.", delay=DELAY)


def eventual_failure_with_tracebacks(body: Any, change: Change) -> None:
    raise MyException("An error that is supposed to be recoverable.")


def instant_failure_with_traceback(body: Any, change: Change) -> None:
    raise MyException("An error that is supposed to be recoverable.")


def setup(mgr: Manager) -> None:
    add_handler(mgr, KEX, instant_failure_with_only_a_message, on=CREATE)
    add_handler(mgr, KEX, eventual_success_with_a_few_messages, on=CREATE)
    add_handler(mgr, KEX, eventual_failure_with_tracebacks, on=CREATE, retries=3,
                backoff=DELAY)
    add_handler(mgr, KEX, instant_failure_with_traceback, on=CREATE, errors="permanent")
