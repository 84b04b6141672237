"""KubernetesLoader reads YAML as kubectl does (sigs.k8s.io/yaml over go-yaml v2).

The reference is the real kubectl: ``kubectl annotate --local -o json`` converts a manifest to
JSON without a server, through the same YAMLToJSON as kube-apiserver's YAML bodies.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from samplecontroller.apimachinery import k8syaml

# Plain scalars where PyYAML's YAML 1.1 SafeLoader and Kubernetes differ, or that are easy to get wrong.
SCALARS = ("=, '!=', =~, on, On, ON, no, yes, off, y, Y, n, NO, True, FALSE, 0777, -0777, 1:20, 190:20:30, "
           "2001-12-14, 2001-12-14T21:59:43.10Z, 0o17, 0x1f, +0x1F, 0b101, -0b11, 1_000, 08, 09.5, .5, .e5, ., "
           "1e3, 1E-2, +12, -0, 1e400, 9223372036854775807, 123456789012345678901234567890, ~, null, Null, '', "
           "<<x, 0x_1f, 1__0, 0.5_5, '123', !!str 12, !!float 3, !!binary aGVsbG8=, !foo bar, -, +, 1.2.3, "
           "12abc, 0xfg")
MANIFEST = f"""\
apiVersion: v1
kind: ConfigMap
metadata:
  name: x
data:
  vals: [{SCALARS}]
  emptyval:
  1: int key
  2.5: float key
  1e6: big float key
  on: bool key
  n: n key
  2001-12-14: ts key
  nested: {{<<: {{q: 1}}, r: 2}}
  set: !!set {{a, b}}
"""


def _numbers_as_float(value: Any) -> Any:
    """kubectl's unstructured JSON turns integers beyond int64 into floats; compare numbers as floats."""
    if isinstance(value, dict):
        return {k: _numbers_as_float(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers_as_float(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def kubectl_to_json(binary: str, manifest: str, home: Path) -> Any:
    env = {**os.environ, "HOME": str(home), "KUBECONFIG": str(home / "none")}
    proc = subprocess.run([binary, "--cache-dir", str(home / "cache"), "annotate", "--local", "-f", "-", "a=b",
                           "-o", "json"], input=manifest, capture_output=True, text=True, env=env, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def kubectl_binary() -> str:
    binary = shutil.which("kubectl") or shutil.which("/usr/bin/kubectl")
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("kubectl is required under CI=true but was not found")
        pytest.skip("kubectl not found")
    return binary


def test_scalars_and_keys_resolve_as_kubectl_resolves_them(kubectl_binary: str, tmp_path: Path) -> None:
    expected = kubectl_to_json(kubectl_binary, MANIFEST, tmp_path)["data"]
    actual = k8syaml.load(MANIFEST)["data"]
    assert _numbers_as_float(actual) == _numbers_as_float(expected)
    assert actual["vals"][:3] == ["=", "!=", "=~"]
    assert actual["vals"][3] is True and actual["vals"][6] is False  # on / no, as go-yaml v2 (YAML 1.1)
    assert "0777" not in actual["vals"] and 511 in actual["vals"] and "1:20" in actual["vals"]


def test_an_equals_enum_is_read_as_strings() -> None:
    """The defect: PyYAML's safe loader resolves the plain scalar ``=`` as YAML 1.1's !!value and
    fails (PyYAML 6.0); go-yaml v2, and so k8syaml, reads it as the string "="."""
    text = "enum: ['!=', =, =~]\n"
    assert k8syaml.load(text) == {"enum": ["!=", "=", "=~"]}


def test_deep_nesting_is_a_yaml_error_not_a_recursion_error() -> None:
    deep = "".join(f"{'  ' * i}a:\n" for i in range(3000)) + "  " * 3000 + "x\n"
    # the message names the nesting problem; which layer words it (our bound or PyYAML's own
    # limit, since 6.0.4) is not asserted
    with pytest.raises(yaml.YAMLError, match=r"(?i)nest|depth"):
        k8syaml.load(deep)
    flow = "[" * 100_000 + "]" * 100_000
    with pytest.raises(yaml.YAMLError, match=r"(?i)nest|depth"):
        k8syaml.load(flow)
    ok = "{a: " * (k8syaml.MAX_DEPTH - 1) + "x" + "}" * (k8syaml.MAX_DEPTH - 1)
    assert k8syaml.load(ok) is not None


def test_null_key_is_an_error_as_in_kubernetes() -> None:
    with pytest.raises(yaml.YAMLError, match="unsupported map key"):
        k8syaml.load("{? null : x}")


def test_explicit_tag_mismatch_is_an_error() -> None:
    with pytest.raises(yaml.YAMLError, match="cannot decode !!str `abc` as a !!int"):
        k8syaml.load("!!int abc")
    assert list(k8syaml.load_all("a: 1\n---\nb: on\n")) == [{"a": 1}, {"b": True}]


def test_python_tags_are_plain_data() -> None:
    assert k8syaml.load("!!python/object/apply:os.system [echo hi]") == ["echo hi"]


def test_dump_writes_what_kubectl_writes() -> None:
    """``dump`` is sigs.k8s.io/yaml's JSONToYAML: ``kubectl create configmap ... --dry-run=client
    -o yaml`` (kubectl 1.37) of values go-yaml quotes, folds, writes as blocks or leaves plain, and
    of keys in go-yaml's order (``_z`` before ``A``, ``a2`` before ``a10``, ``b1`` before ``b01``),
    byte for byte."""
    printed = (Path(__file__).parent / "testdata" / "kubectl-1.37-configmap.yaml").read_text()
    assert k8syaml.dump(k8syaml.load(printed)) == printed


@pytest.mark.parametrize(("value", "written"), [
    (1e6, "1e+06"), (123456.0, "123456"), (1.5, "1.5"), (0.0001, "0.0001"), (1e-05, "1e-05"),
    (-0.0, "-0"), (1234567.5, "1.2345675e+06"), (100.0, "100"), (float("inf"), ".inf"),
])
def test_dump_writes_floats_as_go_does(value: float, written: str) -> None:
    assert k8syaml.dump({"v": value}) == f"v: {written}\n"
