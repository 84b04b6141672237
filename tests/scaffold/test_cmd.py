"""``samplecontroller.runtime.cmd`` (an operator's main) and the test kit without the extras."""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from samplecontroller import rest
from samplecontroller.apimachinery import errors
from samplecontroller.client.scheme import Scheme
from samplecontroller.runtime import cmd
from samplecontroller.runtime.manager import Manager
from samplecontroller.runtime.webhook.admission import DefaultingHandler, ValidatingHandler
from tests.packaging.test_extras import run_without

ROOT = Path(__file__).resolve().parents[2]


def nothing(mgr: Manager, args: argparse.Namespace) -> None:
    """A setup registering no controller."""


def run_once(argv: list[str]) -> int:
    args = cmd.parse_flags(argv, prog="op", name="op")
    stop = threading.Event()
    stop.set()  # stop at once once everything has started
    return cmd.run(args, stop, name="op", scheme=Scheme(), setup=nothing)


def test_a_bad_kubeconfig_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(cmd.UserError, match="nope"):
        run_once(["--kubeconfig", str(tmp_path / "nope")])


def test_local_on_a_port_in_use_is_a_user_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(cmd.UserError, match=f"--local: cannot start the embedded API server: port {port} is in use"):
            run_once(["--local", "--port", str(port), "--local-dir", str(tmp_path / "local")])


def test_local_with_a_missing_crd_directory_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(cmd.UserError, match=r"--local: .*nope: not a directory of CRD YAML files"):
        run_once(["--local", "--port", "0", "--local-dir", str(tmp_path / "local"), "--crds", str(tmp_path / "nope")])


def test_local_installs_the_crds_and_writes_the_kubeconfig(tmp_path: Path) -> None:
    assert run_once(["--local", "--port", "0", "--local-dir", str(tmp_path / "local"),
                     "--crds", str(ROOT / "crds")]) == 0
    assert "token:" in (tmp_path / "local" / "kubeconfig").read_text()


def test_port_without_local_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cmd.parse_flags(["--port", "7443"], prog="op", name="op")
    assert exit_info.value.code == 1
    assert capsys.readouterr().err == ("op: error: --port applies only with --local (the embedded API server) "
                                       "(see --help)\n")


def test_local_without_the_apiserver_extra_is_one_line(tmp_path: Path) -> None:
    code = (f"import sys; from samplecontroller.runtime import cmd; from samplecontroller.client.scheme import Scheme; "
            f"sys.exit(cmd.main(['--local', '--port', '0', '--local-dir', {str(tmp_path / 'l')!r}], prog='op', "
            f"name='op', scheme=Scheme(), setup=lambda mgr, args: None))")
    done = run_without(("aiohttp",), tmp_path, "-c", code)
    assert done.returncode == 1, done.stderr
    assert done.stderr == ("op: error: --local: samplecontroller.apiserver needs the 'apiserver' extra (aiohttp not "
                           "installed): pip install 'samplecontroller[apiserver]'\n")


def test_scaffold_without_the_codegen_extra_is_one_line(tmp_path: Path) -> None:
    done = run_without(("jinja2",), tmp_path, "-m", "samplecontroller.scaffold", "init", str(tmp_path / "op"),
                       "--domain", "example.com", "--package", "op")
    assert done.returncode == 1, done.stderr
    assert done.stderr == ("samplecontroller: error: samplecontroller init needs the 'codegen' extra (jinja2 not "
                           "installed): pip install 'samplecontroller[codegen]'\n")
    assert not (tmp_path / "op").exists()


def test_the_pytest_plugin_loads_without_any_extra(tmp_path: Path) -> None:
    """The plugin is auto-loaded wherever the toolkit is installed, also without the apiserver extra."""
    (tmp_path / "test_plain.py").write_text("def test_plain() -> None:\n    assert True\n")
    done = run_without(("aiohttp", "cryptography", "jinja2"), tmp_path, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                       "-p", "no:randomly", "--rootdir", str(tmp_path), str(tmp_path / "test_plain.py"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert sys.modules.get("samplecontroller.testing.pytest_plugin") is not None  # loaded here too


def test_the_apiserver_fixture_without_the_extra_names_the_pip_command(tmp_path: Path) -> None:
    (tmp_path / "test_server.py").write_text("def test_server(apiserver: object) -> None:\n    pass\n")
    done = run_without(("aiohttp",), tmp_path, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                       "--rootdir", str(tmp_path), str(tmp_path / "test_server.py"))
    assert done.returncode == 1, done.stdout + done.stderr
    assert ("the samplecontroller test kit: samplecontroller.apiserver needs the 'apiserver' extra (aiohttp not "
            "installed): pip install 'samplecontroller[apiserver]'") in done.stdout
    assert "Traceback" not in done.stdout


# -- --local with webhook manifests (issue 23, item 4: make run) -----------------------------------


def webhook_project(tmp_path: Path) -> tuple[Path, Path]:
    from tests.scaffold.test_pytest_plugin import BACKUP_CRD, CONVERSION_PATCH, WEBHOOK_MANIFESTS

    crds, manifests = tmp_path / "crds", tmp_path / "webhook"
    crds.mkdir()
    manifests.mkdir()
    (crds / "backups.yaml").write_text(BACKUP_CRD)
    (manifests / "manifests.yaml").write_text(WEBHOOK_MANIFESTS)
    (manifests / "conversion.yaml").write_text(CONVERSION_PATCH)
    return crds, manifests


def test_local_conversion_settings_for_a_missing_crd_are_a_user_error(tmp_path: Path) -> None:
    _, manifests = webhook_project(tmp_path)
    args = cmd.parse_flags(["--local", "--port", "0", "--local-dir", str(tmp_path / "local"),
                            "--webhook-port", str(free_port())], prog="op", name="op", webhooks=[manifests])
    stop = threading.Event()
    stop.set()
    with pytest.raises(cmd.UserError, match=r"^--local: conversion settings for backups.ops.example.com, but no such "
                                            r"CRD is installed$"):
        cmd.run(args, stop, name="op", scheme=Scheme(), setup=nothing)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Defaulter:
    def default(self, obj: dict[str, Any]) -> dict[str, Any]:
        return {**obj, "spec": {"schedule": "@daily"}}


class Validator:
    def validate_create(self, obj: dict[str, Any]) -> list[str]:
        return []

    def validate_update(self, old: dict[str, Any], new: dict[str, Any]) -> list[str]:
        return []

    def validate_delete(self, obj: dict[str, Any]) -> list[str]:
        return []


def backup_webhooks(mgr: Manager, args: argparse.Namespace) -> None:
    """A setup serving the webhooks of WEBHOOK_MANIFESTS."""
    server = mgr.get_webhook_server()
    server.register("/mutate-ops-example-com-v1-backup", DefaultingHandler(dict, Defaulter()))
    server.register("/validate-ops-example-com-v1-backup", ValidatingHandler(dict, Validator()))


def test_local_points_the_webhooks_at_the_managers_webhook_server(tmp_path: Path) -> None:

    crds, manifests = webhook_project(tmp_path)
    local = tmp_path / "local"
    args = cmd.parse_flags(["--local", "--port", "0", "--local-dir", str(local), "--crds", str(crds),
                            "--webhook-port", str(free_port())], prog="op", name="op", webhooks=[manifests])
    stop = threading.Event()
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(cmd.run(args, stop, name="op", scheme=Scheme(), setup=backup_webhooks)),
                              daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        body = json.dumps({"apiVersion": "ops.example.com/v1", "kind": "Backup", "metadata": {"name": "b"}}).encode()
        created: dict[str, Any] | None = None
        while created is None:
            assert time.monotonic() < deadline, "the webhooks were never served"
            try:
                client = rest.load_rest_client(kubeconfig=str(local / "kubeconfig"))
                created = json.loads(client.request("POST", "/apis/ops.example.com/v1/namespaces/default/backups",
                                                    body=body, content_type="application/json"))
            except (rest.ConfigError, rest.TransportError, errors.StatusError):
                time.sleep(0.1)
        assert created["spec"] == {"schedule": "@daily"}  # the Manager's defaulter ran
        crd = json.loads(client.request(
            "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/backups.ops.example.com"))
        config = crd["spec"]["conversion"]["webhook"]["clientConfig"]
        assert config["url"] == f"https://127.0.0.1:{args.webhook_port}/convert" and config["caBundle"]
        assert (local / "serving-certs" / "tls.crt").is_file()
    finally:
        stop.set()
        thread.join(60)
    assert result == [0]


def test_local_with_webhooks_writes_its_own_certificate(tmp_path: Path) -> None:
    crds, manifests = webhook_project(tmp_path)
    args = cmd.parse_flags(["--local", "--port", "0", "--local-dir", str(tmp_path / "local"), "--crds", str(crds),
                            "--webhook-cert-dir", str(tmp_path / "mine")], prog="op", name="op", webhooks=[manifests])
    stop = threading.Event()
    stop.set()
    with pytest.raises(cmd.UserError, match=r"^--webhook-cert-dir: with --local and webhooks, the serving certificate "
                                            r"is written to .*local/serving-certs"):
        cmd.run(args, stop, name="op", scheme=Scheme(), setup=nothing)
    assert not (tmp_path / "mine").exists()
