"""The tutorial's operator, built as the tutorial builds it (docs/tutorial/project holds every file
the tutorial writes or edits; the pages include their code from there, never a copy).

The ``samplecontroller`` commands of docs/tutorial/project/commands.sh scaffold the project
in-process; the tutorial's files go over the scaffold; then what ``make codegen`` and ``make test``
do: the generator, its staleness check, ruff, mypy --strict and the project's own pytest (unit
tests on the fake client, integration tests on the embedded API server, the RBAC test as the
operator's ServiceAccount, the admission and conversion webhooks' tests through that server, which
calls them on the webhook server tests/conftest.py runs). Then ``make run`` with the tutorial's
kubectl lines (the webhooks served, a v1beta1 object read in v1alpha1 and back), and ``make
deploy``'s ``kubectl apply -k config/``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from samplecontroller import scaffold
from samplecontroller.apiserver.testing import require_kubectl
from samplecontroller.scaffold.toolkit import Toolkit
from tests.live import wait_for

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial" / "project"
COMMANDS = TUTORIAL / "commands.sh"
VENV_BIN = Path(sys.executable).parent
# the project's Makefile would install the toolkit from here; this test uses this environment
WHEEL = Toolkit("wheel", "/opt/dist/samplecontroller-0.1.0-py3-none-any.whl", "0.1.0")


def run(args: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTHONPATH")}
    env["MYPYPATH"] = str(ROOT)
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def command_lines(lines: list[str]) -> list[str]:
    """Shell lines with their backslash continuations joined (the docs wrap at 88 columns)."""
    joined: list[str] = []
    pending = ""
    for line in lines:
        if line.endswith("\\"):
            pending += line[:-1].rstrip() + " "
            continue
        joined.append(pending + line.strip() if pending else line)
        pending = ""
    assert not pending, f"a continuation line ends the file or section: {pending!r}"
    return joined


def scaffold_commands() -> list[list[str]]:
    """The tutorial's ``samplecontroller`` and ``cd`` commands, in order."""
    lines = [line.strip() for line in command_lines(COMMANDS.read_text().splitlines())]
    return [shlex.split(line) for line in lines if line.startswith(("samplecontroller ", "cd "))]


def build(tmp_path: Path, *, overlay: bool = True) -> Path:
    """The scaffold of the tutorial's commands, with the tutorial's files over it if ``overlay``."""
    cwd = tmp_path
    for argv in scaffold_commands():
        if argv[0] == "cd":
            cwd = cwd / argv[1]
        elif argv[1] == "init":
            # as `samplecontroller init`, but recording a toolkit source that does not depend on this machine
            name, flags = argv[2], dict(zip(argv[3::2], argv[4::2], strict=True))
            scaffold.init(cwd / name, domain=flags["--domain"], package=flags["--package"], toolkit=WHEEL)
        else:
            assert scaffold.main(argv[1:], cwd=cwd) == 0, argv
    if not overlay:
        return cwd
    for source in TUTORIAL.rglob("*"):
        if source.is_file() and source != COMMANDS and "__pycache__" not in source.parts:
            target = cwd / source.relative_to(TUTORIAL)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target)
    return cwd


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tutorial's operator, built once for this module's tests, its code generated (make codegen)."""
    built = build(tmp_path_factory.mktemp("tutorial"))
    done = run([sys.executable, "hack/update_codegen.py"], built)
    assert done.returncode == 0, done.stdout + done.stderr
    return built


NEW_FILES = {"tests/conftest.py", "tests/test_rbac.py"}
"""The files the tutorial adds; every other file it has replaces one the scaffold wrote."""
WRITTEN_IF_MISSING = {"tests/conftest.py"}
"""Added by the tutorial (integration tests) before ``create webhook``, which writes one only where none
exists: the all-commands scaffold below has it, the reader's project got the tutorial's."""


def test_the_tutorial_edits_scaffolded_files_and_adds_only_the_new_ones(tmp_path: Path) -> None:
    """The tutorial's files are the scaffold's files (edited) plus the few it says it adds: a renamed
    scaffold file or a changed scaffold layout fails here, and the pages would be wrong."""
    project = build(tmp_path / "scaffold", overlay=False)
    scaffolded = {p.relative_to(project).as_posix() for p in project.rglob("*") if p.is_file()}
    written = {p.relative_to(TUTORIAL).as_posix() for p in TUTORIAL.rglob("*")
               if p.is_file() and p != COMMANDS and "__pycache__" not in p.parts}
    assert written - NEW_FILES <= scaffolded, written - NEW_FILES - scaffolded
    assert written >= NEW_FILES and not (NEW_FILES - WRITTEN_IF_MISSING) & scaffolded
    assert "def webhook_manager(" in (project / "tests/conftest.py").read_text()  # create webhook's, replaced


@pytest.mark.slow
@pytest.mark.timeout(600)  # ruff, mypy and pytest of a project in subprocesses: 128 s at a load of 14 on 2 cores
def test_the_tutorial_operator_passes_make_codegen_and_make_test(project: Path) -> None:
    makefile = (project / "Makefile").read_text()
    manifests = makefile.split("MANIFESTS   := $(PY) -m samplecontroller.manifests ", 1)[1].split("\n\n", 1)[0]
    steps = [
        ("the staleness check", [sys.executable, "hack/update_codegen.py", "--verify"]),
        # make manifests --verify: config/rbac/role.yaml is what the tutorial's declarations make
        ("the manifests' staleness check",
         [sys.executable, "-m", "samplecontroller.manifests", *manifests.replace("\\\n", " ").split(), "--verify"]),
        ("ruff", [str(VENV_BIN / "ruff"), "check", "--no-cache", "."]),
        # the toolkit is an editable install here (an import hook mypy cannot follow): found through
        # MYPYPATH, and checked by this repository's own mypy run, not again with the project's settings
        ("mypy --strict", [str(VENV_BIN / "mypy"), "--follow-imports=silent", "--cache-dir", os.devnull]),
        ("pytest", [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]),
    ]
    for what, argv in steps:
        done = run(argv, project)
        assert done.returncode == 0, f"{what} failed:\n{done.stdout}\n{done.stderr}"


def section(name: str) -> list[str]:
    """The command lines of one ``--8<-- [start:name]`` section of commands.sh."""
    lines = COMMANDS.read_text().splitlines()
    start, end = lines.index(f"# --8<-- [start:{name}]"), lines.index(f"# --8<-- [end:{name}]")
    return command_lines(lines[start + 1:end])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def kubectl_runner(project: Path, kubeconfig: Path, home: Path) -> Callable[[str], subprocess.CompletedProcess[str]]:
    """Runs one ``kubectl ...`` line of commands.sh in ``project`` against ``kubeconfig``."""
    binary = require_kubectl()
    home.mkdir(exist_ok=True)

    def kubectl(line: str) -> subprocess.CompletedProcess[str]:
        argv = shlex.split(line)
        assert argv[0] == "kubectl", line
        env = {**os.environ, "HOME": str(home), "KUBECONFIG": str(kubeconfig)}
        return subprocess.run([binary, *argv[1:]], cwd=project, env=env, capture_output=True, text=True,
                              timeout=120, check=False)

    return kubectl


@pytest.mark.slow
@pytest.mark.kubectl
def test_make_run_then_the_kubectl_session(project: Path, tmp_path: Path) -> None:
    """`make run` (python -m memcachedop --local) and the tutorial's kubectl lines, in order."""
    (run_line,) = section("run")
    assert run_line.startswith("make run")  # the Makefile's run target: python -m memcachedop --local --port
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTHONPATH")}
    port, webhook_port = free_port(), free_port()
    proc = subprocess.Popen([sys.executable, "-m", "memcachedop", "--local", "--port", str(port),
                             "--webhook-port", str(webhook_port)], cwd=project,
                            env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        assert proc.stdout is not None
        lines: list[str] = []
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("Embedded API server ready at"):
                break
        assert lines and lines[-1].startswith(f"Embedded API server ready at https://127.0.0.1:{port}"), lines
        kubectl = kubectl_runner(project, project / ".local" / "kubeconfig", tmp_path / "home")
        outputs = {}
        # the webhook server starts with the Manager, after the embedded API server: wait until it answers
        wait_for(lambda: kubectl("kubectl apply -f config/samples/").returncode == 0, 60, "the webhooks to serve")
        for line in section("kubectl"):
            if line.startswith("export "):
                continue
            done = kubectl(line)
            assert done.returncode == 0, f"{line}: {done.stderr}"
            outputs[line.split()[1] + " " + line.split()[2]] = done.stdout + done.stderr
        # the simulated Deployment status of --local made it Ready with 3 of 3 Pods
        table = outputs["get memcacheds"].splitlines()
        assert table[0].split() == ["NAME", "SIZE", "AVAILABLE", "READY", "AGE"], table
        assert table[1].split()[:4] == ["memcached-sample", "3", "3", "True"], table
        assert "memcached-sample" in outputs["get deployments"]
        assert outputs["get deployment"] == "1"
        assert "Created Deployment memcached-sample" in outputs["describe memcached"]
        # the webhook step's and the versions step's lines
        denied, v1alpha1_of_v1beta1, v1beta1_of_v1alpha1 = (kubectl(line) for line in section("kubectl-webhooks"))
        assert denied.returncode == 1 and denied.stderr == ('The Memcached "memcached-sample" is invalid: spec.port: '
                                                            "Invalid value: 11300: field is immutable\n"), denied.stderr
        assert v1alpha1_of_v1beta1.returncode == 0 and v1alpha1_of_v1beta1.stdout == "11300 memcached:1.6-alpine"
        assert v1beta1_of_v1alpha1.returncode == 0 and v1beta1_of_v1alpha1.stdout == "11211"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            output = proc.communicate(timeout=60)[0]
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            raise
    assert proc.returncode == 0 and "level=error" not in "".join(lines) + output, "".join(lines) + output


CERT_MANAGER_CRDS = "\n---\n".join(f"""\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.cert-manager.io
spec:
  group: cert-manager.io
  names: {{kind: {kind}, listKind: {kind}List, plural: {plural}, singular: {kind.lower()}}}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}
""" for kind, plural in (("Issuer", "issuers"), ("Certificate", "certificates")))


@pytest.mark.kubectl
def test_config_is_accepted_by_an_api_server(project: Path, tmp_path: Path) -> None:
    """The deploy step's `kubectl apply -k config/` (make deploy), against the embedded API server:
    every manifest the operator is deployed with is valid (its Pods, and so its webhooks, do not run there)."""
    from samplecontroller.apiserver import LocalAPIServer

    assert "make deploy" in section("deploy")
    with LocalAPIServer(kubeconfig_path=tmp_path / "kubeconfig") as server:
        kubectl = kubectl_runner(project, server.kubeconfig_path, tmp_path / "home")
        # the deploy step installs cert-manager first: its two kinds config/certmanager uses stand in for it
        (tmp_path / "cert-manager.yaml").write_text(CERT_MANAGER_CRDS)
        installed = kubectl(f"kubectl apply -f {tmp_path / 'cert-manager.yaml'}")
        assert installed.returncode == 0, installed.stderr
        applied = kubectl("kubectl apply -k config/")
        assert applied.returncode == 0, applied.stderr
        for created in ("namespace/memcached-operator-system", "customresourcedefinition.apiextensions.k8s.io/"
                        "memcacheds.cache.example.com", "clusterrole.rbac.authorization.k8s.io/"
                        "memcached-operator-manager", "deployment.apps/memcached-operator",
                        "service/memcached-operator-webhook", "mutatingwebhookconfiguration.admissionregistration.k8s.io/"
                        "memcached-operator-mutating-webhook-configuration", "validatingwebhookconfiguration."
                        "admissionregistration.k8s.io/memcached-operator-validating-webhook-configuration",
                        "issuer.cert-manager.io/memcached-operator-selfsigned-issuer",
                        "certificate.cert-manager.io/memcached-operator-serving-cert"):
            assert f"{created} created" in applied.stdout, applied.stdout
        # the samples go through the webhooks, which the operator's Pod serves in a cluster: here no Pod runs,
        # and the API server says so (test_make_run_then_the_kubectl_session applies them with the webhooks served)
        sample = kubectl("kubectl apply -f config/samples/")
        assert sample.returncode == 1 and 'service "memcached-operator-webhook" in namespace ' \
            '"memcached-operator-system" cannot be reached' in sample.stderr, sample.stderr


def test_every_code_block_of_the_tutorial_comes_from_a_tested_file(project: Path) -> None:
    """A block either includes a snippet of docs/tutorial/project (the files the tests above run),
    or is configuration the scaffold writes (each line found in the scaffolded project), or is
    output (``text``). Blocks indented in a collapsible note (``??? example``) count too."""
    scaffolded = {line.strip() for p in project.rglob("*") if p.is_file() and p.suffix in (".toml", ".yaml")
                  for line in p.read_text().splitlines()}
    pages = sorted((ROOT / "docs" / "tutorial").glob("*.md"))
    assert len(pages) >= 10
    for page in pages:
        # a fence may carry a title (the cluster steps are titled fragments)
        for match in re.finditer(r"^( *)```(\w*)[^\n]*\n(.*?)^\1```$", page.read_text(), re.S | re.M):
            _, language, body = match.groups()
            if body.strip().startswith("--8<--"):
                continue
            if language == "toml":
                assert {line.strip() for line in body.splitlines() if line.strip()} <= scaffolded, f"{page.name}: {body}"
            else:
                assert language == "text", f"{page.name}: a {language or 'plain'} block not included from a tested file"
