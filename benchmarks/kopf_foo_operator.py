"""The sample-controller's job written with kopf, as a new kopf user would (for bench_vs_kopf.py).

For every Foo: a Deployment named spec.deploymentName, owned by the Foo, with spec.replicas;
a change of spec.replicas patches the Deployment; the Deployment's availableReplicas is copied
into the Foo's status. Run: ``kopf run --standalone -n default benchmarks/kopf_foo_operator.py``.
"""

from typing import Any

import kopf
import kubernetes

GROUP, VERSION = "samplecontroller.k8s.io", "v1alpha1"


@kopf.on.startup()
def login(**_: Any) -> None:
    kubernetes.config.load_kube_config()


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
