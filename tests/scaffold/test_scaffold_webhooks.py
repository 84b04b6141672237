"""``create api`` for a second version of a kind and ``create webhook`` (issue 23, item 3), in-process.

The scaffolded project is checked with this checkout's ruff, the generator's ``--verify``,
``kubectl kustomize`` and its own pytest (the samplecontroller plugin from this environment:
its embedded API server calls the project's webhooks on the Manager tests/conftest.py starts).
The whole flow from a built wheel with ``make test`` and ``make run`` is test_e2e.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from samplecontroller.apiserver.testing import require_kubectl
from samplecontroller.scaffold import Project, main
from tests.scaffold.test_scaffold import WHEEL, listing, make_manifests, run, scaffold

BACKUP = ["--group", "ops", "--kind", "Backup"]


def crd_versions(project: Path) -> list[tuple[str, bool, bool]]:
    doc = yaml.safe_load((project / "config/crd/bases/ops.example.com_backups.yaml").read_text())
    return [(v["name"], v["served"], v["storage"]) for v in doc["spec"]["versions"]]


def two_versions(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> Path:
    return scaffold(tmp_path, capsys, [*BACKUP, "--version", "v1"], [*BACKUP, "--version", "v2", *extra])


def test_a_second_version_joins_the_kinds_crd_and_the_generated_package(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = two_versions(tmp_path, capsys)
    assert crd_versions(project) == [("v1", True, True), ("v2", True, False)]
    crd = (project / "config/crd/bases/ops.example.com_backups.yaml").read_text()
    assert crd.startswith("# The Backup kind: scaffolded by")  # the header comment is kept
    for version in ("v1", "v2"):
        assert (project / f"backupop/generated/apis/ops/{version}/__init__.py").is_file()
    assert (project / "config/samples/ops_v2_backup.yaml").is_file()
    assert not (project / "backupop/controllers/backup_v2.py").exists()
    assert [(r.version, r.controller) for r in Project.load(project).resources] == [("v1", True), ("v2", False)]
    # one controller, one RBAC rule, one CRD for the kind
    assert (project / "backupop/controllers/__init__.py").read_text().count("backup.setup(mgr, args)") == 1
    assert (project / "config/rbac/role.yaml").read_text().count('resources: ["backups"]') == 1
    assert (project / "config/crd/kustomization.yaml").read_text().count("bases/ops.example.com_backups.yaml") == 1
    verify = run([sys.executable, "hack/update_codegen.py", "--verify"], project)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_storage_moves_to_the_new_version_with_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = two_versions(tmp_path, capsys, "--storage")
    assert crd_versions(project) == [("v1", True, False), ("v2", True, True)]


def webhooks(project: Path, *args: str) -> None:
    assert main(["create", "webhook", *BACKUP, *args], cwd=project) == 0


@pytest.fixture
def with_webhooks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    project = two_versions(tmp_path, capsys)
    webhooks(project, "--version", "v1", "--defaulting", "--programmatic-validation")
    webhooks(project, "--version", "v1", "--conversion", "--spoke", "v2")
    return project


def test_create_webhook_writes_handlers_tests_and_manifests(with_webhooks: Path) -> None:
    project = with_webhooks
    for rel in ("backupop/webhooks/backup_v1.py", "backupop/webhooks/backup_conversion.py",
                "tests/test_backup_v1_webhook.py", "tests/test_backup_conversion.py", "tests/conftest.py",
                "config/webhook/manifests.yaml", "config/webhook/service.yaml", "config/certmanager/certificate.yaml",
                "config/crd/patches/webhook_in_backups.yaml", "config/crd/patches/cainjection_in_backups.yaml"):
        assert (project / rel).is_file(), rel
    init = (project / "backupop/webhooks/__init__.py").read_text()
    assert "from backupop.webhooks import backup_conversion, backup_v1" in init
    assert "    backup_conversion.setup(mgr)\n    backup_v1.setup(mgr)\n" in init
    pyproject = (project / "pyproject.toml").read_text()
    assert 'samplecontroller_webhooks = ["config/webhook", "config/crd/patches"]' in pyproject
    r = Project.load(project).resources[0]
    assert (r.defaulting, r.validation, r.conversion, r.spokes) == (True, True, True, ("v2",))
    lint = run([str(Path(sys.executable).parent / "ruff"), "check", "."], project)
    assert lint.returncode == 0, lint.stdout + lint.stderr


INSTALLED = """
import json


def test_the_installed_webhooks_are_the_generated_ones(rest_client):
    path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
    hooks = [w for c in json.loads(rest_client.request("GET", path))["items"] for w in c["webhooks"]]
    assert [(w["name"], w["matchPolicy"], w["timeoutSeconds"]) for w in hooks] == [
        ("vbackup-v1.ops.example.com", "Exact", 5)]
"""


def test_the_projects_tests_exercise_the_webhooks_through_the_api_server(
        with_webhooks: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The webhook configuration and the conversion patch create webhook wrote are what make
    manifests writes from the WebhookOptions; options changed where the webhooks are registered
    (matchPolicy Exact, a 5 s timeout) make them stale, make manifests writes them, and the test
    kit installs exactly those."""
    project = with_webhooks
    capsys.readouterr()
    assert make_manifests(project, monkeypatch, "--verify") == 0, capsys.readouterr().err
    module = project / "backupop/webhooks/backup_v1.py"
    scaffolded = 'OPTIONS = WebhookOptions(failure_policy="Fail", side_effects="None", verbs=("create", "update"))\n'
    assert scaffolded in module.read_text()
    module.write_text(module.read_text().replace(scaffolded, scaffolded + "VALIDATION = dataclasses.replace(OPTIONS, "
                                                 'match_policy="Exact", timeout_seconds=5)\n').replace(
        "options=OPTIONS)\n    builder.complete", "options=VALIDATION)\n    builder.complete").replace(
        "from __future__ import annotations\n", "from __future__ import annotations\n\nimport dataclasses\n", 1))
    assert make_manifests(project, monkeypatch, "--verify") == 1
    assert capsys.readouterr().err == "config/webhook/manifests.yaml is stale: run make manifests\n"
    assert make_manifests(project, monkeypatch) == 0
    validating = list(yaml.safe_load_all((project / "config/webhook/manifests.yaml").read_text()))[1]
    assert validating["webhooks"][0]["matchPolicy"] == "Exact" and validating["webhooks"][0]["timeoutSeconds"] == 5
    (project / "tests/test_installed.py").write_text(INSTALLED)
    tests = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"], project)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    # 4 for the kind, 2 of test_main.py, 3 webhook and 2 conversion tests, the installed configuration
    assert "12 passed" in tests.stdout


def test_kustomize_builds_the_webhook_wiring(with_webhooks: Path, tmp_path: Path) -> None:
    kubectl = require_kubectl()
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    built = subprocess.run([kubectl, "kustomize", "config/"], cwd=with_webhooks, env=env, capture_output=True,
                           text=True, timeout=120, check=False)
    assert built.returncode == 0, built.stderr
    docs: dict[str, dict[str, Any]] = {d["kind"]: d for d in yaml.safe_load_all(built.stdout)}
    ca_from = "backup-operator-system/backup-operator-serving-cert"
    crd = docs["CustomResourceDefinition"]
    assert crd["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == ca_from
    assert crd["spec"]["conversion"]["strategy"] == "Webhook"
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"] == {
        "name": "backup-operator-webhook", "namespace": "backup-operator-system", "path": "/convert"}
    for kind, path in (("MutatingWebhookConfiguration", "/mutate-ops-example-com-v1-backup"),
                       ("ValidatingWebhookConfiguration", "/validate-ops-example-com-v1-backup")):
        assert docs[kind]["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == ca_from
        assert docs[kind]["webhooks"][0]["clientConfig"]["service"]["path"] == path
    assert docs["Certificate"]["spec"]["dnsNames"][0] == "backup-operator-webhook.backup-operator-system.svc"
    assert docs["Service"]["spec"]["ports"][0]["targetPort"] == 9443
    pod = docs["Deployment"]["spec"]["template"]["spec"]
    assert pod["volumes"] == [{"name": "webhook-certs", "secret": {"secretName": "webhook-server-cert"}}]
    assert {"name": "webhook-server", "containerPort": 9443, "protocol": "TCP"} in pod["containers"][0]["ports"]


@pytest.mark.parametrize(("args", "message"), [
    (["--version", "v3", "--defaulting"], "Backup.ops.example.com/v3 is not in PROJECT"),
    (["--version", "v1"], "nothing to create: pass --defaulting"),
    (["--version", "v1", "--defaulting", "--spoke", "v2"], "--spoke applies only with --conversion"),
    (["--version", "v1", "--conversion"], "every other version of Backup.ops.example.com converts through the hub; "
                                          "add --spoke v2"),
    (["--version", "v1", "--conversion", "--spoke", "v2", "--spoke", "v9"], "--spoke v9: not a version of"),
    (["--version", "v1", "--conversion", "--spoke", "v1"], "--spoke v1: that is the hub version"),
])
def test_create_webhook_mistakes_are_one_line_and_write_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    project = two_versions(tmp_path, capsys)
    before = listing(project)
    capsys.readouterr()
    assert main(["create", "webhook", *BACKUP, *args], cwd=project) == 1
    err = capsys.readouterr().err
    assert err.startswith("samplecontroller: error: ") and err.count("\n") == 1 and message in err, err
    assert listing(project) == before


def test_a_second_webhook_of_a_kind_is_refused(with_webhooks: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["create", "webhook", *BACKUP, "--version", "v1", "--defaulting"], cwd=with_webhooks) == 1
    assert "--defaulting: Backup.ops.example.com/v1 has that webhook already" in capsys.readouterr().err
    assert main(["create", "webhook", *BACKUP, "--version", "v2", "--conversion", "--spoke", "v1"],
                cwd=with_webhooks) == 1
    assert "has a conversion webhook already" in capsys.readouterr().err


def test_conversion_needs_a_second_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = scaffold(tmp_path, capsys, [*BACKUP, "--version", "v1"], toolkit=WHEEL)
    capsys.readouterr()
    assert main(["create", "webhook", *BACKUP, "--version", "v1", "--conversion"], cwd=project) == 1
    assert "has one version; add another" in capsys.readouterr().err


def test_validation_added_after_defaulting_asks_for_both_at_once(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    project = two_versions(tmp_path, capsys)
    webhooks(project, "--version", "v1", "--defaulting")
    before = listing(project)
    capsys.readouterr()
    assert main(["create", "webhook", *BACKUP, "--version", "v1", "--programmatic-validation"], cwd=project) == 1
    err = capsys.readouterr().err
    assert "backupop/webhooks/backup_v1.py exists already; add --defaulting and --programmatic-validation in one " \
           "command" in err and err.count("\n") == 1
    assert listing(project) == before


def test_the_other_combinations_lint_and_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A cluster-scoped kind in three versions (storage moved to v2) with validation and two spokes,
    and a namespaced one with defaulting only."""
    vault = ["--group", "ops", "--kind", "Vault"]
    project = scaffold(tmp_path, capsys, [*vault, "--version", "v1", "--cluster"], [*vault, "--version", "v1alpha1"],
                       [*vault, "--version", "v2", "--storage"], [*BACKUP, "--version", "v1"])
    assert main(["create", "webhook", *vault, "--version", "v1", "--programmatic-validation"], cwd=project) == 0
    assert main(["create", "webhook", *vault, "--version", "v1", "--conversion", "--spoke", "v1alpha1", "--spoke",
                 "v2"], cwd=project) == 0
    webhooks(project, "--version", "v1", "--defaulting")
    manifests = list(yaml.safe_load_all((project / "config/webhook/manifests.yaml").read_text()))
    assert [(d["kind"], [w["name"] for w in d["webhooks"]]) for d in manifests] == [
        ("MutatingWebhookConfiguration", ["mbackup-v1.ops.example.com"]),
        ("ValidatingWebhookConfiguration", ["vvault-v1.ops.example.com"])]
    lint = run([str(Path(sys.executable).parent / "ruff"), "check", "."], project)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    tests = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"], project)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "18 passed" in tests.stdout


def toolkit_dependency(project: Path) -> str:
    """The toolkit requirement of pyproject.toml's ``[project] dependencies`` (what the image installs)."""
    import tomllib

    deps = tomllib.loads((project / "pyproject.toml").read_text())["project"]["dependencies"]
    (toolkit,) = [d for d in deps if d.startswith("samplecontroller")]
    return str(toolkit)


def test_create_webhook_puts_the_webhook_extra_into_the_operators_dependencies(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The image installs the dependencies only: without the extra, an operator with webhooks fails
    on start in a cluster (importing samplecontroller.runtime.webhook needs aiohttp and cryptography)."""
    project = scaffold(tmp_path / "a", capsys, [*BACKUP, "--version", "v1"])
    assert toolkit_dependency(project) == "samplecontroller>=0.1.0"
    webhooks(project, "--version", "v1", "--defaulting")
    assert toolkit_dependency(project) == "samplecontroller[webhook]>=0.1.0"
    # with an async controller, before or after the webhook: both extras
    assert main(["create", "api", "--group", "ops", "--version", "v1", "--kind", "Schedule", "--style", "async"],
                cwd=project) == 0
    assert toolkit_dependency(project) == "samplecontroller[async,webhook]>=0.1.0"
    other = scaffold(tmp_path / "b", capsys, [*BACKUP, "--version", "v1", "--style", "async"])
    webhooks(other, "--version", "v1", "--programmatic-validation")
    assert toolkit_dependency(other) == "samplecontroller[async,webhook]>=0.1.0"
