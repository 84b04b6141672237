"""kopf's 11-filtering-handlers: kopf filters each handler by labels, annotations, fields and
callbacks; one level-based handler tests the same conditions (predicates filter events)."""
from typing import Any

from samplecontroller.client.unstructured import unstructured
from samplecontroller.runtime import daemon, handled
from samplecontroller.runtime.manager import Manager
from samplecontroller.runtime.reconcile import context

KEX = unstructured("kopf.dev/v1", "KopfExample")


def say_yes(value: Any, spec: dict[str, Any]) -> bool:
    return value == 'somevalue' and spec.get('field') is not None


def say_no(value: Any, spec: dict[str, Any]) -> bool:
    return value == 'somevalue' and spec.get('field') == 'not-this-value-for-sure'


def create_fn(body: dict[str, Any], change: handled.Change) -> None:
    logger, spec = context.current().logger, body.get("spec", {})
    labels, annotations = body["metadata"].get("labels", {}), body["metadata"].get("annotations", {})
    checks = {
        "Label is matching.": labels.get("somelabel") == "somevalue",
        "Label is present.": "somelabel" in labels,
        "Label is absent.": "nonexistent" not in labels,
        "Label callback matching.": say_yes(labels.get("somelabel"), spec),
        "Annotation is matching.": annotations.get("someannotation") == "somevalue",
        "Annotation is present.": "someannotation" in annotations,
        "Annotation is absent.": "nonexistent" not in annotations,
        "Annotation callback mismatch.": say_no(annotations.get("someannotation"), spec),
        "Filter satisfied.": True,  # when=lambda body, **_: True
        "Filter not satisfied.": False,
        "Field value is satisfied.": spec.get("field") == "value",
        "Field value is not satisfied.": spec.get("field") == "something-else",
        "Field presence is satisfied.": "field" in spec,
        "Field presence is not satisfied.": "inexistent" in spec,
    }
    for message in (message for message, passed in checks.items() if passed):
        logger.info(message)


def update_with_field_change(body: dict[str, Any], change: handled.Change) -> None:
    if (change.old, change.new) == ("value", "changed"):
        context.current().logger.info("Field change is satisfied.")


def daemon_with_field(d: daemon.Context) -> None:
    while not d.stopped.is_set():
        d.logger.info("Field daemon is satisfied.")
        d.sleep(1)


def setup(mgr: Manager) -> None:
    handled.add_handler(mgr, KEX, create_fn, on=handled.CREATE)
    handled.add_handler(mgr, KEX, update_with_field_change, on=handled.UPDATE, field="spec.field")
    daemon.add_daemon(mgr, KEX, daemon_with_field, when=lambda body: body.get("spec", {}).get("field") == "value")
