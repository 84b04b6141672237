"""The handled-state helper (issue 39): kopf's last-handled annotation, old/new/diff, field=."""

from __future__ import annotations

from typing import Any

import pytest

from samplecontroller.client import ResourceClient
from samplecontroller.foo_reconciler import SCHEME
from samplecontroller.kubernetes.apis.core.v1 import ConfigMap
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.kubernetes.clientset import Clientset
from samplecontroller.runtime import handled
from samplecontroller.runtime.client import Client
from tests.live import ns, rest

__all__ = ["ns", "rest"]


def test_create_update_resume_and_field_changes(rest: Any, ns: str) -> None:
    cms = Clientset(rest).core_v1().configmaps(ns)
    client = Client(lambda info, n: ResourceClient(rest, info, n), None, scheme=SCHEME)
    last = handled.LastHandled("example.com/last-handled")
    cm = cms.create(ConfigMap(metadata=ObjectMeta(name="h", namespace=ns, labels={"a": "1"}), data={"size": "1"}))
    created = last.change(cm)
    assert (created.reason, created.old) == (handled.CREATE, None)
    assert created.new == {"data": {"size": "1"}, "metadata": {"labels": {"a": "1"}}}
    assert ("add", (), None, created.new) in created.diff
    cm = last.mark(client, cm)
    assert not last.change(cm), "marked and already seen: nothing to do"
    assert handled.LastHandled("example.com/last-handled").change(cm).reason == handled.RESUME, "a restart"
    cm = cms.patch("h", {"data": {"size": "2", "extra": "x"}, "status": None})
    update = last.change(cm)
    assert update.reason == handled.UPDATE
    assert update.diff == (("add", ("data", "extra"), None, "x"), ("change", ("data", "size"), "1", "2"))
    size = last.change(cm, field="data.size")
    assert (size.reason, size.old, size.new, size.diff) == (handled.UPDATE, "1", "2", (("change", (), "1", "2"),))
    assert not last.change(cm, field="metadata.labels")
    cm = last.mark(client, cm)
    assert not last.change(cm) and last.recorded(cm) == {"data": {"extra": "x", "size": "2"},
                                                         "metadata": {"labels": {"a": "1"}}}
    assert last.mark(client, cm) is cm, "nothing to write"


def test_a_handler_marks_a_permanent_failure_and_releases_a_deletion(rest: Any, ns: str) -> None:
    from samplecontroller.runtime.reconcile import PermanentError, Request, TerminalError
    from samplecontroller.runtime.reconcile.context import Contexts

    cms = Clientset(rest).core_v1().configmaps(ns)
    client = Client(lambda info, n: ResourceClient(rest, info, n), None, scheme=SCHEME)
    calls: list[str | None] = []

    def fn(obj: ConfigMap, change: handled.Change) -> None:
        calls.append(change.reason)
        raise PermanentError("no")

    h = handled.Handler(client, ConfigMap, fn, on=(handled.CREATE, handled.DELETE), finalizer="example.com/h")
    cms.create(ConfigMap(metadata=ObjectMeta(name="p", namespace=ns)))
    request = Request(ns, "p")
    for _ in range(2):
        with Contexts("h").entered(request, 0), pytest.raises(TerminalError):
            h.reconcile(request)
        if calls == [handled.CREATE]:
            assert h.reconcile(request).is_zero(), "marked: the same change is not handled again"
            cms.delete("p")
    assert calls == [handled.CREATE, handled.DELETE]
    assert "p" not in [c.metadata.name for c in cms.list().items], "the finalizer released after a permanent failure"
    with pytest.raises(ValueError, match="needs finalizer"):
        handled.Handler(client, ConfigMap, fn, on=handled.DELETE)
