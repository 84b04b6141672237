"""The ServiceAccount admission plugin's lookup (issue 28 item 3): a Pod naming a ServiceAccount
its namespace does not have is refused with kube's 403."""

from __future__ import annotations

from typing import Any

from tests.apiserver.conftest import Raw


def _pod(name: str, account: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}]}
    if account is not None:
        spec["serviceAccountName"] = account
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def _namespace(raw: Raw, name: str) -> str:
    code, _, body = raw.call("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    assert code in (201, 409), body
    return f"/api/v1/namespaces/{name}"


def test_a_pod_naming_a_missing_service_account_is_forbidden(raw: Raw) -> None:
    ns = _namespace(raw, "sa-admission")
    code, _, body = raw.call("POST", f"{ns}/pods", _pod("p", "nobody"))
    assert code == 403, body
    assert body["reason"] == "Forbidden"
    assert body["message"] == ('pods "p" is forbidden: error looking up service account sa-admission/nobody: '
                               'serviceaccount "nobody" not found')
    assert body["details"] == {"name": "p", "kind": "pods"}
    assert raw.call("GET", f"{ns}/pods/p")[0] == 404
    code, _, body = raw.call("POST", f"{ns}/pods?dryRun=All", _pod("p", "nobody"))
    assert code == 403, body


def test_a_pod_naming_an_existing_or_the_default_account_is_created(raw: Raw) -> None:
    ns = _namespace(raw, "sa-admission-ok")
    code, _, body = raw.call("POST", f"{ns}/serviceaccounts", {"metadata": {"name": "robot"}})
    assert code == 201, body
    code, _, body = raw.call("POST", f"{ns}/pods", _pod("robot", "robot"))
    assert code == 201, body
    code, _, body = raw.call("POST", f"{ns}/pods", _pod("defaulted", None))
    assert code == 201, body
    assert body["spec"]["serviceAccountName"] == "default"


def test_updates_of_a_pod_whose_account_was_deleted_still_work(raw: Raw) -> None:
    ns = _namespace(raw, "sa-admission-upd")
    assert raw.call("POST", f"{ns}/serviceaccounts", {"metadata": {"name": "gone"}})[0] == 201
    assert raw.call("POST", f"{ns}/pods", _pod("p", "gone"))[0] == 201
    assert raw.call("DELETE", f"{ns}/serviceaccounts/gone")[0] == 200
    code, _, body = raw.call("PATCH", f"{ns}/pods/p", {"metadata": {"labels": {"a": "b"}}},
                             ctype="application/merge-patch+json")
    assert code == 200, body


def test_an_account_that_opts_out_of_automounting_gets_no_token_volume(raw: Raw) -> None:
    ns = _namespace(raw, "sa-admission-mount")
    account = {"metadata": {"name": "quiet"}, "automountServiceAccountToken": False}
    assert raw.call("POST", f"{ns}/serviceaccounts", account)[0] == 201
    code, _, pod = raw.call("POST", f"{ns}/pods", _pod("quiet", "quiet"))
    assert code == 201, pod
    assert not any(v["name"].startswith("kube-api-access-") for v in pod["spec"].get("volumes") or ())
    assert "volumeMounts" not in pod["spec"]["containers"][0]
    opted_in = _pod("loud", "quiet")
    opted_in["spec"]["automountServiceAccountToken"] = True  # the pod's own field wins
    code, _, pod = raw.call("POST", f"{ns}/pods", opted_in)
    assert code == 201 and any(v["name"].startswith("kube-api-access-") for v in pod["spec"]["volumes"]), pod
