"""Scaffolded webhook, conversion and sample code is correct for a kind the user brings (issue 38,
items 4 and 5): the kubebuilder tutorial's CronJob CRD, dropped into a project in place of the
scaffold's, then ``create api --version v2`` and ``create webhook`` with all three webhooks.

The CRD file keeps its formatting (``---``, ``""``, its comments) through ``create api --version``;
the stubs name no field the schema lacks (no ``spec.message``), and pass ruff, mypy --strict
(this checkout's, on the project's webhook modules and their tests) and their own tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from samplecontroller.scaffold import has_example_fields, main
from tests.codegen.test_builtin_types import cronjob_crd
from tests.scaffold.test_scaffold import run

ROOT = Path(__file__).resolve().parents[2]
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
CRD_FILE = "config/crd/bases/batch.tutorial.example.com_cronjobs.yaml"


def kubebuilder_crd() -> str:
    """The CronJob CRD as controller-gen writes it: a leading ``---``, ``""`` descriptions, required fields."""
    doc = json.loads(json.dumps(cronjob_crd()))  # no shared nodes: no YAML anchors, as controller-gen
    schema = doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"]["required"] = ["jobTemplate", "schedule"]
    schema["description"] = ""
    doc["metadata"]["annotations"] = {"controller-gen.kubebuilder.io/version": "v0.16.4"}
    body = yaml.safe_dump(doc, sort_keys=False, width=1000, default_style=None).replace("description: ''",
                                                                                       'description: ""')
    return "---\n# the kubebuilder tutorial's CronJob (controller-gen)\n" + body


@pytest.fixture(scope="module")
def cronjob_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("anykind")
    from samplecontroller import scaffold as scaffold_mod
    from tests.scaffold.test_scaffold import WHEEL

    project = tmp / "cronjob-operator"
    scaffold_mod.init(project, domain="tutorial.example.com", package="cronop", toolkit=WHEEL)
    cronjob = ["--group", "batch", "--kind", "CronJob"]
    assert main(["create", "api", *cronjob, "--version", "v1"], cwd=project) == 0
    (project / CRD_FILE).write_text(kubebuilder_crd())  # create api regenerates the package from it
    assert main(["create", "api", *cronjob, "--version", "v2"], cwd=project) == 0
    assert main(["create", "webhook", *cronjob, "--version", "v1", "--defaulting", "--programmatic-validation"],
                cwd=project) == 0
    assert main(["create", "webhook", *cronjob, "--version", "v1", "--conversion", "--spoke", "v2"], cwd=project) == 0
    return project


def test_the_crd_keeps_its_formatting_when_a_version_is_added(cronjob_project: Path) -> None:
    before = kubebuilder_crd()
    after = (cronjob_project / CRD_FILE).read_text()
    assert after.startswith(before)  # every byte kept; the new version appended to the list
    assert after.count('description: ""') == 2 * before.count('description: ""') and "''" not in after
    versions = yaml.load(after, Loader=LOADER)["spec"]["versions"]
    assert [(v["name"], v["served"], v["storage"]) for v in versions] == [("v1", True, True), ("v2", True, False)]
    assert versions[1]["schema"] == versions[0]["schema"]


def test_the_stubs_name_only_the_kinds_fields(cronjob_project: Path) -> None:
    crd = (cronjob_project / CRD_FILE).read_text()
    assert not has_example_fields(crd, "v1") and not has_example_fields(crd, "v2")
    written = {p: (cronjob_project / p).read_text() for p in (
        "cronop/webhooks/cron_job_v1.py", "cronop/webhooks/cron_job_conversion.py",
        "tests/test_cron_job_v1_webhook.py", "tests/test_cron_job_conversion.py",
        "config/samples/batch_v2_cronjob.yaml")}
    for path, text in written.items():
        assert "message" not in text, path
        assert "TODO" in text, path
    assert yaml.safe_load(written["config/samples/batch_v2_cronjob.yaml"])["spec"] == {}


def test_the_stubs_lint_type_check_and_pass(cronjob_project: Path) -> None:
    files = ["cronop/webhooks", "tests/test_cron_job_v1_webhook.py", "tests/test_cron_job_conversion.py"]
    lint = run([str(Path(sys.executable).parent / "ruff"), "check", *files], cronjob_project)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    # mypy --strict on the stubs, their tests and the kind's models, the library's modules found (MYPYPATH:
    # mypy does not follow an editable install) but not analysed again (--follow-imports=skip: seconds,
    # not the library's minute): what it checks is how the stubs use the kind's generated fields
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTHONPATH")}
    models = ["cronop/generated/apis/batch/v1/__init__.py", "cronop/generated/apis/batch/v2/__init__.py"]
    typecheck = subprocess.run([str(Path(sys.executable).parent / "mypy"), "--strict", "--follow-imports=skip",
                                "--allow-subclassing-any", "--no-incremental", "--python-version", "3.11", *files,
                                *models], cwd=cronjob_project, env={**env, "MYPYPATH": str(ROOT)},
                               capture_output=True, text=True, timeout=600, check=False)
    assert typecheck.returncode == 0, typecheck.stdout + typecheck.stderr
    tests = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                 "tests/test_cron_job_v1_webhook.py", "tests/test_cron_job_conversion.py"], cronjob_project)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "3 passed" in tests.stdout
