"""Patches as kube-apiserver applies them: JSON patch (at most ``MAX_JSON_PATCH_OPERATIONS``
operations), JSON merge patch and strategic merge patch (built-in kinds only)."""

from __future__ import annotations

from typing import Any

from samplecontroller.apimachinery.jsonpatch import PatchError
from samplecontroller.apimachinery.jsonpatch import apply_patch as apply_json_patch
from samplecontroller.apimachinery.mergepatch import apply_merge_patch
from samplecontroller.apimachinery.strategicpatch import apply_strategic_merge_patch
from samplecontroller.apiserver import bodies
from samplecontroller.apiserver.errors import APIError, bad_request
from samplecontroller.apiserver.negotiation import (
    PATCH_APPLY,
    PATCH_JSON,
    PATCH_MERGE,
    PATCH_STRATEGIC,
    decode_body,
)
from samplecontroller.apiserver.restmapper import Resource

__all__ = ["MAX_JSON_PATCH_OPERATIONS", "apply_patch", "require_object"]

MAX_JSON_PATCH_OPERATIONS = 10_000


def require_object(body: Any) -> dict[str, Any]:
    """``body`` if it is a JSON object; 400 otherwise."""
    if not isinstance(body, dict):
        raise bad_request("the request body must be a JSON object")
    return body


def apply_patch(res: Resource, patch_type: str, raw: bytes, current: dict[str, Any],
                definition: str | None) -> dict[str, Any]:
    """``current`` with the JSON, merge or strategic merge patch ``raw`` applied (``definition``:
    the OpenAPI definition strategic merge reads its patch strategies from); 400/413/415/422
    as kube-apiserver answers a bad patch. ``current`` is the caller's copy: a merge patch is
    applied to it in place."""
    if patch_type == PATCH_STRATEGIC and res.is_custom:
        raise APIError(415, "UnsupportedMediaType",
                       "the body of the request was in an unknown format - accepted media types include: "
                       f"{PATCH_JSON}, {PATCH_MERGE}, {PATCH_APPLY}")
    if patch_type not in (PATCH_JSON, PATCH_MERGE, PATCH_STRATEGIC):
        raise APIError(415, "UnsupportedMediaType",
                       "the body of the request was in an unknown format - accepted media types include: "
                       f"{PATCH_JSON}, {PATCH_MERGE}, {PATCH_APPLY}"
                       + ("" if res.is_custom else f", {PATCH_STRATEGIC}"))
    body = decode_body(raw, "application/json")
    try:
        if patch_type == PATCH_JSON:
            if not isinstance(body, list):
                raise bad_request("json patch must be a JSON array of operations")
            if len(body) > MAX_JSON_PATCH_OPERATIONS:
                raise APIError(413, "RequestEntityTooLarge", "Request entity too large: The allowed maximum "
                               f"operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {len(body)}")
            out = apply_json_patch(current, body, max_copy_bytes=bodies.MAX_BODY_BYTES)
        elif patch_type == PATCH_MERGE:
            out = apply_merge_patch(current, require_object(body), in_place=True)
        else:
            out = apply_strategic_merge_patch(current, require_object(body), definition)
    except APIError:
        raise
    except PatchError as err:
        raise APIError(422, "Invalid", f"the server rejected our request due to an error in our request: {err}") from None
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError) as err:
        raise bad_request(f"error applying patch: {err}") from None
    if not isinstance(out, dict):
        raise bad_request("the patch did not produce a JSON object")
    return out
