"""The namespace controller: a terminating namespace has its content deleted, its deletion
conditions kept up to date (as kube-controller-manager's namespace deleter does), and is
removed once it is empty and its finalizers are gone."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from samplecontroller.apiserver.controllers.base import Controller, Schedule
from samplecontroller.apiserver.controllers.garbagecollector import GarbageCollector
from samplecontroller.apiserver.core import NS_KEY, Core
from samplecontroller.apiserver.objects import set_condition

__all__ = ["NamespaceController"]

_NS_CONDITIONS_OK = (
    ("NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered", "All resources successfully discovered"),
    ("NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions", "All legacy kube types successfully parsed"),
    ("NamespaceDeletionContentFailure", "ContentDeleted", "All content successfully deleted, may be waiting on finalization"),
    ("NamespaceContentRemaining", "ContentRemoved", "All content successfully removed"),
    ("NamespaceFinalizersRemaining", "ContentRemoved", "All content successfully removed"),
)


class NamespaceController(Controller):
    """Passes over terminating namespaces. ``request`` coalesces: a namespace has at most one pass
    waiting at a time (the earliest asked for), however many events its content produces."""

    RETRY = 0.5
    """Seconds between passes while content remains."""

    def __init__(self, core: Core, gc: GarbageCollector, schedule: Schedule) -> None:
        super().__init__(core, schedule)
        self.gc = gc
        self._due: dict[str, float] = {}  # namespace -> when its waiting pass runs (monotonic)

    def request(self, name: str, delay: float = 0.0) -> None:
        """Ask for a pass over ``name`` in ``delay`` s; a pass already due by then covers it."""
        due = time.monotonic() + delay
        waiting = self._due.get(name)
        if waiting is not None and waiting <= due:
            return
        self._due[name] = due
        self.schedule(self._run, name, due, delay=delay)

    def _run(self, name: str, due: float) -> None:
        if self._due.get(name) != due:
            return  # superseded by an earlier pass
        del self._due[name]
        self.finish(name)

    def finish(self, name: str) -> None:
        """One pass: delete the namespace's content, record what remains in status.conditions,
        remove the namespace once it is empty and its finalizers are gone (else retry later)."""
        mapper = self.core.mapper
        stores = [r for r in mapper if r.namespaced and r.version == mapper.versions(r.group)[0]]
        for res in stores:
            for key, entry in self.store.list(res.storage_key, name):
                if not (entry.obj.get("metadata") or {}).get("deletionTimestamp"):
                    self.gc.delete((res.storage_key, key[0], key[1]), "Background")
        remaining: dict[str, int] = {}
        finalizers: dict[str, int] = {}
        for res in stores:
            entries = self.store.list(res.storage_key, name)
            if entries:
                remaining[f"{res.plural}.{res.group}"] = len(entries)
            for _, entry in entries:
                for fin in (entry.obj.get("metadata") or {}).get("finalizers") or ():
                    finalizers[str(fin)] = finalizers.get(str(fin), 0) + 1
        current = self.store.get(NS_KEY, "", name)
        if current is None:
            return
        new = current.copy()
        _set_namespace_conditions(new, remaining, finalizers)
        if remaining:
            if new != current.obj:
                self.store.put(NS_KEY, new)
            self.request(name, delay=self.RETRY)
            return
        self._remove(name, new)

    def _remove(self, name: str, new: dict[str, Any]) -> None:
        spec = new.get("spec") or {}
        spec["finalizers"] = [f for f in spec.get("finalizers") or () if f != "kubernetes"]
        if not spec["finalizers"]:
            spec.pop("finalizers")
        new["spec"] = spec
        if new["metadata"].get("finalizers"):
            self.store.put(NS_KEY, new)
        else:
            self.store.delete(NS_KEY, "", name)


def _set_namespace_conditions(ns: dict[str, Any], remaining: Mapping[str, int], finalizers: Mapping[str, int]) -> None:
    """Set the five deletion conditions the namespace controller maintains on a terminating
    namespace: ``remaining`` counts objects per ``<resource>.<group>``, ``finalizers`` counts the
    finalizers those objects still carry."""
    failing: dict[str, tuple[str, str]] = {}
    if remaining:
        listed = ", ".join(sorted(f"{gr} has {n} resource instances" for gr, n in remaining.items()))
        failing["NamespaceContentRemaining"] = ("SomeResourcesRemain", f"Some resources are remaining: {listed}")
    if finalizers:
        listed = ", ".join(sorted(f"{fin} in {n} resource instances" for fin, n in finalizers.items()))
        failing["NamespaceFinalizersRemaining"] = ("SomeFinalizerRemain", f"Some finalizers are remaining: {listed}")
    for ctype, ok_reason, ok_message in _NS_CONDITIONS_OK:
        reason, message = failing.get(ctype, (ok_reason, ok_message))
        set_condition(ns, ctype, "True" if ctype in failing else "False", reason, message)
