from samplecontroller.client.unstructured import unstructured
from samplecontroller.runtime import handled
from samplecontroller.runtime.manager import Manager
from samplecontroller.runtime.reconcile import context


def create_fn(body: object, change: handled.Change) -> None:
    context.current().logger.info("Something was logged here.")


def setup(mgr: Manager) -> None:
    handled.add_handler(mgr, unstructured("kopf.dev/v1", "KopfExample"), create_fn, on=handled.CREATE)
