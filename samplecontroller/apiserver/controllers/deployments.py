"""The optional Deployment status simulator: with no kube-controller-manager, it reports every
Deployment as rolled out (all replicas ready and available, the generation observed) a moment
after each change, so controllers that wait for a Deployment's status can be exercised."""

from __future__ import annotations

from typing import Any

from samplecontroller.apiserver.objects import deep_get, now_rfc3339
from samplecontroller.apiserver.storage import Store

__all__ = ["DEPLOYMENTS", "DeploymentSimulator", "simulated_status"]

DEPLOYMENTS = "apps/deployments"


class DeploymentSimulator:
    def __init__(self, store: Store, delay: float) -> None:
        self.store = store
        self.delay = delay

    def behind(self) -> list[tuple[str, str]]:
        """The (namespace, name) of every Deployment whose status is behind its spec."""
        return [key for key, entry in (self.store.data.get(DEPLOYMENTS) or {}).items()
                if simulated_status(entry.obj) is not None]

    def simulate(self, ns: str, name: str) -> None:
        """Write the rolled-out status of Deployment ``ns``/``name`` if it is not there yet."""
        entry = self.store.get(DEPLOYMENTS, ns, name)
        if entry is None:
            return
        status = simulated_status(entry.obj)
        if status is None:
            return
        new = entry.copy()
        now = now_rfc3339()
        status["conditions"] = [
            {"type": "Available", "status": "True", "lastUpdateTime": now, "lastTransitionTime": now,
             "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability."},
            {"type": "Progressing", "status": "True", "lastUpdateTime": now, "lastTransitionTime": now,
             "reason": "NewReplicaSetAvailable", "message": f'ReplicaSet "{name}" has successfully progressed.'},
        ]
        new["status"] = status
        self.store.put(DEPLOYMENTS, new)


def simulated_status(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The status the simulator gives a Deployment (all replicas ready, the generation observed),
    or None if its status already says so (or it is being deleted). With zero replicas the ready,
    available and updated counts are omitted; an absent count counts as zero."""
    if (obj.get("metadata") or {}).get("deletionTimestamp"):
        return None
    replicas = deep_get(obj, "spec", "replicas")
    replicas = 1 if replicas is None else int(replicas)
    generation = int(deep_get(obj, "metadata", "generation") or 1)
    status = dict(obj.get("status") or {})
    want = {"observedGeneration": generation, "replicas": replicas, "updatedReplicas": replicas,
            "readyReplicas": replicas, "availableReplicas": replicas}
    if all((status.get(k) or 0) == v for k, v in want.items()):
        return None
    status.update(want)
    if replicas == 0:
        for key in ("readyReplicas", "availableReplicas", "updatedReplicas"):
            del status[key]
    return status
