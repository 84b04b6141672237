"""The controller under the operator's own ServiceAccount, with config/rbac's rules as
deployed.

The embedded API server enforces RBAC for ServiceAccount tokens: a rule missing from
config/rbac (say, ``create`` on deployments) makes this test fail with kube-apiserver's
Forbidden message here, before it fails in a cluster.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from samplecontroller import rest
from samplecontroller.apiserver.testing import KubectlRunner
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.kubernetes.clientset import Clientset as KubeClientset
from samplecontroller.rest import RESTClient

from memcachedop.generated.apis.cache.v1alpha1 import Memcached, MemcachedSpec
from memcachedop.generated.clientset import Clientset

SYSTEM_NAMESPACE = "memcached-operator-system"
SERVICE_ACCOUNT = "memcached-operator"


# --8<-- [start:service-account]
@pytest.fixture
def controller_client(
    kubectl: KubectlRunner, kubeconfig: Path, tmp_path: Path
) -> RESTClient:
    """A REST client that authenticates as the operator's ServiceAccount, with
    config/rbac applied."""
    kubectl("create", "namespace", SYSTEM_NAMESPACE)  # fails harmlessly when it exists
    kubectl("apply", "-k", "config/rbac", check=True)
    token = kubectl(
        "create", "token", SERVICE_ACCOUNT, "-n", SYSTEM_NAMESPACE, check=True
    ).stdout.strip()
    config = yaml.safe_load(kubeconfig.read_text())
    config["users"] = [{"name": SERVICE_ACCOUNT, "user": {"token": token}}]
    config["contexts"][0]["context"]["user"] = SERVICE_ACCOUNT
    path = tmp_path / "operator.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return rest.load_rest_client(kubeconfig=str(path))


# --8<-- [end:service-account]


@pytest.mark.usefixtures("running")
def test_the_operator_works_under_its_service_account(
    clientset: Clientset,
    kubeconfig: Path,
    namespace: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    admin = rest.load_rest_client(kubeconfig=str(kubeconfig))
    clientset.cache_v1alpha1().memcacheds(namespace).create(
        Memcached(metadata=ObjectMeta(name="cache"), spec=MemcachedSpec(size=1))
    )
    deployments = KubeClientset(admin).apps_v1().deployments(namespace)
    deadline = time.monotonic() + 30
    while (
        not deployments.list().items
    ):  # created by the controller, as its ServiceAccount
        # a missing rule: the controller's errors carry kube-apiserver's Forbidden
        # message
        errors = {
            str(getattr(r, "kv", {}).get("error"))
            for r in caplog.records
            if r.levelname == "ERROR"
        }
        assert time.monotonic() < deadline, (
            f"no Deployment after 30 s; the controller's errors: {errors}"
        )
        time.sleep(0.05)
