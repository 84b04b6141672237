"""``samplecontroller init`` and ``create api``, in-process into temporary directories.

The scaffolded projects are checked with this checkout's ruff, the code generator's ``--verify``
and pytest (the samplecontroller plugin is loaded from this environment); the whole user flow
from a built wheel, with the project's own ``make test``, is tests/scaffold/test_e2e.py.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from samplecontroller import __version__, _extras
from samplecontroller.scaffold import Project, main, pluralize
from samplecontroller.scaffold import toolkit as toolkit_mod
from samplecontroller.scaffold.toolkit import Toolkit
from tests.wheelenv import uv_binary

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
WHEEL = Toolkit("wheel", "/opt/dist/samplecontroller-0.1.0-py3-none-any.whl", "0.1.0")


def scaffold(tmp_path: Path, capsys: pytest.CaptureFixture[str], *apis: list[str],
             toolkit: Toolkit = WHEEL) -> Path:
    from samplecontroller import scaffold as scaffold_mod

    project = tmp_path / "backup-operator"
    scaffold_mod.init(project, domain="example.com", package="backupop", toolkit=toolkit)
    for api in apis:
        assert main(["create", "api", *api], cwd=project) == 0, capsys.readouterr().err
    return project


def listing(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTHONPATH")}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_init_from_a_checkout_keeps_its_wheel_and_the_moved_project_installs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], lock_constraints: Path) -> None:
    """Issue 38, item 5: a project made from a checkout (this editable install) refers to no path out of
    itself; moved alone (the checkout where it was) with its .venv, its own ``make`` works there."""
    made = tmp_path / "made"
    made.mkdir()
    assert main(["init", "backup-operator", "--domain", "example.com", "--package", "backupop"], cwd=made) == 0
    project = made / "backup-operator"
    for rel in ("pyproject.toml", "Makefile", "README.md", "Dockerfile", "PROJECT", "hack/update_codegen.py",
                "backupop/__main__.py", "backupop/controllers/__init__.py", "backupop/generated/scheme.py",
                "config/kustomization.yaml", "config/rbac/role.yaml", "config/rbac/service_account.yaml",
                "config/rbac/role_binding.yaml", "config/manager/deployment.yaml", "tests/test_main.py"):
        assert (project / rel).is_file(), rel
    out = capsys.readouterr().out
    wheel = f"samplecontroller-{__version__}-py3-none-any.whl"
    assert f"toolkit: the wheel {project.resolve()}/.toolkit/{wheel}, built from the checkout {ROOT})" in out
    # the checkout's wheel, built and kept in the project, as for a wheel install; no path to the checkout
    assert [p.name for p in (project / ".toolkit").iterdir()] == [wheel]
    assert "location: .toolkit/" + wheel in (project / "PROJECT").read_text()
    assert f"TOOLKIT_SOURCE ?= $(abspath .toolkit/{wheel})" in (project / "Makefile").read_text()
    for rel, text in listing_text(project).items():
        assert str(ROOT) not in text and str(tmp_path) not in text and "../" not in text, rel
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTHONPATH", "VIRTUAL_ENV",
                                                            "MAKEFLAGS", "MAKELEVEL", "UV_PROJECT_ENVIRONMENT")}
    env.update(UV=uv_binary(), PYTHON=sys.executable, UV_CONSTRAINT=str(lock_constraints))

    def make(*targets: str, cwd: Path) -> str:
        done = subprocess.run(["make", *targets], cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
                              check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    assert "pip install" in make("venv", cwd=project)
    moved = tmp_path / "elsewhere" / "deeper" / "backup-operator"  # a relative path to the checkout would break
    moved.parent.mkdir(parents=True)
    project.rename(moved)  # with its .venv: the project installs itself again, its tools run as python -m
    assert "pip install" in make("venv", cwd=moved) and "pip install" not in make("venv", cwd=moved)
    found = subprocess.run([str(moved / ".venv" / "bin" / "python"), "-c",
                            "import backupop, samplecontroller; print(backupop.__file__, samplecontroller.__version__)"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert found.stdout == f"{moved / 'backupop' / '__init__.py'} {__version__}\n", found.stdout + found.stderr
    assert "All checks passed!" in make("lint", cwd=moved)
    # the image's toolkit wheel (make docker-build): the one kept in the project
    make("toolkit-dist", cwd=moved)
    assert (moved / "dist" / wheel).read_bytes() == (moved / ".toolkit" / wheel).read_bytes()


def listing_text(root: Path) -> dict[str, str]:
    """The project's text files (not the wheel), by relative path."""
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*"))
            if p.is_file() and p.suffix != ".whl"}


def test_the_manager_image_is_not_pulled_when_the_node_has_it(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The image is tagged :latest, for which Kubernetes' default pull policy is Always: an image loaded
    into the nodes (the tutorial's ``kind load docker-image``) would be pulled from a registry that
    does not have it (ErrImagePull). The scaffold asks for IfNotPresent, as kind's documentation says."""
    project = scaffold(tmp_path, capsys)
    deployment = yaml.safe_load((project / "config/manager/deployment.yaml").read_text())
    (manager,) = deployment["spec"]["template"]["spec"]["containers"]
    assert manager["image"].endswith(":latest") and manager["imagePullPolicy"] == "IfNotPresent"


@pytest.mark.parametrize(("direct_url", "exists", "expected"), [
    ({"url": "file:///dist/samplecontroller-0.1.0-py3-none-any.whl", "archive_info": {}}, True,
     ("wheel", "/dist/samplecontroller-0.1.0-py3-none-any.whl")),
    ({"url": "file:///dist/samplecontroller-0.1.0-py3-none-any.whl", "archive_info": {}}, False, ("index", "")),
    ({"url": "file:///src/samplecontroller", "dir_info": {"editable": True}}, True, ("directory", "/src/samplecontroller")),
    (None, True, ("index", "")),
])
def test_the_toolkit_source_comes_from_direct_url(monkeypatch: pytest.MonkeyPatch, direct_url: dict[str, Any] | None,
                                                  exists: bool, expected: tuple[str, str]) -> None:
    dist = SimpleNamespace(version="0.1.0",
                           read_text=lambda name: json.dumps(direct_url) if direct_url is not None else None)
    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: dist)

    class FakePath(type(Path())):  # type: ignore[misc]
        def is_file(self) -> bool:
            return exists and self.suffix == ".whl"

        def is_dir(self) -> bool:
            return exists and self.suffix != ".whl"

    monkeypatch.setattr(toolkit_mod, "Path", FakePath)
    monkeypatch.setattr(toolkit_mod, "checkout", lambda: None)  # as installed, not run from a source tree
    found = toolkit_mod.current()
    assert (found.kind, found.location) == expected
    if found.kind == "index":
        assert found.requirement == "samplecontroller[apiserver,codegen]==0.1.0"
    else:
        assert found.requirement == f"samplecontroller[apiserver,codegen] @ file://{expected[1]}"


def test_create_api_adds_the_kind_everywhere(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = scaffold(tmp_path, capsys, ["--group", "ops", "--version", "v1", "--kind", "Backup"])
    crd = yaml.safe_load((project / "config/crd/bases/ops.example.com_backups.yaml").read_text())
    version = crd["spec"]["versions"][0]
    assert (crd["metadata"]["name"], crd["spec"]["scope"], version["subresources"]) == (
        "backups.ops.example.com", "Namespaced", {"status": {}})
    assert [c["name"] for c in version["additionalPrinterColumns"]] == ["Ready", "Reason", "Age"]
    status = version["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]
    assert set(status) == {"observedGeneration", "conditions"}
    assert status["conditions"]["x-kubernetes-list-map-keys"] == ["type"]
    assert yaml.safe_load((project / "config/samples/ops_v1_backup.yaml").read_text())["kind"] == "Backup"
    role = yaml.safe_load((project / "config/rbac/role.yaml").read_text())
    assert role["rules"] == [  # sorted as controller-gen sorts (make manifests writes the same)
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
        {"apiGroups": ["ops.example.com"], "resources": ["backups"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["ops.example.com"], "resources": ["backups/status"], "verbs": ["patch"]},
    ]
    assert yaml.safe_load((project / "config/crd/kustomization.yaml").read_text())["resources"] == [
        "bases/ops.example.com_backups.yaml"]
    assert "backup.setup(mgr, args)" in (project / "backupop/controllers/__init__.py").read_text()
    assert (project / "backupop/generated/apis/ops/v1/__init__.py").is_file()
    assert [r.kind for r in Project.load(project).resources] == ["Backup"]
    # the generated package is exactly what the project's own hack/update_codegen.py makes
    verify = run([sys.executable, "hack/update_codegen.py", "--verify"], project)
    assert verify.returncode == 0, verify.stderr


def test_every_style_and_scope_passes_ruff_and_its_own_tests(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Every style and scope passes ruff and its own tests, the integration tests under the
    generated role (operator_rest_client), which is what make manifests writes from the code
    (check_make_manifests)."""
    project = scaffold(tmp_path, capsys,
                       ["--group", "ops", "--version", "v1", "--kind", "Backup"],
                       ["--group", "ops", "--version", "v1alpha1", "--kind", "BackupPolicy", "--style", "client-go"],
                       ["--group", "infra.example.org", "--version", "v1", "--kind", "Cluster", "--cluster"],
                       ["--group", "infra.example.org", "--version", "v1", "--kind", "NodePool", "--cluster",
                        "--style", "client-go"],
                       ["--group", "ops", "--version", "v1", "--kind", "Schedule", "--style", "async"],
                       ["--group", "infra.example.org", "--version", "v1", "--kind", "Snapshot", "--cluster",
                        "--style", "async"])
    assert '"samplecontroller[async]>=' in (project / "pyproject.toml").read_text()
    lint = run([str(VENV_BIN / "ruff"), "check", "--no-cache", "."], project)
    assert lint.returncode == 0, lint.stdout
    tests = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"], project)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "26 passed" in tests.stdout  # 4 per kind (3 unit, 1 integration) and test_main.py's 2
    check_make_manifests(project, capsys, monkeypatch)


def test_create_api_keeps_edits_outside_the_markers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = scaffold(tmp_path, capsys, ["--group", "ops", "--version", "v1", "--kind", "Backup"])
    init = project / "backupop/controllers/__init__.py"
    init.write_text(init.read_text().replace("import argparse\n", "import argparse  # mine\n"))
    assert main(["create", "api", "--group", "ops", "--version", "v1", "--kind", "Restore"], cwd=project) == 0
    text = init.read_text()
    assert "import argparse  # mine" in text and "from backupop.controllers import backup, restore" in text
    assert "    backup.setup(mgr, args)\n    restore.setup(mgr, args)\n" in text


@pytest.mark.parametrize(("args", "message"), [
    (["--group", "ops", "--version", "v1", "--kind", "backup"], "--kind 'backup' is not CamelCase"),
    (["--group", "ops", "--version", "1", "--kind", "Backup"], "--version '1' is not a Kubernetes API version"),
    (["--group", "Ops", "--version", "v1", "--kind", "Backup"], "--group 'Ops' is not"),
    (["--group", "ops", "--version", "v1", "--kind", "Manager"], "clashes with a name"),
    (["--group", "ops", "--version", "v1", "--kind", "Setup"], "would make a controller module 'setup'"),
    (["--group", "ops", "--version", "v1", "--kind", "Backup"], "Backup (backups.ops.example.com/v1) exists already"),
    (["--group", "ops", "--version", "v2", "--kind", "Backup", "--plural", "bkps"],
     "Backup.ops.example.com is served as 'backups' in every version"),
    (["--group", "ops", "--version", "v1", "--kind", "Restore", "--storage"], "--storage applies to a new version"),
    (["--group", "ops", "--version", "v1", "--kind", "Restore", "--plural", "backups"],
     "exists already with the plural 'backups'"),
    (["--group", "ops.other.org", "--version", "v1", "--kind", "Restore"],
     "ops.other.org would share the package name 'ops' with ops.example.com"),
    (["--group", "1ops", "--version", "v1", "--kind", "Restore"], "no Python package name can be made from"),
])
def test_create_api_mistakes_are_one_line_and_write_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            args: list[str], message: str) -> None:
    project = scaffold(tmp_path, capsys, ["--group", "ops", "--version", "v1", "--kind", "Backup"])
    before = listing(project)
    capsys.readouterr()
    assert main(["create", "api", *args], cwd=project) == 1
    err = capsys.readouterr().err
    assert err.startswith("samplecontroller: error: ") and err.count("\n") == 1 and message in err, err
    assert listing(project) == before


def test_a_crd_the_generator_refuses_is_one_line_and_writes_nothing(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    project = scaffold(tmp_path, capsys, ["--group", "ops", "--version", "v1", "--kind", "Backup"])
    crd = project / "config/crd/bases/ops.example.com_backups.yaml"
    assert crd.is_file()
    crd.write_text(crd.read_text().replace("plural: backups", "plural: Backups!"))
    before = listing(project)
    capsys.readouterr()
    assert main(["create", "api", "--group", "ops", "--version", "v1", "--kind", "Restore"], cwd=project) == 1
    err = capsys.readouterr().err
    assert err.startswith("samplecontroller: error: the code generator refused the CRD") and err.count("\n") == 1, err
    assert listing(project) == before


@pytest.mark.parametrize(("args", "message"), [
    (["init", "op", "--domain", "Example.com", "--package", "op"], "--domain 'Example.com' is not a DNS subdomain"),
    (["init", "op", "--domain", "example.com", "--package", "my-op"], "--package 'my-op' is not"),
    (["init", "op", "--domain", "example.com", "--package", "json"], "would shadow"),
    (["init", "Bad_Name!", "--domain", "example.com", "--package", "op"], "pass --project-name"),
    (["init", "taken", "--domain", "example.com", "--package", "op"], "taken exists and is not an empty directory"),
    (["create", "api", "--group", "ops", "--version", "v1", "--kind", "Backup"], "no PROJECT file"),
])
def test_mistakes_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                               message: str) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").write_text("x")
    assert main(args, cwd=tmp_path) == 1
    err = capsys.readouterr().err
    assert err.startswith("samplecontroller: error: ") and err.count("\n") == 1 and message in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_a_bad_command_line_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["create", "api", "--group", "ops", "--version", "v1", "--kind", "B", "--style", "kopf"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--style" in err


def test_without_the_codegen_extra_it_says_so_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(_extras, "missing", lambda extra: ["jinja2"] if extra == "codegen" else [])
    assert main(["init", "op", "--domain", "example.com", "--package", "op"], cwd=tmp_path) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'samplecontroller[codegen]'" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("kind", "plural"), [("Backup", "backups"), ("Policy", "policies"), ("Gateway", "gateways"),
                                              ("Index", "indexes"), ("Mesh", "meshes"), ("Status", "statuses")])
def test_plurals_as_kubebuilder(kind: str, plural: str) -> None:
    assert pluralize(kind) == plural



def make_manifests(project: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> int:
    """The project's `make manifests` (its Makefile's MANIFESTS command line), in this process, from
    a fresh import of its package; returns the exit status."""
    from samplecontroller import manifests
    from samplecontroller.runtime import rbac

    makefile = (project / "Makefile").read_text()
    line = makefile.split("MANIFESTS   := $(PY) -m samplecontroller.manifests ", 1)[1].split("\n\n", 1)[0]
    assert "\t$(MANIFESTS) --verify\n" in makefile and "\t$(MANIFESTS)\n" in makefile
    package = Project.load(project).package
    monkeypatch.chdir(project)
    monkeypatch.setattr(rbac, "_DECLARED", [])

    def forget() -> None:
        for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[name]

    forget()
    try:
        return manifests.main([*line.replace("\\\n", " ").split(), *extra])
    finally:
        forget()


def check_make_manifests(project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The scaffolded controllers' rbac.rule declarations and what their Manager shows are exactly
    the config/rbac/role.yaml create api wrote (so a new project's make test passes), for every
    style; removing one declaration (Backup's status patch) makes `make verify` say the role is
    stale, and `make manifests` drops it."""
    capsys.readouterr()
    assert make_manifests(project, monkeypatch, "--verify") == 0, capsys.readouterr().err
    controller = project / "backupop/controllers/backup.py"
    text = controller.read_text()
    declaration = '@rbac.rule(groups="ops.example.com", resources="backups/status", verbs="patch")\n'
    assert declaration in text
    controller.write_text(text.replace(declaration, ""))
    assert make_manifests(project, monkeypatch, "--verify") == 1
    assert capsys.readouterr().err == "config/rbac/role.yaml is stale: run make manifests\n"
    assert make_manifests(project, monkeypatch) == 0
    assert "backups/status" not in (project / "config/rbac/role.yaml").read_text()
