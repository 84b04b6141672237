"""The create-only reviews (never stored), answered by the server's own authenticator and
authorizer: TokenReview, SelfSubjectReview (authentication.k8s.io), SubjectAccessReview,
LocalSubjectAccessReview, SelfSubjectAccessReview and SelfSubjectRulesReview
(authorization.k8s.io), as ``kubectl auth can-i [--list] [--as]`` and ``kubectl auth whoami``
use them."""

from __future__ import annotations

from typing import Any

from samplecontroller.apiserver import tokens
from samplecontroller.apiserver.authentication import ADMIN, UserInfo, authenticate_token, user_of
from samplecontroller.apiserver.authorization.attributes import Attributes
from samplecontroller.apiserver.authorization.rbac import Authorizer, Decision, mapping
from samplecontroller.apiserver.errors import APIError, bad_request
from samplecontroller.apiserver.handlers.common import Scope
from samplecontroller.apiserver.httpmessages import Request
from samplecontroller.apiserver.restmapper import Resource

__all__ = ["answer"]


def _invalid(res: Resource, field: str, value: str, detail: str) -> APIError:
    return APIError(422, "Invalid", f'{res.kind}.{res.group} "" is invalid: {field}: Invalid value: "{value}": {detail}',
                    {"kind": res.kind, "group": res.group,
                     "causes": [{"reason": "FieldValueInvalid", "message": f'Invalid value: "{value}": {detail}',
                                 "field": field}]})


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _attributes(res: Resource, user: UserInfo, spec: dict[str, Any]) -> Attributes:
    resource = spec.get("resourceAttributes")
    non_resource = spec.get("nonResourceAttributes")
    if isinstance(resource, dict) == isinstance(non_resource, dict):
        raise _invalid(res, "spec.resourceAttributes", "null" if resource is None else "object",
                       "exactly one of nonResourceAttributes or resourceAttributes must be specified")
    if isinstance(non_resource, dict):
        return Attributes(user, str(non_resource.get("verb") or ""), False, path=str(non_resource.get("path") or ""))
    assert isinstance(resource, dict)
    return Attributes(user, str(resource.get("verb") or ""), True, str(resource.get("namespace") or ""),
                      str(resource.get("group") or ""), str(resource.get("version") or "*"),
                      str(resource.get("resource") or ""), str(resource.get("subresource") or ""),
                      str(resource.get("name") or ""))


def _access_status(decision: Decision) -> dict[str, Any]:
    status: dict[str, Any] = {"allowed": decision.allowed}
    if decision.reason:
        status["reason"] = decision.reason
    return status


def _rules_status(authorizer: Authorizer, user: UserInfo, namespace: str) -> dict[str, Any]:
    ruleset = authorizer.rules_for(user, namespace)
    resource_rules: list[dict[str, Any]] = []
    non_resource_rules: list[dict[str, Any]] = []
    for _, rule in ruleset.rules:
        if rule.resources:
            entry: dict[str, Any] = {"verbs": list(rule.verbs), "apiGroups": list(rule.api_groups),
                                     "resources": list(rule.resources)}
            if rule.resource_names:
                entry["resourceNames"] = list(rule.resource_names)
            resource_rules.append(entry)
        if rule.non_resource_urls:
            non_resource_rules.append({"verbs": list(rule.verbs), "nonResourceURLs": list(rule.non_resource_urls)})
    status: dict[str, Any] = {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules,
                              "incomplete": False}
    if ruleset.errors:
        status["evaluationError"] = ruleset.reason().removeprefix("RBAC: ")
    return status


def answer(scope: Scope, request: Request, res: Resource, namespace: str, body: Any) -> dict[str, Any]:
    """The review ``body`` of ``res`` answered (spec echoed, status filled)."""
    if not isinstance(body, dict):
        raise bad_request("the request body must be a JSON object")
    spec = body.get("spec") or {}
    if not isinstance(spec, dict):
        raise bad_request("spec must be an object")
    meta = mapping(body.get("metadata"))
    out_meta: dict[str, Any] = {"creationTimestamp": None}
    if namespace:
        out_meta["namespace"] = namespace
    if meta.get("name"):
        out_meta["name"] = meta["name"]
    answer_: dict[str, Any] = {"kind": res.kind, "apiVersion": res.group_version, "metadata": out_meta, "spec": spec}
    requester = user_of(request)
    authorizer = scope.authorizer
    if res.plural == "tokenreviews":
        answer_["status"] = _token_review_status(scope, spec)
    elif res.plural == "selfsubjectreviews":
        answer_.pop("spec")
        answer_["status"] = {"userInfo": requester.to_wire()}
    elif authorizer is None:
        answer_["status"] = {"allowed": True}
    elif res.plural == "selfsubjectrulesreviews":
        answer_["status"] = _rules_status(authorizer, requester, str(spec.get("namespace") or ""))
    elif res.plural == "selfsubjectaccessreviews":
        answer_["status"] = _access_status(authorizer.authorize(_attributes(res, requester, spec)))
    else:  # subjectaccessreviews, localsubjectaccessreviews
        user = str(spec.get("user") or "")
        groups = _strings(spec.get("groups"))
        if not user and not groups:
            raise _invalid(res, "spec.user", "", "at least one of user or group must be specified")
        extra = mapping(spec.get("extra"))
        subject = UserInfo(user, str(spec.get("uid") or ""), groups, {str(k): _strings(v) for k, v in extra.items()})
        attrs = _attributes(res, subject, spec)
        if res.plural == "localsubjectaccessreviews":
            if meta.get("namespace") and meta.get("namespace") != namespace:
                raise bad_request(f"spec.resourceAttributes.namespace must match namespace: {namespace}")
            if attrs.resource_request and attrs.namespace != namespace:
                raise _invalid(res, "spec.resourceAttributes.namespace", attrs.namespace,
                               "must match metadata.namespace")
        answer_["status"] = _access_status(authorizer.authorize(attrs))
    return answer_


def _token_review_status(scope: Scope, spec: dict[str, Any]) -> dict[str, Any]:
    """A TokenReview's status: the token's user and the audiences it is valid for (those of
    ``spec.audiences``, else the API audiences, that the token names), else the
    authenticator's error."""
    wanted = tuple(str(a) for a in spec.get("audiences") or ())
    token = str(spec.get("token") or "")
    user, why = authenticate_token(scope.store, scope.signing_secret, token, scope.api_audiences, wanted)
    if user is None:
        return {"user": {}, "error": why or "invalid bearer token"}
    targets = list(wanted or scope.api_audiences)
    if user is ADMIN:
        audiences = [a for a in targets if a in scope.api_audiences]
        if not audiences:
            return {"user": {}, "error": "invalid bearer token"}
    else:
        claims = tokens.claims_of(token)
        audiences = [a for a in targets if a in (claims.get("aud") or scope.api_audiences)]
    return {"authenticated": True, "user": user.to_wire(), "audiences": audiences}
