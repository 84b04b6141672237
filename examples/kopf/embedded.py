"""kopf's 12-embedded: the operator runs in a thread of a bigger application, which creates and
deletes objects while it runs, then stops it."""
import threading
from typing import Any

from samplecontroller.client.scheme import Scheme
from samplecontroller.client.unstructured import Unstructured, unstructured
from samplecontroller.kubernetes.scheme import add_to_scheme
from samplecontroller.rest import RESTClient
from samplecontroller.runtime import handled
from samplecontroller.runtime.manager import Manager, Options

KEX = unstructured("kopf.dev/v1", "KopfExample")
MEMO = {"create_tpl": "Hello, {name}!", "delete_tpl": "Good bye, {name}!"}  # kopf's memo
printed: list[str] = []
_said = threading.Condition()


def say(line: str) -> None:
    with _said:
        printed.append(line)
        _said.notify_all()


def said(line: str) -> None:
    with _said:
        _said.wait_for(lambda: line in printed, timeout=30)


def create_or_delete_fn(body: dict[str, Any], change: handled.Change) -> None:
    # kopf adds its finalizer before the create handlers: one handler with both keeps that order
    template = MEMO["create_tpl"] if change.reason == handled.CREATE else MEMO["delete_tpl"]
    say(template.format(**body["metadata"]))


def operator(rest: RESTClient, namespace: str) -> Manager:
    scheme = Scheme()
    add_to_scheme(scheme)
    Unstructured("kopf.dev/v1", "KopfExample").add_to_scheme(scheme)  # to write KopfExamples as dicts
    mgr = Manager(rest, Options(namespaces=(namespace,)), scheme=scheme)
    handled.add_handler(mgr, KEX, create_or_delete_fn, on=(handled.CREATE, handled.DELETE),
                        finalizer="kopf.dev/embedded")
    return mgr


def main(rest: RESTClient, namespace: str = "default", steps: int = 3) -> None:
    # Start the operator and let it initialise.
    say("Starting the main app.")
    mgr, stop_flag = operator(rest, namespace), threading.Event()
    thread = threading.Thread(target=mgr.start, args=(stop_flag,))
    thread.start()
    mgr.elected().wait()  # kopf's ready_flag

    # The operator is active: run the app's activity.
    client = mgr.get_api_reader()
    for step in range(steps):
        say(f"Do the main app activity here. Step {step + 1}/{steps}.")
        name = f"kopf-example-{step}"
        client.create({"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
                       "metadata": {"namespace": namespace, "name": name}})
        said(f"Hello, {name}!")
        client.delete(client.get(KEX, namespace, name))
        said(f"Good bye, {name}!")

    # Ask the operator to terminate gracefully.
    say("Exiting the main app.")
    stop_flag.set()
    thread.join()
