"""Generated names are public API: the generator's table of renamed generated names.

When a change of the generator renames or retypes a generated public name (a model class), the
old name keeps working for at least one minor release (docs/reference/compatibility.md): the
generated models module defines it as a deprecated alias of the new one, typed for mypy (under
``TYPE_CHECKING``) and warning at run time (a module ``__getattr__`` through
``samplecontroller.apimachinery.deprecation.alias``).

How a generator change uses it: add a ``Rename`` to ``RENAMES`` under a rule name, and where the
change picks the new name, record the old one on the ``models.Normalizer``
(``norm.renamed[old] = (new, rule)``); the generator writes the aliases of every rule whose
``until`` is after the running version. Remove the rule (and its recording) in ``until``.

What a release generated is part of the table's input: ``definitions-0.1.0.json.xz`` holds the
built-in definitions samplecontroller 0.1.0 matched schemas against (Kubernetes 1.32, byte for
byte the file that release vendored), and ``released_index()`` indexes them. A schema object that
matches a built-in type now but matched none in 0.1.0 (a CRD made from newer Kubernetes types: a
Container with ``restartPolicyRules``) was a class in 0.1.0, and so was every object under it that
matched nothing then: each of those names is aliased to the built-in type now at its place.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import lzma
import re
from collections.abc import Mapping
from dataclasses import dataclass

from samplecontroller.codegen.builtin_types import BuiltinIndex, whole_text

__all__ = ["BUILTIN_MATCH", "RENAMES", "Rename", "alias_block", "live", "live_aliases", "release",
           "released_index"]


@dataclass(frozen=True)
class Rename:
    """One kind of rename: ``rule`` (what the generator changed), the release that made it
    (``since``), the first release without the alias (``until``), and what changed, in words."""

    rule: str
    since: str
    until: str
    what: str


BUILTIN_MATCH = "builtin-match"
"""An object schema matching a built-in type is that type, no generated class (builds before 0.1.0
generated one: ``CronJobStatusActiveItem`` for the kubebuilder CronJob's ``status.active``)."""

RENAMES: dict[str, Rename] = {
    BUILTIN_MATCH: Rename(BUILTIN_MATCH, "0.1.0", "0.3.0", "a schema object matching a built-in type is that type "
                          "(CronJobStatusActiveItem is ObjectReference)"),
}
"""The renames whose old names are still aliased, by rule."""


def release(version: str) -> tuple[int, ...]:
    """``"0.2.0"`` -> ``(0, 2, 0)`` (the leading digits of each of the first three parts)."""
    parts = []
    for part in version.split(".")[:3]:
        digits = re.match(r"[0-9]*", part)
        parts.append(int(digits.group() or 0) if digits else 0)
    return tuple(parts)


def live(rule: str, version: str) -> bool:
    """Whether ``rule``'s aliases are still generated at the toolkit ``version``."""
    rename = RENAMES.get(rule)
    return rename is not None and release(version) < release(rename.until)


def live_aliases(renamed: Mapping[str, tuple[str, str]], defined: set[str],
                 version: str) -> dict[str, tuple[str, Rename]]:
    """The aliases ``alias_block`` writes: old -> (new, its rule), for each live rule whose ``old`` the
    module does not define itself and whose ``new`` it defines or imports (``defined``)."""
    return {old: (new, RENAMES[rule]) for old, (new, rule) in sorted(renamed.items())
            if live(rule, version) and old not in defined and new in defined}


def alias_block(renamed: Mapping[str, tuple[str, str]], defined: set[str], version: str) -> str:
    """The source appended to a models module: a deprecated alias per ``old -> (new, rule)`` of a live
    rule whose ``old`` the module does not define itself and whose ``new`` it does (``defined``);
    "" when there is none."""
    aliases = live_aliases(renamed, defined, version)
    if not aliases:
        return ""
    typed = "".join(f"    {old}: TypeAlias = {new}\n" for old, (new, _) in aliases.items())
    table = "".join(f"    {json.dumps(old)}: ({json.dumps(new)}, {json.dumps(r.until)}),\n" for old, (new, r) in aliases.items())
    return ("\n\n# Deprecated generated names (samplecontroller.codegen.compat): each works, warning, until the release"
            "\n# named; import the new one.\nif TYPE_CHECKING:\n" + typed + "\n_DEPRECATED: dict[str, tuple[str, str]] = {\n"
            + table + "}\n\n\ndef __getattr__(name: str) -> Any:\n"
            "    return deprecation.alias(__name__, globals(), _DEPRECATED, name)\n")


RELEASED_DEFINITIONS = "definitions-0.1.0.json.xz"
"""The built-in definitions samplecontroller 0.1.0 matched against (its vendored Kubernetes 1.32 file)."""


@functools.lru_cache(maxsize=1)
def released_index() -> BuiltinIndex:
    """The built-in types 0.1.0 matched schema objects to, indexed as it did (comparing whole
    descriptions; built once per process, only when a schema object matches a built-in type)."""
    data = (importlib.resources.files(__package__ or "samplecontroller.codegen") / RELEASED_DEFINITIONS).read_bytes()
    defs = json.loads(lzma.decompress(data)).get("$defs") or {}
    return BuiltinIndex(defs, doc=whole_text)
