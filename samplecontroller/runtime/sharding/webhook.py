"""Assignment on create: the sharder's mutating admission webhook (the anchor's sharder webhook).

With ``manager.Options(shard_ring=..., shard_webhook=True)`` every replica's webhook server
serves ``/webhooks/sharder/<ring>`` (``AssignHandler``) and the elected sharder, while it leads,
server-side applies the ``MutatingWebhookConfiguration`` ``sharder-<ring>`` (``configuration``):

- one webhook, ``sharder.sharding.timebertt.dev``, for CREATE and UPDATE of the ring's main and
  owned kinds, with an ``objectSelector`` on the shard label not existing (only unassigned objects
  reach it), ``failurePolicy: Ignore`` and a 5 s timeout, ``sideEffects: None``: as the anchor,
  a sharder that is down or slow costs an object its immediate assignment, never its create; the
  sharder's watch of unassigned objects (the controller path) assigns what the webhook missed;
- its ``clientConfig``: ``Options.shard_webhook_client_config`` with the path appended (in a
  cluster: a Service in front of the replicas and the CA bundle, as for any webhook), or, when
  unset, ``url: https://<webhook host or 127.0.0.1>:<the server's port>/...`` with the CA bundle
  read from ``ca.crt`` in the webhook server's certificate directory (cert-manager's Secrets
  carry one; ``write_self_signed``'s CA for a local run): the elected sharder's own server.

The handler sets the shard label of an unassigned object to the shard the ring places it on (a
main object by ``group/kind/namespace/name``, an owned one by its controller's key) and leaves an
assigned object alone (its shard may still be working on it). Its ring: the sharder's while it
leads; on another replica the shard Leases it lists (at most one LIST per ``poll_period``). An
object with no name yet (``generateName`` on an API server that names it after admission), an
owned object without a controller of the owner kind, or an empty ring: allowed unchanged.
"""

from __future__ import annotations

import base64
import datetime
import json
import threading
import time
from pathlib import Path
from typing import Any

from prometheus_client import Counter

from samplecontroller.apimachinery import meta
from samplecontroller.logs import get_logger
from samplecontroller.runtime.sharding import RING_LABEL
from samplecontroller.runtime.sharding.ring import Ring
from samplecontroller.runtime.sharding.shard import Partition

log = get_logger("runtime.sharding")

WEBHOOK_NAME = "sharder.sharding.timebertt.dev"
PATH_PREFIX = "/webhooks/sharder/"
FIELD_MANAGER = "samplecontroller-sharder"
CA_NAME = "ca.crt"
TIMEOUT_SECONDS = 5

# the anchor's controller_sharding_assignments_total
ASSIGNMENTS = Counter("controller_sharding_webhook_assignments",
                      "Objects assigned on admission by the sharder webhook, per ring", ["ring"])

__all__ = ["PATH_PREFIX", "WEBHOOK_NAME", "AssignHandler", "configuration", "configuration_name", "path_for"]


def path_for(ring: str) -> str:
    """The webhook server path of ``ring``'s assignment webhook."""
    return PATH_PREFIX + ring


def configuration_name(ring: str) -> str:
    """The name of ``ring``'s MutatingWebhookConfiguration."""
    return f"sharder-{ring}"


def client_config(ring: str, base: dict[str, Any] | None, host: str, port: int, cert_dir: Path) -> dict[str, Any]:
    """The webhook's clientConfig: ``base`` (a service or url, and caBundle) with the ring's path
    appended, or this server's URL with the CA of ``cert_dir``/ca.crt. ValueError when neither
    can be made (a user's configuration mistake, named)."""
    path = path_for(ring)
    if base is not None:
        out: dict[str, Any] = json.loads(json.dumps(base))
        if isinstance(out.get("service"), dict):
            out["service"]["path"] = str(out["service"].get("path") or "").rstrip("/") + path
        elif isinstance(out.get("url"), str):
            out["url"] = out["url"].rstrip("/") + path
        else:
            raise ValueError("shard_webhook_client_config needs a service or a url (a webhook clientConfig)")
        return out
    ca = cert_dir / CA_NAME
    try:
        bundle = ca.read_bytes()
    except FileNotFoundError:
        raise ValueError(f"shard_webhook without shard_webhook_client_config needs the CA of the webhook server's "
                         f"certificate in {ca} (or set shard_webhook_client_config)") from None
    host = host if host and host not in ("0.0.0.0", "::") else "127.0.0.1"
    return {"url": f"https://{'[' + host + ']' if ':' in host else host}:{port}{path}",
            "caBundle": base64.b64encode(bundle).decode()}


def configuration(ring: str, partitions: list[Partition], client: dict[str, Any],
                  namespaces: tuple[str, ...] = ()) -> dict[str, Any]:
    """The MutatingWebhookConfiguration of ``ring`` (see the module docstring); ``namespaces``:
    the Manager's cache's (a ``namespaceSelector`` on their names), empty: all."""
    rules = [{"operations": ["CREATE", "UPDATE"], "apiGroups": [p.info.group], "apiVersions": ["*"],
              "resources": [p.info.resource], "scope": "*"}
             for p in sorted(partitions, key=lambda p: (p.owner is not None, p.info.group, p.info.resource))]
    hook: dict[str, Any] = {}
    if namespaces:
        hook["namespaceSelector"] = {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In",
                                                           "values": sorted(namespaces)}]}
    return {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": configuration_name(ring), "labels": {RING_LABEL: ring}},
        "webhooks": [{**hook,
            "name": WEBHOOK_NAME, "clientConfig": client, "rules": rules,
            "objectSelector": {"matchExpressions": [{"key": "shard.alpha.sharding.timebertt.dev/" + ring,
                                                     "operator": "DoesNotExist"}]},
            "failurePolicy": "Ignore", "timeoutSeconds": TIMEOUT_SECONDS, "sideEffects": "None",
            "admissionReviewVersions": ["v1"], "matchPolicy": "Equivalent",
        }],
    }


class AssignHandler:
    """The admission handler (``runtime.webhook`` ``Handler``) of ``sharder``'s ring."""

    def __init__(self, sharder: Any) -> None:
        self.sharder = sharder
        self._lock = threading.Lock()
        self._ring = Ring(())
        self._read_at = -1e9
        self.assigned = 0  # objects labelled (for tests and benchmarks)

    def _current(self) -> Ring:
        """The sharder's ring while it leads, else one made from the shard Leases (re-listed at
        most once per ``poll_period``)."""
        if self.sharder.leading.is_set():
            ring: Ring = self.sharder.ring
            return ring
        with self._lock:
            now = time.monotonic()
            if now - self._read_at >= self.sharder.poll_period:
                from samplecontroller.runtime.sharding.sharder import lease_state

                leases = self.sharder.leases.list(label_selector=f"{RING_LABEL}={self.sharder.shard.ring}")
                at = datetime.datetime.now(datetime.UTC)
                self._ring = Ring(x["metadata"]["name"] for x in leases.get("items") or []
                                  if lease_state(x, at) == "ready")
                self._read_at = now
            return self._ring

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """Allow ``request``, with a patch adding the shard label when its object is unassigned."""
        uid = str(request.get("uid", ""))
        allowed: dict[str, Any] = {"uid": uid, "allowed": True}
        obj = request.get("object")
        if request.get("operation") not in ("CREATE", "UPDATE") or not isinstance(obj, dict):
            return allowed
        label = self.sharder.shard.shard_label
        labels = meta.get_labels(obj)
        if labels.get(label):
            return allowed  # assigned: its shard may be working on it, so it is not moved here
        res = request.get("resource") or {}
        part = next((p for p in list(self.sharder.shard.partitions.values())
                     if (p.info.group, p.info.resource) == (res.get("group", ""), res.get("resource"))), None)
        if part is None or not meta.get_name(obj):
            return allowed
        namespace = meta.get_namespace(obj) or str(request.get("namespace") or "")
        try:
            shard = self.sharder.key_owner(part, obj, namespace, self._current())
        except Exception as err:  # a failed Lease list: the controller path assigns it later
            log.error("Sharder webhook could not read the ring", ring=self.sharder.shard.ring,
                      error=f"{type(err).__name__}: {err}")
            return allowed
        if not shard:
            return allowed
        ops: list[dict[str, Any]] = []
        if not isinstance((obj.get("metadata") or {}).get("labels"), dict):
            ops.append({"op": "add", "path": "/metadata/labels", "value": {}})
        ops.append({"op": "add", "path": "/metadata/labels/" + label.replace("~", "~0").replace("/", "~1"),
                    "value": shard})
        with self._lock:
            self.assigned += 1
        ASSIGNMENTS.labels(self.sharder.shard.ring).inc()
        return {**allowed, "patchType": "JSONPatch", "patch": base64.b64encode(json.dumps(ops).encode()).decode()}
