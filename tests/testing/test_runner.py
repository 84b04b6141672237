"""OperatorRunner (issue 26 item 4): a Manager or a whole operator's main run inside the test
process against the embedded API server, its logs captured, stopped cleanly at exit."""

from __future__ import annotations

import argparse
import threading
from collections.abc import Sequence
from typing import Any

import msgspec
import pytest

from samplecontroller.apimachinery import errors
from samplecontroller.foo_reconciler import SCHEME
from samplecontroller.kubernetes.apis.core.v1 import ConfigMap
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.kubernetes.clientset import Clientset
from samplecontroller.runtime import builder, cmd
from samplecontroller.runtime import client as rtclient
from samplecontroller.runtime.manager import Manager, Options, runnable_func
from samplecontroller.runtime.reconcile import Request, Result
from samplecontroller.testing.runner import OperatorRunner
from tests.live import ns, rest, wait_for

__all__ = ["ns", "rest"]

MARK = "example.com/seen"


class Marker:
    """Annotates every ConfigMap it reconciles."""

    def __init__(self, c: rtclient.Client) -> None:
        self.client = c

    def reconcile(self, request: Request) -> Result:
        try:
            cm = self.client.get(ConfigMap, request.namespace, request.name)
        except errors.NotFoundError:
            return Result()
        if MARK not in (cm.metadata.annotations or {}):
            marked = msgspec.structs.replace(cm, metadata=msgspec.structs.replace(
                cm.metadata, annotations={**(cm.metadata.annotations or {}), MARK: "yes"}))
            self.client.patch(marked, rtclient.MergeFrom(cm))
        return Result()


def setup(mgr: Manager, args: argparse.Namespace) -> None:
    builder.controller_managed_by(mgr).for_(ConfigMap).complete(Marker(mgr.get_client()))


def marked(rest: Any, ns: str, name: str) -> bool:
    cm = Clientset(rest).core_v1().configmaps(ns).get(name)
    return MARK in (cm.metadata.annotations or {})


def create(rest: Any, ns: str, name: str) -> None:
    Clientset(rest).core_v1().configmaps(ns).create(ConfigMap(metadata=ObjectMeta(name=name, namespace=ns)))


def test_a_manager_runs_and_stops_with_its_logs_captured(rest: Any, ns: str) -> None:
    mgr = Manager(rest, scheme=SCHEME, options=Options(namespaces=(ns,)))
    builder.controller_managed_by(mgr).for_(ConfigMap).named(f"marker-{ns}").complete(Marker(mgr.get_client()))
    with OperatorRunner(mgr) as runner:
        assert runner.running
        create(rest, ns, "a")
        wait_for(lambda: marked(rest, ns, "a"), what="the ConfigMap marked")
    assert not runner.running
    assert runner.exit_code == 0 and runner.exception is None
    assert f'msg="Starting workers" controller=marker-{ns}' in runner.output
    assert f'msg="All workers finished" controller=marker-{ns}' in runner.output
    assert any(r.levelname == "INFO" for r in runner.records)


def test_an_operator_failure_is_raised_at_exit_or_kept(rest: Any) -> None:
    def boom(stop: threading.Event) -> None:
        raise RuntimeError("the runnable broke")

    mgr = Manager(rest, scheme=SCHEME)
    mgr.add(runnable_func(boom))
    with pytest.raises(RuntimeError, match="the runnable broke"), OperatorRunner(mgr) as failing:
        wait_for(lambda: not failing.running, what="the manager stopped by its failure")
    mgr2 = Manager(rest, scheme=SCHEME)
    mgr2.add(runnable_func(boom))
    with OperatorRunner(mgr2, reraise=False) as runner:
        wait_for(lambda: not runner.running, what="the manager stopped")
    assert runner.exit_code == 1 and isinstance(runner.exception, RuntimeError)
    assert "Runnable failed; stopping the manager" in runner.output


def operator_main(argv: Sequence[str]) -> int:
    """An operator's main, as a scaffolded project's __main__ has it."""
    return cmd.main(argv, prog="markers", name="markers", scheme=SCHEME, setup=setup)


def test_a_whole_operator_main_runs_in_the_test_process(rest: Any, ns: str, apiserver: Any) -> None:
    argv = ["--kubeconfig", str(apiserver.kubeconfig_path), "--namespace", ns, "--workers", "1"]
    with OperatorRunner.for_main(operator_main, argv) as runner:
        assert runner.manager is not None and runner.manager.elected().is_set()
        create(rest, ns, "b")
        wait_for(lambda: marked(rest, ns, "b"), what="the ConfigMap marked")
    assert runner.exit_code == 0, runner.output
    assert 'msg="Starting manager" name=markers' in runner.output
    assert 'msg="Manager stopped" name=markers' in runner.output


def test_a_main_that_cannot_start_ends_with_its_error_line(tmp_path: Any) -> None:
    missing = tmp_path / "nope"
    with OperatorRunner.for_main(operator_main, ["--kubeconfig", str(missing)]) as runner:
        pass
    assert runner.exit_code == 1
    assert "markers: error:" in runner.output and str(missing) in runner.output
    with OperatorRunner.for_main(operator_main, ["--no-such-flag"]) as runner:
        pass
    assert runner.exit_code != 0 and runner.manager is None


def test_needs_something_to_run() -> None:
    with pytest.raises(ValueError, match="needs a Manager"), OperatorRunner():
        pass
