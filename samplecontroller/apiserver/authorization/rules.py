"""RBAC policy rules (rbac.authorization.k8s.io/v1 ``PolicyRule``) and how they match a
request (k8s.io/kubernetes pkg/apis/rbac/v1 helpers) and cover each other (component-helpers
``Covers``, used by escalation checks)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from samplecontroller.apiserver.authorization.attributes import Attributes, go_quote

__all__ = ["FULL_AUTHORITY", "Rule", "compact_string", "covers", "go_strings", "rule_allows", "rules_of"]


@dataclass(frozen=True)
class Rule:
    """One PolicyRule: verbs, apiGroups, resources (``res/sub``, ``*/sub``, ``*``), resourceNames,
    nonResourceURLs (``*`` suffix: a prefix)."""

    verbs: tuple[str, ...] = ()
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    @classmethod
    def from_wire(cls, rule: Mapping[str, Any]) -> Rule:
        def strings(key: str) -> tuple[str, ...]:
            value = rule.get(key)
            return tuple(str(v) for v in value) if isinstance(value, list) else ()
        return cls(strings("verbs"), strings("apiGroups"), strings("resources"), strings("resourceNames"),
                   strings("nonResourceURLs"))


FULL_AUTHORITY = (Rule(("*",), ("*",), ("*",)), Rule(("*",), non_resource_urls=("*",)))


def rules_of(role: Mapping[str, Any] | None) -> list[Rule]:
    """The rules of a stored Role or ClusterRole (malformed entries skipped)."""
    rules = (role or {}).get("rules")
    return [Rule.from_wire(r) for r in rules if isinstance(r, dict)] if isinstance(rules, list) else []


def _resource_matches(rule: Rule, combined: str, subresource: str) -> bool:
    for resource in rule.resources:
        if resource == "*" or resource == combined:
            return True
        if subresource and resource == "*/" + subresource:
            return True
    return False


def _url_matches(rule: Rule, path: str) -> bool:
    for url in rule.non_resource_urls:
        if url == "*" or url == path or (url.endswith("*") and path.startswith(url[:-1])):
            return True
    return False


def rule_allows(attrs: Attributes, rule: Rule) -> bool:
    """Whether ``rule`` allows the request ``attrs`` (``RuleAllows``)."""
    if attrs.verb not in rule.verbs and "*" not in rule.verbs:
        return False
    if not attrs.resource_request:
        return _url_matches(rule, attrs.path)
    if attrs.api_group not in rule.api_groups and "*" not in rule.api_groups:
        return False
    combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    if not _resource_matches(rule, combined, attrs.subresource):
        return False
    return not rule.resource_names or attrs.name in rule.resource_names


# ---------------------------------------------------------------------------- covering (escalation)

def _breakdown(rule: Rule) -> Iterable[Rule]:
    """``rule`` as rules of one verb, group, resource and name (``BreakdownRule``)."""
    for group in rule.api_groups:
        for resource in rule.resources:
            for verb in rule.verbs:
                if rule.resource_names:
                    for name in rule.resource_names:
                        yield Rule((verb,), (group,), (resource,), (name,))
                else:
                    yield Rule((verb,), (group,), (resource,))
    for url in rule.non_resource_urls:
        for verb in rule.verbs:
            yield Rule((verb,), non_resource_urls=(url,))


def _resources_cover(owned: Sequence[str], wanted: Sequence[str]) -> bool:
    if "*" in owned:
        return True
    for path in wanted:
        if path in owned:
            continue
        if "/" not in path or "*/" + path.split("/", 1)[1] not in owned:
            return False
    return True


def _url_covers(owner: str, sub: str) -> bool:
    return owner == sub or (owner.endswith("*") and sub.startswith(owner.rstrip("*")))


def _rule_covers(owner: Rule, sub: Rule) -> bool:
    if "*" not in owner.verbs and not set(sub.verbs) <= set(owner.verbs):
        return False
    if "*" not in owner.api_groups and not set(sub.api_groups) <= set(owner.api_groups):
        return False
    if not _resources_cover(owner.resources, sub.resources):
        return False
    if not all(any(_url_covers(o, s) for o in owner.non_resource_urls) for s in sub.non_resource_urls):
        return False
    if not sub.resource_names:
        return not owner.resource_names
    return not owner.resource_names or set(sub.resource_names) <= set(owner.resource_names)


def covers(owned: Sequence[Rule], wanted: Iterable[Rule]) -> list[Rule]:
    """The parts of ``wanted`` that no rule in ``owned`` covers (empty: covered), compacted as
    upstream's ``CompactRules`` does (one rule per group/resource/name with all its verbs)."""
    missing: list[Rule] = []
    for rule in wanted:
        for sub in _breakdown(rule):
            if not any(_rule_covers(o, sub) for o in owned):
                missing.append(sub)
    simple: dict[tuple[str, str, tuple[str, ...]], list[str]] = {}
    out: list[Rule] = []
    for rule in missing:
        if rule.non_resource_urls:
            out.append(rule)
            continue
        simple.setdefault((rule.api_groups[0], rule.resources[0], rule.resource_names), []).extend(rule.verbs)
    out.extend(Rule(tuple(verbs), (group,), (resource,), names) for (group, resource, names), verbs in simple.items())
    return out


def go_strings(values: Sequence[str]) -> str:
    """A string list as Go's ``%q`` prints it: ``["a" "b"]``."""
    return "[" + " ".join(go_quote(v) for v in values) + "]"


def compact_string(rule: Rule) -> str:
    """``rbacv1helpers.CompactString``: ``{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}``."""
    parts = []
    for label, values in (("APIGroups", rule.api_groups), ("Resources", rule.resources),
                          ("NonResourceURLs", rule.non_resource_urls), ("ResourceNames", rule.resource_names),
                          ("Verbs", rule.verbs)):
        if values:
            parts.append(f"{label}:{go_strings(values)}")
    return "{" + ", ".join(parts) + "}"
