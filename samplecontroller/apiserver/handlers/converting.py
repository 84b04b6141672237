"""Requests on custom resources whose CRD converts through a webhook (``conversion.strategy:
Webhook``), as kube-apiserver's CRD handler does them: objects are converted where its storage
codec converts them.

Contract:
- Reads: ``to_version`` gives stored objects (in the storage version, or in an older one they
  were stored in before the storage version changed) in the request's version; one
  ``ConversionReview`` for many objects (a list, a watch's initial state).
- Writes: ``write`` prepares the object in the request's version (a dry run of ``Core`` on the
  stored object converted to that version), converts it to the storage version, stores it
  (``Core.store_converted``, guarded by the resourceVersion it was prepared from: a write in
  between prepares it again) and answers it converted back, as kube-apiserver encodes to and
  decodes from etcd. Dry runs convert both ways too and store nothing. When neither the request
  nor the stored object is in another version than the storage version no webhook is called and
  ``Core`` writes directly.
- Deletes (``crud.delete``) read the object in the request's version first (``stored_view``),
  as kube's store reads it through its codec.
- A conversion failure is ``crdconversion.ConversionError`` (500) and nothing is stored or
  deleted.
- Under ``strategy: None`` (and for built-in kinds) ``to_version`` is ``common.versioned``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from samplecontroller.apiserver import crdconversion
from samplecontroller.apiserver.errors import APIError
from samplecontroller.apiserver.handlers import scale as scale_
from samplecontroller.apiserver.handlers.common import Scope, render, versioned
from samplecontroller.apiserver.httpmessages import Response
from samplecontroller.apiserver.negotiation import Accept
from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.storage import Entry

__all__ = ["Prepare", "respond", "scale", "store", "stored_view", "to_version", "webhook_crd", "write"]

Prepare = Callable[[dict[str, Any] | None, bool], tuple[dict[str, Any], bool, list[str]]]
"""``prepare(old_view, dry_run) -> (object, created, warnings)``: the ``Core`` write of a request,
given the stored object in the request's version (None: let ``Core`` read it)."""

_ATTEMPTS = 5


def webhook_crd(scope: Scope, res: Resource) -> dict[str, Any] | None:
    """The CRD of ``res`` when its objects convert through a webhook, else None."""
    if not res.is_custom:
        return None
    plan = scope.core.crd_plan(res)
    return plan.crd if plan is not None and plan.webhook else None


async def to_version(scope: Scope, res: Resource, objs: list[dict[str, Any]],
                     listed: bool = False) -> list[dict[str, Any]]:
    """``objs`` (objects of ``res`` as stored, or Status objects, left alone) in ``res``'s version
    (``listed``: the items of a list)."""
    crd = webhook_crd(scope, res)
    if crd is None:
        return [versioned(res, obj) if obj.get("kind") == res.kind else obj for obj in objs]
    mine = [i for i, obj in enumerate(objs) if obj.get("kind") == res.kind]
    converted = await scope.converter.convert(crd, [objs[i] for i in mine], res.version, listed)
    out = list(objs)
    for i, obj in zip(mine, converted, strict=True):
        out[i] = obj
    return out


async def scale(scope: Scope, res: Resource, ns: str, name: str, *, body: Any = None,
                patch: tuple[str, bytes] | None = None, manager: str = "", dry_run: bool = False) -> dict[str, Any]:
    """The scale subresource of a custom resource converted by a webhook: the Scale of the object
    in ``res``'s version (get), or set from ``body`` (update) or ``patch`` ((media type, bytes)),
    written as ``write`` writes."""
    if body is None and patch is None:
        return scale_.scale_of(res, (await to_version(scope, res, [scope.core.get(res, ns, name)]))[0])
    if patch is not None:
        current = scale_.scale_of(res, (await to_version(scope, res, [scope.core.get(res, ns, name)]))[0])
        body = scale_.patched_scale(res, current, *patch)

    def prepare(old: dict[str, Any] | None, dry: bool) -> tuple[dict[str, Any], bool, list[str]]:
        new = scale_.scaled_object(scope.core, res, ns, name, body, old)
        return scope.core.update(res, ns, name, new, subresource="scale", manager=manager, dry_run=dry,
                                 field_validation="Ignore", old_view=old)
    obj, _, _ = await write(scope, res, ns, name, prepare, dry_run)
    return scale_.scale_of(res, obj)


async def stored_view(scope: Scope, res: Resource, entry: Entry | None) -> dict[str, Any] | None:
    """The object of ``entry`` in ``res``'s version when that takes the CRD's conversion webhook
    (None when there is no entry or no webhook: ``Core`` then reads the stored object itself)."""
    crd = webhook_crd(scope, res)
    if entry is None or crd is None or entry.obj.get("apiVersion") == res.group_version:
        return None
    return (await scope.converter.convert(crd, [entry.obj], res.version))[0]


async def store(scope: Scope, res: Resource, prepared: dict[str, Any], expected: Entry | None,
                dry_run: bool) -> dict[str, Any]:
    """Store ``prepared`` (a dry run's result in ``res``'s version) through the conversion webhook,
    guarded by ``expected`` (``Core.store_converted``); the stored object in ``res``'s version."""
    crd = webhook_crd(scope, res)
    assert crd is not None
    stored = (await scope.converter.convert(crd, [prepared], crdconversion.storage_version(crd)))[0]
    obj = stored if dry_run else scope.core.store_converted(res, stored, expected)
    return (await scope.converter.convert(crd, [obj], res.version))[0]


async def respond(scope: Scope, res: Resource, obj: dict[str, Any], accept: Accept, code: int = 200,
                  headers: dict[str, str] | None = None) -> Response:
    """``common.render`` of ``obj`` converted to ``res``'s version first."""
    return render(scope, res, (await to_version(scope, res, [obj]))[0], accept, code, headers)


async def write(scope: Scope, res: Resource, ns: str, name: str, prepare: Prepare,
                dry_run: bool) -> tuple[dict[str, Any], bool, list[str]]:
    """The write ``prepare`` describes, converted as the module docstring says; returns (object in
    ``res``'s version, created, warnings)."""
    crd = webhook_crd(scope, res)
    if crd is None:
        return prepare(None, dry_run)
    stored_as = f"{res.group}/{crdconversion.storage_version(crd)}"
    for _ in range(_ATTEMPTS):
        entry = scope.core.get_entry(res, ns, name) if name else None
        if stored_as == res.group_version and (entry is None or entry.obj.get("apiVersion") == stored_as):
            return prepare(None, dry_run)  # nothing to convert
        old_view = (await scope.converter.convert(crd, [entry.obj], res.version))[0] if entry else None
        prepared, created, warnings = prepare(old_view, True)
        if old_view is not None and prepared is old_view:
            return old_view, False, warnings  # no change
        try:
            return await store(scope, res, prepared, None if created else entry, dry_run), created, warnings
        except APIError as err:
            if err.code == 409 and err.status.get("reason") == "Conflict":
                continue  # written meanwhile: prepare it again from the new object
            raise
    raise APIError(409, "Conflict", f'Operation cannot be fulfilled on {res.group_resource} "{name}": '
                   "the object kept changing while it was converted; please retry")
