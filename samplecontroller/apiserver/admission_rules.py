"""What admission webhooks and ValidatingAdmissionPolicies match on (admissionregistration's
RuleWithOperations / NamedRuleWithOperations, label selectors), shared by ``admission`` and
``admission_policy``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from samplecontroller.apimachinery import labels as labelsel
from samplecontroller.apiserver.restmapper import Resource, RESTMapper

__all__ = ["equivalent_resources", "labels_of", "matched_resource", "rule_matches", "selector"]


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


def matched_resource(rules: Iterable[Any], operation: str, res: Resource, subresource: str, name: str,
                     match_policy: Any, equivalents: Sequence[Resource]) -> Resource | None:
    """The resource (version) ``rules`` match a request in, as kube's admission matchers choose
    it: ``res`` itself when a rule matches it; else, under ``matchPolicy: Equivalent`` (the API's
    default, so an absent policy too), the first of ``equivalents`` a rule matches (earlier
    rules first, then ``equivalents`` in order); None when nothing matches (always under
    ``Exact``)."""
    listed = [rule for rule in rules if isinstance(rule, Mapping)]
    if any(rule_matches(rule, operation, res, subresource, name) for rule in listed):
        return res
    if (match_policy or "Equivalent") != "Equivalent":
        return None
    for rule in listed:
        for other in equivalents:
            if other != res and rule_matches(rule, operation, other, subresource, name):
                return other
    return None


def equivalent_resources(mapper: RESTMapper | None, res: Resource, subresource: str) -> list[Resource]:
    """The other served versions of ``res`` (having ``subresource`` when one is asked for).

    Only custom resources: their versions share one object converted by the CRD. The one
    built-in resource served in several versions, HorizontalPodAutoscalers (autoscaling v1 and
    v2), has differently shaped versions whose conversion (``conversion``) loses v2 metrics, so
    a mutating round trip could drop data: it is matched exactly only. Resources equivalent
    under another group (kube's deployments in apps and extensions, events in core and
    events.k8s.io) are not served as such here."""
    if mapper is None or not res.is_custom:
        return []
    return [other for other in mapper.by_storage_key(res.storage_key)
            if other.crd_name == res.crd_name and other.version != res.version
            and (not subresource or subresource in other.subresources)]


def _listed(values: Any, value: str) -> bool:
    return bool(values) and ("*" in values or value in values)


def selector(ls: Any) -> labelsel.Selector:
    """The selector of a LabelSelector (everything when unset; ValueError when invalid)."""
    return labelsel.everything() if not ls else labelsel.selector_from_label_selector(ls)


def labels_of(obj: Mapping[str, Any] | None) -> dict[str, str]:
    """An object's labels ({} when it has none or is None)."""
    value = ((obj or {}).get("metadata") or {}).get("labels")
    return value if isinstance(value, dict) else {}
