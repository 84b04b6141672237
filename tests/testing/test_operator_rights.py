"""The test kit runs the operator under test with exactly its generated role (issue 40, item 2):
``operator_rest_client`` is a ServiceAccount bound to config/rbac/role.yaml on the shared embedded
API server; the runtime sample-controller works under it, and a role generated without one
declaration makes the run fail with kube's Forbidden message naming the declaration to add."""

from __future__ import annotations

import importlib.util
import json
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import pytest
import yaml

from samplecontroller import foo_reconciler
from samplecontroller.apimachinery import errors
from samplecontroller.foo import CONTROLLER_AGENT_NAME
from samplecontroller.rest import RESTClient
from samplecontroller.runtime import rbac
from samplecontroller.testing import pytest_plugin
from samplecontroller.testing.runner import OperatorRunner

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")
USER = f"system:serviceaccount:{pytest_plugin.OPERATOR_NAMESPACE}:{pytest_plugin.OPERATOR_ACCOUNT}"
CLUSTER_ROLE = "/apis/rbac.authorization.k8s.io/v1/clusterroles/sample-controller"


def wait_for(what: str, probe: Callable[[], T | None], timeout: float = 30.0) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value is not None:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def get(rest_client: RESTClient, path: str) -> dict[str, Any] | None:
    try:
        found: dict[str, Any] = json.loads(rest_client.request("GET", path))
    except errors.NotFoundError:
        return None
    return found


def create_foo(rest_client: RESTClient, namespace: str, name: str) -> None:
    body = {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "metadata": {"name": name},
            "spec": {"deploymentName": name, "replicas": 1}}
    rest_client.request("POST", f"/apis/samplecontroller.k8s.io/v1alpha1/namespaces/{namespace}/foos",
                        body=json.dumps(body).encode(), content_type="application/json")


def runtime_controller(rest: RESTClient, namespace: str) -> OperatorRunner:
    mgr = foo_reconciler.new_manager(rest, resync=0, namespace=namespace)
    foo_reconciler.FooReconciler(mgr.get_client(), mgr.get_event_recorder_for(CONTROLLER_AGENT_NAME)
                                 ).setup_with_manager(mgr, 1)
    return OperatorRunner(mgr)


def hack_update_manifests() -> ModuleType:
    spec = importlib.util.spec_from_file_location("update_manifests", ROOT / "hack" / "update_manifests.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_runtime_controller_works_under_its_generated_role(
        operator_rest_client: RESTClient, rest_client: RESTClient, namespace: str) -> None:
    whoami = json.loads(operator_rest_client.request(
        "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        body=b'{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}', content_type="application/json"))
    assert whoami["status"]["userInfo"]["username"] == USER
    with runtime_controller(operator_rest_client, namespace):
        create_foo(rest_client, namespace, "allowed")
        wait_for("the Deployment", lambda: get(rest_client, f"/apis/apps/v1/namespaces/{namespace}/deployments/allowed"))
        foos = f"/apis/samplecontroller.k8s.io/v1alpha1/namespaces/{namespace}/foos/allowed"
        wait_for("the Foo's status", lambda: (get(rest_client, foos) or {}).get("status"))


def test_a_role_without_one_declaration_fails_naming_the_declaration_to_add(
        request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, operator_rest_client: RESTClient,
        rest_client: RESTClient, namespace: str) -> None:
    update_manifests = hack_update_manifests()
    update_manifests.files()  # imports every module with declarations before the registry is swapped
    kept = [r for r in rbac._DECLARED if r.sources != ("samplecontroller.foo.new_deployment",)]
    assert len(kept) == len(rbac._DECLARED) - 1
    with monkeypatch.context() as m:
        m.setattr(rbac, "_DECLARED", kept)
        without = next(yaml.safe_load_all(update_manifests.files()[update_manifests.ROLE]))
    original = get(rest_client, CLUSTER_ROLE)
    assert original is not None
    refusals = request.config.stash[pytest_plugin.REFUSALS]
    try:
        rest_client.request("PUT", CLUSTER_ROLE, content_type="application/json",
                            body=json.dumps({**original, "rules": without["rules"]}).encode())
        with runtime_controller(operator_rest_client, namespace):
            create_foo(rest_client, namespace, "refused")
            seen: list[str] = []

            def refused() -> str | None:
                seen.extend(refusals.take())
                return next((m for m in seen if "deployments" in m), None)

            message = wait_for("the refusal", refused)
    finally:
        current = get(rest_client, CLUSTER_ROLE) or original
        rest_client.request("PUT", CLUSTER_ROLE, content_type="application/json",
                            body=json.dumps({**current, "rules": original["rules"]}).encode())
        refusals.take()
    assert message == (
        f'deployments.apps is forbidden: User "{USER}" cannot create resource "deployments" in API group "apps" '
        f'in the namespace "{namespace}"\n'
        f"  the operator's role ({ROOT / 'config/rbac/role.yaml'}) lacks it: declare it beside the code that "
        "needs it and run `make manifests`:\n"
        '    rbac.rule(groups="apps", resources="deployments", verbs="create")')
