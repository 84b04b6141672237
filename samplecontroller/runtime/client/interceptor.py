"""A Client whose calls can be intercepted, as controller-runtime's pkg/client/interceptor.

``new_client(client, Funcs(get=..., update=...))`` returns a ``Client`` that calls the function
given for a method instead of the method; every function receives the wrapped (un-intercepted)
``client`` first, then the method's own arguments (positionally as the method takes them, options
as keywords), and returns what the method would, or raises. Methods without a function go to
``client`` unchanged. Typical test use, a conflict on the first status write::

    calls = 0
    def status_update(client: Client, subresource: str, obj: Any, /, **options: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            name = meta.get_name(obj)
            raise errors.new_conflict("samplecontroller.k8s.io", "foos", name, "stale")
        return client.status().update(obj, **options)

    c = new_client(fake_client, Funcs(sub_resource_update=status_update))

``apply`` is a ``patch`` with an ``Apply`` patch (so ``patch`` intercepts it too), and
``create_or_update``/``create_or_patch`` go through the intercepted ``get``/``create``/``update``/
``patch``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from samplecontroller.apimachinery import labels
from samplecontroller.runtime.client import Client, Patch, StatusWriter

__all__ = [
    "CreateFunc", "DeleteAllOfFunc", "DeleteFunc", "Funcs", "GetFunc", "ListFunc", "PatchFunc",
    "SubResourcePatchFunc", "SubResourceUpdateFunc", "UpdateFunc", "new_client",
]

T = TypeVar("T")


class GetFunc(Protocol):
    """``client.get(model, namespace, name)`` arrives as ``(client, model, namespace, name)``."""

    def __call__(self, client: Client, model: type[Any], namespace: str, name: str, /) -> Any: ...


class ListFunc(Protocol):
    """``client.list(model, **options)`` arrives as ``(client, model, **options)``."""

    def __call__(self, client: Client, model: type[Any], /, **options: Any) -> list[Any]: ...


class CreateFunc(Protocol):
    """``client.create(obj, **options)`` arrives as ``(client, obj, **options)``."""

    def __call__(self, client: Client, obj: Any, /, **options: Any) -> Any: ...


class UpdateFunc(Protocol):
    """``client.update(obj, **options)`` arrives as ``(client, obj, **options)``."""

    def __call__(self, client: Client, obj: Any, /, **options: Any) -> Any: ...


class PatchFunc(Protocol):
    """``client.patch(obj, patch, **options)`` (and ``apply``) arrives as ``(client, obj, patch, **options)``."""

    def __call__(self, client: Client, obj: Any, patch: Patch, /, **options: Any) -> Any: ...


class DeleteFunc(Protocol):
    """``client.delete(obj, **options)`` arrives as ``(client, obj, **options)``."""

    def __call__(self, client: Client, obj: Any, /, **options: Any) -> None: ...


class DeleteAllOfFunc(Protocol):
    """``client.delete_all_of(model, **options)`` arrives as ``(client, model, **options)``."""

    def __call__(self, client: Client, model: type[Any], /, **options: Any) -> None: ...


class SubResourceUpdateFunc(Protocol):
    """``status().update(obj)`` arrives as ``(client, "status", obj, **options)``."""

    def __call__(self, client: Client, subresource: str, obj: Any, /, **options: Any) -> Any: ...


class SubResourcePatchFunc(Protocol):
    """``status().patch(obj, patch)`` arrives as ``(client, "status", obj, patch, **options)``."""

    def __call__(self, client: Client, subresource: str, obj: Any, patch: Patch, /, **options: Any) -> Any: ...


@dataclass(frozen=True)
class Funcs:
    """The functions to call instead of the client's methods (None: call the method)."""

    get: GetFunc | None = None
    list: ListFunc | None = None
    create: CreateFunc | None = None
    update: UpdateFunc | None = None
    patch: PatchFunc | None = None
    delete: DeleteFunc | None = None
    delete_all_of: DeleteAllOfFunc | None = None
    sub_resource_update: SubResourceUpdateFunc | None = None
    sub_resource_patch: SubResourcePatchFunc | None = None


class _InterceptedClient(Client):
    """``Client`` over ``inner``'s client_for, cache and scheme, calling ``funcs`` first."""

    def __init__(self, inner: Client, funcs: Funcs) -> None:
        super().__init__(inner.client_for, inner.cache, scheme=inner.scheme, field_owner=inner.field_owner)
        self.inner = inner
        self.funcs = funcs

    def get(self, model: type[T], namespace: str, name: str) -> T:
        if self.funcs.get is None:
            return self.inner.get(model, namespace, name)
        got: T = self.funcs.get(self.inner, model, namespace, name)
        return got

    def list(self, model: type[T], *, namespace: str | None = None,
             label_selector: labels.Selector | str | Mapping[str, str] | None = None,
             matching_fields: Mapping[str, str] | None = None) -> list[T]:
        if self.funcs.list is None:
            return self.inner.list(model, namespace=namespace, label_selector=label_selector,
                                   matching_fields=matching_fields)
        return self.funcs.list(self.inner, model, namespace=namespace, label_selector=label_selector,
                               matching_fields=matching_fields)

    def create(self, obj: T, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        if self.funcs.create is None:
            return self.inner.create(obj, dry_run=dry_run, field_owner=field_owner)
        created: T = self.funcs.create(self.inner, obj, dry_run=dry_run, field_owner=field_owner)
        return created

    def update(self, obj: T, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        if self.funcs.update is None:
            return self.inner.update(obj, dry_run=dry_run, field_owner=field_owner)
        updated: T = self.funcs.update(self.inner, obj, dry_run=dry_run, field_owner=field_owner)
        return updated

    def patch(self, obj: T, patch: Patch, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        if self.funcs.patch is None:
            return self.inner.patch(obj, patch, dry_run=dry_run, field_owner=field_owner)
        patched: T = self.funcs.patch(self.inner, obj, patch, dry_run=dry_run, field_owner=field_owner)
        return patched

    def delete(self, obj: Any, *, propagation_policy: str | None = None,
               preconditions: Mapping[str, str] | None = None, grace_period_seconds: int | None = None,
               dry_run: bool = False) -> None:
        options: dict[str, Any] = {"propagation_policy": propagation_policy, "preconditions": preconditions,
                                   "grace_period_seconds": grace_period_seconds, "dry_run": dry_run}
        if self.funcs.delete is None:
            self.inner.delete(obj, **options)
        else:
            self.funcs.delete(self.inner, obj, **options)

    def delete_all_of(self, model: type[Any], *, namespace: str | None = None,
                      label_selector: str | Mapping[str, str] | None = None,
                      field_selector: str | None = None, propagation_policy: str | None = None) -> None:
        options: dict[str, Any] = {"namespace": namespace, "label_selector": label_selector,
                                   "field_selector": field_selector, "propagation_policy": propagation_policy}
        if self.funcs.delete_all_of is None:
            self.inner.delete_all_of(model, **options)
        else:
            self.funcs.delete_all_of(self.inner, model, **options)

    def status(self) -> StatusWriter:
        return _InterceptedStatusWriter(self)


class _InterceptedStatusWriter(StatusWriter):
    def __init__(self, client: _InterceptedClient) -> None:
        super().__init__(client)
        self.intercepted = client

    def update(self, obj: T, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        c = self.intercepted
        if c.funcs.sub_resource_update is None:
            return c.inner.status().update(obj, dry_run=dry_run, field_owner=field_owner)
        updated: T = c.funcs.sub_resource_update(c.inner, "status", obj, dry_run=dry_run, field_owner=field_owner)
        return updated

    def patch(self, obj: T, patch: Patch, *, dry_run: bool = False, field_owner: str | None = None) -> T:
        c = self.intercepted
        if c.funcs.sub_resource_patch is None:
            return c.inner.status().patch(obj, patch, dry_run=dry_run, field_owner=field_owner)
        patched: T = c.funcs.sub_resource_patch(c.inner, "status", obj, patch, dry_run=dry_run,
                                                field_owner=field_owner)
        return patched


def new_client(client: Client, funcs: Funcs) -> Client:
    """``client`` with its calls going to ``funcs`` where given (see the module doc)."""
    return _InterceptedClient(client, funcs)
