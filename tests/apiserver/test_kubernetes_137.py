"""The embedded server is a kube-apiserver 1.37: /version, OpenAPI, discovery and the group/versions
1.37 serves by default (resource.k8s.io/v1 through the typed 1.37 client), and
``--emulated-version`` 1.33-1.36 (version, discovery and served groups follow it; an unsupported
one is one clear line)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from samplecontroller.apimachinery import errors, objects
from samplecontroller.apiserver import __main__ as cli
from samplecontroller.apiserver.local import LocalServerError, serve_local
from samplecontroller.apiserver.server import LocalAPIServer
from samplecontroller.apiserver.testing import finish_pod, make_kubectl
from samplecontroller.apiserver.version import EmulationVersionError
from samplecontroller.kubernetes.apis.resource.v1 import DeviceClass, ResourceClaim
from samplecontroller.kubernetes.clientset import Clientset
from samplecontroller.rest import RESTClient
from tests.apiserver.conftest import Raw
from tests.apiserver.test_delete_answers import STUB_REQUEST
from tests.apiserver_units.test_trust_bundle_validation import CA

NEW_IN = {  # group/version/plural of kinds GA after 1.32, by the minor version that first serves them
    ("networking.k8s.io", "v1", "ipaddresses"): 33, ("networking.k8s.io", "v1", "servicecidrs"): 33,
    ("resource.k8s.io", "v1", "resourceclaims"): 34, ("storage.k8s.io", "v1", "volumeattributesclasses"): 34,
    ("admissionregistration.k8s.io", "v1", "mutatingadmissionpolicies"): 36,
    ("certificates.k8s.io", "v1", "clustertrustbundles"): 37,
    ("storagemigration.k8s.io", "v1", "storageversionmigrations"): 37,
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalAPIServer]:
    with LocalAPIServer(kubeconfig_path=tmp_path_factory.mktemp("k137") / "kubeconfig") as s:
        yield s


@pytest.fixture(scope="module")
def emulated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalAPIServer]:
    with LocalAPIServer(kubeconfig_path=tmp_path_factory.mktemp("k134") / "kubeconfig",
                        emulated_version="1.34") as s:
        yield s


def _served(raw: Raw) -> set[tuple[str, str, str]]:
    """Every group/version/plural of the server's aggregated discovery."""
    _, _, doc = raw.call("GET", "/apis", accept="application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
    found = set()
    for group in doc["items"]:
        for version in group["versions"]:
            for res in version["resources"]:
                found.add((group["metadata"].get("name", ""), version["version"], res["resource"]))
    return found


def test_version_and_openapi_are_1_37(server: LocalAPIServer) -> None:
    raw = Raw(server)
    code, _, info = raw.call("GET", "/version")
    assert code == 200
    assert (info["major"], info["minor"], info["gitVersion"]) == ("1", "37", "v1.37.0")
    assert (info["emulationMajor"], info["emulationMinor"], info["minCompatibilityMinor"]) == ("1", "37", "36")
    assert raw.call("GET", "/openapi/v3/apis/resource.k8s.io/v1")[2]["info"]["version"] == "v1.37.0"
    assert raw.call("GET", "/openapi/v2")[2]["info"]["version"] == "v1.37.0"


def test_discovery_serves_the_1_37_default_group_versions(server: LocalAPIServer) -> None:
    raw = Raw(server)
    served = _served(raw)
    assert set(NEW_IN) <= served
    # beta and alpha versions stay off, as in kube-apiserver 1.37 without --runtime-config
    assert not {gvr for gvr in served if gvr[0] == "resource.k8s.io" and gvr[1] != "v1"}
    code, _, group = raw.call("GET", "/apis/resource.k8s.io")
    assert code == 200 and group["preferredVersion"]["groupVersion"] == "resource.k8s.io/v1"
    _, _, resources = raw.call("GET", "/apis/storage.k8s.io/v1")
    vac = next(r for r in resources["resources"] if r["name"] == "volumeattributesclasses")
    assert (vac["namespaced"], vac["shortNames"]) == (False, ["vac"])


def test_a_resource_claim_through_the_typed_1_37_client(server: LocalAPIServer) -> None:
    kube = Clientset(RESTClient.from_kubeconfig(server.kubeconfig_path))
    kube.resource_v1().deviceclasses().create(objects.from_dict(DeviceClass, {
        "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}}))
    claim = objects.from_dict(ResourceClaim, {"metadata": {"name": "claim"}, "spec": {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}})
    created = kube.resource_v1().resourceclaims("default").create(claim)
    assert isinstance(created, ResourceClaim) and created.api_version == "resource.k8s.io/v1"
    assert [c.metadata.name for c in kube.resource_v1().resourceclaims("default").list().items] == ["claim"]
    # the schema's validation: a request names its device class
    bad = objects.from_dict(ResourceClaim, {"metadata": {"name": "bad"}, "spec": {"devices": {"requests": [
        {"name": "gpu", "exactly": {}}]}}})
    with pytest.raises(errors.InvalidError, match="deviceClassName: Required value"):
        kube.resource_v1().resourceclaims("default").create(bad)


def test_emulated_version_1_34(emulated: LocalAPIServer) -> None:
    raw = Raw(emulated)
    _, _, info = raw.call("GET", "/version")
    assert (info["minor"], info["gitVersion"]) == ("37", "v1.37.0")
    assert (info["emulationMajor"], info["emulationMinor"], info["minCompatibilityMinor"]) == ("1", "34", "33")
    served = _served(raw)
    for gvr, since in NEW_IN.items():
        assert (gvr in served) == (since <= 34), gvr
    # what 1.34 does not serve is not there at all: no group, no resource, no OpenAPI
    assert raw.call("GET", "/apis/storagemigration.k8s.io")[0] == 404
    assert raw.call("GET", "/apis/storagemigration.k8s.io/v1/storageversionmigrations")[0] == 404
    _, _, group_list = raw.call("GET", "/apis")
    assert "storagemigration.k8s.io" not in [g["name"] for g in group_list["groups"]]
    _, _, certificates = raw.call("GET", "/apis/certificates.k8s.io/v1")
    assert [r["name"] for r in certificates["resources"] if "/" not in r["name"]] == ["certificatesigningrequests"]
    paths = raw.call("GET", "/openapi/v3")[2]["paths"]
    assert "apis/resource.k8s.io/v1" in paths and "apis/storagemigration.k8s.io/v1" not in paths


def _rule_crd(plural: str, rule: str) -> dict[str, object]:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "tags": {"type": "array", "maxItems": 8, "items": {"type": "string", "maxLength": 16},
                 "x-kubernetes-validations": [{"rule": rule}]}}}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.cel.example.com"},
            "spec": {"group": "cel.example.com", "scope": "Namespaced",
                     "names": {"plural": plural, "singular": plural[:-1], "kind": plural.title()[:-1]},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": schema}}]}}


def test_emulated_1_34_compiles_new_rules_for_compatibility_1_33(emulated: LocalAPIServer) -> None:
    """kube-apiserver --emulated-version 1.34 (minCompatibility 1.33) has the semver library
    (1.33) for a new CRD rule, not ext lists (1.34)."""
    raw = Raw(emulated)
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    code, _, body = raw.call("POST", crds, _rule_crd("sorts", "self.sort() == self"))
    assert code == 422, body
    assert body["details"]["causes"][0]["field"] == (
        "spec.validation.openAPIV3Schema.properties[spec].properties[tags].x-kubernetes-validations[0].rule")
    assert "compilation failed: ERROR: <input>:1:10: undeclared reference to 'sort'" in body["message"]
    code, _, body = raw.call("POST", crds, _rule_crd("versions", "self.all(t, isSemver(t, true))"))
    assert code == 201, body
    # ValidatingAdmissionPolicy expressions likewise
    policies = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
    policy = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
              "metadata": {"name": "sorted-args"},
              "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                                                               "operations": ["CREATE"], "resources": ["deployments"]}]},
                       "validations": [{"expression": "object.spec.template.spec.containers.map(c, c.name).sort() "
                                                      "== object.spec.template.spec.containers.map(c, c.name)"}]}}
    code, _, body = raw.call("POST", policies, policy)
    assert code == 422, body
    assert body["details"]["causes"][0]["field"] == "spec.validations[0].expression"
    assert "undeclared reference to 'sort'" in body["message"]
    policy["spec"]["validations"] = [{"expression": "isSemver(object.metadata.name, true)"}]  # type: ignore[index]
    code, _, body = raw.call("POST", policies, policy)
    assert code == 201, body


@pytest.mark.parametrize("value", ["1.32", "1.38", "2.0", "latest"])
def test_an_unsupported_emulated_version_is_one_clear_error(value: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(EmulationVersionError, match=r"1\.33 to 1\.37|want MAJOR\.MINOR"):
        LocalAPIServer(kubeconfig_path=tmp_path / "kubeconfig", emulated_version=value)
    with pytest.raises(SystemExit) as exit_info:
        cli.parse_args(["--emulated-version", value])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("python -m samplecontroller.apiserver: error: argument --emulated-version:")
    assert value in err and "Traceback" not in err
    with pytest.raises(LocalServerError, match=r"--emulated-version: .*(1\.33 to 1\.37|MAJOR\.MINOR)"), \
            serve_local(tmp_path / "local", emulated_version=value):
        pass  # pragma: no cover - never started


def test_the_cli_accepts_the_supported_versions() -> None:
    assert [cli.parse_args(["--emulated-version", v]).emulated_version for v in ("1.33", "v1.36", "1.37.0")] == \
        [33, 36, 37]
    assert cli.parse_args([]).emulated_version is None


# -- defaulting and validation of fields added in 1.33-1.37 ----------------------------------


def test_pod_generation(server: LocalAPIServer) -> None:
    """1.33's pod generation: 1 on create, bumped by a spec change and by the graceful deletion."""
    raw = Raw(server)
    pods = "/api/v1/namespaces/default/pods"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gen"},
           "spec": {"nodeName": "local-node", "containers": [{"name": "c", "image": "busybox:1"}]}}
    code, _, created = raw.call("POST", pods, pod)
    assert code == 201 and created["metadata"]["generation"] == 1
    patch = {"spec": {"containers": [{"name": "c", "image": "busybox:2"}]}}
    _, _, patched = raw.call("PATCH", f"{pods}/gen", patch, ctype="application/strategic-merge-patch+json")
    assert patched["metadata"]["generation"] == 2
    labelled = raw.call("PATCH", f"{pods}/gen", {"metadata": {"labels": {"a": "b"}}},
                        ctype="application/merge-patch+json")[2]
    assert labelled["metadata"]["generation"] == 2  # metadata is no spec change
    code, _, deleting = raw.call("DELETE", f"{pods}/gen", {"gracePeriodSeconds": 30})
    assert code == 200 and deleting["metadata"]["deletionTimestamp"] and deleting["metadata"]["generation"] == 3
    raw.call("DELETE", f"{pods}/gen", {"gracePeriodSeconds": 0})
    # what a kubelet reports once the containers end: the generation it observed
    assert raw.call("POST", pods, {**pod, "metadata": {"name": "observed"}})[0] == 201
    assert finish_pod(server, "default", "observed")["status"]["observedGeneration"] == 1


def test_service_traffic_distribution(server: LocalAPIServer) -> None:
    """PreferSameZone and PreferSameNode (1.33) besides PreferClose; anything else is refused."""
    raw = Raw(server)
    services = "/api/v1/namespaces/default/services"

    def service(name: str, distribution: str) -> dict[str, object]:
        return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
                "spec": {"ports": [{"port": 80}], "trafficDistribution": distribution}}

    code, _, created = raw.call("POST", services, service("same-node", "PreferSameNode"))
    assert code == 201 and created["spec"]["trafficDistribution"] == "PreferSameNode"
    code, _, status = raw.call("POST", services, service("nearest", "Nearest"))
    assert code == 422
    assert status["message"] == ('Service "nearest" is invalid: spec.trafficDistribution: Unsupported value: '
                                 '"Nearest": supported values: "PreferClose", "PreferSameNode", "PreferSameZone"')


def test_deployment_status_terminating_replicas(server: LocalAPIServer) -> None:
    """status.terminatingReplicas (1.33) is a count: never negative."""
    raw = Raw(server)
    deployments = "/apis/apps/v1/namespaces/default/deployments"
    template = {"metadata": {"labels": {"app": "t"}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    raw.call("POST", deployments, {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "term"},
                                   "spec": {"selector": {"matchLabels": {"app": "t"}}, "template": template}})
    ok = raw.call("PATCH", f"{deployments}/term/status", {"status": {"terminatingReplicas": 0}},
                  ctype="application/merge-patch+json")
    assert ok[0] == 200 and ok[2]["status"]["terminatingReplicas"] == 0
    code, _, status = raw.call("PATCH", f"{deployments}/term/status", {"status": {"terminatingReplicas": -1}},
                               ctype="application/merge-patch+json")
    assert code == 422 and "status.terminatingReplicas: Invalid value: -1: must be greater than or equal to 0" \
        in status["message"]


def test_dra_defaults(server: LocalAPIServer) -> None:
    """resource.k8s.io/v1 defaulting: a request's allocationMode and count, a taint's timeAdded."""
    raw = Raw(server)
    claims = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
    code, _, claim = raw.call("POST", claims, {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "defaulted"},
        "spec": {"devices": {"requests": [
            {"name": "one", "exactly": {"deviceClassName": "gpu"}},
            {"name": "all", "exactly": {"deviceClassName": "gpu", "allocationMode": "All"}},
            {"name": "either", "firstAvailable": [{"name": "big", "deviceClassName": "gpu"},
                                                  {"name": "none", "deviceClassName": "gpu"}]}]}}})
    assert code == 201, claim
    one, every, either = claim["spec"]["devices"]["requests"]
    assert one["exactly"] == {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}
    assert every["exactly"] == {"deviceClassName": "gpu", "allocationMode": "All"}
    assert either["firstAvailable"] == [
        {"name": "big", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1},
        {"name": "none", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}]
    code, _, rule = raw.call("POST", "/apis/resource.k8s.io/v1/devicetaintrules", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "drain"},
        "spec": {"deviceSelector": {"driver": "gpu.example.com"}, "taint": {"key": "k", "effect": "NoSchedule"}}})
    assert code == 201, rule
    assert rule["spec"]["taint"]["timeAdded"].endswith("Z")


def test_dra_validation_round_trips(server: LocalAPIServer) -> None:
    """Each resource.k8s.io/v1 kind is refused over HTTP as kube-apiserver 1.37 refuses it
    (``strategies.dra``): a 422 whose causes name kube's field paths and messages; a claim's
    spec is immutable; a slice's pool name is too."""
    raw, base = Raw(server), "/apis/resource.k8s.io/v1"

    def causes(answer: Any) -> list[tuple[str, str]]:
        return [(c["field"], c["reason"]) for c in answer["details"]["causes"]]

    code, _, bad = raw.call("POST", f"{base}/deviceclasses", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "rt-gpu"},
        "spec": {"selectors": [{}], "extendedResourceName": "gpu"}})
    assert code == 422 and causes(bad) == [("spec.selectors[0].cel", "FieldValueRequired"),
                                           ("spec.extendedResourceName", "FieldValueInvalid")], bad
    claims = f"{base}/namespaces/default/resourceclaims"
    code, _, bad = raw.call("POST", claims, {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "rt"},
        "spec": {"devices": {"requests": [{"name": "GPU", "exactly": {"deviceClassName": "gpu"}}, {"name": "b"}],
                             "constraints": [{"requests": ["c"], "matchAttribute": "example.com/model"}]}}})
    assert code == 422 and causes(bad) == [("spec.devices.requests[0].name", "FieldValueInvalid"),
                                           ("spec.devices.requests[1]", "FieldValueRequired"),
                                           ("spec.devices.constraints[0].requests[0]", "FieldValueInvalid")], bad
    code, _, claim = raw.call("POST", claims, {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "rt"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}})
    assert code == 201, claim
    claim["spec"]["devices"]["requests"][0]["name"] = "other"
    code, _, bad = raw.call("PUT", f"{claims}/rt", claim)
    assert code == 422 and causes(bad) == [("spec", "FieldValueInvalid")] \
        and bad["details"]["causes"][0]["message"].endswith("field is immutable"), bad
    code, _, bad = raw.call("POST", f"{base}/namespaces/default/resourceclaimtemplates", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "rt"},
        "spec": {"spec": {"devices": {"requests": [{"name": "a", "exactly": {
            "deviceClassName": "gpu", "allocationMode": "All", "count": 2}}]}}}})
    assert code == 422 and bad["details"]["causes"] == [{
        "reason": "FieldValueInvalid", "field": "spec.spec.devices.requests[0].exactly.count",
        "message": "Invalid value: 2: must not be specified when allocationMode is 'All'"}], bad
    slices = f"{base}/resourceslices"
    body: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "rt"},
        "spec": {"driver": "gpu.example.com", "nodeName": "n1", "allNodes": True,
                 "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": "g0"}, {"name": "g0"}]}}
    code, _, bad = raw.call("POST", slices, body)
    assert code == 422 and causes(bad) == [("spec", "FieldValueInvalid"),
                                           ("spec.devices[1]", "FieldValueDuplicate")], bad
    del body["spec"]["allNodes"], body["spec"]["devices"][1]
    code, _, created = raw.call("POST", slices, body)
    assert code == 201, created
    created["spec"]["pool"]["name"] = "q"
    code, _, bad = raw.call("PUT", f"{slices}/rt", created)
    assert code == 422 and causes(bad) == [("spec.pool.name", "FieldValueInvalid")], bad


def test_emulated_version_of_main_and_the_pytest_plugin(tmp_path: Path) -> None:
    """main.py --local's server and the pytest plugin's servers take the emulated version too."""
    from samplecontroller import app
    from samplecontroller.testing import pytest_plugin

    with pytest.raises(app.UserError, match=r"^--emulated-version: unsupported emulated version '1\.2'"), \
            app._local_server(tmp_path / "local", tmp_path, 0, "1.2"):
        pass  # pragma: no cover - never started

    class Config:
        def __init__(self, value: str) -> None:
            self.value = value

        def getini(self, name: str) -> str:
            assert name == pytest_plugin.EMULATED_VERSION_INI
            return self.value

    def new(value: str) -> LocalAPIServer:
        return pytest_plugin._new_server(cast(pytest.Config, Config(value)), tmp_path / "kubeconfig")

    assert (new("1.35").emulated_minor, new("").emulated_minor) == (35, 37)
    with pytest.raises(pytest.fail.Exception, match=r"^samplecontroller_emulated_version: unsupported emulated "
                                                    r"version '1\.20': .* emulates 1\.33 to 1\.37$"):
        new("1.20")


@pytest.mark.kubectl
def test_kubectl_get_prints_the_new_kinds_as_kube_does(server: LocalAPIServer, tmp_path: Path) -> None:
    """printers.go's columns of the DRA and networking kinds (Name + Created At before)."""
    raw = Raw(server)
    raw.call("POST", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "printed"},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}})
    raw.call("POST", "/apis/resource.k8s.io/v1/resourceslices", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "slice"},
        "spec": {"driver": "gpu.example.com", "nodeName": "local-node",
                 "pool": {"name": "pool-a", "generation": 1, "resourceSliceCount": 1}}})
    raw.call("POST", "/apis/networking.k8s.io/v1/ipaddresses", {
        "apiVersion": "networking.k8s.io/v1", "kind": "IPAddress", "metadata": {"name": "10.96.0.99"},
        "spec": {"parentRef": {"resource": "services", "namespace": "default", "name": "web"}}})
    kubectl = make_kubectl(tmp_path, server)

    def rows(*args: str) -> list[list[str]]:
        proc = kubectl("get", *args)
        assert proc.returncode == 0, proc.stderr
        return [line.split() for line in proc.stdout.splitlines()]

    claims = rows("resourceclaims", "printed")
    assert claims[0] == ["NAME", "STATE", "AGE"] and claims[1][:2] == ["printed", "pending"]
    slices = rows("resourceslices", "slice")
    assert slices[0] == ["NAME", "NODE", "DRIVER", "POOL", "AGE"]
    assert slices[1][:4] == ["slice", "local-node", "gpu.example.com", "pool-a"]
    assert rows("ipaddresses", "10.96.0.99") == [["NAME", "PARENTREF"], ["10.96.0.99", "services/default/web"]]
    # the default ServiceCIDR kube-apiserver creates since 1.33
    cidrs = rows("servicecidrs")
    assert cidrs[0] == ["NAME", "CIDRS", "AGE"] and [r[:2] for r in cidrs[1:]] == [["kubernetes", "10.96.0.0/12"]]
    _, _, default = raw.call("GET", "/apis/networking.k8s.io/v1/servicecidrs/kubernetes")
    assert [(c["type"], c["status"]) for c in default["status"]["conditions"]] == [("Ready", "True")]


def _eventually(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.01)


def test_a_service_cluster_ip_has_its_ip_address(server: LocalAPIServer) -> None:
    """Since 1.33 the allocator keeps an IPAddress per cluster IP, parentRef the Service."""
    raw = Raw(server)
    ips = "/apis/networking.k8s.io/v1/ipaddresses"
    _, _, kubernetes = raw.call("GET", f"{ips}/10.96.0.1")
    assert kubernetes["spec"]["parentRef"] == {"resource": "services", "namespace": "default", "name": "kubernetes"}
    assert kubernetes["metadata"]["labels"] == {"ipaddress.kubernetes.io/ip-family": "IPv4",
                                                "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io"}
    code, _, service = raw.call("POST", "/api/v1/namespaces/default/services", {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "addressed"}, "spec": {"ports": [{"port": 80}]}})
    assert code == 201
    ip = service["spec"]["clusterIP"]
    _eventually(lambda: raw.call("GET", f"{ips}/{ip}")[0] == 200)
    assert raw.call("GET", f"{ips}/{ip}")[2]["spec"]["parentRef"]["name"] == "addressed"
    raw.call("DELETE", "/api/v1/namespaces/default/services/addressed")
    _eventually(lambda: raw.call("GET", f"{ips}/{ip}")[0] == 404)


# -- feature gates follow the emulated version ---------------------------------------------

_GATED_POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gated"},
    "spec": {"hostnameOverride": "app.example", "os": {"name": "linux"},
             "containers": [{"name": "c", "image": "busybox", "restartPolicy": "Never",
                             "restartPolicyRules": [{"action": "Restart",
                                                     "exitCodes": {"operator": "In", "values": [42]}}],
                             "lifecycle": {"stopSignal": "SIGUSR1"}}]}}
_FILE_ENV_POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "file-env"},
    "spec": {"volumes": [{"name": "cfg", "emptyDir": {}}],
             "containers": [{"name": "c", "image": "busybox", "env": [{"name": "TOKEN", "valueFrom": {
                 "fileKeyRef": {"volumeName": "cfg", "path": "app.env", "key": "TOKEN"}}}]}]}}
_HPA: dict[str, Any] = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "tol"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
                 "maxReplicas": 3, "behavior": {"scaleUp": {"tolerance": "50m"}}}}
_PODS, _HPAS = "/api/v1/namespaces/default/pods", "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"


@pytest.fixture(scope="module")
def emulated_1_33(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalAPIServer]:
    with LocalAPIServer(kubeconfig_path=tmp_path_factory.mktemp("k133") / "kubeconfig",
                        emulated_version="1.33") as s:
        yield s


def test_emulated_1_33_drops_the_fields_of_gates_off_at_1_33(emulated_1_33: LocalAPIServer) -> None:
    """kube-apiserver --emulated-version 1.33 turns the gates to their 1.33 defaults: the pod's
    hostnameOverride, a regular container's restartPolicy and restart rules
    (dropContainerRestartRules) and stop signal (its lifecycle, left empty, with it), the HPA's
    tolerance, a projected podCertificate are dropped on create; an env var whose only source was
    a fileKeyRef is then refused, and so is a Service's trafficDistribution PreferSameZone."""
    raw = Raw(emulated_1_33)
    code, _, pod = raw.call("POST", _PODS, _GATED_POD)
    assert code == 201, pod
    container = pod["spec"]["containers"][0]
    assert "hostnameOverride" not in pod["spec"]
    assert "restartPolicy" not in container and "restartPolicyRules" not in container
    assert "lifecycle" not in container
    code, _, status = raw.call("POST", _PODS, _FILE_ENV_POD)
    assert code == 422 and "spec.containers[0].env[0].valueFrom: Invalid value: \"\": must specify one of" \
        in status["message"]
    code, _, hpa = raw.call("POST", _HPAS, _HPA)
    assert code == 201 and "tolerance" not in hpa["spec"]["behavior"]["scaleUp"]
    # PodCertificateRequest is off before 1.37: the projected podCertificate is dropped
    cert_pod = {**_ALPHA_137_POD, "spec": {"volumes": _ALPHA_137_POD["spec"]["volumes"][2:],
                                           "containers": [{"name": "c", "image": "busybox"}]}}
    code, _, pod = raw.call("POST", _PODS, cert_pod)
    assert code == 201 and pod["spec"]["volumes"][0]["projected"]["sources"] == [{}], pod
    # PreferSameTrafficDistribution is alpha (off) in 1.33: only PreferClose is supported
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "same-zone"},
               "spec": {"ports": [{"port": 80}], "trafficDistribution": "PreferSameZone"}}
    code, _, status = raw.call("POST", "/api/v1/namespaces/default/services", service)
    assert code == 422 and status["message"].endswith('spec.trafficDistribution: Unsupported value: '
                                                      '"PreferSameZone": supported values: "PreferClose"')
    # HPAScaleToZero is alpha (off) in 1.33: minReplicas is at least 1
    zero = {**_HPA, "metadata": {"name": "zero"}, "spec": {**_HPA["spec"], "minReplicas": 0}}
    code, _, status = raw.call("POST", _HPAS, zero)
    assert code == 422 and status["message"] == (
        'HorizontalPodAutoscaler.autoscaling "zero" is invalid: [spec.minReplicas: Invalid value: 0: must be '
        "greater than or equal to 1, spec.metrics: Forbidden: must specify at least one Object or External "
        "metric to support scaling to zero replicas]"), status


def test_the_1_37_server_keeps_the_beta_and_ga_fields(server: LocalAPIServer) -> None:
    """At 1.37 the same objects keep their fields; only the alpha stop signal is dropped."""
    raw = Raw(server)
    code, _, pod = raw.call("POST", _PODS, _GATED_POD)
    assert code == 201, pod
    container = pod["spec"]["containers"][0]
    assert pod["spec"]["hostnameOverride"] == "app.example" and container["restartPolicyRules"]
    assert container["restartPolicy"] == "Never" and "lifecycle" not in container
    code, _, pod = raw.call("POST", _PODS, _FILE_ENV_POD)
    assert code == 201 and pod["spec"]["containers"][0]["env"][0]["valueFrom"]["fileKeyRef"]["key"] == "TOKEN"
    code, _, hpa = raw.call("POST", _HPAS, _HPA)
    assert code == 201 and hpa["spec"]["behavior"]["scaleUp"]["tolerance"] == "50m"
    bad = {**_GATED_POD, "metadata": {"name": "bad"},
           "spec": {**_GATED_POD["spec"], "hostnameOverride": "Bad_Name", "setHostnameAsFQDN": True}}
    code, _, status = raw.call("POST", _PODS, bad)
    assert code == 422, status
    assert [(c["reason"], c["field"]) for c in status["details"]["causes"]] == [
        ("FieldValueForbidden", "spec.hostnameOverride"), ("FieldValueInvalid", "spec.hostnameOverride")]
    assert "spec.hostnameOverride: Forbidden: may not be specified when setHostnameAsFQDN is true" in status["message"]


def test_hpa_validation_over_http(server: LocalAPIServer) -> None:
    """An HPA is validated as kube-apiserver 1.37 validates it (its behavior defaulted first); an
    autoscaling/v1 one as it converts."""
    raw = Raw(server)
    bad = {**_HPA, "metadata": {"name": "bad"}, "spec": {
        **_HPA["spec"], "minReplicas": -1, "behavior": {"scaleDown": {"policies": []}}}}
    code, _, status = raw.call("POST", _HPAS, bad)
    assert code == 422 and status["message"] == (
        'HorizontalPodAutoscaler.autoscaling "bad" is invalid: [spec.minReplicas: Invalid value: -1: must be '
        "greater than or equal to 0, spec.behavior.scaleDown.policies: Required value: must specify at least "
        "one Policy]"), status
    v1 = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "v1"},
          "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 2,
                   "targetCPUUtilizationPercentage": 0}}
    code, _, status = raw.call("POST", "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers", v1)
    assert code == 422 and [(c["reason"], c["field"]) for c in status["details"]["causes"]] == [
        ("FieldValueInvalid", "spec.scaleTargetRef.apiVersion"),
        ("FieldValueInvalid", "spec.metrics[0].resource.target.averageUtilization")], status
    ok = {**_HPA, "metadata": {"name": "defaulted"}, "spec": {**_HPA["spec"], "behavior": {"scaleUp": {}}}}
    code, _, hpa = raw.call("POST", _HPAS, ok)
    assert code == 201 and hpa["spec"]["behavior"]["scaleDown"] == {
        "selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}, hpa


def test_service_cidr_and_ip_address_validation_over_http(server: LocalAPIServer) -> None:
    """ServiceCIDRs and IPAddresses are validated as kube-apiserver validates them: CIDRs in
    canonical form, immutable but for a second family added; an IPAddress named by a canonical
    IP, its parentRef immutable."""
    raw = Raw(server)
    cidrs, ips = "/apis/networking.k8s.io/v1/servicecidrs", "/apis/networking.k8s.io/v1/ipaddresses"
    cidr: dict[str, Any] = {"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR",
                            "metadata": {"name": "extra"}, "spec": {"cidrs": ["foo"]}}
    code, _, status = raw.call("POST", cidrs, cidr)
    assert code == 422 and status["message"] == (
        'ServiceCIDR.networking.k8s.io "extra" is invalid: spec.cidrs[0]: Invalid value: "foo": must be a valid '
        "CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"), status
    cidr["spec"]["cidrs"] = ["10.200.0.0/24"]
    assert raw.call("POST", cidrs, cidr)[0] == 201
    patch = "application/merge-patch+json"
    code, _, status = raw.call("PATCH", f"{cidrs}/extra", {"spec": {"cidrs": ["10.201.0.0/24"]}}, ctype=patch)
    assert code == 422 and status["message"].endswith(
        'spec.cidrs[0]: Invalid value: "10.201.0.0/24": field is immutable'), status
    code, _, dual = raw.call("PATCH", f"{cidrs}/extra", {"spec": {"cidrs": ["10.200.0.0/24", "fd00:10::/64"]}},
                             ctype=patch)
    assert code == 200 and dual["spec"]["cidrs"] == ["10.200.0.0/24", "fd00:10::/64"], dual
    address: dict[str, Any] = {
        "apiVersion": "networking.k8s.io/v1", "kind": "IPAddress", "metadata": {"name": "10.200.0.010"},
        "spec": {"parentRef": {"resource": "services", "namespace": "default", "name": "web"}}}
    code, _, status = raw.call("POST", ips, address)
    assert code == 422 and status["message"] == (
        'IPAddress.networking.k8s.io "10.200.0.010" is invalid: metadata.name: Invalid value: "10.200.0.010": '
        "must not have leading 0s"), status
    address["metadata"]["name"] = "fd00:10::5"
    assert raw.call("POST", ips, address)[0] == 201
    code, _, status = raw.call("PATCH", f"{ips}/fd00:10::5", {"spec": {"parentRef": {"name": "db"}}}, ctype=patch)
    assert code == 422 and [(c["reason"], c["field"]) for c in status["details"]["causes"]] == [
        ("FieldValueInvalid", "spec.parentRef")], status


def test_cluster_trust_bundle_validation_over_http(server: LocalAPIServer) -> None:
    """A ClusterTrustBundle is validated as kube-apiserver validates it: PEM CA certificates, a
    name prefixed by its signer name, which is immutable."""
    raw = Raw(server)
    bundles = "/apis/certificates.k8s.io/v1/clustertrustbundles"
    bundle: dict[str, Any] = {"apiVersion": "certificates.k8s.io/v1", "kind": "ClusterTrustBundle",
                              "metadata": {"name": "example.com:signer:roots"},
                              "spec": {"signerName": "example.com/signer", "trustBundle": "x"}}
    code, _, status = raw.call("POST", bundles, bundle)
    assert code == 422 and status["message"] == (
        'ClusterTrustBundle.certificates.k8s.io "example.com:signer:roots" is invalid: spec.trustBundle: Invalid '
        'value: "<value omitted>": at least one trust anchor must be provided'), status
    bundle["spec"]["trustBundle"] = CA
    assert raw.call("POST", bundles, bundle)[0] == 201
    code, _, status = raw.call("PATCH", f"{bundles}/example.com:signer:roots",
                               {"spec": {"signerName": "example.com/other"}}, ctype="application/merge-patch+json")
    assert code == 422 and [(c["reason"], c["field"]) for c in status["details"]["causes"]] == [
        ("FieldValueInvalid", "metadata.name"), ("FieldValueInvalid", "spec.signerName")], status


_ALPHA_137_POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "alpha-137"},
    "spec": {"volumes": [{"name": "scratch", "emptyDir": {"mode": 0o1777}},
                         {"name": "conf", "configMap": {"name": "c", "defaultUser": 1000}},
                         {"name": "cert", "projected": {"sources": [{"podCertificate": {
                             "signerName": "example.com/signer", "keyType": "ED25519",
                             "credentialBundlePath": "bundle.pem"}}]}}],
             "containers": [{"name": "c", "image": "busybox", "restartPolicy": "Never",
                             "restartPolicyRules": [{"action": "RestartAllContainers",
                                                     "exitCodes": {"operator": "In", "values": [42]}}],
                             "volumeMounts": [{"name": "scratch", "mountPath": "/s", "bindMountOptions": ["noexec"]}],
                             "livenessProbe": {"grpc": {"port": 9090, "mode": "TLS"}},
                             "readinessProbe": {"httpGet": {"port": 8080, "protocol": "HTTP2"}}}]}}


def test_the_1_37_alpha_fields_are_dropped_and_the_ga_ones_kept(server: LocalAPIServer) -> None:
    """At 1.37 the fields of gates alpha in 1.37 (emptyDir mode, defaultUser, bindMountOptions,
    grpc mode, httpGet protocol) are dropped on create; a podCertificate (GA) and the
    RestartAllContainers action (beta, on) are kept."""
    code, _, pod = Raw(server).call("POST", _PODS, _ALPHA_137_POD)
    assert code == 201, pod
    volumes, container = pod["spec"]["volumes"], pod["spec"]["containers"][0]
    assert "mode" not in volumes[0]["emptyDir"] and "defaultUser" not in volumes[1]["configMap"]
    assert volumes[2]["projected"]["sources"][0]["podCertificate"]["keyType"] == "ED25519"
    assert container["restartPolicyRules"][0]["action"] == "RestartAllContainers"
    assert "bindMountOptions" not in container["volumeMounts"][0]
    assert "mode" not in container["livenessProbe"]["grpc"]
    assert "protocol" not in container["readinessProbe"]["httpGet"]


def test_protobuf_requests_for_1_37_kinds_and_fields(server: LocalAPIServer) -> None:
    """A protobuf body (what kubectl and client-go send for built-in kinds) of a kind new in the
    1.37 table (resource.k8s.io/v1 ResourceClaim) and of a field added since 1.32 (a pod's
    hostnameOverride, field 41) decodes as its JSON would."""
    from tests.apiserver_units.test_protobuf import _body, _msg

    raw = Raw(server)
    meta = _msg(1, _msg(1, b"proto-claim"))  # ObjectMeta.name
    request = _msg(1, b"gpu") + _msg(2, _msg(1, b"gpu"))  # DeviceRequest name, exactly.deviceClassName
    claim = meta + _msg(2, _msg(1, _msg(1, request)))  # spec.devices.requests[0]
    code, _, created = raw.call("POST", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims",
                                raw=_body("resource.k8s.io/v1", "ResourceClaim", claim),
                                ctype="application/vnd.kubernetes.protobuf")
    assert code == 201, created
    assert created["spec"]["devices"]["requests"] == [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]
    container = _msg(1, b"c") + _msg(2, b"busybox")  # Container name, image
    spec = _msg(2, container) + _msg(41, b"proto.example")  # PodSpec containers, hostnameOverride
    code, _, pod = raw.call("POST", _PODS, raw=_body("v1", "Pod", _msg(1, _msg(1, b"proto-pod")) + _msg(2, spec)),
                            ctype="application/vnd.kubernetes.protobuf")
    assert code == 201 and pod["spec"]["hostnameOverride"] == "proto.example", pod


def test_emulated_1_34_bootstrap_policy_follows_its_gates(emulated: LocalAPIServer) -> None:
    """kube-apiserver 1.37 --emulated-version 1.34 builds its bootstrap roles with 1.34's default
    gates: DRA (GA 1.34) and VolumeAttributesClass (GA 1.34) are in, ClusterTrustBundle,
    PodCertificateRequest, StorageVersionMigrator (GA 1.37), DRADeviceTaints,
    DRAExtendedResource, DRAResourceClaimGranularStatusAuthorization, ComponentFlagz and
    ComponentStatusz (on from 1.36) are not."""
    raw = Raw(emulated)
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    roles = {r["metadata"]["name"]: r for r in raw.call("GET", f"{rbac}/clusterroles")[2]["items"]}
    node = {(tuple(r["apiGroups"]), tuple(r["resources"])) for r in roles["system:node"]["rules"]}
    assert (("resource.k8s.io",), ("resourceclaims",)) in node and (("",), ("serviceaccounts",)) in node
    assert not {res for groups, res in node if groups == ("certificates.k8s.io",)} - {
        ("certificatesigningrequests",)}
    scheduler = roles["system:kube-scheduler"]["rules"]
    assert scheduler[-1] == {"apiGroups": ["resource.k8s.io"], "resources": ["resourceslices"],
                             "verbs": ["get", "list", "watch"]}
    assert not {"/flagz", "/statusz"} & set(roles["system:monitoring"]["rules"][0]["nonResourceURLs"])
    claims = roles["system:controller:resource-claim-controller"]["rules"]
    assert all("resourceclaims/binding" not in r["resources"] for r in claims)
    names = set(roles)
    assert "system:controller:volumeattributesclass-protection-controller" in names
    assert not names & {"system:cluster-trust-bundle-discovery", "system:controller:device-taint-eviction-controller",
                        "system:controller:podcertificaterequestcleaner",
                        "system:controller:storage-version-migrator-controller",
                        "system:controller:kube-apiserver-serving-clustertrustbundle-publisher"}


# -- the non-pod kinds' fields, as kube's validation and strategies treat them ----------------


def test_a_jobs_success_policy_is_checked_and_immutable(server: LocalAPIServer) -> None:
    """pkg/apis/batch/validation: succeededIndexes errors carry kube's parse message; an accepted
    successPolicy cannot change (ValidateJobSpecUpdate)."""
    raw, jobs = Raw(server), "/apis/batch/v1/namespaces/default/jobs"
    job: dict[str, Any] = {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "success-policy"},
        "spec": {"suspend": True, "completionMode": "Indexed", "completions": 3, "parallelism": 3,
                 "successPolicy": {"rules": [{"succeededIndexes": "0-3"}]},
                 "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}
    code, _, status = raw.call("POST", jobs, job)
    assert code == 422 and status["message"].endswith(
        'spec.successPolicy.rules[0].succeededIndexes: Invalid value: "0-3": error parsing succeededIndexes: '
        'too large index: "3"'), status
    job["spec"]["successPolicy"] = {"rules": [{"succeededIndexes": "0-2"}]}
    code, _, created = raw.call("POST", jobs, job)
    assert code == 201, created
    created["spec"]["successPolicy"] = {"rules": [{"succeededCount": 1}]}
    code, _, status = raw.call("PUT", f"{jobs}/success-policy", created)
    assert code == 422 and status["message"].endswith(
        'spec.successPolicy: Invalid value: {"rules":[{"succeededCount":1}]}: field is immutable'), status


def test_emulated_1_33_drops_a_claims_volume_attributes_class(emulated_1_33: LocalAPIServer) -> None:
    """VolumeAttributesClass is beta and off before 1.34: a claim's volumeAttributesClassName is
    dropped on create (pkg/api/persistentvolumeclaim DropDisabledFields; its dataSource is
    copied to dataSourceRef, NormalizeDataSources); a Deployment's
    status.terminatingReplicas is dropped from a status write (dropDisabledStatusFields)."""
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "vac"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                      "volumeAttributesClassName": "gold",
                      "dataSource": {"kind": "PersistentVolumeClaim", "name": "source"}}}
    code, _, created = Raw(emulated_1_33).call("POST", "/api/v1/namespaces/default/persistentvolumeclaims", claim)
    assert code == 201 and "volumeAttributesClassName" not in created["spec"], created
    # NormalizeDataSources: the claim's dataSource is its dataSourceRef too
    assert created["spec"]["dataSourceRef"] == {"kind": "PersistentVolumeClaim", "name": "source"}
    # DeploymentReplicaSetTerminatingReplicas is alpha before 1.35: a status write drops the count
    deployments = "/apis/apps/v1/namespaces/default/deployments"
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "terminating"},
                  "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "t"}},
                           "template": {"metadata": {"labels": {"app": "t"}},
                                        "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}
    raw = Raw(emulated_1_33)
    assert raw.call("POST", deployments, deployment)[0] == 201
    code, _, patched = raw.call("PATCH", f"{deployments}/terminating/status", {"status": {"terminatingReplicas": 1}},
                                ctype="application/merge-patch+json")
    assert code == 200 and "terminatingReplicas" not in patched["status"], patched


_CLAIMED = {"name": "c", "image": "busybox", "resources": {"claims": [{"name": "gpu"}]},
            "volumeMounts": [{"name": "model", "mountPath": "/m"}]}
_OLDER_GATES_POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "older-gates"},
    "spec": {"resources": {"limits": {"cpu": "1"}},
             "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu-claim"}],
             "volumes": [{"name": "model", "image": {"reference": "registry.example/model:1"}},
                         {"name": "ca", "projected": {"sources": [{"clusterTrustBundle": {
                             "signerName": "example.com/signer", "path": "ca.pem"}}]}}],
             "containers": [_CLAIMED]}}
_OLDER_GATES_STATUS: dict[str, Any] = {
    "phase": "Running", "observedGeneration": 1,
    "conditions": [{"type": "Ready", "status": "True", "observedGeneration": 1}],
    "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "gpu-claim"}],
    "allocatedResources": {"cpu": "1"}, "resources": {"limits": {"cpu": "1"}},
    "containerStatuses": [{"name": "c", "image": "busybox", "imageID": "", "ready": True, "restartCount": 0,
                           "allocatedResourcesStatus": [{"name": "claim:gpu", "resources": [
                               {"resourceID": "gpu-0", "health": "Healthy"}]}]}]}


def test_emulated_1_33_drops_the_pod_fields_of_older_gates(emulated_1_33: LocalAPIServer,
                                                            server: LocalAPIServer) -> None:
    """At 1.33 kube drops (pkg/api/pod/util.go) a pod's ``resources`` (PodLevelResources), its
    ``resourceClaims`` and containers' ``resources.claims`` (DynamicResourceAllocation), ``image``
    volumes with their mounts (ImageVolume) and a projected ``clusterTrustBundle``
    (ClusterTrustBundleProjection) on create; a status write loses ``observedGeneration`` (the
    conditions' too), ``resourceClaimStatuses``, ``resources``/``allocatedResources`` and
    containers' ``allocatedResourcesStatus``. The 1.37 server keeps them all."""
    code, _, pod = Raw(emulated_1_33).call("POST", _PODS, _OLDER_GATES_POD)
    assert code == 201, pod
    spec = pod["spec"]
    assert "resources" not in spec and "resourceClaims" not in spec, spec
    assert spec["volumes"][0]["name"] == "ca" and spec["volumes"][0]["projected"]["sources"] == [{}]
    assert "claims" not in spec["containers"][0]["resources"]
    assert all(m["name"] != "model" for m in spec["containers"][0].get("volumeMounts", []))
    code, _, written = Raw(emulated_1_33).call("PUT", f"{_PODS}/older-gates/status",
                                               {**pod, "status": _OLDER_GATES_STATUS})
    assert code == 200, written
    status = written["status"]
    assert status["phase"] == "Running" and status["conditions"][0]["type"] == "Ready"
    assert not {"observedGeneration", "resourceClaimStatuses", "resources", "allocatedResources"} & set(status)
    assert "observedGeneration" not in status["conditions"][0]
    assert "allocatedResourcesStatus" not in status["containerStatuses"][0]
    code, _, kept = Raw(server).call("POST", _PODS, _OLDER_GATES_POD)
    assert code == 201, kept
    assert kept["spec"]["resources"] == {"limits": {"cpu": "1"}} and kept["spec"]["resourceClaims"]
    assert kept["spec"]["volumes"][0]["image"]["reference"] == "registry.example/model:1"
    assert kept["spec"]["volumes"][1]["projected"]["sources"][0]["clusterTrustBundle"]["path"] == "ca.pem"
    assert kept["spec"]["containers"][0]["resources"]["claims"] == [{"name": "gpu"}]
    code, _, written = Raw(server).call("PUT", f"{_PODS}/older-gates/status", {**kept, "status": _OLDER_GATES_STATUS})
    assert code == 200, written
    assert {k: written["status"].get(k) for k in _OLDER_GATES_STATUS if k != "containerStatuses"} == \
        {k: v for k, v in _OLDER_GATES_STATUS.items() if k != "containerStatuses"}
    assert written["status"]["containerStatuses"][0]["allocatedResourcesStatus"][0]["name"] == "claim:gpu"


def test_stateful_set_max_unavailable_follows_its_gate(emulated_1_33: LocalAPIServer, server: LocalAPIServer) -> None:
    """MaxUnavailableStatefulSet is on from 1.37: there an unset maxUnavailable defaults to 1;
    at 1.33 a given one is dropped."""
    sets = "/apis/apps/v1/namespaces/default/statefulsets"
    stateful: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "max-unavailable"},
                "spec": {"serviceName": "s", "selector": {"matchLabels": {"app": "m"}},
                         "template": {"metadata": {"labels": {"app": "m"}},
                                      "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}
    code, _, created = Raw(server).call("POST", sets, stateful)
    assert code == 201 and created["spec"]["updateStrategy"]["rollingUpdate"] == {"partition": 0, "maxUnavailable": 1}
    given = {**stateful, "spec": {**stateful["spec"], "updateStrategy": {"rollingUpdate": {"maxUnavailable": 2}}}}
    code, _, created = Raw(emulated_1_33).call("POST", sets, given)
    assert code == 201 and created["spec"]["updateStrategy"] == {"type": "RollingUpdate",
                                                                 "rollingUpdate": {"partition": 0}}, created


def test_emulated_1_34_drops_the_dra_fields_of_gates_off_before_1_36(emulated: LocalAPIServer) -> None:
    """At 1.34 (resource.k8s.io/v1 served; DRADeviceTaints, DRAConsumableCapacity,
    DRAExtendedResource and DRAPartitionableDevices off) a claim's tolerations, capacity and
    distinctAttribute, a DeviceClass's extendedResourceName and a ResourceSlice's taints and
    partitionable-device fields are dropped on create."""
    raw, base = Raw(emulated), "/apis/resource.k8s.io/v1"
    code, _, cls = raw.call("POST", f"{base}/deviceclasses", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gated-gpu"},
        "spec": {"extendedResourceName": "example.com/gpu"}})
    assert code == 201 and "extendedResourceName" not in cls.get("spec", {}), cls
    code, _, claim = raw.call("POST", f"{base}/namespaces/default/resourceclaims", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "gated"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": "gated-gpu", "tolerations": [{"key": "k", "operator": "Exists"}],
            "capacity": {"requests": {"memory": "1Gi"}}}}],
            "constraints": [{"requests": ["gpu"], "distinctAttribute": "example.com/id"}]}}})
    assert code == 422 and claim["details"]["causes"] == [{  # 1.34 drops it: no attribute left
        "reason": "FieldValueRequired", "message": "Required value",
        "field": "spec.devices.constraints[0].matchAttribute"}], claim
    code, _, claim = raw.call("POST", f"{base}/namespaces/default/resourceclaims", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "gated"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": "gated-gpu", "tolerations": [{"key": "k", "operator": "Exists"}],
            "capacity": {"requests": {"memory": "1Gi"}}}}],
            "constraints": [{"requests": ["gpu"], "distinctAttribute": "example.com/id",
                             "matchAttribute": "example.com/model"}]}}})
    assert code == 201, claim
    exactly = claim["spec"]["devices"]["requests"][0]["exactly"]
    assert "tolerations" not in exactly and "capacity" not in exactly, exactly
    assert "distinctAttribute" not in claim["spec"]["devices"]["constraints"][0]
    code, _, sl = raw.call("POST", f"{base}/resourceslices", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "gated"},
        "spec": {"driver": "example.com", "nodeName": "n1", "pool": {"name": "p", "generation": 1,
                                                                    "resourceSliceCount": 1},
                 "devices": [{"name": "g0", "taints": [{"key": "k", "effect": "NoSchedule"}]}]}})
    assert code == 201 and sl["spec"]["devices"] == [{"name": "g0"}], sl


def test_a_storage_version_migration_is_validated(server: LocalAPIServer) -> None:
    """storagemigration.k8s.io/v1 as kube 1.37 validates it: the resource's format, an immutable
    spec, the status subresource's resourceVersion and condition rules."""
    raw = Raw(server)
    path = "/apis/storagemigration.k8s.io/v1/storageversionmigrations"
    svm: dict[str, Any] = {"apiVersion": "storagemigration.k8s.io/v1", "kind": "StorageVersionMigration",
                           "metadata": {"name": "svm"}, "spec": {"resource": {"group": "", "resource": "Secrets"}}}
    code, _, body = raw.call("POST", path, svm)
    assert (code, body["details"]["causes"][0]["field"]) == (422, "spec.resource.resource"), body
    svm["spec"]["resource"]["resource"] = "secrets"
    code, _, body = raw.call("POST", path, svm)
    assert code == 201, body
    body["spec"]["resource"]["resource"] = "configmaps"
    code, _, answer = raw.call("PUT", f"{path}/svm", body)
    assert (code, answer["details"]["causes"][0]["message"]) == (
        422, 'Invalid value: storagemigration.StorageVersionMigrationSpec{Resource:v1.GroupResource{Group:"", '
             'Resource:"configmaps"}}: field is immutable'), answer
    running = {"type": "Running", "status": "True", "lastTransitionTime": "2026-11-29T06:00:00Z", "reason": "Started"}
    body["spec"]["resource"]["resource"] = "secrets"
    body["status"] = {"conditions": [running]}
    code, _, answer = raw.call("PUT", f"{path}/svm/status", body)
    assert (code, answer["details"]["causes"][0]["field"]) == (422, "status.resourceVersion"), answer
    body["status"]["resourceVersion"] = "12"
    code, _, answer = raw.call("PUT", f"{path}/svm/status", body)
    assert code == 200, answer
    answer["status"]["conditions"].append({**running, "type": "Succeeded"})
    code, _, answer = raw.call("PUT", f"{path}/svm/status", answer)
    assert code == 422 and answer["details"]["causes"][0]["message"].endswith(
        "Running condition cannot be true when success condition is true"), answer
    assert raw.call("DELETE", f"{path}/svm")[0] == 200


def test_a_pod_certificate_request_is_validated(server: LocalAPIServer) -> None:
    """certificates.k8s.io/v1 PodCertificateRequest as kube 1.37 validates it: the references, the
    stub request's signature, maxExpirationSeconds defaulted, an immutable spec and the status
    subresource's transitions."""
    raw = Raw(server)
    path = "/apis/certificates.k8s.io/v1/namespaces/default/podcertificaterequests"
    pcr: dict[str, Any] = {
        "apiVersion": "certificates.k8s.io/v1", "kind": "PodCertificateRequest", "metadata": {"name": "pcr"},
        "spec": {"signerName": "example.com/signer", "podName": "Pod", "podUID": "pu", "serviceAccountName": "default",
                 "serviceAccountUID": "su", "nodeName": "node", "nodeUID": "", "stubPKCS10Request": STUB_REQUEST}}
    code, _, body = raw.call("POST", path, pcr)
    assert code == 422, body
    assert [c["field"] for c in body["details"]["causes"]] == ["spec.podName", "spec.nodeUID"]
    pcr["spec"].update(podName="pod", nodeUID="nu")
    code, _, body = raw.call("POST", path, pcr)
    assert code == 201, body
    assert body["spec"]["maxExpirationSeconds"] == 86400
    body["spec"]["podName"] = "other"
    assert raw.call("PUT", f"{path}/pcr", body)[0] == 422
    body["spec"]["podName"] = "pod"
    body["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "Ok",
                                      "lastTransitionTime": "2026-11-29T06:00:00Z"}]}
    code, _, answer = raw.call("PUT", f"{path}/pcr/status", body)
    assert (code, answer["details"]["causes"][0]["field"]) == (422, "status.conditions.[0].type"), answer
    body["status"]["conditions"][0]["type"] = "Denied"
    code, _, answer = raw.call("PUT", f"{path}/pcr/status", body)
    assert code == 200, answer
    answer["status"]["conditions"][0]["reason"] = "Changed"
    code, _, answer = raw.call("PUT", f"{path}/pcr/status", answer)
    assert code == 422 and answer["details"]["causes"][0]["message"] == (
        "Invalid value: immutable after PodCertificateRequest is issued, denied, or failed"), answer
    assert raw.call("DELETE", f"{path}/pcr")[0] == 200
