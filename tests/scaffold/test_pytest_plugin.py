"""The test kit as a user's project gets it: the pytest plugin (entry point) and ``--crds``.

Each plugin test runs pytest in a subprocess inside a temporary project outside this checkout,
so only the auto-loaded ``samplecontroller`` plugin and the project's own ini options apply (the
defect these reproduce: the old ``apiserver`` fixture installed ``crds/`` next to the installed
package, not the project's CRDs, so the project's kind was silently missing).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from samplecontroller import rest

BACKUP_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: backups.ops.example.com
spec:
  group: ops.example.com
  names: {kind: Backup, plural: backups, singular: backup, listKind: BackupList}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      subresources: {status: {}}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: {type: object, properties: {schedule: {type: string}}}
            status: {type: object, properties: {phase: {type: string}}}
"""

USES_BACKUPS = '''
import json


def test_backup_kind_is_served(rest_client, namespace, kubeconfig, apiserver):
    body = {"apiVersion": "ops.example.com/v1", "kind": "Backup", "metadata": {"name": "nightly"},
            "spec": {"schedule": "@daily"}}
    path = f"/apis/ops.example.com/v1/namespaces/{namespace}/backups"
    rest_client.request("POST", path, body=json.dumps(body).encode(), content_type="application/json")
    got = json.loads(rest_client.request("GET", path + "/nightly"))
    assert got["spec"] == {"schedule": "@daily"}
    assert kubeconfig == apiserver.kubeconfig_path and kubeconfig.is_file()


def test_each_test_gets_its_own_namespace(rest_client, namespace):
    ns = json.loads(rest_client.request("GET", f"/api/v1/namespaces/{namespace}"))
    assert ns["status"]["phase"] == "Active" and namespace.startswith("test-")
'''


def project(root: Path, ini: str, tests: str, crd_dir: str = "config/crd/bases") -> Path:
    (root / crd_dir).mkdir(parents=True)
    (root / crd_dir / "ops.example.com_backups.yaml").write_text(BACKUP_CRD)
    (root / "pyproject.toml").write_text(f"[tool.pytest.ini_options]\n{ini}\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_kit.py").write_text(textwrap.dedent(tests))
    return root


def run_pytest(root: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTHONPATH")}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                           "tests"], cwd=root, env=env, capture_output=True, text=True, timeout=120, check=False)




def test_the_marker_installs_more_crds_for_one_test(tmp_path: Path) -> None:
    tests = '''
        import json

        import pytest


        @pytest.mark.samplecontroller_crds("extra-crds")
        def test_marked(rest_client):
            assert json.loads(rest_client.request("GET", "/apis/ops.example.com/v1"))["resources"]
    '''
    root = project(tmp_path / "proj", "", tests, crd_dir="extra-crds")
    result = run_pytest(root)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_missing_crd_directory_fails_with_one_line_naming_it(tmp_path: Path) -> None:
    root = project(tmp_path / "proj", 'samplecontroller_crds = ["config/crd/nope"]', USES_BACKUPS)
    result = run_pytest(root)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"cannot install the CRDs: {root / 'config/crd/nope'}: not a directory of CRD YAML files" in result.stdout
    assert "Traceback" not in result.stdout


def test_without_crds_configured_the_server_has_only_builtins(tmp_path: Path) -> None:
    tests = '''
        from samplecontroller.apimachinery import errors


        def test_no_backups(rest_client):
            try:
                rest_client.request("GET", "/apis/ops.example.com/v1")
            except errors.StatusError as err:
                assert errors.is_not_found(err)
            else:
                raise AssertionError("ops.example.com/v1 is served without being configured")
    '''
    result = run_pytest(project(tmp_path / "proj", "", tests))
    assert result.returncode == 0, result.stdout + result.stderr


def test_async_tests_run_on_their_own_loop_with_the_async_fixtures(tmp_path: Path) -> None:
    """``async def`` tests run without any other plugin; ``async_rest_client`` is bound to the
    test's loop and closed on it; a failing async test fails (issue 25)."""
    tests = '''
        import asyncio
        import json

        from samplecontroller.rest.aio import AsyncRESTClient

        LOOPS = []


        async def test_async_client(async_rest_client, namespace):
            assert isinstance(async_rest_client, AsyncRESTClient)
            LOOPS.append(asyncio.get_running_loop())
            body = {"apiVersion": "ops.example.com/v1", "kind": "Backup", "metadata": {"name": "b"}}
            path = f"/apis/ops.example.com/v1/namespaces/{namespace}/backups"
            await async_rest_client.request("POST", path, body=json.dumps(body).encode())
            got = json.loads(await async_rest_client.request("GET", path + "/b"))
            assert got["metadata"]["name"] == "b"


        async def test_a_new_loop_per_test(async_rest_client):
            assert LOOPS and LOOPS[0] is not asyncio.get_running_loop() and LOOPS[0].is_closed()
            await async_rest_client.request("GET", "/api")


        async def test_failing():
            await asyncio.sleep(0)
            assert 1 == 2, "async failure seen"
    '''
    root = project(tmp_path / "proj", 'samplecontroller_crds = ["config/crd/bases"]', tests)
    result = run_pytest(root)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "2 passed" in result.stdout and "1 failed" in result.stdout, result.stdout
    assert "async failure seen" in result.stdout
    assert "Unclosed client session" not in result.stdout + result.stderr
    assert "coroutine" not in result.stdout + result.stderr


# -- python -m samplecontroller.apiserver --crds ------------------------------------------------


def serve(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "samplecontroller.apiserver", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd)


def test_cli_preloads_the_crds_of_every_directory(tmp_path: Path) -> None:
    crds = tmp_path / "crds"
    crds.mkdir()
    (crds / "backups.yaml").write_text(BACKUP_CRD)
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = serve(["--kubeconfig", str(tmp_path / "kc"), "--crds", str(crds), str(empty)], tmp_path)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("ready https://"), proc.stderr.read() if proc.stderr else line
        client = rest.load_rest_client(kubeconfig=str(tmp_path / "kc"))
        body = {"apiVersion": "ops.example.com/v1", "kind": "Backup", "metadata": {"name": "b"}}
        client.request("POST", "/apis/ops.example.com/v1/namespaces/default/backups", body=json.dumps(body).encode(),
                       content_type="application/json")
        proc.terminate()
        assert proc.wait(15) == 0
    finally:
        proc.kill()


@pytest.mark.parametrize(("content", "code", "message"), [
    (None, 2, "not a directory of CRD YAML files"),
    ("kind: [unclosed\n", 2, "not valid YAML"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", 2, "not a CustomResourceDefinition"),
    (BACKUP_CRD.replace("name: backups.ops.example.com", "name: wrong.ops.example.com"), 1,
     "CRD wrong.ops.example.com: "),
])
def test_cli_bad_crds_are_one_line(tmp_path: Path, content: str | None, code: int, message: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """In-process (the command's ``main``: the exit status and the streams a shell sees); a process of
    its own per case cost seconds each on a loaded machine, and test_cli_preloads_the_crds_of_every_directory
    runs the module as a command."""
    from samplecontroller.apiserver.__main__ import main as apiserver_main

    crds = tmp_path / "crds"
    if content is not None:
        crds.mkdir()
        (crds / "bad.yaml").write_text(content)
    returned = apiserver_main(["--port", "0", "--kubeconfig", str(tmp_path / "kc"), "--crds", str(crds)])
    out, err = capsys.readouterr()
    assert returned == code, err
    assert out == "" and err.count("\n") == 1 and err.startswith("error: --crds: ") and message in err, err


# -- webhooks (envtest's WebhookInstallOptions; issue 23, item 4) ------------------------------

WEBHOOK_MANIFESTS = """\
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
  - name: mbackup-v1.ops.example.com
    admissionReviewVersions: [v1]
    clientConfig:
      service: {name: webhook-service, namespace: system, path: /mutate-ops-example-com-v1-backup}
    rules:
      - {apiGroups: [ops.example.com], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [backups]}
    failurePolicy: Fail
    sideEffects: None
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks:
  - name: vbackup-v1.ops.example.com
    admissionReviewVersions: [v1]
    clientConfig:
      service: {name: webhook-service, namespace: system, path: /validate-ops-example-com-v1-backup}
    rules:
      - {apiGroups: [ops.example.com], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [backups]}
    failurePolicy: Fail
    sideEffects: None
"""

CONVERSION_PATCH = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: backups.ops.example.com
spec:
  conversion:
    strategy: Webhook
    webhook:
      clientConfig:
        service: {namespace: system, name: webhook-service, path: /convert}
      conversionReviewVersions: [v1]
"""

USES_WEBHOOKS = '''
import json
import threading
from typing import Any

import pytest
from samplecontroller.apimachinery import errors
from samplecontroller.runtime.webhook import Server
from samplecontroller.runtime.webhook.admission import DefaultingHandler, ValidatingHandler


class Defaulter:
    def default(self, obj: dict[str, Any]) -> dict[str, Any]:
        return {**obj, "spec": {"schedule": "@daily", **obj.get("spec", {})}}


class Validator:
    def validate_create(self, obj: dict[str, Any]) -> list[str]:
        if obj["spec"]["schedule"] == "never":
            raise ValueError("a backup that never runs")
        return []

    def validate_update(self, old: dict[str, Any], new: dict[str, Any]) -> list[str]:
        return self.validate_create(new)

    def validate_delete(self, obj: dict[str, Any]) -> list[str]:
        return []


@pytest.fixture(scope="session", autouse=True)
def webhook_server(webhook_install_options):
    o = webhook_install_options
    server = Server(host=o.local_serving_host, port=o.local_serving_port, cert_dir=o.local_serving_cert_dir)
    server.register("/mutate-ops-example-com-v1-backup", DefaultingHandler(dict, Defaulter()))
    server.register("/validate-ops-example-com-v1-backup", ValidatingHandler(dict, Validator()))
    stop = threading.Event()
    thread = threading.Thread(target=server.start, args=(stop,), daemon=True)
    thread.start()
    assert server.started.wait(10)
    yield server
    stop.set()
    thread.join(10)


def create(rest_client, namespace, name, spec):
    body = {"apiVersion": "ops.example.com/v1", "kind": "Backup", "metadata": {"name": name}, "spec": spec}
    return json.loads(rest_client.request("POST", f"/apis/ops.example.com/v1/namespaces/{namespace}/backups",
                                          body=json.dumps(body).encode(), content_type="application/json"))


def test_defaulting_and_validation_go_through_the_test_webhook_server(rest_client, namespace):
    assert create(rest_client, namespace, "a", {})["spec"] == {"schedule": "@daily"}
    with pytest.raises(errors.StatusError) as caught:
        create(rest_client, namespace, "b", {"schedule": "never"})
    assert caught.value.code == 403 and "a backup that never runs" in str(caught.value)


def test_the_crd_converts_through_the_test_webhook_server(rest_client, webhook_install_options):
    crd = json.loads(rest_client.request(
        "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/backups.ops.example.com"))
    webhook = crd["spec"]["conversion"]["webhook"]
    assert crd["spec"]["conversion"]["strategy"] == "Webhook"
    assert webhook["clientConfig"]["url"] == webhook_install_options.url + "/convert"
    assert webhook["clientConfig"]["caBundle"] and "service" not in webhook["clientConfig"]
    assert webhook_install_options.manager_flags()[:4] == [
        "--webhook-host", "127.0.0.1", "--webhook-port", str(webhook_install_options.local_serving_port)]
'''


def test_the_plugin_points_the_projects_webhooks_at_the_test_server(tmp_path: Path) -> None:
    root = project(tmp_path / "proj", 'samplecontroller_crds = ["config/crd/bases"]\n'
                   'samplecontroller_webhooks = ["config/webhook", "config/crd/patches"]', USES_WEBHOOKS)
    (root / "config" / "webhook").mkdir()
    (root / "config" / "webhook" / "manifests.yaml").write_text(WEBHOOK_MANIFESTS)
    (root / "config" / "webhook" / "kustomization.yaml").write_text("resources: [manifests.yaml]\n")
    (root / "config" / "crd" / "patches").mkdir()
    (root / "config" / "crd" / "patches" / "webhook_in_backups.yaml").write_text(CONVERSION_PATCH)
    result = run_pytest(root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout


def test_conversion_settings_for_a_missing_crd_fail_with_one_line(tmp_path: Path) -> None:
    root = project(tmp_path / "proj", 'samplecontroller_crds = ["config/crd/bases"]\n'
                   'samplecontroller_webhooks = ["config/crd/patches"]', USES_BACKUPS)
    (root / "config" / "crd" / "patches").mkdir()
    (root / "config" / "crd" / "patches" / "webhook_in_x.yaml").write_text(
        CONVERSION_PATCH.replace("backups.ops.example.com", "widgets.ops.example.com"))
    result = run_pytest(root)
    assert result.returncode == 1, result.stdout + result.stderr
    assert ("cannot install the CRDs: conversion settings for widgets.ops.example.com, but no such CRD is installed"
            in result.stdout) and "Traceback" not in result.stdout


ROLE = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: backup-operator
rules:
  - apiGroups: ["ops.example.com"]
    resources: ["backups"]
    verbs: ["get", "list", "watch"]
"""


def test_the_plugin_installs_the_projects_crds_and_runs_the_operator_with_exactly_its_role(tmp_path: Path) -> None:
    """The CRDs of the ini option are installed; operator_rest_client is bound to
    samplecontroller_rbac's roles only, and a request they do not allow fails the test even when
    the operator swallows the error (a reconciler retrying), with kube's Forbidden message and the
    declaration to add (one pytest run for both: each costs seconds)."""
    tests = USES_BACKUPS + '''

from samplecontroller.apimachinery import errors


def test_reads_are_allowed(operator_rest_client, namespace):
    path = f"/apis/ops.example.com/v1/namespaces/{namespace}/backups"
    assert json.loads(operator_rest_client.request("GET", path))["items"] == []


def test_a_swallowed_refusal(operator_rest_client, namespace):
    body = {"apiVersion": "ops.example.com/v1", "kind": "Backup", "metadata": {"name": "b"}}
    try:
        operator_rest_client.request("POST", f"/apis/ops.example.com/v1/namespaces/{namespace}/backups",
                                     body=json.dumps(body).encode(), content_type="application/json")
    except errors.ForbiddenError:
        pass
'''
    root = project(tmp_path / "proj", 'samplecontroller_crds = ["config/crd/bases"]\n'
                                      'samplecontroller_rbac = ["config/rbac/role.yaml"]', tests)
    (root / "config/rbac").mkdir(parents=True)
    (root / "config/rbac/role.yaml").write_text(ROLE)
    result = run_pytest(root)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "4 passed, 1 error" in result.stdout, result.stdout
    assert "ERROR at teardown of test_a_swallowed_refusal" in result.stdout, result.stdout
    assert ('backups.ops.example.com is forbidden: User "system:serviceaccount:samplecontroller-operator:operator" '
            'cannot create resource "backups" in API group "ops.example.com" in the namespace "test-') in result.stdout
    assert "the operator's role (" in result.stdout
    assert 'rbac.rule(groups="ops.example.com", resources="backups", verbs="create")' in result.stdout
