"""The strategies of the built-in kinds that differ from the generic one (``base.Strategy``)."""

from __future__ import annotations

from typing import Any

from samplecontroller.apiserver import validation
from samplecontroller.apiserver.objects import deep_get, meta_of
from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.schema import FieldError
from samplecontroller.apiserver.strategies.base import Obj, Schema, Strategy

__all__ = ["KeepsStatusStrategy", "LoadBalancerStrategy", "NamespaceStrategy", "PendingStrategy", "PodStrategy",
           "ReplicationControllerStrategy"]


class KeepsStatusStrategy(Strategy):
    """Kinds whose create keeps the status the client sent (nodes register with theirs)."""

    def reset_status(self, group: str, version: str, kind: str, obj: Obj) -> None:
        return


class NamespaceStrategy(KeepsStatusStrategy):
    """Namespaces: the name label and the ``kubernetes`` finalizer by default, phase Active; an
    update keeps the spec (only the finalize subresource changes it); a delete marks the
    namespace Terminating and the namespace controller empties and removes it."""

    returns_deleted = True
    deletes_in_phases = True

    def default(self, res: Resource, obj: Obj, creating: bool, sch: Schema) -> None:
        meta = meta_of(obj)
        labels = meta.setdefault("labels", {}) if isinstance(meta.get("labels"), dict) or "labels" not in meta else None
        if isinstance(labels, dict) and isinstance(meta.get("name"), str):
            labels["kubernetes.io/metadata.name"] = meta["name"]
        spec = obj.setdefault("spec", {})
        if isinstance(spec, dict):
            spec.setdefault("finalizers", ["kubernetes"])
        status = obj.setdefault("status", {})
        if isinstance(status, dict):
            status.setdefault("phase", "Active")

    def prepare_for_update(self, new: Obj, old: Obj, subresource: str) -> None:
        if not subresource:
            new["spec"] = old.get("spec", {})

    def on_terminating(self, obj: Obj) -> None:
        obj.setdefault("status", {})["phase"] = "Terminating"


class PodStrategy(KeepsStatusStrategy):
    """Pods: a delete answers with the pod; updates keep ephemeral containers append-only."""

    returns_deleted = True

    def validate_extra(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        return validation.validate_ephemeral_update(old, obj) if old is not None else []


class PendingStrategy(Strategy):
    """Volumes and claims start in phase Pending."""

    def reset_status(self, group: str, version: str, kind: str, obj: Obj) -> None:
        obj["status"] = {"phase": "Pending"}


class LoadBalancerStrategy(Strategy):
    """Services and Ingresses: the status has a non-omitempty ``loadBalancer`` struct (``{}``)."""

    def reset_status(self, group: str, version: str, kind: str, obj: Obj) -> None:
        super().reset_status(group, version, kind, obj)
        obj["status"]["loadBalancer"] = {}


class ReplicationControllerStrategy(Strategy):
    """ReplicationControllers: the selector is a plain label map."""

    def scale_selector(self, res: Resource, obj: Obj) -> Any:
        sel = deep_get(obj, "spec", "selector") or {}
        return ",".join(f"{k}={v}" for k, v in sorted(sel.items()))
