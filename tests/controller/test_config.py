"""The deployment manifests in config/ parse, build with kustomize, and grant what the controller needs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.controller.conftest import find_kubectl
from tests.controller.rbac import ROOT, allows, cluster_role_rules


def test_every_manifest_parses() -> None:
    files = sorted((ROOT / "config").rglob("*.yaml"))
    assert files
    for path in files:
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
        assert docs, path
        for doc in docs:
            assert "kind" in doc, path


def test_kustomize_builds_all_objects(tmp_path: Path) -> None:
    kubectl = find_kubectl()
    if kubectl is None:
        if os.environ.get("CI") == "true":
            pytest.fail("kubectl is required under CI=true")
        pytest.skip("kubectl not found")
    # kustomize's default load restrictor (what `kubectl apply -k config/` uses): config/ is self-contained
    out = subprocess.run([kubectl, "kustomize", str(ROOT / "config")],
                         capture_output=True, text=True, env={**os.environ, "HOME": str(tmp_path)}, timeout=60)
    assert out.returncode == 0, out.stderr
    kinds = sorted(d["kind"] for d in yaml.safe_load_all(out.stdout) if d)
    assert kinds == sorted(["ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "Deployment",
                            "Namespace", "Role", "RoleBinding", "ServiceAccount"]), kinds


def test_config_crd_is_the_crds_copy() -> None:
    """config/ carries its own copy of crds/foo.yaml (kustomize loads nothing outside config/); it must not drift."""
    copy = ROOT / "config" / "crd" / "bases" / "samplecontroller.k8s.io_foos.yaml"
    assert copy.read_bytes() == (ROOT / "crds" / "foo.yaml").read_bytes(), (
        f"{copy} differs from crds/foo.yaml: cp crds/foo.yaml {copy.relative_to(ROOT)}")


def test_cluster_role_covers_the_controllers_verbs() -> None:
    rules = cluster_role_rules()
    needed = [
        ("get", "samplecontroller.k8s.io", "foos", ""), ("list", "samplecontroller.k8s.io", "foos", ""),
        ("watch", "samplecontroller.k8s.io", "foos", ""), ("patch", "samplecontroller.k8s.io", "foos", "status"),
        ("list", "apps", "deployments", ""), ("watch", "apps", "deployments", ""),
        ("create", "apps", "deployments", ""), ("patch", "apps", "deployments", ""),
        ("create", "", "events", ""), ("patch", "", "events", ""),
        ("get", "coordination.k8s.io", "leases", ""), ("create", "coordination.k8s.io", "leases", ""),
        ("update", "coordination.k8s.io", "leases", ""),
    ]
    for verb, group, resource, sub in needed:
        assert allows(rules, verb, group, resource, sub), (verb, group, resource, sub)
    assert not allows(rules, "delete", "apps", "deployments")
    assert not allows(rules, "update", "apps", "deployments")
