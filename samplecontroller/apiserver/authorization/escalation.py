"""Escalation prevention on RBAC writes (pkg/registry/rbac/{role,clusterrole,rolebinding,
clusterrolebinding}/policybased and pkg/registry/rbac/validation ``ConfirmNoEscalation``).

A user may create or update a Role/ClusterRole only with rules they hold themselves (in the
request's namespace), unless they are in ``system:masters`` or may ``escalate`` that role;
setting a ClusterRole's ``aggregationRule`` needs full authority. A RoleBinding/ClusterRoleBinding
needs ``bind`` on the referenced role, or holding every rule of that role. A denial is a 403 of
the written resource: ``user "u" (groups=["g"]) is attempting to grant RBAC permissions not
currently held:\\n{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from samplecontroller.apiserver.authentication import UserInfo
from samplecontroller.apiserver.authorization.attributes import Attributes, go_quote
from samplecontroller.apiserver.authorization.rbac import GROUP, Authorizer, mapping
from samplecontroller.apiserver.authorization.rules import (
    FULL_AUTHORITY,
    Rule,
    compact_string,
    covers,
    go_strings,
    rules_of,
)
from samplecontroller.apiserver.errors import APIError
from samplecontroller.apiserver.restmapper import Resource

__all__ = ["check", "guards"]

_ROLES = frozenset({"roles", "clusterroles"})
_BINDINGS = frozenset({"rolebindings", "clusterrolebindings"})
_GC_FIELDS = ("ownerReferences", "finalizers", "resourceVersion", "managedFields", "generation")


def guards(res: Resource) -> bool:
    """Whether writes of ``res`` are checked for escalation."""
    return res.group == GROUP and res.plural in _ROLES | _BINDINGS


def _forbidden(res: Resource, name: str, message: str) -> APIError:
    qualified = f"{res.plural}.{res.group}"
    return APIError(403, "Forbidden", f"{qualified} {go_quote(name)} is forbidden: {message}",
                    {"name": name, "group": res.group, "kind": res.plural})


def _confirm(authorizer: Authorizer, user: UserInfo, namespace: str, wanted: list[Rule]) -> str:
    """"" when ``user`` holds every rule of ``wanted`` in ``namespace``, else the message."""
    held = authorizer.rules_for(user, namespace)
    missing = covers([rule for _, rule in held.rules], wanted)
    if not missing:
        return ""
    descriptions = sorted({compact_string(rule) for rule in missing})
    message = (f"user {go_quote(user.name)} (groups={go_strings(user.groups)}) is attempting to grant RBAC permissions "
               "not currently held:\n" + "\n".join(descriptions))
    if held.errors:
        message += f"; resolution errors: [{held.reason().removeprefix('RBAC: ')}]"
    return message


def _only_gc_fields(obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> bool:
    if old is None:
        return False

    def strip(o: Mapping[str, Any]) -> dict[str, Any]:
        meta = {k: v for k, v in (o.get("metadata") or {}).items() if k not in _GC_FIELDS}
        return {**o, "metadata": meta}

    return strip(obj) == strip(old)


def check(authorizer: Authorizer | None, user: UserInfo, res: Resource, namespace: str, obj: Any,
          old: Mapping[str, Any] | None = None) -> None:
    """Raise the 403 when writing ``obj`` (replacing ``old``) of ``res`` would escalate ``user``'s
    privileges (see the module docstring); other resources pass."""
    if authorizer is None or user.is_master or not guards(res) or not isinstance(obj, dict):
        return
    if _only_gc_fields(obj, old):
        return
    name = str((obj.get("metadata") or {}).get("name") or "")
    if res.plural in _ROLES:
        escalate = Attributes(user, "escalate", True, namespace, res.group, "*", res.plural, "", name)
        if authorizer.allowed(escalate):
            return
        message = _confirm(authorizer, user, namespace, rules_of(obj))
        if message:
            raise _forbidden(res, name, message)
        if res.plural == "clusterroles" and obj.get("aggregationRule") and \
                _confirm(authorizer, user, namespace, list(FULL_AUTHORITY)):
            raise _forbidden(res, name, "must have cluster-admin privileges to use the aggregationRule")
        return
    ref = mapping(obj.get("roleRef"))
    kind = ref.get("kind")
    if kind in ("ClusterRole", "Role"):
        bind = Attributes(user, "bind", True, namespace, str(ref.get("apiGroup") or ""), "",
                          "clusterroles" if kind == "ClusterRole" else "roles", "", str(ref.get("name") or ""))
        if authorizer.allowed(bind):
            return
    rules, error = authorizer.role_rules(ref, namespace)
    if error:
        raise _forbidden(res, name, error)
    message = _confirm(authorizer, user, namespace, rules)
    if message:
        raise _forbidden(res, name, message)
