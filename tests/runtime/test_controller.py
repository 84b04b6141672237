"""The controller's result handling, concurrency, panics and metrics, with in-memory sources."""

from __future__ import annotations

import gc
import logging
import queue as stdqueue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from prometheus_client import REGISTRY

from generated.apis.samplecontroller.v1alpha1 import Foo
from samplecontroller.apimachinery import errors
from samplecontroller.runtime import builder, controller, handler, source
from samplecontroller.runtime.event import GenericEvent
from samplecontroller.runtime.reconcile import (
    Func,
    PermanentError,
    Request,
    Result,
    TemporaryError,
    TerminalError,
    context,
)
from samplecontroller.workqueue import ItemExponentialFailureRateLimiter
from tests.runtime.objects import foo


class Script:
    """A reconciler whose answer per call comes from ``fn(request, call_number)``."""

    def __init__(self, fn: Callable[[Request, int], Result]) -> None:
        self.fn = fn
        self.calls: list[tuple[Request, float]] = []
        self.lock = threading.Lock()
        self.event = threading.Event()

    def reconcile(self, request: Request) -> Result:
        with self.lock:
            self.calls.append((request, time.monotonic()))
            n = len(self.calls)
        self.event.set()
        return self.fn(request, n)

    def wait_calls(self, n: int, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.calls) >= n:
                    return
            time.sleep(0.005)
        raise AssertionError(f"expected {n} calls, got {len(self.calls)}")


def value(name: str, labels: dict[str, str]) -> float:
    v = REGISTRY.get_sample_value(name, labels)
    return 0.0 if v is None else v


_counter = iter(range(10**6))


def fast_options(**kw: Any) -> controller.Options:
    return controller.Options(rate_limiter=ItemExponentialFailureRateLimiter(0.01, 0.05), **kw)


def seed(*requests: Request) -> source.Func:
    def add(q: Any, stop: Any) -> None:
        for r in requests:
            q.add(r)

    return source.Func(add)


@pytest.fixture
def run() -> Iterator[Callable[[controller.Controller], threading.Thread]]:
    stops: list[tuple[threading.Event, threading.Thread]] = []

    def start(c: controller.Controller) -> threading.Thread:
        stop = threading.Event()
        t = threading.Thread(target=c.start, args=(stop,), daemon=True)
        t.start()
        stops.append((stop, t))
        return t

    yield start
    for stop, t in stops:
        stop.set()
        t.join(5)
        assert not t.is_alive()


def test_error_requeues_with_backoff_then_success_forgets(run: Any) -> None:
    name = f"c{next(_counter)}"
    script = Script(lambda r, n: (_ for _ in ()).throw(
        errors.InternalError(errors.new_status(500, "InternalError", "boom"))) if n < 3 else Result())
    c = controller.Controller(name, script, fast_options())
    c.watch(seed(Request("ns", "a")))
    run(c)
    script.wait_calls(3)
    time.sleep(0.05)
    assert len(script.calls) == 3
    assert c.queue.num_requeues(Request("ns", "a")) == 0  # forgotten after success
    assert value("controller_runtime_reconcile_total", {"controller": name, "result": "error"}) == 2
    assert value("controller_runtime_reconcile_total", {"controller": name, "result": "success"}) == 1
    assert value("controller_runtime_reconcile_errors_total", {"controller": name}) == 2
    assert value("workqueue_retries_total", {"name": name}) == 2
    assert value("controller_runtime_reconcile_panics_total", {"controller": name}) == 0


@pytest.mark.parametrize("race", [
    errors.new_conflict("samplecontroller.k8s.io", "foos", "a", "the object has been modified"),
    errors.new_already_exists("apps", "deployments", "a"),
], ids=["conflict", "already-exists"])
def test_a_conflict_is_requeued_with_backoff_and_counted_but_not_logged_as_an_error(
        caplog: pytest.LogCaptureFixture, race: errors.StatusError) -> None:
    """A 409 Conflict (a write from a stale cache lost a race) is retried: rate-limited requeue,
    counted in reconcile_conflicts_total and as a "requeue" result, not as an error, and logged at
    debug level only (issue 18)."""
    name = f"c{next(_counter)}"
    request = Request("ns", "a")
    script = Script(lambda r, n: (_ for _ in ()).throw(race))
    c = controller.Controller(name, script, fast_options())
    c.queue.add(request)
    caplog.set_level(logging.DEBUG)
    assert c.process_next_work_item()
    assert c.queue.num_requeues(request) == 1
    assert value("controller_runtime_reconcile_conflicts_total", {"controller": name}) == 1
    assert value("controller_runtime_reconcile_total", {"controller": name, "result": "requeue"}) == 1
    assert value("controller_runtime_reconcile_errors_total", {"controller": name}) == 0
    assert value("controller_runtime_reconcile_total", {"controller": name, "result": "error"}) == 0
    assert [r.getMessage() for r in caplog.records if r.levelno > logging.DEBUG] == []
    assert [r.getMessage() for r in caplog.records] == ["Reconciler conflict, requeuing"]
    c.queue.shut_down()


def test_terminal_error_is_not_requeued(run: Any) -> None:
    name = f"c{next(_counter)}"
    script = Script(lambda r, n: (_ for _ in ()).throw(TerminalError("invalid spec")))
    c = controller.Controller(name, script, fast_options())
    c.watch(seed(Request("ns", "a")))
    run(c)
    script.wait_calls(1)
    time.sleep(0.15)  # > several backoff periods
    assert len(script.calls) == 1
    assert value("controller_runtime_terminal_reconcile_errors_total", {"controller": name}) == 1


def test_requeue_after_and_requeue(run: Any) -> None:
    name = f"c{next(_counter)}"
    script = Script(lambda r, n: Result(requeue_after=0.1) if n == 1 else Result(requeue=True) if n == 2
                    else Result())
    c = controller.Controller(name, script, fast_options())
    c.watch(seed(Request("ns", "a")))
    run(c)
    script.wait_calls(3)
    (_, t1), (_, t2) = script.calls[0], script.calls[1]
    assert t2 - t1 >= 0.09
    assert value("controller_runtime_reconcile_total", {"controller": name, "result": "requeue_after"}) == 1
    assert value("controller_runtime_reconcile_total", {"controller": name, "result": "requeue"}) == 1


def test_panic_is_recovered_and_worker_lives_on(run: Any) -> None:
    name = f"c{next(_counter)}"
    script = Script(lambda r, n: (_ for _ in ()).throw(KeyError("bug")) if r.name == "bad" else Result())
    c = controller.Controller(name, script, fast_options())
    c.watch(seed(Request("ns", "bad")))
    run(c)
    script.wait_calls(2)  # the bad one is retried: the worker survived
    c.queue.add(Request("ns", "good"))
    deadline = time.monotonic() + 30
    while not any(r.name == "good" for r, _ in script.calls) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert any(r.name == "good" for r, _ in script.calls)
    assert value("controller_runtime_reconcile_panics_total", {"controller": name}) >= 2


def test_panic_without_recover_stops_the_controller() -> None:
    name = f"c{next(_counter)}"
    c = controller.Controller(name, Script(lambda r, n: (_ for _ in ()).throw(KeyError("bug"))),
                              fast_options(recover_panic=False))
    c.watch(seed(Request("ns", "a")))
    stop = threading.Event()
    with pytest.raises(KeyError):
        c.start(stop)


def test_concurrent_workers_never_share_a_request(run: Any) -> None:
    name = f"c{next(_counter)}"
    active: dict[Request, int] = {}
    overlap: list[Request] = []
    peak = [0]
    lock = threading.Lock()

    def slow(r: Request, n: int) -> Result:
        with lock:
            active[r] = active.get(r, 0) + 1
            if active[r] > 1:
                overlap.append(r)
            peak[0] = max(peak[0], sum(active.values()))
        time.sleep(0.02)
        with lock:
            active[r] -= 1
        return Result()

    script = Script(slow)
    c = controller.Controller(name, script, fast_options(max_concurrent_reconciles=4))
    reqs = [Request("ns", f"o{i}") for i in range(8)]
    c.watch(seed(*reqs))
    run(c)
    for _ in range(3):
        for r in reqs:
            c.queue.add(r)
        time.sleep(0.01)
    script.wait_calls(8)
    time.sleep(0.2)
    assert not overlap
    assert peak[0] > 1
    assert value("controller_runtime_max_concurrent_reconciles", {"controller": name}) == 4


def test_source_that_never_syncs_times_out() -> None:
    class Never:
        def start(self, q: Any, stop: Any = None) -> None:
            pass

        def wait_for_sync(self, timeout: float | None = None) -> bool:
            time.sleep(timeout or 0)
            return False

    c = controller.Controller(f"c{next(_counter)}", Func(lambda r: None), controller.Options(cache_sync_timeout=0.2))
    c.watch(Never())
    with pytest.raises(controller.SourceSyncError, match="timed out"):
        c.start(threading.Event())


def test_channel_source_with_predicate(run: Any) -> None:
    name = f"c{next(_counter)}"
    script = Script(lambda r, n: Result())
    ch: stdqueue.Queue[GenericEvent] = stdqueue.Queue()
    from samplecontroller.runtime import predicate

    c = controller.Controller(name, script, fast_options())
    c.watch(source.Channel(ch, handler.EnqueueRequestForObject(),
                           predicate.new_predicate_funcs(lambda o: o.metadata.name != "skip")))
    run(c)
    ch.put(GenericEvent(foo("skip")))
    ch.put(GenericEvent(foo("take")))
    script.wait_calls(1)
    time.sleep(0.1)
    assert [r for r, _ in script.calls] == [Request("ns", "take")]


def test_invalid_options() -> None:
    with pytest.raises(ValueError):
        controller.Controller("", Func(lambda r: None))
    with pytest.raises(ValueError):
        controller.Controller("x", Func(lambda r: None), controller.Options(max_concurrent_reconciles=0))


class _FakeMgr:
    def __init__(self) -> None:
        self.added: list[Any] = []

        class _Cache:
            def get_informer(self, model: Any) -> Any:
                return None

        self.cache = _Cache()

    def get_cache(self) -> Any:
        return self.cache

    def get_scheme(self) -> Any:
        from samplecontroller.foo_reconciler import SCHEME

        return SCHEME

    def add(self, r: Any) -> None:
        self.added.append(r)


def test_builder_errors_and_naming() -> None:
    mgr = _FakeMgr()
    with pytest.raises(ValueError, match="no watches configured"):
        builder.controller_managed_by(mgr).named("x").complete(Func(lambda r: None))
    with pytest.raises(ValueError, match="for_"):
        builder.controller_managed_by(mgr).watches(seed()).complete(Func(lambda r: None))
    with pytest.raises(ValueError, match="once"):
        builder.controller_managed_by(mgr).for_(Foo).for_(Foo)
    c = builder.controller_managed_by(mgr).for_(Foo).complete(Func(lambda r: None))
    assert c.name == "foo" and mgr.added == [c]
    with pytest.raises(ValueError, match="already exists"):
        builder.controller_managed_by(mgr).for_(Foo).complete(Func(lambda r: None))


def test_a_new_manager_may_reuse_the_controller_names_of_one_gone() -> None:
    """Names are unique per manager: one made after another was freed (CPython gives it the freed
    one's ``id``, as a test's fixture making a manager per test sees) starts with none used. Keyed
    by ``id`` the first controller of the new manager was refused as a duplicate (a scaffolded
    project's integration test, once in a full run)."""
    for _ in range(20):  # CPython hands a freed manager's memory, and so its id, to the next one
        mgr = _FakeMgr()
        builder.controller_managed_by(mgr).for_(Foo).complete(Func(lambda r: None))
        del mgr
        gc.collect()


class _RecordingInformer:
    """Remembers how each handler was registered."""

    def __init__(self) -> None:
        self.inline: list[bool] = []

    def add_event_handler(self, handler: Any, resync_period: float | None = None, *, inline: bool = False) -> Any:
        self.inline.append(inline)
        return None

    def has_synced(self) -> bool:
        return True


@pytest.mark.parametrize("inline", [False, True])
def test_inline_event_handlers_reach_every_watch_of_the_builder(inline: bool) -> None:
    mgr = _FakeMgr()
    informer = _RecordingInformer()
    mgr.cache.get_informer = lambda model: informer  # type: ignore[method-assign]
    from samplecontroller.kubernetes.apis.apps.v1 import Deployment

    c = (builder.controller_managed_by(mgr).for_(Foo).owns(Deployment)
         .watches(Deployment, handler.EnqueueRequestsFromMapFunc(lambda obj: []))
         .with_options(controller.Options(inline_event_handlers=inline))
         .named(f"inline-{inline}").build(Func(lambda r: None)))
    for src in c._sources:
        src.start(stdqueue.Queue())  # type: ignore[arg-type]
    assert informer.inline == [inline] * 3


class _Held:
    """A started controller whose every reconcile blocks until ``release`` is set."""

    def __init__(self, c: controller.Controller) -> None:
        self.c = c
        self.stop, self.release = threading.Event(), threading.Event()
        self.seen: list[Request] = []
        self.t = threading.Thread(target=c.start, args=(self.stop,), daemon=True)


@contextmanager
def _held_controller(workers: int, shutdown_timeout: float, requests: list[Request]) -> Iterator[_Held]:
    """Start a controller of ``workers`` on ``requests`` with held reconciles; yields once every
    worker is inside one; on exit releases them and stops the controller."""
    entered = threading.Semaphore(0)

    def held(request: Request, n: int) -> Result:
        held_run.seen.append(request)
        entered.release()
        held_run.release.wait(60)
        return Result()

    c = controller.Controller(f"c{next(_counter)}", Script(held),
                              fast_options(max_concurrent_reconciles=workers, shutdown_timeout=shutdown_timeout))
    c.watch(seed(*requests))
    held_run = _Held(c)
    held_run.t.start()
    try:
        for _ in range(workers):
            assert entered.acquire(timeout=10)
        yield held_run
    finally:
        held_run.release.set()
        held_run.stop.set()


def test_stop_finishes_reconciles_in_progress_and_drops_the_backlog() -> None:
    """On stop only the reconciles in progress finish; the waiting requests are not handed out."""
    backlog = [Request("ns", f"r{i}") for i in range(20)]
    with _held_controller(2, 60.0, backlog) as run:
        run.stop.set()
        deadline = time.monotonic() + 10
        while not run.c.queue.shutting_down():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert run.t.is_alive()
        run.release.set()
        run.t.join(30)
        assert not run.t.is_alive()
        assert sorted(run.seen) == sorted(backlog[:2])


def test_shutdown_timeout_bounds_the_whole_stop() -> None:
    """20 workers stuck in reconciles, shutdown_timeout 0.25 s: the old code took 21 x 0.25 s."""
    with _held_controller(20, 0.25, [Request("ns", f"r{i}") for i in range(30)]) as run:
        run.stop.set()
        run.t.join(4.0)  # generous: 16 x the timeout, below the old 5.25 s
        assert not run.t.is_alive()


# -- issue 39: kopf's errors, one line per failure, and a kept delay ---------------------------------


def test_an_unexpected_exception_is_one_reconciler_error_line_with_its_traceback(
        run: Any, caplog: pytest.LogCaptureFixture) -> None:
    name = f"c{next(_counter)}"
    script = Script(lambda r, n: (_ for _ in ()).throw(KeyError("bug")) if n < 3 else Result())
    c = controller.Controller(name, script, fast_options())
    c.watch(seed(Request("ns", "a")))
    with caplog.at_level(logging.DEBUG, logger="samplecontroller.runtime.controller"):
        run(c)
        script.wait_calls(3)
        time.sleep(0.05)
    failures = [r for r in caplog.records if getattr(r, "kv", {}).get("controller") == name
                and r.levelno >= logging.ERROR]
    assert [r.getMessage() for r in failures] == ["Reconciler error", "Reconciler error"], "once per failure"
    assert all("KeyError: 'bug'" in r.kv["traceback"] for r in failures)  # type: ignore[attr-defined]
    assert value("controller_runtime_reconcile_errors_total", {"controller": name}) == 2


def test_temporary_and_permanent_errors_in_a_reconciler(run: Any) -> None:
    name = f"c{next(_counter)}"
    retries: list[int] = []

    def fn(r: Request, n: int) -> Result:
        retries.append(context.current().retries)
        if r.name == "perm":
            raise PermanentError("never")
        if n <= 2:
            raise TemporaryError("not yet", delay=0.2)
        return Result()

    script = Script(fn)
    c = controller.Controller(name, script, fast_options())
    c.watch(seed(Request("ns", "a")))
    run(c)
    script.wait_calls(3)
    (_, t1), (_, t2), (_, t3) = script.calls
    assert t2 - t1 >= 0.2 and t3 - t2 >= 0.2, "the delay asked for, not the rate limiter's 10 ms"
    assert retries == [0, 1, 2], "each TemporaryError counts as a retry"
    c.queue.add(Request("ns", "perm"))
    script.wait_calls(4)
    time.sleep(0.1)
    assert len(script.calls) == 4, "a PermanentError is terminal: not requeued"
    assert value("controller_runtime_terminal_reconcile_errors_total", {"controller": name}) == 1


@pytest.mark.parametrize("keep", [True, False])
def test_keep_requested_delay_coalesces_events_into_the_pending_retry(run: Any, keep: bool) -> None:
    name = f"c{next(_counter)}"
    first = threading.Event()

    def fn(r: Request, n: int) -> Result:
        if n == 1:
            first.set()
            time.sleep(0.05)  # an event arrives while it runs
            raise TemporaryError("retry in a while", delay=0.4)
        return Result()

    script = Script(fn)
    c = controller.Controller(name, script, fast_options(keep_requested_delay=keep))
    c.watch(seed(Request("ns", "a")))
    run(c)
    first.wait(10)
    c.queue.add(Request("ns", "a"))  # during the reconcile
    time.sleep(0.1)
    for _ in range(3):  # while it waits for its delay
        c.queue.add(Request("ns", "a"))
    script.wait_calls(2)
    gap = script.calls[1][1] - script.calls[0][1]
    if keep:
        assert gap >= 0.4, "the events coalesced into the pending retry"
        time.sleep(0.1)
        assert len(script.calls) == 2
        c.queue.add_after(Request("ns", "a"), 5)  # a delay not kept (requeue_after, backoff) ...
        c.queue.add(Request("ns", "a"))  # ... does not hold an event back
        script.wait_calls(3)
    else:
        assert gap < 0.4, "controller-runtime's default: an event reconciles at once"
