"""Built-in resource metadata, defaulting, tokens and printers without a server."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from samplecontroller.apiserver import builtins, tokens
from samplecontroller.apiserver.strategies import apply_defaults, prepare_create_status
from samplecontroller.apiserver.tables import builtin_columns, to_table

NOW = datetime(2026, 1, 10, 12, 0, 0, tzinfo=UTC)


def test_plural_guess_matches_upstream() -> None:
    assert [builtins.guess_plural(k) for k in ("Ingress", "NetworkPolicy", "Pod", "EndpointSlice")] == [
        "ingresses", "networkpolicies", "pods", "endpointslices"]


def test_generated_resources() -> None:
    by_key = {(r[0], r[1], r[2]): r for r in builtins.builtin_resources()}
    assert by_key[("", "v1", "endpoints")][3] == "Endpoints"
    role = by_key[("rbac.authorization.k8s.io", "v1", "clusterroles")]
    assert role[4] is False and role[8] == builtins.ALL_VERBS
    job = by_key[("batch", "v1", "jobs")]
    assert job[4] is True and job[6] == ("all",) and job[7] == ("status",)
    assert by_key[("", "v1", "serviceaccounts")][7] == ("token",)
    assert by_key[("authentication.k8s.io", "v1", "tokenreviews")][8] == ("create",)
    assert not any(r[1].startswith(("v1beta", "v1alpha", "v2beta")) for r in builtins.builtin_resources())


def test_empty_status_and_required_fields() -> None:
    assert builtins.empty_status("apps", "v1", "ReplicaSet") == {"replicas": 0}
    assert builtins.empty_status("apps", "v1", "Deployment") == {}
    missing = builtins.required_errors("rbac.authorization.k8s.io", "v1", "RoleBinding",
                                       {"subjects": [{"kind": "User"}]})
    assert [p for p, _ in missing] == ["roleRef", "subjects[0].name"]


def test_create_status_of_kinds() -> None:
    svc: dict[str, object] = {"status": {"x": 1}}
    prepare_create_status("", "v1", "Service", svc)
    assert svc["status"] == {"loadBalancer": {}}
    node: dict[str, object] = {"status": {"phase": "Running"}}
    prepare_create_status("", "v1", "Node", node)
    assert node["status"] == {"phase": "Running"}


def test_defaults_of_replicaset_pod_and_job() -> None:
    rs: dict[str, Any] = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}}
    apply_defaults("apps", "ReplicaSet", rs, True)
    assert rs["spec"]["replicas"] == 1 and "revisionHistoryLimit" not in rs["spec"]
    pod: dict[str, Any] = {"spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}],
                                    "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}],
                    "volumes": [{"name": "v"}, {"name": "s", "secret": {"secretName": "x"}}]}}
    apply_defaults("", "Pod", pod, True)
    spec = pod["spec"]
    assert spec["containers"][0]["ports"][0]["protocol"] == "TCP"
    assert spec["containers"][0]["resources"]["requests"] == {"cpu": "1", "memory": "1Gi"}
    assert spec["volumes"][:2] == [{"name": "v", "emptyDir": {}}, {"name": "s", "secret": {"secretName": "x", "defaultMode": 420}}]
    assert spec["volumes"][2]["name"].startswith("kube-api-access-")  # ServiceAccount admission, after defaulting
    assert pod["status"] == {"phase": "Pending", "qosClass": "Guaranteed"}
    assert len(spec["tolerations"]) == 2
    assert "priority" not in spec  # the Priority admission plugin (the Pod strategy's allocate) reads PriorityClasses
    job: dict[str, Any] = {"metadata": {"name": "j", "uid": "u1"}, "spec": {"template": {"spec": {"containers": []}}}}
    apply_defaults("batch", "Job", job, True)
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": "u1"}}
    assert job["spec"]["template"]["metadata"]["labels"]["batch.kubernetes.io/job-name"] == "j"


def test_tokens_round_trip_expiry_and_audiences() -> None:
    signer = tokens.Signer("secret")
    token, expiry = signer.issue("ns", "sa", "uid-1", [tokens.ISSUER], 3600, now=1000)
    assert expiry == 4600
    claims = signer.verify(token, now=2000)
    assert claims is not None and claims["sub"] == "system:serviceaccount:ns:sa"
    assert signer.verify(token, now=5000) is None
    assert tokens.Signer("other").verify(token, now=2000) is None
    assert tokens.Signer("secret").verify(token, now=2000) == claims  # the key is derived from the secret
    vault, _ = signer.issue("ns", "sa", "uid-1", ["vault"], 3600, now=1000)
    with pytest.raises(tokens.TokenError, match=r'token audiences \["vault"\] is invalid for the target audiences '
                                                r'\["https://kubernetes.default.svc.cluster.local"\]'):
        signer.verify(vault, now=2000)
    assert signer.verify(vault, ["vault"], now=2000) is not None
    early, _ = signer.issue("ns", "sa", "uid-1", [tokens.ISSUER], 3600, now=2000 + tokens.NBF_LEEWAY + 1)
    assert signer.verify(early, now=2000) is None


def test_printers_of_job_cronjob_and_node() -> None:
    job = {"metadata": {"name": "j", "creationTimestamp": "2026-01-10T11:00:00Z"},
           "spec": {"completions": 3, "selector": {"matchLabels": {"a": "b"}},
                    "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}},
           "status": {"succeeded": 3, "startTime": "2026-01-10T11:00:00Z", "completionTime": "2026-01-10T11:00:42Z",
                      "conditions": [{"type": "Complete", "status": "True"}]}}
    cells = to_table([job], builtin_columns("batch", "Job"), resource_version="1", now=NOW)["rows"][0]["cells"]
    assert cells == ["j", "Complete", "3/3", "42s", "60m", "c", "busybox", "a=b"]
    node = {"metadata": {"name": "n", "labels": {"node-role.kubernetes.io/control-plane": ""}},
            "status": {"conditions": [{"type": "Ready", "status": "False"}], "nodeInfo": {"kubeletVersion": "v1.37.0"}},
            "spec": {"unschedulable": True}}
    cells = to_table([node], builtin_columns("", "Node"), resource_version="1", now=NOW)["rows"][0]["cells"]
    assert cells[:3] == ["n", "NotReady,SchedulingDisabled", "control-plane"] and cells[4] == "v1.37.0"
    assert [c["name"] for c in to_table([], builtin_columns("storage.k8s.io", "CSIStorageCapacity"),
                                        resource_version="1")["columnDefinitions"]] == ["Name", "Created At"]


def test_service_external_ip_column() -> None:
    cols = builtin_columns("", "Service")
    def ext(spec: dict[str, object], status: dict[str, object] | None = None) -> object:
        row = to_table([{"metadata": {"name": "s"}, "spec": spec, "status": status or {}}], cols, resource_version="1")
        return row["rows"][0]["cells"][3]
    assert ext({"type": "ExternalName", "externalName": "example.com"}) == "example.com"
    assert ext({"type": "LoadBalancer"}) == "<pending>"
    assert ext({"type": "LoadBalancer"}, {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}) == "1.2.3.4"
    assert ext({"type": "ClusterIP"}) == "<none>"


def test_projected_sources_are_defaulted_as_kube_does() -> None:
    """SetDefaults_ServiceAccountTokenProjection (an hour); a podCertificate's maxExpirationSeconds
    is left unset (1.37's generated defaulters have no default for it; the kubelet puts 86400 into
    the PodCertificateRequests it makes)."""
    pod: dict[str, Any] = {"spec": {"automountServiceAccountToken": False, "containers": [{"name": "c", "image": "i"}],
                                    "volumes": [{"name": "p", "projected": {"sources": [
                                        {"serviceAccountToken": {"path": "t"}},
                                        {"serviceAccountToken": {"path": "u", "expirationSeconds": 7200}},
                                        {"podCertificate": {"signerName": "example.com/s", "keyType": "ED25519"}},
                                    ]}}]}}
    apply_defaults("", "Pod", pod, True)
    sources = pod["spec"]["volumes"][0]["projected"]["sources"]
    assert [s.get("serviceAccountToken", s.get("podCertificate")) for s in sources] == [
        {"path": "t", "expirationSeconds": 3600}, {"path": "u", "expirationSeconds": 7200},
        {"signerName": "example.com/s", "keyType": "ED25519"}]
