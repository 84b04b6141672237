"""RBAC declared next to the code that needs it (controller-tools' ``+kubebuilder:rbac`` markers).

    from samplecontroller.runtime import rbac

    rbac.rule(groups="batch", resources="jobs",
              verbs="get;list;watch;create;update;patch;delete")

    @rbac.rule(groups="batch.tutorial.kubebuilder.io", resources="cronjobs/status",
               verbs="get;update;patch")
    class CronJobReconciler: ...

- ``rule(...)`` registers one declaration when it is called (at import of its module) and returns
  a decorator that hands back what it decorates unchanged, so the same call works at module level,
  on a class or function, beside a reconciler, a daemon or a webhook. Its source is the module
  (module level) or the decorated object's qualified name (no line numbers: moving code does not
  make the generated role stale). Arguments are the marker's:
  ``groups`` (``"core"`` or ``""`` is the core group), ``resources`` (``plural`` or
  ``plural/subresource``), ``verbs``, ``resource_names``, ``urls`` (non-resource URLs) and
  ``namespace`` (a Role in that namespace instead of the ClusterRole). Each is a sequence of
  strings or one string with ``;`` between items, as in a marker. A mistake (no verbs, a verb
  that is not lower case, neither resources nor urls, urls with groups or a namespace) is a
  ``RuleError`` naming the declaration.
- ``declared(packages)``: the declarations made in modules under ``packages`` (import them first:
  ``import_all`` imports a package's modules), each with its ``source`` (``module:line``, or the
  decorated object's qualified name).
- ``inferred(mgr)``: what the toolkit knows a Manager's runnables need, once their setup has run:
  ``get;list;watch`` on every kind a controller watches (``for_``, ``owns``, ``watches``) and on
  the kind of every daemon or timer; ``patch`` on it when a daemon keeps a finalizer;
  ``update`` on ``<owner plural>/finalizers`` for ``owns`` (blockOwnerDeletion, as kubebuilder's
  scaffold: clusters with the OwnerReferencesPermissionEnforcement plugin ask for it); Events
  ``create;patch`` (core, and ``events.k8s.io`` when that recorder is used) for every controller
  and daemon (their context's logger can post them) and recorder. What a reconciler reads or
  writes through its client is not inferred: declare it.
- ``leader_election(namespace)``: the Lease rules of leader election (``get;create;update`` on
  ``coordination.k8s.io`` leases) in that namespace.
- ``normalize(rules)``: controller-gen's ``NormalizeRules``: one rule per resource, verbs of equal
  keys merged, then resources, groups and URLs merged where the rest is equal, sorted by key; a
  ``*`` verb stands alone. ``roles(rules, name)``: the ClusterRole (rules without a namespace)
  and one Role per namespace, sorted by namespace, as ``GenerateRoles``.
- ``suggestion(verb, group, resource, namespace)``: the declaration that grants a refused request
  (the test kit's Forbidden message names it).
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from samplecontroller.runtime.handler import EnqueueRequestForOwner

__all__ = ["Rule", "RuleError", "declared", "import_all", "inferred", "leader_election", "normalize", "roles",
           "rule", "suggestion"]

F = TypeVar("F")

LEASE_VERBS = ("create", "get", "update")
"""What leader election does with its Lease (``leaderelection.LeaseLock``): get, create, update."""


class RuleError(ValueError):
    """A declaration that cannot be a PolicyRule (see the module docstring)."""


@dataclass(frozen=True)
class Rule:
    """One PolicyRule and where it comes from (``sources``: declarations or inference reasons)."""

    groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()
    namespace: str = ""
    sources: tuple[str, ...] = field(default=(), compare=False)

    def policy_rule(self) -> dict[str, Any]:
        """The rule as an ``rbac.authorization.k8s.io/v1`` PolicyRule (empty fields left out)."""
        out: dict[str, Any] = {}
        if self.groups or self.resources:
            out["apiGroups"] = list(self.groups)
        if self.resources:
            out["resources"] = list(self.resources)
        if self.resource_names:
            out["resourceNames"] = list(self.resource_names)
        if self.urls:
            out["nonResourceURLs"] = list(self.urls)
        out["verbs"] = list(self.verbs)
        return out


_DECLARED: list[Rule] = []


def _items(value: str | Sequence[str], what: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(";")) if value else ()
    if not all(isinstance(v, str) for v in value):
        raise RuleError(f"rbac.rule at {where}: {what} must be strings, got {list(value)!r}")
    return tuple(value)


def _caller(depth: int) -> str:
    frame = sys._getframe(depth)
    return f"{frame.f_globals.get('__name__', '?')}:{frame.f_lineno}"


def _checked(r: Rule, where: str) -> Rule:
    if not r.verbs or any(not v for v in r.verbs):
        raise RuleError(f"rbac.rule at {where}: verbs are required (like verbs=\"get;list;watch\")")
    bad = [v for v in r.verbs if v != v.lower() or " " in v]
    if bad:
        raise RuleError(f"rbac.rule at {where}: verbs are lower case words, got {bad!r}")
    if not r.resources and not r.urls:
        raise RuleError(f"rbac.rule at {where}: give resources (with groups) or urls")
    if r.urls and (r.resources or r.namespace):
        raise RuleError(f"rbac.rule at {where}: urls (non-resource URLs) go in a rule of their own, "
                        "without resources or a namespace")
    if r.resources and not r.groups:
        raise RuleError(f"rbac.rule at {where}: resources need groups (\"core\" or \"\" for the core group)")
    return r


class _Declaration:
    """What ``rule`` returns: the registered rule, and a decorator naming its source."""

    def __init__(self, index: int) -> None:
        self.index = index

    @property
    def rule(self) -> Rule:
        return _DECLARED[self.index]

    def __call__(self, obj: F) -> F:
        name = f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', getattr(obj, '__name__', '?'))}"
        _DECLARED[self.index] = replace(self.rule, sources=(name,))
        return obj


def rule(*, groups: str | Sequence[str] = (), resources: str | Sequence[str] = (),
         verbs: str | Sequence[str] = (), resource_names: str | Sequence[str] = (),
         urls: str | Sequence[str] = (), namespace: str = "") -> Callable[[F], F]:
    """Declare that the code beside it needs ``verbs`` on ``resources`` (see the module docstring)."""
    where = _caller(2)
    groups_t = tuple("" if g == "core" else g for g in _items(groups, "groups", where))
    r = _checked(Rule(groups=groups_t, resources=_items(resources, "resources", where),
                      verbs=_items(verbs, "verbs", where),
                      resource_names=_items(resource_names, "resource_names", where),
                      urls=_items(urls, "urls", where), namespace=namespace, sources=(_module_of(where),)), where)
    _DECLARED.append(r)
    return _Declaration(len(_DECLARED) - 1)


def _module_of(source: str) -> str:
    return source.split(":", 1)[0]


def _under(module: str, packages: Iterable[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def declared(packages: Iterable[str]) -> list[Rule]:
    """The declarations made so far in modules under one of ``packages`` (a source is the module's
    name, or the decorated object's qualified name, which starts with it)."""
    wanted = tuple(packages)
    return [r for r in _DECLARED if r.sources and _under(r.sources[0], wanted)]


def import_all(package: str) -> None:
    """Import ``package`` and every module under it (so their declarations are registered), but
    no ``__main__`` (a program, not a module to import)."""
    mod = importlib.import_module(package)
    for info in pkgutil.walk_packages(getattr(mod, "__path__", []), prefix=package + "."):
        if info.name.rsplit(".", 1)[-1] != "__main__":
            importlib.import_module(info.name)


def _resource_of(scheme: Any, model: Any) -> tuple[str, str]:
    """(group, plural) of a watched cache key: a model type, an ``Unstructured`` or ``OnlyMetadata``."""
    inner = getattr(model, "model", None)
    if inner is not None and not isinstance(model, type):
        model = inner  # OnlyMetadata
    api_version = getattr(model, "api_version", None)
    if not isinstance(model, type) and isinstance(api_version, str):  # Unstructured
        group = api_version.rpartition("/")[0]
        return group, str(model.resource)
    info = scheme.info_for(model)
    return info.group, info.resource


def _kind_sources(runnable: Any) -> list[Any]:
    sources = getattr(runnable, "_sources", None)
    return list(sources) if isinstance(sources, list) else []


def inferred(mgr: Any) -> list[Rule]:
    """What ``mgr``'s runnables need that the toolkit knows for certain (see the module docstring)."""
    scheme = mgr.get_scheme()
    out: list[Rule] = []
    runnables = list(getattr(mgr, "_leader", [])) + list(getattr(mgr, "_others", []))
    events = getattr(mgr, "_broadcaster", None) is not None
    for runnable in runnables:
        name = getattr(runnable, "name", type(runnable).__name__)
        for src in _kind_sources(runnable):
            model = getattr(src, "model", None)
            if model is None:
                continue
            events = True
            group, plural = _resource_of(scheme, model)
            out.append(Rule(groups=(group,), resources=(plural,), verbs=("get", "list", "watch"),
                            sources=(f"controller {name} watches {plural}",)))
            handler = getattr(src, "handler", None)
            if isinstance(handler, EnqueueRequestForOwner):
                oplural = next((i.resource for i in scheme.all()
                                if i.group == handler.group and i.kind == handler.kind), None)
                if oplural is not None:
                    out.append(Rule(groups=(handler.group,), resources=(f"{oplural}/finalizers",), verbs=("update",),
                                    sources=(f"controller {name} owns {plural} (blockOwnerDeletion)",)))
        spec = getattr(runnable, "spec", None)
        model = getattr(spec, "model", None)
        if spec is not None and isinstance(model, type) and hasattr(spec, "finalizer"):  # a daemon or timer
            events = True  # its context's logger can post Events
            group, plural = _resource_of(scheme, model)
            dname = getattr(spec, "name", "?")
            out.append(Rule(groups=(group,), resources=(plural,), verbs=("get", "list", "watch"),
                            sources=(f"daemon {dname} watches {plural}",)))
            if spec.finalizer:
                out.append(Rule(groups=(group,), resources=(plural,), verbs=("patch",),
                                sources=(f"daemon {dname} keeps the finalizer {spec.finalizer}",)))
    if events:
        out.append(Rule(groups=("",), resources=("events",), verbs=("create", "patch"),
                        sources=("the manager's event recorder",)))
    if mgr.__dict__.get("_events_v1_recorders"):
        out.append(Rule(groups=("events.k8s.io",), resources=("events",), verbs=("create", "patch"),
                        sources=("the manager's events.k8s.io recorder",)))
    return out


def leader_election(namespace: str) -> Rule:
    """The Lease rule of leader election in ``namespace`` (a Role there)."""
    return Rule(groups=("coordination.k8s.io",), resources=("leases",), verbs=LEASE_VERBS, namespace=namespace,
                sources=("leader election",))


def _norm(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(set(values)))


def _key(r: Rule) -> tuple[str, str, str, str]:
    return ("&".join(r.groups), "&".join(r.resources), "&".join(r.resource_names), "&".join(r.urls))


def _merge(rules: list[Rule], key: Callable[[Rule], Any], attr: str) -> list[Rule]:
    merged: dict[Any, Rule] = {}
    for r in rules:
        k = key(r)
        if k in merged:
            have = merged[k]
            combined: dict[str, Any] = {attr: _norm(getattr(have, attr) + getattr(r, attr))}
            merged[k] = replace(have, sources=_norm(have.sources + r.sources), **combined)
        else:
            merged[k] = r
    return list(merged.values())


def normalize(rules: Iterable[Rule]) -> list[Rule]:
    """controller-gen's NormalizeRules over ``rules`` of one role (see the module docstring)."""
    split: list[Rule] = []
    for r in rules:
        base = replace(r, groups=_norm("" if g == "core" else g for g in r.groups), verbs=_norm(r.verbs),
                       resource_names=_norm(r.resource_names), urls=_norm(r.urls), namespace="")
        if r.resources:
            split.extend(replace(base, resources=(res,)) for res in _norm(r.resources))
        else:
            split.append(replace(base, resources=()))
    merged = _merge(split, _key, "verbs")
    merged = _merge(merged, lambda r: (r.groups, r.resource_names, r.urls, r.verbs), "resources")
    merged = _merge(merged, lambda r: (r.resources, r.resource_names, r.urls, r.verbs), "groups")
    merged = _merge(merged, lambda r: (r.groups, r.resources, r.resource_names, r.verbs), "urls")
    out = [replace(r, verbs=("*",)) if "*" in r.verbs else r for r in merged]
    return sorted(out, key=lambda r: " + ".join(_key(r)))


def roles(rules: Iterable[Rule], name: str) -> list[dict[str, Any]]:
    """The ClusterRole ``name`` (rules without a namespace; always there, maybe with no rules, so a
    new project's kustomization has it) and a Role ``name`` per namespace, as controller-gen's GenerateRoles (each as a dict; ``rules`` hold ``Rule`` values, see ``render``)."""
    by_namespace: dict[str, list[Rule]] = {}
    for r in rules:
        by_namespace.setdefault(r.namespace, []).append(r)
    by_namespace.setdefault("", [])
    out: list[dict[str, Any]] = []
    for namespace in sorted(by_namespace):
        normalized = normalize(by_namespace[namespace])
        if not normalized and namespace:
            continue
        metadata: dict[str, Any] = {"name": name}
        if namespace:
            metadata["namespace"] = namespace
        out.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role" if namespace else "ClusterRole",
                    "metadata": metadata, "rules": normalized})
    return out


def suggestion(verb: str, group: str, resource: str, namespace: str = "") -> str:
    """The declaration granting ``verb`` on ``resource`` (``plural`` or ``plural/sub``) of ``group``."""
    args = [f'groups="{group or "core"}"', f'resources="{resource}"', f'verbs="{verb}"']
    if namespace:
        args.append(f'namespace="{namespace}"')
    return f"rbac.rule({', '.join(args)})"
