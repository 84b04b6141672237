"""Service account tokens as kube-apiserver treats them (issue 28 items 1 and 2): the audiences
are checked, the issuer's discovery documents let another party verify a token, and a bound
token is only as good as the object it is bound to."""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.testing import make_kubectl
from tests.apiserver.conftest import Raw

NS = "tokens"
ISSUER = "https://kubernetes.default.svc.cluster.local"
Kubectl = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def kubectl(server: LocalAPIServer, raw: Raw, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    for path, obj in (("/api/v1/namespaces", {"metadata": {"name": NS}}),
                      (f"/api/v1/namespaces/{NS}/serviceaccounts", {"metadata": {"name": "sa"}})):
        code, _, body = raw.call("POST", path, obj)
        assert code in (201, 409), body
    return make_kubectl(tmp_path_factory.mktemp("home"), server)


def _token(kubectl: Kubectl, *args: str) -> str:
    proc = kubectl("create", "token", "sa", "-n", NS, *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def _whoami(raw: Raw, token: str) -> tuple[int, Any]:
    code, _, body = raw.call("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                             {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}, token=token)
    return code, body


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# ------------------------------------------------------------------ item 1: audiences and discovery


def test_a_token_for_another_audience_is_refused(raw: Raw, kubectl: Kubectl) -> None:
    vault = _token(kubectl, "--audience=vault")
    code, body = _whoami(raw, vault)
    assert code == 401 and body["reason"] == "Unauthorized", body
    mine = _token(kubectl)
    code, body = _whoami(raw, mine)
    assert code == 201 and body["status"]["userInfo"]["username"] == f"system:serviceaccount:{NS}:sa", body
    both = _token(kubectl, "--audience=vault", f"--audience={ISSUER}")
    assert _whoami(raw, both)[0] == 201


def test_token_review_checks_the_requested_audiences(raw: Raw, kubectl: Kubectl) -> None:
    vault = _token(kubectl, "--audience=vault")

    def review(token: str, audiences: list[str] | None) -> dict[str, Any]:
        spec: dict[str, Any] = {"token": token}
        if audiences is not None:
            spec["audiences"] = audiences
        code, _, body = raw.call("POST", "/apis/authentication.k8s.io/v1/tokenreviews",
                                 {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec})
        assert code == 201, body
        return dict(body["status"])

    status = review(vault, ["vault"])
    assert status["authenticated"] is True and status["audiences"] == ["vault"], status
    status = review(vault, None)
    assert not status.get("authenticated"), status
    assert status["error"] == f'token audiences ["vault"] is invalid for the target audiences ["{ISSUER}"]'


def test_discovery_documents_let_another_party_verify_a_token(raw: Raw, kubectl: Kubectl) -> None:
    code, headers, config = raw.call("GET", "/.well-known/openid-configuration")
    assert code == 200, config
    assert headers["content-type"].startswith("application/json")
    assert headers["cache-control"] == "public, max-age=3600"
    assert config["issuer"] == ISSUER
    assert config["jwks_uri"] == f"https://{raw.host}:{raw.port}/openid/v1/jwks"
    assert config["response_types_supported"] == ["id_token"] and config["subject_types_supported"] == ["public"]
    code, headers, jwks = raw.call("GET", "/openid/v1/jwks", accept="application/jwk-set+json")
    assert code == 200 and headers["content-type"].startswith("application/jwk-set+json"), jwks
    [key] = jwks["keys"]
    assert key["alg"] in config["id_token_signing_alg_values_supported"] and key["use"] == "sig"
    # verify a token with nothing but the published key, as a relying party would
    token = _token(kubectl, "--audience=vault")
    header_b64, payload_b64, signature_b64 = token.split(".")
    header = json.loads(_unb64(header_b64))
    assert header["kid"] == key["kid"] and header["alg"] == key["alg"] == "ES256"
    public = ec.EllipticCurvePublicNumbers(int.from_bytes(_unb64(key["x"]), "big"),
                                           int.from_bytes(_unb64(key["y"]), "big"), ec.SECP256R1()).public_key()
    signature = _unb64(signature_b64)
    public.verify(encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")),
                  f"{header_b64}.{payload_b64}".encode(), ec.ECDSA(hashes.SHA256()))
    claims = json.loads(_unb64(payload_b64))
    assert claims["iss"] == config["issuer"] and claims["aud"] == ["vault"]
    # readable by service accounts (system:service-account-issuer-discovery), not anonymously
    assert raw.call("GET", "/openid/v1/jwks", token=_token(kubectl))[0] == 200
    assert raw.call("GET", "/openid/v1/jwks", token=None)[0] == 401
    assert "/openid/v1/jwks" in raw.call("GET", "/")[2]["paths"]


def test_api_audiences_are_configurable(tmp_path: Path) -> None:
    with LocalAPIServer(kubeconfig_path=tmp_path / "kubeconfig", api_audiences=("api", "other")) as server:
        raw = Raw(server)
        assert raw.call("POST", "/api/v1/namespaces/default/serviceaccounts", {"metadata": {"name": "sa"}})[0] == 201
        run = make_kubectl(tmp_path / "home", server)
        issued = run("create", "token", "sa", "-n", "default", "-o", "json")
        assert issued.returncode == 0, issued.stderr
        request = json.loads(issued.stdout)
        assert request["spec"]["audiences"] == ["api", "other"]  # a TokenRequest without audiences gets the API's
        assert _whoami(raw, request["status"]["token"])[0] == 201
        default = run("create", "token", "sa", "-n", "default", f"--audience={ISSUER}")
        assert _whoami(raw, default.stdout.strip())[0] == 401


# ------------------------------------------------------------------ item 2: bound tokens


def _create(raw: Raw, plural: str, obj: dict[str, Any]) -> dict[str, Any]:
    code, _, body = raw.call("POST", f"/api/v1/namespaces/{NS}/{plural}", obj)
    assert code == 201, body
    return dict(body)


def test_a_token_bound_to_a_secret_dies_with_it(raw: Raw, kubectl: Kubectl) -> None:
    secret = _create(raw, "secrets", {"metadata": {"name": "bound"}})
    token = _token(kubectl, "--bound-object-kind=Secret", "--bound-object-name=bound")
    assert _whoami(raw, token)[0] == 201
    claims = json.loads(_unb64(token.split(".")[1]))
    assert claims["kubernetes.io"]["secret"] == {"name": "bound", "uid": secret["metadata"]["uid"]}
    assert raw.call("DELETE", f"/api/v1/namespaces/{NS}/secrets/bound")[0] == 200
    assert _whoami(raw, token)[0] == 401
    _create(raw, "secrets", {"metadata": {"name": "bound"}})  # the same name, another uid
    assert _whoami(raw, token)[0] == 401


def test_binding_to_a_missing_object_is_a_404(kubectl: Kubectl) -> None:
    for kind in ("Pod", "Secret"):
        proc = kubectl("create", "token", "sa", "-n", NS, f"--bound-object-kind={kind}", "--bound-object-name=nothere")
        assert proc.returncode != 0
        assert f'{kind.lower()}s "nothere" not found' in proc.stderr, proc.stderr


def test_bound_object_uid_and_kind_are_checked(raw: Raw) -> None:
    _create(raw, "secrets", {"metadata": {"name": "uid-checked"}})
    path = f"/api/v1/namespaces/{NS}/serviceaccounts/sa/token"

    def request(ref: dict[str, Any]) -> tuple[int, Any]:
        code, _, body = raw.call("POST", path, {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                                "spec": {"boundObjectRef": ref}})
        return code, body

    code, body = request({"apiVersion": "v1", "kind": "Secret", "name": "uid-checked", "uid": "not-its-uid"})
    assert code == 409 and body["message"] == (
        'Operation cannot be fulfilled on Secret "uid-checked": the UID in the bound object reference (not-its-uid) '
        "does not match the UID in record. The object might have been deleted and then recreated"), body
    code, body = request({"apiVersion": "v1", "kind": "ConfigMap", "name": "x"})
    assert code == 400 and body["message"] == "cannot bind token to object of type /v1, Kind=ConfigMap", body


def test_a_token_bound_to_a_pod_needs_the_pod_and_its_account(raw: Raw, kubectl: Kubectl) -> None:
    pod = {"metadata": {"name": "runner"},
           "spec": {"serviceAccountName": "sa", "containers": [{"name": "c", "image": "busybox"}]}}
    created = _create(raw, "pods", pod)
    token = _token(kubectl, "--bound-object-kind=Pod", "--bound-object-name=runner")
    code, body = _whoami(raw, token)
    assert code == 201, body
    extra = body["status"]["userInfo"]["extra"]
    assert extra["authentication.kubernetes.io/pod-name"] == ["runner"]
    assert extra["authentication.kubernetes.io/pod-uid"] == [created["metadata"]["uid"]]
    assert raw.call("DELETE", f"/api/v1/namespaces/{NS}/pods/runner?gracePeriodSeconds=0")[0] == 200
    assert _whoami(raw, token)[0] == 401
    other = {"metadata": {"name": "other-sa"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    _create(raw, "pods", other)  # runs as "default"
    proc = kubectl("create", "token", "sa", "-n", NS, "--bound-object-kind=Pod", "--bound-object-name=other-sa")
    assert proc.returncode != 0
    assert 'cannot bind token for serviceaccount "sa" to pod running with different serviceaccount name.' in proc.stderr
