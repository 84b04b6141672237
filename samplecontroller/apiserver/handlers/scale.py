"""The scale subresource (autoscaling/v1 Scale) of Deployments, ReplicaSets, StatefulSets,
ReplicationControllers and custom resources with a scale subresource: get, update and patch
through ``Core`` with the paths the kind's strategy names."""

from __future__ import annotations

from typing import Any

from samplecontroller.apimachinery.mergepatch import apply_merge_patch
from samplecontroller.apiserver import patching, strategies
from samplecontroller.apiserver.core import Core
from samplecontroller.apiserver.errors import STALE, APIError, conflict, not_found
from samplecontroller.apiserver.negotiation import PATCH_APPLY, PATCH_MERGE, PATCH_STRATEGIC, decode_body
from samplecontroller.apiserver.objects import copy_json, deep_get
from samplecontroller.apiserver.patching import require_object
from samplecontroller.apiserver.restmapper import Resource

__all__ = ["get_scale", "patch_scale", "patched_scale", "scale_of", "scaled_object", "set_scale"]


def get_scale(core: Core, res: Resource, ns: str, name: str) -> dict[str, Any]:
    """The Scale of object ``name``."""
    return scale_of(res, core.get(res, ns, name))


def scale_of(res: Resource, obj: dict[str, Any]) -> dict[str, Any]:
    """The Scale of ``obj`` (an object of ``res`` in ``res``'s version)."""
    strategy = strategies.for_resource(res)
    spec_path, status_path, _ = strategy.scale_paths(res)
    meta = obj["metadata"]
    selector = strategy.scale_selector(res, obj)
    status: dict[str, Any] = {"replicas": int(deep_get(obj, *status_path) or 0)}
    if selector:
        status["selector"] = selector
    return {
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                     if k in meta},
        "spec": {"replicas": int(deep_get(obj, *spec_path) or 0)},
        "status": status,
    }


def set_scale(core: Core, res: Resource, ns: str, name: str, scale: Any, *, manager: str,
              dry_run: bool) -> dict[str, Any]:
    """Set the replicas of object ``name`` from a Scale; returns the new Scale."""
    new = scaled_object(core, res, ns, name, scale)
    core.update(res, ns, name, new, subresource="scale", manager=manager, dry_run=dry_run, field_validation="Ignore")
    return get_scale(core, res, ns, name) if not dry_run else require_object(scale)


def scaled_object(core: Core, res: Resource, ns: str, name: str, scale: Any,
                  old_view: dict[str, Any] | None = None) -> dict[str, Any]:
    """Object ``name`` with the replicas of ``scale`` (422 for bad replicas, 409 for a stale
    resourceVersion); ``old_view``: the stored object in ``res``'s version when it is stored in
    another (a conversion webhook)."""
    scale = require_object(scale)
    replicas = deep_get(scale, "spec", "replicas")
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise APIError(422, "Invalid", f'Scale.autoscaling "{name}" is invalid: spec.replicas: Invalid value: '
                       f"{replicas!r}: must be greater than or equal to 0")
    entry = core.get_entry(res, ns, name)
    if entry is None:
        raise not_found(res, name)
    rv = deep_get(scale, "metadata", "resourceVersion")
    if rv not in (None, "") and str(rv) != entry.obj["metadata"]["resourceVersion"]:
        raise conflict(res, name, STALE)
    new = copy_json(old_view) if old_view is not None else entry.copy()
    new["apiVersion"] = res.group_version
    spec_path, _, _ = strategies.for_resource(res).scale_paths(res)
    target = new
    for part in spec_path[:-1]:
        target = target.setdefault(part, {})
    target[spec_path[-1]] = replicas
    return new


def patch_scale(core: Core, res: Resource, ns: str, name: str, patch_type: str, raw: bytes, *, manager: str,
                dry_run: bool) -> dict[str, Any]:
    """Patch the Scale of object ``name`` (a strategic merge patch of a Scale is a merge patch)."""
    patched = patched_scale(res, get_scale(core, res, ns, name), patch_type, raw)
    return set_scale(core, res, ns, name, patched, manager=manager, dry_run=dry_run)


def patched_scale(res: Resource, current: dict[str, Any], patch_type: str, raw: bytes) -> Any:
    """``current`` (a Scale) patched."""
    if patch_type == PATCH_APPLY:
        patched = apply_merge_patch(current, require_object(decode_body(raw, PATCH_APPLY)))
    elif patch_type == PATCH_STRATEGIC:
        patched = patching.apply_patch(res, PATCH_MERGE, raw, current, None)
    else:
        patched = patching.apply_patch(res, patch_type, raw, current, None)
    return patched
