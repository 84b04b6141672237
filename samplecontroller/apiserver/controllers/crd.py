"""The CRD controllers: a CRD's served resources appear in the REST mapper (and discovery) as
soon as it is stored and disappear when it is removed (their watches end); deleting a CRD
deletes its custom objects first, then drops the cleanup finalizer."""

from __future__ import annotations

from typing import Any

from samplecontroller.apiserver.controllers.base import Controller, Reconcile, Schedule
from samplecontroller.apiserver.controllers.garbagecollector import GarbageCollector
from samplecontroller.apiserver.core import CRD_KEY, Core
from samplecontroller.apiserver.objects import deep_get
from samplecontroller.apiserver.strategies import CRD_FINALIZER

__all__ = ["CRDController"]


class CRDController(Controller):
    def __init__(self, core: Core, gc: GarbageCollector, schedule: Schedule, reconcile: Reconcile) -> None:
        super().__init__(core, schedule)
        self.gc = gc
        self.reconcile = reconcile
        for _, entry in self.store.list(CRD_KEY, None):
            self.established(entry.obj)

    def established(self, crd: dict[str, Any]) -> None:
        """Serve ``crd``'s resources (created or updated)."""
        name = str(deep_get(crd, "metadata", "name") or "")
        self.core.crds[name] = crd
        self.core.mapper.set_crd(crd)
        self.core.mapper.changed()

    def removed(self, crd: dict[str, Any]) -> None:
        """Stop serving ``crd``'s resources and end their watches."""
        name = str(deep_get(crd, "metadata", "name") or "")
        self.core.crds.pop(name, None)
        self.core.mapper.remove_crd(name)
        group = str(deep_get(crd, "spec", "group") or "")
        plural = str(deep_get(crd, "spec", "names", "plural") or "")
        self.store.close_watchers(f"{group}/{plural}")
        self.core.mapper.changed()

    def terminating_crd_of(self, skey: str) -> str | None:
        """The name of the CRD whose objects are stored under ``skey`` if it is being deleted."""
        group, _, plural = skey.partition("/")
        name = f"{plural}.{group}"
        crd = self.core.crds.get(name)
        return name if crd is not None and deep_get(crd, "metadata", "deletionTimestamp") else None

    def finish(self, name: str, crd: dict[str, Any]) -> None:
        """Delete the CRD's objects; drop its cleanup finalizer once none is left."""
        group = str(deep_get(crd, "spec", "group") or "")
        plural = str(deep_get(crd, "spec", "names", "plural") or "")
        skey = f"{group}/{plural}"
        keys = list(self.store.drop_all(skey))
        for ns, obj_name in keys:
            entry = self.store.get(skey, ns, obj_name)
            if entry is not None and not (entry.obj.get("metadata") or {}).get("deletionTimestamp"):
                self.gc.delete((skey, ns, obj_name), "Background")
        if self.store.count(skey):
            self.schedule(self.reconcile, CRD_KEY, "", name, delay=0.5)
            return
        self.gc.remove_finalizer(CRD_KEY, "", name, CRD_FINALIZER)
