"""The fields of the gates whose default changed between Kubernetes 1.33 and 1.37, dropped
under an emulated version as kube-apiserver drops them: on create, and on update unless the
stored object uses them (kube's own "in use" checks). A Pod's and every pod template's as
pkg/api/pod/util.go ``dropDisabledFields`` and ``dropDisabledPodStatusFields`` do
(``recent.drop_disabled``, a Pod's status writes ``recent.drop_disabled_status``); a
StatefulSet's ``maxUnavailable``; the resource.k8s.io kinds' (served from 1.34)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from samplecontroller.apiserver.strategies.recent import GATES, drop_disabled, drop_disabled_status


def _pod(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"containers": [{"name": "app", "image": "busybox"}]}
    base.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": base}


def _created(pod: dict[str, Any], minor: int, group: str = "", kind: str = "Pod") -> dict[str, Any]:
    obj = copy.deepcopy(pod)
    drop_disabled(group, kind, obj, None, minor)
    return obj


def _updated(pod: dict[str, Any], old: dict[str, Any], minor: int) -> dict[str, Any]:
    obj = copy.deepcopy(pod)
    drop_disabled("", "Pod", obj, old, minor)
    return obj


def _status_write(status: dict[str, Any], old: dict[str, Any], minor: int) -> dict[str, Any]:
    obj = {**copy.deepcopy(old), "status": copy.deepcopy(status)}
    drop_disabled_status("", "Pod", obj, old, minor)
    result: dict[str, Any] = obj["status"]
    return result


def test_the_gates_take_their_versions_from_kube_features() -> None:
    """kube_features.go 1.37's versioned specs: the first minor each is on by default."""
    assert {g: GATES[g] for g in ("DynamicResourceAllocation", "PodLevelResources", "ImageVolume",
                                  "ClusterTrustBundleProjection", "PodObservedGenerationTracking",
                                  "InPlacePodLevelResourcesVerticalScaling", "DRAExtendedResource",
                                  "ResourceHealthStatus")} == {
        "DynamicResourceAllocation": 34, "PodLevelResources": 34, "ImageVolume": 35,
        "ClusterTrustBundleProjection": 37, "PodObservedGenerationTracking": 34,
        "InPlacePodLevelResourcesVerticalScaling": 36, "DRAExtendedResource": 36, "ResourceHealthStatus": 36}


_LEVEL = {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}


def test_pod_level_resources() -> None:
    """dropDisabledPodLevelResources: ``spec.resources`` goes before 1.34 unless the stored spec's
    has requests or limits (an empty one does not count)."""
    pod = _pod(resources=_LEVEL)
    assert "resources" not in _created(pod, 33)["spec"]
    assert _created(pod, 34)["spec"]["resources"] == _LEVEL
    assert _updated(pod, _pod(resources={"limits": {"memory": "1Gi"}}), 33)["spec"]["resources"] == _LEVEL
    assert "resources" not in _updated(pod, _pod(resources={}), 33)["spec"]
    template = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                "spec": {"template": {"spec": pod["spec"]}}}
    assert "resources" not in _created(template, 33, "apps", "Deployment")["spec"]["template"]["spec"]


def _claims_pod() -> dict[str, Any]:
    claimed = {"name": "app", "image": "busybox", "resources": {"claims": [{"name": "gpu"}], "limits": {"cpu": "1"}}}
    return _pod(resourceClaims=[{"name": "gpu", "resourceClaimName": "gpu-claim"}], containers=[claimed],
                initContainers=[{**claimed, "name": "init"}],
                ephemeralContainers=[{**claimed, "name": "debug"}])


def test_dynamic_resource_allocation_spec() -> None:
    """dropDisabledDynamicResourceAllocationFields: before 1.34 ``resourceClaims`` and every
    container's ``resources.claims`` go (the rest of its resources stays) unless the stored spec
    has resourceClaims (containers' claims alone do not count)."""
    spec = _created(_claims_pod(), 33)["spec"]
    assert "resourceClaims" not in spec
    assert [c["resources"] for k in ("initContainers", "containers", "ephemeralContainers") for c in spec[k]] == \
        [{"limits": {"cpu": "1"}}] * 3
    assert _created(_claims_pod(), 34)["spec"] == _claims_pod()["spec"]
    assert _updated(_claims_pod(), _pod(resourceClaims=[{"name": "x"}]), 33)["spec"] == _claims_pod()["spec"]
    containers_only = _pod(containers=_claims_pod()["spec"]["containers"])
    assert "resourceClaims" not in _updated(_claims_pod(), containers_only, 33)["spec"]


def test_dynamic_resource_allocation_status() -> None:
    """dropDisabledPodStatusFields: ``status.resourceClaimStatuses`` goes before 1.34 unless the
    stored pod's *spec* has resourceClaims, on a status write and on a create."""
    status = {"phase": "Running", "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "c"}]}
    assert _status_write(status, _pod(), 33) == {"phase": "Running"}
    assert _status_write(status, _pod(), 34) == status
    assert _status_write(status, _pod(resourceClaims=[{"name": "gpu"}]), 33) == status
    assert "resourceClaimStatuses" not in _created({**_pod(), "status": status}, 33)["status"]


def test_image_volumes() -> None:
    """dropImageVolumes: before 1.35 an ``image`` volume goes whole, with every container's mounts
    of it (a list left empty goes too), unless the stored spec has an image volume."""
    mounts = [{"name": "model", "mountPath": "/m"}, {"name": "scratch", "mountPath": "/s"}]
    pod = _pod(volumes=[{"name": "model", "image": {"reference": "registry.example/model:1"}},
                        {"name": "scratch", "emptyDir": {}}],
               containers=[{"name": "app", "image": "busybox", "volumeMounts": mounts}],
               initContainers=[{"name": "init", "image": "busybox", "volumeMounts": mounts[:1]}])
    spec = _created(pod, 34)["spec"]
    assert spec["volumes"] == [{"name": "scratch", "emptyDir": {}}]
    assert spec["containers"][0]["volumeMounts"] == mounts[1:]
    assert "volumeMounts" not in spec["initContainers"][0]
    assert _created(pod, 35)["spec"] == pod["spec"]
    in_use = _pod(volumes=[{"name": "other", "image": {"reference": "r"}}])
    assert _updated(pod, in_use, 34)["spec"] == pod["spec"]
    only = _pod(volumes=pod["spec"]["volumes"][:1])
    assert "volumes" not in _created(only, 33)["spec"]


def test_cluster_trust_bundle_projection() -> None:
    """dropDisabledClusterTrustBundleProjection: before 1.37 every projected source's
    ``clusterTrustBundle`` goes (the source stays, empty) unless the stored spec projects one."""
    bundle = {"signerName": "example.com/signer", "path": "ca.pem"}
    pod = _pod(volumes=[{"name": "ca", "projected": {"sources": [
        {"clusterTrustBundle": bundle}, {"configMap": {"name": "c"}}]}}])
    assert _created(pod, 36)["spec"]["volumes"][0]["projected"]["sources"] == [{}, {"configMap": {"name": "c"}}]
    assert _created(pod, 37)["spec"] == pod["spec"]
    old = _pod(volumes=[{"name": "x", "projected": {"sources": [{"clusterTrustBundle": {"name": "b", "path": "p"}}]}}])
    assert _updated(pod, old, 33)["spec"] == pod["spec"]


def test_pod_observed_generation() -> None:
    """Before 1.34 ``status.observedGeneration`` and the conditions' go, unless the stored status
    or one of its conditions has a non-zero one."""
    status = {"phase": "Running", "observedGeneration": 2,
              "conditions": [{"type": "Ready", "status": "True", "observedGeneration": 2}]}
    assert _status_write(status, _pod(), 33) == {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    assert _status_write(status, _pod(), 34) == status
    tracked = {**_pod(), "status": {"conditions": [{"type": "Ready", "status": "True", "observedGeneration": 1}]}}
    assert _status_write(status, tracked, 33) == status
    zero = {**_pod(), "status": {"observedGeneration": 0}}
    assert "observedGeneration" not in _status_write(status, zero, 33)


@pytest.mark.parametrize("minor", [33, 35])
def test_status_fields_of_the_1_36_gates(minor: int) -> None:
    """Before 1.36: ``status.resources`` and ``allocatedResources``
    (InPlacePodLevelResourcesVerticalScaling) unless the stored status has either,
    ``extendedResourceClaimStatus`` (DRAExtendedResource) unless stored, and containers'
    ``allocatedResourcesStatus`` (ResourceHealthStatus) whatever is stored."""
    health = [{"name": "claim:gpu", "resources": [{"resourceID": "gpu-0", "health": "Healthy"}]}]
    status = {"phase": "Running", "resources": {"limits": {"cpu": "1"}}, "allocatedResources": {"cpu": "1"},
              "extendedResourceClaimStatus": {"resourceClaimName": "c", "requestMappings": []},
              "containerStatuses": [{"name": "app", "allocatedResourcesStatus": health}],
              "initContainerStatuses": [{"name": "init", "allocatedResourcesStatus": health}]}
    assert _status_write(status, _pod(), minor) == {
        "phase": "Running", "containerStatuses": [{"name": "app"}], "initContainerStatuses": [{"name": "init"}]}
    assert _status_write(status, _pod(), 36) == status
    stored = {**_pod(), "status": status}
    assert _status_write(status, stored, minor) == {
        **status, "containerStatuses": [{"name": "app"}], "initContainerStatuses": [{"name": "init"}]}
    only_allocated = {**_pod(), "status": {"allocatedResources": {"cpu": "1"}}}
    assert _status_write(status, only_allocated, minor)["resources"] == status["resources"]


def _stateful_set(**rolling: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"},
            "spec": {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0, **rolling}}}}


def test_stateful_set_max_unavailable() -> None:
    """MaxUnavailableStatefulSet (on from 1.37): before, ``maxUnavailable`` goes unless the stored
    StatefulSet sets it (dropStatefulSetDisabledFields); from 1.37 an unset one of a RollingUpdate
    is 1 (SetDefaults_StatefulSet), an OnDelete strategy gets none."""
    def prepared(obj: dict[str, Any], minor: int, old: dict[str, Any] | None = None) -> Any:
        obj = copy.deepcopy(obj)
        drop_disabled("apps", "StatefulSet", obj, old, minor)
        return obj["spec"]["updateStrategy"]

    assert prepared(_stateful_set(maxUnavailable="50%"), 36)["rollingUpdate"] == {"partition": 0}
    assert prepared(_stateful_set(maxUnavailable="50%"), 36, _stateful_set(maxUnavailable=2))["rollingUpdate"] == \
        {"partition": 0, "maxUnavailable": "50%"}
    assert prepared(_stateful_set(maxUnavailable="50%"), 37)["rollingUpdate"]["maxUnavailable"] == "50%"
    assert prepared(_stateful_set(), 37)["rollingUpdate"] == {"partition": 0, "maxUnavailable": 1}
    assert prepared(_stateful_set(), 36)["rollingUpdate"] == {"partition": 0}
    on_delete = {**_stateful_set(), "spec": {"updateStrategy": {"type": "OnDelete"}}}
    assert prepared(on_delete, 37) == {"type": "OnDelete"}


_CLAIM_SPEC: dict[str, Any] = {"devices": {
    "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "capacity": {"requests": {"memory": "1Gi"}},
                                             "tolerations": [{"key": "k", "operator": "Exists"}]}},
                 {"name": "any", "firstAvailable": [{"name": "a", "deviceClassName": "gpu",
                                                     "tolerations": [{"key": "k", "operator": "Exists"}],
                                                     "capacity": {"requests": {"memory": "1Gi"}}}]}],
    "constraints": [{"requests": ["gpu"], "distinctAttribute": "example.com/id"}]}}
_BARE_CLAIM_SPEC: dict[str, Any] = {"devices": {
    "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}},
                 {"name": "any", "firstAvailable": [{"name": "a", "deviceClassName": "gpu"}]}],
    "constraints": [{"requests": ["gpu"]}]}}


def _claim(spec: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
             "spec": copy.deepcopy(spec)}
    if status is not None:
        claim["status"] = copy.deepcopy(status)
    return claim


def test_resource_claim_spec() -> None:
    """pkg/api/resourceclaimspec DropDisabledFields: before 1.36 requests' and subrequests'
    ``tolerations`` (DRADeviceTaints) and constraints' ``distinctAttribute`` with requests' and
    subrequests' ``capacity`` (DRAConsumableCapacity) go unless the stored spec uses them; a
    ResourceClaimTemplate's spec.spec too."""
    assert _created(_claim(_CLAIM_SPEC), 35, "resource.k8s.io", "ResourceClaim")["spec"] == _BARE_CLAIM_SPEC
    assert _created(_claim(_CLAIM_SPEC), 36, "resource.k8s.io", "ResourceClaim")["spec"] == _CLAIM_SPEC
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t"},
                "spec": {"spec": copy.deepcopy(_CLAIM_SPEC)}}
    assert _created(template, 34, "resource.k8s.io", "ResourceClaimTemplate")["spec"]["spec"] == _BARE_CLAIM_SPEC
    only_taints = copy.deepcopy(_BARE_CLAIM_SPEC)
    only_taints["devices"]["requests"][1]["firstAvailable"][0]["tolerations"] = [{"key": "x", "operator": "Exists"}]
    obj = _claim(_CLAIM_SPEC)
    drop_disabled("resource.k8s.io", "ResourceClaim", obj, _claim(only_taints), 35)
    exactly = obj["spec"]["devices"]["requests"][0]["exactly"]
    assert "tolerations" in exactly and "capacity" not in exactly
    assert "distinctAttribute" not in obj["spec"]["devices"]["constraints"][0]


def test_resource_claim_status() -> None:
    """dropDisabledStatusFields: before 1.36 results' ``shareID`` and ``consumedCapacity`` and
    devices' ``shareID`` go unless the stored claim uses consumable capacity (spec or status);
    results' ``bindingConditions`` and ``bindingFailureConditions`` unless stored results have
    them."""
    result = {"request": "gpu", "driver": "d", "pool": "p", "device": "g0", "shareID": "u1",
              "consumedCapacity": {"memory": "1Gi"}, "bindingConditions": ["Ready"],
              "bindingFailureConditions": ["Failed"]}
    status = {"allocation": {"devices": {"results": [result]}},
              "devices": [{"driver": "d", "pool": "p", "device": "g0", "shareID": "u1"}]}
    plain = {"request": "gpu", "driver": "d", "pool": "p", "device": "g0"}
    bare: dict[str, Any] = {"allocation": {"devices": {"results": [plain]}},
                            "devices": [{"driver": "d", "pool": "p", "device": "g0"}]}

    def written(old: dict[str, Any], minor: int) -> Any:
        obj = {**copy.deepcopy(old), "status": copy.deepcopy(status)}
        drop_disabled_status("resource.k8s.io", "ResourceClaim", obj, old, minor)
        return obj["status"]

    assert written(_claim(_BARE_CLAIM_SPEC), 35) == bare
    assert written(_claim(_BARE_CLAIM_SPEC), 36) == status
    assert written(_claim(_CLAIM_SPEC), 35)["devices"] == status["devices"]
    shared = _claim(_BARE_CLAIM_SPEC, {"devices": [{"driver": "d", "pool": "p", "device": "g0", "shareID": "u0"}]})
    assert written(shared, 34)["allocation"]["devices"]["results"][0]["consumedCapacity"] == {"memory": "1Gi"}
    bound = _claim(_BARE_CLAIM_SPEC, {"allocation": {"devices": {"results": [
        {**plain, "bindingFailureConditions": ["X"]}]}}})
    kept = written(bound, 35)["allocation"]["devices"]["results"][0]
    assert kept["bindingConditions"] == ["Ready"] and "shareID" not in kept


def test_device_class_extended_resource_name() -> None:
    """dropDisabledDRAExtendedResourceFields: before 1.36 ``spec.extendedResourceName`` goes unless
    the stored class has one."""
    cls = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"extendedResourceName": "example.com/gpu"}}
    assert _created(cls, 35, "resource.k8s.io", "DeviceClass")["spec"] == {}
    assert _created(cls, 36, "resource.k8s.io", "DeviceClass")["spec"] == cls["spec"]
    obj = copy.deepcopy(cls)
    drop_disabled("resource.k8s.io", "DeviceClass", obj, {**cls, "spec": {"extendedResourceName": "x.io/y"}}, 34)
    assert obj["spec"] == cls["spec"]


def test_resource_slice() -> None:
    """resourceslice dropDisabledFields: before 1.36 devices' ``taints`` (DRADeviceTaints) and the
    partitionable devices' fields (DRAPartitionableDevices: ``sharedCounters``,
    ``perDeviceNodeSelection``, devices' ``consumesCounters``, ``nodeName``, ``nodeSelector``,
    ``allNodes``) go unless the stored slice uses them."""
    device = {"name": "g0", "taints": [{"key": "k", "effect": "NoSchedule"}], "nodeName": "n1",
              "consumesCounters": [{"counterSet": "s", "counters": {"mem": {"value": "1Gi"}}}]}
    spec: dict[str, Any] = {"driver": "d", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                            "perDeviceNodeSelection": True,
                            "sharedCounters": [{"name": "s", "counters": {"mem": {"value": "8Gi"}}}],
                            "devices": [device]}
    sl: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": spec}
    dropped = _created(sl, 35, "resource.k8s.io", "ResourceSlice")["spec"]
    assert dropped == {"driver": "d", "pool": spec["pool"], "devices": [{"name": "g0"}]}
    assert _created(sl, 36, "resource.k8s.io", "ResourceSlice")["spec"] == spec
    old = {**sl, "spec": {**spec, "devices": [{"name": "g0", "allNodes": True}], "sharedCounters": [],
                          "perDeviceNodeSelection": None}}
    obj = copy.deepcopy(sl)
    drop_disabled("resource.k8s.io", "ResourceSlice", obj, old, 35)
    assert obj["spec"]["devices"][0] == {k: v for k, v in device.items() if k != "taints"}
    assert obj["spec"]["sharedCounters"] == spec["sharedCounters"]
