"""kopf's 02-children: each KopfExample gets a Pod, adopted, whose uid goes into the status."""
from typing import Any

from samplecontroller.client.types import MERGE_PATCH
from samplecontroller.client.unstructured import unstructured
from samplecontroller.kubernetes.apis.core.v1 import Container, EnvVar, Pod, PodSpec
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.runtime import handled
from samplecontroller.runtime.client import RawPatch, set_controller_reference
from samplecontroller.runtime.manager import Manager

KEX = unstructured("kopf.dev/v1", "KopfExample")


def setup(mgr: Manager) -> None:
    client = mgr.get_client()

    def create_fn(body: dict[str, Any], change: handled.Change) -> None:
        spec, md = body.get("spec", {}), body["metadata"]

        # Render the pod with some spec fields used in the template.
        pod = Pod(metadata=ObjectMeta(generate_name=f"{md['name']}-", namespace=md["namespace"]),
                  spec=PodSpec(containers=(Container(
                      name="the-only-one", image="busybox", command=("sh", "-x", "-c"),
                      args=(f'echo "FIELD=$FIELD"\nsleep {spec.get("duration", 0)}\n',),
                      env=(EnvVar(name="FIELD", value=spec.get("field", "default-value")),)),)))

        # Make it our child (kopf.adopt) and create it.
        pod = client.create(set_controller_reference(body, pod, mgr.get_scheme()))

        # Update the parent's status.
        patch = {"status": {"create_fn": {"children": [pod.metadata.uid]}}}
        client.status().patch(body, RawPatch(MERGE_PATCH, patch))

    handled.add_handler(mgr, KEX, create_fn, on=handled.CREATE)
