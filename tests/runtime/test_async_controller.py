"""Async reconcilers (``async def reconcile``): the same contract as sync ones, run as tasks on
one event loop (issue 25)."""

from __future__ import annotations

import asyncio
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from generated.apis.samplecontroller.v1alpha1 import Foo
from samplecontroller.apimachinery import errors
from samplecontroller.foo_reconciler import new_manager
from samplecontroller.runtime import builder, controller
from samplecontroller.runtime.eventloop import EventLoop
from samplecontroller.runtime.manager import Manager
from samplecontroller.runtime.reconcile import (
    AsyncFunc,
    Func,
    PermanentError,
    Request,
    Result,
    TemporaryError,
    TerminalError,
    context,
)
from tests.live import wait_for
from tests.runtime.test_controller import fast_options, seed, value
from tests.runtime.test_integration import new_foo

_counter = iter(range(10**6))


class AsyncScript:
    """An async reconciler whose answer per call comes from ``await fn(request, call_number)``."""

    def __init__(self, fn: Callable[[Request, int], Any]) -> None:
        self.fn = fn
        self.calls: list[Request] = []
        self.threads: set[str] = set()

    async def reconcile(self, request: Request) -> Result:
        self.calls.append(request)
        self.threads.add(threading.current_thread().name)
        out = self.fn(request, len(self.calls))
        if asyncio.iscoroutine(out):
            out = await out
        assert isinstance(out, Result)
        return out

    def wait_calls(self, n: int, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.calls) < n:
            assert time.monotonic() < deadline, f"expected {n} calls, got {len(self.calls)}"
            time.sleep(0.005)


def fail(err: BaseException) -> Any:
    raise err


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
        t.join(10)
        assert not t.is_alive()


# -- the reported defect: an async reconciler in a Manager -------------------------------------


def test_an_async_reconciler_in_a_manager_is_awaited_and_the_manager_keeps_running(rest: Any, ns: str) -> None:
    """Before: the controller called ``reconcile``, got an un-awaited coroutine, failed on
    ``result.requeue_after`` and the Manager stopped."""
    mgr = new_manager(rest, resync=3600, namespace=ns)
    seen: list[tuple[str, str]] = []

    class Reconciler:
        async def reconcile(self, request: Request) -> Result:
            await asyncio.sleep(0)
            foo = await asyncio.to_thread(mgr.get_client().get, Foo, request.namespace, request.name)
            seen.append((foo.metadata.name or "", threading.current_thread().name))
            return Result()

    builder.controller_managed_by(mgr).for_(Foo).named(f"async-{next(_counter)}").complete(Reconciler())
    stop = threading.Event()
    errors_seen: list[BaseException] = []

    def start() -> None:
        try:
            mgr.start(stop)
        except BaseException as err:
            errors_seen.append(err)

    t = threading.Thread(target=start, daemon=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t.start()
        try:
            from generated.clientset import Clientset

            Clientset(rest).samplecontroller_v1alpha1().foos(ns).create(new_foo(ns, "f1", "d1"))
            wait_for(lambda: seen or errors_seen, what="the async reconcile")
            assert not errors_seen, errors_seen
            assert t.is_alive(), "the manager stopped"
            assert seen[0] == ("f1", "manager-event-loop")
        finally:
            stop.set()
            t.join(15)
    assert not t.is_alive()
    assert not errors_seen
    assert not [w for w in caught if "never awaited" in str(w.message)]


def test_a_sync_reconcile_returning_a_coroutine_is_an_error_naming_the_fix(run: Any,
                                                                           caplog: pytest.LogCaptureFixture) -> None:
    name = f"a{next(_counter)}"

    async def helper() -> Result:
        return Result()

    class Forgot:
        def reconcile(self, request: Request) -> Result:
            return helper()  # type: ignore[return-value]  # the bug under test

    c = controller.Controller(name, Forgot(), fast_options())
    c.watch(seed(Request("ns", "a")))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(c)
        wait_for(lambda: any("error" in getattr(r, "kv", {}) for r in caplog.records), what="the panic logged")
    assert value("controller_runtime_reconcile_panics_total", {"controller": name}) >= 1
    logged = " ".join(str(getattr(r, "kv", {}).get("error", "")) for r in caplog.records)
    assert "Forgot.reconcile returned a coroutine that was never awaited" in logged
    assert "declare it 'async def reconcile(self, request) -> Result'" in logged
    assert not [w for w in caught if "never awaited" in str(w.message)]


def test_func_refuses_a_coroutine_function_and_async_func_wraps_it() -> None:
    async def fn(r: Request) -> Result | None:
        return None

    with pytest.raises(TypeError, match="AsyncFunc"):
        Func(fn)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"reconcile\.Func"):
        AsyncFunc(lambda r: None)  # type: ignore[arg-type,return-value]
    assert asyncio.run(AsyncFunc(fn).reconcile(Request("", "x"))) == Result()


# -- the contract, as for sync reconcilers (tests/runtime/test_controller.py) -------------------


def test_results_and_errors_as_sync(run: Any) -> None:
    name = f"a{next(_counter)}"

    async def answer(r: Request, n: int) -> Result:
        await asyncio.sleep(0)
        if r.name == "err" and n < 10:
            raise errors.InternalError(errors.new_status(500, "InternalError", "boom"))
        if r.name == "terminal":
            raise TerminalError("no")
        if r.name == "conflict" and n < 10:
            raise errors.new_conflict("samplecontroller.k8s.io", "foos", "conflict", "modified")
        if r.name == "after":
            return Result(requeue_after=0.01) if r not in done_after else Result()
        return Result()

    done_after: set[Request] = set()
    script = AsyncScript(answer)
    c = controller.Controller(name, script, fast_options())
    c.watch(seed(Request("ns", "err"), Request("ns", "terminal"), Request("ns", "conflict")))
    run(c)
    script.wait_calls(5)
    wait_for(lambda: value("controller_runtime_reconcile_total", {"controller": name, "result": "success"}) >= 2,
             what="the retried requests to succeed")
    assert value("controller_runtime_terminal_reconcile_errors_total", {"controller": name}) == 1
    assert value("controller_runtime_reconcile_conflicts_total", {"controller": name}) >= 1
    assert value("controller_runtime_reconcile_errors_total", {"controller": name}) >= 2
    assert sum(1 for r in script.calls if r.name == "terminal") == 1
    done_after.add(Request("ns", "after"))
    c.queue.add(Request("ns", "after"))
    wait_for(lambda: value("controller_runtime_reconcile_total", {"controller": name, "result": "success"}) >= 3,
             what="requeue_after")
    assert c.queue.num_requeues(Request("ns", "err")) == 0


def test_requeue_after_comes_back(run: Any) -> None:
    name = f"a{next(_counter)}"
    script = AsyncScript(lambda r, n: Result(requeue_after=0.02) if n == 1 else Result())
    c = controller.Controller(name, script, fast_options())
    c.watch(seed(Request("ns", "a")))
    run(c)
    script.wait_calls(2)
    assert value("controller_runtime_reconcile_total", {"controller": name, "result": "requeue_after"}) == 1


def test_panic_is_recovered_and_counted(run: Any) -> None:
    name = f"a{next(_counter)}"
    script = AsyncScript(lambda r, n: fail(KeyError("bug")) if r.name == "bad" else Result())
    c = controller.Controller(name, script, fast_options())
    c.watch(seed(Request("ns", "bad")))
    run(c)
    script.wait_calls(2)
    c.queue.add(Request("ns", "good"))
    wait_for(lambda: Request("ns", "good") in script.calls, what="the good request")
    assert value("controller_runtime_reconcile_panics_total", {"controller": name}) >= 2


def test_panic_without_recover_stops_the_controller() -> None:
    c = controller.Controller(f"a{next(_counter)}", AsyncScript(lambda r, n: fail(KeyError("bug"))),
                              fast_options(recover_panic=False))
    c.watch(seed(Request("ns", "a")))
    with pytest.raises(KeyError):
        c.start(threading.Event())


def test_tasks_in_flight_are_bounded_one_key_never_twice_and_threads_do_not_grow(run: Any) -> None:
    name = f"a{next(_counter)}"
    active: dict[Request, int] = {}
    overlap: list[Request] = []
    peak = [0]

    async def slow(r: Request, n: int) -> Result:
        active[r] = active.get(r, 0) + 1
        if active[r] > 1:
            overlap.append(r)
        peak[0] = max(peak[0], sum(active.values()))
        await asyncio.sleep(0.05)
        active[r] -= 1
        return Result()

    before = threading.active_count()
    script = AsyncScript(slow)
    c = controller.Controller(name, script, fast_options(max_concurrent_reconciles=200))
    reqs = [Request("ns", f"o{i}") for i in range(300)]
    c.watch(seed(*reqs))
    run(c)
    for _ in range(3):
        for r in reqs[:20]:
            c.queue.add(r)
    script.wait_calls(300)
    during = threading.active_count()
    wait_for(lambda: value("controller_runtime_active_workers", {"controller": name}) == 0, what="idle")
    assert not overlap
    assert 100 <= peak[0] <= 200
    assert during - before <= 5, f"threads grew from {before} to {during}"
    assert len(script.threads) == 1
    assert value("controller_runtime_max_concurrent_reconciles", {"controller": name}) == 200


def test_stop_finishes_reconciles_in_progress_drops_the_backlog_and_cancels_at_the_timeout() -> None:
    release = threading.Event()
    entered: list[Request] = []
    cancelled: list[Request] = []

    async def held(r: Request, n: int) -> Result:
        entered.append(r)
        try:
            while not release.is_set():
                await asyncio.sleep(0.01)
        except asyncio.CancelledError:
            cancelled.append(r)
            raise
        return Result()

    def start(timeout: float) -> tuple[controller.Controller, threading.Event, threading.Thread]:
        c = controller.Controller(f"a{next(_counter)}", AsyncScript(held),
                                  fast_options(max_concurrent_reconciles=2, shutdown_timeout=timeout))
        c.watch(seed(*[Request("ns", f"r{i}") for i in range(20)]))
        stop = threading.Event()
        t = threading.Thread(target=c.start, args=(stop,), daemon=True)
        t.start()
        wait_for(lambda: len(entered) == 2, what="two reconciles in progress")
        return c, stop, t

    _, stop, t = start(60.0)
    stop.set()
    time.sleep(0.1)
    assert t.is_alive()  # waiting for the two in progress
    release.set()
    t.join(10)
    assert not t.is_alive()
    assert len(entered) == 2 and not cancelled

    release.clear()
    entered.clear()
    _, stop, t = start(0.2)
    stop.set()
    t.join(5)
    assert not t.is_alive()
    assert sorted(cancelled) == sorted(entered)


def test_sync_and_async_controllers_share_one_manager_and_one_loop(rest: Any, ns: str) -> None:
    mgr = new_manager(rest, resync=3600, namespace=ns)
    sync_seen: list[str] = []
    async_seen: list[str] = []

    async def on_async(r: Request) -> Result:
        async_seen.append(threading.current_thread().name)
        return Result()

    def on_sync(r: Request) -> Result:
        sync_seen.append(threading.current_thread().name)
        return Result()

    builder.controller_managed_by(mgr).for_(Foo).named(f"a{next(_counter)}").complete(AsyncFunc(on_async))
    builder.controller_managed_by(mgr).for_(Foo).named(f"a{next(_counter)}").complete(AsyncFunc(on_async))
    builder.controller_managed_by(mgr).for_(Foo).named(f"s{next(_counter)}").complete(Func(on_sync))
    stop = threading.Event()
    t = threading.Thread(target=mgr.start, args=(stop,), daemon=True)
    t.start()
    try:
        from generated.clientset import Clientset

        Clientset(rest).samplecontroller_v1alpha1().foos(ns).create(new_foo(ns, "f1", "d1"))
        wait_for(lambda: len(async_seen) >= 2 and sync_seen, what="both styles to reconcile")
        assert set(async_seen) == {"manager-event-loop"}
        assert all(n != "manager-event-loop" for n in sync_seen)
    finally:
        stop.set()
        t.join(15)
    assert not t.is_alive()
    assert not mgr.get_event_loop().started() or mgr.get_event_loop()._closed


def test_event_loop_runs_and_closes() -> None:
    loop = EventLoop("t-loop")

    async def where() -> str:
        return threading.current_thread().name

    assert loop.run(where()) == "t-loop"
    loop.close()
    with pytest.raises(RuntimeError, match="closed"):
        loop.run(where())


def test_manager_without_async_controllers_never_starts_the_loop(rest: Any, ns: str) -> None:
    mgr: Manager = new_manager(rest, resync=3600, namespace=ns)
    builder.controller_managed_by(mgr).for_(Foo).named(f"s{next(_counter)}").complete(Func(lambda r: None))
    stop = threading.Event()
    t = threading.Thread(target=mgr.start, args=(stop,), daemon=True)
    t.start()
    assert mgr.elected().wait(10)
    stop.set()
    t.join(15)
    assert not mgr.get_event_loop().started()


def test_async_foo_reconciler_under_a_manager_end_to_end(rest: Any, ns: str) -> None:
    """The async Foo reconciler with the Manager's AsyncClient (cache reads, aiohttp writes)."""
    import msgspec

    from generated.clientset import Clientset
    from samplecontroller.foo_reconciler_async import AsyncFooReconciler
    from samplecontroller.kubernetes.clientset import Clientset as KubeClientset
    from samplecontroller.record import FakeRecorder

    cs, kube = Clientset(rest), KubeClientset(rest)
    mgr = new_manager(rest, resync=3600, namespace=ns)
    AsyncFooReconciler(mgr.get_async_client(), FakeRecorder(100)).setup_with_manager(mgr, 50)
    stop = threading.Event()
    t = threading.Thread(target=mgr.start, args=(stop,), daemon=True)
    t.start()
    try:
        foos = cs.samplecontroller_v1alpha1().foos(ns)
        for i in range(20):
            foos.create(new_foo(ns, f"f{i}", f"d{i}", 2))
        deps = kube.apps_v1().deployments(ns)
        wait_for(lambda: len(deps.list().items) == 20, what="20 Deployments")
        live: Any = foos.get("f3")
        foos.update(msgspec.structs.replace(live, spec=msgspec.structs.replace(live.spec, replicas=4)))
        wait_for(lambda: getattr(deps.get("d3").spec, "replicas", None) == 4, what="replicas 4")
    finally:
        stop.set()
        t.join(15)
    assert not t.is_alive()


def test_temporary_and_permanent_errors_in_an_async_reconciler(run: Any) -> None:
    """Issue 39: kopf's pair, as in a sync reconciler (the same handling, awaited)."""
    name = f"a{next(_counter)}"
    times: list[float] = []
    retries: list[int] = []

    async def fn(r: Request, n: int) -> Result:
        times.append(time.monotonic())
        retries.append(context.current().retries)
        if r.name == "perm":
            raise PermanentError("never")
        if n == 1:
            raise TemporaryError("later", delay=0.2)
        return Result()

    script = AsyncScript(fn)
    c = controller.Controller(name, script, fast_options(keep_requested_delay=True))
    c.watch(seed(Request("ns", "a")))
    run(c)
    script.wait_calls(1)
    c.queue.add(Request("ns", "a"))  # an event: coalesces into the pending retry
    script.wait_calls(2)
    assert times[1] - times[0] >= 0.2 and retries[:2] == [0, 1]
    c.queue.add(Request("ns", "perm"))
    script.wait_calls(3)
    time.sleep(0.1)
    assert len(script.calls) == 3
    assert value("controller_runtime_terminal_reconcile_errors_total", {"controller": name}) == 1
