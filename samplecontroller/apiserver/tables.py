"""meta.k8s.io/v1 Tables for ``kubectl get`` (Accept ``application/json;as=Table;v=v1;g=meta.k8s.io``).

Columns come from a CRD's ``additionalPrinterColumns`` (``crd_columns``) or from the default
printers of built-in kinds (``builtin_columns``, after kubernetes/pkg/printers). The Name column
is first and Age (a human duration such as ``5s``, ``3m2s``, ``2d``) last, unless the kind's
printer says otherwise (events). Cells never raise: a missing value is ``None`` (kubectl shows
``<none>``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from samplecontroller.apiserver import bodies, printers
from samplecontroller.apiserver.objects import deep_get as _get

__all__ = [
    "Column",
    "builtin_columns",
    "crd_columns",
    "evaluate_jsonpath",
    "human_duration",
    "to_table",
]

Getter = Callable[[Mapping[str, Any]], Any]


@dataclass(frozen=True)
class Column:
    """One table column: its definition and how to compute its cell from an object."""

    name: str
    type: str = "string"
    format: str = ""
    description: str = ""
    priority: int = 0
    value: Getter | None = field(default=None, compare=False)
    json_path: str = ""

    def definition(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "format": self.format, "description": self.description, "priority": self.priority}

    def cell(self, obj: Mapping[str, Any], now: datetime) -> Any:
        try:
            if self.value is not None:
                return self.value(obj)
            results = evaluate_jsonpath(obj, self.json_path)
        except (LookupError, TypeError, ValueError, AttributeError):
            return None
        if not results:
            return None
        return _typed_cell(self.type, results[0], now)


NAME_COLUMN = Column("Name", "string", "name", "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names", 0, lambda o: (o.get("metadata") or {}).get("name"))
AGE_DESCRIPTION = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"


# ---------------------------------------------------------------------------- durations


def human_duration(seconds: float) -> str:
    """Kubernetes' duration.HumanDuration: ``45s``, ``3m2s``, ``15m``, ``5h3m``, ``2d``, ``3y12d``."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _age(value: Any, now: datetime) -> str:
    parsed = _parse_time(value)
    if parsed is None:
        return "<unknown>"
    return human_duration((now - parsed).total_seconds())


# ---------------------------------------------------------------------------- JSONPath subset

_TOKEN = re.compile(r"\.([^.\[]+)|\[(\d+|\*|'[^']*'|\"[^\"]*\"|\?\(@\.([\w.\-]+)\s*==\s*(?:\"([^\"]*)\"|'([^']*)'|([\w.\-]+))\))\]")


def evaluate_jsonpath(obj: Any, path: str) -> list[Any]:
    """Results of a simple JSONPath: ``.a.b``, ``.a[0]``, ``.a[*].b``, ``.a[?(@.type=="Ready")].status``.

    ``{...}`` braces are accepted. Raises ``ValueError`` for syntax outside this subset.
    """
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    if text.startswith("$"):
        text = text[1:]
    current: list[Any] = [obj]
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise ValueError(f"unsupported JSONPath {path!r} at {text[pos:]!r}")
        pos = match.end()
        current = _step(current, match)
    return current


def _step(values: list[Any], match: re.Match[str]) -> list[Any]:
    name, bracket, filter_field = match.group(1), match.group(2), match.group(3)
    out: list[Any] = []
    for value in values:
        if name is not None:
            if isinstance(value, dict) and name in value:
                out.append(value[name])
        elif filter_field is not None:
            wanted = next((g for g in match.groups()[3:] if g is not None), "")
            for item in value if isinstance(value, list) else ():
                found = evaluate_jsonpath(item, "." + filter_field)
                if found and _as_text(found[0]) == wanted:
                    out.append(item)
        elif bracket == "*":
            out.extend(value if isinstance(value, list) else value.values() if isinstance(value, dict) else ())
        elif bracket[0] in "'\"":
            if isinstance(value, dict) and bracket[1:-1] in value:
                out.append(value[bracket[1:-1]])
        elif isinstance(value, list) and int(bracket) < len(value):
            out.append(value[int(bracket)])
    return out


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    try:
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    except RecursionError:  # nested thousands deep: the same text, built iteratively
        return bodies.encode_deep(value, sort_keys=True, scalar=_json_scalar).decode()


def _json_scalar(value: Any) -> bytes:
    return json.dumps(value).encode()


def _typed_cell(typ: str, value: Any, now: datetime) -> Any:
    if typ == "date":
        return _age(value, now) if isinstance(value, str) else None
    if typ == "integer":
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if typ == "number":
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if typ == "boolean":
        return value if isinstance(value, bool) else None
    return _as_text(value)


# ---------------------------------------------------------------------------- column sets


def crd_columns(crd: Mapping[str, Any], version: str) -> list[Column]:
    """The columns of a CRD version: Name, its additionalPrinterColumns, then Age.

    With no printer columns, Kubernetes' default (Age from ``.metadata.creationTimestamp``)
    applies. Age is not repeated when a column already shows ``.metadata.creationTimestamp``.
    """
    entry: Mapping[str, Any] = next((v for v in (crd.get("spec") or {}).get("versions") or () if v.get("name") == version), {})
    printer = entry.get("additionalPrinterColumns") or (crd.get("spec") or {}).get("additionalPrinterColumns") or []
    columns = [NAME_COLUMN]
    has_age = False
    for col in printer:
        if not isinstance(col, Mapping) or not col.get("name") or not col.get("jsonPath"):
            continue
        path = str(col["jsonPath"])
        has_age = has_age or path.strip("{} ") == ".metadata.creationTimestamp"
        columns.append(Column(str(col["name"]), str(col.get("type") or "string"), str(col.get("format") or ""), str(col.get("description") or ""), int(col.get("priority") or 0), None, path))
    if not has_age:
        columns.append(Column("Age", "date", "", AGE_DESCRIPTION, 0, None, ".metadata.creationTimestamp"))
    return columns


def _age_column() -> Column:
    return Column("Age", "string", "", AGE_DESCRIPTION, 0, None, "")


def _pod_ready(o: Mapping[str, Any]) -> str:
    statuses = _get(o, "status", "containerStatuses", default=[])
    total = len(_get(o, "spec", "containers", default=[]))
    ready = sum(1 for s in statuses if isinstance(s, Mapping) and s.get("ready"))
    return f"{ready}/{total}"


def _pod_status(o: Mapping[str, Any]) -> str:
    if _get(o, "metadata", "deletionTimestamp"):
        return "Terminating"
    return str(_get(o, "status", "reason") or _get(o, "status", "phase") or "Pending")


def _pod_restarts(o: Mapping[str, Any]) -> str:
    statuses = _get(o, "status", "containerStatuses", default=[])
    return str(sum(int(s.get("restartCount") or 0) for s in statuses if isinstance(s, Mapping)))


def _count(*path: str) -> Getter:
    return lambda o: len(_get(o, *path, default=()))


def _int(*path: str) -> Getter:
    return lambda o: int(_get(o, *path, default=0))


def _text(*path: str, default: str = "<none>") -> Getter:
    return lambda o: str(_get(o, *path, default=default))


def _containers(o: Mapping[str, Any]) -> str:
    return ",".join(str(c.get("name", "")) for c in _get(o, "spec", "template", "spec", "containers", default=[]))


def _images(o: Mapping[str, Any]) -> str:
    return ",".join(str(c.get("image", "")) for c in _get(o, "spec", "template", "spec", "containers", default=[]))


def _selector(o: Mapping[str, Any]) -> str:
    labels = _get(o, "spec", "selector", "matchLabels", default={})
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "<none>"


def _ports(o: Mapping[str, Any]) -> str:
    ports = _get(o, "spec", "ports", default=[])
    parts = [f"{p.get('port')}{':' + str(p['nodePort']) if p.get('nodePort') else ''}/{p.get('protocol', 'TCP')}" for p in ports]
    return ",".join(parts) or "<none>"


def _service_external_ip(o: Mapping[str, Any]) -> str:
    """printers.go getServiceExternalIP: externalName, the load balancer's ingress (``<pending>``
    while it has none) plus externalIPs, or ``<none>``."""
    kind = _get(o, "spec", "type", default="ClusterIP")
    external = [str(ip) for ip in _get(o, "spec", "externalIPs", default=[])]
    if kind == "ExternalName":
        return str(_get(o, "spec", "externalName", default="<none>"))
    if kind == "LoadBalancer":
        ingress = [str(i.get("ip") or i.get("hostname") or "") for i in _get(o, "status", "loadBalancer", "ingress", default=[])]
        return ",".join(ingress + external) or "<pending>"
    return ",".join(external) or "<none>"


def _event_object(o: Mapping[str, Any]) -> str:
    ref = _get(o, "involvedObject", default={}) or _get(o, "regarding", default={})
    return f"{str(ref.get('kind', '')).lower()}/{ref.get('name', '')}"


def _event_last_seen(o: Mapping[str, Any]) -> Any:
    return _get(o, "lastTimestamp") or _get(o, "eventTime") or _get(o, "metadata", "creationTimestamp")


_DEFAULTS: dict[tuple[str, str], list[Column]] = {
    ("", "Pod"): [
        Column("Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic.", 0, _pod_ready),
        Column("Status", "string", "", "The aggregate status of the containers in this pod.", 0, _pod_status),
        Column("Restarts", "string", "", "The number of times the containers in this pod have been restarted.", 0, _pod_restarts),
    ],
    ("", "Namespace"): [Column("Status", "string", "", "The status of the namespace", 0, _text("status", "phase", default="Active"))],
    ("", "Service"): [
        Column("Type", "string", "", "The type of the service.", 0, _text("spec", "type", default="ClusterIP")),
        Column("Cluster-IP", "string", "", "The cluster IP of the service.", 0, _text("spec", "clusterIP")),
        Column("External-IP", "string", "", "The external IP of the service.", 0, _service_external_ip),
        Column("Port(s)", "string", "", "The ports of the service.", 0, _ports),
    ],
    ("", "ConfigMap"): [Column("Data", "integer", "", "The number of entries in the config map.", 0, lambda o: len(_get(o, "data", default={})) + len(_get(o, "binaryData", default={})))],
    ("", "Secret"): [
        Column("Type", "string", "", "The type of the secret", 0, _text("type", default="Opaque")),
        Column("Data", "integer", "", "The number of entries in the secret", 0, _count("data")),
    ],
    ("", "ServiceAccount"): [Column("Secrets", "integer", "", "The number of secrets", 0, _count("secrets"))],
    ("apps", "Deployment"): [
        Column("Ready", "string", "", "Number of the pod with ready state", 0, lambda o: f"{_get(o, 'status', 'readyReplicas', default=0)}/{_get(o, 'spec', 'replicas', default=1)}"),
        Column("Up-to-date", "integer", "", "Total number of non-terminated pods targeted by this deployment that have the desired template spec.", 0, _int("status", "updatedReplicas")),
        Column("Available", "integer", "", "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.", 0, _int("status", "availableReplicas")),
    ],
    ("apps", "ReplicaSet"): [
        Column("Desired", "integer", "", "Number of desired pods.", 0, _int("spec", "replicas")),
        Column("Current", "integer", "", "Number of actual pods.", 0, _int("status", "replicas")),
        Column("Ready", "integer", "", "Number of ready pods.", 0, _int("status", "readyReplicas")),
    ],
    ("coordination.k8s.io", "Lease"): [Column("Holder", "string", "", "The holder of the lease", 0, _text("spec", "holderIdentity", default=""))],
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): [Column("Webhooks", "integer", "", "Webhooks indicates the number of webhooks.", 0, _count("webhooks"))],
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): [Column("Webhooks", "integer", "", "Webhooks indicates the number of webhooks.", 0, _count("webhooks"))],
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): [
        Column("Validations", "integer", "", "Validations indicates the number of validation rules defined in this configuration", 0, _count("spec", "validations")),
        Column("ParamKind", "string", "", "ParamKind specifies the kind of resources used to parameterize this policy", 0, lambda o: _param_kind(_get(o, "spec", "paramKind", default=None))),
    ],
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"): [
        Column("PolicyName", "string", "", "PolicyName indicates the policy definition which the policy binding binded to", 0, _text("spec", "policyName", default="")),
        Column("ParamRef", "string", "", "ParamRef indicates the param resource which sets the configration param", 0, lambda o: _param_ref(_get(o, "spec", "paramRef", default=None))),
    ],
}


def _param_kind(kind: Any) -> str:
    """A policy's paramKind as kubectl get prints it (``v1/ConfigMap``, ``<unset>``)."""
    return f"{kind.get('apiVersion', '')}/{kind.get('kind', '')}" if isinstance(kind, Mapping) else "<unset>"


def _param_ref(ref: Any) -> str:
    """A binding's paramRef as kubectl get prints it (``ns/name``, ``*/name``, ``<unset>``)."""
    if not isinstance(ref, Mapping) or not ref.get("name"):
        return "<unset>"
    return f"{ref.get('namespace') or '*'}/{ref['name']}"


def _readiness_gates(o: Mapping[str, Any]) -> str:
    gates = [g.get("conditionType") for g in _get(o, "spec", "readinessGates", default=[]) if isinstance(g, Mapping)]
    if not gates:
        return "<none>"
    true = {c.get("type") for c in _get(o, "status", "conditions", default=[])
            if isinstance(c, Mapping) and c.get("status") == "True"}
    return f"{sum(1 for g in gates if g in true)}/{len(gates)}"


def _map_text(*path: str) -> Getter:
    def cell(o: Mapping[str, Any]) -> str:
        labels = _get(o, *path, default={})
        return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "<none>" if isinstance(labels, Mapping) else "<none>"
    return cell


_WIDE: dict[tuple[str, str], list[Column]] = {
    ("", "Pod"): [
        Column("IP", "string", "", "The IP address assigned to the pod", 1, _text("status", "podIP")),
        Column("Node", "string", "", "The node the pod is assigned to", 1, _text("spec", "nodeName")),
        Column("Nominated Node", "string", "", "The node the pod is nominated to run on", 1,
               _text("status", "nominatedNodeName")),
        Column("Readiness Gates", "string", "", "The readiness gates of the pod", 1, _readiness_gates),
    ],
    ("", "Service"): [
        Column("Selector", "string", "", "The label selector of the service.", 1, _map_text("spec", "selector")),
    ],
    ("apps", "Deployment"): [
        Column("Containers", "string", "", "Names of each container in the template.", 1, _containers),
        Column("Images", "string", "", "Images referenced by each container in the template.", 1, _images),
        Column("Selector", "string", "", "Label selector for pods.", 1, _selector),
    ],
    ("apps", "ReplicaSet"): [
        Column("Containers", "string", "", "Names of each container in the template.", 1, _containers),
        Column("Images", "string", "", "Images referenced by each container in the template.", 1, _images),
        Column("Selector", "string", "", "Label selector for pods.", 1, _selector),
    ],
}


def _event_source(o: Mapping[str, Any]) -> str:
    component = str(_get(o, "source", "component", default="") or _get(o, "reportingComponent", default="")
                    or _get(o, "reportingController", default=""))
    instance = str(_get(o, "source", "host", default="") or _get(o, "reportingInstance", default=""))
    return ", ".join(p for p in (component, instance) if p) if instance else component


def _event_count(o: Mapping[str, Any]) -> int:
    series = _get(o, "series", "count")
    if series is not None:
        return int(series)
    return int(_get(o, "count", default=0) or _get(o, "deprecatedCount", default=0))


def _event_columns() -> list[Column]:
    return [
        Column("Last Seen", "string", "", "Time when last event occurred", 0, None, ""),
        Column("Type", "string", "", "Type of this event (Normal, Warning)", 0, _text("type", default="")),
        Column("Reason", "string", "", "Reason why this event was generated", 0, _text("reason", default="")),
        Column("Object", "string", "", "The object this Event is about", 0, _event_object),
        Column("Subobject", "string", "", "The subobject this Event is about", 1,
               lambda o: str(_get(o, "involvedObject", "fieldPath", default="") or _get(o, "regarding", "fieldPath", default=""))),
        Column("Source", "string", "", "The source of this event", 1, _event_source),
        Column("Message", "string", "", "A human-readable description of the status of this operation.", 0, lambda o: str(_get(o, "message", default="") or _get(o, "note", default=""))),
        Column("First Seen", "string", "", "Time when first event occurred", 1, None, ""),
        Column("Count", "integer", "", "The number of times this event has occurred", 1, _event_count),
        Column("Name", "string", "name", NAME_COLUMN.description, 1, NAME_COLUMN.value),
    ]


def _created_at() -> Column:
    return Column("Created At", "date", "", AGE_DESCRIPTION, 0, lambda o: _get(o, "metadata", "creationTimestamp"))


def _specs(specs: list[printers.ColumnSpec], priority: int) -> list[Column]:
    return [Column(name, typ, "", desc, priority, getter) for name, typ, desc, getter in specs]


def builtin_columns(group: str, kind: str) -> list[Column]:
    """The default columns of a built-in kind (Name, kind columns, Age, then -o wide ones):
    the core printers here, the others from ``printers``; Name and Created At otherwise."""
    key = (group, kind)
    if kind == "Event":
        return _event_columns()
    if kind == "CustomResourceDefinition" or key in printers.CREATED_AT or (
            key not in _DEFAULTS and key not in printers.COLUMNS):
        return [NAME_COLUMN, _created_at()]
    if key in printers.AGE_FIRST:
        return [NAME_COLUMN, _age_column(), *_specs(printers.COLUMNS[key], 0), *_specs(printers.AFTER_AGE.get(key, []), 0)]
    if key in printers.NO_AGE:
        return [NAME_COLUMN, *_specs(printers.COLUMNS[key], 0)]
    name = NAME_COLUMN
    if key in printers.NAME_CELLS:
        name = Column("Name", "string", "name", NAME_COLUMN.description, 0, printers.NAME_CELLS[key])
    return [name, *_DEFAULTS.get(key, []), *_specs(printers.COLUMNS.get(key, []), 0), _age_column(),
            *_specs(printers.AFTER_AGE.get(key, []), 0), *_WIDE.get(key, []), *_specs(printers.WIDE.get(key, []), 1)]


# ---------------------------------------------------------------------------- tables


def _partial(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": dict(obj.get("metadata") or {})}


def _row(obj: Mapping[str, Any], columns: list[Column], include_object: str, now: datetime) -> dict[str, Any]:
    cells: list[Any] = []
    for col in columns:
        if col.name == "Age" and col.value is None and not col.json_path:
            cells.append(_age(_get(obj, "metadata", "creationTimestamp"), now))
        elif col.name == "Last Seen" and col.value is None:
            cells.append(_age(_event_last_seen(obj), now))
        elif col.name == "First Seen" and col.value is None:
            cells.append(_age(_get(obj, "firstTimestamp") or _get(obj, "eventTime")
                              or _get(obj, "deprecatedFirstTimestamp"), now))
        else:
            cells.append(col.cell(obj, now))
    row: dict[str, Any] = {"cells": cells}
    if include_object == "Object":
        row["object"] = dict(obj)
    elif include_object != "None":
        row["object"] = _partial(obj)
    return row


def _as_column(col: Column | Mapping[str, Any]) -> Column:
    if isinstance(col, Column):
        return col
    return Column(str(col.get("name", "")), str(col.get("type") or "string"), str(col.get("format") or ""), str(col.get("description") or ""), int(col.get("priority") or 0), None, str(col.get("jsonPath") or ""))


def to_table(
    objects: Iterable[Mapping[str, Any]],
    columns: Iterable[Column | Mapping[str, Any]],
    *,
    resource_version: str,
    continue_: str = "",
    include_object: str = "Metadata",
    now: datetime | None = None,
) -> dict[str, Any]:
    """A meta.k8s.io/v1 Table of ``objects`` with ``columns`` (Columns or printer-column dicts).

    ``include_object`` is the ``includeObject`` query parameter: ``Metadata`` (default, rows
    carry PartialObjectMetadata), ``Object`` or ``None``. A watch event's Table is a one-object call.
    """
    cols = [_as_column(c) for c in columns]
    when = now or datetime.now(UTC)
    meta: dict[str, Any] = {"resourceVersion": resource_version}
    if continue_:
        meta["continue"] = continue_
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta,
        "columnDefinitions": [c.definition() for c in cols],
        "rows": [_row(o, cols, include_object, when) for o in objects],
    }
