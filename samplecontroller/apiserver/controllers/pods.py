"""The node simulator's part of pod deletion: what the kubelet does for a gracefully deleted Pod.

A delete of a Pod bound to a node only marks it (``deletionTimestamp`` = now + grace period,
``deletionGracePeriodSeconds``; see ``strategies.kinds.PodStrategy``), and the Pod shows as
Terminating. With no kubelet, ``NodeSimulator`` plays the node: once the grace period has run
out it deletes the Pod with a grace period of 0, as the kubelet does after stopping the
containers (finalizers still hold it until they are removed). A shortened grace period
(``kubectl delete --grace-period=N``) is honoured; ``--grace-period=0 --force`` needs no node.
``resume`` picks up Pods a restart left terminating.
"""

from __future__ import annotations

import time
from typing import Any

from samplecontroller.apiserver.controllers.base import Controller
from samplecontroller.apiserver.objects import deep_get, parse_rfc3339

__all__ = ["PODS", "NodeSimulator"]

PODS = "/pods"


class NodeSimulator(Controller):
    """Removes gracefully deleted Pods when their grace period ends (see the module docstring)."""

    def observe(self, obj: dict[str, Any]) -> None:
        """Schedule the removal of ``obj`` (a stored Pod) if it is terminating on a node."""
        meta = obj.get("metadata") or {}
        if not (meta.get("deletionTimestamp") and meta.get("deletionGracePeriodSeconds")
                and deep_get(obj, "spec", "nodeName")):
            return
        delay = max(self._expiry(meta) - time.time(), 0.0)
        self.schedule(self.remove, str(meta.get("namespace") or ""), str(meta.get("name") or ""),
                      str(meta.get("uid") or ""), delay=delay)

    def resume(self) -> None:
        """Observe every stored Pod (after a restart)."""
        for _, entry in self.store.list(PODS, None):
            self.observe(entry.obj)

    def remove(self, ns: str, name: str, uid: str) -> None:
        """Delete Pod ``ns``/``name`` (the same ``uid``) at once if its grace period is over."""
        entry = self.store.get(PODS, ns, name)
        if entry is None:
            return
        meta = entry.obj.get("metadata") or {}
        if meta.get("uid") != uid or not meta.get("deletionTimestamp") or self._expiry(meta) > time.time():
            return  # recreated, or its period was changed: a later observation removes it
        pods = self.core.mapper.get("", "v1", "pods")
        if pods is not None:
            self.core.delete(pods, ns, name, {"gracePeriodSeconds": 0, "preconditions": {"uid": uid}})

    @staticmethod
    def _expiry(meta: dict[str, Any]) -> float:
        try:
            return parse_rfc3339(str(meta["deletionTimestamp"]))
        except (KeyError, ValueError):
            return 0.0
