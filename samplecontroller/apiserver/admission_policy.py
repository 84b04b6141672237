"""ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding (admissionregistration.k8s.io/v1)
on the CEL engine of ``samplecontroller.apiserver.cel`` (k8s.io/apiserver's
pkg/admission/plugin/policy/validating).

Contract (as kube-apiserver, within the limits below), checked by ``PolicyAdmission.validate``
after the mutating webhooks and before the validating ones:
- A binding applies its policy (``spec.policyName``) to a request that the policy's
  ``matchConstraints`` and the binding's ``matchResources`` both match (``resourceRules`` with
  ``resourceNames``, ``excludeResourceRules``, ``namespaceSelector``, ``objectSelector``) and
  whose ``matchConditions`` are all true. ``matchPolicy``: under ``Equivalent`` (the default)
  a rule that lists another served version of the request's custom resource matches it; the
  policy then sees the object and old object converted to that version by the CRD's conversion
  (``admission``'s converter) and ``request.kind``/``resource`` name it, while
  ``requestKind``/``requestResource`` stay the request's (``admission_rules.matched_resource``,
  shared with the webhooks). ``Exact``: only the request's own version matches.
- ``variables`` are evaluated in order (``variables.<name>``); each validation ``expression`` sees
  ``object``, ``oldObject`` (null on CREATE; ``object`` is null on DELETE), ``request``,
  ``params``, ``namespaceObject`` and ``variables``.
- A false validation is a violation with ``message``, else ``messageExpression``, else
  ``failed expression: <expression>``; ``reason`` (default Invalid) picks the code (Unauthorized
  401, Forbidden 403, Invalid 422, RequestEntityTooLarge 413). ``validationActions``: ``Deny`` answers
  ``<resource> "<name>" is forbidden: ValidatingAdmissionPolicy '<policy>' with binding
  '<binding>' denied request: <message>`` with that code; ``Warn`` adds the Warning
  ``Validation failed for ValidatingAdmissionPolicy '<policy>' with binding '<binding>': <message>``.
- An expression that fails to compile or evaluate denies under ``failurePolicy: Fail`` (the
  default) with ``expression '<expression>' resulted in error: <error>`` and is skipped under
  ``Ignore``.
- ``paramKind`` + ``paramRef`` (``name`` or ``selector``, ``namespace`` defaulting to the request's
  for namespaced params, ``parameterNotFoundAction`` Allow/Deny): each param found is evaluated;
  none found with ``Deny`` is a configuration error (``failed to configure binding: no params
  found for policy binding with `Deny` parameterNotFoundAction``): under ``failurePolicy: Fail``
  it denies whatever the ``validationActions``, under ``Ignore`` the binding is skipped.

- ``authorizer`` (kube's CEL authorizer library, ``cel.authz``) in ``matchConditions``,
  ``variables``, ``validations`` and ``auditAnnotations`` (not ``messageExpression``: an
  undeclared reference, as in kube): the requester's permissions by the server's RBAC,
  ``authorizer.requestResource`` the request's own resource.

Limits: ``Audit`` has no audit log to write to (accepted, ignored); the policy's
``status.typeChecking`` is not computed; there is no cost limit for policies but the
authorizer checks' (at most two per expression, as in kube).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from samplecontroller.apimachinery import labels as labelsel
from samplecontroller.apiserver.admission_rules import (
    equivalent_resources,
    labels_of,
    matched_resource,
    selector,
)
from samplecontroller.apiserver.cel import authz, checked, engine
from samplecontroller.apiserver.cel.engine import CompileError, EvalError
from samplecontroller.apiserver.cel.fields import invalid_literals, mask_strings
from samplecontroller.apiserver.cel.formats import FUNCTIONS as FORMAT_FUNCTIONS
from samplecontroller.apiserver.cel.formats import rewrite
from samplecontroller.apiserver.cel.library import FUNCTIONS, INTRODUCED, ext_lists, functions
from samplecontroller.apiserver.errors import APIError
from samplecontroller.apiserver.restmapper import Resource, RESTMapper
from samplecontroller.apiserver.storage import Store

__all__ = ["BINDINGS_KEY", "POLICIES_KEY", "Converter", "PolicyAdmission", "PolicyRequest", "aggregate",
           "authorizer_variable", "compile_error",
           "compatibility_error", "match_conditions", "mutation_compile_error"]

POLICIES_KEY = "admissionregistration.k8s.io/validatingadmissionpolicies"
BINDINGS_KEY = "admissionregistration.k8s.io/validatingadmissionpolicybindings"
NAMESPACES_KEY = "/namespaces"
_CODES = {"Unauthorized": 401, "Forbidden": 403, "Invalid": 422, "RequestEntityTooLarge": 413}
_VARIABLES = ("object", "oldObject", "request", "params", "namespaceObject", "variables", "authorizer")
ENV = engine.Env(dict.fromkeys(_VARIABLES, engine.DYN), FUNCTIONS + FORMAT_FUNCTIONS, rewrite)
_ENVS: dict[tuple[bool, bool, bool], engine.Env] = {(True, True, True): ENV}


def _env(params: bool, authorizer: bool, bindings: bool) -> engine.Env:
    """The environment of a policy's expressions: with ``params`` (a paramKind), with
    ``authorizer`` (every expression but messageExpression: kube's ``HasAuthorizer``), with the
    bindings extension (this package's rewrites; without it ``cel.bind`` is undeclared, as in kube)."""
    key = (params, authorizer, bindings)
    env = _ENVS.get(key)
    if env is None:
        names = [v for v in _VARIABLES if (params or v != "params") and (authorizer or v != "authorizer")]
        env = _ENVS[key] = engine.Env(dict.fromkeys(names, engine.DYN), FUNCTIONS + FORMAT_FUNCTIONS,
                                      rewrite if bindings else None, bindings=bindings)
    return env


@dataclass
class PolicyRequest:
    """What the policies see of a request (``admission.AdmissionRequest`` fills it)."""

    res: Resource
    operation: str
    namespace: str
    name: str
    obj: dict[str, Any] | None
    old: dict[str, Any] | None
    subresource: str
    dry_run: bool
    user_info: Mapping[str, Any]
    request_res: Resource | None = None
    """The resource the request was made to when ``res`` is an equivalent version a policy
    matched (``request.requestKind``/``requestResource``); None: ``res``."""


Converter = Callable[[dict[str, Any] | None, Resource], Awaitable[dict[str, Any] | None]]
"""Converts an object (or None) to a resource's version (``admission.Admitter._converted``)."""


class _Denied(Exception):
    def __init__(self, message: str, reason: str = "Invalid") -> None:
        super().__init__(message)
        self.message, self.reason = message, reason


class _ConfigError(_Denied):
    """A policy or binding that cannot be applied (its params): subject to failurePolicy."""


class PolicyAdmission:
    """Evaluates the stored policies and bindings for each request (no caching of objects:
    compiled expressions are cached by the engine)."""

    def __init__(self, store: Store, mapper: RESTMapper | None = None) -> None:
        self.store = store
        self.mapper = mapper
        self.authorize: authz.Authorize | None = None
        """The server's authorizer, which the expressions' ``authorizer`` checks ask (None: the
        variable is not bound, as kube without an authorizer)."""

    def active(self) -> bool:
        """True when any binding exists (else admission costs nothing)."""
        return bool(self.store.count(BINDINGS_KEY))

    async def validate(self, req: PolicyRequest, convert: Converter | None = None) -> list[str]:
        """Apply every matching binding; returns the warnings, raises the first denial. A policy
        whose ``matchConstraints`` match the request only through an equivalent version
        (``matchPolicy: Equivalent``, the default: another served version of a CRD) sees the
        object and old object converted to that version by ``convert`` (once per version) and
        ``request.kind``/``resource`` naming it, as kube's policy dispatcher does."""
        warnings: list[str] = []
        versions = {req.res.version: req}
        for _, entry in self.store.list(BINDINGS_KEY, ""):
            binding = entry.obj
            spec = binding.get("spec") or {}
            policy_entry = self.store.get(POLICIES_KEY, "", str(spec.get("policyName") or ""))
            if policy_entry is None:
                continue
            policy = policy_entry.obj
            namespace_obj = self._namespace(req)
            matched = self._matches((policy.get("spec") or {}).get("matchConstraints") or {}, req, namespace_obj,
                                    binding_rules=False)
            if matched is None or (spec.get("matchResources") and self._matches(
                    spec["matchResources"], req, namespace_obj, binding_rules=True) is None):
                continue
            if matched.version not in versions:
                if convert is None:
                    continue  # no converter: the equivalent version cannot be seen
                versions[matched.version] = replace(req, res=matched, obj=await convert(req.obj, matched),
                                                    old=await convert(req.old, matched), request_res=req.res)
            warnings += self._apply(policy, binding, versions[matched.version], namespace_obj)
        return warnings

    def _apply(self, policy: Mapping[str, Any], binding: Mapping[str, Any], req: PolicyRequest,
               namespace_obj: dict[str, Any] | None) -> list[str]:
        """Evaluate a matched policy with ``req`` in the version it matched."""
        pspec, bspec = policy.get("spec") or {}, binding.get("spec") or {}
        actions = list(bspec.get("validationActions") or ())
        policy_name, binding_name = _name(policy), _name(binding)
        fail = pspec.get("failurePolicy", "Fail") != "Ignore"
        try:
            params_list = self._params(pspec, bspec, req)
        except _ConfigError as err:  # failurePolicy applies; Fail denies whatever the actions
            return self._act(["Deny"], policy_name, binding_name, err, req) if fail else []
        warnings: list[str] = []
        for params in params_list:
            variables = {"object": req.obj, "oldObject": req.old, "request": _request(req),
                         "params": params, "namespaceObject": namespace_obj, "variables": {},
                         **authorizer_variable(self.authorize, req.user_info, req.request_res or req.res,
                                               req.subresource, req.namespace, req.name)}
            try:
                with authz.bind(self.authorize):
                    if not self._conditions(pspec, variables, fail):
                        continue
                    self._variables(pspec, variables)
                    violation = self._validations(pspec, variables, fail)
            except _Denied as denied:
                violation = denied
            if violation is not None:
                warnings += self._act(actions, policy_name, binding_name, violation, req)
        return warnings

    # ------------------------------------------------------------------ matching

    def _namespace(self, req: PolicyRequest) -> dict[str, Any] | None:
        if not req.res.namespaced or not req.namespace:
            return None
        entry = self.store.get(NAMESPACES_KEY, "", req.namespace)
        return entry.obj if entry is not None else None

    def _matches(self, match: Mapping[str, Any], req: PolicyRequest, namespace_obj: dict[str, Any] | None,
                 binding_rules: bool) -> Resource | None:
        """The resource (version) ``match`` (a policy's ``matchConstraints`` or a binding's
        ``matchResources``) matches ``req`` in, None when it does not match (kube's
        matching.Matcher: exclusions and rules under ``matchPolicy``, then the selectors)."""
        rules = [r for r in match.get("resourceRules") or () if isinstance(r, dict)]
        equivalents = equivalent_resources(self.mapper, req.res, req.subresource)
        policy = match.get("matchPolicy")
        if matched_resource(match.get("excludeResourceRules") or (), req.operation, req.res, req.subresource,
                            req.name, policy, equivalents) is not None:
            return None
        matched: Resource | None = req.res
        if rules or not binding_rules:
            matched = matched_resource(rules, req.operation, req.res, req.subresource, req.name, policy, equivalents)
        if matched is None:
            return None
        try:
            objects = selector(match.get("objectSelector"))
            namespaces = selector(match.get("namespaceSelector"))
        except ValueError:
            return None
        if not objects.empty() and not any(objects.matches(labels_of(o)) for o in (req.obj, req.old) if o):
            return None
        if namespaces.empty():
            return matched
        if req.res.kind == "Namespace" and not req.res.group:
            return matched if namespaces.matches(labels_of(req.obj or req.old)) else None
        return matched if not req.res.namespaced or namespaces.matches(labels_of(namespace_obj)) else None

    # ------------------------------------------------------------------ params

    def _params(self, pspec: Mapping[str, Any], bspec: Mapping[str, Any], req: PolicyRequest) -> list[Any]:
        kind = pspec.get("paramKind")
        if not isinstance(kind, dict):
            return [None]
        ref = bspec.get("paramRef")
        if not isinstance(ref, dict):
            raise _ConfigError("failed to configure binding: no paramRef specified")
        res = self._param_resource(str(kind.get("apiVersion") or ""), str(kind.get("kind") or ""))
        if res is None:
            raise _ConfigError(f"failed to configure policy: failed to find resource referenced by paramKind: "
                               f"'{kind.get('apiVersion')}, Kind={kind.get('kind')}'")
        namespace = str(ref.get("namespace") or (req.namespace if res.namespaced else ""))
        found: list[Any] = []
        if ref.get("name"):
            entry = self.store.get(res.storage_key, namespace if res.namespaced else "", str(ref["name"]))
            found = [entry.obj] if entry is not None else []
        else:
            try:
                chosen = selector(ref.get("selector"))
            except ValueError:
                chosen = labelsel.nothing()
            found = [e.obj for _, e in self.store.list(res.storage_key, namespace if res.namespaced else None)
                     if chosen.matches(labels_of(e.obj))]
        if not found:
            if ref.get("parameterNotFoundAction", "Deny") == "Allow":
                return []
            raise _ConfigError("failed to configure binding: no params found for policy binding with `Deny` "
                               "parameterNotFoundAction")
        return found

    def _param_resource(self, api_version: str, kind: str) -> Resource | None:
        group, _, version = api_version.rpartition("/")
        for res in self.mapper or ():
            if res.group == group and res.version == version and res.kind == kind:
                return res
        return None

    # ------------------------------------------------------------------ evaluation

    def _conditions(self, pspec: Mapping[str, Any], variables: dict[str, Any], fail: bool) -> bool:
        matches, errors = match_conditions(pspec.get("matchConditions"), variables)
        if errors and fail:
            raise _Denied(aggregate(errors))
        return matches and not errors

    def _variables(self, pspec: Mapping[str, Any], variables: dict[str, Any]) -> None:
        for variable in pspec.get("variables") or ():
            if not isinstance(variable, dict):
                continue
            try:
                value = _evaluate(str(variable.get("expression") or ""), variables)
            except _Denied:
                continue  # an expression using it fails with "no such key"
            variables["variables"] = {**variables["variables"], str(variable.get("name")): value}

    def _validations(self, pspec: Mapping[str, Any], variables: dict[str, Any], fail: bool) -> _Denied | None:
        for validation in pspec.get("validations") or ():
            if not isinstance(validation, dict):
                continue
            expression = str(validation.get("expression") or "")
            try:
                result = _evaluate(expression, variables)
            except _Denied as err:
                if fail:
                    return err
                continue
            if result is True:
                continue
            return _Denied(_message(validation, variables), str(validation.get("reason") or "Invalid"))
        return None

    def _act(self, actions: list[str], policy: str, binding: str, violation: _Denied,
             req: PolicyRequest) -> list[str]:
        warnings = []
        if "Warn" in actions:
            warnings.append(f"Validation failed for ValidatingAdmissionPolicy '{policy}' with binding "
                            f"'{binding}': {violation.message}")
        if "Deny" in actions:
            message = (f"ValidatingAdmissionPolicy '{policy}' with binding '{binding}' denied request: "
                       f"{violation.message}")
            res = req.res
            details: dict[str, Any] = {"name": req.name, "kind": res.plural, "causes": [{"message": message}]}
            if res.group:
                details["group"] = res.group
            raise APIError(_CODES.get(violation.reason, 422), violation.reason,
                           f'{res.group_resource} "{req.name}" is forbidden: {message}', details)
        return warnings


def authorizer_variable(authorize: authz.Authorize | None, user_info: Mapping[str, Any], asked: Resource,
                        subresource: str, namespace: str, name: str) -> dict[str, Any]:
    """``{"authorizer": ...}`` for the requester (``user_info``) with ``requestResource`` the
    resource the request was made to (kube's activation: ``NewAuthorizerVal``,
    ``NewResourceAuthorizerVal`` of the versioned attributes); empty without an authorizer."""
    if authorize is None:
        return {}
    return {"authorizer": authz.authorizer_value(authz.user_from_wire(user_info), asked.group, asked.plural,
                                                 subresource, namespace, name)}


def match_conditions(conditions: Any, variables: dict[str, Any]) -> tuple[bool, list[str]]:
    """Evaluate ``matchConditions`` (the matchconditions matcher): ``(False, [])`` when any is
    false (even if others failed), else ``(True, errors)`` with each failed evaluation's message."""
    errors: list[str] = []
    for condition in conditions if isinstance(conditions, list) else ():
        if not isinstance(condition, dict):
            continue
        try:
            if _evaluate(str(condition.get("expression") or ""), variables) is False:
                return False, []
        except _Denied as err:
            errors.append(err.message)
    return True, errors


def aggregate(messages: list[str]) -> str:
    """utilerrors.NewAggregate's text: one message, or ``[a, b]``."""
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


_COMPAT_ENVS: dict[int, engine.Env] = {}


def compatibility_error(expression: str, compat_minor: int) -> str:
    """``compilation failed: ...`` when ``expression`` (which compiles with every library) uses
    one kube's base environment at compatibility version ``1.<compat_minor>`` lacks, else ""."""
    if compat_minor >= max(INTRODUCED.values()):
        return ""
    env = _COMPAT_ENVS.get(compat_minor)
    if env is None:
        env = _COMPAT_ENVS[compat_minor] = engine.Env(dict.fromkeys(_VARIABLES, engine.DYN),
                                                      functions(compat_minor) + FORMAT_FUNCTIONS, rewrite,
                                                      ext_lists=ext_lists(compat_minor))
    try:
        ENV.compile(expression)
    except CompileError:
        return ""
    try:
        env.compile(expression)
    except CompileError as err:
        return f"compilation failed: {err.detail}"
    return ""


def compile_error(expression: str, wanted: str = "", type_detail: str = "", params: bool = True,
                  authorizer: bool = True, literal_checks: bool = True) -> str:
    """Why ``expression`` cannot be a policy's expression ("" when it compiles to ``wanted``, a
    checked type name such as ``BOOL``; dynamic results are accepted). ``params``: the policy has
    a paramKind (else ``params`` is an undeclared reference); ``authorizer``: the expression sees
    the ``authorizer`` variable (kube's messageExpressions do not); ``literal_checks``: also the
    literal validators and the mixed-literal and authorizer-misuse checks of the checked AST."""
    try:
        if engine.uses_bindings(expression):  # kube's environment has no ext.Bindings
            _env(params, authorizer, False).compile(expression)
        program = _env(params, authorizer, True).compile(expression)
        literals = invalid_literals(expression, ENV.succeeds) if literal_checks else ""
        if literal_checks and not literals and "format." not in mask_strings(expression):  # (the format rewrite moves positions)
            ast = checked.parse(program.serialized())
            literals = checked.mixed_literals(ast, expression) or authz.misuse(ast, expression)
        if literals:
            raise CompileError(literals)
    except CompileError as err:
        return f"compilation failed: {err.detail}"
    if wanted and program.result_type.partition("<")[0] not in (wanted, "DYN"):
        return type_detail
    return ""


def _evaluate(expression: str, variables: dict[str, Any]) -> Any:
    authz.fresh()
    try:
        return ENV.compile(expression).evaluate(variables)
    except CompileError as err:
        raise _Denied(f"expression '{expression}' resulted in error: compilation failed: {err.detail}") from None
    except EvalError as err:
        raise _Denied(f"expression '{expression}' resulted in error: {err}") from None


def _message(validation: Mapping[str, Any], variables: dict[str, Any]) -> str:
    message = str(validation.get("message") or "").strip()
    source = str(validation.get("messageExpression") or "")
    if source and not message:
        try:  # (without the authorizer: kube's messageExpressions have none)
            text = ENV.compile(source).evaluate({k: v for k, v in variables.items() if k != "authorizer"})
        except (CompileError, EvalError):
            text = None
        if isinstance(text, str) and text.strip() and "\n" not in text.strip():
            return text.strip()
    if message:
        return message
    return f"failed expression: {str(validation.get('expression') or '').strip()}"


def _request(req: PolicyRequest) -> dict[str, Any]:
    res, asked = req.res, req.request_res or req.res
    gvk = {"group": res.group, "version": res.version, "kind": res.kind}
    gvr = {"group": res.group, "version": res.version, "resource": res.plural}
    request_gvk = {"group": asked.group, "version": asked.version, "kind": asked.kind}
    request_gvr = {"group": asked.group, "version": asked.version, "resource": asked.plural}
    return {"kind": gvk, "resource": gvr, "requestKind": request_gvk, "requestResource": request_gvr,
            "subResource": req.subresource, "requestSubResource": req.subresource, "name": req.name,
            "namespace": req.namespace, "operation": req.operation, "userInfo": dict(req.user_info),
            "dryRun": req.dry_run}


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


# ---------------------------------------------------------------- MutatingAdmissionPolicy

_STRUCT_START = re.compile(r"(?<![\w.])(?:Object(?:\s*\.\s*[_a-zA-Z]\w*)*|JSONPatch)\s*\{")
_STRUCT_FIELD = re.compile(r"\s*\??\s*([_a-zA-Z]\w*)\s*:")
_ESCAPE_KEY = re.compile(r"(?<![\w.])jsonpatch\s*\.\s*escapeKey\s*\(")
_HEADER = re.compile(r"^(.*?)ERROR: <input>:(\d+):(\d+): (.*)$")


def _patch_types_source(source: str) -> tuple[str, list[int]] | None:
    """``source`` with kube's patch types (``Object{...}``, ``Object.spec{...}``,
    ``JSONPatch{...}``: cel-go object types the cel-cpp binding cannot declare) as map literals
    of dynamic values (``{"spec": dyn(...)}``) and ``jsonpatch.escapeKey(`` as ``string(``, with
    the original index of each character; None when ``source`` uses neither."""
    masked = mask_strings(source)
    if not _STRUCT_START.search(masked) and not _ESCAPE_KEY.search(masked):
        return None
    out: list[str] = []
    where: list[int] = []
    stack: list[str] = []

    def emit(text: str, pos: int) -> None:
        out.append(text)
        where.extend([pos] * len(text))

    def field(at: int) -> int:
        found = _STRUCT_FIELD.match(masked, at)
        if found is None:
            return at
        emit(f'"{found.group(1)}": dyn(', found.start(1))
        stack.append("V")
        return found.end()

    i = 0
    while i < len(source):
        struct = _STRUCT_START.match(masked, i)
        if struct:
            emit("{", struct.end() - 1)
            stack.append("S")
            i = field(struct.end())
            continue
        escape = _ESCAPE_KEY.match(masked, i)
        if escape:
            emit("string(", escape.start())
            stack.append("(")
            i = escape.end()
            continue
        ch = masked[i]
        if ch in "([{":
            emit(ch, i)
            stack.append(ch)
        elif ch in ")]":
            emit(ch, i)
            if stack:
                stack.pop()
        elif ch == "}":
            if stack and stack[-1] == "V":
                emit(")", i)
                stack.pop()
            emit(ch, i)
            if stack:
                stack.pop()
        elif ch == "," and stack and stack[-1] == "V":
            emit("),", i)
            stack.pop()
            i = field(i + 1)
            continue
        else:
            emit(source[i], i)
        i += 1
    where.append(len(source))
    return "".join(out), where


def _original_positions(detail: str, text: str, where: list[int], source: str) -> str:
    """Compile issues of the rewritten ``text`` with the positions and snippets of ``source``."""
    starts = [0]
    for n, ch in enumerate(text):
        if ch == "\n":
            starts.append(n + 1)
    lines = source.split("\n")
    out: list[str] = []
    for line in detail.split("\n"):
        header = _HEADER.match(line)
        if header is None:
            if not line.startswith(" | "):
                out.append(line)
            continue
        row, col = int(header.group(2)), int(header.group(3))
        at = min(starts[min(row, len(starts)) - 1] + col - 1, len(where) - 1)
        index = where[at]
        message = header.group(4)
        if at < len(text) and index < len(source) and text[at] != source[index]:  # an inserted ")"
            message = message.replace(f"input '{text[at]}'", f"input '{source[index]}'")
        orow = source.count("\n", 0, index)
        ocol = index - (source.rfind("\n", 0, index) + 1)
        out += [f"{header.group(1)}ERROR: <input>:{orow + 1}:{ocol + 1}: {message}",
                f" | {lines[orow]}", f" | {'.' * ocol}^"]
    return "\n".join(out)


def mutation_compile_error(expression: str, params: bool, json_patch: bool = False) -> str:
    """Why ``expression`` cannot be a mutation's ``applyConfiguration`` (``json_patch``: its
    ``jsonPatch``) expression ("" when it compiles). kube compiles it with the patch types
    (``Object``, ``JSONPatch``, ``jsonpatch.escapeKey``) declared; the binding cannot declare
    object types, so their literals are checked as maps of dynamic values: the syntax, the
    references and the calls inside them are checked, not the ``JSONPatch`` field names; the
    result type only as far as a map (``must evaluate to Object``) or a list (``must evaluate to
    list(JSONPatch)``) of anything."""
    wanted, detail = ("LIST", "must evaluate to list(JSONPatch)") if json_patch else ("MAP", "must evaluate to Object")
    rewritten = _patch_types_source(expression)
    if rewritten is None:
        return compile_error(expression, wanted, detail, params=params)
    text, where = rewritten
    found = compile_error(text, wanted, detail, params=params, literal_checks=False)
    return _original_positions(found, text, where, expression) if found.startswith("compilation failed") else found
