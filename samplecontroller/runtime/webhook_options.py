"""How the API server calls a webhook, declared in code (controller-tools' ``+kubebuilder:webhook``
marker): ``WebhookOptions`` and what ``runtime.webhook.WebhookBuilder`` records, ``WebhookDeclaration``.

Outside ``runtime.webhook`` so that ``samplecontroller.manifests`` and the scaffold read them
without the ``webhook`` extra (the webhook server's aiohttp and cryptography);
``runtime.webhook`` re-exports both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["WebhookDeclaration", "WebhookOptions"]


@dataclass(frozen=True)
class WebhookOptions:
    """How the API server calls one admission webhook: controller-tools' ``+kubebuilder:webhook``
    marker, declared where the webhook is registered (``with_defaulter(d, options=...)``,
    ``with_validator(v, options=...)``) and written by ``python -m samplecontroller.manifests``
    into the project's webhook configuration. The defaults are kubebuilder's scaffold's.

    - ``name``: the webhook's name (default ``m<kind>-<version>.<group>`` for a defaulter,
      ``v<kind>-<version>.<group>`` for a validator, kind lower case).
    - ``failure_policy``: ``Fail`` or ``Ignore`` (an unreachable or failing webhook).
    - ``match_policy``: ``Equivalent`` or ``Exact``; None leaves it out (the API server's default,
      ``Equivalent``: a request in another version of the kind is converted and sent too).
    - ``side_effects``: ``None`` or ``NoneOnDryRun``.
    - ``timeout_seconds``: 1 to 30; None leaves it out (10).
    - ``verbs``: the operations (``create``, ``update``, ``delete``, ``connect``).
    - ``namespace_selector``, ``object_selector``: label selectors (dicts), None for all.
    - ``reinvocation_policy``: ``Never`` or ``IfNeeded`` (defaulters only); None leaves it out.
    - ``admission_review_versions``: what the handler reads (``v1``).
    """

    name: str = ""
    failure_policy: str = "Fail"
    match_policy: str | None = None
    side_effects: str = "None"
    timeout_seconds: int | None = None
    verbs: tuple[str, ...] = ("create", "update")
    namespace_selector: dict[str, Any] | None = field(default=None, hash=False)
    object_selector: dict[str, Any] | None = field(default=None, hash=False)
    reinvocation_policy: str | None = None
    admission_review_versions: tuple[str, ...] = ("v1",)

    def checked(self, what: str) -> WebhookOptions:
        """Self, or ValueError naming the option that the API server would refuse."""
        allowed = {"failure_policy": ("Fail", "Ignore"), "match_policy": (None, "Equivalent", "Exact"),
                   "side_effects": ("None", "NoneOnDryRun"), "reinvocation_policy": (None, "Never", "IfNeeded")}
        for key, values in allowed.items():
            if getattr(self, key) not in values:
                raise ValueError(f"{what}: {key}={getattr(self, key)!r} is not one of "
                                 f"{[v for v in values if v is not None]}")
        if self.timeout_seconds is not None and not 1 <= self.timeout_seconds <= 30:
            raise ValueError(f"{what}: timeout_seconds={self.timeout_seconds} is not between 1 and 30")
        bad = [v for v in self.verbs if v not in ("create", "update", "delete", "connect", "*")]
        if bad or not self.verbs:
            raise ValueError(f"{what}: verbs {list(self.verbs)!r}: use create, update, delete, connect or *")
        return self


@dataclass(frozen=True)
class WebhookDeclaration:
    """One webhook ``WebhookBuilder.complete`` registered: what ``samplecontroller.manifests`` writes.
    ``type`` is ``mutating``, ``validating`` or ``conversion`` (``options`` None for the last)."""

    type: str
    group: str
    version: str
    kind: str
    plural: str
    path: str
    options: WebhookOptions | None
