"""The ClusterRole aggregation controller (pkg/controller/clusterroleaggregation): a ClusterRole
with an ``aggregationRule`` gets as ``rules`` the rules of every other ClusterRole matching one of
its ``clusterRoleSelectors`` (in name order, duplicates dropped), rewritten whenever a
ClusterRole changes."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from samplecontroller.apimachinery import labels as labelsel
from samplecontroller.apiserver.authorization.rbac import CLUSTER_ROLES
from samplecontroller.apiserver.objects import copy_json
from samplecontroller.apiserver.storage import Event

if TYPE_CHECKING:
    from samplecontroller.apiserver.core import Core

__all__ = ["aggregate", "install"]

_MANAGER = "clusterrole-aggregation-controller"
_MAX_PASSES = 8


def _selectors(role: dict[str, Any]) -> list[labelsel.Selector]:
    rule = role.get("aggregationRule")
    selectors = rule.get("clusterRoleSelectors") if isinstance(rule, dict) else None
    out = []
    for selector in selectors if isinstance(selectors, list) else ():
        if isinstance(selector, dict):
            try:
                out.append(labelsel.selector_from_label_selector(selector))
            except ValueError:
                continue
    return out


def aggregate(core: Core) -> None:
    """Bring every aggregated ClusterRole's rules up to date (one write per role that changed),
    passing again while a pass changed something (an aggregated role may itself be aggregated:
    ``view`` into ``edit`` into ``admin``), at most ``_MAX_PASSES`` times."""
    for _ in range(_MAX_PASSES):
        if not _aggregate_once(core):
            return


def _aggregate_once(core: Core) -> bool:
    res = core.mapper.get("rbac.authorization.k8s.io", "v1", "clusterroles")
    if res is None:
        return False
    changed = False
    roles = [(name, entry.obj) for (_, name), entry in core.store.list(CLUSTER_ROLES, None)]
    for name, role in roles:
        selectors = _selectors(role)
        if not selectors:
            continue
        rules: list[Any] = []
        for other_name, other in roles:
            if other_name == name:
                continue
            labels = (other.get("metadata") or {}).get("labels") or {}
            if not any(s.matches(labels) for s in selectors):
                continue
            for rule in other.get("rules") or ():
                if rule not in rules:
                    rules.append(rule)
        if rules != (role.get("rules") or []):
            updated = copy_json(role)
            updated["rules"] = copy_json(rules)
            core.update(res, "", name, updated, manager=_MANAGER)
            changed = True
    return changed


def install(core: Core, schedule: Callable[..., None]) -> None:
    """Aggregate now and after every ClusterRole write (through ``schedule``, on the server loop)."""
    aggregate(core)
    pending = False

    def run() -> None:
        nonlocal pending
        pending = False
        aggregate(core)

    def on_event(event: Event) -> None:
        nonlocal pending
        if event.skey == CLUSTER_ROLES and not pending:
            pending = True
            schedule(run)

    core.store.listeners.append(on_event)
