"""``x-kubernetes-validations`` of a structural schema: compiled once per schema node, evaluated
at every level of an object with ``self`` bound to the value there (apiextensions-apiserver's
pkg/apiserver/schema/cel Validator).

- ``schema_errors(schema, path)``: the CRD-time errors of every rule (compilation failed, not a
  bool, bad ``messageExpression``, bad ``fieldPath``), as ``FieldError`` under ``path``
  (``spec.versions[0].schema.openAPIV3Schema``).
- ``validate(obj, old, schema)`` -> ``(errors, warnings)``: the failed rules of ``obj``
  (``old`` on update). Errors are kube's: ``spec: Invalid value: "object": failed rule: <rule>``
  or the ``message``/``messageExpression``, ``reason`` choosing Forbidden/Required/Duplicate,
  ``fieldPath`` appended to the node's path, evaluation errors as ``<err> evaluating rule: ...``.
  Transition rules (using ``oldSelf``) run only on update where the old value correlates
  (object properties, map values, ``x-kubernetes-list-type: map`` items by key) unless
  ``optionalOldSelf`` is true (then ``oldSelf`` is an optional). Ratcheting (CRDValidationRatcheting,
  on since 1.30): a failed rule that does not use ``oldSelf`` on a value unchanged from the old
  object is a warning, not an error.
- Costs (``cost``): at CRD time a rule whose estimated cost (cel-go's estimator over the
  schema's maxLength/maxItems/maxProperties) times its node's cardinality exceeds 10,000,000, or
  rules totalling more than 100,000,000, reject the CRD with kube's messages (``schema_errors``).
  Lists are plain CEL lists: ``x-kubernetes-list-type: set``/``map`` lists compare equal only in
  the same order (Kubernetes ignores the order).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from samplecontroller.apiserver import bodies
from samplecontroller.apiserver import schema as structural
from samplecontroller.apiserver.cel import checked, cost, formats
from samplecontroller.apiserver.cel.checked import Checked
from samplecontroller.apiserver.cel.engine import (
    BOOL,
    DOUBLE,
    DURATION,
    DYN,
    INT,
    STRING,
    TIMESTAMP,
    Activation,
    CompileError,
    Env,
    EvalError,
    Program,
    uses_bindings,
)
from samplecontroller.apiserver.cel.fields import (
    TYPED_SLOTS,
    invalid_literals,
    mask_strings,
    scalar_typed_source,
    typed_source,
    undefined_fields,
    uses_old_self,
)
from samplecontroller.apiserver.cel.library import FUNCTIONS, INTRODUCED, ext_lists, functions
from samplecontroller.apiserver.cel.values import to_cel
from samplecontroller.apiserver.schema import FieldError, GoRaw
from samplecontroller.apiserver.warning import go_quote

__all__ = ["ROOT_PATH", "blocking_error", "expressions", "has_rules", "schema_errors", "validate"]

ROOT_PATH = "<nil>"  # how Go prints a nil *field.Path: errors of rules on the root schema
_LIBRARIES = FUNCTIONS + formats.FUNCTIONS
_ENV = Env({"self": DYN, "oldSelf": DYN}, _LIBRARIES, formats.rewrite)
_OPTIONAL_ENV = Env({"self": DYN, "__oldSelf": DYN, "__hasOldSelf": BOOL}, _LIBRARIES, formats.rewrite)
_TYPED_ENV = Env({f"__{name}{i}": kind for name, kind in (("INT", INT), ("DOUBLE", DOUBLE), ("STRING", STRING),
                                                          ("BOOL", BOOL), ("TIMESTAMP", TIMESTAMP),
                                                          ("DURATION", DURATION))
                  for i in range(TYPED_SLOTS)} | {"self": DYN, "oldSelf": DYN}, _LIBRARIES, formats.rewrite)
_NO_BINDINGS_ENV = Env({"self": DYN, "oldSelf": DYN}, _LIBRARIES, bindings=False)
_MAX_MESSAGE = 5 * 1024
_COMPAT_ENVS: dict[int, Env] = {}
_BLOCKING = (structural.ERROR_NOT_SUPPORTED, structural.ERROR_REQUIRED, structural.ERROR_TOO_LONG,
             structural.ERROR_TOO_MANY, structural.ERROR_TYPE_INVALID)


@dataclass(frozen=True)
class _Rule:
    spec: dict[str, Any]
    program: Program | None
    message_program: Program | None
    optional_program: Program | None
    transition: bool
    field_path: str
    error: str = ""
    max_cost: int = 0  # the rule's estimated cost (cel-go's estimator, ``cost``)
    message_max_cost: int = 0  # the messageExpression's
    ast: Checked | None = None  # the checked AST the cost is estimated on
    decl: cost.Decl | None = None  # self's DeclType

    @property
    def text(self) -> str:
        """ruleErrorString: the message if any, else the rule."""
        message = str(self.spec.get("message") or "").strip()
        return message or str(self.spec.get("rule") or "").strip()

    @property
    def default_message(self) -> str:
        message = str(self.spec.get("message") or "").strip()
        return message or f"failed rule: {self.text}"


def _compile_rule(spec: dict[str, Any], node: dict[str, Any], root: bool = False, estimate: bool = False,
                  node_decl: cost.Decl | None = None, compat_env: Env | None = None,
                  preexisting: frozenset[str] = frozenset()) -> tuple[_Rule, list[tuple[str, Any, str]]]:
    """The compiled rule and its compilation problems as (child, value, detail) for the CRD's
    validation (``value`` None: the whole rule is the shown value); ``estimate``: with the
    estimated costs of the rule and its messageExpression, ``self`` of type ``node_decl``
    (``node``'s when not given). ``compat_env``: the environment kube compiles a new expression
    in (its compatibility version's), for the expressions not ``preexisting``."""
    if estimate and node_decl is None:
        node_decl = cost.decl_type(node, root)
    problems: list[tuple[str, Any, str]] = []
    source = str(spec.get("rule") or "")
    program = optional_program = message_program = None
    error = ""
    max_cost = message_max_cost = 0
    ast: Checked | None = None
    decl: cost.Decl | None = None
    if source.strip():
        try:
            program = _user_compile(source, None if source in preexisting else compat_env)
            plain = program
            undefined = undefined_fields(source, node, root) or invalid_literals(source, _ENV.succeeds) \
                or _mixed_literals(program, source)
            if undefined:
                raise CompileError(undefined)
            program = _typed(source, node, root, program)
            if _result_type(program, source, node, root) not in ("BOOL", "DYN"):
                raise CompileError("cel expression must evaluate to a bool")
            if estimate:
                try:
                    ast, decl = _checked(plain), node_decl
                    max_cost = cost.estimate(ast, decl).max
                except (ValueError, LookupError, AssertionError, RecursionError) as err:
                    raise CompileError(f"cost estimation failed: {err}") from None
        except CompileError as err:
            detail = err.detail if err.detail.startswith(("cel expression", "cost estimation")) \
                else "compilation failed: " + err.detail
            problems.append(("rule", None, detail))
            program, error = None, detail
        if program is not None and spec.get("optionalOldSelf") is True:
            optional_program = _OPTIONAL_ENV.compile(
                "cel.bind(oldSelf, __hasOldSelf ? optional.of(__oldSelf) : optional.none(), (" + source + "))")
    message_source = str(spec.get("messageExpression") or "")
    if message_source.strip():
        try:
            plain_message = _user_compile(message_source, None if message_source in preexisting else compat_env)
            mixed = _mixed_literals(plain_message, message_source)
            if mixed:
                raise CompileError(mixed)
            message_program = _typed(message_source, node, root, plain_message)
            if _result_type(message_program, message_source, node, root) not in ("STRING", "DYN"):
                raise CompileError("must evaluate to a string")
            if estimate and program is not None:
                try:
                    message_max_cost = cost.estimate(_checked(plain_message), node_decl).max
                except (ValueError, LookupError, AssertionError, RecursionError) as err:
                    raise CompileError(f"cost estimation failed for messageExpression: {err}") from None
        except CompileError as err:
            detail = err.detail if err.detail.startswith(("must evaluate", "cost estimation")) \
                else "messageExpression compilation failed: " + err.detail
            problems.append(("messageExpression", None, detail))
            message_program = None
    if "optionalOldSelf" in spec and isinstance(spec["optionalOldSelf"], bool) and not uses_old_self(source):
        problems.append(("optionalOldSelf", spec["optionalOldSelf"], "may not be set if oldSelf is not used in rule"))
    normalized = ""
    if spec.get("fieldPath"):
        try:
            normalized = normalize_field_path(str(spec["fieldPath"]), node)
        except ValueError:
            normalized = ""
    rule = _Rule(spec, program, message_program, optional_program, uses_old_self(source), normalized, error,
                 max_cost, message_max_cost, ast, decl)
    return rule, problems


def _user_compile(source: str, compat_env: Env | None = None) -> Program:
    """A rule's or messageExpression's program; ``cel.bind`` is refused with the errors of
    kube's environment, which has no ext.Bindings (``cel`` and ``bind`` undeclared), and with
    ``compat_env`` what that environment (a compatibility version's) lacks, with its errors."""
    if uses_bindings(source):
        _NO_BINDINGS_ENV.compile(source)
    if compat_env is not None:
        compat_env.compile(source)
    return _ENV.compile(source)


def _mixed_literals(program: Program, source: str) -> str:
    """kube's errors for mixed-type list or map literals (``checked.mixed_literals``); not
    checked in a source the format library's rewrite changes (other positions)."""
    if "format." in mask_strings(source):
        return ""
    return checked.mixed_literals(_checked(program), source)


_ASTS: dict[str, Checked] = {}


def _checked(program: Program) -> Checked:
    """The checked AST of a program (parsed once per source)."""
    found = _ASTS.get(program.source)
    if found is None:
        if len(_ASTS) >= 4096:
            _ASTS.clear()
        found = _ASTS[program.source] = checked.parse(program.serialized())
    return found


_REASONS = (structural.ERROR_DUPLICATE, structural.ERROR_FORBIDDEN, structural.ERROR_INVALID, structural.ERROR_REQUIRED)
_NEWLINES = re.compile(r"[\n\r]+")


def _spec_errors(spec: dict[str, Any], node: dict[str, Any], where: str) -> list[FieldError]:
    """The checks of a rule that do not need CEL (kube's "schema errors" of a rule)."""
    errors: list[FieldError] = []
    rule, message = str(spec.get("rule") or ""), str(spec.get("message") or "")
    if not rule.strip():
        errors.append(structural.required(f"{where}.rule", "rule is not specified"))
    elif message and not message.strip():
        errors.append(structural.invalid(f"{where}.message", message, "message must be non-empty if specified"))
    elif _NEWLINES.search(message.strip()):
        errors.append(structural.invalid(f"{where}.message", message, "message must not contain line breaks"))
    elif _NEWLINES.search(rule.strip()) and not message.strip():
        errors.append(structural.required(f"{where}.message", "message must be specified if rule contains line breaks"))
    expression = str(spec.get("messageExpression") or "")
    if expression and not expression.strip():
        errors.append(structural.required(f"{where}.messageExpression",
                                          "messageExpression must be non-empty if specified"))
    reason = spec.get("reason")
    if reason is not None and reason not in _REASONS:
        errors.append(structural.not_supported(f"{where}.reason", reason, _REASONS))
    field_path = str(spec.get("fieldPath") or "")
    if field_path and not field_path.strip():
        errors.append(structural.invalid(f"{where}.fieldPath", field_path, "fieldPath must be non-empty if specified"))
    if _NEWLINES.search(field_path):
        errors.append(structural.invalid(f"{where}.fieldPath", field_path, "fieldPath must not contain line breaks"))
    if field_path:
        try:
            normalize_field_path(field_path, node)
        except ValueError:
            errors.append(structural.invalid(f"{where}.fieldPath", field_path, "fieldPath must be a valid path"))
    return errors


def _result_type(program: Program, source: str, node: dict[str, Any], root: bool) -> str:
    """The type an expression evaluates to, as cel-go's checker sees it with the schema's types:
    the engine's own when it knows it, else the one it finds with the scalar fields the
    expression selects declared as what the schema says (``self.replicas``: INT). DYN when
    neither tells (a typed compilation that fails, which a cross-type comparison kube allows
    can do, decides nothing)."""
    if program.result_type != "DYN":
        return program.result_type
    typed = scalar_typed_source(source, node, root)
    if typed is None:
        return "DYN"
    try:
        return _TYPED_ENV.compile(typed).result_type
    except CompileError:
        return "DYN"


def _typed(source: str, node: dict[str, Any], root: bool, program: Program) -> Program:
    """The program that sees ``format: date-time``/``duration`` strings as timestamps and
    durations, as Kubernetes types them (``fields.typed_source``); compile errors it alone has
    (``self.t > 'x'`` on a date-time) are the rule's, as in Kubernetes."""
    typed = typed_source(source, node, root)
    return program if typed == source else _ENV.compile(typed)


def normalize_field_path(path: str, node: dict[str, Any]) -> str:
    """``.spec.x['a.b']`` -> ``spec.x[a.b]`` checked against ``node``'s schema (ValidFieldPath)."""
    tokens = re.findall(r"\.|\[|\]|'(?:\\.|[^'\\])*'|[^.\[\]']+", path)
    out, i, current = "", 0, node
    while i < len(tokens):
        tok = tokens[i]
        if tok == "[":
            if i + 2 >= len(tokens) or not tokens[i + 1].startswith("'") or tokens[i + 2] != "]":
                raise ValueError("expected single quoted string")
            name, i = tokens[i + 1][1:-1].replace("\\'", "'").replace("\\\\", "\\"), i + 3
        elif tok == ".":
            if i + 1 >= len(tokens):
                raise ValueError("unexpected end of JSON path")
            name, i = tokens[i + 1], i + 2
        else:
            raise ValueError(f"expected [ or . but got: {tok}")
        props, additional = current.get("properties"), current.get("additionalProperties")
        if isinstance(props, dict) and props:
            if name not in props:
                raise ValueError("does not refer to a valid field")
            current, out = props[name], f"{out}.{name}" if out else name
        elif isinstance(additional, dict):
            current, out = additional, f"{out}[{name}]"
        else:
            raise ValueError("does not refer to a valid field")
    return out


# ---------------------------------------------------------------------------- CRD time


def has_rules(schema: Any) -> bool:
    """True when any node of ``schema`` has ``x-kubernetes-validations`` (cached per schema object)."""
    cached = _HAS_RULES.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    found = _has_rules(schema)
    if len(_HAS_RULES) > 4096:
        _HAS_RULES.clear()
    _HAS_RULES[id(schema)] = (schema, found)
    return found


_HAS_RULES: dict[int, tuple[Any, bool]] = {}


def _has_rules(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    if schema.get("x-kubernetes-validations"):
        return True
    children = list((schema.get("properties") or {}).values()) + list(schema.get("allOf") or ())
    children += [schema.get("additionalProperties"), schema.get("items")]
    return any(_has_rules(child) for child in children)


@dataclass
class _SchemaErrors:
    schema: list[FieldError] = field(default_factory=list)
    cel: list[FieldError] = field(default_factory=list)
    total: int = 0  # the estimated cost of every rule (TotalCost)
    expensive: list[tuple[int, str]] = field(default_factory=list)  # the (at most 4) costliest
    compat_env: Env | None = None  # the new expressions' environment (compatibility version)
    preexisting: frozenset[str] = frozenset()  # expressions compiled as stored ones

    def observe(self, where: str, expression_cost: int) -> None:
        """TotalCost.ObserveExpressionCost."""
        self.total = min(self.total + expression_cost, _MAX_U64)
        if expression_cost < cost.STATIC_CRD_COST_LIMIT // 100:
            return
        self.expensive.append((expression_cost, where))
        self.expensive.sort(key=lambda item: -item[0])
        del self.expensive[4:]


_MAX_U64 = (1 << 64) - 1


def schema_errors(schema: Any, path: str, suppress_rule_cost: bool = False, compat_minor: int | None = None,
                  preexisting: frozenset[str] = frozenset()) -> list[FieldError]:
    """The errors a CRD's schema gets for its validation rules, as kube-apiserver orders them:
    the rules' own checks, then compilation (skipped at a node when it or a node below has one
    of the former). A rule that does not compile rejects the CRD, as does one whose estimated
    cost times the number of times its node can occur exceeds ``cost.STATIC_RULE_COST_LIMIT``
    (``<rule path>: Forbidden: estimated rule cost exceeds budget by factor of ...``; not checked
    with ``suppress_rule_cost``, which kube sets for a version whose schema an update leaves
    unchanged) or whose rules together exceed ``cost.STATIC_CRD_COST_LIMIT`` (the costliest
    rules ``contributed to ...``, then ``<path>: Forbidden: x-kubernetes-validations estimated
    rule cost total for entire OpenAPIv3 schema exceeds budget by factor of ...``).
    ``compat_minor``: kube-apiserver compiles a new rule or messageExpression for its minimum
    compatibility version, the emulated one minus one (``DefaultCompatibilityVersion``): one
    using a library function that version lacks (``library.INTRODUCED``) does not compile
    (``compilation failed: ERROR: ... undeclared reference to 'semver' ...``), and is not
    costed; the expressions in ``preexisting`` (the old CRD's) compile with every library, as in
    kube's StoredExpressions environment."""
    found = _SchemaErrors()
    if compat_minor is not None and compat_minor < max(INTRODUCED.values()):
        found.compat_env, found.preexisting = _compat_env(compat_minor), preexisting
    _schema_walk(schema, path, found, "", root=True, cardinality=1, suppress=suppress_rule_cost)
    errors = found.schema + found.cel
    if found.total > cost.STATIC_CRD_COST_LIMIT:
        errors += [structural.forbidden(where, "contributed to estimated rule cost total exceeding cost limit "
                                        "for entire OpenAPIv3 schema") for _, where in found.expensive]
        errors.append(structural.forbidden(path, cost.cost_error_message(
            "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema", found.total,
            cost.STATIC_CRD_COST_LIMIT)))
    return errors


def _compat_env(compat_minor: int) -> Env:
    """The environment of new expressions at compatibility version ``1.<compat_minor>``."""
    env = _COMPAT_ENVS.get(compat_minor)
    if env is None:
        env = _COMPAT_ENVS[compat_minor] = Env({"self": DYN, "oldSelf": DYN},
                                               functions(compat_minor) + formats.FUNCTIONS, formats.rewrite,
                                               ext_lists=ext_lists(compat_minor))
    return env


def expressions(schema: Any) -> frozenset[str]:
    """Every rule and messageExpression of a schema (an old CRD's: kube's preexisting ones)."""
    return frozenset(str(spec.get(key)) for _, spec in _rule_specs(schema, "")
                     for key in ("rule", "messageExpression") if isinstance(spec.get(key), str))


def _rule_specs(node: Any, path: str) -> list[tuple[str, dict[str, Any]]]:
    """(path, rule spec) of every x-kubernetes-validations entry under ``node``."""
    if not isinstance(node, dict):
        return []
    found: list[tuple[str, dict[str, Any]]] = []
    for name, sub in (node.get("properties") or {}).items() if isinstance(node.get("properties"), dict) else ():
        found += _rule_specs(sub, f"{path}.properties[{name}]")
    if isinstance(node.get("additionalProperties"), dict):
        found += _rule_specs(node["additionalProperties"], f"{path}.additionalProperties")
    if isinstance(node.get("items"), dict):
        found += _rule_specs(node["items"], f"{path}.items")
    for i, sub in enumerate(node.get("allOf") or ()):
        found += _rule_specs(sub, f"{path}.allOf[{i}]")
    rules = node.get("x-kubernetes-validations")
    if isinstance(rules, list):
        found += [(f"{path}.x-kubernetes-validations[{i}]", spec) for i, spec in enumerate(rules)
                  if isinstance(spec, dict)]
    return found


def _child_cardinality(node: dict[str, Any], cardinality: int | None) -> int | None:
    """CELSchemaContext.childContext: the parent's cardinality times the factor by which
    ``node`` multiplies its children (maxItems, maxProperties; 1 for objects and scalars);
    None (unbounded) when either is unbounded."""
    if cardinality is None:
        return None
    kind = node.get("type")
    limit: Any = 1
    if kind == "object" and isinstance(node.get("additionalProperties"), dict):
        limit = node.get("maxProperties")
    elif kind == "array":
        limit = node.get("maxItems")
    if not isinstance(limit, int) or isinstance(limit, bool):
        return None
    return min(cardinality * max(limit, 0), _MAX_U64)


def _expression_cost(max_cost: int, cardinality: int | None, node: dict[str, Any], root: bool) -> int:
    """getExpressionCost: the estimated cost times the node's cardinality (when unbounded, as
    many times as its smallest serialized form fits in a request)."""
    if max_cost == 0:
        return 0
    if cardinality is None:
        decl = cost.decl_type(node, root)
        cardinality = cost.max_cardinality(decl) if decl is not None else 1
    return min(max_cost * cardinality, _MAX_U64)


def _schema_walk(node: Any, path: str, found: _SchemaErrors, uncorrelatable: str, root: bool = False,
                 cardinality: int | None = 1, suppress: bool = False, costed: bool = True) -> None:
    if not isinstance(node, dict):
        return
    before = len(found.schema)
    child = _child_cardinality(node, cardinality)
    for name, sub in (node.get("properties") or {}).items() if isinstance(node.get("properties"), dict) else ():
        _schema_walk(sub, f"{path}.properties[{name}]", found, uncorrelatable, _embedded(sub), child, suppress,
                     costed)
    if isinstance(node.get("additionalProperties"), dict):
        _schema_walk(node["additionalProperties"], f"{path}.additionalProperties", found, uncorrelatable,
                     _embedded(node["additionalProperties"]), child, suppress, costed)
    if isinstance(node.get("items"), dict):
        inner = uncorrelatable or (path if node.get("x-kubernetes-list-type") != "map" else "")
        _schema_walk(node["items"], f"{path}.items", found, inner, _embedded(node["items"]), child, suppress, costed)
    for i, sub in enumerate(node.get("allOf") or ()):
        # kube validates allOf schemas without a CEL context: their rules are not costed
        _schema_walk(sub, f"{path}.allOf[{i}]", found, uncorrelatable, root, cardinality, suppress, False)
    rules = node.get("x-kubernetes-validations")
    if not isinstance(rules, list):
        return
    specs = [(i, spec) for i, spec in enumerate(rules) if isinstance(spec, dict)]
    for i, spec in specs:
        found.schema += _spec_errors(spec, node, f"{path}.x-kubernetes-validations[{i}]")
    if len(found.schema) > before:
        return
    node_decl = cost.decl_type(node, root) if costed else None
    for i, spec in specs:
        where = f"{path}.x-kubernetes-validations[{i}]"
        rule, problems = _compile_rule(spec, node, root, estimate=costed, node_decl=node_decl,
                                       compat_env=found.compat_env, preexisting=found.preexisting)
        if costed:
            _check_cost(found, f"{where}.rule", "estimated rule cost",
                        _expression_cost(rule.max_cost, cardinality, node, root), suppress)
        # kube's order: the rule's cost, its compilation, the messageExpression's compilation or
        # cost, then oldSelf's use
        last = [p for p in problems if p[0] == "optionalOldSelf"]
        for child_name, value, detail in [p for p in problems if p[0] != "optionalOldSelf"]:
            found.cel.append(FieldError(structural.ERROR_INVALID, f"{where}.{child_name}",
                                        GoRaw(go_rule(spec)) if value is None else value, detail))
        if costed and rule.message_program is not None and rule.program is not None:
            _check_cost(found, f"{where}.messageExpression", "estimated messageExpression cost",
                        rule.message_max_cost, suppress)
        for child_name, value, detail in last:
            found.cel.append(FieldError(structural.ERROR_INVALID, f"{where}.{child_name}", value, detail))
        if rule.transition and uncorrelatable and rule.program is not None:
            found.cel.append(structural.invalid(f"{where}.rule", str(spec.get("rule")),
                                                "oldSelf cannot be used on the uncorrelatable portion of the "
                                                f"schema within {uncorrelatable}"))


def _check_cost(found: _SchemaErrors, where: str, name: str, expression_cost: int, suppress: bool) -> None:
    if not suppress and expression_cost > cost.STATIC_RULE_COST_LIMIT:
        found.cel.append(structural.forbidden(where, cost.cost_error_message(
            name, expression_cost, cost.STATIC_RULE_COST_LIMIT)))
    found.observe(where, expression_cost)


def go_rule(spec: dict[str, Any]) -> str:
    """A ValidationRule as Go's ``%#v`` prints it in field errors."""
    reason = spec.get("reason")
    optional = spec.get("optionalOldSelf")
    reason_text = "(*apiextensions.FieldValueErrorReason)(nil)" if reason is None else \
        f"(*apiextensions.FieldValueErrorReason)({go_quote(str(reason))})"
    optional_text = "(*bool)(nil)" if optional is None else f"(*bool)({'true' if optional else 'false'})"
    return (f"apiextensions.ValidationRule{{Rule:{go_quote(str(spec.get('rule') or ''))}, "
            f"Message:{go_quote(str(spec.get('message') or ''))}, "
            f"MessageExpression:{go_quote(str(spec.get('messageExpression') or ''))}, "
            f"Reason:{reason_text}, FieldPath:{go_quote(str(spec.get('fieldPath') or ''))}, "
            f"OptionalOldSelf:{optional_text}}}")


# ---------------------------------------------------------------------------- objects


_CACHE: dict[tuple[int, bool], tuple[Any, list[_Rule]]] = {}


def _embedded(schema: Any) -> bool:
    return isinstance(schema, dict) and bool(schema.get("x-kubernetes-embedded-resource"))


def _rules_of(node: dict[str, Any], root: bool) -> list[_Rule]:
    cached = _CACHE.get((id(node), root))
    if cached is not None and cached[0] is node:
        return cached[1]
    node_decl = cost.decl_type(node, root)
    rules = [_compile_rule(spec, node, root, estimate=True, node_decl=node_decl)[0]
             for spec in node.get("x-kubernetes-validations") or () if isinstance(spec, dict)]
    if len(_CACHE) > 4096:
        _CACHE.clear()
    _CACHE[(id(node), root)] = (node, rules)
    return rules


def blocking_error(errors: list[FieldError]) -> FieldError | None:
    """The error added instead of the rules when schema errors make them meaningless."""
    if any(e.type in _BLOCKING for e in errors):
        return structural.invalid(ROOT_PATH, None, "some validation rules were not checked because the object "
                                  "was invalid; correct the existing errors to complete validation")
    return None


_MISSING: Any = object()


@dataclass
class _Walk:
    errors: list[FieldError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    memo: dict[tuple[int, int, bool], Any] = field(default_factory=dict)  # converted subtrees
    charged: int = 0  # the runtime cost charged so far (see _charge)
    pending: list[tuple[int, _Rule, Any, Any]] = field(default_factory=list)  # charged their estimate
    stopped: bool = False  # the budget or a call's limit ran out: no further rules

    def remaining(self, wanted: int = 0) -> int:
        """What is left of the object's budget; the evaluations charged their static estimate
        are re-charged their bound first when the estimates leave less than ``wanted``."""
        if self.charged + wanted >= cost.RUNTIME_BUDGET and self.pending:
            for static, rule, self_value, old_value in self.pending:
                self.charged += _bound(rule, self_value, old_value) - static
            self.pending.clear()
        return cost.RUNTIME_BUDGET - self.charged


def validate(obj: Any, old: Any, schema: dict[str, Any]) -> tuple[list[FieldError], list[str]]:
    """Evaluate every rule of ``schema`` on ``obj`` (``old``: the stored object on update)."""
    walk = _Walk()
    if has_rules(schema):
        _validate(walk, obj, old if old is not None else _MISSING, schema, "", True, old is not None and obj == old)
    return walk.errors, walk.warnings


def _validate(walk: _Walk, value: Any, old: Any, node: dict[str, Any], path: str, root: bool, ratchet: bool) -> None:
    if value is None or walk.stopped:
        return
    if node.get("x-kubernetes-validations"):
        _evaluate(walk, value, old, node, path, root, ratchet)
    for sub in node.get("allOf") or ():
        if isinstance(sub, dict) and sub.get("x-kubernetes-validations"):
            _evaluate(walk, value, old, {**node, "x-kubernetes-validations": sub["x-kubernetes-validations"]},
                      path, root, False)
    if isinstance(value, dict):
        correlates = node.get("x-kubernetes-map-type") != "atomic" and isinstance(old, dict)
        props = node.get("properties") if isinstance(node.get("properties"), dict) else {}
        additional = node.get("additionalProperties")
        for key, item in value.items():
            sub = props.get(key) if props else additional if isinstance(additional, dict) else None
            if not isinstance(sub, dict):
                continue
            before = old.get(key, _MISSING) if correlates else _MISSING
            child = (f"{path}.{key}" if path else key) if props else f"{path}[{key}]"
            _validate(walk, item, before, sub, child, bool(sub.get("x-kubernetes-embedded-resource")),
                      _equal(item, before) if before is not _MISSING else ratchet and not correlates)
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        items = node["items"]
        keys = node.get("x-kubernetes-list-map-keys") if node.get("x-kubernetes-list-type") == "map" else None
        olds = _by_keys(old, keys) if keys and isinstance(old, list) else {}
        for i, item in enumerate(value):
            before = olds.get(_key_of(item, keys), _MISSING) if keys else _MISSING
            _validate(walk, item, before, items, f"{path}[{i}]", bool(items.get("x-kubernetes-embedded-resource")),
                      _equal(item, before) if before is not _MISSING else ratchet and not keys)


def _equal(a: Any, b: Any) -> bool:
    return b is not _MISSING and type(a) is type(b) and bodies.equal(a, b)  # values may nest 10,000 deep


def _key_of(item: Any, keys: list[str] | None) -> Any:
    if not isinstance(item, dict) or not keys:
        return None
    import json
    return json.dumps([item.get(k) for k in keys])


def _by_keys(old: list[Any], keys: list[str]) -> dict[Any, Any]:
    return {_key_of(item, keys): item for item in old if isinstance(item, dict)}


def _evaluate(walk: _Walk, value: Any, old: Any, node: dict[str, Any], path: str, root: bool, ratchet: bool) -> None:
    typ = str(node.get("type") or "")
    where = path or ROOT_PATH
    self_value = to_cel(value, node, root, walk.memo)
    old_value = to_cel(old, node, root, walk.memo) if old is not _MISSING else _MISSING
    variables: dict[str, Any] = {"self": self_value}
    if old_value is not _MISSING:
        variables["oldSelf"] = old_value
    activation: Activation | None = None
    rules = _rules_of(node, root)
    if rules and walk.remaining() <= 0:
        _out_of_budget(walk, where, typ)
        return
    for rule in rules:
        if walk.stopped:
            return
        if rule.error:
            walk.errors.append(structural.invalid(where, typ, f"rule compile error: {rule.error}"))
            continue
        if rule.program is None or (rule.transition and old_value is _MISSING and rule.optional_program is None):
            continue
        if not _charge(walk, rule, self_value, None if old_value is _MISSING else old_value, where, typ):
            return
        try:
            if rule.optional_program is not None:
                result = rule.optional_program.evaluate({
                    "self": self_value, "__oldSelf": None if old_value is _MISSING else old_value,
                    "__hasOldSelf": old_value is not _MISSING})
            else:
                activation = activation or _ENV.activation(variables)
                result = rule.program.evaluate(activation)
        except EvalError as err:
            walk.errors.append(structural.invalid(where, typ, _eval_detail(str(err), rule)))
            continue
        if result is True:
            continue
        if result is not False:
            walk.errors.append(structural.invalid(where, typ, f"no such overload evaluating rule: {rule.text}"))
            continue
        target = where
        if rule.field_path:
            target = f"{path}.{rule.field_path}" if path else rule.field_path
        detail = rule.default_message
        if rule.message_program is not None:
            detail = _message(rule.message_program, variables) or detail
        error = _for_reason(target, typ, detail, rule.spec.get("reason"))
        if ratchet and not rule.transition:
            walk.warnings.append(str(error))
        else:
            walk.errors.append(error)


def _charge(walk: _Walk, rule: _Rule, self_value: Any, old_value: Any, where: str, typ: str) -> bool:
    """Charge one evaluation of ``rule`` to the object's runtime budget (kube's
    RuntimeCELCostBudget, 10,000,000) and hold it to the per-call limit (PerCallLimit,
    1,000,000), with kube's errors when either runs out (no further rule is evaluated then).

    The engine tracks no cost, so an evaluation is charged a bound of its cost (``_bound``). A
    rule whose static estimate is within the per-call limit is charged that estimate at first,
    and its bound only when the estimates would exhaust the budget (the common case computes
    nothing)."""
    if rule.max_cost > cost.PER_CALL_LIMIT:
        charged = _bound(rule, self_value, old_value)
        if charged > walk.remaining(charged):
            _out_of_budget(walk, where, typ)
            return False
        if charged > cost.PER_CALL_LIMIT:
            walk.errors.append(structural.invalid(
                where, typ, "'operation cancelled: actual cost limit exceeded': no further validation rules will "
                f"be run due to call cost exceeds limit for rule: {rule.text}"))
            walk.stopped = True
            return False
        walk.charged += charged
        return True
    walk.charged += rule.max_cost
    walk.pending.append((rule.max_cost, rule, self_value, old_value))
    if walk.remaining() < 0:
        _out_of_budget(walk, where, typ)
        return False
    return True


def _bound(rule: _Rule, self_value: Any, old_value: Any) -> int:
    """A bound of the cost of evaluating ``rule`` on these values: cel-go's estimate with the
    sizes of the actual values (``cost.value_sizes``: the longest string or list at each path) in
    place of the schema's bounds. Exact for rules that neither short-circuit nor see values of
    differing sizes, above kube's actual cost otherwise, so near the limits an object kube would
    admit may be refused (documented deviation)."""
    if rule.ast is None:
        return rule.max_cost
    return cost.estimate(rule.ast, rule.decl, cost.value_sizes(self_value, old_value)).max


def _out_of_budget(walk: _Walk, where: str, typ: str) -> None:
    walk.errors.append(structural.invalid(where, typ, "validation failed due to running out of cost budget, no "
                                          "further validation rules will be run"))
    walk.stopped = True


def _eval_detail(text: str, rule: _Rule) -> str:
    """The detail of a rule whose evaluation failed, as kube words it."""
    if text.startswith("no such overload"):
        return (f"'{text}': call arguments did not match a supported operator, function or macro "
                f"signature for rule: {rule.text}")
    return f"{text} evaluating rule: {rule.text}"


def _message(program: Program, variables: dict[str, Any]) -> str:
    """The evaluated messageExpression, or "" when it fails (kube logs it and uses the default)."""
    try:
        text = program.evaluate(variables)
    except EvalError:
        return ""
    if not isinstance(text, str):
        return ""
    text = text.strip()
    if not text or "\n" in text or len(text) > _MAX_MESSAGE:
        return ""
    return text


def _for_reason(path: str, typ: str, detail: str, reason: Any) -> FieldError:
    if reason == structural.ERROR_FORBIDDEN:
        return structural.forbidden(path, detail)
    if reason == structural.ERROR_REQUIRED:
        return structural.required(path, detail)
    if reason == structural.ERROR_DUPLICATE:
        return structural.duplicate(path, typ)
    return structural.invalid(path, typ, detail)
