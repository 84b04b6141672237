"""The ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding strategies: the v1
defaults (failurePolicy Fail, matchPolicy Equivalent, empty selectors, rule scope ``*``),
generation tracking and the checks of pkg/apis/admissionregistration/validation, among them the
CEL expressions: one that does not compile rejects the policy with
``spec.validations[0].expression: Invalid value: "<expression>": compilation failed: ...``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from samplecontroller.apiserver import admission_policy, schema
from samplecontroller.apiserver.objects import as_list as _strings
from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.schema import FieldError
from samplecontroller.apiserver.strategies.base import Obj, Schema, Strategy
from samplecontroller.apiserver.strategies.validation import _selector_errors
from samplecontroller.apiserver.validation import (
    _path_segment_errors,
    dns1035_label_errors,
    dns1123_subdomain_errors,
    qualified_name_errors,
)

__all__ = ["BindingStrategy", "MutatingBindingStrategy", "MutatingPolicyStrategy", "PolicyStrategy"]

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
        return _compatibility_errors(obj, old, emulated_minor, _expressions)


def _compatibility_errors(obj: Obj, old: Obj | None, emulated_minor: int,
                          expressions: Callable[[dict[str, Any]], list[tuple[str, str]]]) -> list[FieldError]:
    """A policy's new expressions (``expressions`` of its spec, not in the stored ``old``) that use
    a library newer than the compatibility version (the emulated version minus one)."""
    spec, old_spec = obj.get("spec"), (old or {}).get("spec")
    if not isinstance(spec, dict):
        return []
    stored = {expression for expression, _ in expressions(old_spec)} if isinstance(old_spec, dict) else set()
    errors: list[FieldError] = []
    for expression, where in expressions(spec):
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
    else:
        errors += _match_resources_errors(match, "spec.matchConstraints")
        if not match.get("resourceRules"):  # at least one: it gives the expressions their types
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
    match = spec.get("matchResources")
    if isinstance(match, dict):
        errors += _match_resources_errors(match, "spec.matchResources")
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


# ---------------------------------------------------------------- MutatingAdmissionPolicy
# pkg/apis/admissionregistration/validation/validation.go (validateMutatingAdmissionPolicySpec,
# validateMutation, validateMatchResources, validateNamedRuleWithOperations, validateRule, ...)

_OPERATIONS = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")
_MUTATING_OPERATIONS = ("*", "CONNECT", "CREATE", "UPDATE")  # "MutatatingAdmissionPolicy does not support DELETE"
_SCOPES = ("*", "Cluster", "Namespaced")
_PATCH_TYPES = ("ApplyConfiguration", "JSONPatch")
_REINVOCATION = ("IfNeeded", "Never")
_MUTATING_CHECKED = ("spec.mutations[", "spec.variables[", "spec.matchConditions[")
_CEL_RESERVED = frozenset({"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
                           "function", "if", "import", "let", "loop", "package", "namespace", "return", "var",
                           "void", "while"})


class MutatingPolicyStrategy(PolicyStrategy):
    """MutatingAdmissionPolicy: stored, not run (see ``MutatingBindingStrategy``); defaulted
    (failurePolicy Fail, the match defaults) and validated as kube's
    ``ValidateMutatingAdmissionPolicy(Update)``: matchConstraints (rules, selectors, matchPolicy,
    no DELETE), matchConditions, variables, mutations (patchType and its expression, compiled
    with the patch types as ``admission_policy.mutation_compile_error`` can), reinvocationPolicy,
    failurePolicy, paramKind. On update the matchConditions are not checked again when they and
    the paramKind are unchanged (ignoreMutatingAdmissionPolicyMatchConditions)."""

    def validate(self, res: Resource, obj: Obj, sch: Schema) -> list[FieldError]:
        # 1.37's definitions mark these required: mutating_policy_errors reports them as kube does
        return [e for e in super().validate(res, obj, sch)
                if not (e.type == schema.ERROR_REQUIRED and e.field.startswith(_MUTATING_CHECKED))]

    def validate_extra(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [schema.required("spec")]
        old_spec = (old or {}).get("spec")
        ignore = (isinstance(old_spec, dict) and old_spec.get("paramKind") == spec.get("paramKind")
                  and (old_spec.get("matchConditions") or []) == (spec.get("matchConditions") or []))
        return mutating_policy_errors(spec, ignore_match_conditions=ignore)

    def validate_compatibility(self, obj: Obj, old: Obj | None, emulated_minor: int) -> list[FieldError]:
        return _compatibility_errors(obj, old, emulated_minor, _mutating_expressions)


def _mutating_expressions(spec: dict[str, Any]) -> list[tuple[str, str]]:
    """(expression, path) of a MutatingAdmissionPolicy's matchConditions and variables (the
    patch expressions use types the compatibility environments lack: not checked there)."""
    return [(e, w) for e, w in _expressions(spec) if not w.startswith("spec.validations")]


def _go_slice(type_name: str, items: list[Any]) -> schema.GoRaw:
    """A Go slice as ``%#v`` prints it: ``[]string{"a", "b"}``."""
    return schema.GoRaw(f"[]{type_name}{{" + ", ".join(json.dumps(str(i)) for i in items) + "}")


def _resources_errors(resources: list[Any], where: str) -> list[FieldError]:
    """validateResources (subresources allowed)."""
    errors: list[FieldError] = []
    if not resources:
        errors.append(schema.required(where))
    with_wild_sub: set[str] = set()
    wild_res_subs: set[str] = set()
    double = single = plain = False
    for i, item in enumerate(resources):
        text = str(item or "")
        if not text:
            errors.append(schema.required(f"{where}[{i}]"))
            continue
        double = double or text == "*/*"
        single = single or text == "*"
        if "/" not in text:
            plain = text != "*"
            continue
        res, sub = text.split("/", 1)
        if res in with_wild_sub:
            errors.append(schema.invalid(f"{where}[{i}]", text, f"if '{res}/*' is present, must not specify {text}"))
        if sub in wild_res_subs:
            errors.append(schema.invalid(f"{where}[{i}]", text, f"if '*/{sub}' is present, must not specify {text}"))
        if sub == "*":
            with_wild_sub.add(res)
        if res == "*":
            wild_res_subs.add(sub)
    if len(resources) > 1 and double:
        errors.append(schema.invalid(where, _go_slice("string", resources),
                                     "if '*/*' is present, must not specify other resources"))
    if single and plain:
        errors.append(schema.invalid(where, _go_slice("string", resources),
                                     "if '*' is present, must not specify other resources without subresources"))
    return errors


def _rule_errors(rule: dict[str, Any], where: str) -> list[FieldError]:
    """validateNamedRuleWithOperations: resourceNames, then validateRuleWithOperations and validateRule."""
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, name in enumerate(_strings(rule.get("resourceNames"))):
        errors += [schema.invalid(f"{where}.resourceNames[{i}]", name, m) for m in _path_segment_errors(str(name))]
        if name in seen:
            errors.append(schema.duplicate(f"{where}.resourceNames[{i}]", name))
        seen.add(name)
    operations = _strings(rule.get("operations"))
    if not operations:
        errors.append(schema.required(f"{where}.operations"))
    if len(operations) > 1 and "*" in operations:
        errors.append(schema.invalid(f"{where}.operations", _go_slice("admissionregistration.OperationType", operations),
                                     "if '*' is present, must not specify other operations"))
    for i, op in enumerate(operations):
        if op not in _OPERATIONS:
            errors.append(schema.not_supported(f"{where}.operations[{i}]", op, _OPERATIONS))
    for key, what in (("apiGroups", "API groups"), ("apiVersions", "API versions")):
        values = _strings(rule.get(key))
        if not values:
            errors.append(schema.required(f"{where}.{key}"))
        if len(values) > 1 and "*" in values:
            errors.append(schema.invalid(f"{where}.{key}", _go_slice("string", values),
                                         f"if '*' is present, must not specify other {what}"))
    for i, version in enumerate(_strings(rule.get("apiVersions"))):
        if not version:
            errors.append(schema.required(f"{where}.apiVersions[{i}]"))
    errors += _resources_errors(_strings(rule.get("resources")), f"{where}.resources")
    scope = rule.get("scope")
    if scope is not None and scope not in _SCOPES:
        errors.append(schema.not_supported(f"{where}.scope", scope, _SCOPES))
    return errors


def _match_resources_errors(match: dict[str, Any], where: str) -> list[FieldError]:
    """validateMatchResources."""
    errors: list[FieldError] = []
    policy = match.get("matchPolicy")
    if policy is None:
        errors.append(schema.required(f"{where}.matchPolicy"))
    elif policy not in ("Equivalent", "Exact"):
        errors.append(schema.not_supported(f"{where}.matchPolicy", policy, ("Equivalent", "Exact")))
    for key in ("namespaceSelector", "objectSelector"):
        selector = match.get(key)
        if not isinstance(selector, dict):
            errors.append(schema.required(f"{where}.{key}"))
        else:
            errors += _selector_errors(selector, f"{where}.{key}")
    for key in ("resourceRules", "excludeResourceRules"):
        for i, rule in enumerate(_strings(match.get(key))):
            if isinstance(rule, dict):
                errors += _rule_errors(rule, f"{where}.{key}[{i}]")
    return errors


def _param_kind_errors(kind: dict[str, Any]) -> list[FieldError]:
    """validateParamKind."""
    errors: list[FieldError] = []
    where = "spec.paramKind"
    api_version, name = str(kind.get("apiVersion") or ""), str(kind.get("kind") or "")
    if not api_version:
        errors.append(schema.required(f"{where}.apiVersion"))
    elif api_version.count("/") > 1:
        errors.append(schema.invalid(f"{where}.apiVersion", api_version,
                                     f"unexpected GroupVersion string: {api_version}"))
    else:
        group, _, version = api_version.rpartition("/") if api_version != "/" else ("", "", "")
        if group and (messages := dns1123_subdomain_errors(group)):
            errors.append(schema.invalid(f"{where}.apiVersion", group, ",".join(messages)))
        if not version:
            errors.append(schema.invalid(f"{where}.apiVersion", api_version, "version must be specified"))
        elif messages := dns1035_label_errors(version):
            errors.append(schema.invalid(f"{where}.apiVersion", version, ",".join(messages)))
    if not name:
        errors.append(schema.required(f"{where}.kind"))
    elif messages := dns1035_label_errors(name.lower()):
        errors.append(schema.invalid(f"{where}.kind", name,
                                     "may have mixed case, but should otherwise match: " + ",".join(messages)))
    return errors


def _match_condition_errors(conditions: list[Any], params: bool) -> list[FieldError]:
    """validateMatchConditions (with HasParams when the policy has a paramKind)."""
    where = "spec.matchConditions"
    errors: list[FieldError] = []
    if len(conditions) > 64:
        errors.append(schema.too_many(where, len(conditions), 64))
    seen: set[str] = set()
    for i, condition in enumerate(conditions):
        condition = condition if isinstance(condition, dict) else {}
        expression = str(condition.get("expression") or "").strip()
        if not expression:
            errors.append(schema.required(f"{where}[{i}].expression"))
        else:
            detail = admission_policy.compile_error(expression, "BOOL", "must evaluate to bool", params=params)
            if detail:
                errors.append(schema.invalid(f"{where}[{i}].expression", expression, detail))
        name = str(condition.get("name") or "")
        if not name:
            errors.append(schema.required(f"{where}[{i}].name"))
        else:
            errors += [schema.invalid(f"{where}[{i}].name", name, m) for m in qualified_name_errors(name)]
            if name in seen:
                errors.append(schema.duplicate(f"{where}[{i}].name", name))
            seen.add(name)
    return errors


def _variable_errors(variables: list[Any], params: bool) -> list[FieldError]:
    """validateVariable."""
    errors: list[FieldError] = []
    for i, variable in enumerate(variables):
        variable = variable if isinstance(variable, dict) else {}
        where = f"spec.variables[{i}]"
        name = str(variable.get("name") or "")
        if not name.strip():
            errors.append(schema.required(f"{where}.name", "name is not specified"))
        elif not _IDENTIFIER.match(name) or name in _CEL_RESERVED:
            errors.append(schema.invalid(f"{where}.name", name, "name is not a valid CEL identifier"))
        expression = str(variable.get("expression") or "")
        if not expression.strip():
            errors.append(schema.required(f"{where}.expression", "expression is not specified"))
        else:
            detail = admission_policy.compile_error(expression, params=params)
            if detail:
                errors.append(schema.invalid(f"{where}.expression", expression, detail))
    return errors


def _mutation_errors(mutation: dict[str, Any], where: str, params: bool) -> list[FieldError]:
    """validateMutation, validateApplyConfiguration and validateJSONPatch."""
    patch_type = mutation.get("patchType")
    if not patch_type:
        return [schema.required(f"{where}.patchType")]
    if patch_type not in _PATCH_TYPES:
        return [schema.not_supported(f"{where}.patchType", patch_type, _PATCH_TYPES)]
    key, other = ("jsonPatch", "applyConfiguration") if patch_type == "JSONPatch" else ("applyConfiguration", "jsonPatch")
    errors: list[FieldError] = []
    body = mutation.get(key)
    if not isinstance(body, dict):
        errors.append(schema.required(f"{where}.{key}", f"must be specified when patchType is {patch_type}"))
    else:
        expression = str(body.get("expression") or "").strip()
        if not expression:
            errors.append(schema.required(f"{where}.{key}.expression"))
        else:
            detail = admission_policy.mutation_compile_error(expression, params, json_patch=key == "jsonPatch")
            if detail:
                errors.append(schema.invalid(f"{where}.{key}.expression", expression, detail))
    if mutation.get(other) is not None:
        errors.append(schema.invalid(f"{where}.{other}", "{" + other + "}",
                                     f"must not be specified when patchType is {patch_type}"))
    return errors


def mutating_policy_errors(spec: dict[str, Any], ignore_match_conditions: bool = False) -> list[FieldError]:
    """validateMutatingAdmissionPolicySpec's errors, in its order."""
    errors: list[FieldError] = []
    policy = spec.get("failurePolicy")
    if policy is None:
        errors.append(schema.required("spec.failurePolicy"))
    elif policy not in ("Fail", "Ignore"):
        errors.append(schema.not_supported("spec.failurePolicy", policy, ("Fail", "Ignore")))
    kind = spec.get("paramKind")
    params = isinstance(kind, dict)
    if isinstance(kind, dict):
        errors += _param_kind_errors(kind)
    match = spec.get("matchConstraints")
    if not isinstance(match, dict):
        errors.append(schema.required("spec.matchConstraints"))
    else:
        errors += _match_resources_errors(match, "spec.matchConstraints")
        rules = [r for r in _strings(match.get("resourceRules")) if isinstance(r, dict)]
        if not rules:
            errors.append(schema.required("spec.matchConstraints.resourceRules"))
        for rule in rules:
            for op in _strings(rule.get("operations")):
                if op not in _MUTATING_OPERATIONS:
                    errors.append(schema.not_supported("spec.matchConstraints.resourceRules.operations", op,
                                                       _MUTATING_OPERATIONS))
    if not ignore_match_conditions:
        errors += _match_condition_errors(_strings(spec.get("matchConditions")), params)
    errors += _variable_errors(_strings(spec.get("variables")), params)
    mutations = _strings(spec.get("mutations"))
    if not mutations:
        errors.append(schema.required("spec.mutations", "mutations must contain at least one item"))
    for i, mutation in enumerate(mutations):
        errors += _mutation_errors(mutation if isinstance(mutation, dict) else {}, f"spec.mutations[{i}]", params)
    reinvocation = spec.get("reinvocationPolicy")
    if not reinvocation:
        errors.append(schema.required("spec.reinvocationPolicy"))
    elif reinvocation not in _REINVOCATION:
        errors.append(schema.not_supported("spec.reinvocationPolicy", reinvocation, _REINVOCATION))
    return errors
