"""Per-object daemons and timers (issue 26 item 2) against the embedded API server."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from prometheus_client import REGISTRY

from samplecontroller.apimachinery import errors
from samplecontroller.foo_reconciler import SCHEME
from samplecontroller.kubernetes.apis.core.v1 import ConfigMap
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.kubernetes.clientset import Clientset
from samplecontroller.runtime import daemon, reconcile
from samplecontroller.runtime.manager import Manager, Options
from samplecontroller.testing.runner import OperatorRunner
from tests.live import ns, rest, wait_for

__all__ = ["ns", "rest"]

FINALIZER = "example.com/daemon"


def metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def cms(rest: Any, ns: str) -> Any:
    return Clientset(rest).core_v1().configmaps(ns)


def create(rest: Any, ns: str, name: str, watched: bool = True, value: str = "0") -> None:
    labels = {"watched": "yes"} if watched else {"watched": "no"}
    cms(rest, ns).create(ConfigMap(metadata=ObjectMeta(name=name, namespace=ns, labels=labels), data={"v": value}))


def is_watched(cm: ConfigMap) -> bool:
    return (cm.metadata.labels or {}).get("watched") == "yes"


def manager(rest: Any, ns: str) -> Manager:
    return Manager(rest, scheme=SCHEME, options=Options(namespaces=(ns,)))


def gone(rest: Any, ns: str, name: str) -> bool:
    try:
        cms(rest, ns).get(name)
    except errors.NotFoundError:
        return True
    return False


def test_a_daemon_per_matching_object_sees_the_latest_version_and_stops_when_it_goes(rest: Any, ns: str) -> None:
    seen: dict[str, str] = {}
    stopped: list[str] = []
    lock = threading.Lock()

    def watch(d: daemon.Context) -> None:
        while not d.stopped.is_set():
            with lock:
                seen[d.request.name] = d.object.data["v"]
            d.sleep(0.02)
        with lock:
            stopped.append(d.request.name)

    mgr = manager(rest, ns)
    name = f"watch-{ns}"
    daemon.add_daemon(mgr, ConfigMap, watch, name=name, when=is_watched, cancellation_timeout=5)
    with OperatorRunner(mgr) as runner:
        create(rest, ns, "a")
        create(rest, ns, "b")
        create(rest, ns, "ignored", watched=False)
        wait_for(lambda: set(seen) == {"a", "b"}, what="a daemon per watched object")
        cms(rest, ns).patch("a", {"data": {"v": "1"}})
        wait_for(lambda: seen["a"] == "1", what="the daemon seeing the latest version")
        cms(rest, ns).patch("a", {"metadata": {"labels": {"watched": "no"}}})  # stops matching
        wait_for(lambda: stopped == ["a"], what="a's daemon stopped")
        cms(rest, ns).delete("b")
        wait_for(lambda: sorted(stopped) == ["a", "b"], what="b's daemon stopped")
        assert "ignored" not in seen
        wait_for(lambda: metric("controller_runtime_daemons_running", daemon=name) == 0, what="none running")
    assert 'msg="Starting daemons"' in runner.output


def test_a_finalizer_holds_the_deletion_until_the_daemon_stops(rest: Any, ns: str) -> None:
    release = threading.Event()
    running: set[str] = set()

    def slow(d: daemon.Context) -> None:
        running.add("slow")
        d.stopped.wait()
        release.wait(10)  # cleanup that takes a while

    def stuck(d: daemon.Context) -> None:
        running.add("stuck")
        while True:  # ignores its stop: abandoned after the timeout
            if release.wait(0.05) and d.request.name == "never":
                return

    mgr = manager(rest, ns)
    daemon.add_daemon(mgr, ConfigMap, slow, name=f"slow-{ns}", when=lambda c: c.metadata.name == "slow",
                      finalizer=FINALIZER, cancellation_timeout=10)
    daemon.add_daemon(mgr, ConfigMap, stuck, name=f"stuck-{ns}", when=lambda c: c.metadata.name == "stuck",
                      finalizer=FINALIZER + "-2", cancellation_timeout=0.3)
    with OperatorRunner(mgr):
        create(rest, ns, "slow")
        create(rest, ns, "stuck")
        wait_for(lambda: FINALIZER in (cms(rest, ns).get("slow").metadata.finalizers or ()), what="the finalizer")
        wait_for(lambda: FINALIZER + "-2" in (cms(rest, ns).get("stuck").metadata.finalizers or ()),
                 what="the other finalizer")
        # The finalizer is added before the daemon starts: a deletion seen in between stops a
        # daemon that never ran, which has no cleanup to wait for.
        wait_for(lambda: running == {"slow", "stuck"}, what="both daemons running")
        cms(rest, ns).delete("slow")
        cms(rest, ns).delete("stuck")
        wait_for(lambda: gone(rest, ns, "stuck"), what="the stuck daemon abandoned and its object released")
        assert metric("controller_runtime_daemons_abandoned_total", daemon=f"stuck-{ns}") == 1
        assert cms(rest, ns).get("slow").metadata.deletion_timestamp, "released before the daemon stopped"
        release.set()
        wait_for(lambda: gone(rest, ns, "slow"), what="the object deleted once its daemon stopped")


def test_a_failing_daemon_is_restarted_after_the_backoff_and_a_returning_one_is_not(rest: Any, ns: str) -> None:
    calls: dict[str, int] = defaultdict(int)

    def flaky(d: daemon.Context) -> None:
        calls[d.request.name] += 1
        if calls[d.request.name] < 3:
            raise RuntimeError("not yet")
        d.stopped.wait()

    def once(d: daemon.Context) -> None:
        calls["once-" + d.request.name] += 1

    mgr = manager(rest, ns)
    only_f = lambda c: c.metadata.name == "f"  # noqa: E731
    daemon.add_daemon(mgr, ConfigMap, flaky, name=f"flaky-{ns}", backoff=0.05, cancellation_timeout=5, when=only_f)
    daemon.add_daemon(mgr, ConfigMap, once, name=f"once-{ns}", cancellation_timeout=5, when=only_f)
    with OperatorRunner(mgr) as runner:
        create(rest, ns, "f")
        wait_for(lambda: calls["f"] == 3, what="two restarts")
        wait_for(lambda: calls["once-f"] == 1, what="the one-shot daemon")
        cms(rest, ns).patch("f", {"data": {"v": "2"}})
        time.sleep(0.3)  # events that must not start it again
        assert calls["once-f"] == 1 and calls["f"] == 3
    assert metric("controller_runtime_daemon_runs_total", daemon=f"flaky-{ns}", result="error") == 2
    assert runner.output.count(f'msg="[{ns}/f] Daemon failed; retrying in 0.05s"') == 2


def test_timers_tick_per_object_after_the_initial_delay_and_only_when_idle(rest: Any, ns: str) -> None:
    ticks: dict[str, list[float]] = defaultdict(list)

    def tick(d: daemon.Context) -> None:
        ticks[d.request.name].append(time.monotonic())

    mgr = manager(rest, ns)
    daemon.add_timer(mgr, ConfigMap, tick, name=f"tick-{ns}", interval=0.05, initial_delay=0.3,
                     when=lambda c: c.metadata.name != "quiet")
    daemon.add_timer(mgr, ConfigMap, lambda d: ticks["idle-" + d.request.name].append(time.monotonic()),
                     name=f"idle-{ns}", interval=0.05, idle=1.5, when=lambda c: c.metadata.name == "quiet")
    with OperatorRunner(mgr):
        created = time.monotonic()
        create(rest, ns, "t")
        wait_for(lambda: len(ticks["t"]) >= 3, what="three ticks")
        assert ticks["t"][0] - created >= 0.3
        # created only now: waiting for the ticks above can take over 1.5 s on a busy machine
        create(rest, ns, "quiet")
        busy_until = time.monotonic() + 1.0
        i = 0
        while time.monotonic() < busy_until:  # changes every 0.1 s: never idle for 1.5 s
            i += 1
            cms(rest, ns).patch("quiet", {"data": {"v": str(i)}})
            time.sleep(0.1)
        assert ticks["idle-quiet"] == []
        quiet_since = time.monotonic()
        wait_for(lambda: ticks["idle-quiet"], what="a tick once idle")
        assert ticks["idle-quiet"][0] - quiet_since >= 1.0


# -- async daemons and timers: tasks on the Manager's event loop -----------------------------------


def test_async_daemons_are_tasks_on_the_loop_cancelled_when_their_object_goes_or_the_manager_stops(
        rest: Any, ns: str) -> None:
    seen: dict[str, str] = {}
    cancelled: list[str] = []
    threads: set[str] = set()

    async def watch(d: daemon.Context) -> None:
        threads.add(threading.current_thread().name)
        try:
            while True:
                seen[d.request.name] = d.object.data["v"]  # the latest cached version
                await asyncio.sleep(0.02)
        except asyncio.CancelledError:
            assert d.stopped.is_set()
            cancelled.append(d.request.name)
            raise

    mgr = manager(rest, ns)
    name = f"awatch-{ns}"
    daemon.add_daemon(mgr, ConfigMap, watch, name=name, when=is_watched, cancellation_timeout=5)
    with OperatorRunner(mgr):
        for n in ("a", "b", "c"):
            create(rest, ns, n)
        create(rest, ns, "ignored", watched=False)
        wait_for(lambda: set(seen) == {"a", "b", "c"}, what="a task per watched object")
        cms(rest, ns).patch("a", {"data": {"v": "1"}})
        wait_for(lambda: seen["a"] == "1", what="the task seeing the latest version")
        cms(rest, ns).patch("a", {"metadata": {"labels": {"watched": "no"}}})  # stops matching
        wait_for(lambda: cancelled == ["a"], what="a's task cancelled")
        cms(rest, ns).delete("b")
        wait_for(lambda: sorted(cancelled) == ["a", "b"], what="b's task cancelled")
        assert metric("controller_runtime_daemons_running", daemon=name) == 1
    assert sorted(cancelled) == ["a", "b", "c"], "the manager's stop cancels the rest"
    assert threads == {mgr.get_event_loop().name}, "async daemons run on the manager's loop thread"
    assert "ignored" not in seen
    assert metric("controller_runtime_daemons_running", daemon=name) == 0


def test_an_async_daemons_finalizer_holds_the_deletion_until_its_cancellation_cleanup_ends(
        rest: Any, ns: str) -> None:
    release = threading.Event()
    running: set[str] = set()

    async def slow(d: daemon.Context) -> None:
        running.add("slow")
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            while not release.is_set():  # cleanup that awaits for a while
                await asyncio.sleep(0.02)
            raise

    async def stuck(d: daemon.Context) -> None:
        running.add("stuck")
        while not release.is_set():  # swallows its cancellation: abandoned after the timeout
            try:
                await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                continue

    mgr = manager(rest, ns)
    daemon.add_daemon(mgr, ConfigMap, slow, name=f"aslow-{ns}", when=lambda c: c.metadata.name == "slow",
                      finalizer=FINALIZER, cancellation_timeout=10)
    daemon.add_daemon(mgr, ConfigMap, stuck, name=f"astuck-{ns}", when=lambda c: c.metadata.name == "stuck",
                      finalizer=FINALIZER + "-2", cancellation_timeout=0.3)
    try:
        with OperatorRunner(mgr):
            create(rest, ns, "slow")
            create(rest, ns, "stuck")
            wait_for(lambda: FINALIZER in (cms(rest, ns).get("slow").metadata.finalizers or ()),
                     what="the finalizer")
            wait_for(lambda: FINALIZER + "-2" in (cms(rest, ns).get("stuck").metadata.finalizers or ()),
                     what="the other finalizer")
            # The finalizer is added before the daemon starts: a deletion seen in between stops a
            # daemon that never ran, which has no cleanup to wait for.
            wait_for(lambda: running == {"slow", "stuck"}, what="both daemons running")
            cms(rest, ns).delete("slow")
            cms(rest, ns).delete("stuck")
            wait_for(lambda: gone(rest, ns, "stuck"), what="the stuck task abandoned and its object released")
            assert metric("controller_runtime_daemons_abandoned_total", daemon=f"astuck-{ns}") == 1
            assert cms(rest, ns).get("slow").metadata.deletion_timestamp, "released before the task ended"
            release.set()
            wait_for(lambda: gone(rest, ns, "slow"), what="the object deleted once its task ended")
    finally:
        release.set()


def test_a_failing_async_daemon_is_restarted_after_the_backoff_and_a_returning_one_is_not(
        rest: Any, ns: str) -> None:
    calls: dict[str, int] = defaultdict(int)

    async def flaky(d: daemon.Context) -> None:
        calls[d.request.name] += 1
        if calls[d.request.name] < 3:
            raise RuntimeError("not yet")
        await d.sleep_async(3600)  # True once stopped

    async def once(d: daemon.Context) -> None:
        calls["once-" + d.request.name] += 1

    mgr = manager(rest, ns)
    only_f = lambda c: c.metadata.name == "f"  # noqa: E731
    daemon.add_daemon(mgr, ConfigMap, flaky, name=f"aflaky-{ns}", backoff=0.05, cancellation_timeout=5, when=only_f)
    daemon.add_daemon(mgr, ConfigMap, once, name=f"aonce-{ns}", cancellation_timeout=5, when=only_f)
    with OperatorRunner(mgr) as runner:
        create(rest, ns, "f")
        wait_for(lambda: calls["f"] == 3, what="two restarts")
        wait_for(lambda: calls["once-f"] == 1, what="the one-shot daemon")
        cms(rest, ns).patch("f", {"data": {"v": "2"}})
        time.sleep(0.3)  # events that must not start it again
        assert calls["once-f"] == 1 and calls["f"] == 3
    assert metric("controller_runtime_daemon_runs_total", daemon=f"aflaky-{ns}", result="error") == 2
    assert metric("controller_runtime_daemon_runs_total", daemon=f"aonce-{ns}", result="returned") == 1
    assert runner.output.count(f'msg="[{ns}/f] Daemon failed; retrying in 0.05s"') == 2


def test_async_timers_tick_after_the_initial_delay_and_only_when_idle(rest: Any, ns: str) -> None:
    ticks: dict[str, list[float]] = defaultdict(list)

    async def tick(d: daemon.Context) -> None:
        await asyncio.sleep(0)
        ticks[d.request.name].append(time.monotonic())

    async def idle_tick(d: daemon.Context) -> None:
        ticks["idle-" + d.request.name].append(time.monotonic())

    mgr = manager(rest, ns)
    daemon.add_timer(mgr, ConfigMap, tick, name=f"atick-{ns}", interval=0.05, initial_delay=0.3,
                     when=lambda c: c.metadata.name != "quiet")
    daemon.add_timer(mgr, ConfigMap, idle_tick, name=f"aidle-{ns}", interval=0.05, idle=1.5,
                     when=lambda c: c.metadata.name == "quiet")
    with OperatorRunner(mgr):
        created = time.monotonic()
        create(rest, ns, "t")
        create(rest, ns, "quiet")
        wait_for(lambda: len(ticks["t"]) >= 3, what="three ticks")
        assert ticks["t"][0] - created >= 0.3
        busy_until = time.monotonic() + 0.8
        i = 0
        while time.monotonic() < busy_until:  # changes every 0.1 s: never idle for 1.5 s
            i += 1
            cms(rest, ns).patch("quiet", {"data": {"v": str(i)}})
            time.sleep(0.1)
        assert ticks["idle-quiet"] == []
        quiet_since = time.monotonic()
        wait_for(lambda: ticks["idle-quiet"], what="a tick once idle")
        assert ticks["idle-quiet"][0] - quiet_since >= 1.0
    assert metric("controller_runtime_daemon_runs_total", daemon=f"atick-{ns}", result="success") >= 3


def test_a_sync_function_returning_a_coroutine_is_an_error_naming_the_fix(rest: Any, ns: str) -> None:
    awaited: list[str] = []

    async def work(d: daemon.Context) -> None:
        awaited.append(d.request.name)

    def forgot(d: daemon.Context) -> Any:  # should have been async def
        return work(d)

    mgr = manager(rest, ns)
    daemon.add_daemon(mgr, ConfigMap, forgot, name=f"forgot-{ns}", backoff=0.01, when=is_watched)
    daemon.add_timer(mgr, ConfigMap, forgot, name=f"forgot-timer-{ns}", interval=0.01, when=is_watched)
    with OperatorRunner(mgr) as runner:
        create(rest, ns, "x")
        wait_for(lambda: metric("controller_runtime_daemon_runs_total", daemon=f"forgot-{ns}", result="error") == 1
                 and metric("controller_runtime_daemon_runs_total", daemon=f"forgot-timer-{ns}", result="error") == 1,
                 what="both refused")
        time.sleep(0.2)  # neither is retried: the same call would fail the same way
    assert awaited == []
    fix = "forgot returned a coroutine that was never awaited: declare it 'async def forgot(ctx)'"
    assert runner.output.count(fix) == 2
    assert f"[{ns}/x] " in runner.output and "this object's daemon ends" in runner.output
    assert "this object's timer ends" in runner.output
    assert metric("controller_runtime_daemon_runs_total", daemon=f"forgot-{ns}", result="error") == 1
    assert "was never awaited\n" not in runner.output  # no RuntimeWarning: the coroutine was closed


def test_many_async_daemons_do_not_grow_the_thread_count(rest: Any, ns: str) -> None:
    n = 100
    running: set[str] = set()

    async def hold(d: daemon.Context) -> None:
        running.add(d.request.name)
        await d.sleep_async(3600)

    mgr = manager(rest, ns)
    name = f"many-{ns}"
    daemon.add_daemon(mgr, ConfigMap, hold, name=name, cancellation_timeout=5, when=is_watched)
    with OperatorRunner(mgr):
        create(rest, ns, "first")
        wait_for(lambda: running == {"first"}, what="the first task (the loop thread started)")
        before = threading.active_count()
        for i in range(n - 1):
            create(rest, ns, f"cm-{i}")
        wait_for(lambda: metric("controller_runtime_daemons_running", daemon=name) == n, timeout=30,
                 what=f"{n} async daemons running")
        grown = threading.active_count() - before
        assert grown < 20, f"{n} async daemons grew the process by {grown} threads"
    assert metric("controller_runtime_daemons_running", daemon=name) == 0


# -- issue 39: a daemon that deletes its own object never strands it ---------------------------------


def test_a_daemon_deleting_its_own_object_never_strands_it(rest: Any, ns: str, monkeypatch: Any) -> None:
    """kopf's built-ins example: the daemon's own body deletes its object. The daemon returning
    races the stop its deletion causes; the finalizer must still be released every time (before
    the fix a KeyError in ``_stop_worker`` left some objects Terminating with the finalizer)."""
    client = cms(rest, ns)
    failures: list[str] = []

    def hook(args: Any) -> None:
        failures.append(repr(args.exc_value))

    monkeypatch.setattr(threading, "excepthook", hook)

    async def kill_own_object(d: daemon.Context) -> None:
        await asyncio.to_thread(client.delete, d.request.name)

    def kill_own_object_sync(d: daemon.Context) -> None:
        client.delete(d.request.name)

    mgr = manager(rest, ns)
    daemon.add_daemon(mgr, ConfigMap, kill_own_object, name=f"kill-{ns}", finalizer=FINALIZER,
                      cancellation_timeout=5, when=lambda c: (c.metadata.name or "").startswith("cm-"))
    daemons = daemon.add_daemon(mgr, ConfigMap, kill_own_object_sync, name=f"skill-{ns}", cancellation_timeout=5,
                                when=lambda c: (c.metadata.name or "").startswith("sync-"))
    with OperatorRunner(mgr):
        for i in range(20):
            create(rest, ns, f"cm-{i}")
            create(rest, ns, f"sync-{i}")
        wait_for(lambda: not [c for c in client.list().items if c.metadata.name != "kube-root-ca.crt"],
                 timeout=15, what="every object deleted by its own daemon")
        wait_for(lambda: not daemons._stopping, what="no stop left pending")
    assert failures == []


def test_a_daemon_raising_while_it_stops_is_not_said_to_restart(rest: Any, ns: str) -> None:
    def raise_on_stop(d: daemon.Context) -> None:
        d.stopped.wait()
        raise RuntimeError("cleanup failed")

    mgr = manager(rest, ns)
    daemon.add_daemon(mgr, ConfigMap, raise_on_stop, name=f"rstop-{ns}", backoff=0.01, cancellation_timeout=5,
                      when=lambda c: c.metadata.name == "r")
    with OperatorRunner(mgr) as runner:
        create(rest, ns, "r")
        wait_for(lambda: f'msg="[{ns}/r] Daemon started"' in runner.output, what="the daemon started")
        cms(rest, ns).delete("r")
        wait_for(lambda: "failed while stopping" in runner.output, what="the failure logged")
    assert f'msg="[{ns}/r] Daemon failed while stopping; not restarted"' in runner.output
    assert "retrying" not in runner.output


def test_daemons_and_timers_log_each_step_count_retries_and_honour_temporary_and_permanent_errors(
        rest: Any, ns: str) -> None:
    """kopf's per-object lines, ``retry`` and ``TemporaryError(delay)``/``PermanentError``."""
    seen: dict[str, list[tuple[int, float]]] = defaultdict(list)

    def flaky(d: daemon.Context) -> None:
        seen["daemon"].append((d.retries, time.monotonic()))
        if d.retries == 0:
            raise reconcile.TemporaryError("not ready", delay=0.3)
        if d.retries == 1:
            raise ValueError("a bug")  # the backoff (0.01 s), logged with its traceback
        if d.retries == 2:
            raise reconcile.PermanentError("cannot ever work")

    async def ticking(d: daemon.Context) -> None:
        seen["timer"].append((d.retries, time.monotonic()))
        if len(seen["timer"]) == 1:
            raise reconcile.TemporaryError("later", delay=0.2)

    def parked(d: daemon.Context) -> None:
        d.stopped.wait()

    def hopeless(d: daemon.Context) -> None:
        seen["hopeless"].append((d.retries, time.monotonic()))
        raise RuntimeError("broken")

    mgr = manager(rest, ns)
    def only(n: str) -> Callable[[ConfigMap], bool]:
        return lambda c: c.metadata.name == n

    daemon.add_daemon(mgr, ConfigMap, flaky, name=f"flaky-{ns}", backoff=0.01, when=only("d"))
    daemon.add_timer(mgr, ConfigMap, ticking, name=f"tick-{ns}", interval=0.05, when=only("d"))
    daemon.add_daemon(mgr, ConfigMap, parked, name=f"parked-{ns}", when=is_watched, cancellation_timeout=5)
    daemon.add_daemon(mgr, ConfigMap, hopeless, name=f"hopeless-{ns}", when=only("d"), backoff=0.01, retries=2)
    with OperatorRunner(mgr) as runner:
        create(rest, ns, "d", watched=False)
        create(rest, ns, "p")
        wait_for(lambda: len(seen["daemon"]) == 3 and len(seen["timer"]) >= 3 and len(seen["hopeless"]) == 2,
                 what="the retries")
        cms(rest, ns).patch("p", {"metadata": {"labels": {"watched": "no"}}})
        wait_for(lambda: f'msg="[{ns}/p] Daemon stopped"' in runner.output, what="the stop")
    assert [r for r, _ in seen["daemon"]] == [0, 1, 2]
    assert seen["daemon"][1][1] - seen["daemon"][0][1] >= 0.3, "the TemporaryError's delay"
    assert [r for r, _ in seen["timer"][:3]] == [0, 1, 0], "a success resets the retry count"
    assert seen["timer"][1][1] - seen["timer"][0][1] >= 0.2
    out = runner.output
    for line in (f'msg="[{ns}/d] Daemon started" daemon=flaky-{ns}',
                 f'msg="[{ns}/d] Daemon failed temporarily; retrying in 0.3s" daemon=flaky-{ns} '
                 'error="TemporaryError: not ready" retry=1',
                 f'msg="[{ns}/d] Daemon failed; retrying in 0.01s" daemon=flaky-{ns} error="ValueError: a bug" retry=2',
                 f'msg="[{ns}/d] Daemon failed permanently" daemon=flaky-{ns} error="PermanentError: cannot ever work"',
                 f'msg="[{ns}/d] Timer failed temporarily; retrying in 0.2s"',
                 f'msg="[{ns}/p] Daemon stopping" daemon=parked-{ns} reason="the object no longer matches `when`"',
                 f'msg="[{ns}/p] Daemon stopped" daemon=parked-{ns}'):
        assert out.count(line) == 1, line
    assert f'msg="[{ns}/d] Daemon failed; giving up after 2 attempts" daemon=hopeless-{ns}' in out
    assert [r for r, _ in seen["hopeless"]] == [0, 1], "retries=2: two attempts"
    assert out.count("Traceback") == 2, "only the unexpected exceptions have a traceback (not the last one)"
    assert f'msg="[{ns}/d] Daemon returned' not in out, "a permanent failure is not a return"
