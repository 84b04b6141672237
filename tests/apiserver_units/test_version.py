"""``apiserver.version``: the kinds that became GA after 1.32 (``GA_SINCE``, what
``--emulated-version`` leaves out) agree with the upstream definitions of every version that
kubernetes-validate ships, and the emulated version's parsing."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from samplecontroller.apiserver import builtins
from samplecontroller.apiserver.version import (
    BINARY_MINOR,
    GA_SINCE,
    EmulationVersionError,
    parse_emulated_version,
    version_info,
)


def _ga_kinds(minor: int) -> set[tuple[str, str]]:
    """(group, kind) of every GA kind with a list in kubernetes-validate's definitions of 1.<minor>."""
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("kubernetes-validate (the schemas extra) is not installed")
    path = Path(next(iter(spec.submodule_search_locations)), "kubernetes-json-schema", f"v1.{minor}.0-local",
                "_definitions.json")
    data = json.loads(path.read_text())
    gvks = {(g["group"], g["version"], g["kind"]) for name, d in (data.get("$defs") or data["definitions"]).items()
            if not name.startswith("io.k8s.apimachinery.") for g in d.get("x-kubernetes-group-version-kind") or ()}
    return {(g, k) for g, v, k in gvks if re.fullmatch(r"v\d+", v) and (g, v, k + "List") in gvks}


def test_ga_since_is_what_each_version_added() -> None:
    before = _ga_kinds(32)
    added: dict[tuple[str, str], int] = {}
    for minor in range(33, BINARY_MINOR + 1):
        now = _ga_kinds(minor)
        assert before <= now, f"1.{minor} removed {before - now}"
        added.update(dict.fromkeys(now - before, minor))
        before = now
    assert added == GA_SINCE


def test_each_emulated_version_serves_what_it_had() -> None:
    for minor in range(33, BINARY_MINOR + 1):
        served = {(r[0], r[3]) for r in builtins.builtin_resources(minor)}
        assert {k for k, since in GA_SINCE.items() if since <= minor} <= served
        assert not {k for k, since in GA_SINCE.items() if since > minor} & served


def test_parse_emulated_version() -> None:
    assert [parse_emulated_version(v) for v in (None, "", "1.33", "v1.35", "1.36.2", 34)] == [37, 37, 33, 35, 36, 34]
    for bad in ("1.32", "1.38", "2.34", "1", "x", 40):
        with pytest.raises(EmulationVersionError, match="emulated version"):
            parse_emulated_version(bad)
    assert version_info(35)["emulationMinor"] == "35" and version_info()["minor"] == "37"
