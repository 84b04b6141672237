"""The ValidatingAdmissionPolicy strategy: generation tracking and the CEL expressions checked on
write (pkg/apis/admissionregistration/validation): an expression that does not compile rejects
the policy with ``spec.validations[0].expression: Invalid value: "<expression>": compilation
failed: ...``."""

from __future__ import annotations

from typing import Any

from samplecontroller.apiserver import admission_policy, schema
from samplecontroller.apiserver.schema import FieldError
from samplecontroller.apiserver.strategies.base import Obj, Strategy

__all__ = ["PolicyStrategy"]

# (list field, expression field, required type, type error detail)
_EXPRESSIONS = (
    ("validations", "expression", "BOOL", "must evaluate to bool"),
    ("validations", "messageExpression", "STRING", "must evaluate to string"),
    ("matchConditions", "expression", "BOOL", "must evaluate to bool"),
    ("variables", "expression", "", ""),
    ("auditAnnotations", "valueExpression", "STRING", "must evaluate to one of [string null_type]"),
)


class PolicyStrategy(Strategy):
    tracks_generation = True

    def validate_extra(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        spec = obj.get("spec")
        return _expression_errors(spec) if isinstance(spec, dict) else []


def _expression_errors(spec: dict[str, Any]) -> list[FieldError]:
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
            detail = admission_policy.compile_error(expression, wanted, type_detail)
            if detail:
                errors.append(schema.invalid(where, expression, detail))
    return errors
