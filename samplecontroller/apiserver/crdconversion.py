"""Conversion of custom resources between the versions of their CRD, as apiextensions-apiserver's
``conversion`` package does it (converter.go, webhook_converter.go).

Contract:
- ``strategy(crd)``: ``None`` (the default) or ``Webhook``. Under ``None`` a conversion only
  rewrites ``apiVersion``. Under ``Webhook`` every object not already in the desired version is
  sent to the CRD's conversion webhook; objects already in it are not sent (and no call is made
  when none needs converting).
- ``Converter.convert(crd, objs, version)`` converts a list in one ``ConversionReview`` (the
  first of ``conversionReviewVersions`` this server speaks: v1 or v1beta1), over the shared
  ``webhookclient`` (``clientConfig.url`` + ``caBundle``; ``service``: see there), with kube's fixed
  30 s timeout (``Converter.timeout``).
- The answer is checked as kube-apiserver checks it: a v1 review must be a
  ``apiextensions.k8s.io/v1`` ``ConversionReview`` with the request's ``uid``;
  ``result.status`` must be ``Success`` (else its ``message`` is the error); as many objects as
  were sent; each in the desired group/version and of the same kind; the same name, namespace and
  UID; then every other metadata field is restored from the original, keeping the webhook's
  labels and annotations (which must be valid). The converted objects are pruned by the desired
  version's schema (kube's schema-coercing converter).
- Every failure is ``ConversionError``: HTTP 500 with no reason (kube passes the converter's
  error through as a plain error), message ``conversion webhook for <group>/<version>, Kind=<Kind>
  failed: ...`` (or ``returned invalid metadata: ...`` and kube's other texts), naming the
  version the objects are converted from.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from samplecontroller.apiserver.errors import APIError
from samplecontroller.apiserver.objects import copy_json
from samplecontroller.apiserver.schema import prune
from samplecontroller.apiserver.validation import validate_annotations, validate_labels
from samplecontroller.apiserver.webhookclient import WebhookCallError, WebhookClient

__all__ = ["DEFAULT_TIMEOUT", "REVIEW_VERSIONS", "ConversionError", "Converter", "storage_version", "strategy"]

DEFAULT_TIMEOUT = 30.0
"""kube-apiserver's conversion webhook timeout (the webhook client manager's; not configurable)."""
REVIEW_VERSIONS = ("v1", "v1beta1")
"""The ConversionReview versions this server speaks, as kube-apiserver 1.17+."""


class ConversionError(APIError):
    """A failed conversion: 500 with kube's message and no reason."""

    def __init__(self, message: str) -> None:
        super().__init__(500, "", message)
        self.status.pop("reason", None)


def strategy(crd: dict[str, Any] | None) -> str:
    """The CRD's ``spec.conversion.strategy`` (``None`` when unset)."""
    conversion = ((crd or {}).get("spec") or {}).get("conversion")
    return str((conversion or {}).get("strategy") or "None") if isinstance(conversion, dict) else "None"


def storage_version(crd: dict[str, Any]) -> str:
    """The name of the CRD's storage version ("" when it has none)."""
    for version in (crd.get("spec") or {}).get("versions") or ():
        if isinstance(version, dict) and version.get("storage"):
            return str(version.get("name") or "")
    return ""


def _go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String()`` for whole seconds or milliseconds."""
    return f"{int(seconds)}s" if seconds == int(seconds) else f"{round(seconds * 1000)}ms"


def _gvk(obj: dict[str, Any]) -> str:
    """Go's ``schema.GroupVersionKind.String()`` of ``obj``."""
    return f"{obj.get('apiVersion', '')}, Kind={obj.get('kind', '')}"


def _go_json_error(raw: bytes) -> str:
    """What the rest client's decoder says about a body that is not a JSON object."""
    try:
        value = json.loads(raw)
    except UnicodeDecodeError:
        return "couldn't get version/kind; json parse error: invalid character looking for beginning of value"
    except json.JSONDecodeError as err:
        if not raw.strip() or err.pos >= len(raw.rstrip()):
            return "couldn't get version/kind; json parse error: unexpected end of JSON input"
        char = raw.decode("utf-8", "replace")[err.pos]
        return f"couldn't get version/kind; json parse error: invalid character '{char}' looking for beginning of value"
    return f"couldn't get version/kind; json parse error: json: cannot unmarshal {type(value).__name__} into Go value " \
           "of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }"


def _http_error(status: int, raw: bytes) -> str:
    """The rest client's error for a non-2xx answer without a Status body."""
    if status == 404:
        return "the server could not find the requested resource"
    text = raw.decode("utf-8", "replace").strip()
    if status >= 500 and text:
        return f'an error on the server ("{text[:1024]}") has prevented the request from succeeding'
    return f"the server responded with the status code {status} but did not return more information"


class Converter:
    """Converts custom resources between the versions of their CRD (see the module docstring)."""

    def __init__(self, client: WebhookClient, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.client = client
        self.timeout = timeout

    async def convert(self, crd: dict[str, Any], objs: list[dict[str, Any]], version: str,
                      listed: bool = False) -> list[dict[str, Any]]:
        """``objs`` in ``version`` (new dicts where converted; the others as given). ``listed``:
        the items of a list (kube's texts then name each object's index)."""
        target = f"{(crd.get('spec') or {}).get('group', '')}/{version}"
        todo = [i for i, obj in enumerate(objs) if obj.get("apiVersion") != target]
        if not todo:
            return objs
        if strategy(crd) != "Webhook":
            return [obj if obj.get("apiVersion") == target else {**obj, "apiVersion": target} for obj in objs]
        originals = [objs[i] for i in todo]
        converted = await self._call(crd, originals, target, listed or len(originals) > 1)
        out = list(objs)
        for i, obj in zip(todo, converted, strict=True):
            out[i] = obj
        return out

    async def _call(self, crd: dict[str, Any], originals: list[dict[str, Any]], target: str,
                    listed: bool) -> list[dict[str, Any]]:
        gvk = _gvk(originals[0])
        webhook = ((crd.get("spec") or {}).get("conversion") or {}).get("webhook") or {}
        versions = [v for v in webhook.get("conversionReviewVersions") or () if v in REVIEW_VERSIONS]
        if not versions:
            raise ConversionError("no supported conversion review versions")
        review_version = versions[0]
        uid = str(uuid.uuid4())
        review = {"apiVersion": f"apiextensions.k8s.io/{review_version}", "kind": "ConversionReview",
                  "request": {"uid": uid, "desiredAPIVersion": target, "objects": originals}}
        try:
            status, raw = await self.client.post(webhook.get("clientConfig") or {}, review, self.timeout,
                                                 query=f"timeout={_go_duration(self.timeout)}")
        except WebhookCallError as err:
            raise ConversionError(f"conversion webhook for {gvk} failed: {err}") from None
        if not 200 <= status < 300:
            raise ConversionError(f"conversion webhook for {gvk} failed: {_http_error(status, raw)}")
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise ConversionError(f"conversion webhook for {gvk} failed: {_go_json_error(raw)}")
        try:
            objects = _response_objects(review_version, uid, body)
        except ValueError as err:
            raise ConversionError(f"conversion webhook for {gvk} failed: {err}") from None
        if len(objects) != len(originals):
            raise ConversionError(f"conversion webhook for {gvk} returned {len(objects)} objects, "
                                  f"expected {len(originals)}")
        checked = [_checked(gvk, i, original, converted, target, single=not listed)
                   for i, (original, converted) in enumerate(zip(originals, objects, strict=True))]
        version_schema = _schema_of(crd, target.rpartition("/")[2])
        if version_schema is not None:
            for obj in checked:
                prune(obj, version_schema)
        return checked


def _schema_of(crd: dict[str, Any], version: str) -> dict[str, Any] | None:
    for entry in (crd.get("spec") or {}).get("versions") or ():
        if isinstance(entry, dict) and entry.get("name") == version:
            found = (entry.get("schema") or {}).get("openAPIV3Schema")
            return found if isinstance(found, dict) else None
    return None


def _response_objects(review_version: str, uid: str, body: dict[str, Any]) -> list[Any]:
    """The converted objects of a ConversionReview answer (ValueError with kube's text)."""
    if review_version == "v1":
        got = f"{body.get('apiVersion', '')}, Kind={body.get('kind', '')}"
        if (body.get("apiVersion"), body.get("kind")) != ("apiextensions.k8s.io/v1", "ConversionReview"):
            gv, _, kind = got.partition(", ")
            raise ValueError(f"expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got "
                             f"{gv + ', ' + kind if gv else '/, ' + kind}")
    response = body.get("response")
    if not isinstance(response, dict):
        raise ValueError("no response provided")
    if review_version == "v1" and response.get("uid") != uid:
        raise ValueError(f'expected response.uid="{uid}", got "{response.get("uid") or ""}"')
    raw_result = response.get("result")
    result: dict[str, Any] = raw_result if isinstance(raw_result, dict) else {}
    if result.get("status") != "Success":
        if result.get("message"):
            raise ValueError(str(result["message"]))
        raise ValueError(f"response.result.status was '{result.get('status') or ''}', not 'Success'")
    objects = response.get("convertedObjects")
    return list(objects) if isinstance(objects, list) else []


def _checked(gvk: str, index: int, original: dict[str, Any], converted: Any, target: str,
             single: bool) -> dict[str, Any]:
    """``converted`` checked against ``original`` with its metadata restored (kube's checks and texts)."""
    what = "invalid object" if single else "invalid converted object"
    at = "at index 0" if single else f"at index {index}"
    if not isinstance(converted, dict):
        raise ConversionError(f"conversion webhook for {gvk} returned {what} {at}: Object 'Kind' is missing in "
                              f"'{json.dumps(converted)}'")
    if converted.get("apiVersion") != target:
        raise ConversionError(f"conversion webhook for {gvk} returned {what} {at}: invalid groupVersion "
                              f"(expected {target}, received {converted.get('apiVersion', '')})")
    if converted.get("kind") != original.get("kind"):
        raise ConversionError(f"conversion webhook for {gvk} returned {what} {at}: invalid kind "
                              f"(expected {original.get('kind')}, received {converted.get('kind', '')})")
    problem = _metadata_mismatch(original, converted)
    if problem:
        prefix = "returned invalid object" if single else f"returned invalid converted object at index {index}"
        raise ConversionError(f"conversion webhook for {gvk} {prefix}: {problem}")
    try:
        return _restore_metadata(original, converted)
    except ValueError as err:
        prefix = "returned invalid metadata" if single else f"returned invalid metadata in object at index {index}"
        raise ConversionError(f"conversion webhook for {gvk} {prefix}: {err}") from None


def _metadata_mismatch(original: dict[str, Any], converted: dict[str, Any]) -> str:
    """validateConvertedObject: kind, name, namespace and UID must not change."""
    raw_before, raw_after = original.get("metadata"), converted.get("metadata")
    before: dict[str, Any] = raw_before if isinstance(raw_before, dict) else {}
    after: dict[str, Any] = raw_after if isinstance(raw_after, dict) else {}
    for key, label in (("name", "name"), ("namespace", "namespace"), ("uid", "UID")):
        if (before.get(key) or "") != (after.get(key) or ""):
            return f"must have the same {label}: {before.get(key) or ''} != {after.get(key) or ''}"
    return ""


def _restore_metadata(original: dict[str, Any], converted: dict[str, Any]) -> dict[str, Any]:
    """restoreObjectMeta: the original's metadata with the converted object's labels and annotations."""
    if "metadata" not in converted:
        raise ValueError("missing metadata in converted object")
    answered = converted["metadata"]
    if not isinstance(answered, dict):
        raise ValueError(f"invalid metadata of type {_go_type(answered)} in converted object")
    meta = copy_json(original.get("metadata") or {})
    for key in ("labels", "annotations"):
        value = answered.get(key)
        if value is None:
            meta.pop(key, None)
            continue
        if not isinstance(value, dict):
            raise ValueError(f"invalid metadata.{key} of type {_go_type(value)} in converted object")
        for k, v in value.items():
            if not isinstance(v, str):
                raise ValueError(f"metadata.{key}[{k}] must be a string, but is {_go_type(v)} in converted object")
        if value != (meta.get(key) or {}):
            errors = validate_labels(value, "metadata.labels") if key == "labels" \
                else validate_annotations(value, "metadata.annotation")
            if errors:
                raise ValueError(_aggregate([str(e) for e in errors]))
        meta[key] = value
    return {**converted, "metadata": meta}


def _aggregate(messages: list[str]) -> str:
    """Go's ``utilerrors.Aggregate`` text."""
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


def _go_type(value: Any) -> str:
    """The Go type ``encoding/json`` decodes ``value`` into."""
    return {bool: "bool", str: "string", list: "[]interface {}", int: "float64", float: "float64",
            dict: "map[string]interface {}"}.get(type(value), "<nil>")
