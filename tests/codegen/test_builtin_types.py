"""Built-in types inside CRDs are the library's models (samplecontroller.kubernetes), never copies,
and never a wrong match (codegen.builtin_types)."""

from __future__ import annotations

import ast
import copy
import importlib
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest
import yaml

from samplecontroller.apimachinery import objects
from samplecontroller.codegen import generator
from samplecontroller.kubernetes.apis.batch.v1 import JobSpec, JobTemplateSpec
from samplecontroller.kubernetes.apis.core.v1 import Container, ObjectReference
from tests.codegen.crd_from_openapi import crd, schema_of

STRUCT = re.compile(r"^class (\w+)\(Struct\b", re.MULTILINE)
CORE = "io.k8s.api.core.v1."


def generate(tmp_path: Path, *docs: dict[str, Any], args: tuple[str, ...] = ()) -> tuple[int, Path, str]:
    """Run the generator over ``docs`` into a package ``pkg_<n>`` under tmp_path: (exit code, models file, stderr)."""
    crds = tmp_path / "crds"
    crds.mkdir(exist_ok=True)
    (crds / "crds.yaml").write_text(yaml.safe_dump_all(docs))
    package = f"bt_{tmp_path.name.replace('-', '_')}"
    out = tmp_path / package
    code = generator.main(["--crds", str(crds), "--output", str(out), "--package", package, *args])
    group = docs[0]["spec"]["group"].split(".")[0]
    return code, out / "apis" / group / "v1" / "__init__.py", ""


def load(models: Path) -> ModuleType:
    root = models.parents[3]
    sys.path.insert(0, str(root.parent))
    try:
        importlib.invalidate_caches()
        return importlib.import_module(f"{root.name}.apis.{models.parent.parent.name}.v1")
    finally:
        sys.path.remove(str(root.parent))


def cronjob_crd(descriptions: bool = False) -> dict[str, Any]:
    """The kubebuilder tutorial's CronJob as controller-gen writes it (its Go types, Kubernetes 1.32)."""
    return crd("CronJob", {
        "schedule": {"type": "string"},
        "startingDeadlineSeconds": {"type": "integer", "format": "int64"},
        "concurrencyPolicy": {"type": "string", "enum": ["Allow", "Forbid", "Replace"]},
        "suspend": {"type": "boolean"},
        "jobTemplate": schema_of("io.k8s.api.batch.v1.JobTemplateSpec", descriptions),
        "successfulJobsHistoryLimit": {"type": "integer", "format": "int32"},
        "failedJobsHistoryLimit": {"type": "integer", "format": "int32"},
    }, {
        "active": {"type": "array", "items": schema_of(CORE + "ObjectReference", descriptions)},
        "lastScheduleTime": {"type": "string", "format": "date-time"},
    })


def test_a_crd_embedding_a_job_template_is_a_handful_of_classes(tmp_path: Path) -> None:
    code, models, _ = generate(tmp_path, cronjob_crd())
    assert code == 0
    source = models.read_text()
    assert STRUCT.findall(source) == ["CronJobSpec", "CronJobStatus", "CronJob", "CronJobList"]
    imported = {(node.module, alias.name) for node in ast.walk(ast.parse(source))
                if isinstance(node, ast.ImportFrom) for alias in node.names}
    # (the 0.1.0 names of the classes under jobTemplate are aliases of JobSpec, PodSpec...: more imports)
    assert ("samplecontroller.kubernetes.apis.batch.v1", "JobTemplateSpec") in imported
    assert ("samplecontroller.kubernetes.apis.core.v1", "ObjectReference") in imported
    module = load(models)
    job = {"apiVersion": "batch.tutorial.example.com/v1", "kind": "CronJob", "metadata": {"name": "c"},
           "spec": {"schedule": "*/1 * * * *", "jobTemplate": {"metadata": {"labels": {"a": "b"}}, "spec": {
               "backoffLimit": 2, "template": {"spec": {"restartPolicy": "OnFailure", "containers": [
                   {"name": "hello", "image": "busybox", "args": ["date"],
                    "resources": {"limits": {"cpu": "100m", "memory": 1e9}}}]}}}}},
           "status": {"active": [{"kind": "Job", "name": "c-1", "namespace": "default", "uid": "u"}]}}
    obj = msgspec.json.decode(msgspec.json.encode(job), type=module.CronJob)
    assert isinstance(obj.spec.job_template, JobTemplateSpec)
    assert isinstance(obj.spec.job_template.spec, JobSpec)  # no objects.from_dict(JobSpec, ...) needed
    assert isinstance(obj.spec.job_template.spec.template.spec.containers[0], Container)  # type: ignore[union-attr,index]
    assert isinstance(obj.status.active[0], ObjectReference)
    assert objects.to_dict(obj) == job


def test_with_descriptions_too(tmp_path: Path) -> None:
    code, models, _ = generate(tmp_path, cronjob_crd(descriptions=True))
    assert code == 0
    assert len(STRUCT.findall(models.read_text())) == 4


# The types the issue names, each embedded alone in a CRD's spec: a reference to exactly that type.
NAMED = ["core.v1.PodTemplateSpec", "batch.v1.JobTemplateSpec", "core.v1.Container", "core.v1.Volume",
         "core.v1.EnvVar", "core.v1.ResourceRequirements", "core.v1.Affinity", "core.v1.Toleration",
         "core.v1.ObjectReference", "core.v1.LocalObjectReference", "meta.v1.LabelSelector", "meta.v1.Condition",
         "core.v1.PodSpec", "apps.v1.DeploymentSpec", "core.v1.ServicePort", "core.v1.SecurityContext",
         "core.v1.Probe", "core.v1.TopologySpreadConstraint", "core.v1.SecretKeySelector",
         "core.v1.ConfigMapKeySelector"]


def _definition(short: str) -> str:
    pkg, version, name = short.split(".")
    return f"io.k8s.apimachinery.pkg.apis.meta.v1.{name}" if pkg == "meta" else f"io.k8s.api.{pkg}.{version}.{name}"


@pytest.mark.parametrize("descriptions", [True, False], ids=["descriptions", "maxDescLen=0"])
def test_each_named_type_maps_to_itself(tmp_path: Path, descriptions: bool) -> None:
    """Every named type as a field (``field``) and as array items (``fields``), where it is not a coincidence
    (a one-field LocalObjectReference needs its description: without, it stays generated)."""
    spec = {}
    for i, short in enumerate(NAMED):
        name = short.split(".")[-1]
        field = name[0].lower() + name[1:]
        spec[field] = schema_of(_definition(short), descriptions)
        spec[f"list{i}"] = {"type": "array", "items": schema_of(_definition(short), descriptions)}
    code, models, _ = generate(tmp_path, crd("Holder", spec))
    assert code == 0
    module = load(models)
    hints = module.HolderSpec.__annotations__
    for short in NAMED:
        name = short.split(".")[-1]
        field = re.sub(r"(?<!^)(?=[A-Z])", "_", name[0].lower() + name[1:]).lower()
        annotation = str(hints[field])
        if name == "LocalObjectReference" and not descriptions:
            assert annotation.startswith("HolderSpec")  # generated (named after the first of its shape)
            continue
        assert annotation.startswith(f"{name} |"), (short, annotation)
        pkg, version, _ = short.split(".")
        target = importlib.import_module(f"samplecontroller.kubernetes.apis.{pkg}.{version}")
        assert getattr(module, name) is getattr(target, name), short


def _with(schema: dict[str, Any], path: list[str], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(schema)
    node = out
    for key in path[:-1]:
        node = node[key]
    if value is None:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out


OBJREF = schema_of(CORE + "ObjectReference", descriptions=False)
TOLERATION = schema_of(CORE + "Toleration", descriptions=False)
NEVER = {
    # a field the built-in lacks
    "extra_field": _with(OBJREF, ["properties", "shard"], {"type": "string"}),
    # another type
    "other_type": _with(OBJREF, ["properties", "uid"], {"type": "integer"}),
    "number_for_integer": _with(TOLERATION, ["properties", "tolerationSeconds"], {"type": "number"}),
    "object_for_string": _with(OBJREF, ["properties", "name"], {"type": "object", "properties": {"x": {"type": "string"}}}),
    # keeps unknown fields the built-in would drop
    "preserve": {**OBJREF, "x-kubernetes-preserve-unknown-fields": True},
    # null the built-in model cannot decode
    "nullable": _with(OBJREF, ["properties", "name", "nullable"], True),
    # int-or-string where the built-in has a string
    "int_or_string": _with(OBJREF, ["properties", "name"], {"x-kubernetes-int-or-string": True}),
    # coincidences: cert-manager's issuerRef {group, kind, name} is not StatusDetails; a condition look-alike
    "coincidence": {"type": "object", "properties": {"group": {"type": "string"}, "kind": {"type": "string"},
                                                     "name": {"type": "string"}}},
    "lookalike": {"type": "object", "properties": {"type": {"type": "string"}, "status": {"type": "string"},
                                                   "lastProbeTime": {"type": "string"}}},
}


def test_never_a_wrong_match(tmp_path: Path) -> None:
    code, models, _ = generate(tmp_path, crd("Holder", copy.deepcopy(NEVER)))
    assert code == 0
    source = models.read_text()
    assert "samplecontroller.kubernetes.apis.core" not in source
    assert "StatusDetails" not in source
    hints = load(models).HolderSpec.__annotations__
    for field in NEVER:
        assert str(hints[field]).startswith(("HolderSpec", "dict[")), (field, hints[field])


def test_other_enum_values_keep_it_generated(tmp_path: Path) -> None:
    """A built-in with an enum (in the definitions) does not take a schema with values it lacks."""
    from samplecontroller.codegen.builtin_types import default_index

    index = default_index()
    with_enum = [(name, prop) for name, d in index.defs.items() if name.startswith(CORE)
                 for prop, sub in (d.get("properties") or {}).items() if isinstance(sub, dict) and sub.get("enum")]
    if not with_enum:
        pytest.skip("the vendored definitions carry no enums")
    name, prop = with_enum[0]
    schema = _convert_with(name, prop, ["SomethingElse"])
    assert index.incompatibility(schema, {"$ref": "#/$defs/" + name}) is not None


def _convert_with(name: str, prop: str, values: list[str]) -> dict[str, Any]:
    schema = schema_of(name, descriptions=False)
    schema["properties"][prop] = {**schema["properties"][prop], "enum": values}
    return schema


def test_embedded_resource_metadata_is_object_meta(tmp_path: Path) -> None:
    spec = {"template": {"type": "object", "x-kubernetes-embedded-resource": True, "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "metadata": {"type": "object", "properties": {"name": {"type": "string"},
                                                      "labels": {"type": "object",
                                                                 "additionalProperties": {"type": "string"}}}},
        "data": {"type": "object", "additionalProperties": {"type": "string"}}}},
        "raw": {"type": "object", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True}}
    code, models, _ = generate(tmp_path, crd("Holder", spec))
    assert code == 0
    module = load(models)
    hints = module.HolderSpecTemplate.__annotations__
    assert str(hints["metadata"]).startswith("ObjectMeta")
    assert "dict[str, Any]" in str(module.HolderSpec.__annotations__["raw"])
    value = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "labels": {"a": "b"}}, "data": {"k": "v"}}
    decoded = msgspec.json.decode(msgspec.json.encode(value), type=module.HolderSpecTemplate)
    assert decoded.metadata.labels == {"a": "b"} and objects.to_dict(decoded) == value


LOCAL_REF = {"type": "object", "properties": {"name": {"type": "string"}}}


def test_declared_mapping(tmp_path: Path) -> None:
    spec = {"secretRef": copy.deepcopy(LOCAL_REF), "active": {"type": "array", "items": copy.deepcopy(OBJREF)}}
    code, models, _ = generate(tmp_path, crd("Holder", spec), args=(
        "--builtin-type", "Holder.spec.secretRef=core/v1.LocalObjectReference",
        "--builtin-type", "Holder.spec.active[]=none"))
    assert code == 0
    hints = load(models).HolderSpec.__annotations__
    assert str(hints["secret_ref"]).startswith("LocalObjectReference")
    assert "HolderSpecActiveItem" in str(hints["active"])


@pytest.mark.parametrize(("args", "fragments"), [
    (("Holder.spec.secretRef=core/v1.Toleration",), ["Holder.spec.secretRef=core/v1.Toleration",
                                                     "lose or mistype", "name is not a field"]),
    (("Holder.spec.nothing=core/v1.Toleration",), ["Holder.spec.nothing", "no served version"]),
    (("Holder.spec.secretRef=core/v1.NoSuchType",), ["no built-in type core/v1.NoSuchType"]),
    (("Holder.spec.secretRef",), ["expected Kind.path=pkg/version.Type"]),
], ids=["incompatible", "no-such-path", "no-such-type", "malformed"])
def test_declared_mapping_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...],
                                 fragments: list[str]) -> None:
    code, models, _ = generate(tmp_path, crd("Holder", {"secretRef": copy.deepcopy(LOCAL_REF)}),
                               args=tuple(a for arg in args for a in ("--builtin-type", arg)))
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in err
    assert not models.parents[3].exists()


def test_the_kinds_own_spec_and_status_are_never_matched(tmp_path: Path) -> None:
    """The tutorial's CronJobSpec has every field of batch/v1 CronJobSpec but timeZone: still its own type."""
    code, models, _ = generate(tmp_path, cronjob_crd())
    assert code == 0
    assert "class CronJobSpec(Struct" in models.read_text()


def test_a_name_clash_with_a_kind_is_qualified(tmp_path: Path) -> None:
    """A kind named like a built-in type it embeds: the import takes a qualified name."""
    doc = crd("Container", {"main": schema_of(CORE + "Container", descriptions=False)}, plural="containers")
    code, models, _ = generate(tmp_path, doc)
    assert code == 0
    source = models.read_text()
    assert "Container as CoreV1Container" in source
    assert str(load(models).ContainerSpec.__annotations__["main"]).startswith("CoreV1Container")
