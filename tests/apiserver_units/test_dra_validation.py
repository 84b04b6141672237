"""resource.k8s.io/v1 validated as kube-apiserver 1.37's pkg/apis/resource/validation does it
(``strategies.dra``), through each kind's strategy: defaulting, then ``validate`` (the schema's
and the kind's rules), ``validate_gated`` at 1.37 and ``validate_extra`` (updates)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.strategies import for_kind

_PLURALS = {"ResourceClaim": "resourceclaims", "ResourceClaimTemplate": "resourceclaimtemplates",
            "DeviceClass": "deviceclasses", "ResourceSlice": "resourceslices",
            "DeviceTaintRule": "devicetaintrules"}
_DNS_LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
              "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
              "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
_DNS_SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                  "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                  "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
_REF = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"


def _res(kind: str) -> Resource:
    return Resource(group="resource.k8s.io", version="v1", plural=_PLURALS[kind], kind=kind,
                    namespaced=kind in ("ResourceClaim", "ResourceClaimTemplate"))


def _errors(obj: dict[str, Any], old: dict[str, Any] | None = None, minor: int = 37) -> list[str]:
    res = _res(obj["kind"])
    strategy = for_kind(res.group, res.kind)
    obj = copy.deepcopy(obj)
    strategy.default(res, obj, old is None, None)
    found = strategy.validate(res, obj, None) + strategy.validate_gated(res, obj, old, minor)
    return [str(e) for e in found + strategy.validate_extra(obj, old)]


def _claim(*requests: dict[str, Any], **devices: Any) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
            "spec": {"devices": {"requests": list(requests), **devices}}}


def _exact(name: str = "gpu", **exactly: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": "gpu.example.com", **exactly}}


def _slice(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"driver": "gpu.example.com", "nodeName": "node-1",
                            "pool": {"name": "pool", "generation": 1, "resourceSliceCount": 1}}
    base.update(spec)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": base}


def test_a_valid_claim_template_class_and_slice_pass() -> None:
    claim = _claim(_exact(selectors=[{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]),
                   {"name": "any", "firstAvailable": [{"name": "big", "deviceClassName": "gpu"},
                                                      {"name": "small", "deviceClassName": "gpu"}]},
                   constraints=[{"requests": ["gpu", "any/big"], "matchAttribute": "gpu.example.com/model"}],
                   config=[{"requests": ["any"], "opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}])
    assert _errors(claim) == []
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t"},
                "spec": {"metadata": {"labels": {"a": "b"}}, "spec": claim["spec"]}}
    assert _errors(template) == []
    cls = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"selectors": [{"cel": {"expression": "true"}}], "extendedResourceName": "example.com/gpu"}}
    assert _errors(cls) == []
    assert _errors(_slice(devices=[{"name": "g0", "attributes": {"model": {"string": "a100"},
                                                                 "gpu.example.com/ver": {"version": "1.2.3"}},
                                    "capacity": {"memory": {"value": "40Gi"}}}])) == []


def test_request_names_are_dns_labels_and_unique() -> None:
    assert _errors(_claim(_exact("GPU"), _exact("b"), _exact("b"))) == [
        f'spec.devices.requests[0].name: Invalid value: "GPU": {_DNS_LABEL}',
        'spec.devices.requests[2]: Duplicate value: "b"']


def test_a_request_has_exactly_one_of_exactly_and_first_available() -> None:
    assert _errors(_claim({"name": "a"})) == [
        "spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required"]
    both = {"name": "a", "exactly": {"deviceClassName": "gpu"}, "firstAvailable": [{"name": "x",
                                                                                    "deviceClassName": "gpu"}]}
    assert _errors(_claim(both)) == [
        'spec.devices.requests[0]: Invalid value: "null": exactly one of `exactly` or `firstAvailable` is '
        "required, but multiple fields are set"]


def test_device_class_name_is_required_and_a_subdomain() -> None:
    assert _errors(_claim({"name": "a", "exactly": {"deviceClassName": "Bad_Class"}})) == [
        f'spec.devices.requests[0].exactly.deviceClassName: Invalid value: "Bad_Class": {_DNS_SUBDOMAIN}']
    found = _errors(_claim({"name": "a", "firstAvailable": [{"name": "x", "deviceClassName": ""}]}))
    assert found == ["spec.devices.requests[0].firstAvailable[0].deviceClassName: Required value"]


def test_first_available_subrequests_are_at_most_8_and_unique() -> None:
    subs = [{"name": f"s{i}", "deviceClassName": "gpu"} for i in range(9)]
    assert _errors(_claim({"name": "a", "firstAvailable": subs})) == [
        "spec.devices.requests[0].firstAvailable: Too many: 9: must have at most 8 items"]
    subs = [{"name": "s", "deviceClassName": "gpu"}, {"name": "s", "deviceClassName": "gpu"}]
    assert _errors(_claim({"name": "a", "firstAvailable": subs})) == [
        'spec.devices.requests[0].firstAvailable[1]: Duplicate value: "s"']


def test_at_most_32_requests() -> None:
    assert _errors(_claim(*[_exact(f"r{i}") for i in range(33)])) == [
        "spec.devices.requests: Too many: 33: must have at most 32 items"]


def test_allocation_mode_and_count() -> None:
    assert _errors(_claim(_exact(allocationMode="All", count=2), _exact("b", count=-1),
                          _exact("c", allocationMode="Some"))) == [
        "spec.devices.requests[0].exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All'",
        "spec.devices.requests[1].exactly.count: Invalid value: -1: must be greater than zero",
        'spec.devices.requests[2].exactly.allocationMode: Unsupported value: "Some": supported values: "All", '
        '"ExactCount"']


def test_selectors_need_cel_of_at_most_10_kib() -> None:
    assert _errors(_claim(_exact(selectors=[{}, {"cel": {"expression": "x" * 10241}}]))) == [
        "spec.devices.requests[0].exactly.selectors[0].cel: Required value",
        "spec.devices.requests[0].exactly.selectors[1].cel.expression: Too long: may not be more than 10240 bytes"]


def test_tolerations() -> None:
    tolerations = [{"key": "k", "operator": "Exists", "value": "v"}, {"key": "bad key", "operator": "Equal"},
                   {"operator": "Near"}, {"operator": "Exists", "effect": "Sometimes"}]
    found = _errors(_claim(_exact(tolerations=tolerations)))
    path = "spec.devices.requests[0].exactly.tolerations"
    assert found[0] == f'{path}[0].value: Invalid value: "v": must be empty for operator `Exists`'
    assert found[1].startswith(f'{path}[1].key: Invalid value: "bad key": name part must consist of')
    assert found[2:] == [
        f'{path}[2].operator: Unsupported value: "Near": supported values: "Equal", "Exists"',
        f'{path}[3].effect: Unsupported value: "Sometimes": supported values: "NoExecute", "NoSchedule", "None"']


def test_constraints_reference_requests_and_name_qualified_attributes() -> None:
    found = _errors(_claim(_exact("a"), _exact("b"), constraints=[
        {"requests": ["a", "c", "a/x", "a/b/c", "a"], "matchAttribute": "model"},
        {"distinctAttribute": "example.com/"}, {"requests": ["b"]}]))
    assert found == [
        f'spec.devices.constraints[0].requests[1]: Invalid value: "c": {_REF}',
        f'spec.devices.constraints[0].requests[2]: Invalid value: "a/x": {_REF}',
        f'spec.devices.constraints[0].requests[3]: Invalid value: "a/b/c": {_REF}',
        'spec.devices.constraints[0].requests[4]: Duplicate value: "a"',
        'spec.devices.constraints[0].matchAttribute: Invalid value: "model": a fully qualified name must be a '
        "domain and a name separated by a slash",
        'spec.devices.constraints[1].distinctAttribute: Invalid value: "": the name must not be empty',
        'spec.devices.constraints[2]: Required value: exactly one of "matchAttribute" or "distinctAttribute" '
        "is required, but multiple fields are set"]
    assert _errors(_claim(_exact("a"), constraints=[{"requests": ["a"]}]), minor=35) == [
        "spec.devices.constraints[0].matchAttribute: Required value"]


def test_config_references_requests_and_needs_an_opaque_json_object() -> None:
    found = _errors(_claim(_exact("a"), config=[
        {"requests": ["b"], "opaque": {"driver": "gpu.example.com", "parameters": {"x": 1}}},
        {},
        {"opaque": {"driver": "Bad_Driver", "parameters": [1]}},
        {"opaque": {"driver": "gpu.example.com", "parameters": {"x": "y" * 10240}}}]))
    assert found == [
        f'spec.devices.config[0].requests[0]: Invalid value: "b": {_REF}',
        "spec.devices.config[1].opaque: Required value",
        f'spec.devices.config[2].opaque.driver: Invalid value: "Bad_Driver": {_DNS_SUBDOMAIN}',
        'spec.devices.config[2].opaque.parameters: Invalid value: "<value omitted>": must be a valid JSON object',
        "spec.devices.config[3].opaque.parameters: Too long: may not be more than 10240 bytes"]


def test_claim_and_template_specs_are_immutable() -> None:
    claim = _claim(_exact())
    changed = _claim(_exact("other"))
    found = _errors(changed, old=_stored(claim))
    assert len(found) == 1 and found[0].startswith("spec: Invalid value: ") and found[0].endswith(
        ": field is immutable")
    assert _errors(claim, old=_stored(claim)) == []
    invalid_change = _claim(_exact("BAD"))  # kube checks only that the spec did not change
    assert [e.split(": ")[0] for e in _errors(invalid_change, old=_stored(claim))] == ["spec"]
    template: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                                "metadata": {"name": "t"}, "spec": {"spec": claim["spec"]}}
    new = copy.deepcopy(template)
    new["spec"]["metadata"] = {"labels": {"a": "b"}}
    assert _errors(new, old=_stored(template))[-1].endswith(": field is immutable")


def _stored(obj: dict[str, Any]) -> dict[str, Any]:
    res = _res(obj["kind"])
    stored = copy.deepcopy(obj)
    for_kind(res.group, res.kind).default(res, stored, True, None)
    return stored


def test_template_paths_and_metadata() -> None:
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t"},
                "spec": {"metadata": {"labels": {"a": "-"}},
                         "spec": {"devices": {"requests": [{"name": "a"}]}}}}
    found = _errors(template)
    assert found[0].startswith('spec.metadata.labels: Invalid value: "-": a valid label must')
    assert found[1:] == ["spec.spec.devices.requests[0]: Required value: exactly one of `exactly` or "
                         "`firstAvailable` is required"]


def _status_errors(claim: dict[str, Any], status: dict[str, Any], old_status: dict[str, Any] | None = None,
                   deleting: bool = False) -> list[str]:
    res = _res("ResourceClaim")
    old = _stored(claim)
    old["status"] = old_status or {}
    obj = copy.deepcopy(old)
    obj["status"] = status
    if deleting:
        obj["metadata"]["deletionTimestamp"] = old["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return [str(e) for e in for_kind(res.group, res.kind).validate_status(res, obj, old, None)]


_RESULT = {"request": "gpu", "driver": "gpu.example.com", "pool": "pool", "device": "g0"}
_ALLOCATION = {"devices": {"results": [_RESULT]}}
_POD = {"resource": "pods", "name": "p", "uid": "u1"}


def test_claim_status_reserved_for() -> None:
    claim = _claim(_exact())
    assert _status_errors(claim, {"allocation": _ALLOCATION, "reservedFor": [_POD]}) == []
    assert _status_errors(claim, {"reservedFor": [_POD]}) == [
        "status.reservedFor: Forbidden: may not be specified when `allocated` is not set"]
    assert _status_errors(claim, {"allocation": _ALLOCATION, "reservedFor": [{}, _POD, _POD]}) == [
        "status.reservedFor[0].resource: Required value", "status.reservedFor[0].name: Required value",
        "status.reservedFor[0].uid: Required value", 'status.reservedFor[2]: Duplicate value: "u1"']
    other = {**_POD, "uid": "u2"}
    assert _status_errors(claim, {"allocation": _ALLOCATION, "reservedFor": [_POD, other]},
                          {"allocation": _ALLOCATION, "reservedFor": [_POD]}, deleting=True) == [
        "status.reservedFor: Forbidden: new entries may not be added while `deallocationRequested` or "
        "`deletionTimestamp` are set"]


def test_claim_status_allocation() -> None:
    claim = _claim(_exact())
    bad = {"devices": {"results": [{**_RESULT, "request": "cpu", "device": "G0"}],
                       "config": [{"source": "FromNowhere", "opaque": {"driver": "d.example.com",
                                                                       "parameters": {}}}]}}
    assert _status_errors(claim, {"allocation": bad}) == [
        f'status.allocation.devices.results[0].request: Invalid value: "cpu": {_REF}',
        f'status.allocation.devices.results[0].device: Invalid value: "G0": {_DNS_LABEL}',
        'status.allocation.devices.config[0].source: Unsupported value: "FromNowhere": supported values: '
        '"FromClaim", "FromClass"']
    other = {"devices": {"results": [{**_RESULT, "device": "g1"}]}}
    found = _status_errors(claim, {"allocation": other}, {"allocation": _ALLOCATION})
    assert len(found) == 1 and found[0].startswith("status.allocation: Invalid value:") \
        and found[0].endswith("field is immutable")


def test_device_class() -> None:
    cls = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"selectors": [{}], "config": [{"opaque": {"driver": "gpu.example.com"}}],
                    "extendedResourceName": "gpu"}}
    assert _errors(cls) == [
        "spec.selectors[0].cel: Required value", "spec.config[0].opaque.parameters: Required value",
        'spec.extendedResourceName: Invalid value: "gpu": must be a valid extended resource name']
    cls["spec"] = {"selectors": [{"cel": {"expression": "true"}}] * 33, "extendedResourceName": "kubernetes.io/x"}
    assert _errors(cls) == [
        "spec.selectors: Too many: 33: must have at most 32 items",
        'spec.extendedResourceName: Invalid value: "kubernetes.io/x": must be a valid extended resource name']


def test_slice_driver_pool_and_node_choice() -> None:
    found = _errors(_slice(driver="Bad_Driver", pool={"name": "a/B", "resourceSliceCount": 0, "generation": -1},
                           nodeName=None))
    assert found == [
        f'spec.driver: Invalid value: "Bad_Driver": {_DNS_SUBDOMAIN}',
        f'spec.pool.name: Invalid value: "B": {_DNS_SUBDOMAIN}',
        "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero",
        "spec.pool.generation: Invalid value: -1: must be greater than or equal to zero",
        "spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` "
        "is required"]
    assert _errors(_slice(allNodes=True, perDeviceNodeSelection=False)) == [
        "spec.perDeviceNodeSelection: Invalid value: false: must be either unset or set to true",
        'spec: Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, `nodeSelector`, `allNodes`, '
        "`perDeviceNodeSelection` is required, but multiple fields are set"]
    assert _errors(_slice(nodeName=None, nodeSelector={"nodeSelectorTerms": []})) == [
        "spec.nodeSelector.nodeSelectorTerms: Required value: must have at least one node selector term",
        "spec.nodeSelector.nodeSelectorTerms: Invalid value: []core.NodeSelectorTerm{}: must have exactly one node "
        "selector term"]
    two = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "In", "values": ["x"]}]},
                                 {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}]}]}
    assert _errors(_slice(nodeName=None, nodeSelector=two)) == [  # Go's %#v of the terms
        "spec.nodeSelector.nodeSelectorTerms: Invalid value: []core.NodeSelectorTerm{core.NodeSelectorTerm{"
        'MatchExpressions:[]core.NodeSelectorRequirement{core.NodeSelectorRequirement{Key:"a", Operator:"In", '
        'Values:[]string{"x"}}}, MatchFields:[]core.NodeSelectorRequirement(nil)}, core.NodeSelectorTerm{'
        "MatchExpressions:[]core.NodeSelectorRequirement(nil), MatchFields:[]core.NodeSelectorRequirement{"
        'core.NodeSelectorRequirement{Key:"metadata.name", Operator:"In", Values:[]string{"n"}}}}}: must have '
        "exactly one node selector term"]
    assert _errors(_slice(devices=[], sharedCounters=[])) == [
        'spec: Invalid value: "": only one of `sharedCounters` or `devices` is allowed']


def test_slice_devices() -> None:
    devices = [{"name": "g0", "attributes": {"a/b/c": {"int": 1}, "bad-name": {"bool": True},
                                             "v": {"version": "1.0"}, "e": {}, "two": {"int": 1, "bool": True}},
                "capacity": {"mem": {"value": "1", "requestPolicy": {}}}, "nodeName": "n"},
               {"name": "g0"}]
    found = _errors(_slice(devices=devices))
    path = "spec.devices[0]"
    assert found[0] == f'{path}.attributes: Invalid value: "a/b/c": must not contain more than one slash'
    assert found[1].startswith(f'{path}.attributes: Invalid value: "bad-name": a valid C identifier must start')
    assert found[2:] == [
        f'{path}.attributes[e]: Invalid value: "": exactly one value must be specified',
        f'{path}.attributes[two]: Invalid value: {{"bool":true,"int":1}}: exactly one value must be specified',
        f'{path}.attributes[v].version: Invalid value: "1.0": must be a string compatible with semver.org spec 2.0.0',
        f"{path}.capacity[mem].requestPolicy: Forbidden: allowMultipleAllocations must be true",
        f'{path}: Invalid value: "null": `nodeName`, `nodeSelector` and `allNodes` can only be set if '
        "`perDeviceNodeSelection` is set to true in the ResourceSlice spec",
        'spec.devices[1]: Duplicate value: "g0"']
    many = {f"a{i}": {"int": i} for i in range(33)}
    assert _errors(_slice(devices=[{"name": "g", "attributes": many}])) == [
        "spec.devices[0]: Invalid value: 33: the total number of attributes and capacities must not exceed 32"]
    assert _errors(_slice(devices=[{"name": f"d{i}"} for i in range(129)])) == [
        "spec.devices: Too many: 129: must have at most 128 items"]
    tainted = [{"name": f"d{i}", "taints": [{"key": "k", "effect": "NoSchedule"}]} for i in range(65)]
    assert _errors(_slice(devices=tainted)) == ["spec.devices: Too many: 65: must have at most 64 items"]


def test_slice_taints_counters_and_per_device_nodes() -> None:
    devices = [{"name": "g0", "taints": [{"key": "k", "effect": "Never"}, {"key": "k"}],
                "consumesCounters": [{"counterSet": "Set", "counters": {"mem": {"value": "1"}}},
                                     {"counterSet": "s2", "counters": {}}],
                "bindingConditions": ["ready"]}]
    found = _errors(_slice(devices=devices))
    assert found[:3] == [
        'spec.devices[0].taints[0].effect: Unsupported value: "Never": supported values: "NoExecute", '
        '"NoSchedule", "None"',
        "spec.devices[0].taints[1].effect: Required value",
        f'spec.devices[0].consumesCounters[0].counterSet: Invalid value: "Set": {_DNS_LABEL}']
    assert found[3:] == [
        "spec.devices[0].consumesCounters[1].counters: Required value",
        "spec.devices[0].bindingFailureConditions: Invalid value: []string(nil): bindingFailureConditions are "
        "required to use bindingConditions"]
    per_device = _slice(nodeName=None, perDeviceNodeSelection=True,
                        devices=[{"name": "a"}, {"name": "b", "nodeName": "n", "allNodes": True},
                                 {"name": "c", "allNodes": True}])
    message = ("exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
               "`perDeviceNodeSelection` is set to true in the ResourceSlice spec")
    assert _errors(per_device) == [f"spec.devices[0]: Required value: {message}",
                                   f'spec.devices[1]: Invalid value: "{{`nodeName`, `allNodes`}}": {message}']
    counters = _slice(nodeName=None, allNodes=True, sharedCounters=[{"name": "s", "counters": {"m": {"value": "1"}}},
                                                                   {"name": "s"}])
    assert _errors(counters) == ["spec.sharedCounters[1].counters: Required value",
                                 'spec.sharedCounters[1]: Duplicate value: "s"']


def test_slice_driver_pool_and_node_name_are_immutable() -> None:
    old = _stored(_slice())
    new = _slice(driver="other.example.com", nodeName="node-2", pool={"name": "p2", "generation": 1, "resourceSliceCount": 1})
    assert _errors(new, old=old) == [
        'spec.pool.name: Invalid value: "p2": field is immutable',
        'spec.driver: Invalid value: "other.example.com": field is immutable',
        'spec.nodeName: Invalid value: "node-2": field is immutable']


@pytest.mark.parametrize("kind", sorted(_PLURALS))
def test_malformed_specs_do_not_raise(kind: str) -> None:
    specs: tuple[Any, ...] = (None, [], "x", {"devices": "x", "spec": 1, "selectors": {}, "pool": [], "driver": 3},
                              {"devices": {"requests": [1, None, {"exactly": []}], "constraints": "x"}})
    for spec in specs:
        obj = {"apiVersion": "resource.k8s.io/v1", "kind": kind, "metadata": {"name": "x"}, "spec": spec}
        assert isinstance(_errors(obj), list)


def test_selectors_are_compiled_in_the_dra_cel_environment() -> None:
    """CompileCELExpression: ``compilation failed: <issues>`` (Invalid), a non-bool result; the
    expressions of a new claim only, at the compatibility version (1.36: no ``includes``)."""
    claim = _claim(_exact(selectors=[{"cel": {"expression": e}} for e in (
        "device.driver ==", '"x"', "[1]", 'device.attributes["a"].model == "x"', "[1].includes(1)",
        "cel.bind(x, 1, x == 1)")]))
    found = _errors(claim)
    path = "spec.devices.requests[0].exactly.selectors"
    assert found[0].startswith(f'{path}[0].cel.expression: Invalid value: "device.driver ==": compilation failed: '
                               "ERROR: <input>:1:17: Syntax error: mismatched input '<EOF>'")
    assert found[1:3] == [
        f'{path}[1].cel.expression: Invalid value: "\\"x\\"": must evaluate to bool or the unknown type, not string',
        f'{path}[2].cel.expression: Invalid value: "[1]": must evaluate to bool or the unknown type, not list(int)']
    assert found[3].startswith(f'{path}[4].cel.expression: Invalid value: "[1].includes(1)": compilation failed: '
                               "ERROR: <input>:1:13: undeclared reference to 'includes'")
    assert found[4].startswith(f'{path}[5].cel.expression: Invalid value: "cel.bind(x, 1, x == 1)": compilation '
                               "failed: ERROR: <input>:1:1: undeclared reference to 'cel'")
    assert len(found) == 5
    assert _errors(claim, old=_stored(claim)) == []  # an update checks immutability only


def test_a_class_compiles_only_changed_selectors() -> None:
    cls: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                           "spec": {"selectors": [{"cel": {"expression": "device.driver =="}}]}}
    assert len(_errors(cls)) == 1
    assert _errors(cls, old=_stored(cls)) == []  # stored: kube does not compile it again
    changed = copy.deepcopy(cls)
    changed["spec"]["selectors"].append({"cel": {"expression": "true"}})
    assert len(_errors(changed, old=_stored(cls))) == 1


def test_slice_node_selectors() -> None:
    selector = {"nodeSelectorTerms": [{
        "matchExpressions": [{"key": "a", "operator": "In"}, {"key": "b", "operator": "Exists", "values": ["x"]},
                             {"key": "c", "operator": "Gt", "values": ["1", "2"]}, {"key": "bad key", "operator": "Near"}],
        "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]},
                        {"key": "spec.x", "operator": "Exists"}, {"key": "metadata.name", "operator": "In",
                                                                   "values": ["Bad_Node"]}]}]}
    found = _errors(_slice(nodeName=None, nodeSelector=selector))
    path = "spec.nodeSelector.nodeSelectorTerms[0]"
    assert found[:4] == [
        f"{path}.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
        f"{path}.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or "
        "'DoesNotExist'",
        f"{path}.matchExpressions[2].values: Required value: must be specified single value when `operator` is "
        "'Lt' or 'Gt'",
        f'{path}.matchExpressions[3].operator: Invalid value: "Near": not a valid selector operator']
    assert found[4].startswith(f'{path}.matchExpressions[3].key: Invalid value: "bad key": name part must')
    assert found[5:] == [
        f"{path}.matchFields[0].values: Required value: must be only one value when `operator` is 'In' or 'NotIn' "
        "for node field selector",
        f'{path}.matchFields[1].operator: Invalid value: "Exists": not a valid selector operator',
        f'{path}.matchFields[1].key: Invalid value: "spec.x": not a valid field selector key',
        f'{path}.matchFields[2].values[0]: Invalid value: "Bad_Node": {_DNS_SUBDOMAIN}']
    per_device = _slice(nodeName=None, perDeviceNodeSelection=True,
                        devices=[{"name": "a", "nodeSelector": {"nodeSelectorTerms": []}}])
    assert _errors(per_device) == ["spec.devices[0].nodeSelector.nodeSelectorTerms: Required value: must have at "
                                   "least one node selector term"]


def test_claim_status_devices_and_allocation_node_selector() -> None:
    claim = _claim(_exact())
    allocation = {**_ALLOCATION, "nodeSelector": {"nodeSelectorTerms": []}}
    devices = [{"driver": "gpu.example.com", "pool": "pool", "device": "g0", "data": [1],
                "conditions": [{"type": f"c{i}"} for i in range(9)]},
               {"driver": "gpu.example.com", "pool": "pool", "device": "g1",
                "networkData": {"interfaceName": "x" * 257, "ips": ["10.0.0.1/24", "10.0.0.1/24"]}},
               {"driver": "gpu.example.com", "pool": "pool", "device": "g0"}]
    assert _status_errors(claim, {"allocation": allocation, "devices": devices}) == [
        "status.allocation.nodeSelector.nodeSelectorTerms: Required value: must have at least one node selector term",
        "status.devices[0].conditions: Too many: 9: must have at most 8 items",
        'status.devices[0].data: Invalid value: "<value omitted>": must be a valid JSON object',
        "status.devices[1]: Invalid value: gpu.example.com/pool/g1: must be an allocated device in the claim",
        "status.devices[1].networkData.interfaceName: Too long: may not be more than 256 bytes",
        'status.devices[1].networkData.ips[1]: Duplicate value: "10.0.0.1/24"',
        "status.devices[2]: Duplicate value: gpu.example.com/pool/g0"]


def test_device_taint_rule() -> None:
    rule: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "r"},
        "spec": {"deviceSelector": {"driver": "Bad_Driver", "pool": "", "device": "G0"},
                 "taint": {"key": "k", "value": "-", "effect": "Sometimes"}}}
    found = _errors(rule)
    assert found[:3] == [
        f'spec.deviceSelector.driver: Invalid value: "Bad_Driver": {_DNS_SUBDOMAIN}',
        "spec.deviceSelector.pool: Required value",
        f'spec.deviceSelector.device: Invalid value: "G0": {_DNS_LABEL}']
    assert found[3].startswith('spec.taint.value: Invalid value: "-": a valid label must')
    assert found[4:] == ['spec.taint.effect: Unsupported value: "Sometimes": supported values: "NoExecute", '
                         '"NoSchedule", "None"']
    good = {**rule, "spec": {"taint": {"key": "k", "effect": "NoSchedule"}}}
    assert _errors(good) == []


def test_a_toleration_operator_defaults_to_equal() -> None:
    """DeviceToleration's ``+default="Equal"``: a toleration without operator is valid."""
    claim = _claim(_exact(tolerations=[{"key": "k", "value": "v"}]),
                   {"name": "any", "firstAvailable": [{"name": "a", "deviceClassName": "gpu",
                                                       "tolerations": [{"key": "k"}]}]})
    assert _errors(claim) == []
    stored = _stored(claim)
    requests = stored["spec"]["devices"]["requests"]
    assert requests[0]["exactly"]["tolerations"] == [{"key": "k", "value": "v", "operator": "Equal"}]
    assert requests[1]["firstAvailable"][0]["tolerations"] == [{"key": "k", "operator": "Equal"}]


def test_template_metadata_allows_only_labels_and_annotations() -> None:
    """ValidateTemplateObjectMeta's validateFieldAllowList (the Go field name, lower-cased
    first letter: ``uID``)."""
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t"},
                "spec": {"metadata": {"name": "n", "uid": "u", "generation": 0, "finalizers": [],
                                      "labels": {"a": "b"}, "annotations": {"c": "d"}},
                         "spec": {"devices": {"requests": [_exact()]}}}}
    assert _errors(template) == ["spec.metadata.name: Forbidden: cannot be set",
                                 "spec.metadata.uID: Forbidden: cannot be set",
                                 "spec.metadata.finalizers: Forbidden: cannot be set"]


def test_skip_node_operations() -> None:
    message = "NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped"
    assert _errors(_slice(skipNodeOperations=["NodePrepareResources"])) == [
        f'spec.skipNodeOperations: Invalid value: []resource.SkipNodeOperation{{"NodePrepareResources"}}: {message}']
    assert _errors(_slice(skipNodeOperations=["NodePrepareResources", "*"])) == []
    result = {**_RESULT, "skipNodeOperations": ["NodePrepareResources"]}
    assert _status_errors(_claim(_exact()), {"allocation": {"devices": {"results": [result]}}}) == [
        "status.allocation.devices.results[0].skipNodeOperations: Invalid value: "
        f'[]resource.SkipNodeOperation{{"NodePrepareResources"}}: {message}']


def test_list_attributes() -> None:
    attributes = {"a": {"bools": []}, "b": {"ints": []}, "c": {"versions": ["1.0"]}, "d": {"strings": ["x" * 65]}}
    assert _errors(_slice(devices=[{"name": "g", "attributes": attributes}])) == [
        "spec.devices[0].attributes[a].bools: Invalid value: []bool{}: must not be empty if specified",
        "spec.devices[0].attributes[b].ints: Invalid value: []int64{}: must not be empty if specified",
        'spec.devices[0].attributes[c].versions[0]: Invalid value: "1.0": must be a string compatible with '
        "semver.org spec 2.0.0",
        "spec.devices[0].attributes[d].strings[0]: Too long: may not be more than 64 bytes"]
    assert _errors(_slice(devices=[{"name": f"d{i}", "attributes": {"a": {"ints": [1]}}} for i in range(65)])) == [
        "spec.devices: Too many: 65: must have at most 64 items"]


def _policy_errors(policy: dict[str, Any], value: str = "40Gi", multiple: bool = True) -> list[str]:
    device = {"name": "g", "allowMultipleAllocations": multiple,
              "capacity": {"memory": {"value": value, "requestPolicy": policy}}}
    return _errors(_slice(devices=[device]))


def test_capacity_request_policies() -> None:
    path = "spec.devices[0].capacity[memory].requestPolicy"
    assert _policy_errors({"default": "1Gi", "validValues": ["1Gi"]}) == []
    assert _policy_errors({"default": "1Gi", "validRange": {"min": "1Gi", "max": "8Gi", "step": "1Gi"}}) == []
    assert _policy_errors({"validValues": ["1Gi"]}, multiple=False) == [
        f"{path}: Forbidden: allowMultipleAllocations must be true"]
    assert _policy_errors({"default": "1Gi", "validValues": ["1Gi"], "validRange": {"min": "1Gi"}}) == [
        f'{path}: Forbidden: exactly one policy can be specified, cannot specify "validValues" and "validRange" '
        "at the same time"]
    assert _policy_errors({"validValues": ["1Gi"]}) == [
        f"{path}.default: Required value: required when validValues is defined"]
    assert _policy_errors({"default": "3Gi", "validValues": ["2Gi", "1024Mi", "64Gi", "2048Mi"]}) == [
        f'{path}.validValues[1]: Invalid value: "1Gi": values must be sorted in ascending order',
        f'{path}.validValues[3]: Invalid value: "2Gi": values must be sorted in ascending order',
        f'{path}.validValues[2]: Invalid value: "64Gi": option is larger than capacity value: 40Gi',
        f'{path}.validValues[3]: Duplicate value: "2147483648"',
        f'{path}.validValues: Invalid value: "3Gi": default value is not valid according to the requestPolicy']
    assert _policy_errors({"default": "1", "validValues": [str(i) for i in range(11)]}) == [
        f"{path}.validValues: Too many: 11: must have at most 10 items",
        f'{path}.validValues: Invalid value: "1": default value is not valid according to the requestPolicy']
    assert _policy_errors({"default": "1Gi", "validRange": {}}) == [
        f"{path}.validRange.min: Required value: required when validRange is defined"]
    assert _policy_errors({"default": "500Mi", "validRange": {"min": "41Gi", "max": "1Gi", "step": "0"}}) == [
        f'{path}.validRange.min: Invalid value: "41Gi": min is larger than capacity value: 40Gi',
        f'{path}.validRange.default: Invalid value: "500Mi": default is less than min: 41Gi',
        f'{path}.validRange.max: Invalid value: "41Gi": min is larger than max: 1Gi',
        f'{path}.validRange.step: Invalid value: "0": must be greater than zero']
    assert _policy_errors({"default": "1500", "validRange": {"min": "1k", "max": "2k", "step": "300"}},
                          value="2k") == [
        f'{path}.validRange.step: Invalid value: "1500": value is not a multiple of a given step (300) from (1k)',
        f'{path}.validRange.step: Invalid value: "2k": value is not a multiple of a given step (300) from (1k)']
    assert _policy_errors({"default": "1Gi", "validRange": {"min": "1Gi", "step": "40Gi"}}) == [
        f'{path}.validRange.step: Invalid value: "40Gi": one step 41Gi is larger than capacity value: 40Gi']


def test_node_allocatable_resources() -> None:
    resources = {"cpu": {}, "memory": {"mapping": {"capacityKey": "mem"}},
                 "pods": {"mapping": {"capacityMultiplier": "0", "deviceMultiplier": "-1"}},
                 "hugepages-2Mi": {"overhead": {}}, "ephemeral-storage": {"overhead": {"perPod": "-1Gi"}}}
    found = _errors(_slice(devices=[{"name": "g", "capacity": {"cores": {"value": "8"}},
                                     "nodeAllocatableResources": resources}]))
    path = "spec.devices[0].nodeAllocatableResources"
    assert found == [
        f"{path}[cpu]: Required value: at least one of mapping or overhead must be set",
        f'{path}[ephemeral-storage].overhead.perPod: Invalid value: "-1Gi": must be non-negative',
        f'{path}[hugepages-2Mi].overhead: Invalid value: "": at least one of perPod or perContainer must be set',
        f'{path}[memory].mapping.capacityKey: Not found: "mem"',
        f"{path}[memory].mapping.capacityMultiplier: Required value: capacityMultiplier is required when "
        "capacityKey is set",
        f'{path}[pods].mapping.deviceMultiplier: Invalid value: "-1": must be positive',
        f"{path}[pods].mapping.capacityKey: Required value: capacityKey is required when capacityMultiplier is set"]


def test_partition_type_attribute() -> None:
    assert _errors(_slice(partitionTypeAttribute="gpu.example.com/type", devices=[{"name": "g"}])) == [
        'spec.partitionTypeAttribute: Invalid value: "gpu.example.com/type": may only be set on a slice which '
        "declares devices that consume counters"]
    consumes = [{"counterSet": "s", "counters": {"mem": {"value": "1"}}}]
    devices = [{"name": "a", "consumesCounters": consumes, "attributes": {"type": {"string": "1g"}}},
               {"name": "b", "consumesCounters": consumes},
               {"name": "c", "consumesCounters": consumes, "attributes": {"gpu.example.com/type": {"int": 1}}},
               {"name": "d"}]
    assert _errors(_slice(partitionTypeAttribute="gpu.example.com/type", devices=devices)) == [
        "spec.devices[1].attributes[gpu.example.com/type]: Required value: device consumes counters and "
        "`partitionTypeAttribute` names this attribute, so it must be set",
        'spec.devices[2].attributes[gpu.example.com/type]: Invalid value: {"int":1}: must be a string value '
        "because `partitionTypeAttribute` names this attribute"]


def test_errors_come_in_kubes_order() -> None:
    """A selector's compile error where kube reports it (before the request's count), a
    constraint without attribute before the config's errors."""
    claim = _claim(_exact(selectors=[{"cel": {"expression": "1"}}], count=-1),
                   constraints=[{}], config=[{}])
    assert _errors(claim) == [
        'spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: "1": must evaluate to bool '
        "or the unknown type, not int",
        "spec.devices.requests[0].exactly.count: Invalid value: -1: must be greater than zero",
        'spec.devices.constraints[0]: Required value: exactly one of "matchAttribute" or "distinctAttribute" is '
        "required, but multiple fields are set",
        "spec.devices.config[0].opaque: Required value"]


def test_a_slice_update_does_not_check_unchanged_capacity_and_taints_again() -> None:
    """validateDevice skips the capacity and taints an old device already had."""
    device = {"name": "g", "capacity": {"mem": {"value": "1", "requestPolicy": {}}},
              "taints": [{"key": "k", "effect": "Never"}]}
    old = _stored(_slice(devices=[device]))
    assert len(_errors(_slice(devices=[device]))) == 2
    assert _errors(_slice(devices=[device]), old=old) == []
