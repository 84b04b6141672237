"""Subresources that are no plain object reads or writes: the kubelet's connect verbs on pods
(log, exec, attach, portforward) answered as for a pod that never runs, and a namespace's
finalize (the create-only reviews are ``reviews``)."""

from __future__ import annotations

from typing import Any

from samplecontroller.apiserver.errors import APIError, bad_request, not_allowed
from samplecontroller.apiserver.filters import json_response
from samplecontroller.apiserver.handlers.common import Scope
from samplecontroller.apiserver.httpmessages import AnyResponse, Request, Response
from samplecontroller.apiserver.objects import deep_get
from samplecontroller.apiserver.requestinfo import RequestInfo
from samplecontroller.apiserver.restmapper import Resource

__all__ = ["connect", "finalize", "pod_container"]


def connect(scope: Scope, request: Request, t: RequestInfo) -> AnyResponse:
    """Pod log/exec/attach/portforward as kube-apiserver answers them before it would proxy to
    the kubelet: the container must be valid; an unscheduled pod has empty logs and cannot be
    exec'd into. There is no kubelet, so a scheduled pod's logs are empty too and streams fail."""
    if t.subresource == "log" and request.method != "GET":
        raise not_allowed()
    pod = scope.core.get(t.res, t.namespace or "", t.name)
    pod_container(pod, request.query.get("container", ""))
    if t.subresource == "log":
        return Response(body=b"", content_type="text/plain")
    if not deep_get(pod, "spec", "nodeName"):
        raise bad_request(f"pod {t.name} does not have a host assigned")
    raise APIError(503, "ServiceUnavailable",
                   f"the embedded API server runs no kubelet: cannot {t.subresource} pod {t.name}")

def finalize(scope: Scope, res: Resource, name: str, body: Any) -> Response:
    """PUT of a namespace's finalize subresource: only ``spec.finalizers`` changes."""
    return json_response(scope.core.finalize(res, name, body))


def pod_container(pod: dict[str, Any], container: str) -> str:
    """The container a log/exec request addresses (kube-apiserver's validateContainer): the
    only one when ``container`` is empty; 400 when it is ambiguous or unknown."""
    spec = pod.get("spec") or {}
    containers = [c for c in spec.get("containers") or () if isinstance(c, dict)]
    everyone = [c for key in ("initContainers", "containers", "ephemeralContainers")
                for c in spec.get(key) or () if isinstance(c, dict)]
    name = str((pod.get("metadata") or {}).get("name") or "")
    if not container:
        if len(containers) == 1:
            return str(containers[0].get("name") or "")
        if not containers:
            raise bad_request(f"a container name must be specified for pod {name}")
        names = " ".join(str(c.get("name")) for c in everyone)
        raise bad_request(f"a container name must be specified for pod {name}, choose one of: [{names}]")
    if not any(c.get("name") == container for c in everyone):
        raise bad_request(f"container {container} is not valid for pod {name}")
    return container
