"""The package as users get it: this checkout's wheel, installed into a fresh virtualenv outside
the checkout (tests/wheelenv.py), generates a package from a CRD with ``samplecontroller-codegen``,
imports it, and serves ``python -m samplecontroller.apiserver``, talked to over HTTPS.

Everything runs with the temporary directory as the working directory and the virtualenv's own
interpreter, so nothing can come from this repository's layout: it proves that the package data
(codegen templates, the vendored OpenAPI definitions, the protobuf field tables, py.typed) ships.
"""

from __future__ import annotations

import base64
import json
import ssl
import subprocess
import textwrap
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from samplecontroller import __version__
from tests.wheelenv import ROOT, WheelEnv, run

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: backups.ops.example.com
spec:
  group: ops.example.com
  scope: Namespaced
  names: {plural: backups, singular: backup, kind: Backup, listKind: BackupList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              schedule: {type: string}
              retain: {type: integer}
          status:
            type: object
            properties:
              phase: {type: string}
"""

PACKAGE_DATA = (
    "samplecontroller/py.typed",
    "samplecontroller/apimachinery/openapi_definitions.json.xz",
    "samplecontroller/apiserver/protobuf_fields.json",
    "samplecontroller/codegen/templates/models.py.j2",
    "samplecontroller/codegen/templates/clientset.py.j2",
    "samplecontroller/scaffold/templates/Makefile.j2",
    "samplecontroller/scaffold/templates/v1/Makefile.j2",  # upgrade's merge base for 0.1.0's projects
)


def test_the_wheel_carries_the_package_data_and_not_the_repository(built_wheel: Path) -> None:
    names = set(zipfile.ZipFile(built_wheel).namelist())
    missing = [name for name in PACKAGE_DATA if name not in names]
    assert not missing, missing
    assert not [n for n in names if n.split("/")[0] in ("generated", "tests", "hack", "crds", "examples")]
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(built_wheel).read(metadata).decode()
    assert "License-Expression: Apache-2.0" in text
    # the license text travels with the wheel (issue 38: the repository declared Apache-2.0 without one)
    assert "License-File: LICENSE" in text
    license_file = next(n for n in names if n.endswith(".dist-info/licenses/LICENSE"))
    assert b"Apache License" in zipfile.ZipFile(built_wheel).read(license_file)
    assert f"Version: {__version__}\n" in text


def test_installed_wheel_is_used_not_the_checkout(wheel_env: WheelEnv, tmp_path: Path) -> None:
    done = run([str(wheel_env.python), "-c", "import samplecontroller, sys; print(samplecontroller.__file__)"],
               cwd=tmp_path, env=wheel_env.env())
    location = Path(done.stdout.strip())
    assert wheel_env.root in location.parents, location
    assert ROOT not in location.parents


def test_codegen_from_the_wheel_generates_an_importable_package(wheel_env: WheelEnv, tmp_path: Path) -> None:
    (tmp_path / "crds").mkdir()
    (tmp_path / "crds" / "backup.yaml").write_text(CRD)
    run([str(wheel_env.bin("samplecontroller-codegen")), "--crds", "crds", "--output", "backupop/gen",
         "--package", "backupop.gen"], cwd=tmp_path, env=wheel_env.env())
    (tmp_path / "backupop" / "__init__.py").touch()
    program = textwrap.dedent("""
        import msgspec
        from backupop.gen.apis.ops.v1 import Backup, BackupSpec
        from backupop.gen.clientset import Clientset
        from backupop.gen.clientset.fake import Clientset as FakeClientset
        raw = b'{"apiVersion": "ops.example.com/v1", "kind": "Backup", "metadata": {"name": "nightly"},'
        raw += b' "spec": {"schedule": "@daily", "retain": 3}}'
        b = msgspec.json.decode(raw, type=Backup)
        assert isinstance(b.spec, BackupSpec) and b.spec.retain == 3
        print(msgspec.json.encode(b).decode())
        fake = FakeClientset()
        fake.ops_v1().backups("default").create(b)
        print(fake.ops_v1().backups("default").get("nightly").spec.schedule)
    """)
    done = run([str(wheel_env.python), "-c", program], cwd=tmp_path, env=wheel_env.env())
    encoded, schedule = done.stdout.split()
    assert json.loads(encoded)["apiVersion"] == "ops.example.com/v1"
    assert schedule == "@daily"


@pytest.fixture
def served(wheel_env: WheelEnv, tmp_path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """``python -m samplecontroller.apiserver`` from the wheel; (url, kubeconfig)."""
    proc = subprocess.Popen([str(wheel_env.python), "-m", "samplecontroller.apiserver", "--port", "0",
                             "--kubeconfig", "kubeconfig"], cwd=tmp_path, env=wheel_env.env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("ready "), (line, proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        url = line.split()[1]
        yield url, yaml.safe_load((tmp_path / "kubeconfig").read_text())
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _https(url: str, kubeconfig: dict[str, Any], path: str, method: str = "GET",
           body: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
    cluster = kubeconfig["clusters"][0]["cluster"]
    user = kubeconfig["users"][0]["user"]
    context = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
    headers = {"Accept": "application/json", "Content-Type": "application/json"}
    if "token" in user:
        headers["Authorization"] = f"Bearer {user['token']}"
    request = urllib.request.Request(url + path, method=method, headers=headers,
                                     data=json.dumps(body).encode() if body is not None else None)
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_apiserver_from_the_wheel_serves_requests(served: tuple[str, dict[str, Any]]) -> None:
    url, kubeconfig = served
    assert kubeconfig["clusters"][0]["cluster"]["server"] == url
    code, version = _https(url, kubeconfig, "/version")
    assert code == 200 and version["major"] == "1", version
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "from-wheel"}, "data": {"k": "v"}}
    code, created = _https(url, kubeconfig, "/api/v1/namespaces/default/configmaps", "POST", cm)
    assert code == 201, created
    code, got = _https(url, kubeconfig, "/api/v1/namespaces/default/configmaps/from-wheel")
    assert code == 200 and got["data"] == {"k": "v"}
    # the vendored OpenAPI definitions ship: the served OpenAPI has the built-in kinds
    code, openapi = _https(url, kubeconfig, "/openapi/v3/apis/apps/v1")
    assert code == 200 and "io.k8s.api.apps.v1.Deployment" in openapi["components"]["schemas"]
    code, missing = _https(url, kubeconfig, "/api/v1/namespaces/default/configmaps/nope")
    assert code == 404 and missing["reason"] == "NotFound"

