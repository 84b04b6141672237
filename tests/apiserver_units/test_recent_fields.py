"""Validation of the fields Kubernetes 1.33-1.37 added to the served kinds (kube-apiserver 1.37's
rules and field paths), one table row per rule, and the feature gates that drop them under an
emulated version (``recent.drop_disabled``)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from samplecontroller.apiserver.strategies.validation import validate_builtin


def _pod(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"containers": [{"name": "app", "image": "busybox"}]}
    base.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": base}


def _container(**fields: Any) -> dict[str, Any]:
    return {"name": "app", "image": "busybox", **fields}


def _rules(*rules: Any, policy: str | None = "Never") -> dict[str, Any]:
    c = _container(restartPolicyRules=list(rules))
    if policy is not None:
        c["restartPolicy"] = policy
    return _pod(containers=[c])


def _env(value_from: dict[str, Any], volumes: Any = None) -> dict[str, Any]:
    pod = _pod(containers=[_container(env=[{"name": "X", "valueFrom": value_from}])])
    pod["spec"]["volumes"] = [{"name": "cfg", "emptyDir": {}}, {"name": "sec", "secret": {"secretName": "s"}}] \
        if volumes is None else volumes
    return pod


def _file(**ref: Any) -> dict[str, Any]:
    return {"fileKeyRef": {"volumeName": "cfg", "path": "env/app.env", "key": "TOKEN", **ref}}


def _cert(**fields: Any) -> dict[str, Any]:
    """A projected volume with one podCertificate source."""
    return {"name": "cert", "projected": {"sources": [{"podCertificate": {
        "signerName": "example.com/signer", "keyType": "RSA3072", "credentialBundlePath": "bundle.pem", **fields}}]}}


def _hpa(**behavior: Any) -> dict[str, Any]:
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 3,
                     "behavior": behavior}}


def _slice(*nodes: str) -> dict[str, Any]:
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": {"name": "s"},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.1"], "hints": {"forNodes": [{"name": n} for n in nodes]}}]}


def _csi(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "d.example.com"},
            "spec": spec}


def _job(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"template": {"spec": {"restartPolicy": "Never",
                                                  "containers": [{"name": "app", "image": "busybox"}]}}}
    base.update(spec)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": base}


def _indexed(**spec: Any) -> dict[str, Any]:
    return _job(completionMode="Indexed", completions=5, parallelism=5, **spec)


P0 = "spec.volumes[0].projected.sources[0].podCertificate"
SUBDOMAIN = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters"
C0 = "spec.containers[0]"

# (case, object, the errors' expected text (each a prefix of one error, in order))
CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    # Pod spec.hostnameOverride (1.34)
    ("hostnameOverride ok", _pod(hostnameOverride="app.example"), []),
    ("hostnameOverride not a subdomain", _pod(hostnameOverride="App_1"),
     [f'spec.hostnameOverride: Invalid value: "App_1": {SUBDOMAIN}']),
    ("hostnameOverride over 64", _pod(hostnameOverride="a" * 65),
     ["spec.hostnameOverride: Too long: may not be more than 64 bytes"]),
    ("hostnameOverride with setHostnameAsFQDN", _pod(hostnameOverride="a", setHostnameAsFQDN=True),
     ["spec.hostnameOverride: Forbidden: may not be specified when setHostnameAsFQDN is true"]),
    ("hostnameOverride with hostNetwork", _pod(hostnameOverride="a", hostNetwork=True),
     ["spec.hostnameOverride: Forbidden: may not be specified when hostNetwork is true"]),
    ("hostnameOverride: every error, kube's order", _pod(hostnameOverride="A" * 65, setHostnameAsFQDN=True,
                                                         hostNetwork=True),
     ["spec.hostnameOverride: Forbidden: may not be specified when setHostnameAsFQDN is true",
      "spec.hostnameOverride: Forbidden: may not be specified when hostNetwork is true",
      "spec.hostnameOverride: Too long: may not be more than 64 bytes",
      f'spec.hostnameOverride: Invalid value: "{"A" * 65}": {SUBDOMAIN}']),
    # containers' restartPolicyRules (1.34)
    ("restart rule ok", _rules({"action": "Restart", "exitCodes": {"operator": "In", "values": [42]}}), []),
    ("restart rule without the container's restartPolicy",
     _rules({"action": "Restart", "exitCodes": {"operator": "In", "values": [42]}}, policy=None),
     [f"{C0}.restartPolicy: Required value: must specify restartPolicy when restart rules are used"]),
    ("restart rule action", _rules({"action": "Kill", "exitCodes": {"operator": "In", "values": [1]}}),
     [f'{C0}.restartPolicyRules[0].action: Unsupported value: "Kill": supported values: "Restart", '
      '"RestartAllContainers"']),
    # the RestartAllContainers action (RestartAllContainersOnContainerExits, beta 1.36)
    ("restart rule RestartAllContainers",
     _rules({"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}), []),
    ("restart rule without exitCodes", _rules({"action": "Restart"}),
     [f"{C0}.restartPolicyRules[0].exitCodes: Required value: must be specified"]),
    ("restart rule without action or operator", _rules({"exitCodes": {"values": [1]}}),
     [f'{C0}.restartPolicyRules[0].action: Unsupported value: "": supported values: "Restart", '
      '"RestartAllContainers"',
      f'{C0}.restartPolicyRules[0].exitCodes.operator: Unsupported value: "": supported values: "In", "NotIn"']),
    ("restart rule over 255 exit codes",
     _rules({"action": "Restart", "exitCodes": {"operator": "In", "values": list(range(256))}}),
     [f"{C0}.restartPolicyRules[0].exitCodes.values: Too many: 256: must have at most 255 items"]),
    ("restart rule operator", _rules({"action": "Restart", "exitCodes": {"operator": "Is", "values": [1]}}),
     [f'{C0}.restartPolicyRules[0].exitCodes.operator: Unsupported value: "Is": supported values: "In", "NotIn"']),
    ("restart rule repeated exit code (kube does not refuse it)",
     _rules({"action": "Restart", "exitCodes": {"operator": "NotIn", "values": [1, 1]}}), []),
    ("restart rules over 20",
     _rules(*[{"action": "Restart", "exitCodes": {"operator": "In", "values": [i]}} for i in range(21)]),
     [f"{C0}.restartPolicyRules: Too many: 21: must have at most 20 items"]),
    ("container restartPolicy value", _pod(containers=[_container(restartPolicy="Sometimes")]),
     [f'{C0}.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"']),
    ("ephemeral container restart rules",
     _pod(ephemeralContainers=[{"name": "dbg", "image": "busybox", "restartPolicy": "Never",
                                "restartPolicyRules": []}]),
     ["spec.ephemeralContainers[0].restartPolicy: Forbidden: cannot be set for an Ephemeral Container",
      "spec.ephemeralContainers[0].restartPolicyRules: Forbidden: cannot be set for an Ephemeral Container"]),
    ("init container rules without restartPolicy",
     _pod(initContainers=[_container(name="init", restartPolicyRules=[
         {"action": "Restart", "exitCodes": {"operator": "In", "values": [1]}}])]),
     ["spec.initContainers[0].restartPolicy: Required value: must specify restartPolicy when restart rules are "
      "used"]),
    ("init container rules", _pod(initContainers=[_container(name="init", restartPolicy="Never", restartPolicyRules=[
        {"action": "Restart", "exitCodes": {"operator": "In", "values": [1]}}])]), []),
    ("sidecar rules (allowed with RestartAllContainersOnContainerExits)",
     _pod(initContainers=[_container(name="side", restartPolicy="Always", restartPolicyRules=[
         {"action": "Kill", "exitCodes": {"operator": "In", "values": [1]}}])]),
     ['spec.initContainers[0].restartPolicyRules[0].action: Unsupported value: "Kill"']),
    # lifecycle.stopSignal (1.33)
    ("stopSignal ok", _pod(os={"name": "linux"}, containers=[_container(lifecycle={"stopSignal": "SIGUSR1"})]), []),
    ("stopSignal without os", _pod(containers=[_container(lifecycle={"stopSignal": "SIGUSR1"})]),
     [f"{C0}.lifecycle.stopSignal: Forbidden: may not be set for containers with empty `spec.os.name`"]),
    ("stopSignal on windows", _pod(os={"name": "windows"}, containers=[_container(lifecycle={"stopSignal": "SIGUSR1"})]),
     [f'{C0}.lifecycle.stopSignal: Unsupported value: "SIGUSR1": supported values: "SIGKILL", "SIGTERM"']),
    ("stopSignal unknown on linux", _pod(os={"name": "linux"}, containers=[_container(lifecycle={"stopSignal": "SIGFOO"})]),
     [f'{C0}.lifecycle.stopSignal: Unsupported value: "SIGFOO": supported values: "SIGABRT"']),
    ("stopSignal of a sidecar", _pod(os={"name": "windows"}, initContainers=[
        _container(name="side", restartPolicy="Always", lifecycle={"stopSignal": "SIGUSR1"})]),
     ['spec.initContainers[0].lifecycle.stopSignal: Unsupported value: "SIGUSR1": supported values: "SIGKILL", '
      '"SIGTERM"']),
    ("stopSignal of an init container", _pod(os={"name": "linux"}, initContainers=[
        _container(name="init", lifecycle={"stopSignal": "SIGFOO"})]),
     ["spec.initContainers[0].lifecycle: Forbidden: may not be set for init containers without "
      "restartPolicy=Always"]),
    ("stopSignal of an ephemeral container", _pod(ephemeralContainers=[
        {"name": "dbg", "image": "busybox", "lifecycle": {"stopSignal": "SIGUSR1"}, "restartPolicy": "Never",
         "readinessProbe": {"exec": {"command": ["true"]}}}]),
     ["spec.ephemeralContainers[0].restartPolicy: Forbidden: cannot be set for an Ephemeral Container",
      "spec.ephemeralContainers[0].readinessProbe: Forbidden: cannot be set for an Ephemeral Container",
      "spec.ephemeralContainers[0].lifecycle: Forbidden: cannot be set for an Ephemeral Container"]),
    ("probes of an init container", _pod(initContainers=[
        _container(name="init", startupProbe={"exec": {"command": ["true"]}})]),
     ["spec.initContainers[0].startupProbe: Forbidden: may not be set for init containers without "
      "restartPolicy=Always"]),
    # env valueFrom.fileKeyRef (1.34)
    ("fileKeyRef ok", _env(_file()), []),
    ("fileKeyRef volume not an emptyDir", _env(_file(volumeName="sec")),
     [f'{C0}.env[0].valueFrom.fileKeyRef.volumeName: Invalid value: "sec": referenced volume must be of type '
      'emptyDir']),
    ("fileKeyRef volume not in the pod", _env(_file(volumeName="nope")),
     [f'{C0}.env[0].valueFrom.fileKeyRef.volumeName: Not found: "nope"']),
    ("fileKeyRef volumeName not a label", _env(_file(volumeName="Cfg_1")),
     [f'{C0}.env[0].valueFrom.fileKeyRef.volumeName: Invalid value: "Cfg_1": a lowercase RFC 1123 label',
      f'{C0}.env[0].valueFrom.fileKeyRef.volumeName: Not found: "Cfg_1"']),
    ("fileKeyRef absolute path (kube checks only '..')", _env(_file(path="/etc/app.env")), []),
    ("fileKeyRef backslashes are no separators (a Linux kube-apiserver)", _env(_file(path="..\\app.env")), []),
    ("fileKeyRef path with ..", _env(_file(path="../app.env")),
     [f"{C0}.env[0].valueFrom.fileKeyRef.path: Invalid value: \"../app.env\": must not contain '..'"]),
    ("fileKeyRef key with =", _env(_file(key="A=B")),
     [f"{C0}.env[0].valueFrom.fileKeyRef.key: Invalid value: \"A=B\": a valid environment variable name must "
      "consist only of printable ASCII characters other than '='"]),
    ("fileKeyRef key over 128 (kube sets no length)", _env(_file(key="K" * 129)), []),
    ("fileKeyRef missing fields", _env({"fileKeyRef": {}}),
     [f"{C0}.env[0].valueFrom.fileKeyRef.key: Required value",
      f"{C0}.env[0].valueFrom.fileKeyRef.volumeName: Required value",
      f"{C0}.env[0].valueFrom.fileKeyRef.path: Required value",
      f'{C0}.env[0].valueFrom.fileKeyRef.volumeName: Not found: ""']),
    ("valueFrom beside a value", _pod(volumes=[{"name": "cfg", "emptyDir": {}}], containers=[_container(
        env=[{"name": "X", "value": "v", "valueFrom": _file()}])]),
     [f'{C0}.env[0].valueFrom: Invalid value: "": may not be specified when `value` is not empty']),
    ("valueFrom without a source", _env({}),
     [f'{C0}.env[0].valueFrom: Invalid value: "": must specify one of: `fieldRef`, `resourceFieldRef`, '
      "`configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"]),
    ("fileKeyRef beside secretKeyRef", _env({**_file(), "secretKeyRef": {"name": "s", "key": "k"}}),
     [f'{C0}.env[0].valueFrom: Invalid value: "": may not have more than one field specified at a time']),
    # a projected podCertificate (PodCertificateRequest, GA 1.37): the key types its API lists
    ("podCertificate ok", _pod(volumes=[_cert(keyType="ED25519")]), []),
    ("podCertificate expiry bounds ok", _pod(volumes=[_cert(maxExpirationSeconds=3600), _cert(maxExpirationSeconds=7862400)]),
     []),
    ("podCertificate expiry too short", _pod(volumes=[_cert(maxExpirationSeconds=3599)]),
     ["spec.volumes[0].projected.sources[0].podCertificate.maxExpirationSeconds: Invalid value: 3599: "
      "if provided, maxExpirationSeconds must be >= 3600"]),
    ("podCertificate expiry too long", _pod(volumes=[_cert(maxExpirationSeconds=7862401)]),
     ["spec.volumes[0].projected.sources[0].podCertificate.maxExpirationSeconds: Invalid value: 7862401: "
      "if provided, maxExpirationSeconds must be <= 7862400"]),
    ("podCertificate kubernetes.io signer expiry", _pod(volumes=[_cert(signerName="kubernetes.io/x",
                                                                       maxExpirationSeconds=86401)]),
     [f"{P0}.maxExpirationSeconds: Invalid value: 86401: if provided, maxExpirationSeconds must be <= 86400"]),
    ("podCertificate signerName", _pod(volumes=[_cert(signerName="signer")]),
     [f"{P0}.signerName: Invalid value: \"signer\": must be a fully qualified domain and path of the form "
      "'example.com/signer-name'"]),
    ("podCertificate without signerName and keyType", _pod(volumes=[_cert(signerName="", keyType="")]),
     [f"{P0}.signerName: Required value", f'{P0}.keyType: Unsupported value: ""']),
    ("podCertificate without a path", _pod(volumes=[_cert(credentialBundlePath="")]),
     [f"{P0}: Required value: specify at least one of credentialBundlePath, keyPath, and certificateChainPath"]),
    ("podCertificate paths", _pod(volumes=[_cert(credentialBundlePath="/b.pem", keyPath="..k",
                                                 certificateChainPath="a/../c")]),
     [f'{P0}.credentialBundlePath: Invalid value: "/b.pem": must be a relative path',
      f"{P0}.keyPath: Invalid value: \"..k\": must not start with '..'",
      f"{P0}.certificateChainPath: Invalid value: \"a/../c\": must not contain '..'"]),
    ("podCertificate duplicate paths", _pod(volumes=[{"name": "cert", "projected": {"sources": [
        {"secret": {"name": "s", "items": [{"key": "k", "path": "tls.key"}]}},
        {"podCertificate": {"signerName": "example.com/signer", "keyType": "ED25519", "keyPath": "tls.key",
                            "certificateChainPath": "tls.crt", "credentialBundlePath": "tls.crt"}}]}}]),
     ['spec.volumes[0].projected: Invalid value: "tls.key": conflicting duplicate paths',
      'spec.volumes[0].projected: Invalid value: "tls.crt": conflicting duplicate paths']),
    ("podCertificate beside another volume type in one source", _pod(volumes=[{"name": "cert", "projected": {
        "sources": [{"secret": {"name": "s"}, "podCertificate": {"signerName": "example.com/signer",
                                                                 "keyType": "ED25519", "keyPath": "k"}}]}}]),
     ["spec.volumes[0].projected.sources[0]: Forbidden: may not specify more than 1 volume type per source"]),
    ("podCertificate userAnnotations", _pod(volumes=[_cert(userAnnotations={"Example.com/Team": "a", "team": "b"})]),
     [f'{P0}.userAnnotations: Invalid value: "team": must be a domain-prefixed key (such as "acme.io/foo")']),
    ("podCertificate keyType", _pod(volumes=[_cert(keyType="DSA1024")]),
     ['spec.volumes[0].projected.sources[0].podCertificate.keyType: Unsupported value: "DSA1024": supported '
      'values: "RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"']),
    # the rules apply to every pod template
    ("Deployment template", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                             "spec": {"selector": {"matchLabels": {"a": "b"}},
                                      "template": {"metadata": {"labels": {"a": "b"}},
                                                   "spec": {"hostnameOverride": "Bad_Name",
                                                            "containers": [_container()]}}}},
     ['spec.template.spec.hostnameOverride: Invalid value: "Bad_Name"']),
    # (HPA behavior.*.tolerance, 1.33: test_hpa_validation)
    # EndpointSlice hints.forNodes (1.33)
    ("forNodes ok", _slice("node-a", "node-b"), []),
    ("forNodes over 8", _slice(*[f"n{i}" for i in range(9)]),
     ["endpoints[0].hints.forNodes: Too many: 9: must have at most 8 items"]),
    ("forNodes bad and duplicate names", _slice("Node_A", "b", "b"),
     ['endpoints[0].hints.forNodes[0].name: Invalid value: "Node_A"',
      'endpoints[0].hints.forNodes[2].name: Duplicate value: "b"']),
    # CSIDriver (1.33, 1.35)
    ("CSIDriver period ok", _csi(nodeAllocatableUpdatePeriodSeconds=10), []),
    ("CSIDriver period under 10", _csi(nodeAllocatableUpdatePeriodSeconds=5),
     ["spec.nodeAllocatableUpdatePeriodSeconds: Invalid value: 5: must be greater than or equal to 10 seconds"]),
    ("CSIDriver token secrets without tokenRequests", _csi(serviceAccountTokenInSecrets=True),
     ["spec.serviceAccountTokenInSecrets: Invalid value: true: serviceAccountTokenInSecrets is set but no "
      "tokenRequests are specified"]),
    ("CSIDriver token secrets ok", _csi(serviceAccountTokenInSecrets=True, tokenRequests=[{"audience": "a"}]), []),
    # Job successPolicy (GA 1.33), managedBy (GA 1.35), podReplacementPolicy (GA 1.34)
    ("successPolicy ok", _indexed(successPolicy={"rules": [{"succeededIndexes": "0,2-3", "succeededCount": 2}]}), []),
    ("successPolicy on a NonIndexed Job", _job(successPolicy={"rules": [{"succeededCount": 1}]}),
     ['spec.successPolicy: Invalid value: "": requires indexed completion mode']),
    ("successPolicy without rules", _indexed(successPolicy={"rules": []}),
     ["spec.successPolicy.rules: Required value"]),
    ("successPolicy empty rule", _indexed(successPolicy={"rules": [{}]}),
     ["spec.successPolicy.rules[0]: Required value: at least one of succeededCount or succeededIndexes"]),
    ("successPolicy count over completions", _indexed(successPolicy={"rules": [{"succeededCount": 6}]}),
     ["spec.successPolicy.rules[0].succeededCount: Invalid value: 6: must be less than or equal to 5"]),
    ("successPolicy index beyond completions", _indexed(successPolicy={"rules": [{"succeededIndexes": "1-7"}]}),
     ['spec.successPolicy.rules[0].succeededIndexes: Invalid value: "1-7": error parsing succeededIndexes']),
    ("managedBy ok", _job(managedBy="kueue.x-k8s.io/multikueue"), []),
    ("managedBy not domain-prefixed", _job(managedBy="kueue"),
     ['spec.managedBy: Invalid value: "kueue": must be a domain-prefixed path (such as "acme.io/foo")']),
    ("managedBy over 63", _job(managedBy="example.com/" + "a" * 60),
     ["spec.managedBy: Too long: may not be more than 63 bytes"]),
    ("podReplacementPolicy value", _job(podReplacementPolicy="Sometimes"),
     ['spec.podReplacementPolicy: Unsupported value: "Sometimes": supported values: "Failed", '
      '"TerminatingOrFailed"']),
    ("podReplacementPolicy with podFailurePolicy",
     _job(podReplacementPolicy="TerminatingOrFailed",
          podFailurePolicy={"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}),
     ['spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed"']),
]


@pytest.mark.parametrize(("obj", "expected"), [(obj, expected) for _, obj, expected in CASES],
                         ids=[case for case, _, _ in CASES])
def test_recent_field_rules(obj: dict[str, Any], expected: list[str]) -> None:
    """The errors of a create at 1.37: the kind's validation and the gate-dependent rules."""
    from samplecontroller.apiserver.strategies.recent import gated_errors

    group, _, _ = str(obj["apiVersion"]).rpartition("/")
    found = [str(e) for e in validate_builtin(group, str(obj["kind"]), obj) + gated_errors(
        group, str(obj["kind"]), obj, None, 37)]
    assert len(found) == len(expected), found
    for text, prefix in zip(found, expected, strict=True):
        assert text.startswith(prefix), (text, prefix)


def test_gates_drop_disabled_fields_unless_in_use() -> None:
    """Under 1.33 every gated pod field is dropped on create and kept on an update whose stored
    object uses it; at 1.35 the beta ones stay and only the alpha ones go."""
    from samplecontroller.apiserver.strategies.recent import drop_disabled

    pod = _pod(hostnameOverride="h", os={"name": "linux"}, volumes=[{"name": "cfg", "emptyDir": {}}],
               containers=[_container(restartPolicy="Never", lifecycle={"stopSignal": "SIGUSR1"},
                                      restartPolicyRules=[{"action": "Restart",
                                                           "exitCodes": {"operator": "In", "values": [1]}}],
                                      env=[{"name": "X", "valueFrom": _file()}])])
    created = copy.deepcopy(pod)
    drop_disabled("", "Pod", created, None, 33)
    assert "hostnameOverride" not in created["spec"]
    c = created["spec"]["containers"][0]
    assert "restartPolicyRules" not in c and "restartPolicy" not in c  # dropContainerRestartRules
    assert "lifecycle" not in c and c["env"][0]["valueFrom"] == {}  # a lifecycle left empty goes too
    updated = copy.deepcopy(pod)
    drop_disabled("", "Pod", updated, pod, 33)
    assert updated == pod
    beta = copy.deepcopy(pod)
    drop_disabled("", "Pod", beta, None, 35)
    assert beta["spec"]["hostnameOverride"] == "h" and beta["spec"]["containers"][0]["restartPolicyRules"]
    assert "lifecycle" not in beta["spec"]["containers"][0]  # ContainerStopSignals is alpha
    hpa = _hpa(scaleUp={"tolerance": "0.1"})
    drop_disabled("autoscaling", "HorizontalPodAutoscaler", hpa, None, 34)
    assert hpa["spec"]["behavior"]["scaleUp"] == {}
    slice_ = _slice("n1")
    drop_disabled("discovery.k8s.io", "EndpointSlice", slice_, None, 33)
    assert slice_["endpoints"][0]["hints"] == {}
    csi = _csi(nodeAllocatableUpdatePeriodSeconds=30, serviceAccountTokenInSecrets=True)
    drop_disabled("storage.k8s.io", "CSIDriver", csi, None, 34)
    assert csi["spec"] == {}


def test_traffic_distribution_needs_its_gate() -> None:
    """PreferSameZone/PreferSameNode are refused at 1.33 unless the stored Service uses one."""
    from samplecontroller.apiserver.strategies.recent import gated_errors

    svc = {"apiVersion": "v1", "kind": "Service", "spec": {"trafficDistribution": "PreferSameNode"}}
    assert [str(e) for e in gated_errors("", "Service", svc, None, 33)] == [
        'spec.trafficDistribution: Unsupported value: "PreferSameNode": supported values: "PreferClose"']
    assert gated_errors("", "Service", svc, svc, 33) == []
    assert gated_errors("", "Service", svc, None, 34) == []


def test_container_restart_fields_are_dropped_while_their_gate_is_off() -> None:
    """dropContainerRestartRules before 1.35 (ContainerRestartRules off): a regular or ephemeral
    container's restartPolicy, an init container's other than Always and every container's rules
    go, a sidecar's Always stays; an update whose stored spec uses them (containerRestartRulesInUse:
    an init container's policy other than Always or its rules, a regular container's policy) keeps
    them, and so does 1.35."""
    from samplecontroller.apiserver.strategies.recent import drop_disabled

    rule = {"action": "Restart", "exitCodes": {"operator": "In", "values": [1]}}
    pod = _pod(initContainers=[_container(name="side", restartPolicy="Always"),
                               _container(name="init", restartPolicy="Never", restartPolicyRules=[rule])],
               containers=[_container(restartPolicy="OnFailure", restartPolicyRules=[rule])],
               ephemeralContainers=[{"name": "dbg", "image": "busybox", "restartPolicy": "Never"}])
    created = copy.deepcopy(pod)
    drop_disabled("", "Pod", created, None, 34)
    spec = created["spec"]
    assert spec["initContainers"] == [_container(name="side", restartPolicy="Always"), _container(name="init")]
    assert spec["containers"] == [_container()] and spec["ephemeralContainers"] == [{"name": "dbg", "image": "busybox"}]
    sidecar_only = _pod(initContainers=[_container(name="side", restartPolicy="Always")])
    for old in (_pod(containers=[_container(restartPolicy="Never")]),
                _pod(initContainers=[_container(name="i", restartPolicy="OnFailure")]),
                _pod(initContainers=[_container(name="i", restartPolicyRules=[rule])])):
        kept = copy.deepcopy(pod)
        drop_disabled("", "Pod", kept, old, 34)
        assert kept == pod
    dropped = copy.deepcopy(pod)
    drop_disabled("", "Pod", dropped, sidecar_only, 34)  # a sidecar is no restart-rules use
    assert dropped == created
    beta = copy.deepcopy(pod)
    drop_disabled("", "Pod", beta, None, 35)
    assert beta == pod


def test_the_options_of_an_update_follow_its_stored_spec() -> None:
    """GetValidationOptionsFromPodSpecAndMeta: with ContainerRestartRules off (1.34) a regular
    container's restartPolicy that survived (the stored spec uses one) is validated as at 1.35; an
    init container's policy other than Always is refused without that; with EnvFiles off the
    message of an env var without a source does not name fileKeyRef."""
    from samplecontroller.apiserver.strategies.recent import gated_errors

    bad = _pod(containers=[_container(restartPolicy="Sometimes")])
    assert [str(e) for e in gated_errors("", "Pod", bad, None, 34)] == [
        "spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers"]
    uses = _pod(containers=[_container(restartPolicy="Never")])
    assert [str(e) for e in gated_errors("", "Pod", bad, uses, 34)] == [
        'spec.containers[0].restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never", '
        '"OnFailure"']
    init = _pod(initContainers=[_container(name="i", restartPolicy="Never")])
    assert [str(e) for e in gated_errors("", "Pod", init, None, 34)] == [
        'spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported values: "Always"']
    assert gated_errors("", "Pod", init, None, 35) == []
    sidecar = _pod(initContainers=[_container(name="side", restartPolicy="Always")])
    assert gated_errors("", "Pod", sidecar, None, 33) == []
    no_source = _env({})
    assert [str(e) for e in gated_errors("", "Pod", no_source, None, 34)] == [
        'spec.containers[0].env[0].valueFrom: Invalid value: "": must specify one of: `fieldRef`, '
        "`resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"]
    assert "`fileKeyRef`" in str(gated_errors("", "Pod", no_source, _env(_file()), 34)[0])


def test_a_sidecars_rules_need_restart_all_containers() -> None:
    """Before 1.36 (RestartAllContainersOnContainerExits off) a sidecar may have no rules; a stored
    sidecar with rules allows them (restartAllContainersActionInUse)."""
    from samplecontroller.apiserver.strategies.recent import gated_errors

    rule = {"action": "Restart", "exitCodes": {"operator": "In", "values": [1]}}
    pod = _pod(initContainers=[_container(name="side", restartPolicy="Always", restartPolicyRules=[rule])])
    assert [str(e) for e in gated_errors("", "Pod", pod, None, 35)] == [
        "spec.initContainers[0].restartPolicyRules: Forbidden: restartPolicyRules are not allowed for init "
        "containers with restart policy Always"]
    assert gated_errors("", "Pod", pod, pod, 35) == [] and gated_errors("", "Pod", pod, None, 36) == []


def test_pod_defaults_of_1_37() -> None:
    """SetDefaults_Pod (1.37) turns a negative terminationGracePeriodSeconds into 1 (a Pod's, not a
    PodTemplate's); a projected podCertificate's maxExpirationSeconds is not defaulted (1.37's
    generated defaulters default only serviceAccountToken's expirationSeconds)."""
    from samplecontroller.apiserver.strategies.defaults import apply_defaults

    pod = _pod(terminationGracePeriodSeconds=-5, volumes=[_cert()])
    apply_defaults("", "Pod", pod, True)
    assert pod["spec"]["terminationGracePeriodSeconds"] == 1
    assert "maxExpirationSeconds" not in pod["spec"]["volumes"][0]["projected"]["sources"][0]["podCertificate"]
    template: dict[str, Any] = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "t"},
                                "template": {"spec": {"terminationGracePeriodSeconds": -5,
                                                      "containers": [_container()]}}}
    apply_defaults("", "PodTemplate", template, True)
    assert template["template"]["spec"]["terminationGracePeriodSeconds"] == -5


def _probe_pod(**container: Any) -> dict[str, Any]:
    return _pod(containers=[_container(**container)])


# (case, object, the path of the gated field, a minor where its gate is off, one where it is on or None)
DROPS: list[tuple[str, dict[str, Any], tuple[Any, ...], int, int | None]] = [
    # AtomicWriteVolumeUserFields (alpha 1.37)
    ("configMap defaultUser", _pod(volumes=[{"name": "v", "configMap": {"name": "c", "defaultUser": 1000}}]),
     ("spec", "volumes", 0, "configMap", "defaultUser"), 37, None),
    ("secret items user", _pod(volumes=[{"name": "v", "secret": {"secretName": "s", "items": [
        {"key": "k", "path": "k", "user": 1000}]}}]),
     ("spec", "volumes", 0, "secret", "items", 0, "user"), 37, None),
    ("downwardAPI defaultUser", _pod(volumes=[{"name": "v", "downwardAPI": {"defaultUser": 1000}}]),
     ("spec", "volumes", 0, "downwardAPI", "defaultUser"), 37, None),
    ("projected defaultUser", _pod(volumes=[{"name": "v", "projected": {"defaultUser": 1000, "sources": []}}]),
     ("spec", "volumes", 0, "projected", "defaultUser"), 37, None),
    ("serviceAccountToken user", _pod(volumes=[{"name": "v", "projected": {"sources": [
        {"serviceAccountToken": {"path": "token", "user": 1000}}]}}]),
     ("spec", "volumes", 0, "projected", "sources", 0, "serviceAccountToken", "user"), 37, None),
    # EmptyDirVolumeMode (alpha 1.37)
    ("emptyDir mode", _pod(volumes=[{"name": "v", "emptyDir": {"mode": 0o1777}}]),
     ("spec", "volumes", 0, "emptyDir", "mode"), 37, None),
    # GRPCContainerProbeTLS (alpha 1.37)
    ("grpc mode", _probe_pod(livenessProbe={"grpc": {"port": 9090, "mode": "TLS"}}),
     ("spec", "containers", 0, "livenessProbe", "grpc", "mode"), 37, None),
    # H2CContainerProbe (alpha 1.37)
    ("httpGet protocol", _probe_pod(readinessProbe={"httpGet": {"port": 8080, "protocol": "HTTP2"}}),
     ("spec", "containers", 0, "readinessProbe", "httpGet", "protocol"), 37, None),
    # VolumeBindMountOptions (alpha 1.37)
    ("bindMountOptions", _probe_pod(volumeMounts=[{"name": "v", "mountPath": "/v", "bindMountOptions": ["noexec"]}]),
     ("spec", "containers", 0, "volumeMounts", 0, "bindMountOptions"), 37, None),
    # InPlacePodVerticalScalingSchedulerPreemption (alpha 1.37)
    ("Node podPreemptionPolicy", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
                                  "spec": {"podPreemptionPolicy": {"disableResizePreemption": ["autoscaler"]}}},
     ("spec", "podPreemptionPolicy"), 37, None),
    # VolumeLimitScaling (alpha 1.35, beta on 1.37)
    ("CSIDriver preventPodSchedulingIfMissing", _csi(preventPodSchedulingIfMissing=True),
     ("spec", "preventPodSchedulingIfMissing"), 36, 37),
    # PodCertificateRequest (alpha 1.34, beta off 1.35, GA 1.37)
    ("projected podCertificate", _pod(volumes=[_cert()]),
     ("spec", "volumes", 0, "projected", "sources", 0, "podCertificate"), 36, 37),
]


def _get(obj: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        obj = obj[key] if isinstance(obj, list) or key in obj else None
        if obj is None:
            return None
    return obj


@pytest.mark.parametrize(("obj", "path", "off", "on"), [row[1:] for row in DROPS], ids=[row[0] for row in DROPS])
def test_gated_field_is_dropped_while_its_gate_is_off(obj: dict[str, Any], path: tuple[Any, ...], off: int,
                                                     on: int | None) -> None:
    """Dropped on create where the gate is off, kept on an update whose stored object uses it,
    and kept where the gate is on."""
    from samplecontroller.apiserver.strategies.recent import drop_disabled

    group, _, _ = str(obj["apiVersion"]).rpartition("/")
    created = copy.deepcopy(obj)
    drop_disabled(group, str(obj["kind"]), created, None, off)
    assert _get(created, path) is None and _get(obj, path) is not None
    updated = copy.deepcopy(obj)
    drop_disabled(group, str(obj["kind"]), updated, obj, off)
    assert updated == obj
    if on is not None:
        kept = copy.deepcopy(obj)
        drop_disabled(group, str(obj["kind"]), kept, None, on)
        assert kept == obj


def test_the_restart_all_containers_action_needs_its_gate() -> None:
    """RestartAllContainersOnContainerExits is alpha (off) at 1.35: only Restart is supported,
    unless the stored pod already uses the action."""
    from samplecontroller.apiserver.strategies.recent import gated_errors

    pod = _rules({"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}})
    assert [str(e) for e in gated_errors("", "Pod", pod, None, 35)] == [
        'spec.containers[0].restartPolicyRules[0].action: Unsupported value: "RestartAllContainers": '
        'supported values: "Restart"']
    assert gated_errors("", "Pod", pod, pod, 35) == [] and gated_errors("", "Pod", pod, None, 36) == []


def test_pod_spec_and_status_aliases_are_kept_in_sync() -> None:
    """SetDefaults_PodSpec (1.37): serviceAccount follows serviceAccountName, or fills it when it
    alone is set, in a pod template too; SetDefaults_PodStatus (1.37): podIP and podIPs, podIP
    winning when they differ."""
    from samplecontroller.apiserver.strategies.defaults import apply_defaults, default_pod_spec

    for given, expected in (({"serviceAccountName": "a"}, ("a", "a")), ({"serviceAccount": "old"}, ("old", "old")),
                            ({"serviceAccountName": "a", "serviceAccount": "b"}, ("a", "a")), ({}, (None, None))):
        spec: dict[str, Any] = {"containers": [_container()], **given}
        default_pod_spec(spec)
        assert (spec.get("serviceAccountName"), spec.get("serviceAccount")) == expected, given
    for status, ip, ips in (({"podIP": "10.0.0.1"}, "10.0.0.1", [{"ip": "10.0.0.1"}]),
                            ({"podIPs": [{"ip": "fd00::1"}, {"ip": "10.0.0.2"}]}, "fd00::1",
                             [{"ip": "fd00::1"}, {"ip": "10.0.0.2"}]),
                            ({"podIP": "10.0.0.3", "podIPs": [{"ip": "10.0.0.4"}]}, "10.0.0.3", [{"ip": "10.0.0.3"}])):
        pod = _pod()
        pod["status"] = dict(status)
        apply_defaults("", "Pod", pod, False)
        assert (pod["status"].get("podIP"), pod["status"].get("podIPs")) == (ip, ips), status


def test_host_users_false_refuses_host_namespaces_and_volume_devices() -> None:
    """validateHostUsers (1.37): with hostUsers false, hostNetwork (UserNamespacesHostNetworkSupport
    is off at every served version), hostPID, hostIPC and volumeDevices are Forbidden, kube's paths
    as they are; a stored spec already combining them keeps its update allowed."""
    from samplecontroller.apiserver.strategies.recent import gated_errors

    pod = _pod(hostUsers=False, hostNetwork=True, hostPID=True, hostIPC=True,
               containers=[_container(volumeDevices=[{"name": "d", "devicePath": "/dev/xvda"}])])
    assert [str(e) for e in gated_errors("", "Pod", pod, None, 37)] == [
        "spec.hostNetwork: Forbidden: when `hostUsers` is false", "spec.HostPID: Forbidden: when `hostUsers` is false",
        "spec.HostIPC: Forbidden: when `hostUsers` is false",
        "spec.containers[0].volumeDevices: Forbidden: when `hostUsers` is false"]
    assert [str(e) for e in gated_errors("", "Pod", pod, pod, 37)] == [
        "spec.HostPID: Forbidden: when `hostUsers` is false", "spec.HostIPC: Forbidden: when `hostUsers` is false"]
    assert gated_errors("", "Pod", _pod(hostUsers=True, hostPID=True), None, 37) == []
