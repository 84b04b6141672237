"""The Foo domain: what a Foo asks for, shared by both Foo controllers.

``samplecontroller.controller`` (client-go style) and ``samplecontroller.foo_reconciler``
(controller-runtime style) differ only in how they are driven; everything about Foos and their
Deployments lives here, once: the names they record and write under, the event reasons and
messages, the Deployment a Foo asks for, who controls a Deployment, the replica and status
arithmetic, the "Deployment not owned" backoff, and the work queue's rate limiter.

Contracts (the improvements over Go's sample-controller that both controllers share):

- An unset replicas never crashes: an unset Deployment ``spec.replicas`` counts as the API
  default, 1; an unset Foo ``spec.replicas`` means "leave the Deployment's replicas alone".
- Control is matched on UID, API group and kind, not kind alone.
- The Foo's status is rewritten only when ``availableReplicas`` changed, and then with
  ``status_patch``: a JSON merge patch for the status subresource carrying only the field the
  controllers own and no resourceVersion. Status is derived from the live Deployment, so there is
  nothing for an optimistic lock to protect, while a PUT of the cached Foo conflicts whenever the
  cache lags the Foo's previous status write (every new Foo did, once).
- A Deployment that is not the Foo's is warned about once per new situation (a new Foo
  generation or a new Deployment resourceVersion), and retried with a capped exponential backoff.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Any, TypeVar

import msgspec

from generated.apis.samplecontroller.v1alpha1 import Foo
from samplecontroller.apimachinery import errors, meta, ownerreferences
from samplecontroller.kubernetes.apis.apps.v1 import Deployment, DeploymentSpec
from samplecontroller.kubernetes.apis.core.v1 import Container, PodSpec, PodTemplateSpec
from samplecontroller.kubernetes.apis.meta.v1 import LabelSelector, ObjectMeta, OwnerReference
from samplecontroller.record import EVENT_TYPE_WARNING, EventRecorder
from samplecontroller.runtime import rbac
from samplecontroller.workqueue import BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter

K = TypeVar("K", bound=Hashable)

CONTROLLER_AGENT_NAME = "sample-controller"
"""The event source component, as in Go."""
FIELD_MANAGER = CONTROLLER_AGENT_NAME
"""The field manager of every write (server-side field ownership)."""

# Event reasons and messages, as in Go.
SUCCESS_SYNCED = "Synced"
ERR_RESOURCE_EXISTS = "ErrResourceExists"
MESSAGE_RESOURCE_EXISTS = 'Resource "{}" already exists and is not managed by Foo'
MESSAGE_RESOURCE_SYNCED = "Foo synced successfully"
# Not in Go: a Foo without spec.deploymentName is reported on the Foo itself.
ERR_INVALID_SPEC = "InvalidSpec"
MESSAGE_NO_DEPLOYMENT_NAME = "spec.deploymentName must be specified"

FOO_GROUP = "samplecontroller.k8s.io"
FOO_VERSION = "v1alpha1"
FOO_KIND = "Foo"
DEPLOYMENT_NAME_FIELD = "spec.deploymentName"
"""The name of the Foo index by the Deployment a Foo names (see ``deployment_names``)."""


def deployment_names(foo: Any) -> list[str]:
    """``[spec.deploymentName]`` of a Foo, or ``[]`` when it is unset or empty. Never raises,
    whatever ``foo`` is (it is used as an index function over cached objects)."""
    spec = getattr(foo, "spec", None)
    name = getattr(spec, "deployment_name", None)
    return [name] if isinstance(name, str) and name else []


def rate_limiter() -> MaxOfRateLimiter[K]:
    """sample-controller's work queue limiter: the slower of a per-item exponential backoff
    (5 ms doubling up to 1000 s) and an overall bucket of 50 qps with a burst of 300."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(qps=50.0, burst=300),
    )


def foo_replicas(foo: Foo) -> int | None:
    """spec.replicas of the Foo, or None when unset."""
    if foo.spec is msgspec.UNSET or not isinstance(foo.spec.replicas, int):
        return None
    return foo.spec.replicas


def deployment_replicas(deployment: Deployment) -> int:
    """spec.replicas of the Deployment; unset means 1, as the API server defaults it."""
    if deployment.spec is msgspec.UNSET or not isinstance(deployment.spec.replicas, int):
        return 1
    return deployment.spec.replicas


@rbac.rule(groups="apps", resources="deployments", verbs="patch")
def replicas_patch(foo: Foo, deployment: Deployment) -> dict[str, Any] | None:
    """The merge patch that gives ``deployment`` the Foo's replicas, or None when nothing is to
    change (the counts agree, or the Foo leaves replicas unset). Only ``spec.replicas`` is
    touched: other writers' changes to the Deployment survive."""
    desired = foo_replicas(foo)
    if desired is None or desired == deployment_replicas(deployment):
        return None
    return {"spec": {"replicas": desired}}


@rbac.rule(groups="samplecontroller.k8s.io", resources="foos/status", verbs="patch")
def status_patch(foo: Foo, deployment: Deployment) -> dict[str, Any] | None:
    """The JSON merge patch for the Foo's status subresource that sets status.availableReplicas to
    the Deployment's (0 when unset), or None when the Foo's status already says so (no status
    write per resync). It carries no resourceVersion and no other field, so it never conflicts and
    leaves the rest of the status to its other writers."""
    available = 0
    if deployment.status is not msgspec.UNSET and isinstance(deployment.status.available_replicas, int):
        available = deployment.status.available_replicas
    current = foo.status.available_replicas if foo.status is not msgspec.UNSET else msgspec.UNSET
    if current == available:
        return None
    return {"status": {"availableReplicas": available}}


def is_controlled_by(obj: Any, owner: Foo) -> bool:
    """True when ``obj``'s controller reference is this Foo: UID (``ownerreferences.is_controlled_by``),
    API group and kind."""
    ref = ownerreferences.get_controller_of(obj)
    return ref is not None and bool(ref.uid) and ref.uid == meta.get_uid(owner) and is_foo_reference(ref)


def is_foo_reference(ref: meta.OwnerRef) -> bool:
    """True when an owner reference points at a Foo: API group and kind."""
    return ref.kind == FOO_KIND and ref.group == FOO_GROUP


@rbac.rule(groups="apps", resources="deployments", verbs="create")
def new_deployment(foo: Foo) -> Deployment:
    """The Deployment a Foo asks for: named ``spec.deploymentName`` in the Foo's namespace, nginx,
    labelled and selected by app=nginx,controller=<foo>, controlled by the Foo (blockOwnerDeletion),
    with the Foo's replicas (unset when the Foo's are)."""
    labels = {"app": "nginx", "controller": meta.get_name(foo)}
    replicas = foo_replicas(foo)
    names = deployment_names(foo)
    return Deployment(
        metadata=ObjectMeta(
            name=names[0] if names else msgspec.UNSET,
            namespace=meta.get_namespace(foo),
            owner_references=(
                ownerreferences.new_controller_ref(foo, (FOO_GROUP, FOO_VERSION, FOO_KIND), ref_type=OwnerReference),
            ),
        ),
        spec=DeploymentSpec(
            replicas=replicas if replicas is not None else msgspec.UNSET,
            selector=LabelSelector(match_labels=dict(labels)),
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels=dict(labels)),
                spec=PodSpec(containers=(Container(name="nginx", image="nginx:latest"),)),
            ),
        ),
    )


def not_owned_situation(foo: Foo, deployment: Deployment) -> tuple[str, ...]:
    """What identifies a "Deployment not owned" situation: a change of either object is a new one."""
    return (meta.get_uid(foo), str(meta.get_generation(foo)), meta.get_uid(deployment),
            meta.get_resource_version(deployment))


class NotOwnedBackoff:
    """Per-key memory of the "Deployment not owned" situation. Thread-safe.

    ``observe`` says whether the situation is new (so a Warning is due) and returns the delay
    before the next retry: ``base * 2**n`` capped at ``cap``, reset whenever the situation changes.
    """

    def __init__(self, base: float, cap: float) -> None:
        self._base = base
        self._cap = cap
        self._lock = threading.Lock()
        self._state: dict[Hashable, tuple[tuple[str, ...], int]] = {}

    def observe(self, key: Hashable, situation: tuple[str, ...]) -> tuple[bool, float]:
        """(is this situation new for ``key``, seconds before the next retry)."""
        with self._lock:
            previous = self._state.get(key)
            if previous is None or previous[0] != situation:
                self._state[key] = (situation, 1)
                return True, self._base
            attempts = previous[1]
            self._state[key] = (situation, attempts + 1)
            return False, min(self._cap, self._base * (2**attempts))

    def warn(self, key: Hashable, foo: Foo, deployment: Deployment, recorder: EventRecorder) -> float:
        """Record the ErrResourceExists Warning on ``foo`` if this situation is new for ``key``;
        return the seconds before the next retry."""
        is_new, delay = self.observe(key, not_owned_situation(foo, deployment))
        if is_new:
            recorder.event(foo, EVENT_TYPE_WARNING, ERR_RESOURCE_EXISTS,
                           MESSAGE_RESOURCE_EXISTS.format(meta.get_name(deployment)))
        return delay

    def forget(self, key: Hashable) -> None:
        """Drop what is known about ``key`` (its Deployment is owned now, or the Foo is gone)."""
        with self._lock:
            self._state.pop(key, None)


def available_replicas(obj: Any) -> int:
    """``status.availableReplicas`` of a Foo or a Deployment; 0 when unset (as the status patch writes it)."""
    status = getattr(obj, "status", msgspec.UNSET)
    value = getattr(status, "available_replicas", None) if status is not msgspec.UNSET else None
    return value if isinstance(value, int) else 0


def _status_value(foo: Any) -> int | None:
    """A Foo's ``status.availableReplicas`` as written (None when unset, unlike ``available_replicas``)."""
    status = getattr(foo, "status", msgspec.UNSET)
    value = getattr(status, "available_replicas", None) if status is not msgspec.UNSET else None
    return value if isinstance(value, int) else None


MAX_PENDING_STATUS_WRITES = 4
"""Status writes of one Foo whose events ``OwnWrites`` waits for at most (older ones are forgotten)."""


class OwnWrites:
    """What a Foo controller is writing, so that the watch events of its own writes do not sync
    the Foo again (Go's sample-controller syncs once more for each of them, and that sync only
    records another ``Synced`` event). Thread-safe; shared by both controllers.

    The controller calls ``expect_status(foo, n)`` before it patches the Foo's
    ``status.availableReplicas`` to ``n`` and ``expect_created(deployment)`` before it creates a
    Deployment, and ``forget_*`` when that write fails. Its event handlers then ask:

    - ``is_own_status_write(old, new)``: True for the Foo update that carries that status write: a
      new resourceVersion, the same UID and spec, and ``availableReplicas`` changed to the value
      written. A changed spec, a status someone else set to another value, a resync (same
      resourceVersion) and any other update are not; they sync as before.
    - ``is_own_create(deployment)``: True for the Deployment add that carries that create: the
      same name, controlled by the same Foo (UID), with the replicas it was created with and no
      available replicas yet, which is exactly what the creating sync saw. A Deployment listed
      later in another state (a re-list, the simulator's status) is not.

    Each expectation is consumed by the event that answers it (a status write's event also
    consumes those of the earlier status writes it overtook: a Foo's cache may lag its writes), or
    dropped by the first event of that object that does not match (the write's own event was
    missed, e.g. across a re-list). Only events are filtered: a sync's outcome never depends on this memory, so a
    missed match costs one more sync, never a lost one.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._status: dict[tuple[str, str], list[tuple[str, int]]] = {}
        self._created: dict[tuple[str, str], tuple[str, int | None]] = {}

    def expect_status(self, foo: Foo, available: int) -> None:
        """The controller is about to set ``foo``'s ``status.availableReplicas`` to ``available``
        (after any status writes announced before whose events are still due)."""
        key = (meta.get_namespace(foo), meta.get_name(foo))
        with self._lock:
            pending = self._status.setdefault(key, [])
            pending.append((meta.get_uid(foo), available))
            del pending[:-MAX_PENDING_STATUS_WRITES]

    def forget_status(self, foo: Foo) -> None:
        """The status write announced for ``foo`` failed (or no longer matters)."""
        with self._lock:
            self._status.pop((meta.get_namespace(foo), meta.get_name(foo)), None)

    def is_own_status_write(self, old: Any, new: Any) -> bool:
        """True when the update ``old`` -> ``new`` of a Foo is this controller's announced status
        write and nothing a sync reads changed with it (see the class docstring)."""
        key = (meta.get_namespace(new), meta.get_name(new))
        with self._lock:
            pending = self._status.get(key)
            if pending is None or meta.get_resource_version(old) == meta.get_resource_version(new):
                return False
            written = _status_value(new)
            if _status_value(old) == written:
                return False  # not a status write (e.g. labels): the status write's own event is still due
            try:
                i = pending.index((meta.get_uid(new), written if written is not None else -1))
            except ValueError:
                del self._status[key]  # someone else's status: what was expected is stale
                return False
            del pending[:i + 1]  # this write's event, and those of earlier writes it overtook
            if not pending:
                del self._status[key]
        return meta.get_uid(old) == meta.get_uid(new) and getattr(old, "spec", None) == getattr(new, "spec", None)

    def expect_created(self, deployment: Deployment) -> None:
        """The controller is about to create ``deployment`` (controlled by its Foo)."""
        ref = ownerreferences.get_controller_of(deployment)
        replicas = deployment.spec.replicas if deployment.spec is not msgspec.UNSET else None
        with self._lock:
            self._created[(meta.get_namespace(deployment), meta.get_name(deployment))] = (
                ref.uid if ref is not None else "", replicas if isinstance(replicas, int) else None)

    def forget_created(self, deployment: Deployment) -> None:
        """The create announced for ``deployment`` failed."""
        with self._lock:
            self._created.pop((meta.get_namespace(deployment), meta.get_name(deployment)), None)

    def create_failed(self, deployment: Deployment, err: BaseException, *, sharded: bool) -> bool:
        """The create announced for ``deployment`` failed with ``err`` (it is forgotten): whether
        the caller reads that Deployment from the API server and goes on with it instead of
        raising ``err``. Only AlreadyExists on a shard (``sharded``): a Deployment that exists
        unassigned and is not a Foo's is outside the shard's label-selected cache, so the create
        meets it; read, it takes the unsharded not-owned path (the ErrResourceExists Warning and
        backed-off retries). Unsharded, AlreadyExists is a lagging cache: raised, retried. Shared
        by the sync, async and classic styles."""
        self.forget_created(deployment)
        return sharded and isinstance(err, errors.AlreadyExistsError)

    def is_own_create(self, deployment: Any) -> bool:
        """True when a Deployment add is this controller's announced create, still in the state the
        creating sync saw (see the class docstring)."""
        key = (meta.get_namespace(deployment), meta.get_name(deployment))
        with self._lock:
            expected = self._created.pop(key, None)
        if expected is None:
            return False
        ref = ownerreferences.get_controller_of(deployment)
        uid, replicas = expected
        return (ref is not None and bool(uid) and ref.uid == uid and available_replicas(deployment) == 0
                and (replicas is None or deployment_replicas(deployment) == replicas))

    def forget(self, namespace: str, name: str) -> None:
        """Drop the expectations about the Foo ``namespace/name`` (it was deleted)."""
        with self._lock:
            self._status.pop((namespace, name), None)

    def __len__(self) -> int:
        """The writes whose events are still expected."""
        with self._lock:
            return sum(map(len, self._status.values())) + len(self._created)
