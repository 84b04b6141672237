"""Fixtures for the controller's end-to-end tests: kubectl, a fresh server, main.py runs."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def find_kubectl() -> str | None:
    return shutil.which("kubectl") or (shutil.which("/usr/bin/kubectl"))


def wait_for(predicate: Callable[[], Any], timeout: float = 20.0, interval: float = 0.1, what: str = "") -> Any:
    """Poll ``predicate`` until it returns something truthy; fail the test after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout}s waiting for {what or predicate}; last value: {last!r}")


class Kubectl:
    """Runs the real kubectl against one kubeconfig, with a private HOME and cache dir."""

    def __init__(self, binary: str, kubeconfig: Path, home: Path) -> None:
        self.binary = binary
        self.kubeconfig = kubeconfig
        self.home = home

    def run(self, *args: str, check: bool = True, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "HOME": str(self.home), "KUBECONFIG": str(self.kubeconfig)}
        cmd = [self.binary, "--cache-dir", str(self.home / "cache"), *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, input=stdin, timeout=60, cwd=ROOT)
        if check and proc.returncode != 0:
            pytest.fail(f"kubectl {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
        return proc

    def json(self, *args: str) -> Any:
        proc = self.run(*args, "-o", "json", check=False)
        if proc.returncode != 0:
            return None
        return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def kubectl_binary() -> str:
    binary = find_kubectl()
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("kubectl is required under CI=true but was not found on PATH")
        pytest.skip("kubectl not found on PATH")
    return binary


class ControllerProcess:
    """``main.py`` as a subprocess; its combined output goes to ``log_path``."""

    def __init__(self, kubeconfig: Path, log_path: Path, *extra: str) -> None:
        self.log_path = log_path
        self._log = open(log_path, "a")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "main.py"), "--kubeconfig", str(kubeconfig), "--resync", "30s",
             "--shutdown-timeout", "10s", *extra],
            stdout=self._log, stderr=subprocess.STDOUT, cwd=ROOT,
        )

    def output(self) -> str:
        return self.log_path.read_text()

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._log.close()


@pytest.fixture
def start_controller(tmp_path: Path) -> Iterator[Callable[..., ControllerProcess]]:
    started: list[ControllerProcess] = []

    def start(kubeconfig: Path, *extra: str) -> ControllerProcess:
        c = ControllerProcess(kubeconfig, tmp_path / f"controller-{len(started)}.log", *extra)
        started.append(c)
        return c

    yield start
    for c in started:
        if c.proc.poll() is None:
            c.stop(signal.SIGKILL)
