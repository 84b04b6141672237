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
     ["spec.setHostnameAsFQDN: Invalid value: true: may not be set to true when hostnameOverride is set"]),
    ("hostnameOverride with hostNetwork", _pod(hostnameOverride="a", hostNetwork=True),
     ["spec.hostNetwork: Invalid value: true: may not be set to true when hostnameOverride is set"]),
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
     [f"{C0}.restartPolicyRules[0].exitCodes: Required value"]),
    ("restart rule operator", _rules({"action": "Restart", "exitCodes": {"operator": "Is", "values": [1]}}),
     [f'{C0}.restartPolicyRules[0].exitCodes.operator: Unsupported value: "Is": supported values: "In", "NotIn"']),
    ("restart rule duplicate exit code",
     _rules({"action": "Restart", "exitCodes": {"operator": "NotIn", "values": [1, 1]}}),
     [f"{C0}.restartPolicyRules[0].exitCodes.values[1]: Duplicate value: 1"]),
    ("restart rules over 20",
     _rules(*[{"action": "Restart", "exitCodes": {"operator": "In", "values": [i]}} for i in range(21)]),
     [f"{C0}.restartPolicyRules: Too many: 21: must have at most 20 items"]),
    ("container restartPolicy value", _pod(containers=[_container(restartPolicy="Sometimes")]),
     [f'{C0}.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"']),
    ("ephemeral container restart rules",
     _pod(ephemeralContainers=[{"name": "dbg", "image": "busybox", "restartPolicy": "Never"}]),
     ["spec.ephemeralContainers[0].restartPolicy: Forbidden: cannot be set for an Ephemeral Container"]),
    # lifecycle.stopSignal (1.33)
    ("stopSignal ok", _pod(os={"name": "linux"}, containers=[_container(lifecycle={"stopSignal": "SIGUSR1"})]), []),
    ("stopSignal without os", _pod(containers=[_container(lifecycle={"stopSignal": "SIGUSR1"})]),
     [f"{C0}.lifecycle.stopSignal: Forbidden: may not be set for containers with empty `spec.os.name`"]),
    ("stopSignal on windows", _pod(os={"name": "windows"}, containers=[_container(lifecycle={"stopSignal": "SIGUSR1"})]),
     [f'{C0}.lifecycle.stopSignal: Unsupported value: "SIGUSR1": supported values: "SIGKILL", "SIGTERM"']),
    ("stopSignal unknown on linux", _pod(os={"name": "linux"}, containers=[_container(lifecycle={"stopSignal": "SIGFOO"})]),
     [f'{C0}.lifecycle.stopSignal: Unsupported value: "SIGFOO": supported values: "SIGABRT"']),
    # env valueFrom.fileKeyRef (1.34)
    ("fileKeyRef ok", _env(_file()), []),
    ("fileKeyRef volume not an emptyDir", _env(_file(volumeName="sec")),
     [f'{C0}.env[0].valueFrom.fileKeyRef.volumeName: Invalid value: "sec": must reference an emptyDir volume']),
    ("fileKeyRef absolute path", _env(_file(path="/etc/app.env")),
     [f'{C0}.env[0].valueFrom.fileKeyRef.path: Invalid value: "/etc/app.env": must be a relative path']),
    ("fileKeyRef path with ..", _env(_file(path="../app.env")),
     [f"{C0}.env[0].valueFrom.fileKeyRef.path: Invalid value: \"../app.env\": must not contain '..'"]),
    ("fileKeyRef key with =", _env(_file(key="A=B")),
     [f"{C0}.env[0].valueFrom.fileKeyRef.key: Invalid value: \"A=B\": must consist of printable ASCII"]),
    ("fileKeyRef key over 128", _env(_file(key="K" * 129)),
     [f"{C0}.env[0].valueFrom.fileKeyRef.key: Too long: may not be more than 128 bytes"]),
    ("fileKeyRef missing fields", _env({"fileKeyRef": {}}),
     [f"{C0}.env[0].valueFrom.fileKeyRef.volumeName: Required value",
      f"{C0}.env[0].valueFrom.fileKeyRef.path: Required value",
      f"{C0}.env[0].valueFrom.fileKeyRef.key: Required value"]),
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
    # HPA behavior.*.tolerance (1.33)
    ("HPA tolerance ok", _hpa(scaleUp={"tolerance": "0.05"}), []),
    ("HPA negative tolerance", _hpa(scaleDown={"tolerance": "-0.1"}),
     ['spec.behavior.scaleDown.tolerance: Invalid value: "-0.1": must be greater than or equal to 0']),
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
    group, _, _ = str(obj["apiVersion"]).rpartition("/")
    found = [str(e) for e in validate_builtin(group, str(obj["kind"]), obj)]
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
    assert "restartPolicyRules" not in c and c["restartPolicy"] == "Never"  # refused by gated_errors instead
    assert c["lifecycle"] == {} and c["env"][0]["valueFrom"] == {}
    updated = copy.deepcopy(pod)
    drop_disabled("", "Pod", updated, pod, 33)
    assert updated == pod
    beta = copy.deepcopy(pod)
    drop_disabled("", "Pod", beta, None, 35)
    assert beta["spec"]["hostnameOverride"] == "h" and beta["spec"]["containers"][0]["restartPolicyRules"]
    assert beta["spec"]["containers"][0]["lifecycle"] == {}  # ContainerStopSignals is alpha
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


def test_a_regular_containers_restart_policy_needs_its_gate() -> None:
    """Before 1.35 (ContainerRestartRules off) only init containers have a restartPolicy."""
    from samplecontroller.apiserver.strategies.recent import gated_errors

    pod = _pod(containers=[_container(restartPolicy="Never")])
    assert [str(e) for e in gated_errors("", "Pod", pod, None, 34)] == [
        "spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers"]
    assert gated_errors("", "Pod", pod, pod, 34) == [] and gated_errors("", "Pod", pod, None, 35) == []
    sidecar = _pod(initContainers=[_container(name="side", restartPolicy="Always")])
    assert gated_errors("", "Pod", sidecar, None, 33) == []


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
