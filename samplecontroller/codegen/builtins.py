"""The built-in API groups as a generated package: ``samplecontroller.kubernetes``.

client-go ships the typed clientset (``kubernetes``), ``informers`` and ``listers`` of every
built-in group/version; code-generator only generates a user's own types. This module is the
same split: ``generate_builtins()`` renders, with the generator's own model pipeline and
templates, one package holding every group/version of the vendored upstream OpenAPI definitions
(``apimachinery.openapi_schemas``), and a package generated from CRDs imports meta/v1 (and any
built-in type) from it instead of regenerating them.

What the OpenAPI definitions do not say is declared here, as the ``+genclient`` tags of
k8s.io/api declare it for Go's generators: which kinds are cluster-scoped
(``+genclient:nonNamespaced``), irregular plurals, short names, and which kinds serve ``scale``.
A kind gets a typed client (and lister and informer) when its group/version also defines its
``<Kind>List`` (a storage-backed resource); every kind with ``metadata`` (``Scale``,
``Eviction``, the reviews...) still gets ``apiVersion``/``kind`` defaulting to its own.
``tests/codegen/test_builtins.py`` checks these tables against the embedded API server's
discovery for every resource it serves.

Module of an upstream definition: ``io.k8s.api.<pkg>.<version>.X`` -> ``apis.<pkg>.<version>``
(Go's package name: ``apiserverinternal``, ``flowcontrol``...), apiextensions and
apiregistration likewise, and everything under ``io.k8s.apimachinery.`` -> ``apis.meta.v1``.
Each module is generated from the closure of its own definitions (class names are unique
within one closure) and imports what it uses from the others, so that importing one
group/version loads only it and the modules it refers to.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
import time
from pathlib import Path
from typing import Any

from samplecontroller import _extras
from samplecontroller.codegen.builtin_types import BUILTIN_PACKAGE
from samplecontroller.codegen.errors import CodegenError
from samplecontroller.codegen.generator import (
    Kind,
    Package,
    Target,
    normalize_upstream,
    render_all,
    upstream_closure,
    write_or_verify,
)
from samplecontroller.codegen.models import model_blocks, render_models

ROOT = BUILTIN_PACKAGE
GENERATOR = "hack/update_builtins.py"

# Definition-name prefixes -> the package name of their module (the version follows the prefix).
_PREFIXES = (
    (re.compile(r"io\.k8s\.api\.(\w+)\.(\w+)\.\w+"), None),
    (re.compile(r"io\.k8s\.apiextensions-apiserver\.pkg\.apis\.(apiextensions)\.(\w+)\.\w+"), None),
    (re.compile(r"io\.k8s\.kube-aggregator\.pkg\.apis\.(apiregistration)\.(\w+)\.\w+"), None),
)
META = ("meta", "v1")
META_GROUP = "meta.k8s.io"

# +genclient:nonNamespaced, by (group, kind).
CLUSTER_SCOPED = frozenset({
    ("", "ComponentStatus"), ("", "Namespace"), ("", "Node"), ("", "PersistentVolume"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"), ("apiregistration.k8s.io", "APIService"),
    ("authentication.k8s.io", "SelfSubjectReview"), ("authentication.k8s.io", "TokenReview"),
    ("authorization.k8s.io", "SelfSubjectAccessReview"), ("authorization.k8s.io", "SelfSubjectRulesReview"),
    ("authorization.k8s.io", "SubjectAccessReview"),
    ("certificates.k8s.io", "CertificateSigningRequest"), ("certificates.k8s.io", "ClusterTrustBundle"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"), ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("internal.apiserver.k8s.io", "StorageVersion"),
    ("networking.k8s.io", "IPAddress"), ("networking.k8s.io", "IngressClass"), ("networking.k8s.io", "ServiceCIDR"),
    ("node.k8s.io", "RuntimeClass"),
    ("rbac.authorization.k8s.io", "ClusterRole"), ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("resource.k8s.io", "DeviceClass"), ("resource.k8s.io", "DeviceTaintRule"),
    ("resource.k8s.io", "ResourcePoolStatusRequest"), ("resource.k8s.io", "ResourceSlice"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("storage.k8s.io", "CSIDriver"), ("storage.k8s.io", "CSINode"), ("storage.k8s.io", "StorageClass"),
    ("storage.k8s.io", "VolumeAttachment"), ("storage.k8s.io", "VolumeAttributesClass"),
    ("storagemigration.k8s.io", "StorageVersionMigration"),
})
# +genclient:onlyVerbs=create (the reviews): a typed client with create alone.
CREATE_ONLY = frozenset({
    ("authentication.k8s.io", "SelfSubjectReview"), ("authentication.k8s.io", "TokenReview"),
    ("authorization.k8s.io", "LocalSubjectAccessReview"), ("authorization.k8s.io", "SelfSubjectAccessReview"),
    ("authorization.k8s.io", "SelfSubjectRulesReview"), ("authorization.k8s.io", "SubjectAccessReview"),
})
IRREGULAR_PLURALS = {("", "Endpoints"): "endpoints"}
SHORT_NAMES = {
    ("", "ComponentStatus"): ["cs"], ("", "ConfigMap"): ["cm"], ("", "Endpoints"): ["ep"], ("", "Event"): ["ev"],
    ("", "LimitRange"): ["limits"], ("", "Namespace"): ["ns"], ("", "Node"): ["no"],
    ("", "PersistentVolume"): ["pv"], ("", "PersistentVolumeClaim"): ["pvc"], ("", "Pod"): ["po"],
    ("", "ReplicationController"): ["rc"], ("", "ResourceQuota"): ["quota"], ("", "Service"): ["svc"],
    ("", "ServiceAccount"): ["sa"], ("apiextensions.k8s.io", "CustomResourceDefinition"): ["crd", "crds"],
    ("apps", "DaemonSet"): ["ds"], ("apps", "Deployment"): ["deploy"], ("apps", "ReplicaSet"): ["rs"],
    ("apps", "StatefulSet"): ["sts"], ("autoscaling", "HorizontalPodAutoscaler"): ["hpa"],
    ("batch", "CronJob"): ["cj"], ("certificates.k8s.io", "CertificateSigningRequest"): ["csr"],
    ("events.k8s.io", "Event"): ["ev"], ("networking.k8s.io", "Ingress"): ["ing"],
    ("networking.k8s.io", "NetworkPolicy"): ["netpol"], ("policy", "PodDisruptionBudget"): ["pdb"],
    ("scheduling.k8s.io", "PriorityClass"): ["pc"], ("storage.k8s.io", "StorageClass"): ["sc"],
    ("storage.k8s.io", "VolumeAttributesClass"): ["vac"],
}
SCALE = frozenset({("", "ReplicationController"), ("apps", "Deployment"), ("apps", "ReplicaSet"),
                   ("apps", "StatefulSet")})
# Kinds with a status property that kube-apiserver serves without a status subresource.
NO_STATUS = frozenset({("", "ComponentStatus"), ("networking.k8s.io", "NetworkPolicy")})


def guess_plural(kind: str) -> str:
    """apimachinery's ``UnsafeGuessKindToResource`` (``Ingress`` -> ``ingresses``)."""
    lower = kind.lower()
    if lower.endswith("s"):
        return lower + "es"
    if lower.endswith("y"):
        return lower[:-1] + "ies"
    return lower + "s"


def module_of(definition: str) -> tuple[str, str] | None:
    """(package, version) of the module that owns an upstream definition; None if none does."""
    if definition.startswith("io.k8s.apimachinery."):
        return META
    for pattern, _ in _PREFIXES:
        m = pattern.fullmatch(definition)
        if m:
            return m.group(1), m.group(2)
    return None


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _gvks(schema: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(str(g.get("group", "")), str(g.get("version", "")), str(g.get("kind", "")))
            for g in schema.get("x-kubernetes-group-version-kind") or ()]


def _has_object_meta(schema: dict[str, Any]) -> bool:
    ref = ((schema.get("properties") or {}).get("metadata") or {})
    text = str(ref)
    return "meta.v1.ObjectMeta" in text


def _resource(group: str, version: str, kind: str, schema: dict[str, Any]) -> Kind:
    key = (group, kind)
    subs = []
    if "status" in (schema.get("properties") or {}) and key not in NO_STATUS:
        subs.append("status")
    if key in SCALE:
        subs.append("scale")
    if key in CREATE_ONLY:
        subs = []
    return Kind(group, version, kind, IRREGULAR_PLURALS.get(key) or guess_plural(kind), kind.lower(),
                key not in CLUSTER_SCOPED, list(SHORT_NAMES.get(key, [])), subs, True, create_only=key in CREATE_ONLY)


# Models of upstream types whose schema alone does not round-trip exactly.
def _overrides() -> dict[str, Any]:
    return {
        # Quantity round-trips exactly only as int | float | str.
        "Quantity": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "number"}]},
        "IntOrString": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        # Go encodes a zero metav1.Time as null (e.g. a pod template's creationTimestamp).
        "Time": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "MicroTime": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        # Free-form JSON: kept whole, never an empty Struct that would drop its content.
        "FieldsV1": {"type": "object", "additionalProperties": True},
        "RawExtension": {"type": "object", "additionalProperties": True},
    }


@functools.lru_cache(maxsize=1)
def builtin_packages(root: str = ROOT) -> tuple[Package, ...]:
    """Every group/version of the vendored definitions, with its resources and model source."""
    from samplecontroller.apimachinery.openapi_schemas import definitions

    defs = definitions()
    owned: dict[tuple[str, str], list[str]] = {}
    for name in sorted(defs):
        owner = module_of(name)
        if owner is None:
            raise CodegenError(f"upstream definition {name} has no generated module")
        owned.setdefault(owner, []).append(name)
    packages: dict[tuple[str, str], Package] = {}
    for (pkg, version), names in sorted(owned.items()):
        groups = {g for n in names for g, v, _ in _gvks(defs[n]) if v == version}
        group = META_GROUP if (pkg, version) == META else (groups.pop() if len(groups) == 1 else None)
        if group is None:
            raise CodegenError(f"upstream package {pkg}/{version} has no single group: {sorted(groups)}")
        package = Package(pkg, group, version, root=root)
        by_short = {_short(n): n for n in names}
        typed: dict[str, Kind] = {}
        for n in names:
            for g, v, kind in _gvks(defs[n]):
                if (g, v) != (group, version) or (pkg, version) == META or kind != _short(n):
                    continue
                if kind.endswith("List") and kind[:-4] in by_short:
                    continue
                if f"{kind}List" in by_short or (group, kind) in CREATE_ONLY:
                    package.kinds.append(_resource(group, version, kind, defs[n]))
                elif _has_object_meta(defs[n]):
                    typed[kind] = Kind(group, version, kind, "", "", False, [], [], True)
        typed.update({k.kind: k for k in package.kinds})
        package.models = _models(defs, names, root, typed, with_resource_info=bool(package.kinds))
        package.kinds.sort(key=lambda k: k.kind)
        packages[(pkg, version)] = package
    return tuple(packages.values())


def _models(defs: dict[str, Any], names: list[str], root: str, kinds: dict[str, Kind],
            with_resource_info: bool) -> str:
    """The model source of one module: the closure of its definitions, its own rendered, the rest imported.

    The same structural pipeline as a CRD package's (``models``); ``normalize_upstream`` drops
    ``required``, enums and descriptions, so every built-in field stays optional (``UnsetType``)."""
    closure = upstream_closure(defs, names)
    seen: dict[str, str] = {}
    for name in sorted(closure):
        if _short(name) in seen:
            raise CodegenError(f"upstream definitions {seen[_short(name)]} and {name} share a class name")
        seen[_short(name)] = name
    normalized = {_short(n): normalize_upstream(defs[n]) for n in closure}
    for short, schema in _overrides().items():
        if short in normalized:
            normalized[short] = schema
    own = [_short(n) for n in names]
    imports: dict[str, list[str]] = {}
    for n in sorted(closure - set(names)):
        owner = module_of(n)
        assert owner is not None
        imports.setdefault(f"{root}.apis.{owner[0]}.{owner[1]}", []).append(_short(n))
    return render_models(model_blocks(normalized, own), own, imports, kinds, normalized, with_resource_info)


def builtins_target() -> Target:
    """The ``Target`` of ``samplecontroller.kubernetes``: its import path, this generator in the headers, no CRD folder."""
    return Target(ROOT, GENERATOR, "")


def generate_builtins() -> dict[str, str]:
    """Every file of ``samplecontroller.kubernetes`` (relative path -> text)."""
    return render_all(list(builtin_packages()), builtins_target())


def main(argv: list[str] | None, output: Path, prog: str = GENERATOR) -> int:
    """Write ``samplecontroller.kubernetes`` into ``output`` (``--verify``: check it is up to date):
    0 done or up to date, 1 stale, 2 an upstream definition the generator cannot place."""
    parser = argparse.ArgumentParser(prog=prog, description="Generate samplecontroller.kubernetes (the built-in "
                                     "API groups) from the vendored OpenAPI definitions.")
    parser.add_argument("--verify", action="store_true", help="check that the package is up to date")
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        _extras.require("codegen", "samplecontroller.codegen")
        files = generate_builtins()
    except (CodegenError, _extras.MissingExtraError) as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    return write_or_verify(files, output, args.verify, f"python {prog}", started)
