"""The sample-controller's job written with kopf, as a new kopf user would (for bench_vs_kopf.py).

For every Foo: a Deployment named spec.deploymentName, owned by the Foo, with spec.replicas;
a change of spec.replicas patches the Deployment; the Deployment's availableReplicas is copied
into the Foo's status. Run: ``kopf run --standalone -n default benchmarks/kopf_foo_operator.py``.

Events: the sample-controller records a ``Synced`` Event on every sync. kopf posts its handlers'
outcomes ("Handler 'create_deployment' succeeded.") as Events only with
``settings.posting.loggers`` on, which kopf 1.45 turned off by default (before, it posted them).
``KOPF_POST_EVENTS=1`` (what ``bench_vs_kopf.py``'s ``kopf`` row sets) turns it on, so that kopf
posts its events as the sample-controller does; unset or ``0`` keeps kopf's default (no Events,
the ``kopf-quiet`` row, which also runs kopf with ``--quiet``).
"""

import os
from typing import Any

import kopf
import kubernetes

GROUP, VERSION = "samplecontroller.k8s.io", "v1alpha1"


@kopf.on.startup()
def login(settings: kopf.OperatorSettings, **_: Any) -> None:
    kubernetes.config.load_kube_config()
    settings.posting.loggers = os.environ.get("KOPF_POST_EVENTS", "0") == "1"


@kopf.on.create(GROUP, VERSION, "foos")
def create_deployment(spec: Any, name: str, namespace: str, **_: Any) -> None:
    labels = {"app": "nginx", "controller": name}
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": spec["deploymentName"], "labels": labels},
        "spec": {"replicas": spec.get("replicas", 1), "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]}}},
    }
    kopf.adopt(deployment)  # the Foo becomes the controller owner; namespace from the Foo
    kubernetes.client.AppsV1Api().create_namespaced_deployment(namespace, deployment)


@kopf.on.update(GROUP, VERSION, "foos", field="spec.replicas")
def scale_deployment(new: Any, spec: Any, namespace: str, **_: Any) -> None:
    kubernetes.client.AppsV1Api().patch_namespaced_deployment(
        spec["deploymentName"], namespace, {"spec": {"replicas": new}})


@kopf.on.event("apps", "v1", "deployments", labels={"controller": kopf.PRESENT})
def copy_status(body: Any, namespace: str, **_: Any) -> None:
    available = (body.get("status") or {}).get("availableReplicas")
    owner = next((o for o in body["metadata"].get("ownerReferences", []) if o.get("kind") == "Foo"), None)
    if available is None or owner is None:
        return
    kubernetes.client.CustomObjectsApi().patch_namespaced_custom_object_status(
        GROUP, VERSION, namespace, "foos", owner["name"], {"status": {"availableReplicas": available}})
