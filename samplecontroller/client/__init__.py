"""Clients: the typed ``ResourceClient``, the dict-based ``DynamicClient``, the ``Scheme`` registry and the client seam types."""

from samplecontroller.client.dynamic import DynamicClient, NoMatchError
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
    "DynamicClient",
    "NoMatchError",
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
