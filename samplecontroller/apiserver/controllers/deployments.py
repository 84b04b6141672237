"""The optional Deployment simulator: with no kube-controller-manager, it does what the
deployment controller (pkg/controller/deployment) does for a rollout, minus Pods, a moment after
each change, so that controllers waiting for a Deployment's status and ``kubectl rollout
status|history|undo`` can be exercised.

For every Deployment (not paused, not being deleted):
- the ReplicaSet of its current pod template (compared ignoring the ``pod-template-hash``
  label) is found or created as ``<deployment>-<hash>``, with the ``pod-template-hash`` label on
  itself, its selector and its template, the Deployment as controlling owner and the
  Deployment's annotations (``kubernetes.io/change-cause`` included);
- it gets the next ``deployment.kubernetes.io/revision`` (max of the others + 1); a ReplicaSet
  brought back by a rollback keeps its older revisions in ``deployment.kubernetes.io/revision-history``;
  the Deployment carries the same revision annotation;
- it is scaled to the Deployment's replicas and reports them all ready; every older ReplicaSet is
  scaled to 0, and those beyond ``revisionHistoryLimit`` (oldest revision first) are deleted;
- the Deployment's status says the rollout finished (all replicas updated, ready and available,
  the generation observed, Available and Progressing conditions naming the new ReplicaSet).

Writes go through ``Core`` as ``kube-controller-manager``; a state that already holds is not
written again, so the simulator settles. Syncs are queued as a controller's work queue queues
keys (``queue``): a Deployment already queued is not queued twice (the sync reads the store when
it runs), and one still at the revision its last sync left it at (the events of the simulator's
own writes, which arrive after it) is not synced again.
"""

from __future__ import annotations

import json
from typing import Any

from samplecontroller.apiserver.core import Core
from samplecontroller.apiserver.objects import copy_json, deep_get, now_rfc3339

__all__ = ["DEPLOYMENTS", "REPLICASETS", "DeploymentSimulator", "pod_template_hash", "simulated_status"]

DEPLOYMENTS = "apps/deployments"
REPLICASETS = "apps/replicasets"
MANAGER = "kube-controller-manager"
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
# annotations of a Deployment that are not copied to its ReplicaSets (deploymentutil.skipCopyAnnotation)
_SKIP_COPY = frozenset({"kubectl.kubernetes.io/last-applied-configuration", REVISION, REVISION_HISTORY,
                        DESIRED_REPLICAS, MAX_REPLICAS, "deprecated.deployment.rollback.to"})
_SAFE_CHARS = "bcdfghjklmnpqrstvwxz2456789"


def pod_template_hash(template: Any, collision_count: int = 0) -> str:
    """The ``pod-template-hash`` of ``template``: FNV-1a (32 bit) over its canonical JSON and the
    collision count, rendered with apimachinery's ``rand.SafeEncodeString`` alphabet (the same
    shape as the deployment controller's ``ComputeHash``, not its value)."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    if collision_count:
        data += str(collision_count).encode()
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return "".join(_SAFE_CHARS[ord(c) % len(_SAFE_CHARS)] for c in str(value))


def _without_hash(template: Any) -> Any:
    """``template`` without the ``pod-template-hash`` label (deploymentutil.EqualIgnoreHash), to
    compare, not to change: ``template`` itself when it has no such label (nor empty labels)."""
    labels = deep_get(template, "metadata", "labels")
    if isinstance(template, dict) and not (isinstance(labels, dict) and (HASH_LABEL in labels or not labels)):
        return template
    copy = copy_json(template) if isinstance(template, dict) else {}
    labels = deep_get(copy, "metadata", "labels")
    if isinstance(labels, dict):
        labels.pop(HASH_LABEL, None)
        if not labels:
            copy["metadata"].pop("labels")
    return copy


def _revision(obj: dict[str, Any]) -> int:
    try:
        return int(deep_get(obj, "metadata", "annotations", REVISION) or 0)
    except (TypeError, ValueError):
        return 0


class DeploymentSimulator:
    """The simulator over ``core`` (see the module docstring); ``delay`` is how long after a
    change it acts."""

    def __init__(self, core: Core, delay: float) -> None:
        self.core = core
        self.store = core.store
        self.delay = delay
        self._queued: set[tuple[str, str]] = set()
        self._settled: dict[tuple[str, str], int] = {}  # the revision each Deployment's last sync left

    def queue(self, ns: str, name: str, revision: int) -> bool:
        """Whether a sync of Deployment ``ns``/``name``, changed at ``revision``, must be scheduled
        (see the module docstring); True marks it queued until ``simulate`` runs."""
        key = (ns, name)
        if key in self._queued or revision <= self._settled.get(key, 0):
            return False  # queued already, or its last sync saw this revision or a later one
        self._queued.add(key)
        return True

    def forget(self, ns: str, name: str) -> None:
        """Deployment ``ns``/``name`` is deleted."""
        self._settled.pop((ns, name), None)

    def behind(self) -> list[tuple[str, str, int]]:
        """The namespace, name and revision of every Deployment (the simulator settles those already done)."""
        return [(ns, name, entry.rev) for (ns, name), entry in (self.store.data.get(DEPLOYMENTS) or {}).items()]

    def owned(self, ns: str, uid: str) -> list[dict[str, Any]]:
        """The ReplicaSets in ``ns`` whose controlling owner has ``uid`` (through the store's
        owner index, not a scan of the namespace: a sync costs the Deployment's own ReplicaSets)."""
        found = []
        for skey, dep_ns, name in sorted(self.store.dependents.get(uid) or ()):
            if skey != REPLICASETS or dep_ns != ns:
                continue
            entry = self.store.get(REPLICASETS, ns, name)
            if entry is None:
                continue
            for ref in deep_get(entry.obj, "metadata", "ownerReferences") or ():
                if isinstance(ref, dict) and ref.get("controller") and ref.get("uid") == uid:
                    found.append(entry.obj)
        return found

    def simulate(self, ns: str, name: str) -> None:
        """Bring Deployment ``ns``/``name``'s ReplicaSets and status to a finished rollout."""
        key = (ns, name)
        self._queued.discard(key)
        entry = self.store.get(DEPLOYMENTS, ns, name)
        if entry is None or deep_get(entry.obj, "metadata", "deletionTimestamp"):
            self._settled.pop(key, None)
            return
        if self._settled.get(key) == entry.rev:
            return  # unchanged since this simulator left it
        self._sync(entry.obj)
        done = self.store.get(DEPLOYMENTS, ns, name)
        if done is not None:
            self._settled[key] = done.rev

    def _sync(self, deployment: dict[str, Any]) -> None:
        ns, name = deployment["metadata"]["namespace"], deployment["metadata"]["name"]
        uid = str(deep_get(deployment, "metadata", "uid") or "")
        owned = self.owned(ns, uid)
        template = _without_hash(deep_get(deployment, "spec", "template"))
        current = next((rs for rs in owned if _without_hash(deep_get(rs, "spec", "template")) == template), None)
        replicas = deep_get(deployment, "spec", "replicas")
        replicas = 1 if replicas is None else int(replicas)
        paused = deep_get(deployment, "spec", "paused") is True
        top = max((_revision(rs) for rs in owned), default=0)
        if current is None and not paused:
            current = self._create_replica_set(deployment, top + 1, replicas, owned)
        elif current is not None and _revision(current) < top and not paused:
            current = self._bump_revision(current, top + 1)
        if current is not None:
            current = self._copy_annotations(deployment, current)
        for rs in owned:
            if current is None or rs["metadata"]["uid"] != current["metadata"]["uid"]:
                self._scale(rs, 0)
        if current is not None:
            current = self._scale(current, replicas)
            self._cleanup(deployment, [rs for rs in self.owned(ns, uid) if rs["metadata"]["uid"] != current["metadata"]["uid"]])
            deployment = self._annotate(deployment, str(_revision(current)))
        self._write_status(deployment, str(deep_get(current, "metadata", "name") or name))

    # ---------------------------------------------------------------- ReplicaSets

    def _resource(self, plural: str) -> Any:
        res = self.core.mapper.get("apps", "v1", plural)
        assert res is not None
        return res

    def _create_replica_set(self, deployment: dict[str, Any], revision: int, replicas: int,
                            owned: list[dict[str, Any]]) -> dict[str, Any]:
        meta = deployment["metadata"]
        template = copy_json(deep_get(deployment, "spec", "template")) or {}
        collisions = int(deep_get(deployment, "status", "collisionCount") or 0)
        taken = {deep_get(rs, "metadata", "name") for rs in owned}
        hashed = pod_template_hash(template, collisions)
        while f"{meta['name']}-{hashed}" in taken or self.store.get(REPLICASETS, meta["namespace"],
                                                                    f"{meta['name']}-{hashed}") is not None:
            collisions += 1
            hashed = pod_template_hash(template, collisions)
        template.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = hashed
        selector = copy_json(deep_get(deployment, "spec", "selector")) or {}
        selector.setdefault("matchLabels", {})[HASH_LABEL] = hashed
        annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in _SKIP_COPY}
        annotations.update({DESIRED_REPLICAS: str(replicas), MAX_REPLICAS: str(replicas + _surge(deployment, replicas)),
                            REVISION: str(revision)})
        rs = {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": f"{meta['name']}-{hashed}", "namespace": meta["namespace"],
                         "labels": dict(template["metadata"]["labels"]), "annotations": annotations,
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": meta["name"],
                                              "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}]},
            "spec": {"replicas": _initial_replicas(deployment, replicas, owned),
                     "minReadySeconds": int(deep_get(deployment, "spec", "minReadySeconds") or 0),
                     "selector": selector, "template": template},
        }
        created, _ = self.core.create(self._resource("replicasets"), meta["namespace"], rs, manager=MANAGER)
        return created

    def _bump_revision(self, rs: dict[str, Any], revision: int) -> dict[str, Any]:
        """A rollback: the old ReplicaSet becomes the newest revision, remembering its old ones."""
        new = copy_json(rs)
        annotations = new["metadata"].setdefault("annotations", {})
        history = [h for h in str(annotations.get(REVISION_HISTORY) or "").split(",") if h]
        history.append(str(_revision(rs)))
        annotations[REVISION_HISTORY] = ",".join(history)
        annotations[REVISION] = str(revision)
        updated, _, _ = self.core.update(self._resource("replicasets"), rs["metadata"]["namespace"],
                                         rs["metadata"]["name"], new, manager=MANAGER)
        return updated

    def _copy_annotations(self, deployment: dict[str, Any], rs: dict[str, Any]) -> dict[str, Any]:
        """Copy the Deployment's annotations (``kubernetes.io/change-cause``, ...) that ``rs`` lacks or
        has with another value onto it (copyDeploymentAnnotationsToReplicaSet)."""
        have = deep_get(rs, "metadata", "annotations") or {}
        wanted = {k: v for k, v in (deep_get(deployment, "metadata", "annotations") or {}).items()
                  if k not in _SKIP_COPY and have.get(k) != v}
        if not wanted:
            return rs
        new = copy_json(rs)
        new["metadata"].setdefault("annotations", {}).update(wanted)
        updated, _, _ = self.core.update(self._resource("replicasets"), rs["metadata"]["namespace"],
                                         rs["metadata"]["name"], new, manager=MANAGER)
        return updated

    def _scale(self, rs: dict[str, Any], replicas: int) -> dict[str, Any]:
        """Set ``rs``'s replicas and report them all ready (writes only what changes)."""
        res, ns, name = self._resource("replicasets"), rs["metadata"]["namespace"], rs["metadata"]["name"]
        if deep_get(rs, "spec", "replicas") != replicas:
            new = copy_json(rs)
            new["spec"]["replicas"] = replicas
            if replicas:
                new["metadata"].setdefault("annotations", {})[DESIRED_REPLICAS] = str(replicas)
            rs, _, _ = self.core.update(res, ns, name, new, manager=MANAGER)
        counts = {"replicas": replicas, "fullyLabeledReplicas": replicas, "readyReplicas": replicas,
                  "availableReplicas": replicas}
        status = {k: v for k, v in counts.items() if v or k == "replicas"}
        status["observedGeneration"] = int(deep_get(rs, "metadata", "generation") or 1)
        if rs.get("status") != status:
            rs, _, _ = self.core.update(res, ns, name, _status_write(rs, status), subresource="status",
                                        manager=MANAGER)
        return rs

    def _cleanup(self, deployment: dict[str, Any], old: list[dict[str, Any]]) -> None:
        """Delete the scaled-down old ReplicaSets beyond ``revisionHistoryLimit``, oldest first."""
        limit = deep_get(deployment, "spec", "revisionHistoryLimit")
        limit = 10 if limit is None else int(limit)
        idle = sorted((rs for rs in old if not deep_get(rs, "spec", "replicas")), key=_revision)
        for rs in idle[:max(len(idle) - limit, 0)]:
            self.core.delete(self._resource("replicasets"), rs["metadata"]["namespace"], rs["metadata"]["name"], {})

    # ---------------------------------------------------------------- the Deployment

    def _annotate(self, deployment: dict[str, Any], revision: str) -> dict[str, Any]:
        if deep_get(deployment, "metadata", "annotations", REVISION) == revision:
            return deployment
        new = copy_json(deployment)
        new["metadata"].setdefault("annotations", {})[REVISION] = revision
        meta = new["metadata"]
        updated, _, _ = self.core.update(self._resource("deployments"), meta["namespace"], meta["name"], new,
                                         manager=MANAGER)
        return updated

    def _write_status(self, deployment: dict[str, Any], rs_name: str) -> None:
        status = simulated_status(deployment)
        if status is None:
            return
        now = now_rfc3339()
        status["conditions"] = [
            {"type": "Available", "status": "True", "lastUpdateTime": now, "lastTransitionTime": now,
             "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability."},
            {"type": "Progressing", "status": "True", "lastUpdateTime": now, "lastTransitionTime": now,
             "reason": "NewReplicaSetAvailable", "message": f'ReplicaSet "{rs_name}" has successfully progressed.'},
        ]
        meta = deployment["metadata"]
        self.core.update(self._resource("deployments"), meta["namespace"], meta["name"],
                         _status_write(deployment, status), subresource="status", manager=MANAGER)


def _status_write(obj: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    """The body of a status write of ``obj``: what the status subresource reads of it (the rest
    is the stored object's), not a copy of the whole object."""
    meta = obj["metadata"]
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"],
            "metadata": {"name": meta["name"], "namespace": meta["namespace"],
                         "resourceVersion": meta["resourceVersion"]}, "status": status}


def _initial_replicas(deployment: dict[str, Any], replicas: int, owned: list[dict[str, Any]]) -> int:
    """The replicas a new ReplicaSet is created with (the deployment controller's
    ``NewRSNewReplicas`` for a rollout with no running pods): all of them when no other
    ReplicaSet of the Deployment runs any (a new Deployment, or every old one scaled down), else
    0, scaled up once the old ones are scaled down."""
    running = sum(int(deep_get(rs, "spec", "replicas") or 0) for rs in owned)
    return replicas if running == 0 else 0


def _surge(deployment: dict[str, Any], replicas: int) -> int:
    """maxSurge of a RollingUpdate Deployment as a number of pods (percentages round up)."""
    if deep_get(deployment, "spec", "strategy", "type") != "RollingUpdate":
        return 0
    surge = deep_get(deployment, "spec", "strategy", "rollingUpdate", "maxSurge")
    if isinstance(surge, int):
        return surge
    if isinstance(surge, str) and surge.endswith("%"):
        try:
            return -(-replicas * int(surge[:-1]) // 100)
        except ValueError:
            return 0
    return 0


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
