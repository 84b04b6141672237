"""The garbage collector: orphan and foreground deletion (the ``orphan`` and
``foregroundDeletion`` finalizers, ``blockOwnerDeletion``), and background collection of
dependents whose owners are all gone. Works through the store's dependents index and deletes
through ``Core.delete`` (with a propagation policy), as kube-controller-manager's does."""

from __future__ import annotations

from typing import Any

from samplecontroller.apiserver.controllers.base import Controller
from samplecontroller.apiserver.errors import APIError

__all__ = ["GarbageCollector"]


class GarbageCollector(Controller):
    def delete(self, loc: tuple[str, str, str], policy: str) -> None:
        """Delete the object at ``loc`` (storage key, namespace, name) with ``policy``; gone is fine."""
        found = self.core.mapper.by_storage_key(loc[0])
        if not found:
            return
        try:
            self.core.delete(found[0], loc[1], loc[2], {"propagationPolicy": policy})
        except APIError as err:
            if err.code != 404:
                raise

    def remove_finalizer(self, skey: str, ns: str, name: str, finalizer: str) -> None:
        """Drop ``finalizer``; an object being deleted with no finalizer left is removed."""
        entry = self.store.get(skey, ns, name)
        if entry is None:
            return
        obj = entry.copy()
        meta = obj["metadata"]
        meta["finalizers"] = [f for f in meta.get("finalizers") or () if f != finalizer]
        if not meta["finalizers"]:
            del meta["finalizers"]
            if meta.get("deletionTimestamp"):
                self.store.delete(skey, ns, name)
                return
        self.store.put(skey, obj)

    def finish_deletion(self, skey: str, ns: str, name: str, meta: dict[str, Any]) -> None:
        """Orphan or foreground-delete the dependents of an object being deleted."""
        finalizers = list(meta.get("finalizers") or ())
        uid = str(meta.get("uid"))
        if "orphan" in finalizers:
            for dep in list(self.store.dependents.get(uid, ())):
                self._strip_owner(dep, uid)
            self.remove_finalizer(skey, ns, name, "orphan")
        elif "foregroundDeletion" in finalizers:
            blocking = False
            for dep in list(self.store.dependents.get(uid, ())):
                dep_entry = self.store.get(*dep)
                if dep_entry is None:
                    continue
                refs = (dep_entry.obj.get("metadata") or {}).get("ownerReferences") or ()
                if any(r.get("uid") == uid and r.get("blockOwnerDeletion") for r in refs if isinstance(r, dict)):
                    blocking = True
                if not (dep_entry.obj.get("metadata") or {}).get("deletionTimestamp"):
                    self.delete(dep, "Foreground")
            if not blocking:
                self.remove_finalizer(skey, ns, name, "foregroundDeletion")

    def _strip_owner(self, loc: tuple[str, str, str], owner_uid: str) -> None:
        entry = self.store.get(*loc)
        if entry is None:
            return
        obj = entry.copy()
        meta = obj["metadata"]
        refs = [r for r in meta.get("ownerReferences") or () if r.get("uid") != owner_uid]
        if refs:
            meta["ownerReferences"] = refs
        else:
            meta.pop("ownerReferences", None)
        self.store.put(loc[0], obj)

    def collect_dependents(self, owner_uid: str) -> None:
        """The owner is gone (background deletion): delete dependents that have no owner left."""
        for dep in list(self.store.dependents.get(owner_uid, ())):
            entry = self.store.get(*dep)
            if entry is not None:
                self.check_owners(*dep, entry.obj)

    def check_owners(self, skey: str, ns: str, name: str, obj: dict[str, Any]) -> None:
        """Delete the object (in the background) if none of its owners exists."""
        refs = [r for r in (obj.get("metadata") or {}).get("ownerReferences") or () if isinstance(r, dict)]
        if not refs:
            return
        alive = []
        for ref in refs:
            loc = self.store.by_uid(str(ref.get("uid")))
            if loc is not None and (loc[1] == "" or loc[1] == ns):
                alive.append(ref)
        if alive:
            return
        self.delete((skey, ns, name), "Background")
