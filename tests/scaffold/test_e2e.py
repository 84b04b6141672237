"""What a new user does, from this checkout's wheel (issue 18, item 7).

Build the wheel, install it into a fresh virtualenv outside the checkout (constrained to
uv.lock), ``samplecontroller init`` a project, ``create api`` a namespaced kind with conditions
(controller-runtime style), a cluster-scoped one (client-go style), the other two
combinations and an async one (``--style async``, namespaced), run the project's own
``make test`` (in the environment the scaffold tests share, tests/scaffold/conftest.py: the project
installs itself and the toolkit from the wheel it keeps into it; uv's cache reused), then ``make run`` it on the embedded API server and apply the samples with
the installed kubectl (a temporary HOME): the objects become Ready, with their observedGeneration
and a Reconciled Event.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from samplecontroller.apiserver.testing import require_kubectl
from tests.wheelenv import WheelEnv, run

T = TypeVar("T")
MAKE_TEST = ["make", "-j4", "--output-sync=target", "test"]
"""The project's ``make test``, its independent steps (ruff, mypy, the staleness checks, pytest) at once."""


def wait_for(what: str, probe: Callable[[], T | None], timeout: float = 60.0) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value is not None:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def kubectl_binary() -> str:
    return require_kubectl()


def ready(obj: dict[str, Any]) -> bool:
    status = obj.get("status") or {}
    conditions = status.get("conditions") or []
    return status.get("observedGeneration") == obj["metadata"]["generation"] and any(
        c["type"] == "Ready" and c["status"] == "True" for c in conditions)


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Callable[[Path, dict[str, str], int], subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []

    def start(project: Path, env: dict[str, str], port: int) -> subprocess.Popen[str]:
        proc = subprocess.Popen(["make", "run", f"PORT={port}"], cwd=project, env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


@pytest.mark.slow
@pytest.mark.timeout(600)  # about 80 s idle; steps of its own wait up to 600 s on a loaded machine
def test_scaffold_build_test_run_apply(tmp_path: Path, project_env: WheelEnv, project_make_env: dict[str, str],
                                       built_wheel: Path, kubectl_binary: str,
                                       running: Callable[[Path, dict[str, str], int], subprocess.Popen[str]]) -> None:
    env = project_make_env
    work = tmp_path / "work"
    work.mkdir()
    scaffold = str(project_env.bin("samplecontroller"))

    started = time.monotonic()
    run([scaffold, "init", "backup-operator", "--domain", "example.com", "--package", "backupop"], cwd=work, env=env)
    project = work / "backup-operator"
    run([scaffold, "create", "api", "--group", "ops", "--version", "v1", "--kind", "Backup"], cwd=project, env=env)
    run([scaffold, "create", "api", "--group", "ops", "--version", "v1", "--kind", "Vault", "--cluster",
         "--style", "client-go"], cwd=project, env=env)
    # the other two combinations of style and scope, for make test's mypy, ruff and pytest
    run([scaffold, "create", "api", "--group", "store", "--version", "v1beta1", "--kind", "Bucket", "--cluster"],
        cwd=project, env=env)
    run([scaffold, "create", "api", "--group", "store", "--version", "v1beta1", "--kind", "Restore",
         "--style", "client-go"], cwd=project, env=env)
    run([scaffold, "create", "api", "--group", "ops", "--version", "v1", "--kind", "Schedule", "--style", "async"],
        cwd=project, env=env)
    makefile = (project / "Makefile").read_text()
    # the toolkit is the wheel, kept inside the project (no path out of it in the project's files)
    assert f"TOOLKIT_SOURCE ?= $(abspath .toolkit/{built_wheel.name})" in makefile
    assert (project / ".toolkit" / built_wheel.name).read_bytes() == built_wheel.read_bytes()
    assert str(built_wheel.parent) not in makefile and str(built_wheel.parent) not in (project / "PROJECT").read_text()
    scaffolded = time.monotonic()
    make_test = run(MAKE_TEST, cwd=project, env=env, timeout=600)
    done = time.monotonic()
    print(f"\nsamplecontroller init + 5x create api: {scaffolded - started:.1f}s; make test (venv, ruff, mypy, "
          f"verify, pytest): {done - scaffolded:.1f}s; total {done - started:.1f}s")
    assert "All checks passed!" in make_test.stdout and "Success: no issues found" in make_test.stdout
    assert "up to date" in make_test.stdout and " passed" in make_test.stdout and "failed" not in make_test.stdout

    run(["make", "toolkit-dist"], cwd=project, env=env)  # what docker-build puts in the image
    assert [p.name for p in (project / "dist").glob("*.whl")] == [built_wheel.name]

    port = free_port()
    proc = running(project, env, port)
    assert proc.stdout is not None
    lines: list[str] = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("Embedded API server ready at"):
            break
    assert lines and lines[-1].startswith(f"Embedded API server ready at https://127.0.0.1:{port}"), "".join(lines)
    kubeconfig = project / ".local" / "kubeconfig"
    home = tmp_path / "home"
    home.mkdir()

    def kubectl(*args: str) -> str:
        result = run([kubectl_binary, "--kubeconfig", str(kubeconfig), "--cache-dir", str(home / "cache"), *args],
                     cwd=project, env={**env, "HOME": str(home)})
        return result.stdout

    assert "backup.ops.example.com/backup-sample created" in kubectl("apply", "-f", "config/samples/")

    def get(resource: str) -> dict[str, Any] | None:
        obj: dict[str, Any] = json.loads(kubectl("get", resource, "-o", "json"))
        return obj if ready(obj) else None

    backup = wait_for("the Backup to become Ready", lambda: get("backup/backup-sample"))
    assert backup["status"]["observedGeneration"] == 1
    assert wait_for("the Vault to become Ready", lambda: get("vault/vault-sample"))["status"]["observedGeneration"] == 1
    assert wait_for("the async Schedule to become Ready",
                    lambda: get("schedule/schedule-sample"))["status"]["observedGeneration"] == 1
    table = kubectl("get", "backups")
    assert table.split("\n")[0].split() == ["NAME", "READY", "AGE"] and table.split("\n")[1].split()[:2] == [
        "backup-sample", "True"]

    def reconciled_event() -> dict[str, Any] | None:
        events = json.loads(kubectl("get", "events", "--field-selector", "involvedObject.name=backup-sample",
                                    "-o", "json"))["items"]
        return next((e for e in events if e["reason"] == "Reconciled"), None)

    event = wait_for("the Reconciled Event", reconciled_event)
    assert (event["type"], event["involvedObject"]["kind"], event["source"]["component"]) == (
        "Normal", "Backup", "backup-controller")

    kubectl("patch", "backup", "backup-sample", "--type", "merge", "-p", '{"spec": {"message": "changed"}}')
    wait_for("generation 2 to be observed",
             lambda: (b if (b := get("backup/backup-sample")) and b["status"]["observedGeneration"] == 2 else None))

    proc.send_signal(signal.SIGTERM)  # make passes it on to the operator once
    output = proc.communicate(timeout=60)[0]
    assert "Manager stopped" in output and "level=error" not in "".join(lines) + output, "".join(lines) + output
