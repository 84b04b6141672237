"""The killer test of RBAC (issue 19): main.py runs under its own ServiceAccount token against this
repository's ``config/rbac``, so a permission the controller needs but the ClusterRole lacks fails
here, with kube-apiserver's Forbidden message, before it fails on a real cluster."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.controller.conftest import ROOT, ControllerProcess, Kubectl, wait_for

pytestmark = [pytest.mark.kubectl, pytest.mark.slow]

SA_NAMESPACE = "sample-controller-system"
USER = f"system:serviceaccount:{SA_NAMESPACE}:sample-controller"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from samplecontroller.apiserver import LocalAPIServer

    tmp = tmp_path_factory.mktemp("apiserver")
    with LocalAPIServer(simulate_deployments=True, kubeconfig_path=tmp / "kubeconfig") as s:
        yield s


@pytest.fixture(scope="module")
def kubectl(server: Any, kubectl_binary: str, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    k = Kubectl(kubectl_binary, Path(server.kubeconfig_path), tmp_path_factory.mktemp("home"))
    k.run("apply", "-f", str(ROOT / "crds"))
    k.run("wait", "--for", "condition=Established", "crd/foos.samplecontroller.k8s.io", "--timeout", "20s")
    k.run("create", "namespace", SA_NAMESPACE)
    k.run("apply", "-k", str(ROOT / "config" / "rbac"))
    return k


def service_account_kubeconfig(kubectl: Kubectl, admin_kubeconfig: Path, path: Path) -> Path:
    """A kubeconfig like ``admin_kubeconfig`` whose user is a token of the controller's ServiceAccount."""
    token = kubectl.run("create", "token", "sample-controller", "-n", SA_NAMESPACE, "--duration=1h").stdout.strip()
    config = yaml.safe_load(admin_kubeconfig.read_text())
    config["users"] = [{"name": "sample-controller", "user": {"token": token}}]
    config["contexts"][0]["context"]["user"] = "sample-controller"
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path


def foo(name: str) -> str:
    return json.dumps({"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "metadata": {"name": name},
                       "spec": {"deploymentName": name, "replicas": 1}})


@pytest.mark.parametrize("style", ["classic", "runtime"])
def test_the_controller_works_under_config_rbac_and_a_missing_rule_is_forbidden(
        kubectl: Kubectl, server: Any, tmp_path: Path, start_controller: Callable[..., ControllerProcess],
        style: str) -> None:
    ns = f"rbac-e2e-{style}"
    kubectl.run("create", "namespace", ns)
    sa_kubeconfig = service_account_kubeconfig(kubectl, Path(server.kubeconfig_path), tmp_path / "sa-kubeconfig")
    controller = start_controller(sa_kubeconfig, "--controller", style, "--leader-elect",
                                  "--leader-election-namespace", SA_NAMESPACE, "--leader-election-id", f"rbac-{style}")
    try:
        kubectl.run("apply", "-n", ns, "-f", "-", stdin=foo("allowed"))
        wait_for(lambda: (kubectl.json("get", "foo", "allowed", "-n", ns) or {}).get("status", {})
                 .get("availableReplicas") == 1, what="the Foo reconciled under config/rbac", timeout=30)
        assert "forbidden" not in controller.output().lower(), controller.output()

        # Remove one permission the controller needs (creating Deployments): the next Foo is Forbidden.
        role = next(yaml.safe_load_all((ROOT / "config" / "rbac" / "role.yaml").read_text()))  # the ClusterRole
        for rule in role["rules"]:
            if rule["apiGroups"] == ["apps"] and "deployments" in rule["resources"]:
                rule["verbs"] = [v for v in rule["verbs"] if v != "create"]
        kubectl.run("apply", "-f", "-", stdin=json.dumps(role))
        kubectl.run("apply", "-n", ns, "-f", "-", stdin=foo("denied"))
        message = (f'deployments.apps is forbidden: User "{USER}" cannot create resource "deployments" '
                   f'in API group "apps" in the namespace "{ns}"')
        logged = message.replace('"', '\\"')  # logfmt quotes the error value
        wait_for(lambda: logged in controller.output(), timeout=30,
                 what=f"the Forbidden error in the controller's log:\n{message}")
        assert kubectl.json("get", "deployment", "denied", "-n", ns) is None
    finally:
        kubectl.run("apply", "-f", str(ROOT / "config" / "rbac" / "role.yaml"))
    assert controller.stop() == 0, controller.output()
