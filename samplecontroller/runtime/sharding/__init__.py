"""Controller sharding on the Kubernetes API alone (timebertt/kubernetes-controller-sharding's
design, inside the Manager): ``manager.Options(shard_ring="NAME")``.

- Each replica holds a shard Lease named after its identity (``holderIdentity`` = the Lease's name;
  default identity: host name plus a random suffix, unique per process), labelled
  ``alpha.sharding.timebertt.dev/controllerring: NAME``, through leader election's machinery:
  the Manager's leader runnables (controllers) run only while it holds its own shard Lease, and
  losing it stops the Manager (as leader election does). There is no single leader.
- Objects are assigned by a label ``shard.alpha.sharding.timebertt.dev/NAME: <identity>``. The
  builder partitions a sharded controller's ``for_`` kind and its ``owns`` kinds: their informers
  select on that label (so a replica caches, watches and reconciles only its objects), the
  reconciler is wrapped (``ShardedReconciler``: nothing for objects not assigned to this replica;
  the drain acknowledgement), and objects of owned kinds this replica creates with a controller
  reference get its label at once (their owner is assigned here, and owned objects follow their
  controller: the hash key of an owned object is its controller's).
- The sharder (``sharder.Sharder``, in every Manager, leader-elected on the Lease ``NAME-sharder``)
  assigns: a consistent-hash ring (``ring.Ring``: 100 tokens per shard) over the live shard Leases;
  the hash key of a main object is ``group/kind/namespace/name``; it assigns unassigned objects
  as they appear (a metadata-only watch of the objects without the label), and on every change
  of membership (and every ``resync_period``) lists the objects' metadata and moves what the new
  ring places elsewhere: from a live shard by draining (label ``drain.alpha.sharding.timebertt.dev/
  NAME``; the shard acknowledges by removing both labels in a reconcile, so it has stopped, and
  releases the owned objects it controls; then the sharder assigns the object anew), from a dead
  shard at once. A shard whose Lease
  expired is taken over by the sharder (it becomes the Lease's holder, guarded by its
  resourceVersion) before its objects move: a replica that still runs stopped its controllers
  at its renew deadline, before the expiry. Owned objects move with their controller, directly.

- With ``Options.shard_webhook`` the sharder also assigns on create, as the anchor's sharder
  does: a mutating webhook (``webhook``) labels an unassigned object in its CREATE (or UPDATE)
  request, so it is assigned before any replica sees it; the watch stays as the fallback for
  what the webhook missed (``failurePolicy: Ignore``: a sharder down never fails a create).

Where this differs from the anchor, and why: the sharder runs in the Managers (elected), not as a
separate deployment; the webhook is an option, off by default, and the watch of unassigned
objects always runs (no TLS and no webhook configuration needed; works against any API server;
the watch's selector keeps its cache to the objects not yet assigned, so its memory does not
grow with the objects; the Scaling out guide gives the figures of both); an expired shard is taken over at its expiry, not one lease duration later; no
ControllerRing resource: the ring is the Manager option and its partitioned kinds are the
controllers' ``for_``/``owns`` kinds. As the anchor, a dead shard's Lease is deleted a minute
after it expired.
"""

from __future__ import annotations

import os
import re
import secrets
import socket

RING_LABEL = "alpha.sharding.timebertt.dev/controllerring"
SHARD_LABEL_PREFIX = "shard.alpha.sharding.timebertt.dev/"
DRAIN_LABEL_PREFIX = "drain.alpha.sharding.timebertt.dev/"
SHARDER_IDENTITY_SUFFIX = "-sharder"

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def shard_label(ring: str) -> str:
    """The label that names the shard an object of ``ring`` is assigned to."""
    return SHARD_LABEL_PREFIX + ring


def drain_label(ring: str) -> str:
    """The label that asks a shard of ``ring`` to let go of an object."""
    return DRAIN_LABEL_PREFIX + ring


def validate_ring_name(ring: str) -> None:
    """ValueError unless ``ring`` can be a label name (a DNS label of at most 63 characters)."""
    if not ring or len(ring) > 63 or not _DNS_LABEL.match(ring):
        raise ValueError(f"shard ring name {ring!r} must be a DNS label (lower case letters, digits and '-', "
                         "at most 63 characters): it is part of the shard and drain label names")


def validate_identity(identity: str) -> None:
    """ValueError unless ``identity`` can name a Lease and be a label value (a DNS label)."""
    if not identity or len(identity) > 63 or not _DNS_LABEL.match(identity):
        raise ValueError(f"shard identity {identity!r} must be a DNS label (lower case letters, digits and '-', "
                         "at most 63 characters): it names the shard Lease and is the shard label's value")


def default_identity() -> str:
    """This process's shard name: $POD_NAME or the host name (as a DNS name), plus a random
    suffix, as client-go's leader election makes identities unique per process."""
    base = (os.environ.get("POD_NAME") or socket.gethostname() or "shard").lower()
    base = re.sub(r"[^a-z0-9-]+", "-", base).strip("-")[:50] or "shard"
    return f"{base}-{secrets.token_hex(4)}"


__all__ = ["DRAIN_LABEL_PREFIX", "RING_LABEL", "SHARD_LABEL_PREFIX", "default_identity", "drain_label",
           "shard_label", "validate_identity", "validate_ring_name"]
