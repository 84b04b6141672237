"""A PersistentVolumeClaim spec's data sources as kube-apiserver's claim strategy prepares them
(pkg/registry/core/persistentvolumeclaim PrepareForCreate/PrepareForUpdate with
pkg/api/persistentvolumeclaim/util.go):

- ``DropDisabledFields``: a ``dataSourceRef`` naming another namespace is dropped while
  CrossNamespaceVolumeDataSource is off (alpha: always, here) unless the stored claim has a
  ``dataSourceRef``; ``volumeAttributesClassName`` follows its gate (``recent.drop_disabled``);
- ``EnforceDataSourceBackwardsCompatibility`` (KEP 1495): on a create, or an update of a claim
  without a data source, a ``dataSource`` that is neither a PersistentVolumeClaim nor a
  ``snapshot.storage.k8s.io`` VolumeSnapshot is dropped when there is no ``dataSourceRef``;
- ``NormalizeDataSources`` (creates only): ``dataSource`` and ``dataSourceRef`` are made the same
  when only one is set (not for a ``dataSourceRef`` with a namespace).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["prepare_claim_spec"]

Obj = dict[str, Any]


def _data_source_is_claim_or_snapshot(source: Any) -> bool:
    if not isinstance(source, Mapping):
        return False
    group, kind = source.get("apiGroup") or "", source.get("kind")
    return (kind, group) in (("PersistentVolumeClaim", ""), ("VolumeSnapshot", "snapshot.storage.k8s.io"))


def _reference(source: Mapping[str, Any]) -> Obj:
    """The kind, name and (when set) apiGroup of a data source."""
    ref: Obj = {"kind": source.get("kind", ""), "name": source.get("name", "")}
    if source.get("apiGroup") is not None:
        ref["apiGroup"] = source["apiGroup"]
    return ref


def prepare_claim_spec(spec: Obj, old_spec: Mapping[str, Any] | None,
                       gate_enabled: Callable[[str], bool]) -> None:
    """Prepare a claim ``spec`` in place, on create (``old_spec`` None) or update."""
    old = old_spec if isinstance(old_spec, Mapping) else {}
    ref = spec.get("dataSourceRef")
    if not gate_enabled("CrossNamespaceVolumeDataSource") and isinstance(ref, Mapping) \
            and ref.get("namespace") and old.get("dataSourceRef") is None:
        spec.pop("dataSourceRef", None)
    if old.get("dataSource") is None and old.get("dataSourceRef") is None and spec.get("dataSourceRef") is None \
            and spec.get("dataSource") is not None and not _data_source_is_claim_or_snapshot(spec.get("dataSource")):
        spec.pop("dataSource", None)
    if old_spec is not None:
        return
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    if isinstance(source, Mapping) and ref is None:
        spec["dataSourceRef"] = _reference(source)
    elif isinstance(ref, Mapping) and source is None and not ref.get("namespace"):
        spec["dataSource"] = _reference(ref)
