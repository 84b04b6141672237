"""reconcile.context (issue 26 item 3): the retry count a reconcile sees, its [ns/name] logger
that posts Events in one call, and the manager's recorder no longer logging every Event at info."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

from samplecontroller.apimachinery import errors
from samplecontroller.foo_reconciler import SCHEME
from samplecontroller.kubernetes.apis.core.v1 import ConfigMap
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.kubernetes.clientset import Clientset
from samplecontroller.record import FakeRecorder
from samplecontroller.runtime import builder, controller
from samplecontroller.runtime.manager import Manager, Options
from samplecontroller.runtime.reconcile import Request, Result, TerminalError
from samplecontroller.runtime.reconcile.context import Contexts, current
from samplecontroller.workqueue import ItemExponentialFailureRateLimiter
from tests.live import ns, rest, wait_for

__all__ = ["ns", "rest"]


def boom() -> errors.StatusError:
    return errors.InternalError(errors.new_status(500, "InternalError", "boom"))


def test_a_reconcile_sees_its_retries_and_gives_up_after_n() -> None:
    seen: list[int] = []

    def reconcile(request: Request) -> Result:
        ctx = current()
        seen.append(ctx.retries)
        if ctx.retries >= 3:
            raise TerminalError("gave up after 3 retries")
        raise boom()

    c = controller.Controller("ctx-retries", _Func(reconcile), controller.Options(
        rate_limiter=ItemExponentialFailureRateLimiter(0.001, 0.01)))
    req = Request("ns", "a")
    c.queue.add(req)
    for _ in range(4):
        assert c.process_next_work_item()
    assert seen == [0, 1, 2, 3]
    assert c.queue.num_requeues(req) == 0  # terminal: forgotten
    c.queue.add(req)
    seen.clear()
    assert c.process_next_work_item()
    assert seen == [0]
    c.queue.shut_down()


def test_a_success_resets_the_count() -> None:
    seen: list[int] = []

    def reconcile(request: Request) -> Result:
        seen.append(current().retries)
        if len(seen) == 1:
            raise boom()
        return Result()

    c = controller.Controller("ctx-reset", _Func(reconcile), controller.Options(
        rate_limiter=ItemExponentialFailureRateLimiter(0.001, 0.01)))
    c.queue.add(Request("ns", "b"))
    assert c.process_next_work_item() and c.process_next_work_item()
    c.queue.add(Request("ns", "b"))
    assert c.process_next_work_item()
    assert seen == [0, 1, 0]
    c.queue.shut_down()


def test_the_logger_prefixes_the_object_and_posts_events_in_one_call(caplog: pytest.LogCaptureFixture) -> None:
    recorder = FakeRecorder(10)
    obj = ConfigMap(metadata=ObjectMeta(name="a", namespace="ns"))

    def reconcile(request: Request) -> Result:
        logger = current().logger
        logger.info("Creating the child", event="Creating", child="a-1")
        logger.bind(obj).warning("Quota low", event="QuotaLow")
        logger.debug("details")
        return Result()

    c = controller.Controller("ctx-log", _Func(reconcile))
    c.contexts = Contexts("ctx-log", for_type=ConfigMap, cache=_OneObject(obj), recorder=lambda: recorder)
    c.queue.add(Request("ns", "a"))
    with caplog.at_level(logging.DEBUG, logger="runtime.reconciler"):
        assert c.process_next_work_item()
    lines = [(r.levelname, r.getMessage(), vars(r)["kv"]) for r in caplog.records if r.name == "runtime.reconciler"]
    assert lines == [("INFO", "[ns/a] Creating the child", {"controller": "ctx-log", "child": "a-1"}),
                     ("WARNING", "[ns/a] Quota low", {"controller": "ctx-log"}),
                     ("DEBUG", "[ns/a] details", {"controller": "ctx-log"})]
    assert recorder.drain() == ["Normal Creating Creating the child", "Warning QuotaLow Quota low"]
    c.queue.shut_down()


def test_what_is_missing_is_said() -> None:
    with pytest.raises(RuntimeError, match="not inside a reconcile"):
        current()
    errors_seen: list[str] = []

    def reconcile(request: Request) -> Result:
        try:
            current().logger.info("x", event="X")
        except RuntimeError as err:
            errors_seen.append(str(err))
        return Result()

    c = controller.Controller("ctx-bare", _Func(reconcile))
    c.queue.add(Request("ns", "a"))
    assert c.process_next_work_item()
    assert errors_seen == ["controller ctx-bare has no event recorder: build it with runtime.builder "
                           "(or pass recorder= to Contexts)"]
    c.queue.shut_down()


def test_events_reach_the_api_server_and_the_recorder_logs_them_at_debug(
        rest: Any, ns: str, caplog: pytest.LogCaptureFixture) -> None:
    def reconcile(request: Request) -> Result:
        current().logger.info("Hello from the reconcile", event="Greeted")
        return Result()

    mgr = Manager(rest, scheme=SCHEME, options=Options(namespaces=(ns,)))
    builder.controller_managed_by(mgr).for_(ConfigMap).named(f"ctx-{ns}").complete(_Func(reconcile))
    stop = threading.Event()
    t = threading.Thread(target=mgr.start, args=(stop,), daemon=True)
    caplog.set_level(logging.DEBUG)
    t.start()
    try:
        assert mgr.elected().wait(10)
        Clientset(rest).core_v1().configmaps(ns).create(ConfigMap(metadata=ObjectMeta(name="c", namespace=ns)))
        events = wait_for(lambda: [e for e in Clientset(rest).core_v1().events(ns).list().items
                                   if e.reason == "Greeted" and e.involved_object.name == "c"], what="the Event")
        assert events[0].type == "Normal" and events[0].involved_object.kind == "ConfigMap"
        assert events[0].message == "Hello from the reconcile"
        occurred = wait_for(lambda: [r for r in caplog.records if r.getMessage() == "Event occurred"],
                            what="the recorder's line")
        assert {r.levelname for r in occurred} == {"DEBUG"}
    finally:
        stop.set()
        t.join(10)


class _Func:
    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def reconcile(self, request: Request) -> Result:
        result: Result = self.fn(request)
        return result


class _OneObject:
    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def get(self, model: type[Any], namespace: str, name: str) -> Any:
        return self.obj
