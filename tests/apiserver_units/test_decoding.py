"""Built-in kinds are decoded as kube-apiserver's Go decoder does: types, ranges, nulls, unknown fields."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from samplecontroller.apiserver.decoding import DecodeError, normalize


def deployment(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "replicas": 1, "selector": {"matchLabels": {"app": "a"}},
        "template": {"metadata": {"labels": {"app": "a"}},
                     "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}]}},
    }
    base.update(spec)
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": base}


def test_a_valid_object_is_left_as_it_is() -> None:
    obj = deployment(strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}})
    before = copy.deepcopy(obj)
    assert normalize("apps", "v1", "Deployment", obj) == []
    assert obj == before


@pytest.mark.parametrize(("spec", "message"), [
    ({"replicas": "3"}, "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"),
    ({"replicas": 2**31}, "json: cannot unmarshal number 2147483648 into Go struct field DeploymentSpec.spec.replicas "
                          "of type int32"),
    ({"replicas": 1.5}, "cannot unmarshal number into Go struct field DeploymentSpec.spec.replicas of type int32"),
    ({"paused": "yes"}, "cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of type bool"),
    ({"strategy": {"rollingUpdate": {"maxSurge": True}}},
     "cannot unmarshal bool into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge"),
    ({"selector": {"matchLabels": {"app": 1}}},
     "cannot unmarshal number into Go struct field LabelSelector.spec.selector.matchLabels.app of type string"),
])
def test_wrong_types_are_rejected_with_the_go_message(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(DecodeError) as info:
        normalize("apps", "v1", "Deployment", deployment(**spec))
    assert str(info.value).startswith('Deployment in version "v1" cannot be handled as a Deployment: ')
    assert message in str(info.value)


def test_nulls_become_zero_values() -> None:
    obj = deployment(replicas=None, paused=None)
    obj["metadata"]["labels"] = None
    obj["spec"]["template"]["metadata"]["creationTimestamp"] = None
    obj["spec"]["template"]["spec"]["containers"][0]["args"] = ["a", None]
    obj["spec"]["selector"]["matchLabels"]["tier"] = None
    assert normalize("apps", "v1", "Deployment", obj) == []
    assert "replicas" not in obj["spec"] and "paused" not in obj["spec"] and "labels" not in obj["metadata"]
    assert "creationTimestamp" not in obj["spec"]["template"]["metadata"]
    assert obj["spec"]["template"]["spec"]["containers"][0]["args"] == ["a", ""]
    assert obj["spec"]["selector"]["matchLabels"] == {"app": "a", "tier": ""}


def test_unknown_fields_are_dropped_and_reported() -> None:
    obj = deployment(bogus=1)
    obj["spec"]["template"]["spec"]["containers"][0]["colour"] = "blue"
    obj["extra"] = {"x": 1}
    assert sorted(normalize("apps", "v1", "Deployment", obj)) == [
        "extra", "spec.bogus", "spec.template.spec.containers[0].colour"]
    assert "bogus" not in obj["spec"] and "extra" not in obj
    assert "colour" not in obj["spec"]["template"]["spec"]["containers"][0]


def test_free_form_parts_and_special_scalars() -> None:
    cm: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "c", "managedFields": [{"manager": "m", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:a": {}}}}]},
        "data": {"a": "b"}}
    assert normalize("", "v1", "ConfigMap", cm) == []
    assert cm["metadata"]["managedFields"][0]["fieldsV1"] == {"f:data": {"f:a": {}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{
        "name": "c", "image": "i", "resources": {"limits": {"cpu": 1, "memory": "1Gi"}},
        "livenessProbe": {"httpGet": {"port": "http"}}}]}}
    assert normalize("", "v1", "Pod", pod) == []


def test_secret_data_must_be_base64() -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"ok": "YQ==", "bad": "!!"}}
    with pytest.raises(DecodeError, match=r"illegal base64 data in Secret\.data\.bad"):
        normalize("", "v1", "Secret", secret)


def test_kinds_without_a_definition_are_left_alone() -> None:
    obj = {"apiVersion": "example.com/v1", "kind": "Thing", "anything": [1, None]}
    assert normalize("example.com", "v1", "Thing", obj) == []
    assert obj["anything"] == [1, None]


def test_quantities_are_canonical() -> None:
    """Go decodes every resource.Quantity and writes it back canonical; a null map value is a
    zero Quantity ("0"), a null pointer field (sizeLimit) is dropped."""
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "overhead": {"cpu": "0.1"},
        "containers": [{"name": "c", "image": "i", "resources": {
            "limits": {"cpu": 2, "memory": " 1.5Gi ", "nvidia.com/gpu": None}, "requests": {"cpu": 0.5}}}],
        "volumes": [{"name": "v", "emptyDir": {"sizeLimit": None}}, {"name": "w", "emptyDir": {"sizeLimit": "1e3"}}]}}
    assert normalize("", "v1", "Pod", pod) == []
    assert pod["spec"]["overhead"] == {"cpu": "100m"}
    assert pod["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "2", "memory": "1536Mi", "nvidia.com/gpu": "0"}, "requests": {"cpu": "500m"}}
    assert pod["spec"]["volumes"] == [{"name": "v", "emptyDir": {}}, {"name": "w", "emptyDir": {"sizeLimit": "1e3"}}]
    bad = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
           "spec": {"resources": {"requests": {"storage": {"value": 1}}}}}
    with pytest.raises(DecodeError) as info:
        normalize("", "v1", "PersistentVolumeClaim", bad)
    assert str(info.value) == ('PersistentVolumeClaim in version "v1" cannot be handled as a PersistentVolumeClaim: '
                               "quantities must match the regular expression "
                               "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


def test_quantities_of_other_groups() -> None:
    """Found from the definitions wherever they are: HPA targets, PV capacity, DRA capacities."""
    hpa: dict[str, Any] = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
                           "spec": {"metrics": [{"type": "Resource", "resource": {
                               "name": "memory", "target": {"type": "AverageValue", "averageValue": "0.5Gi"}}}]}}
    normalize("autoscaling", "v2", "HorizontalPodAutoscaler", hpa)
    assert hpa["spec"]["metrics"][0]["resource"]["target"]["averageValue"] == "512Mi"
    pv: dict[str, Any] = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
                          "spec": {"capacity": {"storage": "1000M"}}}
    normalize("", "v1", "PersistentVolume", pv)
    assert pv["spec"]["capacity"] == {"storage": "1G"}
    slice_: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
                              "spec": {"driver": "d", "devices": [{"name": "gpu", "capacity": {
                                  "memory": {"value": "16384Mi", "requestPolicy": {"default": "1024Mi"}}}}]}}
    normalize("resource.k8s.io", "v1", "ResourceSlice", slice_)
    assert slice_["spec"]["devices"][0]["capacity"]["memory"] == {"value": "16Gi", "requestPolicy": {"default": "1Gi"}}
