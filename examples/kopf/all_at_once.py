"""kopf's 99-all-at-once: startup and cleanup hooks, create/update/field/delete handlers with
results in the status, Events, a child pod, and a handler for the child's events."""
import asyncio
import itertools
import pprint
import time
from typing import Any

from samplecontroller.client.types import MERGE_PATCH
from samplecontroller.client.unstructured import unstructured
from samplecontroller.kubernetes.apis.core.v1 import Container, Pod, PodSpec
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.logs import get_logger
from samplecontroller.runtime import builder, predicate, reconcile
from samplecontroller.runtime.client import RawPatch, set_controller_reference
from samplecontroller.runtime.handled import CREATE, DELETE, UPDATE, Change, add_handler
from samplecontroller.runtime.manager import Manager
from samplecontroller.runtime.reconcile import TemporaryError, context

KEX = unstructured("kopf.dev/v1", "KopfExample")
SCALE = 1.0  # the test shortens the delays
logger = get_logger("all-at-once")
_attempts = itertools.count()


async def startup_fn_simple() -> None:
    logger.info('Starting in 1s...')
    await asyncio.sleep(SCALE)


async def startup_fn_retried() -> None:
    retry = next(_attempts)
    if retry < 3:
        raise TemporaryError(f"Going to succeed in {3 - retry}s", delay=SCALE)
    logger.info('Starting retried...')


async def cleanup_fn() -> None:
    logger.info('Cleaning up in 3s...')
    await asyncio.sleep(3 * SCALE)


def setup(mgr: Manager) -> None:
    client = mgr.get_client()

    def result(body: Any, name: str, value: Any) -> None:  # kopf stores a handler's result in the status
        client.status().patch(body, RawPatch(MERGE_PATCH, {"status": {name: value}}))

    def create_1(body: Any, change: Change) -> None:
        children = _create_children(owner=body)
        log = context.current().logger.bind(body)
        log.info("AnyReason", event="AnyReason")
        log.event("Warning", "SomeReason", "Cannot do something")
        for child in children:
            log.bind(child).event("Normal", "SomeReason", "Created as part of the job1step")
        result(body, "create_1", {'job1-status': 100})

    def create_2(body: Any, change: Change) -> None:
        wait_for_something()  # specific for job2, e.g. an external API poller
        if not context.current().retries:
            raise Exception("Whoops!")  # will be retried, even if the operator has been restarted
        result(body, "create_2", {'job2-status': 100})

    def update(body: Any, change: Change) -> None:
        print('Handling the diff')
        pprint.pprint(list(change.diff))

    def update_lst(body: Any, change: Change) -> None:
        print(f'Handling the FIELD = {change.old} -> {change.new}')

    def delete(body: Any, change: Change) -> None:
        pass

    def create_pod(body: Any, change: Change) -> None:
        pod = Pod(metadata=ObjectMeta(generate_name=f"{body['metadata']['name']}-",
                                      namespace=body["metadata"]["namespace"],
                                      labels={'application': 'kopf-example-10'}),  # kopf.label
                  spec=PodSpec(containers=(Container(name="the-only-one", image="busybox",
                                                     command=("sh", "-x", "-c", "sleep 1")),)))
        client.create(set_controller_reference(body, pod, mgr.get_scheme()))  # kopf.adopt

    def example_pod_change(request: reconcile.Request) -> None:
        context.current().logger.info("This pod is special for us.")

    mgr.add_startup_hook(startup_fn_simple)
    mgr.add_startup_hook(startup_fn_retried)
    mgr.add_cleanup_hook(cleanup_fn)
    for fn, on in ((create_1, CREATE), (create_2, CREATE), (update, UPDATE), (create_pod, CREATE)):
        add_handler(mgr, KEX, fn, on=on)
    add_handler(mgr, KEX, update_lst, on=UPDATE, field="spec.lst")
    add_handler(mgr, KEX, delete, on=DELETE, finalizer="kopf.dev/all-at-once")
    (builder.controller_managed_by(mgr).named("example-pod-change")
     .for_(Pod, predicate.LabelSelectorPredicate("application=kopf-example-10"))
     .complete(reconcile.Func(example_pod_change)))


def _create_children(owner: Any) -> list[Any]:
    return []


def wait_for_something() -> None:
    # Note: intentionally blocking (a reconcile runs on a worker thread).
    time.sleep(SCALE)
