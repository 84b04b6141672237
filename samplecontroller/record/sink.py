"""``ResourceEventSink``: writes Events through a ResourceClient of core/v1 events (plain dicts).

Like client-go's typed EventSinkImpl: create and update in the event's own namespace, and
patch the earlier event by name with a strategic merge patch.
"""

from __future__ import annotations

from typing import Any

from samplecontroller.client.resource import ResourceClient
from samplecontroller.client.types import STRATEGIC_MERGE_PATCH, ResourceInfo
from samplecontroller.rest import RESTClient

EVENTS: ResourceInfo[dict[str, Any]] = ResourceInfo(
    group="", version="v1", resource="events", kind="Event", namespaced=True, model=dict, list_model=dict,
    list_kind="EventList", strategic_merge=True,
)


class ResourceEventSink:
    """An ``EventSink`` over the API. Errors are the ResourceClient's (StatusError subclasses or transport errors)."""

    def __init__(self, rest: RESTClient) -> None:
        self.rest = rest

    @classmethod
    def for_rest_client(cls, rest: RESTClient) -> ResourceEventSink:
        """A sink writing core/v1 Events through ``rest`` (a ``RESTClient``)."""
        return cls(rest)

    def _client(self, event: dict[str, Any]) -> ResourceClient[dict[str, Any], dict[str, Any]]:
        return ResourceClient(self.rest, EVENTS, (event.get("metadata") or {}).get("namespace") or "default")

    def create(self, event: dict[str, Any]) -> dict[str, Any]:
        return self._client(event).create(event)

    def update(self, event: dict[str, Any]) -> dict[str, Any]:
        return self._client(event).update(event)

    def patch(self, event: dict[str, Any], data: bytes) -> dict[str, Any]:
        return self._client(event).patch(event["metadata"]["name"], data, STRATEGIC_MERGE_PATCH)


__all__ = ["EVENTS", "ResourceEventSink"]
