"""The testing guide's reactor example (docs/guides/testing.md includes the section between
the markers; tests/docs/test_snippets.py runs this file)."""

# --8<-- [start:reactor]
from typing import Any

from samplecontroller.apimachinery import errors
from samplecontroller.kubernetes.apis.apps.v1 import Deployment
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.kubernetes.clientset.fake import new_clientset

kube = new_clientset()


def fail_creates(action: Any) -> tuple[bool, Any, Exception | None]:
    """A reactor: (handled, the object to answer with, the error to raise)."""
    name = action.get_object().metadata.name
    return True, None, errors.new_conflict("apps", "deployments", name, "stale")


kube.prepend_reactor("create", "deployments", fail_creates)

deployments = kube.apps_v1().deployments("default")
try:  # the code under test would make this call
    deployments.create(Deployment(metadata=ObjectMeta(name="web")))
except errors.StatusError as err:
    assert errors.is_conflict(err)
else:
    raise AssertionError("the reactor did not answer")
verbs = [(a.get_verb(), a.get_resource().resource) for a in kube.actions()]
assert verbs == [("create", "deployments")]
# --8<-- [end:reactor]
