"""The CEL engine: Google's cel-cpp through ``cel-expr-python``, with the Kubernetes libraries.

Chosen by measurement (2026-11, this repository's CI machine, 2 shared cores, Python 3.11; per
expression, the mean of 50 compilations and 500 evaluations of six real rules:
``self.minReplicas <= self.maxReplicas``, ``self.rules.all(r, r.matches.size() <= 8)``,
``!has(self.x) || self.x.startsWith('a')``, ``exists_one``, ``map``+``filter``, ``matches``):

===============================  ===============  ================  ==========================
engine                           compile (us)      evaluate (us)     coverage of what kube uses
===============================  ===============  ================  ==========================
cel-expr-python 0.1.3 (cel-cpp)  13 - 69           2.3 - 7.3         all macros, type checker
                                                                     (``1 == 1u`` is a compile
                                                                     error, as in cel-go),
                                                                     optional ``?.``/``orValue``,
                                                                     strings ext, two-variable
                                                                     comprehensions, ext lists,
                                                                     error values, int64 overflow
common-expression-language 0.10  9 - 29            2.6 - 30          no ``?.`` (parse error), no
(Rust ``cel`` crate)                                                 strings ext, no checker,
                                                                     errors as KeyError etc.
cel-python 0.5.0 (pure Python)   80 - 255          89 - 1028         no ``?.``, no strings ext,
                                                                     ``1 < 1.5`` fails, 30-140x
                                                                     slower evaluation
===============================  ===============  ================  ==========================

cel-cpp is the only one that parses and type-checks every rule of the real CRDs we tried and
evaluates at the Rust engine's speed; it is Google's conformance-tested implementation, as cel-go
is. Its Python binding (0.1.x) has limits this package works around, each documented where it
is handled: functions cannot return opaque types (``Unimplemented type``), so ``quantity()``,
``url()``, ``ip()`` and ``cidr()`` values are tagged maps (``library``); timestamp and duration
values cannot be passed inside maps, so ``format: date-time``/``duration`` strings are converted
by the rules that select them (``fields.typed_source``); functions
cannot return optionals, so the format library is a source rewrite (``formats``); there is no
cost estimator and no cost tracking: the binding's ``Expression`` offers ``eval``, ``return_type``
and ``serialize`` (a ``cel.expr.CheckedExpr`` protobuf) only, so cel-go's estimator is ported over
the serialized AST (``checked``, ``cost``: kube's static limits, and a bound of each evaluation's
cost for the runtime ones); comprehensions stop after 10,000 iterations per evaluation
(``Iteration budget exceeded``: cel-cpp's default, which the binding does not expose; kube has no
such cap); ``self`` is dynamic,
so a rule's result type comes from a second compilation with the scalar fields it selects
declared as their schema types (``validator``: ``self.replicas`` is an int, not a bool); the
checker's options are not exposed (only an environment configuration: extensions, declarations,
the standard library's subset, which ``_config`` uses for two-variable comprehensions, ext lists
and cross-type numeric orderings), so mixed-type list literals (``[1, 2.0]``) compile (kube's
HomogeneousAggregateLiterals rejects them: ``checked.mixed_literals``, which the validator and
the policies apply), ``self`` is dynamic (``fields`` adds the
undeclared-field check) and the literal validators are ``fields.invalid_literals``; the
bindings extension (``cel.bind``) serves this package's rewrites, kube has none
(``uses_bindings``: its callers refuse it in users' expressions).

Contracts: ``Env.compile`` raises ``CompileError`` whose ``detail`` is cel-go's issue text
(``ERROR: <input>:1:10: Syntax error: ...`` with the caret lines); ``Program.evaluate`` returns
plain Python values or raises ``EvalError`` whose text is cel-go's (``no such key: x``,
``integer overflow``, ``division by zero``, ``no such overload``, ...). Compiled programs are
cached per environment and source.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cel_expr_python import cel as _cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from samplecontroller.apiserver.cel.fields import mask_strings
from samplecontroller.apiserver.cel.library import TYPED_LIST_IMPLS, TYPED_LISTS

__all__ = ["BOOL", "DOUBLE", "DURATION", "DYN", "INT", "STRING", "TIMESTAMP", "Activation", "CompileError", "Env", "EvalError",
           "Program", "issues_text", "uses_bindings"]

DYN = _cel.Type.DYN
BOOL = _cel.Type.BOOL
STRING = _cel.Type.STRING
INT = _cel.Type.INT
DOUBLE = _cel.Type.DOUBLE
TIMESTAMP = _cel.Type.TIMESTAMP
DURATION = _cel.Type.DURATION

_STATUS_PREFIX = re.compile(r"^[A-Z_]+: ")
_STATUS_SUFFIX = re.compile(r" \[[A-Z_]+\]$")
_CACHE_LIMIT = 4096


class CompileError(Exception):
    """A rule that does not compile; ``detail`` is the issue text as cel-go prints it."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class EvalError(Exception):
    """An evaluation that ended in a CEL error; ``str()`` is cel-go's text for it."""


def _strip_status(text: str) -> str:
    return _STATUS_SUFFIX.sub("", _STATUS_PREFIX.sub("", text.strip()))


_EVAL_ERRORS: tuple[tuple[re.Pattern[str], str], ...] = (
    # cel-cpp's ext lists name the function where cel-go does not
    (re.compile(r"^sort\(\): unsupported type \w+$"), "list elements must be comparable"),
    (re.compile(r"^(?:flatten|sort)\(\): (.*)$"), r"\1"),
    (re.compile(r'^Key not found in map : "?(.*?)"?$'), r"no such key: \1"),
    (re.compile(r"^Index error: index=(-?\d+) size=\d+$"), r"index out of bounds: \1"),
    (re.compile(r"^No matching overloads found : (.*)$"), r"no such overload: \1"),
    (re.compile(r"^divide by zero$"), "division by zero"),
    (re.compile(r"^modulus by zero$"), "modulus by zero"),
    (re.compile(r"^No such field$"), "no such field"),
)


def eval_error_text(raw: str) -> str:
    """cel-go's wording of a cel-cpp error status (``NOT_FOUND: Key not found in map : "x"``
    -> ``no such key: x``); unknown errors lose only their status code."""
    text = _strip_status(raw)
    for pattern, replacement in _EVAL_ERRORS:
        if pattern.match(text):
            return pattern.sub(replacement, text)
    return text


_ISSUE = re.compile(r"^ERROR: <input>:(\d+):(\d+): ", re.MULTILINE)
_NO_OVERLOAD = re.compile(r"^(ERROR: <input>:\d+:(\d+): found no matching overload for '([^']+)' applied to )"
                          r"'\((.*)\)'$")


def _split_types(text: str) -> list[str]:
    """``list(int), map(string, int)`` -> the two type names (commas inside parentheses kept)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    return [*parts, text[start:].strip()] if text.strip() else parts


def _member_signature(block: list[str]) -> list[str]:
    """cel-go's signature of a member call without a matching overload (``'string.(int)'``,
    the target's type before the dot: checker/format.go) where cel-cpp lists the target first
    among the arguments (``'(string, int)'``); the snippet line shows whether it was one."""
    found = _NO_OVERLOAD.match(block[0])
    if found is None or len(block) < 2 or "." in found.group(3):
        return block
    before = block[1][3:][:int(found.group(2)) - 1].rstrip()
    if not before.endswith(found.group(3)) or not before[:-len(found.group(3))].rstrip().endswith("."):
        return block
    types = _split_types(found.group(4))
    if not types:
        return block
    return [f"{found.group(1)}'{types[0]}.({', '.join(types[1:])})'", *block[1:]]


def issues_text(text: str) -> str:
    """cel-cpp's compile issues as cel-go prints them (common/errors.go ToDisplayString): each
    ``ERROR: <input>:L:C: ...`` with its snippet lines, ordered by line and column (cel-cpp
    keeps the checker's order), member calls' overload signatures in cel-go's form."""
    starts = [m.start() for m in _ISSUE.finditer(text)]
    if not starts or starts[0] != 0:
        return text
    blocks = [text[a:b].rstrip("\n").split("\n") for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]

    def position(block: list[str]) -> tuple[int, int]:
        found = _ISSUE.match(block[0])
        return (int(found.group(1)), int(found.group(2))) if found else (0, 0)

    blocks.sort(key=position)
    return "\n".join("\n".join(_member_signature(b)) for b in blocks)


_CEL_BIND = re.compile(r"\bcel\s*\.\s*bind\s*\(")


def uses_bindings(source: str) -> bool:
    """Whether ``source`` calls ``cel.bind`` (outside string literals): cel-go's ext.Bindings,
    which kube's CEL environments do not have (this package's rewrites use it)."""
    return _CEL_BIND.search(mask_strings(source)) is not None


class Activation:
    """Variables converted once for the engine (``Env.activation``): evaluating several programs
    of one environment with it skips converting them again for each (3x faster per program)."""

    __slots__ = ("bound",)

    def __init__(self, bound: Any) -> None:
        self.bound = bound


class Program:
    """One compiled expression. ``result_type`` is the checked type's name (``BOOL``, ``STRING``,
    ``DYN``, ...)."""

    __slots__ = ("_expr", "result_type", "source")

    def __init__(self, source: str, expr: Any, result_type: str) -> None:
        self.source = source
        self._expr = expr
        self.result_type = result_type

    def serialized(self) -> bytes:
        """The checked AST as the engine serializes it (a ``google.protobuf.Any`` holding a
        ``cel.expr.CheckedExpr``; ``checked.parse`` reads it)."""
        data: bytes = self._expr.serialize()
        return data

    def evaluate(self, variables: Mapping[str, Any] | Activation) -> Any:
        """Evaluate with ``variables`` (JSON-like values, or an ``Activation`` of the program's
        environment, which several programs can share); raises ``EvalError``."""
        try:
            if isinstance(variables, Activation):
                value = self._expr.eval(variables.bound)
            else:
                value = self._expr.eval(data=dict(variables))
        except RuntimeError as err:  # a value the binding cannot convert
            raise EvalError(eval_error_text(str(err))) from None
        if value.type().name() == "ERROR":
            raise EvalError(eval_error_text(str(value.value())))
        try:
            return value.plain_value()
        except TypeError:  # an optional or type value: no Python form
            raise EvalError(f"no Python value for a result of type {value.type().name()}") from None


_LISTS_RANGE = re.compile(r"\blists(\s*\.\s*)range(\s*)\(")


def _lists_range(text: str) -> str:
    """``text`` with each ``lists.range(`` outside string literals as ``__listRange(`` of the
    same length (error columns stay)."""
    out, pos = [], 0
    for found in _LISTS_RANGE.finditer(mask_strings(text)):
        out += [text[pos:found.start()], "__listRange" + " " * (len(found.group(1)) + len(found.group(2)) - 1) + "("]
        pos = found.end()
    return "".join(out) + text[pos:]


_ORDERED = {"int": "int64", "uint": "uint64", "double": "double", "string": "string", "bytes": "bytes",
            "bool": "bool", "google.protobuf.Timestamp": "timestamp", "google.protobuf.Duration": "duration"}
_ORDERINGS = {"_<_": "less", "_<=_": "less_equals", "_>_": "greater", "_>=_": "greater_equals"}


def _orderings() -> str:
    """The ordering operators' declarations with cel-go's ``cel.CrossTypeNumericComparisons(true)``
    (kube's base environment since 1.28): each comparable type with itself, and int, uint and
    double with one another (``1 < 1.5``), cel-go's overload ids; cel-cpp's standard library
    declares only the former (its runtime already compares across numeric types)."""
    numeric = ("int", "uint", "double")
    pairs = [(t, t) for t in _ORDERED] + [(a, b) for a in numeric for b in numeric if a != b]
    lines = ["stdlib:", "  exclude_functions:", *(f'    - name: "{op}"' for op in _ORDERINGS), "functions:"]
    for op, word in _ORDERINGS.items():
        lines += [f'  - name: "{op}"', "    overloads:"]
        for a, b in pairs:
            oid = f"{word}_{_ORDERED[a]}" if a == b else f"{word}_{_ORDERED[a]}_{_ORDERED[b]}"
            lines += [f'      - id: "{oid}"', "        args:", f'          - type_name: "{a}"',
                      f'          - type_name: "{b}"', "        return:", '          type_name: "bool"']
    return "\n".join(lines) + "\n"


def _config(ext_lists: bool) -> Any:
    """What the binding offers only through an environment configuration: cel-go's
    ``ext.TwoVarComprehensions()`` (kube's base environment since 1.32), the cross-type numeric
    orderings (``_orderings``) and, with ``ext_lists``, cel-cpp's ``ext.Lists`` (its version 2
    is cel-go's v2/v3 set: ``slice``, ``flatten``, ``sort``, the ``sortBy`` macro,
    ``lists.range``, ``reverse``, ``distinct``)."""
    text = "extensions:\n  - name: two-var-comprehensions\n"
    if ext_lists:
        text += "  - name: lists\n    version: 2\n"
    return _cel.NewEnvConfigFromYaml(text + _ORDERINGS_CONFIG + TYPED_LISTS)


_ORDERINGS_CONFIG = _orderings()


class Env:
    """A CEL environment: declared variables (name -> type), ``functions`` (the Kubernetes
    libraries), kube's extensions (strings v2, optional types, two-variable comprehensions, ext
    lists with ``ext_lists``) and the bindings one (``cel.bind``, which this package's rewrites
    use); ``rewrite`` turns a source into what is compiled (the format library's expansion).
    With ``ext_lists``, ``lists.range`` is the library's (``__listRange``: cel-cpp's fails on a
    negative size and allocates any size). Thread-safe; programs cached."""

    def __init__(self, variables: Mapping[str, Any], functions: Sequence[Any] = (),
                 rewrite: Callable[[str], str] | None = None, *, ext_lists: bool = True,
                 bindings: bool = True) -> None:
        self._rewrite = rewrite
        self._ext_lists = ext_lists
        # the libraries as an extension after the strings one: their overloads then merge with
        # functions it declares (the lists library's indexOf on a list, string(ip), ...)
        extensions = [ext_strings.ExtStrings(2), ext_optional.ExtOptional()]
        if bindings:
            extensions.append(ext_bindings.ExtBindings())
        self._env = _cel.NewEnv(
            config=_config(ext_lists), variables=dict(variables), function_impls=TYPED_LIST_IMPLS,
            extensions=[*extensions, _cel.CelExtension("kubernetes", list(functions))])
        self._cache: dict[str, Program | CompileError] = {}
        self._lock = threading.Lock()

    def activation(self, variables: Mapping[str, Any]) -> Activation:
        """``variables`` converted for this environment's programs; raises ``EvalError`` for a
        value the engine cannot represent (an integer beyond 64 bits)."""
        try:
            return Activation(self._env.Activation(data=dict(variables)))
        except RuntimeError as err:
            raise EvalError(eval_error_text(str(err))) from None

    def succeeds(self, source: str) -> bool:
        """True when ``source`` (an expression without variables) compiles and evaluates."""
        try:
            self.compile(source).evaluate({})
        except (CompileError, EvalError):
            return False
        return True

    def compile(self, source: str) -> Program:
        """The program of ``source`` (cached); raises ``CompileError``."""
        with self._lock:
            found = self._cache.get(source)
        if found is None:
            found = self._compile(source)
            with self._lock:
                if len(self._cache) >= _CACHE_LIMIT:
                    self._cache.clear()
                self._cache[source] = found
        if isinstance(found, CompileError):
            raise found
        return found

    def _compile(self, source: str) -> Program | CompileError:
        try:
            text = self._rewrite(source) if self._rewrite else source
            if self._ext_lists:
                text = _lists_range(text)
            expr = self._env.compile(text)
        except CompileError as err:  # refused by the rewrite (something the engine lacks, named)
            return err
        except RuntimeError as err:
            return CompileError(issues_text(_strip_status(str(err))))
        return Program(source, expr, expr.return_type().name())
