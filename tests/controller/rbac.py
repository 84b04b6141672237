"""Checking requests against RBAC rules (the subset of RBAC the controller's ClusterRole uses)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]


def cluster_role_rules() -> list[dict[str, Any]]:
    """The rules of the generated ClusterRole and of its namespaced Roles (leader election's Lease)."""
    docs = list(yaml.safe_load_all((ROOT / "config" / "rbac" / "role.yaml").read_text()))
    assert docs[0]["kind"] == "ClusterRole"
    return [rule for d in docs for rule in d["rules"]]


def allows(rules: list[dict[str, Any]], verb: str, group: str, resource: str, subresource: str = "") -> bool:
    wanted = f"{resource}/{subresource}" if subresource else resource
    for rule in rules:
        if group not in rule.get("apiGroups", []) and "*" not in rule.get("apiGroups", []):
            continue
        if wanted not in rule.get("resources", []) and "*" not in rule.get("resources", []):
            continue
        if verb in rule.get("verbs", []) or "*" in rule.get("verbs", []):
            return True
    return False
