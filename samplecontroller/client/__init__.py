"""Clients: the typed ``ResourceClient``, the ``Scheme`` registry and the client seam types."""

from samplecontroller.client.resource import ResourceClient, ResourceListerWatcher, ResourceWatch
from samplecontroller.client.scheme import Scheme
from samplecontroller.client.types import (
    ListerWatcher,
    ListOptions,
    ListResult,
    ResourceInfo,
    Watch,
    WatchEvent,
)

__all__ = [
    "ListOptions",
    "ListResult",
    "ListerWatcher",
    "ResourceClient",
    "ResourceInfo",
    "ResourceListerWatcher",
    "ResourceWatch",
    "Scheme",
    "Watch",
    "WatchEvent",
]
