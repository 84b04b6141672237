"""POST-only subresources and actions of built-in kinds, answered without storing the request:

- ``serviceaccounts/<name>/token``: a TokenRequest with a token the server accepts (``tokens``);
- ``pods/<name>/eviction`` (``kubectl drain``): deletes the pod with the Eviction's deleteOptions
  (no PodDisruptionBudget is consulted: nothing computes their status);
- ``pods/<name>/binding`` and ``bindings`` (what a scheduler posts): assign a pod to a node.

``create`` raises ``APIError`` with Kubernetes' codes (404 for a missing object, 409 for a pod
already bound, 422 for an invalid request); it runs on the server's event loop, like ``Core``.
"""

from __future__ import annotations

import time
from typing import Any

from samplecontroller.apiserver import decoding, tokens
from samplecontroller.apiserver.core import Core
from samplecontroller.apiserver.errors import APIError, bad_request, not_allowed
from samplecontroller.apiserver.objects import copy_json, name_of, now_rfc3339
from samplecontroller.apiserver.restmapper import Resource

__all__ = ["create"]

_SUCCESS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def create(core: Core, res: Resource, ns: str, name: str, subresource: str, body: Any, *, manager: str,
           dry_run: bool, signer: tokens.Signer) -> dict[str, Any]:
    """Answer a POST to ``res`` (``bindings``) or to subresource ``subresource`` of ``ns/name``;
    a body that is not an object is 400 and changes nothing."""
    if not isinstance(body, dict):
        raise bad_request("the request body must be a JSON object")
    if subresource == "token":
        return token_request(core, res, ns, name, body, signer)
    if subresource == "eviction":
        options = (body.get("deleteOptions") if isinstance(body, dict) else None) or {}
        core.delete(res, ns, name, options, dry_run=dry_run)
        return dict(_SUCCESS)
    if subresource == "binding" or (res.group, res.kind) == ("", "Binding"):
        pods = core.mapper.get("", "v1", "pods")
        assert pods is not None
        bind(core, pods, ns, name or name_of(body), body, manager, dry_run)
        return dict(_SUCCESS)
    raise not_allowed()


def bind(core: Core, pods: Resource, ns: str, name: str, body: Any, manager: str, dry_run: bool = False) -> None:
    """A Binding: set the pod's ``spec.nodeName`` to ``target.name`` and its PodScheduled condition."""
    target = body.get("target") if isinstance(body, dict) else None
    node = str(target.get("name") or "") if isinstance(target, dict) else ""
    if not node or (target or {}).get("kind", "Node") not in ("", "Node"):
        raise APIError(422, "Invalid", f'Binding "{name}" is invalid: target.name: Required value',
                       {"name": name, "kind": "Binding"})
    pod = copy_json(core.get(pods, ns, name))
    assigned = (pod.get("spec") or {}).get("nodeName")
    if assigned:
        raise APIError(409, "Conflict", f'Operation cannot be fulfilled on pods/binding "{name}": pod {name} is '
                       f'already assigned to node "{assigned}"', {"name": name, "kind": "pods"})
    if dry_run:
        return
    pod.setdefault("spec", {})["nodeName"] = node
    pod, _, _ = core.update(pods, ns, name, pod, manager=manager)
    pod = copy_json(pod)
    conditions = [c for c in (pod.get("status") or {}).get("conditions") or () if c.get("type") != "PodScheduled"]
    conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                       "lastTransitionTime": now_rfc3339()})
    pod.setdefault("status", {})["conditions"] = conditions
    core.update(pods, ns, name, pod, subresource="status", manager=manager)


def token_request(core: Core, res: Resource, ns: str, name: str, body: Any, signer: tokens.Signer) -> dict[str, Any]:
    """A TokenRequest answered with a token for the service account ``ns/name``, for the
    requested audiences (default: the server's API audiences) and bound to
    ``spec.boundObjectRef`` (a Pod, Secret or Node that must exist, with the given uid)."""
    account = core.get(res, ns, name)
    seconds, spec = _token_request_spec(name, body)
    audiences = [str(a) for a in spec.get("audiences") or ()] or list(signer.api_audiences)
    ref = spec.get("boundObjectRef")
    bound = _bound_objects(core, ns, name, ref) if isinstance(ref, dict) else []
    if bound and isinstance(ref, dict):
        ref = {**ref, "uid": bound[0].uid}
    token, expiry = signer.issue(ns, name, str(account["metadata"].get("uid", "")), audiences, seconds, bound)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(expiry))
    return {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": name, "namespace": ns, "creationTimestamp": None},
            "spec": {"audiences": audiences, "expirationSeconds": seconds, "boundObjectRef": ref},
            "status": {"token": token, "expirationTimestamp": stamp}}


def _bound_objects(core: Core, ns: str, account: str, ref: dict[str, Any]) -> list[tokens.BoundObject]:
    """What a token bound by ``ref`` carries in its claims, checked as kube's TokenRequest REST
    does: the object must exist (404), a Pod must run as the service account (400), a given uid
    must be the object's (409); any kind but Pod, Secret and Node is a 400. A Pod's token also
    names the Pod's node, when that node exists."""
    api_version, kind, name = str(ref.get("apiVersion") or ""), str(ref.get("kind") or ""), str(ref.get("name") or "")
    group, _, version = api_version.rpartition("/")
    plural = {"Pod": "pods", "Secret": "secrets", "Node": "nodes"}.get(kind) if group == "" else None
    resource = core.mapper.get("", "v1", plural) if plural else None
    if resource is None:
        raise bad_request(f"cannot bind token to object of type {group}/{version}, Kind={kind}")
    obj = core.get(resource, ns if resource.namespaced else "", name)
    uid = str((obj.get("metadata") or {}).get("uid") or "")
    if kind == "Pod" and (obj.get("spec") or {}).get("serviceAccountName") != account:
        raise bad_request(f'cannot bind token for serviceaccount "{account}" to pod running with different '
                          "serviceaccount name.")
    given = ref.get("uid")
    if given and given != uid:
        raise APIError(409, "Conflict", f'Operation cannot be fulfilled on {kind} "{name}": the UID in the bound '
                       f"object reference ({given}) does not match the UID in record. The object might have been "
                       "deleted and then recreated", {"name": name, "kind": kind})
    bound = [tokens.BoundObject(kind.lower(), name, uid)]
    node_name = (obj.get("spec") or {}).get("nodeName") if kind == "Pod" else None
    nodes = core.mapper.get("", "v1", "nodes")
    node = core.get_entry(nodes, "", str(node_name)) if node_name and nodes is not None else None
    if node is not None:
        bound.append(tokens.BoundObject("node", str(node_name), str((node.obj.get("metadata") or {}).get("uid") or "")))
    return bound


MIN_TOKEN_SECONDS = 10 * 60
MAX_TOKEN_SECONDS = 1 << 32


def _token_request_spec(name: str, body: Any) -> tuple[int, dict[str, Any]]:
    """The TokenRequest's expirationSeconds (defaulted to 3600) and spec, checked as
    kube-apiserver does: a value that is not an int64 is a 400 decoding error, one below 10
    minutes or above 2^32 seconds a 422 (pkg/apis/authentication/validation)."""
    request = copy_json(body) if isinstance(body, dict) else {}
    try:
        decoding.normalize("authentication.k8s.io", "v1", "TokenRequest", request)
    except decoding.DecodeError as err:
        raise bad_request(str(err)) from None
    spec: dict[str, Any] = request["spec"] if isinstance(request.get("spec"), dict) else {}
    seconds = spec.get("expirationSeconds", 3600)
    limit = ("less than 10 minutes" if seconds < MIN_TOKEN_SECONDS
             else "larger than 2^32 seconds" if seconds > MAX_TOKEN_SECONDS else "")
    if limit:
        field = "spec.expirationSeconds"
        raise APIError(422, "Invalid", f'TokenRequest.authentication.k8s.io "{name}" is invalid: '
                       f"{field}: Invalid value: {seconds}: may not specify a duration {limit}",
                       {"name": name, "group": "authentication.k8s.io", "kind": "TokenRequest",
                        "causes": [{"reason": "FieldValueInvalid", "field": field,
                                    "message": f"Invalid value: {seconds}: may not specify a duration {limit}"}]})
    return int(seconds), spec
