"""The strategies of the built-in kinds that differ from the generic one (``base.Strategy``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from samplecontroller.apiserver import validation
from samplecontroller.apiserver.errors import APIError
from samplecontroller.apiserver.objects import copy_json, deep_get, meta_of
from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.schema import FieldError, forbidden, invalid
from samplecontroller.apiserver.strategies.base import Obj, Schema, Stored, Strategy

__all__ = ["JobStrategy", "KeepsStatusStrategy", "LoadBalancerStrategy", "NamespaceStrategy", "PendingStrategy",
           "PodStrategy", "PriorityClassStrategy", "ReplicationControllerStrategy"]


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
    """Pods: a delete answers with the pod and is graceful for a pod bound to a node (it stays
    Terminating until the node simulator, ``controllers.pods``, removes it); updates keep
    ephemeral containers append-only. Since 1.33 a pod has ``metadata.generation`` (1 on create,
    bumped by a spec change, ephemeral containers included, and by its graceful deletion)."""

    returns_deleted = True
    tracks_generation = True

    def validate_extra(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        return validation.validate_ephemeral_update(old, obj) if old is not None else []

    def allocate(self, obj: Obj, old: Obj | None, stored: Stored) -> list[FieldError]:
        """The ServiceAccount and Priority admission plugins on create."""
        if old is None:
            _check_service_account(obj, stored)
        return _admit_priority(obj, old, stored)


    def grace_period(self, obj: Obj, options: Mapping[str, Any]) -> int | None:
        """The pod strategy's CheckGracefulDelete: ``gracePeriodSeconds`` of the options, else
        the pod's ``terminationGracePeriodSeconds``; 0 (at once) for a pod bound to no node or
        one that has finished."""
        given = options.get("gracePeriodSeconds")
        period = given if isinstance(given, int) else deep_get(obj, "spec", "terminationGracePeriodSeconds")
        if not deep_get(obj, "spec", "nodeName") or deep_get(obj, "status", "phase") in ("Failed", "Succeeded"):
            return 0
        return max(int(period), 0) if isinstance(period, int) else 0


def _check_service_account(pod: Obj, stored: Stored) -> None:
    """The ServiceAccount admission plugin's lookup: 403 for a Pod naming a ServiceAccount its
    namespace does not have (``error looking up service account ns/sa: serviceaccount "sa" not
    found``). The ``default`` account counts as present while the namespace is active: the
    service account controller (``cluster``) creates it, where kube's plugin retries for it."""
    ns = str(deep_get(pod, "metadata", "namespace") or "")
    name = deep_get(pod, "spec", "serviceAccountName")
    if not isinstance(name, str) or not name:
        return
    account = stored.get(SERVICE_ACCOUNTS, ns, name)
    if account is not None:
        if account.get("automountServiceAccountToken") is False:
            _unmount_token(pod)
        return
    if name == "default":
        namespace = stored.get(NAMESPACES, "", ns)
        if namespace is not None and not deep_get(namespace, "metadata", "deletionTimestamp"):
            return
    raise _forbidden(pod, f'error looking up service account {ns}/{name}: serviceaccount "{name}" not found')


def _unmount_token(pod: Obj) -> None:
    """The plugin's shouldAutomount: a ServiceAccount with ``automountServiceAccountToken: false``
    gets no token volume in a Pod that does not ask for one itself (defaulting added it)."""
    spec = pod.get("spec")
    if not isinstance(spec, dict) or spec.get("automountServiceAccountToken") is not None:
        return
    volumes = spec.get("volumes")
    if not isinstance(volumes, list):
        return
    added = {v.get("name") for v in volumes if isinstance(v, dict) and str(v.get("name") or "").startswith(
        "kube-api-access-") and isinstance(v.get("projected"), dict)}
    if not added:
        return
    spec["volumes"] = [v for v in volumes if not (isinstance(v, dict) and v.get("name") in added)]
    if not spec["volumes"]:
        del spec["volumes"]
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or ():
            mounts = container.get("volumeMounts") if isinstance(container, dict) else None
            if isinstance(mounts, list):
                container["volumeMounts"] = [m for m in mounts if not (isinstance(m, dict) and m.get("name") in added)]
                if not container["volumeMounts"]:
                    del container["volumeMounts"]


def _admit_priority(obj: Obj, old: Obj | None, stored: Stored) -> list[FieldError]:
    """The Priority admission plugin on create: ``priority`` (and ``preemptionPolicy``) from
    the pod's PriorityClass, or from the global default class, else 0; 403 for an unknown
    class or a given priority that differs from the class's."""
    spec = obj.get("spec")
    if old is not None or not isinstance(spec, dict):
        return []
    classes = [pc for pc in stored(PRIORITY_CLASSES) if isinstance(pc, dict)]
    wanted = spec.get("priorityClassName")
    if wanted:
        found = next((pc for pc in classes if deep_get(pc, "metadata", "name") == wanted), None)
        if found is None:
            raise _forbidden(obj, f"no PriorityClass with name {wanted} was found")
    else:
        defaults = [pc for pc in classes if pc.get("globalDefault") is True]
        found = max(defaults, key=lambda pc: int(pc.get("value") or 0)) if defaults else None
        if found is not None:
            spec["priorityClassName"] = deep_get(found, "metadata", "name")
    priority = int(found.get("value") or 0) if found is not None else 0
    given = spec.get("priority")
    if given is not None and given != priority:
        raise _forbidden(obj, f"the integer value of priority ({given}) must not be provided in pod spec; "
                              f"priority admission controller computed {priority} from the given PriorityClass name")
    spec["priority"] = priority
    policy = found.get("preemptionPolicy") if found is not None else None
    if policy:
        if spec.get("preemptionPolicy") not in (None, policy):
            raise _forbidden(obj, f"the string value of PreemptionPolicy ({spec['preemptionPolicy']}) must not be "
                                  f"provided in pod spec; priority admission controller computed {policy} from the "
                                  "given PriorityClass name")
        spec["preemptionPolicy"] = policy
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    return []


SERVICE_ACCOUNTS = "/serviceaccounts"
NAMESPACES = "/namespaces"
PRIORITY_CLASSES = "scheduling.k8s.io/priorityclasses"


def _forbidden(pod: Obj, why: str) -> APIError:
    """An admission plugin's refusal of ``pod`` (403 Forbidden)."""
    name = str(deep_get(pod, "metadata", "name") or "")
    return APIError(403, "Forbidden", f'pods "{name}" is forbidden: {why}', {"name": name, "kind": "pods"})


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


SYSTEM_PRIORITY_CLASSES = {
    "system-node-critical": (2000001000, "Used for system critical pods that must not be moved from their current node."),
    "system-cluster-critical": (2000000000, "Used for system critical pods that must run in the cluster, but can be "
                                            "moved to another node if necessary."),
}
"""The PriorityClasses every cluster bootstraps: name -> (value, description)."""
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000


class PriorityClassStrategy(Strategy):
    """PriorityClasses (pkg/apis/scheduling/validation, pkg/registry/scheduling): ``system-``
    names are reserved for the bootstrap classes (with their values), user values stop at one
    billion, ``value`` and ``preemptionPolicy`` never change, and the system classes cannot be
    deleted."""

    def validate_extra(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        errors: list[FieldError] = []
        name, value = str(deep_get(obj, "metadata", "name") or ""), obj.get("value")
        if old is not None:
            if value != old.get("value"):
                errors.append(forbidden("value", "may not be changed in an update."))
            if obj.get("preemptionPolicy") != old.get("preemptionPolicy"):
                errors.append(invalid("preemptionPolicy", obj.get("preemptionPolicy"), "field is immutable"))
            return errors
        if name.startswith("system-"):
            known = SYSTEM_PRIORITY_CLASSES.get(name)
            if known is None:
                problem = f"{name} is not a known system priority class"
            elif value != known[0]:
                problem = f"value of {name} PriorityClass must be {known[0]}"
            elif bool(obj.get("globalDefault")):
                problem = f"globalDefault of {name} PriorityClass must be false"
            else:
                return errors
            errors.append(forbidden("metadata.name", "priority class names with 'system-' prefix are reserved for "
                                                     f"system use only. error: {problem}"))
        elif isinstance(value, int) and value > HIGHEST_USER_DEFINABLE_PRIORITY:
            errors.append(forbidden("value", "maximum allowed value of a user defined priority is "
                                             f"{HIGHEST_USER_DEFINABLE_PRIORITY}"))
        return errors

    def check_delete(self, res: Resource, obj: Obj) -> None:
        name = str(deep_get(obj, "metadata", "name") or "")
        if name in SYSTEM_PRIORITY_CLASSES:
            raise APIError(403, "Forbidden", f'{res.group_resource} "{name}" is forbidden: this is a system priority '
                           "class and cannot be deleted", {"name": name, "group": res.group, "kind": res.plural})


_SCHEDULING_DIRECTIVES = ("nodeSelector", "affinity", "tolerations", "schedulingGates")


class JobStrategy(Strategy):
    """Jobs (pkg/apis/batch/validation ValidateJobSpecUpdate, in its order): ``completions`` is
    immutable except that an Indexed Job may change it together with ``parallelism`` (elastic
    Indexed Jobs, GA 1.31); the selector, the pod template, ``completionMode``,
    ``podFailurePolicy``, ``backoffLimitPerIndex``, ``managedBy`` and ``successPolicy`` are
    immutable, except that a suspended Job that never started may change its template's
    scheduling directives (node selector, affinity, tolerations, scheduling gates) and its labels
    and annotations."""

    def validate_extra(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        if old is None:
            return []
        errors = _job_completions_update(obj, old)

        def immutable(key: str) -> None:
            if deep_get(obj, "spec", key) != deep_get(old, "spec", key):
                errors.append(invalid(f"spec.{key}", deep_get(obj, "spec", key), "field is immutable"))

        immutable("selector")
        before, after = deep_get(old, "spec", "template"), deep_get(obj, "spec", "template")
        mutable = deep_get(old, "spec", "suspend") is True and not deep_get(old, "status", "startTime")
        if _template_core(before, mutable) != _template_core(after, mutable):
            errors.append(invalid("spec.template", after, "field is immutable"))
        for key in ("completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy", "successPolicy"):
            immutable(key)
        return errors


def _job_completions_update(obj: Obj, old: Obj) -> list[FieldError]:
    """validateCompletions with elastic Indexed Jobs allowed: a NonIndexed Job's ``completions``
    is immutable; an Indexed Job's may change only to its (new) ``parallelism``."""
    completions, before = deep_get(obj, "spec", "completions"), deep_get(old, "spec", "completions")
    if completions == before:
        return []
    if deep_get(obj, "spec", "completionMode") != "Indexed":
        return [invalid("spec.completions", completions, "field is immutable")]
    if completions is None or completions == deep_get(obj, "spec", "parallelism"):
        return []
    return [invalid("spec.completions", completions, "can only be modified in tandem with spec.parallelism")]


def _template_core(template: Any, drop_scheduling: bool) -> Any:
    """``template`` without what a suspended, never started Job may change (when ``drop_scheduling``)."""
    if not drop_scheduling or not isinstance(template, dict):
        return template
    core = copy_json(template)
    meta = core.get("metadata")
    if isinstance(meta, dict):
        meta.pop("labels", None)
        meta.pop("annotations", None)
    spec = core.get("spec")
    if isinstance(spec, dict):
        for key in _SCHEDULING_DIRECTIVES:
            spec.pop(key, None)
    return core
