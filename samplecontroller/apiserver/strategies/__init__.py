"""Per-kind behaviour of built-in resources that the OpenAPI schemas cannot express.

- ``defaults``: upstream defaulting (pkg/apis/*/v1/defaults.go) plus the admission plugins every
  cluster runs on create (ServiceAccount, Priority, DefaultTolerationSeconds), and the
  strategies' create-time fields (a Job's generated selector).
- ``prepare_create_status``: the status a kind starts with (the strategies' PrepareForCreate).

All functions work in place on decoded JSON and never raise on malformed input (validation
reports it).
"""

from __future__ import annotations

from typing import Any

from samplecontroller.apiserver import builtins
from samplecontroller.apiserver.strategies.defaults import apply_defaults

__all__ = ["apply_defaults", "prepare_create_status"]

# Kinds whose create keeps the status the client sent (nodes register with theirs).
_KEEPS_STATUS = {("", "Node"), ("", "Pod"), ("", "Namespace")}
_PENDING = {("", "PersistentVolume"), ("", "PersistentVolumeClaim")}
# Status structs with a non-omitempty struct field (Go encodes it as {}).
_LOAD_BALANCER = {("", "Service"), ("networking.k8s.io", "Ingress")}


def prepare_create_status(group: str, version: str, kind: str, obj: dict[str, Any]) -> None:
    """Reset ``obj``'s status as the kind's create strategy does: the zero status as Go encodes
    it (``{"replicas": 0}`` for a ReplicaSet, ``{}`` for a Deployment), ``{"phase": "Pending"}``
    for volumes and claims; nodes, pods and namespaces keep theirs."""
    if (group, kind) in _KEEPS_STATUS:
        return
    if (group, kind) in _PENDING:
        obj["status"] = {"phase": "Pending"}
        return
    obj["status"] = builtins.empty_status(group, version, kind)
    if (group, kind) in _LOAD_BALANCER:
        obj["status"]["loadBalancer"] = {}
