"""extract(obj, manager): the fields a server-side apply manager owns, as an apply body (client-go's
Extract functions), against the embedded API server."""

from __future__ import annotations

from samplecontroller.apimachinery.managedfields import extract
from samplecontroller.kubernetes.clientset import Clientset
from samplecontroller.rest import RESTClient
from tests.live import ns, rest

__all__ = ["ns", "rest"]


def deployment(ns: str, **spec: object) -> dict[str, object]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": ns}, "spec": spec}


def test_extract_then_apply_changes_one_field(rest: RESTClient, ns: str) -> None:
    deployments = Clientset(rest).apps_v1().deployments(ns)
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
        {"name": "app", "image": "nginx:1", "env": [{"name": "A", "value": "1"}]}]}}
    deployments.apply(deployment(ns, replicas=2, selector={"matchLabels": {"app": "web"}}, template=template),
                      field_manager="owner")
    # another manager owns another field
    deployments.apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {
        "name": "web", "namespace": ns, "labels": {"team": "b"}}}, field_manager="other")
    live = deployments.get("web")
    mine = extract(live, "owner")
    assert mine["metadata"] == {"name": "web", "namespace": ns}  # "other"'s label is not mine
    assert mine["spec"]["replicas"] == 2
    assert mine["spec"]["template"]["spec"]["containers"] == [
        {"name": "app", "image": "nginx:1", "env": [{"name": "A", "value": "1"}]}]
    assert "strategy" not in mine["spec"]  # defaulted by the server, owned by nobody's apply
    assert extract(live, "other")["metadata"]["labels"] == {"team": "b"}
    # read, modify, apply: only replicas changes, nothing is taken from "other"
    mine["spec"]["replicas"] = 3
    after = deployments.apply(mine, field_manager="owner")
    assert after.spec.replicas == 3 and after.metadata.labels == {"team": "b"}  # type: ignore[union-attr]
    assert extract(after, "owner")["spec"]["template"] == extract(live, "owner")["spec"]["template"]


def test_no_entry_gives_the_identity_only(rest: RESTClient, ns: str) -> None:
    cms = Clientset(rest).core_v1().configmaps(ns)
    cm = cms.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}})
    assert extract(cm, "nobody") == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": ns}}
