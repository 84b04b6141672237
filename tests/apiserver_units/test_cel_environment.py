"""kube-apiserver 1.37's CEL base environment (k8s.io/apiserver v0.37.0-beta.0,
pkg/cel/environment/base.go) at each compatibility version 1.32 .. 1.36 (the emulated version
minus one): the libraries and language options it adds by version, checked against what this
server compiles, evaluates and estimates."""

from __future__ import annotations

from typing import Any

import pytest

from samplecontroller.apiserver import admission_policy, cel
from samplecontroller.apiserver.cel import cost, engine, formats
from samplecontroller.apiserver.cel.library import FUNCTIONS
from samplecontroller.apiserver.strategies.crd import CRDStrategy

ENV = cel.Env({"self": engine.DYN}, FUNCTIONS + formats.FUNCTIONS, formats.rewrite)
LIST = {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 5}}


def ev(source: str, self: Any = None) -> Any:
    return ENV.compile(source).evaluate({"self": self})


def _crd(rule: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"v": {"type": "string", "x-kubernetes-validations": [{"rule": rule}]}}}
    return {"spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": schema}}]}}


def _first_lines(errors: list[Any]) -> list[str]:
    return [e.detail.splitlines()[0] for e in errors]


# ------------------------------------------- kube's lists library v1: includes (1.37)


@pytest.mark.parametrize(("source", "expected"), [
    ("[1, 2, 3].includes(2)", True),
    ("[1, 2, 3].includes(4)", False),
    ("'model-a'.includes('model-a') && !'model-a'.includes('model-b')", True),
    ("[1, 2].includes(2.0) && ![true].includes(1)", True),  # CEL equality: numbers across types
    ("self.includes('b') && !self.includes('z')", True),
    ("[].includes(1)", False),
])
def test_includes_results(source: str, expected: bool) -> None:
    """lists.go ``includes``: an element of the target list equal to the argument, or a target
    that is not a list equal to it."""
    assert ev(source, ["a", "b"]) is expected


def test_includes_cost() -> None:
    """library/cost.go: like indexOf, the list's size times one comparison (plus the string
    traversal of a string element); a dyn target, its size times one."""
    decl = cost.decl_type(LIST, False)
    estimate = cost.estimate(ENV.compile("self.includes('a')").serialized(), decl)
    # 1 (self) + 10 items x (1 + 20 bytes of a 5-character string x 0.1)
    assert (estimate.min, estimate.max) == (1, 31)
    index_of = cost.estimate(ENV.compile("self.indexOf('a') >= 0").serialized(), decl)
    assert (estimate.min + 1, estimate.max + 1) == (index_of.min, index_of.max)
    # a string target (dyn in kube's declaration): one per character, where indexOf has 0.1
    text = cost.decl_type({"type": "string", "maxLength": 100}, False)
    assert cost.estimate(ENV.compile("self.includes('a')").serialized(), text).max == 1 + 400
    assert cost.estimate(ENV.compile("self.indexOf('a') >= 0").serialized(), text).max == 1 + 40 + 1


def test_includes_needs_compatibility_1_37() -> None:
    """base.go adds ``library.Lists(library.ListsVersion(1))`` at 1.37: kube-apiserver 1.37
    compiles new expressions for 1.36, so a new rule using includes is refused (a stored one,
    unchanged in an update, still compiles), as in the policies' expressions."""
    strategy = CRDStrategy()
    rule = "['a', 'b'].includes(self)"
    assert _first_lines(strategy.validate_compatibility(_crd(rule), None, 37)) == [
        "compilation failed: ERROR: <input>:1:20: undeclared reference to 'includes' (in container '')"]
    assert strategy.validate_compatibility(_crd(rule), _crd(rule), 37) == []
    assert admission_policy.compatibility_error("[1].includes(1)", 36).splitlines()[0] == (
        "compilation failed: ERROR: <input>:1:13: undeclared reference to 'includes' (in container '')")
    assert admission_policy.compatibility_error("[1].includes(1)", 37) == ""
