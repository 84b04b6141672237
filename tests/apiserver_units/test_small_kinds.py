"""MutatingAdmissionPolicy, StorageVersionMigration and PodCertificateRequest validated as
kube-apiserver 1.37 does: each rule of pkg/apis/admissionregistration/validation
(validateMutatingAdmissionPolicySpec and what it calls), pkg/apis/storagemigration/validation
and pkg/apis/certificates/validation (PodCertificateRequest), through the kinds' strategies."""

from __future__ import annotations

import base64
import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from samplecontroller.apiserver import strategies
from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.strategies import podcertificates

ADMISSION = "admissionregistration.k8s.io"


def _resource(group: str, kind: str, plural: str, namespaced: bool = False) -> Resource:
    return Resource(group=group, version="v1", kind=kind, plural=plural, namespaced=namespaced)


def _errors(group: str, kind: str, plural: str, obj: dict[str, Any], old: dict[str, Any] | None = None,
            namespaced: bool = False) -> list[str]:
    """The strategy's defaulting, then its validation (field rules and the kind's own)."""
    res = _resource(group, kind, plural, namespaced)
    strategy = strategies.for_resource(res)
    obj = copy.deepcopy(obj)
    strategy.default(res, obj, old is None, None)
    found = strategy.validate(res, obj, None) + strategy.validate_extra(obj, old)
    return [str(e) for e in found]


# ---------------------------------------------------------------- MutatingAdmissionPolicy

def _map(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                                                "operations": ["CREATE"], "resources": ["deployments"]}]},
        "mutations": [{"patchType": "ApplyConfiguration",
                       "applyConfiguration": {"expression": "Object{spec: Object.spec{replicas: 1}}"}}],
        "reinvocationPolicy": "Never"}
    base.update(spec)
    return {"apiVersion": f"{ADMISSION}/v1", "kind": "MutatingAdmissionPolicy", "metadata": {"name": "p"},
            "spec": base}


def _rule(**rule: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"],
                            "resources": ["deployments"]}
    base.update(rule)
    return {"resourceRules": [base]}


def _map_errors(obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    return _errors(ADMISSION, "MutatingAdmissionPolicy", "mutatingadmissionpolicies", obj, old)


M0 = "spec.mutations[0]"
R0 = "spec.matchConstraints.resourceRules[0]"
MAP_CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("valid, failurePolicy and the match defaults filled in", _map(), []),
    ("JSONPatch with escapeKey", _map(mutations=[{"patchType": "JSONPatch", "jsonPatch": {"expression": (
        '[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("a/b"), value: "x"}]')}}]), []),
    # validateMutatingAdmissionPolicySpec
    ("failurePolicy", _map(failurePolicy="Sometimes"),
     ['spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"']),
    ("no mutations", _map(mutations=[]),
     ["spec.mutations: Required value: mutations must contain at least one item"]),
    ("no reinvocationPolicy", _map(reinvocationPolicy=""), ["spec.reinvocationPolicy: Required value"]),
    ("reinvocationPolicy", _map(reinvocationPolicy="Always"),
     ['spec.reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"']),
    ("no matchConstraints", _map(matchConstraints=None), ["spec.matchConstraints: Required value"]),
    ("no resourceRules", _map(matchConstraints={}), ["spec.matchConstraints.resourceRules: Required value"]),
    ("DELETE cannot be mutated", _map(matchConstraints=_rule(operations=["CREATE", "DELETE"])),
     ['spec.matchConstraints.resourceRules.operations: Unsupported value: "DELETE": supported values: '
      '"*", "CONNECT", "CREATE", "UPDATE"']),
    # validateMatchResources / validateNamedRuleWithOperations / validateRule
    ("matchPolicy", _map(matchConstraints={**_rule(), "matchPolicy": "Loose"}),
     ['spec.matchConstraints.matchPolicy: Unsupported value: "Loose": supported values: "Equivalent", "Exact"']),
    ("selector operator", _map(matchConstraints={**_rule(), "namespaceSelector": {
        "matchExpressions": [{"key": "a", "operator": "Near"}]}}),
     ['spec.matchConstraints.namespaceSelector.matchExpressions[0].operator: Invalid value: "Near": '
      "not a valid selector operator"]),
    ("operation wildcard and others", _map(matchConstraints=_rule(operations=["*", "CREATE"])),
     [f'{R0}.operations: Invalid value: []admissionregistration.OperationType{{"*", "CREATE"}}: '
      "if '*' is present, must not specify other operations"]),
    ("unknown operation", _map(matchConstraints=_rule(operations=["PATCH"])),
     [f'{R0}.operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", '
      '"UPDATE"',
      'spec.matchConstraints.resourceRules.operations: Unsupported value: "PATCH": supported values: '
      '"*", "CONNECT", "CREATE", "UPDATE"']),
    ("no operations, groups, versions or resources",
     _map(matchConstraints=_rule(operations=[], apiGroups=[], apiVersions=[], resources=[])),
     [f"{R0}.operations: Required value", f"{R0}.apiGroups: Required value", f"{R0}.apiVersions: Required value",
      f"{R0}.resources: Required value"]),
    ("group wildcard and others, an empty version", _map(matchConstraints=_rule(apiGroups=["*", "apps"],
                                                                                  apiVersions=["v1", ""])),
     [f'{R0}.apiGroups: Invalid value: []string{{"*", "apps"}}: if \'*\' is present, must not specify other '
      "API groups", f"{R0}.apiVersions[1]: Required value"]),
    ("resources", _map(matchConstraints=_rule(resources=["pods/*", "pods/status", "*/*"])),
     [f'{R0}.resources[1]: Invalid value: "pods/status": if \'pods/*\' is present, must not specify pods/status',
      f'{R0}.resources: Invalid value: []string{{"pods/*", "pods/status", "*/*"}}: if \'*/*\' is present, must '
      "not specify other resources"]),
    ("scope and resourceNames", _map(matchConstraints=_rule(scope="Global", resourceNames=["a/b", "c", "c"])),
     [f"{R0}.resourceNames[0]: Invalid value: \"a/b\": may not contain '/'",
      f'{R0}.resourceNames[2]: Duplicate value: "c"',
      f'{R0}.scope: Unsupported value: "Global": supported values: "*", "Cluster", "Namespaced"']),
    # validateMutation
    ("no patchType", _map(mutations=[{"applyConfiguration": {"expression": "Object{}"}}]),
     [f"{M0}.patchType: Required value"]),
    ("patchType", _map(mutations=[{"patchType": "Merge"}]),
     [f'{M0}.patchType: Unsupported value: "Merge": supported values: "ApplyConfiguration", "JSONPatch"']),
    ("JSONPatch without jsonPatch, with applyConfiguration",
     _map(mutations=[{"patchType": "JSONPatch", "applyConfiguration": {"expression": "Object{}"}}]),
     [f"{M0}.jsonPatch: Required value: must be specified when patchType is JSONPatch",
      f'{M0}.applyConfiguration: Invalid value: "{{applyConfiguration}}": must not be specified when patchType '
      "is JSONPatch"]),
    ("ApplyConfiguration with jsonPatch",
     _map(mutations=[{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": " "},
                      "jsonPatch": {"expression": "[]"}}]),
     [f"{M0}.applyConfiguration.expression: Required value",
      f'{M0}.jsonPatch: Invalid value: "{{jsonPatch}}": must not be specified when patchType is ApplyConfiguration']),
    ("expression does not compile (positions of the original, trimmed)",
     _map(mutations=[{"patchType": "ApplyConfiguration",
                      "applyConfiguration": {"expression": " Object{spec: Object.spec{replicas: nope}} "}}]),
     [f'{M0}.applyConfiguration.expression: Invalid value: "Object{{spec: Object.spec{{replicas: nope}}}}": '
      "compilation failed: ERROR: <input>:1:36: undeclared reference to 'nope' (in container '')\n"
      " | Object{spec: Object.spec{replicas: nope}}\n"
      " | ...................................^"]),
    ("syntax error inside a struct literal",
     _map(mutations=[{"patchType": "JSONPatch", "jsonPatch": {"expression": '[JSONPatch{op: "add",}'}}]),
     [f'{M0}.jsonPatch.expression: Invalid value: "[JSONPatch{{op: \\"add\\",}}": compilation failed: '
      "ERROR: <input>:1:23: Syntax error: mismatched input '<EOF>' expecting {']', ','}\n"
      ' | [JSONPatch{op: "add",}\n'
      " | ......................^"]),
    ("params without a paramKind", _map(mutations=[{"patchType": "ApplyConfiguration", "applyConfiguration": {
        "expression": "Object{metadata: Object.metadata{labels: params.labels}}"}}]),
     [f'{M0}.applyConfiguration.expression: Invalid value: "Object{{metadata: Object.metadata{{labels: '
      'params.labels}}": compilation failed: ERROR: <input>:1:48: undeclared reference to \'params.labels\' '
      "(in container '')\n | Object{metadata: Object.metadata{labels: params.labels}}\n"
      " | ...............................................^"]),
    ("params with a paramKind", _map(paramKind={"apiVersion": "v1", "kind": "ConfigMap"}, mutations=[{
        "patchType": "ApplyConfiguration",
        "applyConfiguration": {"expression": "Object{metadata: Object.metadata{labels: params.data}}"}}]), []),
    # validateMatchConditions / validateVariable
    ("matchConditions", _map(matchConditions=[{"name": "a", "expression": "'x'"}, {"name": "a", "expression": ""},
                                              {"name": "b c", "expression": "true"}]),
     ['spec.matchConditions[0].expression: Invalid value: "\'x\'": must evaluate to bool',
      "spec.matchConditions[1].expression: Required value",
      'spec.matchConditions[1].name: Duplicate value: "a"',
      'spec.matchConditions[2].name: Invalid value: "b c": name part must consist of alphanumeric characters, '
      "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
      "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]),
    ("too many matchConditions", _map(matchConditions=[{"name": f"c{i}", "expression": "true"} for i in range(65)]),
     ["spec.matchConditions: Too many: 65: must have at most 64 items"]),
    ("variables", _map(variables=[{"name": "in", "expression": "1"}, {"name": "", "expression": "x +"}]),
     ['spec.variables[0].name: Invalid value: "in": name is not a valid CEL identifier',
      "spec.variables[1].name: Required value: name is not specified",
      'spec.variables[1].expression: Invalid value: "x +": compilation failed: ERROR: <input>:1:4: Syntax error: '
      "mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, "
      "NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | x +\n | ...^"]),
]


@pytest.mark.parametrize(("obj", "want"), [pytest.param(o, w, id=i) for i, o, w in MAP_CASES])
def test_mutating_admission_policy(obj: dict[str, Any], want: list[str]) -> None:
    assert _map_errors(obj) == want


def test_mutating_admission_policy_update_keeps_unchanged_match_conditions() -> None:
    """ignoreMutatingAdmissionPolicyMatchConditions: stored conditions are not compiled again
    while they and the paramKind stay the same."""
    old = _map(matchConditions=[{"name": "a", "expression": "1"}])
    assert _map_errors(old, old=old) == []
    changed = _map(matchConditions=[{"name": "a", "expression": "2"}])
    assert _map_errors(changed, old=old) == [
        'spec.matchConditions[0].expression: Invalid value: "2": must evaluate to bool']


# ---------------------------------------------------------------- StorageVersionMigration

MIGRATION = "storagemigration.k8s.io"


def _svm(group: str = "apps", resource: str = "deployments", **status: Any) -> dict[str, Any]:
    return {"apiVersion": f"{MIGRATION}/v1", "kind": "StorageVersionMigration", "metadata": {"name": "m"},
            "spec": {"resource": {"group": group, "resource": resource}}, "status": status}


def _svm_errors(obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    return _errors(MIGRATION, "StorageVersionMigration", "storageversionmigrations", obj, old)


def _svm_status_errors(obj: dict[str, Any], old: dict[str, Any]) -> list[str]:
    res = _resource(MIGRATION, "StorageVersionMigration", "storageversionmigrations")
    return [str(e) for e in strategies.for_resource(res).validate_status(res, obj, old, None)]


def _cond(ctype: str, status: str = "True", **more: Any) -> dict[str, Any]:
    return {"type": ctype, "status": status, "lastTransitionTime": "2026-11-29T06:00:00Z", "reason": "Because",
            **more}


def _go_cond(ctype: str, status: str = "True") -> str:
    return (f'v1.Condition{{Type:"{ctype}", Status:"{status}", ObservedGeneration:0, LastTransitionTime:v1.Time{{'
            'Time:time.Date(2026, time.November, 29, 6, 0, 0, 0, time.Local)}, Reason:"Because", Message:""}')


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param(_svm(), [], id="valid"),
    pytest.param(_svm(group=""), [], id="the core group"),
    pytest.param(_svm(resource=""), ["spec.resource.resource: Required value: resource is required to be set"],
                 id="no resource"),
    pytest.param(_svm(group="Apps_", resource="Deploy.ments"), [
        'spec.resource.resource: Invalid value: "Deploy.ments": a DNS-1035 label must consist of lower case '
        "alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric "
        "character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        'spec.resource.group: Invalid value: "Apps_": a lowercase RFC 1123 subdomain must consist of lower case '
        "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
        "[a-z0-9])?)*')"], id="resource and group format"),
])
def test_storage_version_migration(obj: dict[str, Any], want: list[str]) -> None:
    assert _svm_errors(obj) == want


def test_storage_version_migration_spec_is_immutable() -> None:
    assert _svm_errors(_svm(resource="replicasets"), old=_svm()) == [
        'spec: Invalid value: storagemigration.StorageVersionMigrationSpec{Resource:v1.GroupResource{Group:"apps", '
        'Resource:"replicasets"}}: field is immutable']


@pytest.mark.parametrize(("status", "old_status", "want"), [
    pytest.param({"resourceVersion": "12", "conditions": [_cond("Running")]}, {}, [], id="valid"),
    pytest.param({"conditions": [_cond("Running")]}, {}, [
        'status.resourceVersion: Invalid value: "": resource version is not well formed: '], id="no resourceVersion"),
    pytest.param({"resourceVersion": "012"}, {}, [
        'status.resourceVersion: Invalid value: "012": resource version is not well formed: 012'],
        id="leading zero"),
    pytest.param({"resourceVersion": "13"}, {"resourceVersion": "12"}, [
        'status.resourceVersion: Invalid value: "13": field is immutable'], id="resourceVersion changed"),
    pytest.param({"resourceVersion": "12", "conditions": [
        _cond("Running"), _cond("Running", "Maybe", reason="9x", observedGeneration=-1, lastTransitionTime=None)]}, {}, [
        'status.conditions[1].type: Duplicate value: "Running"',
        'status.conditions[1].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"',
        "status.conditions[1].observedGeneration: Invalid value: -1: must be greater than or equal to zero",
        "status.conditions[1].lastTransitionTime: Required value: must be set",
        'status.conditions[1].reason: Invalid value: "9x": a condition reason must start with alphabetic character, '
        "optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric "
        "character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or "
        "'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')"],
        id="condition fields"),
    pytest.param({"resourceVersion": "12", "conditions": [_cond("Succeeded"), _cond("Running")]}, {}, [
        f"status.conditions: Invalid value: []v1.Condition{{{_go_cond('Succeeded')}, {_go_cond('Running')}}}: "
        "Running condition cannot be true when success condition is true"], id="running and succeeded"),
    pytest.param({"resourceVersion": "12", "conditions": [_cond("Failed", "False")]},
                 {"conditions": [_cond("Failed")]}, [
        f"status.conditions: Invalid value: []v1.Condition{{{_go_cond('Failed', 'False')}}}: "
        "Failed condition cannot be set to false once it is true"], id="failed turned back"),
])
def test_storage_version_migration_status(status: dict[str, Any], old_status: dict[str, Any],
                                          want: list[str]) -> None:
    assert _svm_status_errors(_svm(**status), _svm(**old_status)) == want


# ---------------------------------------------------------------- PodCertificateRequest

CERTIFICATES = "certificates.k8s.io"
_ED_KEY = ed25519.Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
_EC_KEY = ec.derive_private_key(7, ec.SECP256R1())


def stub_request(key: Any) -> str:
    """A kubelet-like empty PKCS#10 request signed by ``key``, base64 of its DER."""
    builder = x509.CertificateSigningRequestBuilder().subject_name(x509.Name([]))
    algorithm = None if isinstance(key, ed25519.Ed25519PrivateKey) else hashes.SHA256()
    csr = builder.sign(key, algorithm)
    return base64.b64encode(csr.public_bytes(serialization.Encoding.DER)).decode()


def _pcr(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"signerName": "example.com/signer", "podName": "p", "podUID": "pu",
                            "serviceAccountName": "default", "serviceAccountUID": "su", "nodeName": "n",
                            "nodeUID": "nu", "stubPKCS10Request": stub_request(_ED_KEY)}
    base.update(spec)
    return {"apiVersion": f"{CERTIFICATES}/v1", "kind": "PodCertificateRequest",
            "metadata": {"name": "r", "namespace": "default"}, "spec": base}


def _pcr_errors(obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    return _errors(CERTIFICATES, "PodCertificateRequest", "podcertificaterequests", obj, old, namespaced=True)


_SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
              "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
              "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param(_pcr(), [], id="valid, maxExpirationSeconds defaulted"),
    pytest.param(_pcr(stubPKCS10Request=stub_request(_EC_KEY), maxExpirationSeconds=3600), [], id="valid ECDSA"),
    pytest.param(_pcr(signerName="example/x/y"), [
        "spec.signerName: Invalid value: \"example/x/y\": must be a fully qualified domain and path of the form "
        "'example.com/signer-name'"], id="signerName form"),
    pytest.param(_pcr(signerName="example/Signer"), [
        'spec.signerName: Invalid value: "example": should be a domain with at least two segments separated by dots',
        f'spec.signerName: Invalid value: "Signer": validating label "Signer": {_SUBDOMAIN}'],
        id="signerName domain and path"),
    pytest.param(_pcr(podName="P", podUID="", nodeUID="x" * 129), [
        f'spec.podName: Invalid value: "P": {_SUBDOMAIN}', 'spec.podUID: Invalid value: "": must not be empty',
        "spec.nodeUID: Too long: may not be more than 128 bytes"], id="names and UIDs"),
    pytest.param(_pcr(signerName="kubernetes.io/kube-apiserver-client-pod", maxExpirationSeconds=86401), [
        "spec.maxExpirationSeconds: Invalid value: 86401: must be in the range [3600, 86400]"],
        id="kubernetes.io signer at most a day"),
    pytest.param(_pcr(maxExpirationSeconds=3599), [
        "spec.maxExpirationSeconds: Invalid value: 3599: must be in the range [3600, 7862400]"],
        id="at least an hour"),
    pytest.param(_pcr(stubPKCS10Request=base64.b64encode(b"junk").decode()), [
        "spec.stubPKCS10Request: Invalid value: must be a DER-serialized PKCS#10 certificate request"],
        id="stub not a request"),
    pytest.param(_pcr(stubPKCS10Request=stub_request(ec.derive_private_key(7, ec.SECP224R1()))), [
        'spec.stubPKCS10Request: Invalid value: "curve secp224r1": elliptic public keys must use curve P256 or '
        "P384"], id="stub key curve"),
])
def test_pod_certificate_request(obj: dict[str, Any], want: list[str]) -> None:
    assert _pcr_errors(obj) == want


def test_pod_certificate_request_stub_signature_and_immutable_spec() -> None:
    der = bytearray(base64.b64decode(stub_request(_ED_KEY)))
    der[-1] ^= 1  # the signature's last byte
    assert _pcr_errors(_pcr(stubPKCS10Request=base64.b64encode(bytes(der)).decode())) == [
        "spec.stubPKCS10Request: Invalid value: could not verify the certificate request's signature"]
    old = _pcr(maxExpirationSeconds=86400)
    assert _pcr_errors(_pcr(podName="q", maxExpirationSeconds=86400), old=old) == [
        "spec: Invalid value: certificates.PodCertificateRequestSpec{...}: field is immutable"]


def _issued(chain: str, not_before: datetime, not_after: datetime, refresh: datetime) -> dict[str, Any]:
    def stamp(t: datetime) -> str:
        return t.strftime("%Y-%m-%dT%H:%M:%SZ")
    obj = _pcr(stubPKCS10Request=stub_request(_EC_KEY), maxExpirationSeconds=86400)
    obj["status"] = {"conditions": [_cond("Issued")], "certificateChain": chain, "notBefore": stamp(not_before),
                     "notAfter": stamp(not_after), "beginRefreshAt": stamp(refresh)}
    return obj


def _certificate(key: Any, not_before: datetime, not_after: datetime) -> str:
    name = x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, "pod")])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(not_before).not_valid_after(not_after).sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def test_pod_certificate_request_status_transitions() -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    before, after = now - timedelta(minutes=1), now + timedelta(hours=2)
    pending = _pcr(stubPKCS10Request=stub_request(_EC_KEY), maxExpirationSeconds=86400)
    chain = _certificate(_EC_KEY, before, after)
    ok = _issued(chain, before, after, now + timedelta(hours=1))
    other = _certificate(_OTHER_KEY, before, after)  # (ECDSA signatures differ each time: made once)
    assert podcertificates.status_errors(ok, pending, now) == []
    cases: list[tuple[dict[str, Any], dict[str, Any], list[str]]] = [
        ({**pending, "status": {"conditions": [_cond("Approved"), _cond("Denied", "False")]}}, pending, [
            'status.conditions.[0].type: Unsupported value: "Approved": supported values: "Issued", "Denied", '
            '"Failed"',
            'status.conditions.[1].status: Unsupported value: "False": supported values: "True"']),
        ({**pending, "status": {"conditions": [_cond("Denied"), _cond("Failed")]}}, pending, [
            'status.conditions.[1].type: Invalid value: "Failed": There may be at most one condition with type '
            '"Issued", "Denied", or "Failed"']),
        ({**pending, "status": {"conditions": [_cond("Denied")], "certificateChain": chain}}, pending, [
            "status: Invalid value: non-condition status fields must be empty when denying or failing the "
            "PodCertificateRequest"]),
        ({**pending, "status": {"certificateChain": chain}}, pending, [
            'status: Invalid value: status is immutable unless transitioning to "Issued", "Denied", or "Failed"']),
        ({**pending, "status": {"conditions": [_cond("Failed")]}}, ok, [
            "status: Invalid value: immutable after PodCertificateRequest is issued, denied, or failed"]),
        (_issued(other, before, after, now + timedelta(hours=1)), pending, [
            f'status.certificateChain: Invalid value: "{_json(other)}": leaf '
            "certificate was not issued to the requested public key"]),
        (_issued(chain, before + timedelta(seconds=1), after, now + timedelta(hours=1)), pending, [
            f"status.notBefore: Invalid value: {_go(before + timedelta(seconds=1))}: must be set to the NotBefore "
            "time encoded in the leaf certificate"]),
        (_issued(chain, before, after, now + timedelta(minutes=5)), pending, [
            f"status.beginRefreshAt: Invalid value: {_go(now + timedelta(minutes=5))}: must be at least 10 minutes "
            "after status.notBefore"]),
        (_issued(_certificate(_EC_KEY, before, before + timedelta(minutes=30)), before,
                 before + timedelta(minutes=30), now), pending, [
            "status.certificateChain: Invalid value: 30m0s: leaf certificate lifetime must be >= 1 hour"]),
        ({**_issued(chain, before, after, now), "status": {"conditions": [_cond("Issued")]}}, pending, [
            'status.certificateChain: Invalid value: "": issued certificate chain must contain at least one '
            "certificate"]),
    ]
    for obj, old, want in cases:
        assert [str(e) for e in podcertificates.status_errors(obj, old, now)] == want, obj["status"]


_OTHER_KEY = ec.derive_private_key(11, ec.SECP256R1())


def _json(text: str) -> str:
    return text.replace("\n", "\\n")


def _go(when: datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M:%S +0000 UTC")


@pytest.mark.parametrize(("spec", "want"), [
    pytest.param({"paramKind": {"apiVersion": "a/b/c", "kind": "Config_Map"}}, [
        'spec.paramKind.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
        'spec.paramKind.kind: Invalid value: "Config_Map": may have mixed case, but should otherwise match: a '
        "DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
        "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
        "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"], id="paramKind (validateParamKind)"),
    pytest.param({"paramKind": {"apiVersion": "example.com/", "kind": "Thing"}}, [
        'spec.paramKind.apiVersion: Invalid value: "example.com/": version must be specified'],
        id="paramKind without a version"),
    pytest.param({"mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "true"}}]},
                 [f'{M0}.applyConfiguration.expression: Invalid value: "true": must evaluate to Object'],
                 id="applyConfiguration result type"),
    pytest.param({"mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": "JSONPatch{op: 'add'}"}}]},
                 [f'{M0}.jsonPatch.expression: Invalid value: "JSONPatch{{op: \'add\'}}": must evaluate to '
                  "list(JSONPatch)"], id="jsonPatch result type"),
])
def test_mutating_admission_policy_param_kind_and_result_types(spec: dict[str, Any], want: list[str]) -> None:
    assert _map_errors(_map(**spec)) == want
