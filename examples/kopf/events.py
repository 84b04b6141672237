"""kopf's 04-events: send the custom events for the handled or other objects."""
from typing import Any

from samplecontroller.client.unstructured import unstructured
from samplecontroller.runtime import handled
from samplecontroller.runtime.manager import Manager
from samplecontroller.runtime.reconcile import context


def create_fn(body: Any, change: handled.Change) -> None:
    logger = context.current().logger.bind(body)

    # The all-purpose function for the event creation (kopf.event): Kubernetes' recorders post
    # Normal and Warning Events only; another type is refused with an "Unsupported event type" line.
    logger.event("SomeType", "SomeReason", "Some message")

    # The shortcuts for the conventional events and common cases (kopf.info, kopf.warn).
    logger.info("Some message", event="SomeReason")
    logger.warning("Some message", event="SomeReason")
    try:
        raise RuntimeError("Exception text.")
    except Exception as err:  # kopf.exception
        logger.error(f"Some exception: {err}", event="SomeReason")


def setup(mgr: Manager) -> None:
    handled.add_handler(mgr, unstructured("kopf.dev/v1", "KopfExample"), create_fn, on=handled.CREATE)
