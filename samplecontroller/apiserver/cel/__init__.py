"""CEL in the embedded API server: the engine (``engine``, cel-cpp through cel-expr-python,
chosen by measurement: see its docstring), the Kubernetes libraries (``library``), custom
resource values as CEL sees them (``values``) and the ``x-kubernetes-validations`` validator
(``validator``), which ValidatingAdmissionPolicy (``admission_policy``) shares, and the cost
estimator of kube's CEL limits (``cost``, over the checked AST of ``checked``)."""

from __future__ import annotations

from samplecontroller.apiserver.cel.engine import CompileError, Env, EvalError, Program
from samplecontroller.apiserver.cel.validator import (
    blocking_error,
    expressions,
    has_rules,
    schema_errors,
    validate,
)

__all__ = ["CompileError", "Env", "EvalError", "Program", "blocking_error", "expressions", "has_rules",
           "schema_errors", "validate"]
