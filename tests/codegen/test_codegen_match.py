"""Built-in types matched whichever Kubernetes 1.30-1.37 a CRD was generated from (never wrongly),
``--explain``, and the current kubebuilder CronJob (controller-gen v0.21, Kubernetes 1.34 types).

The schemas of each version come from the pinned kubernetes-validate package's OpenAPI definitions
(test data only: matching at run time reads the library's vendored ones)."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec
import pytest

from samplecontroller.apimachinery.openapi_schemas import SCHEMA_VERSION
from samplecontroller.codegen import builtin_types, generator
from samplecontroller.codegen.builtin_types import BuiltinIndex, default_index
from samplecontroller.codegen.models import IMPORTED, IMPORTED_NAME, is_imported
from tests.codegen import crd_from_openapi

TESTDATA = Path(__file__).resolve().parent / "testdata" / "kubebuilder-cronjob"
VERSIONS = [f"v1.{minor}.0" for minor in range(30, 38)]
# The built-ins' Kubernetes minor version (samplecontroller.kubernetes is generated from these definitions).
BUILTINS_MINOR = int(SCHEMA_VERSION.split(".")[1])


def _schemas_dir() -> Path:
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or spec.origin is None:
        if os.environ.get("CI") == "true":
            pytest.fail("kubernetes-validate (a dev dependency) is not installed")
        pytest.skip("kubernetes-validate (a dev dependency) is not installed")
    return Path(spec.origin).parent / "kubernetes-json-schema"


_DEFS: dict[str, dict[str, Any]] = {}


def definitions_of(version: str) -> dict[str, Any]:
    """The upstream definitions of a Kubernetes version (``v1.34.0``), from kubernetes-validate."""
    if version not in _DEFS:
        raw = (_schemas_dir() / f"{version}-local" / "_definitions.json").read_bytes()
        _DEFS[version] = msgspec.json.decode(raw)["$defs"]
    return _DEFS[version]


def schema_in(defs: Mapping[str, Any], definition: str) -> dict[str, Any]:
    """controller-gen's schema of ``definition`` as that version's Go types have it (with descriptions)."""
    return crd_from_openapi.schema_of(definition, defs=defs)


def field_paths(defs: Mapping[str, Any], node: Any, prefix: str = "", seen: frozenset[str] = frozenset()) -> set[str]:
    """Every property path under a definition (what a schema of it can hold), ``[]`` for items and map values."""
    ref = node.get("$ref") if isinstance(node, dict) else None
    if isinstance(ref, str):
        name = ref.removeprefix("#/$defs/")
        if name in seen or name in crd_from_openapi.SPECIAL:
            return set()
        return field_paths(defs, defs[name], prefix, seen | {name})
    out: set[str] = set()
    if not isinstance(node, dict):
        return out
    for prop, sub in (node.get("properties") or {}).items():
        out.add(f"{prefix}.{prop}")
        out |= field_paths(defs, sub, f"{prefix}.{prop}", seen)
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            out |= field_paths(defs, node[key], prefix + "[]", seen)
    return out


# Types a CRD embeds (and ConfigMapEnvSource, whose doc comment gained a sentence in 1.37: matched by
# its first one, as two fields are too few to match it without).
TYPES = ["batch.v1.JobTemplateSpec", "core.v1.PodTemplateSpec", "core.v1.Container", "core.v1.Volume",
         "core.v1.EnvVar", "core.v1.ObjectReference", "core.v1.ResourceRequirements", "core.v1.Affinity",
         "apps.v1.DeploymentSpec", "core.v1.PersistentVolumeClaimSpec", "core.v1.ConfigMapEnvSource",
         "core.v1.Toleration", "core.v1.SecurityContext"]


@pytest.fixture(scope="module")
def index_137() -> BuiltinIndex:
    """The index matching would have with built-ins generated from 1.37."""
    return BuiltinIndex(definitions_of("v1.37.0"))


@pytest.mark.parametrize("version", VERSIONS)
def test_every_version_matches_built_ins_that_hold_it_and_no_other(version: str, index_137: BuiltinIndex) -> None:
    """A schema written from any of 1.30-1.37 is the built-in type exactly when the built-in holds every
    field it has: today's built-ins (``SCHEMA_VERSION``) and 1.37 ones; a newer schema with a field
    the built-ins lack stays generated (never a wrong match, never another type)."""
    defs = definitions_of(version)
    for index in (default_index(), index_137):
        for short in TYPES:
            pkg, ver, name = short.split(".")
            definition = f"io.k8s.api.{pkg}.{ver}.{name}"
            schema = schema_in(defs, definition)
            holds = field_paths(defs, defs[definition]) <= field_paths(index.defs, index.defs[definition])
            found = index.match(schema, name[0].lower() + name[1:], "")
            assert found == (definition if holds else None), (version, short, holds, found)


def test_a_newer_job_template_than_the_built_ins_is_generated_and_explained(capsys: pytest.CaptureFixture[str],
                                                                            tmp_path: Path) -> None:
    """The current kubebuilder CronJob (1.34 types) with ``--explain``: what matched, and with
    built-ins older than 1.34 why jobTemplate is not batch/v1.JobTemplateSpec (a field they lack)."""
    code = generator.main(["--crds", str(TESTDATA / "cronjob"), "--output", str(tmp_path / "out"),
                           "--package", "explained", "--explain", "--verify"])
    out = capsys.readouterr().out
    assert code == 1  # --verify of an empty directory: stale (nothing written, the explanation printed)
    assert f"built-in types: samplecontroller.kubernetes (Kubernetes {SCHEMA_VERSION.split('-')[0]})" in out
    lines = {line.split(" ", 1)[1].split(": ", 1)[0]: line.split(": ", 1)[1] for line in out.splitlines()[1:]}
    assert lines["CronJob.status.active[]"] == "core/v1.ObjectReference (matched)"
    if BUILTINS_MINOR >= 34:
        assert lines["CronJob.spec.jobTemplate"] == "batch/v1.JobTemplateSpec (matched)"
    else:
        assert lines["CronJob.spec.jobTemplate"].startswith("generated: not batch/v1.JobTemplateSpec: spec.template.")
        assert lines["CronJob.spec.jobTemplate"].endswith(" is not a field of the built-in type")
        assert lines["CronJob.spec.jobTemplate.spec.template.spec.tolerations[]"] == "core/v1.Toleration (matched)"


@pytest.fixture
def with_index(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    def use(index: BuiltinIndex) -> None:
        monkeypatch.setattr(generator, "default_index", lambda: index)
        monkeypatch.setattr(builtin_types, "default_index", lambda: index)

    yield use


def own_classes(crds: Path) -> dict[str, dict[str, Any]]:
    """The normalized definitions of each version of the one CRD in ``crds``."""
    return {kind.version: defs for _, _, kind, defs in generator.collect_crds(crds, root="cron")}


def job_template(defs: Mapping[str, Any]) -> Any:
    ref = defs["CronJobSpec"]["properties"]["jobTemplate"]["$ref"].removeprefix("#/$defs/")
    return defs[ref]


def test_the_kubebuilder_cronjob_with_137_built_ins(with_index: Any, index_137: BuiltinIndex) -> None:
    """The issue's acceptance, on the matching: built-ins of 1.37 hold the v0.21 CronJob's JobTemplateSpec,
    so both versions of the multiversion tutorial's CronJob refer to batch/v1.JobTemplateSpec and the
    whole CRD is a handful of classes (it was 75)."""
    with_index(index_137)
    versions = own_classes(TESTDATA / "multiversion")
    for defs in versions.values():
        target = job_template(defs)
        assert (target[IMPORTED], target[IMPORTED_NAME]) == ("samplecontroller.kubernetes.apis.batch.v1",
                                                              "JobTemplateSpec")
    classes = [n for defs in versions.values() for n, d in defs.items() if not is_imported(d)]
    assert len(classes) <= 20, classes
    single = own_classes(TESTDATA / "cronjob")["v1"]
    assert len([n for n, d in single.items() if not is_imported(d)]) == 4  # CronJob(List), CronJobSpec, CronJobStatus


def test_the_kubebuilder_cronjob_versions_share_their_job_template() -> None:
    """With the built-ins of today: a JobTemplateSpec they hold is theirs, else it is generated once,
    in v2, and v1 imports it under its own name, so ``dst.spec.job_template = src.spec.job_template``
    type-checks either way."""
    versions = own_classes(TESTDATA / "multiversion")
    v1, v2 = job_template(versions["v1"]), job_template(versions["v2"])
    if BUILTINS_MINOR >= 34:
        assert v1 == v2 and v1[IMPORTED_NAME] == "JobTemplateSpec"
    else:
        assert v1[IMPORTED] == "cron.apis.batch.v2" and v1[IMPORTED_NAME] == "CronJobSpecJobTemplate"
        assert not is_imported(v2)
        shared = [n for n, d in versions["v1"].items() if is_imported(d) and d[IMPORTED] == "cron.apis.batch.v2"]
        assert len(shared) > 30  # every class under jobTemplate: none generated twice
    own = [n for defs in versions.values() for n, d in defs.items() if not is_imported(d)]
    assert len(own) <= (20 if BUILTINS_MINOR >= 34 else 45), len(own)


@pytest.mark.skipif(BUILTINS_MINOR < 34, reason=f"the built-ins are Kubernetes {SCHEMA_VERSION}: the v0.21 "
                    "CronJob's JobTemplateSpec (1.34 types) has fields they lack; switch on with built-ins >= 1.34")
def test_the_kubebuilder_cronjob_generates_at_most_20_classes(tmp_path: Path) -> None:
    """The issue's acceptance, end to end: the multiversion CronJob generated and imported, jobTemplate
    the library's JobTemplateSpec in both versions, at most 20 classes."""
    import re
    import sys

    from samplecontroller.kubernetes.apis.batch.v1 import JobTemplateSpec

    assert generator.main(["--crds", str(TESTDATA / "multiversion"), "--output", str(tmp_path / "kbcron"),
                           "--package", "kbcron"]) == 0
    sources = [(tmp_path / "kbcron" / "apis" / "batch" / v / "__init__.py").read_text() for v in ("v1", "v2")]
    assert sum(len(re.findall(r"^class \w+\(Struct\b", s, re.MULTILINE)) for s in sources) <= 20
    sys.path.insert(0, str(tmp_path))
    try:
        import typing

        for v in ("v1", "v2"):
            module = importlib.import_module(f"kbcron.apis.batch.{v}")
            hint = typing.get_type_hints(module.CronJobSpec)["job_template"]
            assert hint is JobTemplateSpec or JobTemplateSpec in typing.get_args(hint)
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n.startswith("kbcron")]:
            del sys.modules[name]
