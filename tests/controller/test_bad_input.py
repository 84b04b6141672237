"""main.py on bad input (issue 19 item 6): a bad --master, a kubeconfig whose server is no
http(s) URL, an unwritable --local-dir and an exec credential plugin that never exits each end in
one line and exit status 1, never a traceback or a hang."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from samplecontroller.rest.config import ConfigError, ExecPlugin, server_url
from tests.controller.test_e2e import _assert_one_line_error, _run_main


def _one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    _assert_one_line_error(proc, *needles)
    assert proc.stderr.strip().splitlines()[-1].startswith("main.py: error: "), proc.stderr


def _kubeconfig(path: Path, server: str, user: dict[str, Any] | None = None) -> Path:
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": user or {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}]}))
    return path


@pytest.mark.parametrize(("master", "needle"), [
    ("garbage", "garbage"),
    ("ftp://example.com", "unsupported scheme 'ftp'"),
    ("http://", "has no host"),
    (":::", "is not a URL"),
    ("not a url", "is not a URL"),
    ("127.0.0.1:9", "http://127.0.0.1:9"),  # host:port means http:// without TLS settings, as in client-go
])
def test_bad_master_is_one_line(master: str, needle: str) -> None:
    _one_line_error(_run_main("--master", master), needle)


@pytest.mark.parametrize(("server", "needle"), [
    ("not a url", "the API server URL 'not a url' is not a URL"),
    ("ftp://example.com/k8s", "the API server URL 'ftp://example.com/k8s' has the unsupported scheme 'ftp'"),
    ("https://", "has no host"),
])
def test_kubeconfig_server_that_is_no_url_is_one_line(tmp_path: Path, server: str, needle: str) -> None:
    _one_line_error(_run_main("--kubeconfig", str(_kubeconfig(tmp_path / "kubeconfig", server))), needle)


def test_unwritable_local_dir_is_one_line(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("")
    for local_dir, reason in ((a_file, "File exists"), (a_file / "sub", "Not a directory")):
        _one_line_error(_run_main("--local", "--port", "0", "--local-dir", str(local_dir)),
                        f"--local-dir {local_dir}: cannot write there: {reason}")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_read_only_local_dir_is_one_line(tmp_path: Path) -> None:
    read_only = tmp_path / "ro"
    read_only.mkdir(mode=0o555)
    _one_line_error(_run_main("--local", "--port", "0", "--local-dir", str(read_only / "data")),
                    "cannot write there: Permission denied")


def _hanging_plugin(tmp_path: Path) -> tuple[Path, Path]:
    """A plugin script that starts a child (its pid written to a file) and never exits."""
    pid_file = tmp_path / "child.pid"
    script = tmp_path / "hang.sh"
    script.write_text(f"#!/bin/sh\nsleep 600 &\necho $! > {pid_file}\nwait\n")
    script.chmod(0o755)
    return script, pid_file


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not Path(f"/proc/{pid}/status").read_text().count("State:\tZ")


def test_exec_plugin_that_never_exits_is_bounded_and_named(tmp_path: Path) -> None:
    script, pid_file = _hanging_plugin(tmp_path)
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig", "https://127.0.0.1:9", {"exec": {
        "apiVersion": "client.authentication.k8s.io/v1", "command": str(script), "args": ["--cluster", "dev"],
        "interactiveMode": "Never"}})
    started = time.monotonic()
    proc = _run_main("--kubeconfig", str(kubeconfig), "--exec-plugin-timeout", "1s", timeout=30)
    _one_line_error(proc, f"exec plugin {script} --cluster dev did not exit within 1s", "--exec-plugin-timeout")
    assert time.monotonic() - started < 25
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 30
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the plugin's child survived the plugin's timeout"


def test_exec_plugin_timeout_kills_the_process_group(tmp_path: Path) -> None:
    script, pid_file = _hanging_plugin(tmp_path)
    plugin = ExecPlugin(command=str(script), api_version="client.authentication.k8s.io/v1", timeout=0.5)
    with pytest.raises(ConfigError, match=r"did not exit within 0\.5s"):
        plugin.run()
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 30
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


@pytest.mark.parametrize(("host", "tls", "url"), [
    ("example.com:6443", True, "https://example.com:6443"),
    ("example.com:6443", False, "http://example.com:6443"),
    ("https://example.com/prefix", False, "https://example.com/prefix"),
    ("HTTP://example.com", True, "HTTP://example.com"),
])
def test_server_url_defaults_the_scheme_as_client_go(host: str, tls: bool, url: str) -> None:
    assert server_url(host, tls) == url
