"""The ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding strategies: the v1
defaults (failurePolicy Fail, matchPolicy Equivalent, empty selectors, rule scope ``*``),
generation tracking and the checks of pkg/apis/admissionregistration/validation, among them the
CEL expressions: one that does not compile rejects the policy with
``spec.validations[0].expression: Invalid value: "<expression>": compilation failed: ...``."""

from __future__ import annotations

import re
from typing import Any

from samplecontroller.apiserver import admission_policy, schema
from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.schema import FieldError
from samplecontroller.apiserver.strategies.base import Obj, Schema, Strategy

__all__ = ["BindingStrategy", "PolicyStrategy"]

# (list field, expression field, required type, type error detail)
_EXPRESSIONS = (
    ("matchConditions", "expression", "BOOL", "must evaluate to bool"),
    ("variables", "expression", "", ""),
    ("validations", "expression", "BOOL", "must evaluate to bool"),
    ("validations", "messageExpression", "STRING", "must evaluate to string"),
    ("auditAnnotations", "valueExpression", "STRING", "must evaluate to one of [string null_type]"),
)
_ACTIONS = ("Audit", "Deny", "Warn")
_IDENTIFIER = re.compile(r"^[_a-zA-Z][_a-zA-Z0-9]*$")


def _default_match(match: Any) -> None:
    """SetDefaults_MatchResources and the rules' scope."""
    if not isinstance(match, dict):
        return
    match.setdefault("matchPolicy", "Equivalent")
    match.setdefault("namespaceSelector", {})
    match.setdefault("objectSelector", {})
    for key in ("resourceRules", "excludeResourceRules"):
        for rule in match.get(key) or ():
            if isinstance(rule, dict):
                rule.setdefault("scope", "*")


class PolicyStrategy(Strategy):
    tracks_generation = True

    def default(self, res: Resource, obj: Obj, creating: bool, sch: Schema) -> None:
        super().default(res, obj, creating, sch)
        spec = obj.get("spec")
        if isinstance(spec, dict):
            spec.setdefault("failurePolicy", "Fail")
            _default_match(spec.get("matchConstraints"))

    def validate_extra(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        spec = obj.get("spec")
        return _policy_errors(spec) if isinstance(spec, dict) else [schema.required("spec")]

    def validate_compatibility(self, obj: Obj, old: Obj | None, emulated_minor: int) -> list[FieldError]:
        spec, old_spec = obj.get("spec"), (old or {}).get("spec")
        if not isinstance(spec, dict):
            return []
        stored = {expression for expression, _ in _expressions(old_spec)} if isinstance(old_spec, dict) else set()
        errors: list[FieldError] = []
        for expression, where in _expressions(spec):
            detail = "" if expression in stored else admission_policy.compatibility_error(expression, emulated_minor - 1)
            if detail:
                errors.append(schema.invalid(where, expression, detail))
        return errors


class BindingStrategy(Strategy):
    tracks_generation = True

    def default(self, res: Resource, obj: Obj, creating: bool, sch: Schema) -> None:
        super().default(res, obj, creating, sch)
        spec = obj.get("spec")
        if isinstance(spec, dict):
            _default_match(spec.get("matchResources"))

    def validate(self, res: Resource, obj: Obj, sch: Schema) -> list[FieldError]:
        # 1.37's definitions mark policyName and validationActions required: _binding_errors reports them
        return [e for e in super().validate(res, obj, sch) if e.field not in _BINDING_CHECKED]

    def validate_extra(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        spec = obj.get("spec")
        return _binding_errors(spec if isinstance(spec, dict) else {})


_BINDING_CHECKED = frozenset({"spec.policyName", "spec.validationActions"})


class MutatingBindingStrategy(Strategy):
    """MutatingAdmissionPolicyBinding: refused. The server does not run MutatingAdmissionPolicy
    (its CEL object construction and patches), so a binding, which would make kube-apiserver
    mutate objects, is a Forbidden error naming what is missing instead of a policy silently
    skipped. A MutatingAdmissionPolicy itself is stored (without a binding it does nothing,
    in kube too)."""

    tracks_generation = True

    def validate_extra(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        return [schema.forbidden("spec", "the embedded API server does not run MutatingAdmissionPolicy: a "
                                         "binding would mutate nothing here (use a mutating admission webhook, or "
                                         "test the policy on a cluster)")]


def _policy_errors(spec: dict[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    policy = spec.get("failurePolicy")
    if policy not in ("Fail", "Ignore"):
        errors.append(schema.not_supported("spec.failurePolicy", policy, ("Fail", "Ignore")))
    kind = spec.get("paramKind")
    if isinstance(kind, dict):
        errors += [schema.required(f"spec.paramKind.{key}") for key in ("apiVersion", "kind") if not kind.get(key)]
    match = spec.get("matchConstraints")
    if not isinstance(match, dict):
        errors.append(schema.required("spec.matchConstraints"))
    elif not match.get("resourceRules"):
        errors.append(schema.required("spec.matchConstraints.resourceRules"))
    errors += _named(spec.get("matchConditions"), "spec.matchConditions", "name", "")
    for i, variable in enumerate(spec.get("variables") or ()):
        name = str(variable.get("name") or "") if isinstance(variable, dict) else ""
        if not name.strip():
            errors.append(schema.required(f"spec.variables[{i}].name", "name is not specified"))
        elif not _IDENTIFIER.match(name):
            errors.append(schema.invalid(f"spec.variables[{i}].name", name, "name is not a valid CEL identifier"))
    if not spec.get("validations") and not spec.get("auditAnnotations"):
        detail = "validations or auditAnnotations must contain at least one item"
        errors += [schema.required("spec.validations", detail), schema.required("spec.auditAnnotations", detail)]
    return errors + _expression_errors(spec, params=isinstance(kind, dict))


def _named(items: Any, where: str, key: str, detail: str) -> list[FieldError]:
    """Required and Duplicate errors of the ``key`` of each item (matchConditions' names)."""
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, item in enumerate(items if isinstance(items, list) else ()):
        value = str(item.get(key) or "") if isinstance(item, dict) else ""
        if not value:
            errors.append(schema.required(f"{where}[{i}].{key}", detail))
        elif value in seen:
            errors.append(schema.duplicate(f"{where}[{i}].{key}", value))
        seen.add(value)
    return errors


def _expressions(spec: dict[str, Any]) -> list[tuple[str, str]]:
    """(expression, path) of every non-empty CEL expression of a policy spec."""
    found: list[tuple[str, str]] = []
    for list_field, key, _, _ in _EXPRESSIONS:
        items = spec.get(list_field)
        for i, item in enumerate(items if isinstance(items, list) else ()):
            if isinstance(item, dict) and isinstance(item.get(key), str) and item[key].strip():
                found.append((item[key], f"spec.{list_field}[{i}].{key}"))
    return found


def _expression_errors(spec: dict[str, Any], params: bool) -> list[FieldError]:
    errors: list[FieldError] = []
    for list_field, key, wanted, type_detail in _EXPRESSIONS:
        items = spec.get(list_field)
        for i, item in enumerate(items if isinstance(items, list) else ()):
            if not isinstance(item, dict) or not isinstance(item.get(key), str):
                continue
            expression, where = item[key], f"spec.{list_field}[{i}].{key}"
            if not expression.strip():
                if key != "messageExpression":
                    errors.append(schema.required(where, f"{key} is not specified"))
                continue
            detail = admission_policy.compile_error(expression, wanted, type_detail, params=params,
                                                    authorizer=key != "messageExpression")
            if detail:
                errors.append(schema.invalid(where, expression, detail))
    return errors


def _binding_errors(spec: dict[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    if not spec.get("policyName"):
        errors.append(schema.required("spec.policyName"))
    actions = spec.get("validationActions")
    actions = actions if isinstance(actions, list) else []
    seen: set[Any] = set()
    for i, action in enumerate(actions):
        if action not in _ACTIONS:
            errors.append(schema.not_supported(f"spec.validationActions[{i}]", action, _ACTIONS))
        if action in seen:
            errors.append(schema.duplicate(f"spec.validationActions[{i}]", action))
        seen.add(action)
    if {"Deny", "Warn"} <= seen:
        errors.append(schema.invalid("spec.validationActions", schema.GoRaw(_go_actions(actions)),
                                     "must not contain both Deny and Warn (repeating the same validation failure "
                                     "information in the API response and headers serves no purpose)"))
    if not seen:
        errors.append(schema.required("spec.validationActions", "at least one validation action is required"))
    ref = spec.get("paramRef")
    if isinstance(ref, dict):
        if ref.get("name") and ref.get("selector") is not None:
            errors.append(schema.forbidden("spec.paramRef.name", "name and selector are mutually exclusive"))
            errors.append(schema.forbidden("spec.paramRef.selector", "name and selector are mutually exclusive"))
        if not ref.get("name") and ref.get("selector") is None:
            errors.append(schema.required("spec.paramRef", "one of name or selector must be specified"))
        action = ref.get("parameterNotFoundAction")
        if action is None:
            errors.append(schema.required("spec.paramRef.parameterNotFoundAction"))
        elif action not in ("Allow", "Deny"):
            errors.append(schema.not_supported("spec.paramRef.parameterNotFoundAction", action, ("Allow", "Deny")))
    return errors


def _go_actions(actions: list[Any]) -> str:
    """A []ValidationAction as Go's ``%#v`` prints it."""
    return "[]admissionregistration.ValidationAction{" + ", ".join(f'"{a}"' for a in actions) + "}"
