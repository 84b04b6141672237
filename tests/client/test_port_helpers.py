"""The helpers a port from Go reaches for: metav1.Time, GetReference, RetryOnConflict, Warning headers
and the per-reconcile logger."""

from __future__ import annotations

import io
import logging
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import msgspec
import pytest

from samplecontroller.apimachinery import errors, metatime
from samplecontroller.client import retry
from samplecontroller.client.reference import get_reference
from samplecontroller.kubernetes.apis.core.v1 import ConfigMap, ObjectReference
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.kubernetes.clientset import Clientset
from samplecontroller.kubernetes.scheme import SCHEME
from samplecontroller.rest import RESTClient, warnings
from samplecontroller.runtime import log as runtime_log
from samplecontroller.runtime.reconcile import Request
from tests.live import ns, rest
from tests.runtime.test_integration import started

__all__ = ["ns", "rest", "started"]


# -- metav1.Time -------------------------------------------------------------------------------

def test_time_parse_and_format_as_go() -> None:
    parsed = metatime.parse_time("2024-01-02T03:04:05+02:00")
    assert parsed == datetime(2024, 1, 2, 1, 4, 5, tzinfo=UTC)
    assert metatime.format_time(parsed) == "2024-01-02T01:04:05Z"
    assert metatime.parse_time("2024-01-02T03:04:05.123456789Z") == datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
    assert metatime.format_micro_time(datetime(2024, 1, 2, 3, 4, 5, 7, tzinfo=timezone(timedelta(hours=-1)))) \
        == "2024-01-02T04:04:05.000007Z"
    assert metatime.parse_time(None) is None and metatime.parse_time("") is None and metatime.format_time(None) is None
    assert metatime.parse_time(metatime.now()) is not None
    with pytest.raises(ValueError, match="RFC 3339"):
        metatime.parse_time("yesterday")
    with pytest.raises(ValueError, match="naive"):
        metatime.format_time(datetime(2024, 1, 1))


# -- GetReference ------------------------------------------------------------------------------

def test_get_reference() -> None:
    cm = ConfigMap(metadata=ObjectMeta(name="c", namespace="n", uid="u", resource_version="7"))
    ref = get_reference(cm, SCHEME)
    assert ref == ObjectReference(api_version="v1", kind="ConfigMap", name="c", namespace="n", uid="u",
                                  resource_version="7")
    assert get_reference({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}).kind == "Deployment"
    assert msgspec.json.encode(get_reference({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "x"}})) \
        == b'{"apiVersion":"v1","kind":"Node","name":"x"}'
    with pytest.raises(ValueError, match="no kind"):
        get_reference({"metadata": {"name": "x"}})


# -- RetryOnConflict ---------------------------------------------------------------------------

def test_retry_on_conflict_against_the_server(rest: RESTClient, ns: str) -> None:
    cms = Clientset(rest).core_v1().configmaps(ns)
    cms.create(ConfigMap(metadata=ObjectMeta(name="c"), data={"n": "0"}))
    stale = cms.get("c")
    cms.update(msgspec.structs.replace(stale, data={"n": "1"}))  # someone else wins the race
    attempts: list[str | msgspec.UnsetType] = []

    def bump() -> ConfigMap:
        current = stale if not attempts else cms.get("c")  # the first attempt works on the stale copy
        attempts.append(current.metadata.resource_version)
        return cms.update(msgspec.structs.replace(current, data={"n": str(int((current.data or {})["n"]) + 1)}))

    updated = retry.retry_on_conflict(bump)
    assert (updated.data or {})["n"] == "2" and len(attempts) == 2


def test_retry_gives_up_with_the_last_error_and_passes_others() -> None:
    calls: list[float] = []

    def conflict() -> None:
        raise errors.ConflictError({"code": 409, "reason": "Conflict", "message": "changed"})

    with pytest.raises(errors.ConflictError):
        retry.retry_on_conflict(conflict, retry.Backoff(steps=3, duration=0.01), sleep=calls.append)
    assert calls == [0.01, 0.01]
    calls.clear()

    def other() -> None:
        raise errors.NotFoundError({"code": 404, "reason": "NotFound", "message": "gone"})

    with pytest.raises(errors.NotFoundError):
        retry.retry_on_conflict(other, sleep=calls.append)
    assert calls == []
    assert retry.DEFAULT_RETRY.steps == 5 and retry.DEFAULT_BACKOFF.factor == 5.0


# -- Warning headers ---------------------------------------------------------------------------

def test_warning_headers_are_handed_to_the_handler(rest: RESTClient, ns: str) -> None:
    out = io.StringIO()
    rest.warning_handler = warnings.WarningWriter(out)
    body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"w"},"data":{"a":"b"},"bogus":1}'
    rest.request("POST", f"/api/v1/namespaces/{ns}/configmaps", query={"fieldValidation": "Warn"}, body=body)
    assert out.getvalue() == 'Warning: unknown field "bogus"\n'


def test_warning_header_parsing_and_the_default() -> None:
    assert warnings.parse_warning_header('299 - "a \\"quoted\\" text", 299 kube "two" "Sat, 01 Jan 2000 00:00:00 GMT"') \
        == [(299, "-", 'a "quoted" text'), (299, "kube", "two")]
    assert warnings.parse_warning_header("garbage") == []
    seen: list[str] = []

    class Collect:
        def handle_warning_header(self, code: int, agent: str, text: str) -> None:
            seen.append(text)

    previous = warnings.default_warning_handler()
    warnings.set_default_warning_handler(Collect())
    try:
        warnings.handle_warning_headers({"Warning": '299 - "deprecated"'})
    finally:
        warnings.set_default_warning_handler(previous)
    assert seen == ["deprecated"]


# -- the per-reconcile logger ------------------------------------------------------------------

def test_reconcile_logger_binds_controller_object_and_reconcile_id(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    ids = []
    for _ in range(2):
        with runtime_log.reconcile_scope("cronjob", Request("default", "x"), "batch.example.com", "CronJob"):
            logger = runtime_log.from_context()
            logger.with_values(job="x-1").info("created Job")
            ids.append(logger.values["reconcileID"])
    record: Any = caplog.records[-1]
    kv = record.kv
    assert kv["controller"] == "cronjob" and kv["controllerKind"] == "CronJob" and kv["namespace"] == "default"
    assert kv["name"] == "x" and kv["job"] == "x-1" and len(set(ids)) == 2
    assert runtime_log.from_context().values == {}  # outside a reconcile: the runtime logger


# -- the field indexer -------------------------------------------------------------------------

def test_manager_field_indexer(rest: RESTClient, ns: str, started: Any) -> None:
    from samplecontroller.runtime.manager import Manager, Options

    cms = Clientset(rest).core_v1().configmaps(ns)
    for name, owner in (("a", "x"), ("b", "x"), ("c", "y")):
        cms.create(ConfigMap(metadata=ObjectMeta(name=name), data={"owner": owner}))
    mgr = Manager(rest, scheme=SCHEME, options=Options(namespaces=(ns,)))
    indexer = mgr.get_field_indexer()
    indexer.index_field(ConfigMap, ".data.owner", lambda cm: [(cm.data or {}).get("owner", "")])
    started(mgr)
    found = mgr.get_client().list(ConfigMap, namespace=ns, matching_fields={".data.owner": "x"})
    assert sorted(str(cm.metadata.name) for cm in found) == ["a", "b"]
