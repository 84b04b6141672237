"""Admission webhooks: the embedded API server calls the registered Mutating- and
ValidatingWebhookConfigurations (admissionregistration.k8s.io/v1) with AdmissionReview v1.
ValidatingAdmissionPolicies (``admission_policy``) run before the validating webhooks.

Contract (as kube-apiserver, within the limits below):
- A webhook is called when one of its ``rules`` matches the request (operations, apiGroups,
  apiVersions, resources with ``*``, ``*/*`` and ``<resource>/<subresource>``, scope) and its
  ``namespaceSelector`` (the namespace's labels; for a Namespace its own) and ``objectSelector``
  (the labels of the object or the old object) select it.
- ``matchPolicy``: under ``Equivalent`` (the default) a webhook none of whose rules matches the
  request's group/version/resource is still called when a rule matches another served version of
  the same custom resource (earlier rules first, versions in the CRD's order). The object and the
  old object are converted to that version by the CRD's conversion (strategy None: ``apiVersion``
  only; Webhook: its conversion webhook, ``crdconversion``) and the AdmissionReview's ``kind`` and
  ``resource`` name it, while ``requestKind``/``requestResource`` stay the request's. A mutated
  object is converted back to the request's version after the last mutating webhook (only when
  one changed it); validating webhooks get one conversion per version. A failed conversion is a
  500 InternalError. ``matchConditions`` see the converted objects. ``Exact``: only the request's
  own group/version/resource matches.
- Mutating webhooks run first, in configuration-name then list order; each answer's JSONPatch is
  applied before the next call. Validating webhooks then see the final object. As kube's
  mutating dispatcher: an empty patch changes nothing; a patch that is not a JSONPatch or cannot
  be decoded is a failed call; a non-empty patch on DELETE (no object) is a 500 InternalError
  ``admission webhook "<name>" attempted to modify the object, which is not supported for this
  operation`` and one that cannot be applied a 500 ``Internal error occurred: <why>``, whatever
  the ``failurePolicy`` (neither is a call failure).
- No webhook is called for the admission configuration kinds (Mutating- and
  ValidatingWebhookConfiguration, Validating- and MutatingAdmissionPolicy and their bindings:
  kube's ``IsExemptAdmissionConfigurationResource``); no policy applies to the policy kinds.
- A denial becomes the webhook's Status (code at least 400, default 400) with the message
  ``admission webhook "<name>" denied the request: <message>`` and the rest kept (``details``:
  causes, retryAfterSeconds, sent as ``Retry-After`` too), as kube's ``webhookerrors.ToStatusErr``.
  Warnings become Warning headers.
- A call that fails (unreachable, timeout after ``timeoutSeconds`` (default 10), a bad answer)
  is ignored under ``failurePolicy: Ignore`` and is a 500 InternalError
  ``failed calling webhook "<name>": ...`` under ``Fail`` (the default).
- ``matchConditions`` (CEL, the engine of ``admission_policy``): a false one skips the webhook;
  failed evaluations skip it under ``Ignore`` and are a 403 (the evaluation errors) under ``Fail``.

Limits: only ``clientConfig.url`` is callable (a ``service`` reference has no cluster DNS to
resolve, so it counts as a failed call; the transport is ``webhookclient``, shared with CRD
conversion webhooks); equivalent resources are only the versions of one CRD (the only built-in
served in two versions, HorizontalPodAutoscaler autoscaling/v1 and v2, has differently shaped
versions and is matched exactly; kube's cross-group equivalents such as deployments in
apps/extensions are not served here); ``matchConditions`` see ``authorizer`` (the requester's
RBAC permissions, ``admission_policy``) but are not compiled when the configuration is written;
``reinvocationPolicy`` is not honoured. Calls are made from the server's event loop with aiohttp,
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
    authorizer_variable,
    match_conditions,
)
from samplecontroller.apiserver.admission_rules import (
    equivalent_resources,
    labels_of,
    matched_resource,
    selector,
)
from samplecontroller.apiserver.cel import authz
from samplecontroller.apiserver.crdconversion import Converter
from samplecontroller.apiserver.errors import APIError
from samplecontroller.apiserver.restmapper import Resource, RESTMapper
from samplecontroller.apiserver.storage import Store
from samplecontroller.apiserver.webhookclient import WebhookCallError, WebhookClient

__all__ = ["MUTATING_KEY", "VALIDATING_KEY", "AdmissionRequest", "Admitter"]

MUTATING_KEY = "admissionregistration.k8s.io/mutatingwebhookconfigurations"
VALIDATING_KEY = "admissionregistration.k8s.io/validatingwebhookconfigurations"
NAMESPACES_KEY = "/namespaces"
CRD_KEY = "apiextensions.k8s.io/customresourcedefinitions"
DEFAULT_TIMEOUT = 10.0
USER_INFO = {"username": "admin", "groups": ["system:masters", "system:authenticated"]}


ADMISSION_GROUP = "admissionregistration.k8s.io"
POLICY_KINDS = frozenset({"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
                          "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"})
"""The policy configuration kinds, which admission policies are not applied to (kube's policy
plugin's ``admissionResources``)."""
WEBHOOK_EXEMPT_KINDS = POLICY_KINDS | {"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"}
"""The admission configuration kinds, which admission webhooks are not called for (kube's
``IsExemptAdmissionConfigurationResource``): a webhook that is down cannot lock its own
configuration (or a policy's) against a fix."""


def exempt_from_webhooks(res: Resource) -> bool:
    """True for the admission configuration resources no webhook is called for."""
    return res.group == ADMISSION_GROUP and res.kind in WEBHOOK_EXEMPT_KINDS


def exempt_from_policies(res: Resource) -> bool:
    """True for the policy configuration resources no admission policy applies to."""
    return res.group == ADMISSION_GROUP and res.kind in POLICY_KINDS


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


@dataclass
class _View:
    """The versioned attributes of a request (kube's ``VersionedAttributes``): its object and old
    object in ``res``'s version; ``dirty`` once a mutating webhook changed the object."""

    res: Resource
    obj: dict[str, Any] | None
    old: dict[str, Any] | None
    dirty: bool = False


class Admitter:
    """Finds the webhooks that match a request in ``store`` and calls them. ``converter`` converts
    custom resources between the versions of their CRD (for ``matchPolicy: Equivalent``; by
    default one over ``client``, which the server's handlers share)."""

    def __init__(self, store: Store, mapper: RESTMapper | None = None, client: WebhookClient | None = None,
                 converter: Converter | None = None) -> None:
        self.store = store
        self.mapper = mapper
        self.policies = PolicyAdmission(store, mapper)
        self.client = client if client is not None else WebhookClient()
        self.converter = converter if converter is not None else Converter(self.client)

    async def close(self) -> None:
        """Close the webhook connections (the server calls this when it shuts down)."""
        await self.client.close()

    def active(self) -> bool:
        """True when any webhook configuration exists (else admission costs nothing)."""
        return bool(self.store.count(MUTATING_KEY) or self.store.count(VALIDATING_KEY) or self.policies.active())

    async def mutate(self, req: AdmissionRequest) -> dict[str, Any] | None:
        """Run the matching mutating webhooks; return the (possibly patched) object, in the
        request's version."""
        if exempt_from_webhooks(req.res):
            return req.obj
        view = _View(req.res, req.obj, req.old)
        for hook, matched in self._matching(MUTATING_KEY, req):
            view = await self._in_version(view, matched)
            if not self._conditions_match(hook, req, view):
                continue
            response = await self._call(hook, req, view)
            if response is not None:
                view = self._patched(hook, req, view, response)
        if view.dirty:
            # the mutated object back in the request's version (kube converts the versioned
            # object into the request's attributes once, after the last webhook)
            req.obj = (await self._in_version(view, req.res, old_too=False)).obj
        return req.obj

    async def validate(self, req: AdmissionRequest) -> None:
        """Run the ValidatingAdmissionPolicies (``admission_policy``), then the matching validating
        webhooks concurrently (the object converted once per matched version); raise the first
        denial."""
        if self.policies.active() and not exempt_from_policies(req.res):
            req.warnings += await self.policies.validate(PolicyRequest(
                req.res, req.operation, req.namespace, req.name, req.obj, req.old, req.subresource, req.dry_run,
                req.user_info or USER_INFO), self._converted)
        if exempt_from_webhooks(req.res):
            return
        views = {req.res.version: _View(req.res, req.obj, req.old)}
        calls = []
        for hook, matched in self._matching(VALIDATING_KEY, req):
            if matched.version not in views:
                views[matched.version] = await self._in_version(views[req.res.version], matched)
            view = views[matched.version]
            if self._conditions_match(hook, req, view):
                calls.append(self._call(hook, req, view, mutating=False))
        await asyncio.gather(*calls)

    # ------------------------------------------------------------------ matching

    def _matching(self, key: str, req: AdmissionRequest) -> list[tuple[dict[str, Any], Resource]]:
        """The webhooks whose rules and selectors match ``req``, each with the resource (version)
        its rule matched."""
        hooks: list[tuple[dict[str, Any], Resource]] = []
        for _, entry in self.store.list(key, ""):
            for hook in entry.obj.get("webhooks") or ():
                if not isinstance(hook, dict):
                    continue
                matched = self._matched_resource(hook, req)
                if matched is not None and self._selected(hook, req):
                    hooks.append((hook, matched))
        return hooks

    def _matched_resource(self, hook: Mapping[str, Any], req: AdmissionRequest) -> Resource | None:
        """The request's resource when a rule matches it; else, under ``matchPolicy: Equivalent``
        (the default), the first equivalent resource a rule matches (earlier rules first, as
        kube's ShouldCallHook); None when nothing matches."""
        return matched_resource(hook.get("rules") or (), req.operation, req.res, req.subresource, "",
                                hook.get("matchPolicy"), equivalent_resources(self.mapper, req.res, req.subresource))

    def _selected(self, hook: Mapping[str, Any], req: AdmissionRequest) -> bool:
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
        return True

    def _conditions_match(self, hook: Mapping[str, Any], req: AdmissionRequest, view: _View) -> bool:
        """The webhook's ``matchConditions`` (CEL, on the versioned object, with the requester's
        ``authorizer``): any false skips the webhook; failed evaluations skip it under
        ``failurePolicy: Ignore`` and are a 403 under ``Fail``."""
        if not hook.get("matchConditions"):
            return True
        authorize = self.policies.authorize
        variables = {"object": view.obj, "oldObject": view.old, "request": _review(req, view)["request"],
                     **authorizer_variable(authorize, req.user_info or USER_INFO, req.res, req.subresource,
                                           req.namespace, req.name)}
        with authz.bind(authorize):
            matches, errors = match_conditions(hook.get("matchConditions"), variables)
        if errors and hook.get("failurePolicy", "Fail") != "Ignore":
            details: dict[str, Any] = {"name": req.name, "kind": req.res.plural}
            if req.res.group:
                details["group"] = req.res.group
            raise APIError(403, "Forbidden", f'{req.res.group_resource} "{req.name}" is forbidden: '
                           f"{aggregate(errors)}", details)
        return matches and not errors

    # ------------------------------------------------------------------ conversion

    async def _in_version(self, view: _View, res: Resource, old_too: bool = True) -> _View:
        """``view`` with its object (and old object unless not ``old_too``) in ``res``'s version
        (see ``_converted``)."""
        if res.version == view.res.version:
            return view
        obj = await self._converted(view.obj, res)
        old = await self._converted(view.old, res) if old_too else view.old
        return _View(res, obj, old, view.dirty)

    async def _converted(self, obj: dict[str, Any] | None, res: Resource) -> dict[str, Any] | None:
        """``obj`` in ``res``'s version by its CRD's conversion (strategy None: an apiVersion
        change; Webhook: its conversion webhook, one review per object as kube converts the
        object and the old object apart). Objects of another kind (a Scale) are the same in
        every version and stay as they are. A failed conversion is a 500 InternalError, as kube's
        dispatchers answer it."""
        if obj is None or obj.get("kind") != res.kind:
            return obj
        crd = self.store.get(CRD_KEY, "", res.crd_name)
        if crd is None:
            raise APIError(500, "InternalError", f"Internal error occurred: unable to convert to "
                           f"{res.group_version}, Kind={res.kind}: no CustomResourceDefinition {res.crd_name}")
        try:
            return (await self.converter.convert(crd.obj, [obj], res.version))[0]
        except APIError as err:
            raise APIError(500, "InternalError", f"Internal error occurred: {err}") from None

    # ------------------------------------------------------------------ calling

    async def _call(self, hook: Mapping[str, Any], req: AdmissionRequest, view: _View,
                    mutating: bool = True) -> dict[str, Any] | None:
        """The webhook's ``response`` (allowed); None when a failure is ignored. Raises on denial.
        A validating webhook's answer with ``patch`` or ``patchType`` is invalid, a failed call
        whether it allows or not (kube's VerifyAdmissionResponse)."""
        name = str(hook.get("name", ""))
        try:
            response = await _post(self.client, hook, _review(req, view))
        except WebhookCallError as err:
            self._fail(hook, f"failed to call webhook: {err}")
            return None
        except ValueError as err:
            self._fail(hook, str(err) or type(err).__name__)
            return None
        invalid = _invalid_patch_fields(response, mutating)
        if invalid:  # checked before ``allowed``, as kube's verifyAdmissionResponse
            self._fail(hook, f"received invalid webhook response: {invalid}")
            return None
        for warning in response.get("warnings") or ():
            req.warnings.append(str(warning))
        if response.get("allowed") is not True:
            raise _denied(name, response.get("status"))
        return response

    def _patched(self, hook: Mapping[str, Any], req: AdmissionRequest, view: _View,
                 response: Mapping[str, Any]) -> _View:
        """``view`` with the JSONPatch of a mutating webhook's ``response`` applied, as kube's
        mutating dispatcher applies it: a patch that is not a JSONPatch or cannot be decoded is a
        failed call (``failurePolicy`` decides); an empty one changes nothing; a non-empty one on
        an operation without an object (DELETE) and one that cannot be applied are 500s whatever
        the policy (they are not call failures: ignoring them would admit an unmutated object).
        (``_call`` has checked that ``patch`` and ``patchType`` come together.)"""
        patch, patch_type = response.get("patch"), response.get("patchType")
        if not patch:
            return view
        if patch_type != "JSONPatch":
            self._fail(hook, f"unsupported patch type {json.dumps(patch_type)}")
            return view
        try:
            ops = json.loads(base64.b64decode(patch, validate=True))
            if not isinstance(ops, list) or not all(isinstance(op, dict) for op in ops):
                raise ValueError("a JSON patch must be a list of operation objects")
        except (ValueError, TypeError) as err:
            self._fail(hook, f"received undecodable patch in webhook response: {err}")
            return view
        if not ops:
            return view
        if view.obj is None or req.operation == "DELETE":
            raise internal_error(f'admission webhook "{hook.get("name", "")}" attempted to modify the object, '
                                 "which is not supported for this operation")
        try:
            patched = apply_patch(view.obj, ops)
        except PatchError as err:
            raise internal_error(str(err)) from None
        if not isinstance(patched, dict):
            raise internal_error("the patched object is not a JSON object")
        view.obj, view.dirty = patched, True
        return view

    @staticmethod
    def _fail(hook: Mapping[str, Any], reason: str) -> None:
        if hook.get("failurePolicy", "Fail") == "Ignore":
            return
        raise internal_error(f'failed calling webhook "{hook.get("name", "")}": {reason}')


def internal_error(why: str) -> APIError:
    """kube's ``NewInternalError``: 500 InternalError ``Internal error occurred: <why>``, the
    error also the one cause in ``details``."""
    return APIError(500, "InternalError", f"Internal error occurred: {why}", {"causes": [{"message": why}]})


def _review(req: AdmissionRequest, view: _View) -> dict[str, Any]:
    """The AdmissionReview of ``req`` for a webhook whose rule matched ``view.res``: ``kind`` and
    ``resource`` (and the objects) in that version, ``requestKind``/``requestResource`` the
    request's."""
    res, asked = view.res, req.res
    request: dict[str, Any] = {
        "uid": str(uuid.uuid4()),
        "kind": {"group": res.group, "version": res.version, "kind": res.kind},
        "resource": {"group": res.group, "version": res.version, "resource": res.plural},
        "requestKind": {"group": asked.group, "version": asked.version, "kind": asked.kind},
        "requestResource": {"group": asked.group, "version": asked.version, "resource": asked.plural},
        "name": req.name, "operation": req.operation, "userInfo": req.user_info or USER_INFO,
        "object": view.obj if req.operation != "DELETE" else None, "oldObject": view.old, "dryRun": req.dry_run,
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



def _invalid_patch_fields(response: Mapping[str, Any], mutating: bool) -> str:
    """What makes a webhook's ``patch``/``patchType`` invalid, as kube's verifyAdmissionResponse
    says it (whatever ``allowed`` says): a mutating webhook gives both or neither, a validating one
    neither; "" when valid."""
    patch, patch_type = response.get("patch"), response.get("patchType")
    if not mutating:
        field = "patch" if patch else "patchType" if patch_type is not None else ""
        return f"validating webhook may not return response.{field}" if field else ""
    if patch and patch_type is None:
        return "webhook returned response.patch but not response.patchType"
    if not patch and patch_type is not None:
        return "webhook returned response.patchType but not response.patch"
    if patch_type == "":
        return 'webhook returned invalid response.patchType of ""'
    return ""


def _denied(name: str, status: Any) -> APIError:
    status = status if isinstance(status, dict) else {}
    code = status.get("code") if isinstance(status.get("code"), int) else 0
    denied_by = f'admission webhook "{name}" denied the request'
    message = status.get("message") or status.get("reason")
    text = f"{denied_by}: {message}" if message else f"{denied_by} without explanation"
    details = status.get("details")
    err = APIError(max(int(code), 400), str(status.get("reason") or ""), text, details)
    if not status.get("reason"):
        err.status.pop("reason", None)
    retry = details.get("retryAfterSeconds") if isinstance(details, dict) else None
    if isinstance(retry, int) and not isinstance(retry, bool) and retry > 0:
        err.headers = {"Retry-After": str(retry)}  # as kube's responsewriters.ErrorNegotiated
    return err
