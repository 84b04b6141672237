"""Per-object daemons and timers (issue 26 item 2) against the embedded API server."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from typing import Any

from prometheus_client import REGISTRY

from samplecontroller.apimachinery import errors
from samplecontroller.foo_reconciler import SCHEME
from samplecontroller.kubernetes.apis.core.v1 import ConfigMap
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.kubernetes.clientset import Clientset
from samplecontroller.runtime import daemon
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

    def slow(d: daemon.Context) -> None:
        d.stopped.wait()
        release.wait(10)  # cleanup that takes a while

    def stuck(d: daemon.Context) -> None:
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
    assert runner.output.count(f'msg="[{ns}/f] Daemon failed; restarting after the backoff"') == 2


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
        create(rest, ns, "quiet")
        wait_for(lambda: len(ticks["t"]) >= 3, what="three ticks")
        assert ticks["t"][0] - created >= 0.3
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
