"""The optional Job simulator: with no kube-controller-manager, it does what the job controller
(pkg/controller/job) does for a NonIndexed Job, so operators that create Jobs see them run and
finish. Pods are not run (there is no kubelet): they stay Pending until their status says they
Succeeded or Failed, which a test writes as a kubelet would (``apiserver.testing.finish_pod``, or
a patch of the Pod's ``status.phase`` through ``/status``).

For every Job (not being deleted, not finished) a moment after it or one of its Pods changes:
- ``startTime`` is set when it first runs (again when resumed from ``suspend``);
- Pods are created from the template (``<job>-<random>``, the Job as controlling owner) until
  ``status.active`` reaches ``min(parallelism, completions - succeeded)`` (``parallelism`` with no
  ``completions``, until one Pod succeeds: then what runs keeps running); extra active Pods are
  deleted;
- ``status.active`` (Pods neither finished nor being deleted), ``ready`` (those with a Ready
  condition), ``terminating``, ``succeeded`` and ``failed`` count its Pods;
- after a Pod failure the next Pod is created after a backoff (``backoff`` seconds, doubling per
  failure, at most 6 minutes: kube's 10 s by default);
- more failures than ``backoffLimit`` (default 6): active Pods are deleted and the Job gets
  ``FailureTarget`` and ``Failed`` conditions (reason ``BackoffLimitExceeded``); running longer
  than ``activeDeadlineSeconds``: the same with reason ``DeadlineExceeded``;
- ``completions`` successes (or one, without ``completions``, once no Pod is active): the
  ``SuccessCriteriaMet`` and ``Complete`` conditions (reason ``CompletionsReached``) and
  ``completionTime``;
- ``suspend: true`` deletes the active Pods and sets the ``Suspended`` condition.

Not simulated: Indexed completion mode, podFailurePolicy, successPolicy, podReplacementPolicy,
backoffLimitPerIndex, ttlSecondsAfterFinished, the ``batch.kubernetes.io/job-tracking`` Pod
finalizer and the Job's Events. Writes go through ``Core`` as ``kube-controller-manager``; a
status that already holds is not written again, so the simulator settles.
"""

from __future__ import annotations

import time
from typing import Any

from samplecontroller.apiserver.controllers.base import Controller, Schedule
from samplecontroller.apiserver.core import Core
from samplecontroller.apiserver.objects import copy_json, deep_get, now_rfc3339, parse_rfc3339

__all__ = ["JOBS", "JobSimulator"]

JOBS = "batch/jobs"
PODS = "/pods"
MANAGER = "kube-controller-manager"
MAX_BACKOFF = 360.0
_FINISHED = ("Complete", "Failed")


def _now() -> str:
    return now_rfc3339()


def _condition(ctype: str, reason: str, message: str, status: str = "True") -> dict[str, Any]:
    now = _now()
    return {"type": ctype, "status": status, "lastProbeTime": now, "lastTransitionTime": now,
            "reason": reason, "message": message}


def _has_condition(job: dict[str, Any], ctype: str) -> bool:
    return any(isinstance(c, dict) and c.get("type") == ctype and c.get("status") == "True"
               for c in deep_get(job, "status", "conditions") or ())


class JobSimulator(Controller):
    """The simulator over ``core`` (see the module docstring); ``delay`` is how long after a
    change it acts, ``backoff`` the first delay before replacing a failed Pod."""

    def __init__(self, core: Core, schedule: Schedule, delay: float, backoff: float = 10.0) -> None:
        super().__init__(core, schedule)
        self.delay = delay
        self.backoff = backoff

    def resume(self) -> None:
        """Sync every stored Job (after a start or restart)."""
        for (ns, name) in list((self.store.data.get(JOBS) or {}).keys()):
            self.schedule(self.sync, ns, name, delay=self.delay)

    def observe(self, skey: str, obj: dict[str, Any]) -> None:
        """Schedule a sync of the Job ``obj`` is, or of the Job that controls Pod ``obj``."""
        meta = obj.get("metadata") or {}
        ns = str(meta.get("namespace") or "")
        if skey == JOBS:
            self.schedule(self.sync, ns, str(meta.get("name") or ""), delay=self.delay)
            return
        for ref in meta.get("ownerReferences") or ():
            if isinstance(ref, dict) and ref.get("controller") and ref.get("kind") == "Job" \
                    and str(ref.get("apiVersion") or "").startswith("batch/"):
                self.schedule(self.sync, ns, str(ref.get("name") or ""), delay=self.delay)

    def pods(self, job: dict[str, Any]) -> list[dict[str, Any]]:
        """The Pods ``job`` controls (through the store's owner index)."""
        uid = str(deep_get(job, "metadata", "uid") or "")
        ns = str(deep_get(job, "metadata", "namespace") or "")
        found = []
        for skey, pod_ns, name in sorted(self.store.dependents.get(uid) or ()):
            entry = self.store.get(PODS, ns, name) if skey == PODS and pod_ns == ns else None
            if entry is not None and any(isinstance(r, dict) and r.get("controller") and r.get("uid") == uid
                                         for r in deep_get(entry.obj, "metadata", "ownerReferences") or ()):
                found.append(entry.obj)
        return found

    # ---------------------------------------------------------------- the sync

    def sync(self, ns: str, name: str) -> None:
        """Bring Job ``ns``/``name``'s Pods and status one step on (see the module docstring)."""
        entry = self.store.get(JOBS, ns, name)
        if entry is None or deep_get(entry.obj, "metadata", "deletionTimestamp"):
            return
        job = entry.obj
        if any(_has_condition(job, c) for c in _FINISHED):
            return
        spec = job.get("spec") or {}
        status = copy_json(job.get("status") or {})
        pods = self.pods(job)
        phases = [deep_get(p, "status", "phase") for p in pods]
        succeeded = sum(1 for p in phases if p == "Succeeded")
        failed = sum(1 for p in phases if p == "Failed")
        # counts only grow: Pods that were counted and then removed stay counted
        succeeded = max(succeeded, int(status.get("succeeded") or 0))
        failed = max(failed, int(status.get("failed") or 0))
        active = [p for p, phase in zip(pods, phases, strict=True)
                  if phase not in ("Succeeded", "Failed") and not deep_get(p, "metadata", "deletionTimestamp")]
        conditions = [c for c in status.get("conditions") or () if isinstance(c, dict)]
        suspended = spec.get("suspend") is True
        if suspended:
            self._delete(active)
            active = []
            if not _has_condition(job, "Suspended"):
                conditions = [c for c in conditions if c.get("type") != "Suspended"]
                conditions.append(_condition("Suspended", "JobSuspended", "Job suspended"))
        else:
            if _has_condition(job, "Suspended"):
                conditions = [c for c in conditions if c.get("type") != "Suspended"]
                conditions.append(_condition("Suspended", "JobResumed", "Job resumed", "False"))
                status["startTime"] = _now()
            status.setdefault("startTime", _now())
        finish = None if suspended else self._finished(spec, status, succeeded, failed, len(active))
        if finish is not None:
            ctype, reason, message = finish
            if ctype == "Failed":
                self._delete(active)
                active = []
            interim = "FailureTarget" if ctype == "Failed" else "SuccessCriteriaMet"
            conditions += [_condition(interim, reason, message), _condition(ctype, reason, message)]
            if ctype == "Complete":
                status["completionTime"] = _now()
        elif not suspended:
            active = self._scale(job, spec, active, succeeded, failed)
        status.update(active=len(active), succeeded=succeeded, failed=failed,
                      ready=sum(1 for p in active if _ready(p)),
                      terminating=sum(1 for p in pods if deep_get(p, "metadata", "deletionTimestamp")
                                      and deep_get(p, "status", "phase") not in ("Succeeded", "Failed")),
                      uncountedTerminatedPods={})
        for key in ("active", "succeeded", "failed"):
            if not status[key]:
                del status[key]
        if conditions:
            status["conditions"] = conditions
        self._write_status(job, status)
        deadline = spec.get("activeDeadlineSeconds")
        if finish is None and not suspended and isinstance(deadline, int) and status.get("startTime"):
            remaining = parse_rfc3339(status["startTime"]) + deadline - time.time()
            self.schedule(self.sync, ns, name, delay=max(remaining, 0.0) + 0.05)

    def _finished(self, spec: dict[str, Any], status: dict[str, Any], succeeded: int, failed: int,
                  active: int) -> tuple[str, str, str] | None:
        """(condition type, reason, message) when the Job has just finished, else None."""
        completions = spec.get("completions")
        if isinstance(completions, int) and succeeded >= completions:
            return "Complete", "CompletionsReached", "Reached expected number of succeeded pods"
        if completions is None and succeeded > 0 and active == 0:
            return "Complete", "CompletionsReached", "Reached expected number of succeeded pods"
        limit = spec.get("backoffLimit")
        if failed > (6 if limit is None else int(limit)):
            return "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"
        deadline = spec.get("activeDeadlineSeconds")
        if isinstance(deadline, int) and status.get("startTime") \
                and parse_rfc3339(status["startTime"]) + deadline <= time.time():
            return "Failed", "DeadlineExceeded", "Job was active longer than specified deadline"
        return None

    def _scale(self, job: dict[str, Any], spec: dict[str, Any], active: list[dict[str, Any]], succeeded: int,
               failed: int) -> list[dict[str, Any]]:
        """Create or delete Pods so that the wanted number is active; returns the active Pods."""
        parallelism = spec.get("parallelism")
        parallelism = 1 if parallelism is None else int(parallelism)
        completions = spec.get("completions")
        if completions is None:  # a work queue: after a success, what runs keeps running, nothing new
            want = len(active) if succeeded > 0 else parallelism
        else:
            want = max(min(parallelism, int(completions) - succeeded), 0)
        if len(active) > want:
            newest_first = sorted(active, key=lambda p: str(deep_get(p, "metadata", "creationTimestamp") or ""),
                                  reverse=True)
            self._delete(newest_first[:len(active) - want])
            return newest_first[len(active) - want:]
        if len(active) < want:
            wait = self._backoff_left(job, failed)
            if wait > 0:
                meta = job["metadata"]
                self.schedule(self.sync, meta["namespace"], meta["name"], delay=wait)
                return active
            for _ in range(want - len(active)):
                active.append(self._create_pod(job))
        return active

    def _backoff_left(self, job: dict[str, Any], failed: int) -> float:
        """Seconds until a Pod may replace a failed one: ``backoff * 2^(failed - 1)`` (at most 6
        minutes) after the last failure."""
        if failed == 0:
            return 0.0
        last = max((parse_rfc3339(str(t)) for p in self.pods(job) if deep_get(p, "status", "phase") == "Failed"
                    for t in [_finished_at(p)] if t), default=0.0)
        if not last:
            return 0.0
        return float(last + min(self.backoff * 2 ** (failed - 1), MAX_BACKOFF) - time.time())

    def _create_pod(self, job: dict[str, Any]) -> dict[str, Any]:
        meta = job["metadata"]
        template = copy_json(deep_get(job, "spec", "template")) or {}
        pod_meta = template.get("metadata") or {}
        pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"generateName": f"{meta['name']}-", "namespace": meta["namespace"],
                            "labels": dict(pod_meta.get("labels") or {}),
                            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": meta["name"],
                                                 "uid": meta["uid"], "controller": True,
                                                 "blockOwnerDeletion": True}]},
               "spec": template.get("spec") or {}}
        if pod_meta.get("annotations"):
            pod["metadata"]["annotations"] = dict(pod_meta["annotations"])
        pods = self.core.mapper.get("", "v1", "pods")
        assert pods is not None
        created, _ = self.core.create(pods, meta["namespace"], pod, manager=MANAGER)
        return created

    def _delete(self, pods: list[dict[str, Any]]) -> None:
        res = self.core.mapper.get("", "v1", "pods")
        assert res is not None
        for pod in pods:
            meta = pod["metadata"]
            self.core.delete(res, meta["namespace"], meta["name"], {"preconditions": {"uid": meta["uid"]}})

    def _write_status(self, job: dict[str, Any], status: dict[str, Any]) -> None:
        if (job.get("status") or {}) == status:
            return
        new = copy_json(job)
        new["status"] = status
        jobs = self.core.mapper.get("batch", "v1", "jobs")
        assert jobs is not None
        meta = new["metadata"]
        self.core.update(jobs, meta["namespace"], meta["name"], new, subresource="status", manager=MANAGER)


def _ready(pod: dict[str, Any]) -> bool:
    return any(isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True"
               for c in deep_get(pod, "status", "conditions") or ())


def _finished_at(pod: dict[str, Any]) -> str:
    """When a finished Pod's containers finished (their ``terminated.finishedAt``), else when
    its status last changed (its creation)."""
    times = [str(deep_get(s, "state", "terminated", "finishedAt") or "")
             for s in deep_get(pod, "status", "containerStatuses") or () if isinstance(s, dict)]
    times = [t for t in times if t]
    return max(times) if times else str(deep_get(pod, "metadata", "creationTimestamp") or "")
