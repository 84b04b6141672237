"""The dependency split: the core install runs the controller; the API server, the webhook server
and the code generator are extras that fail with one line when missing; the upstream OpenAPI
definitions are vendored (no kubernetes-validate at run time).

"Missing" is made real in a subprocess: a ``sitecustomize`` (on PYTHONPATH, imported by ``site``
at start-up) puts a meta-path finder first that refuses the extras' packages, as if they were
not installed.
"""

from __future__ import annotations

import importlib.metadata
import lzma
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from samplecontroller import _extras
from samplecontroller.apimachinery import openapi_schemas

ROOT = Path(__file__).resolve().parents[2]
EXTRA_PACKAGES = ("aiohttp", "cryptography", "jinja2", "datamodel_code_generator", "kubernetes_validate", "jsonschema")
NOT_CORE = {"aiohttp", "cryptography", "jinja2", "datamodel-code-generator", "kubernetes-validate"}

BLOCKER = '''
import sys

BLOCKED = set(sys.argv and {blocked!r})


class _NotInstalled:
    """Refuses the blocked top-level packages as if they were not installed."""

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())
'''


def _pyproject() -> dict[str, Any]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


def _name(requirement: str) -> str:
    """The normalized distribution name of a requirement string."""
    match = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def run_without(blocked: tuple[str, ...], tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python *args`` from the repository root with ``blocked`` packages made unimportable."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(BLOCKER.format(blocked=set(blocked)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


# -- the metadata ----------------------------------------------------------------------------


def test_core_dependencies_exclude_the_extras() -> None:
    core = {_name(r) for r in _pyproject()["project"]["dependencies"]}
    assert core == {"kubernetes", "msgspec", "pyyaml", "prometheus-client"}
    assert not core & NOT_CORE


def test_installed_metadata_has_the_same_core() -> None:
    """The metadata of the installed build (what a wheel says): unconditional Requires-Dist."""
    requires = importlib.metadata.requires("samplecontroller") or []
    core = {_name(r) for r in requires if "extra ==" not in r}
    assert core == {"kubernetes", "msgspec", "pyyaml", "prometheus-client"}
    extras = importlib.metadata.metadata("samplecontroller").get_all("Provides-Extra") or []
    assert {"apiserver", "webhook", "codegen", "schemas", "dev"} <= set(extras)


def test_extras_match_the_runtime_checks() -> None:
    """_extras.EXTRAS (what the one-line errors check) lists each pyproject extra's packages."""
    extras = _pyproject()["project"]["optional-dependencies"]
    for extra, modules in _extras.EXTRAS.items():
        assert {_name(r).replace("-", "_") for r in extras[extra]} == set(modules), extra
    assert {_name(r) for r in extras["schemas"]} == {"kubernetes-validate"}
    assert "samplecontroller[apiserver,webhook,codegen,schemas,async,docs]" in extras["dev"]
    # the documentation site builds with the docs extra alone (mkdocs.yml's theme and plugins)
    assert {_name(r) for r in extras["docs"]} == {"mkdocs", "mkdocs-material", "mkdocstrings",
                                                  "pymdown-extensions", "black"}


def test_vendored_definitions_are_package_data() -> None:
    patterns = _pyproject()["tool"]["setuptools"]["package-data"]["samplecontroller.apimachinery"]
    vendored = ROOT / "samplecontroller" / "apimachinery" / openapi_schemas.VENDORED_FILE
    assert any(vendored.match(p) for p in patterns)
    assert vendored.stat().st_size < 200_000
    assert lzma.decompress(vendored.read_bytes()) == openapi_schemas.raw_definitions()


# -- without the extras ----------------------------------------------------------------------


CONTROLLER_IMPORTS = """
import samplecontroller.controller, samplecontroller.foo_reconciler, samplecontroller.app
import samplecontroller.probes, samplecontroller.rest, samplecontroller.leaderelection
import samplecontroller.runtime.manager, samplecontroller.testing, samplecontroller.codegen
from samplecontroller.apimachinery import openapi_schemas, strategicpatch
assert openapi_schemas.definition_name_for_gvk("apps", "v1", "Deployment") == "io.k8s.api.apps.v1.Deployment"
assert len(openapi_schemas.definitions()) > 500
import sys
loaded = sorted(m for m in sys.modules if m.partition(".")[0] in {blocked!r})
assert not loaded, loaded
print("ok")
"""


def test_controller_imports_without_the_extras(tmp_path: Path) -> None:
    """The controller, the machinery and the vendored schemas: no extra, no kubernetes-validate."""
    done = run_without(EXTRA_PACKAGES, tmp_path, "-c", CONTROLLER_IMPORTS.format(blocked=set(EXTRA_PACKAGES)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_the_blocker_blocks(tmp_path: Path) -> None:
    done = run_without(("aiohttp",), tmp_path, "-c", "import aiohttp")
    assert done.returncode == 1
    assert "ModuleNotFoundError: No module named 'aiohttp'" in done.stderr


@pytest.mark.parametrize(("module", "extra"), [
    ("samplecontroller.apiserver", "apiserver"),
    ("samplecontroller.apiserver.server", "apiserver"),
    ("samplecontroller.runtime.webhook", "webhook"),
])
def test_importing_a_module_without_its_extra_names_the_pip_command(tmp_path: Path, module: str, extra: str) -> None:
    code = f"""
from samplecontroller._extras import MissingExtraError
try:
    import {module}
except MissingExtraError as err:
    print(err)
"""
    done = run_without(("aiohttp", "cryptography"), tmp_path, "-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (f"{module.rsplit('.', 1)[0] if module.endswith('.server') else module} needs the "
                           f"{extra!r} extra (aiohttp, cryptography not installed): "
                           f"pip install 'samplecontroller[{extra}]'\n")


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_main_local_without_the_apiserver_extra_is_one_line(tmp_path: Path) -> None:
    done = run_without(("aiohttp",), tmp_path, "main.py", "--local", "--port", "0", "--local-dir", str(tmp_path / "l"))
    assert done.returncode == 1
    assert _one_line(done) == ("main.py: error: --local: samplecontroller.apiserver needs the 'apiserver' extra "
                               "(aiohttp not installed): pip install 'samplecontroller[apiserver]'")
    assert not (tmp_path / "l").exists()


def test_main_controller_async_without_the_async_extra_is_one_line(tmp_path: Path) -> None:
    done = run_without(("aiohttp",), tmp_path, "main.py", "--controller", "async", "--master", "http://127.0.0.1:1")
    assert done.returncode == 1
    assert _one_line(done) == ("main.py: error: --controller async needs the 'async' extra (aiohttp not installed): "
                               "pip install 'samplecontroller[async]'")


@pytest.mark.parametrize("module", ["samplecontroller.rest.aio", "samplecontroller.client.aio"])
def test_the_async_clients_without_the_extra_name_the_pip_command(tmp_path: Path, module: str) -> None:
    code = f"""
from samplecontroller._extras import MissingExtraError
import samplecontroller.runtime.controller.aio, samplecontroller.runtime.client.aio  # need no extra
try:
    import {module}
except MissingExtraError as err:
    print(err)
"""
    done = run_without(("aiohttp",), tmp_path, "-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ("samplecontroller.rest.aio (the async client) needs the 'async' extra (aiohttp not "
                           "installed): pip install 'samplecontroller[async]'\n")


def test_python_m_apiserver_without_the_extra_is_one_line(tmp_path: Path) -> None:
    done = run_without(("cryptography",), tmp_path, "-m", "samplecontroller.apiserver")
    assert done.returncode == 1
    assert _one_line(done).endswith("pip install 'samplecontroller[apiserver]'")


def test_codegen_without_the_extra_is_one_line(tmp_path: Path) -> None:
    done = run_without(("jinja2",), tmp_path, "-m", "samplecontroller.codegen", "--crds", "crds",
                       "--output", str(tmp_path / "out"), "--package", "out")
    assert done.returncode == 2
    assert _one_line(done) == ("samplecontroller-codegen: error: samplecontroller.codegen needs the 'codegen' "
                               "extra (jinja2 not installed): pip install 'samplecontroller[codegen]'")


# -- hack/update_openapi_schemas.py ----------------------------------------------------------


def _script() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("update_openapi_schemas", ROOT / "hack" / "update_openapi_schemas.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_vendored_definitions_are_up_to_date() -> None:
    """What ``make verify`` checks: the vendored file is the pinned package's, byte for byte."""
    script = _script()
    assert script.main(["--verify"]) == 0
    assert openapi_schemas.raw_definitions() == script.upstream_file().read_bytes()


def test_update_openapi_schemas_verify_and_regenerate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    script = _script()
    monkeypatch.setattr(script, "ROOT", tmp_path)
    monkeypatch.setattr(script, "TARGET_DIR", tmp_path)
    target = tmp_path / openapi_schemas.VENDORED_FILE
    assert script.main(["--verify"]) == 1  # missing
    target.write_bytes(lzma.compress(b'{"$defs": {}}'))
    assert script.main(["--verify"]) == 1  # different
    assert "is stale: run `python hack/update_openapi_schemas.py`" in capsys.readouterr().err
    assert script.main([]) == 0
    assert lzma.decompress(target.read_bytes()) == openapi_schemas.raw_definitions()
    assert script.main(["--verify"]) == 0
    before = target.stat().st_mtime_ns
    assert script.main([]) == 0  # up to date: not rewritten
    assert target.stat().st_mtime_ns == before


def test_update_openapi_schemas_without_kubernetes_validate_is_one_line(tmp_path: Path) -> None:
    done = run_without(("kubernetes_validate",), tmp_path, "hack/update_openapi_schemas.py", "--verify")
    assert done.returncode == 2
    assert _one_line(done).startswith("update_openapi_schemas: error: the kubernetes-validate package is not "
                                      "installed in ")


# -- hack/update_protobuf_fields.py (kept as plain JSON; run by hand with a checkout) ----------


PROTO = """
syntax = "proto2";
package k8s.io.api.acme.v1;

message Thing {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  repeated string names = 2;
  map<string, string> labels = 3;
}
"""


def test_update_protobuf_fields_verify_then_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("update_protobuf_fields", ROOT / "hack" / "update_protobuf_fields.py")
    assert spec and spec.loader
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    table = tmp_path / "protobuf_fields.json"
    table.write_text((ROOT / "samplecontroller" / "apiserver" / "protobuf_fields.json").read_text())
    monkeypatch.setattr(script, "TABLE", table)
    (tmp_path / "api" / "acme" / "v1").mkdir(parents=True)
    (tmp_path / "api" / "acme" / "v1" / "generated.proto").write_text(PROTO)
    before = table.read_text()
    args = [str(tmp_path / "api"), "acme/v1"]
    assert script.main(["x", "--verify", *args]) == 1
    assert table.read_text() == before
    assert script.main(["x", *args]) == 0
    assert script.main(["x", "--verify", *args]) == 0
    import json

    assert json.loads(table.read_text())["k8s.io.api.acme.v1.Thing"] == {
        "1": ["metadata", ".k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta", "opt"],
        "2": ["names", "string", "rep"],
        "3": ["labels", "string", "map"],
    }
    assert script.main(["x"]) == 2


# -- the controller as the image runs it ---------------------------------------------------------


def _poll(fetch: Any, what: str, timeout: float = 30.0) -> Any:
    """``fetch()`` until it returns something truthy (bounded; not a timing assert)."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = fetch()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.parametrize("style", ["classic", "runtime"])
def test_controller_runs_without_the_extras(tmp_path: Path, style: str) -> None:
    """main.py (no --local) with every extra unimportable reconciles a Foo on a real server."""
    import signal

    import kubernetes

    from samplecontroller import app, rest
    from samplecontroller.apiserver import LocalAPIServer

    with LocalAPIServer(simulate_deployments=True, kubeconfig_path=tmp_path / "kubeconfig") as server:
        app.install_crds(rest.load_rest_client(kubeconfig=str(server.kubeconfig_path)), ROOT / "crds")
        site = tmp_path / "site"
        site.mkdir()
        (site / "sitecustomize.py").write_text(BLOCKER.format(blocked=set(EXTRA_PACKAGES)))
        env = {**os.environ, "PYTHONPATH": str(site)}
        with (tmp_path / "controller.log").open("w") as log:
            proc = subprocess.Popen([sys.executable, "main.py", "--kubeconfig", str(server.kubeconfig_path),
                                     "--controller", style, "--shutdown-timeout", "5s"],
                                    cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
            try:
                api = kubernetes.config.new_client_from_config(config_file=str(server.kubeconfig_path))
                with api:
                    kubernetes.client.CustomObjectsApi(api).create_namespaced_custom_object(
                        "samplecontroller.k8s.io", "v1alpha1", "default", "foos",
                        {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                         "metadata": {"name": "lean"}, "spec": {"deploymentName": "lean-nginx", "replicas": 2}})
                    apps = kubernetes.client.AppsV1Api(api)

                    def deployment() -> Any:
                        found = apps.list_namespaced_deployment("default", field_selector="metadata.name=lean-nginx")
                        return found.items

                    items = _poll(deployment, "the Deployment")
                    assert items[0].spec.replicas == 2
                    assert proc.poll() is None, (tmp_path / "controller.log").read_text()
            finally:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
                code = proc.wait(30)
    output = (tmp_path / "controller.log").read_text()
    assert code == 0, output
    assert "Traceback" not in output, output
