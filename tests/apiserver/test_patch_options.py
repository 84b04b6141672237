"""PatchOptions as kube-apiserver validates them (issue 28 item 7): ValidatePatchOptions runs
before the object is looked up, and every problem is one 422 naming ``PatchOptions.meta.k8s.io``."""

from __future__ import annotations

from typing import Any

import pytest

from tests.apiserver.conftest import Raw

CMS = "/api/v1/namespaces/default/configmaps"
APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"


def _invalid(result: tuple[int, dict[str, str], Any], message: str) -> dict[str, Any]:
    code, _, body = result
    assert code == 422, body
    assert isinstance(body, dict)
    assert body["reason"] == "Invalid", body
    assert body["message"] == message, body
    details = body["details"]
    assert isinstance(details, dict)
    assert details["group"] == "meta.k8s.io" and details["kind"] == "PatchOptions", details
    return details


@pytest.mark.parametrize("name", ["exists", "missing"])
def test_apply_without_field_manager_is_a_422(raw: Raw, name: str) -> None:
    if name == "exists":
        code, _, body = raw.call("POST", CMS, {"metadata": {"name": name}})
        assert code in (201, 409), body
    apply = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
    details = _invalid(raw.call("PATCH", f"{CMS}/{name}", apply, ctype=APPLY),
                       'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch')
    assert details["causes"] == [{"reason": "FieldValueRequired", "message": "Required value: is required for apply patch",
                                  "field": "fieldManager"}]


@pytest.mark.parametrize("force", ["true", "false"])
@pytest.mark.parametrize("name", ["exists", "missing"])
def test_force_on_a_non_apply_patch_is_forbidden_whatever_its_value(raw: Raw, force: str, name: str) -> None:
    if name == "exists":
        code, _, body = raw.call("POST", CMS, {"metadata": {"name": name}})
        assert code in (201, 409), body
    _invalid(raw.call("PATCH", f"{CMS}/{name}?force={force}", {"data": {"a": "b"}}, ctype=MERGE),
             'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch')


def test_several_option_errors_are_one_aggregate(raw: Raw) -> None:
    details = _invalid(raw.call("PATCH", f"{CMS}/missing?force=true&dryRun=Some&fieldValidation=x",
                                {"data": {}}, ctype=MERGE),
                       'PatchOptions.meta.k8s.io "" is invalid: [force: Forbidden: may not be specified for non-apply '
                       'patch, dryRun: Unsupported value: []string{"Some"}: supported values: "All", fieldValidation: '
                       'Unsupported value: "x": supported values: "", "Ignore", "Strict", "Warn"]')
    assert [c["field"] for c in details["causes"]] == ["force", "dryRun", "fieldValidation"]


def test_field_manager_too_long_or_unprintable(raw: Raw) -> None:
    code, _, body = raw.call("POST", f"{CMS}?fieldManager={'m' * 129}", {"metadata": {"name": "long"}})
    assert code == 422 and body["message"] == (  # type: ignore[index]
        'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes'), body
    code, _, body = raw.call("POST", f"{CMS}?fieldManager=a%07b", {"metadata": {"name": "bell"}})
    assert code == 422 and body["message"] == (  # type: ignore[index]
        'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\\ab": '
        'invalid character U+0007 (at position 1)'), body


def test_apply_with_force_and_a_field_manager_works(raw: Raw) -> None:
    apply = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"a": "b"}}
    code, _, body = raw.call("PATCH", f"{CMS}/applied?fieldManager=me&force=true", apply, ctype=APPLY)
    assert code == 201, body
