"""kube's CEL authorizer library (k8s.io/apiserver pkg/cel/library/authz.go: ``Authz``, in the
base environment since 1.27, and ``AuthzSelectors``, since 1.31) for the cel-cpp engine.

``authorizer`` (the ``authorizer`` variable of ValidatingAdmissionPolicy validations,
matchConditions, variables and auditAnnotations, and of webhook matchConditions) checks what the
requesting user may do: ``authorizer.group('apps').resource('deployments').namespace(ns)
.name(n).check('delete').allowed()``, ``authorizer.serviceAccount(ns, name)...`` (that service
account's user instead), ``authorizer.path('/healthz').check('get')``,
``authorizer.requestResource`` (the request's own group, resource, subresource, namespace and
name), ``.subresource()``, ``.fieldSelector()``/``.labelSelector()``, and a decision's
``allowed()``, ``reason()``, ``errored()``, ``error()``. The checks are the server's RBAC
decisions (``authorization.Authorizer``; allowed, else no opinion), with kube's attributes:
a resource check has ``apiVersion: *``, a path check the path as given.

Values are tagged maps as the other libraries' (``library``): cel-expr-python 0.1 cannot return
opaque values from Python functions, nor type-check distinct abstract types (the binding's
``AbstractType`` of one name is assignable from any other), so the functions are declared on
``map(string, dyn)`` receivers and ``authorizer`` is ``dyn``; each value is sealed with a key of
the process, so no map from a request passes for one. ``misuse`` gives cel-go's compile errors
for a member call on a value whose library type the checked AST shows (``authorizer.check('get')``:
``found no matching overload for 'check' applied to
'kubernetes.authorization.Authorizer.(string)'``). Deviations, documented: where the type is not
visible (a policy variable holding a check, ``variables.d.allowed()``) a wrong call is an
evaluation error ``no such overload``; a field selection on ``authorizer`` other than
``requestResource`` fails when evaluated (``no such key``); ``type(authorizer)`` is ``map``.

Runtime cost: each ``check`` costs 350,000 (library/cost.go ``CallCost``, "set to allow for only
two authorization checks per expression") against the per-expression limit (``PER_CALL_LIMIT``);
a third check in one evaluation fails with ``operation cancelled: actual cost limit exceeded``,
as in kube. The other calls' runtime costs are not tracked here.

The authorizer and the cost spent are bound around evaluations with ``bind(authorize)``
(``fresh()`` before each expression); ``authorizer_value`` builds the variable for a requester.
"""

from __future__ import annotations

import contextvars
import hashlib
import hmac
import json
import secrets
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from cel_expr_python import cel as _cel

from samplecontroller.apimachinery import fields as fieldsel
from samplecontroller.apimachinery import labels as labelsel
from samplecontroller.apiserver.authentication import SA_PREFIX, UserInfo, service_account_groups
from samplecontroller.apiserver.authorization.attributes import Attributes
from samplecontroller.apiserver.cel import checked
from samplecontroller.apiserver.validation import dns1123_label_errors, dns1123_subdomain_errors

__all__ = ["AUTHZ", "CHECK_COST", "SELECTORS", "Authorize", "Verdict", "authorizer_value", "bind", "fresh",
           "misuse", "user_from_wire"]

_T = _cel.Type
_MAP = _T.Map(_T.STRING, _T.DYN)
_S, _B = _T.STRING, _T.BOOL

CHECK_COST = 350_000
"""library/cost.go: the fixed cost of one authorization check (estimated and actual)."""
_PER_CALL_LIMIT = 1_000_000  # celconfig.PerCallLimit (cost.PER_CALL_LIMIT; not imported: a cycle)


@dataclass(frozen=True)
class Verdict:
    """What an authorizer answers: ``allowed`` (else no opinion), its reason and its error."""

    allowed: bool
    reason: str = ""
    error: str = ""


Authorize = Callable[[Attributes], Verdict]
"""An authorizer as the library calls it (the server adapts ``rbac.Authorizer.authorize``)."""


@dataclass
class _Binding:
    authorize: Authorize
    spent: int = 0


_CURRENT: contextvars.ContextVar[_Binding | None] = contextvars.ContextVar("celauthz", default=None)


def user_from_wire(info: Mapping[str, Any]) -> UserInfo:
    """The ``UserInfo`` of authentication.k8s.io/v1 (``request.userInfo``) as a user."""
    extra = info.get("extra") or {}
    return UserInfo(str(info.get("username") or ""), str(info.get("uid") or ""),
                    tuple(str(g) for g in info.get("groups") or ()),
                    {str(k): tuple(str(v) for v in vs or ()) for k, vs in extra.items()})


def _user_wire(user: UserInfo) -> dict[str, Any]:
    return {"name": user.name, "uid": user.uid, "groups": list(user.groups),
            "extra": {k: list(v) for k, v in user.extra.items()}}


def _user(data: Mapping[str, Any]) -> UserInfo:
    return UserInfo(str(data["name"]), str(data["uid"]), tuple(data["groups"]),
                    {k: tuple(v) for k, v in data["extra"].items()})


_KEY = secrets.token_bytes(32)


def _seal(kind: str, text: str) -> str:
    return hmac.new(_KEY, f"{kind}\0{text}".encode(), hashlib.sha256).hexdigest()


def _tag(kind: str, data: Mapping[str, Any]) -> dict[str, str]:
    """A value of the library's ``kind``: its data as JSON, sealed with this process's key so
    that a map from a request (``object.spec.x.check('get')`` on a forged ``@ResourceCheck``
    naming another user) is no such value."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return {"@" + kind: f"{_seal(kind, text)}:{text}"}


def _untag(kind: str, value: Any) -> dict[str, Any]:
    """The data of a value of the library's ``kind`` (``no such overload`` for any other value;
    the authorizer also holds ``requestResource``)."""
    if isinstance(value, dict) and isinstance(value.get("@" + kind), str) \
            and (len(value) == 1 or (kind == "Authorizer" and set(value) == {"@Authorizer", "requestResource"})):
        seal, _, text = value["@" + kind].partition(":")
        if hmac.compare_digest(seal, _seal(kind, text)):
            data: dict[str, Any] = json.loads(text)
            return data
    raise ValueError("no such overload")


def authorizer_value(user: UserInfo, group: str, resource: str, subresource: str, namespace: str,
                     name: str) -> dict[str, Any]:
    """The ``authorizer`` variable for ``user``, with ``requestResource`` the request's resource
    (``NewAuthorizerVal`` and ``NewResourceAuthorizerVal``)."""
    who = _user_wire(user)
    value: dict[str, Any] = dict(_tag("Authorizer", {"user": who}))
    value["requestResource"] = _tag("ResourceCheck", _resource_check(who, group, resource, subresource, namespace,
                                                                      name))
    return value


def _resource_check(who: Mapping[str, Any], group: str, resource: str, subresource: str = "", namespace: str = "",
                    name: str = "", field_selector: str = "", label_selector: str = "") -> dict[str, Any]:
    return {"user": who, "group": group, "resource": resource, "subresource": subresource, "namespace": namespace,
            "name": name, "fieldSelector": field_selector, "labelSelector": label_selector}


@contextmanager
def bind(authorize: Authorize | None) -> Iterator[None]:
    """Evaluations inside run their checks with ``authorize`` (None: no authorizer is bound, a
    check fails), each evaluation's cost counted from ``fresh()``."""
    token = _CURRENT.set(_Binding(authorize) if authorize is not None else None)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def fresh() -> None:
    """Start counting the runtime cost of a new evaluation (one expression)."""
    current = _CURRENT.get()
    if current is not None:
        current.spent = 0


# ---------------------------------------------------------------------------- functions


def _path(authz: Any, path: str) -> dict[str, str]:
    data = _untag("Authorizer", authz)
    if not path.strip():
        raise ValueError("path must not be empty")
    return _tag("PathCheck", {"user": data["user"], "path": path})


def _group(authz: Any, group: str) -> dict[str, str]:
    return _tag("GroupCheck", {"user": _untag("Authorizer", authz)["user"], "group": group})


def _service_account(authz: Any, namespace: str, name: str) -> dict[str, str]:
    _untag("Authorizer", authz)
    if dns1123_subdomain_errors(name):
        raise ValueError("Invalid service account name")
    if dns1123_label_errors(namespace):
        raise ValueError("Invalid service account namespace")
    # serviceaccount.ServiceAccountInfo{Name, Namespace}.UserInfo(): no uid, no system:authenticated
    user = UserInfo(f"{SA_PREFIX}{namespace}:{name}", "", service_account_groups(namespace))
    return _tag("Authorizer", {"user": _user_wire(user)})


def _resource(group_check: Any, resource: str) -> dict[str, str]:
    data = _untag("GroupCheck", group_check)
    if not resource.strip():
        raise ValueError("resource must not be empty")
    return _tag("ResourceCheck", _resource_check(data["user"], data["group"], resource))


def _setter(key: str) -> Callable[[Any, str], dict[str, str]]:
    def set_(resource_check: Any, value: str) -> dict[str, str]:
        return _tag("ResourceCheck", {**_untag("ResourceCheck", resource_check), key: value})
    return set_


def _charge() -> _Binding:
    current = _CURRENT.get()
    if current is None:
        raise ValueError("no authorizer is bound in this context")
    current.spent += CHECK_COST
    if current.spent > _PER_CALL_LIMIT:
        raise ValueError("operation cancelled: actual cost limit exceeded")
    return current


def _decision(verdict: Verdict) -> dict[str, str]:
    return _tag("Decision", {"allowed": verdict.allowed, "reason": verdict.reason, "error": verdict.error})


def _selector_attributes(data: Mapping[str, Any]) -> dict[str, str]:
    """The selectors of a resource check as kube adds them to the attributes: the parsed
    requirements, or no requirements and the parse error."""
    out: dict[str, str] = {}
    if data["fieldSelector"]:
        try:
            out["field_selector"] = str(fieldsel.parse(data["fieldSelector"]))
        except ValueError as err:
            out["field_selector_error"] = str(err)
    if data["labelSelector"]:
        try:
            out["label_selector"] = str(labelsel.parse(data["labelSelector"]))
        except ValueError as err:
            out["label_selector_error"] = str(err)
    return out


def _check(target: Any, verb: str) -> dict[str, str]:
    """``PathCheck.check(httpVerb)`` and ``ResourceCheck.check(apiVerb)`` (one overload: the
    binding cannot tell the receivers apart by type)."""
    if isinstance(target, dict) and "@PathCheck" in target:
        data = _untag("PathCheck", target)
        attrs = Attributes(_user(data["user"]), verb, False, path=data["path"])
    else:
        data = _untag("ResourceCheck", target)
        attrs = Attributes(_user(data["user"]), verb, True, data["namespace"], data["group"], "*", data["resource"],
                           data["subresource"], data["name"], **_selector_attributes(data))
    return _decision(_charge().authorize(attrs))


def _fn(name: str, ret: Any, oid: str, params: list[Any], impl: Callable[..., Any]) -> Any:
    return _cel.FunctionDecl(name, [_cel.Overload(oid, ret, params, is_member=True, impl=impl)])


AUTHZ: list[Any] = [
    _fn("path", _MAP, "authorizer_path", [_MAP, _S], _path),
    _fn("group", _MAP, "authorizer_group", [_MAP, _S], _group),
    _fn("serviceAccount", _MAP, "authorizer_serviceaccount", [_MAP, _S, _S], _service_account),
    _fn("resource", _MAP, "groupcheck_resource", [_MAP, _S], _resource),
    _fn("subresource", _MAP, "resourcecheck_subresource", [_MAP, _S], _setter("subresource")),
    _fn("namespace", _MAP, "resourcecheck_namespace", [_MAP, _S], _setter("namespace")),
    _fn("name", _MAP, "resourcecheck_name", [_MAP, _S], _setter("name")),
    _fn("check", _MAP, "check", [_MAP, _S], _check),
    _fn("errored", _B, "decision_errored", [_MAP], lambda d: bool(_untag("Decision", d)["error"])),
    _fn("error", _S, "decision_error", [_MAP], lambda d: str(_untag("Decision", d)["error"])),
    _fn("allowed", _B, "decision_allowed", [_MAP], lambda d: bool(_untag("Decision", d)["allowed"])),
    _fn("reason", _S, "decision_reason", [_MAP], lambda d: str(_untag("Decision", d)["reason"])),
]
"""kube's ``Authz`` library (1.27)."""

SELECTORS: list[Any] = [
    _fn("fieldSelector", _MAP, "authorizer_fieldselector", [_MAP, _S], _setter("fieldSelector")),
    _fn("labelSelector", _MAP, "authorizer_labelselector", [_MAP, _S], _setter("labelSelector")),
]
"""kube's ``AuthzSelectors`` library (1.31)."""


# ---------------------------------------------------------------------------- compile-time types

_PREFIX = "kubernetes.authorization."
_SIGNATURES: dict[str, dict[str, str]] = {
    "path": {"Authorizer": "PathCheck"},
    "group": {"Authorizer": "GroupCheck"},
    "serviceAccount": {"Authorizer": "Authorizer"},
    "resource": {"GroupCheck": "ResourceCheck"},
    **{name: {"ResourceCheck": "ResourceCheck"}
       for name in ("subresource", "namespace", "name", "fieldSelector", "labelSelector")},
    "check": {"PathCheck": "Decision", "ResourceCheck": "Decision"},
    **{name: {"Decision": ""} for name in ("allowed", "errored", "error", "reason")},
}
"""Each library function's receiver types and result type (authzLibraryDecls; "": not one of
the library's)."""


def misuse(ast: checked.Checked, source: str) -> str:
    """cel-go's ``found no matching overload`` errors (with the snippet lines) for the member
    calls whose receiver is of one of the library's types (``authorizer``,
    ``authorizer.requestResource`` and the results of the library's functions on them) and that
    no overload of the library takes; "" when there is none. ``source`` is what was compiled."""
    issues: list[tuple[int, str]] = []

    def kind(e: checked.Expr, shadowed: frozenset[str]) -> str:
        """The library type of ``e`` ("": another or an unknown one), reporting misuses."""
        found = ""
        if e.kind == checked.IDENT:
            found = "Authorizer" if e.name == "authorizer" and "authorizer" not in shadowed else ""
        elif e.kind == checked.SELECT and e.operand is not None:
            operand = kind(e.operand, shadowed)
            found = "ResourceCheck" if operand == "Authorizer" and e.name == "requestResource" else ""
        elif e.kind == checked.COMPREHENSION:
            inner = shadowed | {e.iter_var, e.accu_var}
            for child in (e.iter_range, e.accu_init):
                if child is not None:
                    kind(child, shadowed)
            for child in (e.loop_condition, e.loop_step, e.result):
                if child is not None:
                    kind(child, inner)
        else:
            receiver = kind(e.target, shadowed) if e.kind == checked.CALL and e.target is not None else ""
            for child in checked.children(e):
                if child is not e.target:
                    kind(child, shadowed)
            if receiver:
                signature = _SIGNATURES.get(e.name, {})
                if receiver in signature:
                    found = signature[receiver]
                else:
                    args = ", ".join(checked.format_type(ast.type_of(a)) for a in e.args)
                    issues.append((ast.positions.get(e.id, 0), f"found no matching overload for '{e.name}' "
                                   f"applied to '{_PREFIX}{receiver}.({args})'"))
        return found

    kind(ast.expr, frozenset())
    return checked.issue_lines(issues, source)
