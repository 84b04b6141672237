"""What admission webhooks and ValidatingAdmissionPolicies match on (admissionregistration's
RuleWithOperations / NamedRuleWithOperations, label selectors), shared by ``admission`` and
``admission_policy``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from samplecontroller.apimachinery import labels as labelsel
from samplecontroller.apiserver.restmapper import Resource

__all__ = ["labels_of", "rule_matches", "selector"]


def rule_matches(rule: Mapping[str, Any], operation: str, res: Resource, subresource: str, name: str = "") -> bool:
    """True when ``rule`` (operations, apiGroups, apiVersions, resources with ``*``, ``*/*`` and
    ``<resource>/<subresource>``, scope, and ``resourceNames`` when given) matches the request."""
    ops = rule.get("operations") or ()
    if "*" not in ops and operation not in ops:
        return False
    if not _listed(rule.get("apiGroups"), res.group) or not _listed(rule.get("apiVersions"), res.version):
        return False
    scope = rule.get("scope", "*")
    if (scope == "Namespaced" and not res.namespaced) or (scope == "Cluster" and res.namespaced):
        return False
    names = rule.get("resourceNames") or ()
    if names and name not in names:
        return False
    wanted = f"{res.plural}/{subresource}" if subresource else res.plural
    for resource in rule.get("resources") or ():
        if resource in ("*/*", wanted) or (resource == "*" and not subresource):
            return True
        base, _, sub = str(resource).partition("/")
        if sub and subresource and base in ("*", res.plural) and sub in ("*", subresource):
            return True
    return False


def _listed(values: Any, value: str) -> bool:
    return bool(values) and ("*" in values or value in values)


def selector(ls: Any) -> labelsel.Selector:
    """The selector of a LabelSelector (everything when unset; ValueError when invalid)."""
    return labelsel.everything() if not ls else labelsel.selector_from_label_selector(ls)


def labels_of(obj: Mapping[str, Any] | None) -> dict[str, str]:
    """An object's labels ({} when it has none or is None)."""
    value = ((obj or {}).get("metadata") or {}).get("labels")
    return value if isinstance(value, dict) else {}
