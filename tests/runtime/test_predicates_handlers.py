"""Predicates, event handlers and the reconcile contract, on plain objects (no server)."""

from __future__ import annotations

import pytest

from generated.apis.samplecontroller.v1alpha1 import Foo
from samplecontroller.kubernetes.apis.apps.v1 import Deployment
from samplecontroller.runtime import handler, predicate
from samplecontroller.runtime.event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent
from samplecontroller.runtime.reconcile import Func, Request, Result, TerminalError, is_terminal
from tests.runtime.conftest import ListQueue
from tests.runtime.objects import deployment, foo


def test_request_str_and_hashing() -> None:
    assert str(Request("ns", "a")) == "ns/a"
    assert str(Request("", "a")) == "a"
    assert len({Request("ns", "a"), Request("ns", "a")}) == 1


def test_result_and_terminal() -> None:
    assert Result().is_zero()
    assert not Result(requeue_after=1).is_zero()
    assert not Result(requeue=True).is_zero()
    try:
        try:
            raise TerminalError("bad spec")
        except TerminalError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as err:
        assert is_terminal(err)
    assert not is_terminal(ValueError("x"))


def test_func_adapter_defaults_to_empty_result() -> None:
    seen: list[Request] = []
    r = Func(lambda req: seen.append(req))  # type: ignore[func-returns-value]
    assert r.reconcile(Request("a", "b")) == Result()
    assert seen == [Request("a", "b")]
    assert Func(lambda req: Result(requeue_after=3)).reconcile(Request("a", "b")).requeue_after == 3


def test_update_only_predicates_let_other_events_pass() -> None:
    old = foo(rv="1", generation=1, labels={"a": "1"}, annotations={"x": "1"})
    same_rv = foo(rv="1", generation=1, labels={"a": "1"}, annotations={"x": "1"})
    status_only = foo(rv="2", generation=1, labels={"a": "1"}, annotations={"x": "1"})
    new_gen = foo(rv="3", generation=2, labels={"a": "2"}, annotations={"x": "2"})
    for p in (predicate.ResourceVersionChanged(), predicate.GenerationChanged(), predicate.LabelChanged(),
              predicate.AnnotationChanged()):
        assert p.create(CreateEvent(old)) and p.delete(DeleteEvent(old)) and p.generic(GenericEvent(old))
        assert not p.update(UpdateEvent(old, same_rv))
        assert p.update(UpdateEvent(old, new_gen))
    assert predicate.ResourceVersionChanged().update(UpdateEvent(old, status_only))
    assert not predicate.GenerationChanged().update(UpdateEvent(old, status_only))
    assert not predicate.LabelChanged().update(UpdateEvent(old, status_only))


def test_label_selector_predicate_and_combinators() -> None:
    match, other = foo(labels={"app": "web"}), foo(labels={"app": "db"})
    p = predicate.LabelSelectorPredicate("app=web")
    assert p.create(CreateEvent(match)) and not p.create(CreateEvent(other))
    assert p.update(UpdateEvent(other, match)) and not p.update(UpdateEvent(match, other))
    p2 = predicate.LabelSelectorPredicate({"matchExpressions": [{"key": "app", "operator": "In", "values": ["db"]}]})
    assert p2.delete(DeleteEvent(other)) and not p2.delete(DeleteEvent(match))
    assert predicate.or_(p, p2).generic(GenericEvent(other))
    assert not predicate.and_(p, p2).generic(GenericEvent(other))
    assert predicate.not_(p).create(CreateEvent(other))
    assert predicate.and_().create(CreateEvent(other)) and not predicate.or_().create(CreateEvent(other))
    with pytest.raises(ValueError):
        predicate.LabelSelectorPredicate({"matchExpressions": [{"key": "a", "operator": "Near"}]})


def test_predicate_funcs_missing_function_passes() -> None:
    p = predicate.Funcs(update=lambda e: False)
    assert p.create(CreateEvent(foo())) and not p.update(UpdateEvent(foo(), foo()))
    q = predicate.new_predicate_funcs(lambda o: o.metadata.name == "keep")
    assert q.create(CreateEvent(foo("keep"))) and not q.update(UpdateEvent(foo("keep"), foo("drop")))


def test_enqueue_request_for_object(list_queue: ListQueue) -> None:
    h = handler.EnqueueRequestForObject()
    h.create(CreateEvent(foo("a")), list_queue)
    h.update(UpdateEvent(foo("a"), foo("b")), list_queue)
    h.delete(DeleteEvent(foo("c"), delete_state_unknown=True), list_queue)
    h.generic(GenericEvent(foo("d")), list_queue)
    assert list_queue.items == [Request("ns", "a"), Request("ns", "b"), Request("ns", "c"), Request("ns", "d")]


def test_enqueue_request_for_owner_matches_group_and_kind(list_queue: ListQueue) -> None:
    owner = foo("owner", uid="u1")
    h = handler.EnqueueRequestForOwner(Foo)
    h.create(CreateEvent(deployment(owner=owner)), list_queue)
    # same kind, other group: ignored
    h.create(CreateEvent(deployment(owner=owner, owner_api_version="other.example.com/v1")), list_queue)
    # not the controller: ignored with only_controller
    h.create(CreateEvent(deployment(owner=owner, controller=False)), list_queue)
    h.create(CreateEvent(deployment()), list_queue)
    assert list_queue.items == [Request("ns", "owner")]
    any_owner = handler.EnqueueRequestForOwner(Foo, only_controller=False)
    any_owner.create(CreateEvent(deployment(owner=owner, controller=False)), list_queue)
    assert list_queue.items[-1] == Request("ns", "owner")


def test_enqueue_for_owner_update_enqueues_old_and_new_owner(list_queue: ListQueue) -> None:
    a, b = foo("a", uid="ua"), foo("b", uid="ub")
    handler.EnqueueRequestForOwner(Foo).update(UpdateEvent(deployment(owner=a), deployment(owner=b)), list_queue)
    assert list_queue.items == [Request("ns", "a"), Request("ns", "b")]
    with pytest.raises(ValueError, match="not a registered"):
        handler.EnqueueRequestForOwner(dict)


def test_map_func_and_funcs(list_queue: ListQueue) -> None:
    h = handler.EnqueueRequestsFromMapFunc(lambda o: [Request("x", o.metadata.name), Request("x", "shared")])
    h.update(UpdateEvent(deployment("d1"), deployment("d2")), list_queue)
    assert list_queue.items == [Request("x", "d1"), Request("x", "shared"), Request("x", "d2")]
    calls: list[str] = []
    f = handler.Funcs(create=lambda e, q: calls.append("create"))
    f.create(CreateEvent(foo()), list_queue)
    f.delete(DeleteEvent(foo()), list_queue)
    assert calls == ["create"]


def test_deployment_type_is_known() -> None:
    # EnqueueRequestForOwner resolves built-in owners through the generated scheme too.
    h = handler.EnqueueRequestForOwner(Deployment)
    assert (h.group, h.kind) == ("apps", "Deployment")
