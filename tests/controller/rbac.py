"""Checking requests against RBAC rules (the subset of RBAC the controller's ClusterRole uses)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]


def cluster_role_rules() -> list[dict[str, Any]]:
    role = yaml.safe_load((ROOT / "config" / "rbac" / "role.yaml").read_text())
    assert role["kind"] == "ClusterRole"
    return list(role["rules"])


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
