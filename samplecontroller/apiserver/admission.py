"""Admission webhooks: the embedded API server calls the registered Mutating- and
ValidatingWebhookConfigurations (admissionregistration.k8s.io/v1) with AdmissionReview v1.
ValidatingAdmissionPolicies (``admission_policy``) run before the validating webhooks.

Contract (as kube-apiserver, within the limits below):
- A webhook is called when one of its ``rules`` matches the request (operations, apiGroups,
  apiVersions, resources with ``*``, ``*/*`` and ``<resource>/<subresource>``, scope) and its
  ``namespaceSelector`` (the namespace's labels; for a Namespace its own) and ``objectSelector``
  (the labels of the object or the old object) select it.
- Mutating webhooks run first, in configuration-name then list order; each answer's JSONPatch is
  applied before the next call. Validating webhooks then see the final object.
- A denial becomes the webhook's Status (code at least 400, default 400) with the message
  ``admission webhook "<name>" denied the request: <message>``. Warnings become Warning headers.
- A call that fails (unreachable, timeout after ``timeoutSeconds`` (default 10), a bad answer)
  is ignored under ``failurePolicy: Ignore`` and is a 500 InternalError
  ``failed calling webhook "<name>": ...`` under ``Fail`` (the default).
- ``matchConditions`` (CEL, the engine of ``admission_policy``): a false one skips the webhook;
  failed evaluations skip it under ``Ignore`` and are a 403 (the evaluation errors) under ``Fail``.

Limits: only ``clientConfig.url`` is callable (a ``service`` reference has no cluster DNS to
resolve, so it counts as a failed call; the transport is ``webhookclient``, shared with CRD
conversion webhooks); ``authorizer`` is not bound in ``matchConditions``;
``reinvocationPolicy`` is not honoured; mutating webhooks answering DELETE cannot
change anything (as in Kubernetes). Calls are made from the server's event loop with aiohttp,
so a webhook may call back into this API server.
"""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from samplecontroller.apimachinery.jsonpatch import PatchError, apply_patch
from samplecontroller.apiserver.admission_policy import (
    PolicyAdmission,
    PolicyRequest,
    aggregate,
    match_conditions,
)
from samplecontroller.apiserver.admission_rules import labels_of, rule_matches, selector
from samplecontroller.apiserver.errors import APIError
from samplecontroller.apiserver.restmapper import Resource, RESTMapper
from samplecontroller.apiserver.storage import Store
from samplecontroller.apiserver.webhookclient import WebhookCallError, WebhookClient

__all__ = ["MUTATING_KEY", "VALIDATING_KEY", "AdmissionRequest", "Admitter"]

MUTATING_KEY = "admissionregistration.k8s.io/mutatingwebhookconfigurations"
VALIDATING_KEY = "admissionregistration.k8s.io/validatingwebhookconfigurations"
NAMESPACES_KEY = "/namespaces"
DEFAULT_TIMEOUT = 10.0
USER_INFO = {"username": "admin", "groups": ["system:masters", "system:authenticated"]}


@dataclass
class AdmissionRequest:
    """What is being admitted: ``operation`` is CREATE, UPDATE or DELETE; ``user_info`` is the
    requester (``authentication.UserInfo.to_wire``; the admin when not given)."""

    res: Resource
    operation: str
    namespace: str
    name: str
    obj: dict[str, Any] | None
    old: dict[str, Any] | None = None
    subresource: str = ""
    dry_run: bool = False
    warnings: list[str] = field(default_factory=list)
    user_info: dict[str, Any] | None = None


class Admitter:
    """Finds the webhooks that match a request in ``store`` and calls them."""

    def __init__(self, store: Store, mapper: RESTMapper | None = None, client: WebhookClient | None = None) -> None:
        self.store = store
        self.policies = PolicyAdmission(store, mapper)
        self.client = client if client is not None else WebhookClient()

    async def close(self) -> None:
        """Close the webhook connections (the server calls this when it shuts down)."""
        await self.client.close()

    def active(self) -> bool:
        """True when any webhook configuration exists (else admission costs nothing)."""
        return bool(self.store.count(MUTATING_KEY) or self.store.count(VALIDATING_KEY) or self.policies.active())

    async def mutate(self, req: AdmissionRequest) -> dict[str, Any] | None:
        """Run the matching mutating webhooks; return the (possibly patched) object."""
        for hook in self._matching(MUTATING_KEY, req):
            response = await self._call(hook, req)
            if response is None or req.obj is None or req.operation == "DELETE":
                continue
            patch = response.get("patch")
            if patch:
                if response.get("patchType", "JSONPatch") != "JSONPatch":
                    self._fail(hook, f"unsupported patchType {response.get('patchType')!r}")
                    continue
                try:
                    ops = json.loads(base64.b64decode(patch))
                    patched = apply_patch(req.obj, ops)
                except (ValueError, TypeError, PatchError) as err:
                    self._fail(hook, f"the patch could not be applied: {err}")
                    continue
                if not isinstance(patched, dict):
                    self._fail(hook, "the patch did not produce an object")
                    continue
                req.obj = patched
        return req.obj

    async def validate(self, req: AdmissionRequest) -> None:
        """Run the ValidatingAdmissionPolicies (``admission_policy``), then the matching validating
        webhooks concurrently; raise the first denial."""
        if self.policies.active():
            req.warnings += self.policies.validate(PolicyRequest(
                req.res, req.operation, req.namespace, req.name, req.obj, req.old, req.subresource, req.dry_run,
                req.user_info or USER_INFO))
        hooks = self._matching(VALIDATING_KEY, req)
        await asyncio.gather(*(self._call(hook, req) for hook in hooks))

    # ------------------------------------------------------------------ matching

    def _matching(self, key: str, req: AdmissionRequest) -> list[dict[str, Any]]:
        hooks: list[dict[str, Any]] = []
        for _, entry in self.store.list(key, ""):
            for hook in entry.obj.get("webhooks") or ():
                if isinstance(hook, dict) and self._matches(hook, req):
                    hooks.append(hook)
        return hooks

    def _matches(self, hook: Mapping[str, Any], req: AdmissionRequest) -> bool:
        if not any(rule_matches(rule, req.operation, req.res, req.subresource) for rule in hook.get("rules") or () if isinstance(rule, dict)):
            return False
        try:
            object_selector = selector(hook.get("objectSelector"))
            namespace_selector = selector(hook.get("namespaceSelector"))
        except ValueError:
            return False  # an invalid selector matches nothing
        if not object_selector.empty() and not any(
                object_selector.matches(labels_of(o)) for o in (req.obj, req.old) if o is not None):
            return False
        if not namespace_selector.empty():
            if req.res.kind == "Namespace" and not req.res.group:
                if not namespace_selector.matches(labels_of(req.obj or req.old)):
                    return False
            elif req.res.namespaced:
                ns = self.store.get(NAMESPACES_KEY, "", req.namespace)
                if not namespace_selector.matches(labels_of(ns.obj if ns else None)):
                    return False
        return self._conditions_match(hook, req)

    @staticmethod
    def _conditions_match(hook: Mapping[str, Any], req: AdmissionRequest) -> bool:
        """The webhook's ``matchConditions`` (CEL): any false skips the webhook; failed evaluations
        skip it under ``failurePolicy: Ignore`` and are a 403 under ``Fail``."""
        if not hook.get("matchConditions"):
            return True
        variables = {"object": req.obj, "oldObject": req.old, "request": _review(req)["request"]}
        matches, errors = match_conditions(hook.get("matchConditions"), variables)
        if errors and hook.get("failurePolicy", "Fail") != "Ignore":
            details: dict[str, Any] = {"name": req.name, "kind": req.res.plural}
            if req.res.group:
                details["group"] = req.res.group
            raise APIError(403, "Forbidden", f'{req.res.group_resource} "{req.name}" is forbidden: '
                           f"{aggregate(errors)}", details)
        return matches and not errors

    # ------------------------------------------------------------------ calling

    async def _call(self, hook: Mapping[str, Any], req: AdmissionRequest) -> dict[str, Any] | None:
        """The webhook's ``response`` (allowed); None when a failure is ignored. Raises on denial."""
        name = str(hook.get("name", ""))
        try:
            response = await _post(self.client, hook, _review(req))
        except WebhookCallError as err:
            self._fail(hook, f"failed to call webhook: {err}")
            return None
        except ValueError as err:
            self._fail(hook, str(err) or type(err).__name__)
            return None
        for warning in response.get("warnings") or ():
            req.warnings.append(str(warning))
        if response.get("allowed") is not True:
            raise _denied(name, response.get("status"))
        return response

    @staticmethod
    def _fail(hook: Mapping[str, Any], reason: str) -> None:
        if hook.get("failurePolicy", "Fail") == "Ignore":
            return
        raise APIError(500, "InternalError",
                       f'Internal error occurred: failed calling webhook "{hook.get("name", "")}": {reason}')


def _review(req: AdmissionRequest) -> dict[str, Any]:
    res = req.res
    gvk = {"group": res.group, "version": res.version, "kind": res.kind}
    gvr = {"group": res.group, "version": res.version, "resource": res.plural}
    request: dict[str, Any] = {
        "uid": str(uuid.uuid4()), "kind": gvk, "resource": gvr, "requestKind": gvk, "requestResource": gvr,
        "name": req.name, "operation": req.operation, "userInfo": req.user_info or USER_INFO,
        "object": req.obj if req.operation != "DELETE" else None, "oldObject": req.old, "dryRun": req.dry_run,
    }
    if res.namespaced:
        request["namespace"] = req.namespace
    if req.subresource:
        request["subResource"] = req.subresource
        request["requestSubResource"] = req.subresource
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


async def _post(client: WebhookClient, hook: Mapping[str, Any], review: dict[str, Any]) -> dict[str, Any]:
    timeout = float(hook.get("timeoutSeconds") or DEFAULT_TIMEOUT)
    status, raw = await client.post(hook.get("clientConfig") or {}, review, timeout,
                                    query=f"timeout={int(timeout)}s")
    if status != 200:
        raise ValueError(f"the webhook answered HTTP {status}")
    body = json.loads(raw)
    response = body.get("response") if isinstance(body, dict) else None
    if not isinstance(response, dict):
        raise ValueError("the answer is not an AdmissionReview with a response")
    if response.get("uid") != review["request"]["uid"]:
        raise ValueError(f"expected response.uid={review['request']['uid']!r}, got {response.get('uid')!r}")
    return response


def _denied(name: str, status: Any) -> APIError:
    status = status if isinstance(status, dict) else {}
    code = status.get("code") if isinstance(status.get("code"), int) else 0
    denied_by = f'admission webhook "{name}" denied the request'
    message = status.get("message") or status.get("reason")
    text = f"{denied_by}: {message}" if message else f"{denied_by} without explanation"
    err = APIError(max(int(code), 400), str(status.get("reason") or ""), text, status.get("details"))
    if not status.get("reason"):
        err.status.pop("reason", None)
    return err
