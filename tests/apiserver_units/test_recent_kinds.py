"""The non-pod fields Kubernetes 1.33-1.37 added or changed, checked against kube's own code: a
Job's ``successPolicy``, ``managedBy`` and their immutability (pkg/apis/batch/validation), a
CSIDriver's ``serviceAccountTokenInSecrets`` and the VolumeAttributesClass gate of
PersistentVolume(Claim)s' ``volumeAttributesClassName`` (pkg/api/persistentvolume(claim)/util.go)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from samplecontroller.apiserver.strategies.kinds import JobStrategy
from samplecontroller.apiserver.strategies.recent import drop_disabled
from samplecontroller.apiserver.strategies.validation import validate_builtin


def _job(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"template": {"spec": {"restartPolicy": "Never",
                                                  "containers": [{"name": "app", "image": "busybox"}]}}}
    base.update(spec)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": base}


def _indexed(*rules: dict[str, Any], completions: int = 5) -> dict[str, Any]:
    return _job(completionMode="Indexed", completions=completions, parallelism=completions,
                successPolicy={"rules": list(rules)})


def _errors(obj: dict[str, Any]) -> list[str]:
    group, _, _ = str(obj["apiVersion"]).rpartition("/")
    return [str(e) for e in validate_builtin(group, str(obj["kind"]), obj)]


_RULE = "spec.successPolicy.rules[0]"
_PARSING = f"{_RULE}.succeededIndexes: Invalid value: "

CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    # validateJobSpec: a NonIndexed Job's successPolicy is one error, its rules are not looked at
    ("successPolicy of a NonIndexed Job", _job(successPolicy={"rules": []}),
     ['spec.successPolicy: Invalid value: "": requires indexed completion mode']),
    # parseIndexInterval / validateIndexesFormat
    ("index too large", _indexed({"succeededIndexes": "1-7"}),
     [_PARSING + '"1-7": error parsing succeededIndexes: too large index: "7"']),
    ("index not a number", _indexed({"succeededIndexes": "0,a"}),
     [_PARSING + '"0,a": error parsing succeededIndexes: cannot convert string to integer for index: "a"']),
    ("interval of three parts", _indexed({"succeededIndexes": "1-2-3"}),
     [_PARSING + '"1-2-3": error parsing succeededIndexes: the fragment "1-2-3" violates the requirement that '
                 "an index interval can have at most two parts separated by '-'"]),
    ("decreasing interval", _indexed({"succeededIndexes": "3-1"}),
     [_PARSING + '"3-1": error parsing succeededIndexes: non-increasing order, previous: 3, current: 1']),
    ("overlapping intervals", _indexed({"succeededIndexes": "0-2,2"}),
     [_PARSING + '"0-2,2": error parsing succeededIndexes: non-increasing order, previous: 2, current: 2']),
    ("a sign is accepted (strconv.Atoi)", _indexed({"succeededIndexes": "+1,3"}), []),
    ("an empty list names no index", _indexed({"succeededIndexes": ""}), []),
    # validateSuccessPolicyRule's succeededCount checks are independent of each other
    ("count beyond the named indexes", _indexed({"succeededIndexes": "0-1", "succeededCount": 3}),
     [f"{_RULE}.succeededCount: Invalid value: 3: must be less than or equal to 2 (the number of indexes in "
      "the specified succeededIndexes field)"]),
    ("count beyond completions and the indexes", _indexed({"succeededIndexes": "4", "succeededCount": 6}),
     [f"{_RULE}.succeededCount: Invalid value: 6: must be less than or equal to 5 (the number of specified "
      "completions)",
      f"{_RULE}.succeededCount: Invalid value: 6: must be less than or equal to 1 (the number of indexes in "
      "the specified succeededIndexes field)"]),
    ("succeededIndexes over 64KiB", _indexed({"succeededIndexes": "0" + ",1" * 40000}, completions=2),
     [f"{_RULE}.succeededIndexes: Too long: may not be more than 65536 bytes",
      _PARSING]),
    # apimachinery IsDomainPrefixedPath, then the length
    ("managedBy empty", _job(managedBy=""), ["spec.managedBy: Required value"]),
    ("managedBy too long and no domain", _job(managedBy="a" * 64),
     [f'spec.managedBy: Invalid value: "{"a" * 64}": must be a domain-prefixed path (such as "acme.io/foo")',
      "spec.managedBy: Too long: may not be more than 63 bytes"]),
    # CSIDriver validateServiceAccountTokenInSecrets
    ("CSIDriver token secrets false without tokenRequests",
     {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "d.example.com"},
      "spec": {"serviceAccountTokenInSecrets": False, "tokenRequests": []}},
     ["spec.serviceAccountTokenInSecrets: Invalid value: false: serviceAccountTokenInSecrets is set but no "
      "tokenRequests are specified"]),
]


@pytest.mark.parametrize(("obj", "expected"), [(obj, expected) for _, obj, expected in CASES],
                         ids=[case for case, _, _ in CASES])
def test_kube_validation_of_recent_fields(obj: dict[str, Any], expected: list[str]) -> None:
    found = _errors(obj)
    assert len(found) == len(expected), found
    for text, prefix in zip(found, expected, strict=True):
        assert text.startswith(prefix), (text, prefix)


def _update_errors(old: dict[str, Any], **changes: Any) -> list[str]:
    new = copy.deepcopy(old)
    new["spec"].update(changes)
    return [str(e) for e in JobStrategy().validate_extra(new, old)]


def test_job_spec_update_keeps_kubes_immutable_fields() -> None:
    """ValidateJobSpecUpdate: successPolicy, podFailurePolicy and backoffLimitPerIndex are immutable;
    completions too, except an Indexed Job's changed together with parallelism."""
    indexed = _indexed({"succeededCount": 1})
    assert _update_errors(indexed, successPolicy={"rules": [{"succeededCount": 2}]}) == [
        'spec.successPolicy: Invalid value: {"rules":[{"succeededCount":2}]}: field is immutable']
    assert _update_errors(indexed, backoffLimitPerIndex=1) == [
        "spec.backoffLimitPerIndex: Invalid value: 1: field is immutable"]
    failure = {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1]}}]}
    assert [e.split(":")[0] for e in _update_errors(indexed, podFailurePolicy=failure)] == ["spec.podFailurePolicy"]
    assert _update_errors(indexed, completions=7) == [
        "spec.completions: Invalid value: 7: can only be modified in tandem with spec.parallelism"]
    assert _update_errors(indexed, completions=7, parallelism=7) == []
    assert _update_errors(_job(completions=2, parallelism=2), completions=3, parallelism=3) == [
        "spec.completions: Invalid value: 3: field is immutable"]


def _claim(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, **spec}}


@pytest.mark.parametrize("kind", ["PersistentVolumeClaim", "PersistentVolume"])
def test_volume_attributes_class_name_follows_its_gate(kind: str) -> None:
    """VolumeAttributesClass is GA (on) from 1.34: at 1.33 the name is dropped on create and on an
    update whose stored object has none, and kept when the stored object has one."""
    obj = _claim(volumeAttributesClassName="gold")
    obj["kind"] = kind
    created = copy.deepcopy(obj)
    drop_disabled("", kind, created, None, 33)
    assert "volumeAttributesClassName" not in created["spec"]
    updated = copy.deepcopy(obj)
    drop_disabled("", kind, updated, obj, 33)
    assert updated["spec"]["volumeAttributesClassName"] == "gold"
    kept = copy.deepcopy(obj)
    drop_disabled("", kind, kept, None, 34)
    assert kept["spec"]["volumeAttributesClassName"] == "gold"


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet"])
def test_terminating_replicas_follow_their_gate_on_status_writes(kind: str) -> None:
    """DeploymentReplicaSetTerminatingReplicas is on from 1.35: before, a status write's
    terminatingReplicas is dropped unless the stored status has one (dropDisabledStatusFields)."""
    from samplecontroller.apiserver.strategies.recent import drop_disabled_status

    old: dict[str, Any] = {"apiVersion": "apps/v1", "kind": kind, "status": {"replicas": 1}}
    new = copy.deepcopy(old)
    new["status"]["terminatingReplicas"] = 2
    for minor, stored, kept in ((34, old, False), (34, new, True), (35, old, True)):
        written = copy.deepcopy(new)
        drop_disabled_status("apps", kind, written, stored, minor)
        assert ("terminatingReplicas" in written["status"]) is kept, (minor, stored)


def _prepared(spec: dict[str, Any], old: dict[str, Any] | None = None) -> dict[str, Any]:
    claim = _claim(**spec)
    drop_disabled("", "PersistentVolumeClaim", claim, _claim(**old) if old is not None else None, 37)
    return {k: v for k, v in claim["spec"].items() if k.startswith("dataSource")}


def test_a_claims_data_sources_are_prepared_as_kube_does() -> None:
    """pkg/api/persistentvolumeclaim/util.go: DropDisabledFields (a cross-namespace dataSourceRef
    while CrossNamespaceVolumeDataSource is alpha), EnforceDataSourceBackwardsCompatibility and,
    on create, NormalizeDataSources."""
    snapshot = {"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "snap"}
    assert _prepared({"dataSource": snapshot}) == {"dataSource": snapshot, "dataSourceRef": snapshot}
    claim = {"kind": "PersistentVolumeClaim", "name": "src"}
    assert _prepared({"dataSourceRef": claim}) == {"dataSource": claim, "dataSourceRef": claim}
    populator = {"apiGroup": "example.com", "kind": "Foo", "name": "f"}
    assert _prepared({"dataSource": populator}) == {}  # only through dataSourceRef
    assert _prepared({"dataSourceRef": populator}) == {"dataSource": populator, "dataSourceRef": populator}
    other_namespace = {**claim, "namespace": "other"}
    assert _prepared({"dataSourceRef": other_namespace}) == {}
    # an update neither normalizes nor drops what the stored claim already has
    assert _prepared({"dataSourceRef": other_namespace}, old={"dataSourceRef": other_namespace}) == {
        "dataSourceRef": other_namespace}
    assert _prepared({"dataSource": populator}, old={"dataSource": populator}) == {"dataSource": populator}


@pytest.mark.parametrize("kind", ["ResourceClaim", "ResourceClaimTemplate"])
def test_derived_attributes_are_alpha_at_1_37(kind: str) -> None:
    """DRADerivedAttributes is alpha in 1.37: a request's derivedAttributes (exactly and
    firstAvailable) are dropped on create, and on update unless the stored claim uses them
    (pkg/registry/resource/resourceclaim strategy tests of 1.37)."""
    derived = [{"name": "example.com/size"}]
    spec = {"devices": {"requests": [
        {"name": "a", "exactly": {"deviceClassName": "gpu", "derivedAttributes": derived}},
        {"name": "b", "firstAvailable": [{"name": "b1", "deviceClassName": "gpu", "derivedAttributes": derived}]}]}}
    obj: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": kind,
                           "spec": spec if kind == "ResourceClaim" else {"spec": spec}}
    created = copy.deepcopy(obj)
    drop_disabled("resource.k8s.io", kind, created, None, 37)
    requests = (created["spec"] if kind == "ResourceClaim" else created["spec"]["spec"])["devices"]["requests"]
    assert "derivedAttributes" not in requests[0]["exactly"]
    assert "derivedAttributes" not in requests[1]["firstAvailable"][0]
    updated = copy.deepcopy(obj)
    drop_disabled("resource.k8s.io", kind, updated, obj, 37)
    assert updated == obj


def _vac(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttributesClass", "metadata": {"name": "gold"},
            "driverName": "csi.example.com", "parameters": {"iops": "3000"}, **fields}


def _storage_errors(kind: str, obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    from samplecontroller.apiserver import strategies
    from samplecontroller.apiserver.restmapper import Resource

    strategy = strategies.for_kind("storage.k8s.io", kind)
    res = Resource(group="storage.k8s.io", version="v1", plural=kind.lower() + "s", kind=kind, namespaced=False)
    return [str(e) for e in strategy.validate(res, obj, None) + strategy.validate_extra(obj, old)]


def test_volume_attributes_class_validation_is_kubes() -> None:
    """pkg/apis/storage/validation ValidateVolumeAttributesClass(Update)."""
    assert _storage_errors("VolumeAttributesClass", _vac()) == []
    assert _storage_errors("VolumeAttributesClass", _vac(driverName="", parameters={})) == [
        "driverName: Required value",
        "parameters: Required value: must contain at least one key/value pair"]
    assert _storage_errors("VolumeAttributesClass", _vac(driverName="CSI_Bad!", parameters={"": "x"}))[1:] == [
        'parameters: Invalid value: "": field can not be empty.']
    assert _storage_errors("VolumeAttributesClass", _vac(parameters={f"k{i}": "v" for i in range(513)})) == [
        "parameters: Too long: may not be more than 512 bytes"]
    old = _vac()
    assert _storage_errors("VolumeAttributesClass", _vac(driverName="other.example.com", parameters={"iops": "1"}),
                           old) == ["driverName: Forbidden: updates to driverName are forbidden.",
                                    "parameters: Forbidden: updates to parameters are forbidden."]


def test_a_csi_drivers_attach_required_and_modes_are_immutable() -> None:
    """ValidateCSIDriverUpdate: spec.attachedRequired (kube's spelling) and volumeLifecycleModes."""
    old: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "d.example.com"},
           "spec": {"attachRequired": True, "volumeLifecycleModes": ["Persistent"]}}
    new = copy.deepcopy(old)
    new["spec"].update(attachRequired=False, volumeLifecycleModes=["Persistent", "Ephemeral"])
    assert [e for e in _storage_errors("CSIDriver", new, old) if "immutable" in e] == [
        "spec.attachedRequired: Invalid value: false: field is immutable",
        'spec.volumeLifecycleModes: Invalid value: []storage.VolumeLifecycleMode{"Persistent", "Ephemeral"}: '
        "field is immutable"]
