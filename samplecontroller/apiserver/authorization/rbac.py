"""The authorizer of every request: kube-apiserver's chain of the privileged-groups authorizer
(``system:masters`` may do anything) and the RBAC authorizer (plugin/pkg/auth/authorizer/rbac
over pkg/registry/rbac/validation's rule resolver).

``Authorizer(store)`` reads Roles, ClusterRoles, RoleBindings and ClusterRoleBindings straight
from the store. It keeps an index of bindings by subject and a cache of the rules each
(user, groups, namespace) holds, both dropped whenever an RBAC object is written (a store
listener), so a request costs a dict lookup and a scan of the caller's own rules; and the
decisions themselves, by everything RBAC decides on, dropped with them (a request already decided
costs one dict lookup; an RBAC change applies to the very next request).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from samplecontroller.apiserver.authentication import SYSTEM_MASTERS, UserInfo, split_service_account
from samplecontroller.apiserver.authorization.attributes import Attributes
from samplecontroller.apiserver.authorization.rules import Rule, rule_allows, rules_of
from samplecontroller.apiserver.storage import Event, Store

__all__ = ["CLUSTER_ROLES", "CLUSTER_ROLE_BINDINGS", "GROUP", "RBAC_KEYS", "ROLES", "ROLE_BINDINGS", "Authorizer", "Decision", "mapping",
           "RuleSet"]

GROUP = "rbac.authorization.k8s.io"
ROLES = f"{GROUP}/roles"
CLUSTER_ROLES = f"{GROUP}/clusterroles"
ROLE_BINDINGS = f"{GROUP}/rolebindings"
CLUSTER_ROLE_BINDINGS = f"{GROUP}/clusterrolebindings"
RBAC_KEYS = frozenset({ROLES, CLUSTER_ROLES, ROLE_BINDINGS, CLUSTER_ROLE_BINDINGS})
_CACHE_LIMIT = 4096

SubjectKey = tuple[str, ...]


@dataclass(frozen=True)
class Decision:
    """An authorizer's answer: ``allowed`` (else no opinion, which denies) and its reason
    (``RBAC: allowed by ...``, or the resolution errors of a denial)."""

    allowed: bool
    reason: str = ""


@dataclass(frozen=True)
class RuleSet:
    """The rules a user holds in a namespace, each with the binding it comes from, and the
    errors met resolving them (a binding to a missing role)."""

    rules: tuple[tuple[str, Rule], ...]
    errors: tuple[str, ...]

    def reason(self) -> str:
        """``RBAC: <errors>`` as Go's ``utilerrors.NewAggregate`` prints them ("" without errors)."""
        if not self.errors:
            return ""
        text = self.errors[0] if len(self.errors) == 1 else "[" + ", ".join(self.errors) + "]"
        return f"RBAC: {text}"


def mapping(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def _subject_keys(subject: Mapping[str, Any], namespace: str) -> SubjectKey | None:
    kind, name = subject.get("kind"), str(subject.get("name") or "")
    if kind == "User":
        return ("User", name)
    if kind == "Group":
        return ("Group", name)
    if kind == "ServiceAccount":
        sa_ns = str(subject.get("namespace") or namespace)
        return ("User", f"system:serviceaccount:{sa_ns}:{name}") if sa_ns else None
    return None


def _describe(subject: Mapping[str, Any], binding_ns: str) -> str:
    kind, name = str(subject.get("kind") or ""), str(subject.get("name") or "")
    if kind == "ServiceAccount":
        return f'{kind} "{name}/{subject.get("namespace") or binding_ns}"'
    return f'{kind} "{name}"'


class _Index:
    """Bindings by subject: (binding kind, binding) lists for each ``("User", name)`` /
    ``("Group", name)`` key (a service account subject is its user name), per namespace
    ("" for ClusterRoleBindings)."""

    def __init__(self, store: Store) -> None:
        self.by_ns: dict[str, dict[SubjectKey, list[tuple[str, dict[str, Any]]]]] = {}
        for skey, kind in ((CLUSTER_ROLE_BINDINGS, "ClusterRoleBinding"), (ROLE_BINDINGS, "RoleBinding")):
            for (ns, _name), entry in store.list(skey, None):
                binding = entry.obj
                subjects = binding.get("subjects")
                for subject in subjects if isinstance(subjects, list) else ():
                    if not isinstance(subject, dict):
                        continue
                    key = _subject_keys(subject, ns)
                    if key is not None:
                        self.by_ns.setdefault(ns, {}).setdefault(key, []).append((kind, binding))


class Authorizer:
    """Authorizes requests (``authorize``), lists a user's rules (``rules_for``) and resolves a
    role reference (``role_rules``); see the module docstring."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._index: _Index | None = None
        self._cache: dict[tuple[str, tuple[str, ...], str], RuleSet] = {}
        self._decisions: dict[tuple[Any, ...], Decision] = {}
        self.denial_listeners: list[Callable[[Attributes, dict[str, Any]], None]] = []
        """Called (on the server's loop: keep them short) with the attributes and the 403 Status of
        every request the authorization filter refuses (the test kit's operator rights check)."""
        store.listeners.append(self._on_event)

    def _on_event(self, event: Event) -> None:
        if event.skey in RBAC_KEYS:
            self._index = None
            self._cache.clear()
            self._decisions.clear()

    # ------------------------------------------------------------------ rule resolution

    def role_rules(self, role_ref: Mapping[str, Any], namespace: str) -> tuple[list[Rule], str]:
        """The rules of a binding's ``roleRef`` (``GetRoleReferenceRules``) and the error ("" if
        none): a missing role is ``role.rbac.authorization.k8s.io "x" not found``."""
        kind, name = role_ref.get("kind"), str(role_ref.get("name") or "")
        if kind == "ClusterRole":
            entry = self.store.get(CLUSTER_ROLES, "", name)
            return (rules_of(entry.obj), "") if entry else ([], f'clusterrole.{GROUP} "{name}" not found')
        if kind == "Role":
            entry = self.store.get(ROLES, namespace, name)
            return (rules_of(entry.obj), "") if entry else ([], f'role.{GROUP} "{name}" not found')
        return [], f'unsupported role reference kind: "{kind}"'

    def rules_for(self, user: UserInfo, namespace: str) -> RuleSet:
        """Every rule ``user`` holds in ``namespace`` (cluster-wide ones only for ""), with the
        binding each comes from (``VisitRulesFor``: ClusterRoleBindings first)."""
        key = (user.name, user.groups, namespace)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        if self._index is None:
            self._index = _Index(self.store)
        subject_keys = [("User", user.name), *(("Group", g) for g in user.groups)]
        sa = split_service_account(user.name)
        rules: list[tuple[str, Rule]] = []
        errors: list[str] = []
        for ns in ("", namespace) if namespace else ("",):
            by_subject = self._index.by_ns.get(ns) or {}
            seen: set[int] = set()
            found: list[tuple[str, dict[str, Any]]] = []
            for skey in subject_keys:
                for kind, binding in by_subject.get(skey, ()):
                    if id(binding) not in seen:
                        seen.add(id(binding))
                        found.append((kind, binding))
            found.sort(key=lambda kb: str((kb[1].get("metadata") or {}).get("name") or ""))
            for kind, binding in found:
                subject = self._matching_subject(binding, user, sa, ns)
                ref = mapping(binding.get("roleRef"))
                role_rules, error = self.role_rules(ref, ns)
                if error:
                    errors.append(error)
                    continue
                name = str((binding.get("metadata") or {}).get("name") or "")
                binding_name = f"{name}/{ns}" if ns else name
                source = (f'{kind} "{binding_name}" of {ref.get("kind")} "{ref.get("name")}" to '
                          f"{_describe(subject, ns)}")
                rules.extend((source, rule) for rule in role_rules)
        result = RuleSet(tuple(rules), tuple(errors))
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        self._cache[key] = result
        return result

    @staticmethod
    def _matching_subject(binding: Mapping[str, Any], user: UserInfo, sa: tuple[str, str] | None,
                          ns: str) -> Mapping[str, Any]:
        for subject in binding.get("subjects") or ():
            if not isinstance(subject, dict):
                continue
            kind, name = subject.get("kind"), subject.get("name")
            if (kind == "User" and name == user.name) or (kind == "Group" and name in user.groups):
                return subject
            if kind == "ServiceAccount" and sa is not None and (str(subject.get("namespace") or ns), name) == sa:
                return subject
        return {}

    # ------------------------------------------------------------------ decisions

    def authorize(self, attrs: Attributes) -> Decision:
        """Allowed for ``system:masters``, else when one of the user's rules allows the request;
        otherwise denied, with the RBAC resolution errors as reason."""
        if SYSTEM_MASTERS in attrs.user.groups:
            return Decision(True)
        # everything RBAC decides on (user name and groups, not uid or extra); the decisions are
        # dropped with the rules whenever an RBAC object is written, so a change applies at once
        key = (attrs.user.name, attrs.user.groups, attrs.verb, attrs.resource_request, attrs.namespace,
               attrs.api_group, attrs.resource, attrs.subresource, attrs.name,
               "" if attrs.resource_request else attrs.path)
        decision = self._decisions.get(key)
        if decision is None:
            decision = self._decide(attrs)
            if len(self._decisions) >= _CACHE_LIMIT:
                self._decisions.clear()
            self._decisions[key] = decision
        return decision

    def _decide(self, attrs: Attributes) -> Decision:
        ruleset = self.rules_for(attrs.user, attrs.namespace)
        for source, rule in ruleset.rules:
            if rule_allows(attrs, rule):
                return Decision(True, f"RBAC: allowed by {source}")
        return Decision(False, ruleset.reason())

    def allowed(self, attrs: Attributes) -> bool:
        return self.authorize(attrs).allowed
