"""The seam between clients (real, fake, dynamic) and the machinery that consumes them.

``ResourceInfo`` describes one resource (what the generated code declares per kind);
``ListOptions`` carries list and watch query parameters; ``WatchEvent`` is one decoded watch
event; ``ListerWatcher`` is what a Reflector needs. Clients implement it; the cache consumes it.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar

from msgspec import Struct

T = TypeVar("T")
L_co = TypeVar("L_co", covariant=True)

EventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]
ADDED: EventType = "ADDED"
MODIFIED: EventType = "MODIFIED"
DELETED: EventType = "DELETED"
BOOKMARK: EventType = "BOOKMARK"
ERROR: EventType = "ERROR"


@dataclass(frozen=True)
class ResourceInfo(Generic[T]):
    """One API resource: where it lives on the wire and which model decodes it.

    ``model`` decodes one object and ``list_model`` a List of them (both msgspec Structs for
    generated kinds; ``dict`` for dynamic resources). ``subresources`` names the enabled
    subresources ("status", "scale").
    """

    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool
    model: type[T]
    list_model: type[Any]
    list_kind: str = ""
    singular: str = ""
    short_names: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    # strategic merge patch is only accepted for built-in kinds
    strategic_merge: bool = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> str:
        """The URL path: /api/v1[/namespaces/ns]/resource[/name[/subresource]]."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.resource}"
        if name:
            base += f"/{name}"
            if subresource:
                base += f"/{subresource}"
        return base


@dataclass
class ListOptions:
    """metav1.ListOptions: the query of a list or watch. None means "not sent"."""

    label_selector: str | None = None
    field_selector: str | None = None
    resource_version: str | None = None
    resource_version_match: str | None = None
    limit: int | None = None
    continue_: str | None = None
    timeout_seconds: int | None = None
    allow_watch_bookmarks: bool | None = None
    send_initial_events: bool | None = None

    def to_query(self) -> dict[str, str]:
        """The options as URL query parameters (unset ones left out)."""
        q: dict[str, str] = {}
        if self.label_selector:
            q["labelSelector"] = self.label_selector
        if self.field_selector:
            q["fieldSelector"] = self.field_selector
        if self.resource_version is not None:
            q["resourceVersion"] = self.resource_version
        if self.resource_version_match:
            q["resourceVersionMatch"] = self.resource_version_match
        if self.limit:
            q["limit"] = str(self.limit)
        if self.continue_:
            q["continue"] = self.continue_
        if self.timeout_seconds is not None:
            q["timeoutSeconds"] = str(self.timeout_seconds)
        if self.allow_watch_bookmarks:
            q["allowWatchBookmarks"] = "true"
        if self.send_initial_events is not None:
            q["sendInitialEvents"] = "true" if self.send_initial_events else "false"
        return q


@dataclass(frozen=True)
class WatchEvent(Generic[T]):
    """One watch event. For ERROR, ``object`` is None and ``status`` holds the Status dict."""

    type: EventType
    object: T | None
    status: dict[str, Any] | None = None


@dataclass(frozen=True)
class ListResult(Generic[T]):
    """One page of a list: items plus the ListMeta fields a Reflector needs."""

    items: Sequence[T]
    resource_version: str
    continue_: str = ""
    remaining_item_count: int | None = None


class Watch(Protocol[T]):
    """An open watch: iterate for events; ``stop()`` ends it from any thread (iteration then ends)."""

    def __iter__(self) -> Iterator[WatchEvent[T]]: ...

    def stop(self) -> None:
        """End the watch; safe from any thread and more than once. Iteration then ends."""


class ListerWatcher(Protocol[T]):
    """What a Reflector lists and watches. Errors are raised as apimachinery StatusErrors."""

    def list(self, options: ListOptions) -> ListResult[T]:
        """One page of the list (``options.limit`` and ``options.continue_``), with its resourceVersion."""

    def watch(self, options: ListOptions) -> Watch[T]:
        """Open a watch from ``options.resource_version``; events until it ends or ``stop()``."""


class CreateInterface(Protocol[T]):
    """A create-only resource (the reviews: client-go's ``SubjectAccessReviewInterface``): the
    server answers with the object and its status and stores nothing."""

    @property
    def info(self) -> ResourceInfo[T]: ...

    def create(self, obj: T | dict[str, Any], *, dry_run: bool = False, field_manager: str | None = None,
               field_validation: str | None = None) -> T:
        """Create ``obj``; the server's answer (AlreadyExistsError if the name is taken)."""


class ResourceInterface(CreateInterface[T], Protocol[T, L_co]):
    """The verbs of one resource, as both ``client.ResourceClient[T, L]`` and
    ``testing.FakeResourceClient[T, L]`` have them (client-go's ``DeploymentInterface`` ...):
    what generated clientset interfaces return. See ``ResourceClient`` for the contracts."""

    def get(self, name: str, *, resource_version: str | None = None) -> T:
        """The object ``name`` (NotFoundError if absent); ``resource_version`` "0" allows a cached answer."""

    def list(self, *, label_selector: str | None = None, field_selector: str | None = None, limit: int | None = None,
             continue_: str | None = None, resource_version: str | None = None,
             resource_version_match: str | None = None, timeout_seconds: int | None = None) -> L_co:
        """One list (a page with ``limit``; ``continue_`` for the next), filtered by the selectors."""

    def watch(self, *, resource_version: str | None = None, label_selector: str | None = None,
              field_selector: str | None = None, allow_watch_bookmarks: bool = False,
              timeout_seconds: int | None = None, send_initial_events: bool | None = None,
              resource_version_match: str | None = None) -> Watch[T]:
        """Open a watch of the resource's events from ``resource_version``."""

    def update(self, obj: T | dict[str, Any], *, field_manager: str | None = None, dry_run: bool = False,
               preserve_unknown_fields: bool = False) -> T:
        """Replace the object (PUT); ConflictError if its resourceVersion is stale. The status is ignored."""

    def update_status(self, obj: T | dict[str, Any], *, field_manager: str | None = None,
                      dry_run: bool = False, preserve_unknown_fields: bool = False) -> T:
        """Replace the status subresource (PUT .../status); ConflictError if the resourceVersion is stale."""

    def patch(self, name: str, patch: bytes | dict[str, Any] | builtins.list[Any], patch_type: str = ...,
              *, subresource: str | None = None, field_manager: str | None = None, force: bool | None = None,
              dry_run: bool = False) -> T:
        """Patch the object ``name`` (JSON, merge, strategic merge or apply patch; ``subresource`` "status" for its status)."""

    def apply(self, obj: T | dict[str, Any] | Struct, *, field_manager: str, force: bool = False,
              subresource: str | None = None, dry_run: bool = False) -> T:
        """Server-side apply ``obj`` (a model, an apply configuration or a dict) as ``field_manager``;
        ``force`` takes over conflicting fields."""

    def apply_status(self, obj: T | dict[str, Any] | Struct, *, field_manager: str, force: bool = False,
                     dry_run: bool = False) -> T:
        """Server-side apply of the status subresource."""

    def delete(self, name: str, *, propagation_policy: str | None = None,
               preconditions: Mapping[str, str] | None = None, grace_period_seconds: int | None = None,
               dry_run: bool = False) -> None:
        """Delete the object ``name`` (NotFoundError if absent); finalizers defer the removal."""

    def delete_collection(self, *, label_selector: str | None = None, field_selector: str | None = None,
                          propagation_policy: str | None = None) -> None:
        """Delete every object matching the selectors."""

    def lister_watcher(self) -> ListerWatcher[T]:
        """The ``ListerWatcher`` a Reflector (an informer) lists and watches through."""


JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
