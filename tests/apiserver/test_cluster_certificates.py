"""CertificateSigningRequests as kube-apiserver serves them (issue 19 item 4): the requester's
identity in the spec, the request validated, conditions set only through the approval
subresource, and ``kubectl certificate approve|deny``."""

from __future__ import annotations

import base64
import itertools
import json
import subprocess
from collections.abc import Callable
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from samplecontroller.apiserver import LocalAPIServer
from tests.apiserver.conftest import Raw

Run = Callable[..., subprocess.CompletedProcess[str]]
CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
_names = itertools.count()


@pytest.fixture
def raw(apiserver: LocalAPIServer) -> Raw:
    return Raw(apiserver)


def pem_request(common_name: str = "alice") -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    csr = (x509.CertificateSigningRequestBuilder()
           .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
           .sign(key, hashes.SHA256()))
    return base64.b64encode(csr.public_bytes(serialization.Encoding.PEM)).decode()


def csr(name: str, request: str | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": {"name": name},
            "spec": {"request": request or pem_request(), "signerName": "kubernetes.io/kube-apiserver-client",
                     "usages": ["client auth"], **spec}}


def fresh_name() -> str:
    return f"csr-{next(_names)}"


def test_requester_identity_is_recorded(raw: Raw, apiserver: LocalAPIServer) -> None:
    name = fresh_name()
    code, _, created = raw.call("POST", CSRS, csr(name, username="mallory", groups=["system:masters"],
                                                  uid="forged", extra={"x": ["y"]}))
    assert code == 201, created
    assert created["spec"]["username"] == "admin"
    assert created["spec"]["groups"] == ["system:masters", "system:authenticated"]
    assert "uid" not in created["spec"] and "extra" not in created["spec"]
    assert created["status"] == {}
    # a service account's token
    code, _, sa = raw.call("POST", "/api/v1/namespaces/default/serviceaccounts",
                           {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": f"{name}-sa"}})
    assert code == 201
    # RBAC: the bootstrap role a kubelet's bootstrap token has, which allows creating CSRs
    code, _, crb = raw.call("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": f"{name}-csr"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:node-bootstrapper"},
        "subjects": [{"kind": "ServiceAccount", "name": f"{name}-sa", "namespace": "default"}]})
    assert code == 201, crb
    code, _, tr = raw.call("POST", f"/api/v1/namespaces/default/serviceaccounts/{name}-sa/token",
                           {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}})
    assert code == 201
    code, _, by_sa = raw.call("POST", CSRS, csr(f"{name}-by-sa"), token=tr["status"]["token"])
    assert code == 201, by_sa
    assert by_sa["spec"]["username"] == f"system:serviceaccount:default:{name}-sa"
    assert by_sa["spec"]["uid"] == sa["metadata"]["uid"]
    assert by_sa["spec"]["groups"] == ["system:serviceaccounts", "system:serviceaccounts:default",
                                       "system:authenticated"]


def test_pre_approved_requests_are_not_created(raw: Raw) -> None:
    name = fresh_name()
    body = csr(name)
    body["status"] = {"conditions": [{"type": "Approved", "status": "True"}]}
    code, _, created = raw.call("POST", CSRS, body)
    assert code == 201 and created["status"] == {}


@pytest.mark.parametrize("request_, spec, message", [
    (base64.b64encode(b"not a pem").decode(), {},
     'spec.request: Invalid value: "bm90IGEgcGVt": PEM block type must be CERTIFICATE REQUEST'),
    (None, {"usages": []}, "spec.usages: Required value"),
    (None, {"usages": ["client auth", "flying"]}, 'spec.usages[1]: Unsupported value: "flying": supported values: '),
    (None, {"usages": ["client auth", "client auth"]}, 'spec.usages[1]: Duplicate value: "client auth"'),
    (None, {"signerName": "nodomain"}, 'spec.signerName: Invalid value: "nodomain": must be a fully qualified domain '
                                       "and path of the form 'example.com/signer-name'"),
    (None, {"expirationSeconds": 60},
     "spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)"),
])
def test_requests_are_validated(raw: Raw, request_: str | None, spec: dict[str, Any], message: str) -> None:
    name = fresh_name()
    code, _, err = raw.call("POST", CSRS, csr(name, request_, **spec))
    assert code == 422, err
    assert err["message"].startswith(f'CertificateSigningRequest.certificates.k8s.io "{name}" is invalid: {message}')


def approval(raw: Raw, name: str, ctype: str) -> tuple[int, Any]:
    _, _, current = raw.call("GET", f"{CSRS}/{name}")
    current.setdefault("status", {}).setdefault("conditions", []).append(
        {"type": ctype, "status": "True", "reason": "Test", "message": "by the test"})
    code, _, body = raw.call("PUT", f"{CSRS}/{name}/approval", current)
    return code, body


def test_conditions_only_through_the_approval_subresource(raw: Raw) -> None:
    name = fresh_name()
    assert raw.call("POST", CSRS, csr(name))[0] == 201
    _, _, current = raw.call("GET", f"{CSRS}/{name}")
    current["status"] = {"conditions": [{"type": "Approved", "status": "True"}]}
    current["spec"]["usages"] = ["server auth"]
    code, _, same = raw.call("PUT", f"{CSRS}/{name}", current)
    assert code == 200 and same["status"] == {} and same["spec"]["usages"] == ["client auth"]
    code, _, status = raw.call("PUT", f"{CSRS}/{name}/status", current)
    assert code == 200 and "conditions" not in status["status"]
    code, approved = approval(raw, name, "Approved")
    assert code == 200, approved
    condition = approved["status"]["conditions"][0]
    assert condition["type"] == "Approved" and condition["lastUpdateTime"] and condition["lastTransitionTime"]
    code, err = approval(raw, name, "Denied")
    assert code == 422
    assert 'status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually ' \
           "exclusive" in err["message"]
    _, _, current = raw.call("GET", f"{CSRS}/{name}")
    current["status"]["conditions"] = []
    code, _, err = raw.call("PUT", f"{CSRS}/{name}/approval", current)
    assert code == 422 and 'status.conditions: Forbidden: updates may not remove a condition of type "Approved"' \
        in err["message"]


@pytest.mark.kubectl
def test_kubectl_certificate_approve_and_deny(kubectl: Run, raw: Raw) -> None:
    first, second = fresh_name(), fresh_name()
    for name in (first, second):
        assert kubectl("create", "-f", "-", stdin=json.dumps(csr(name))).returncode == 0
    table = kubectl("get", "csr", first, check=True).stdout.splitlines()
    assert table[0].split() == ["NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION"]
    assert table[1].split()[2:] == ["kubernetes.io/kube-apiserver-client", "admin", "<none>", "Pending"]
    approved = kubectl("certificate", "approve", first)
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout.strip() == f"certificatesigningrequest.certificates.k8s.io/{first} approved"
    assert kubectl("get", "csr", first, check=True).stdout.splitlines()[1].split()[-1] == "Approved"
    _, _, got = raw.call("GET", f"{CSRS}/{first}")
    assert got["status"]["conditions"][0]["reason"] == "KubectlApprove"
    denied = kubectl("certificate", "deny", second)
    assert denied.returncode == 0, denied.stderr
    assert denied.stdout.strip() == f"certificatesigningrequest.certificates.k8s.io/{second} denied"
    assert kubectl("get", "csr", second, check=True).stdout.splitlines()[1].split()[-1] == "Denied"
    refused = kubectl("certificate", "deny", first)
    assert refused.returncode == 1
    assert refused.stderr.strip() == f'error: certificate signing request "{first}" is already Approved'
