"""RESTClient construction: kubeconfig loading, auth headers, fallback order, config errors."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from samplecontroller.rest import ConfigError, RESTClient, load_rest_client

from .conftest import MiniServer


def write_kubeconfig(tmp_path: Path, server: str, user: dict[str, Any]) -> Path:
    path = tmp_path / "config"
    path.write_text(textwrap.dedent(f"""\
        apiVersion: v1
        kind: Config
        clusters:
        - name: c
          cluster: {{server: "{server}"}}
        users:
        - name: u
          user: {json.dumps(user)}
        contexts:
        - name: ctx
          context: {{cluster: c, user: u, namespace: ns1}}
        - name: other
          context: {{cluster: c, user: u}}
        current-context: ctx
        """))
    return path


def test_kubeconfig_token_is_sent(server: MiniServer, tmp_path: Path) -> None:
    path = write_kubeconfig(tmp_path, server.url, {"token": "sekret"})
    rest = RESTClient.from_kubeconfig(path)
    rest.request("GET", "/api")
    assert server.requests[-1].headers["Authorization"] == "Bearer sekret"
    assert rest.host == server.url


def test_exec_plugin_credentials_are_used(server: MiniServer, tmp_path: Path) -> None:
    cred = {"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
            "status": {"token": "from-exec"}}
    script = tmp_path / "plugin.py"
    script.write_text(f"print({json.dumps(json.dumps(cred))})\n")
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": sys.executable,
                     "args": [str(script)], "interactiveMode": "Never"}}
    rest = RESTClient.from_kubeconfig(write_kubeconfig(tmp_path, server.url, user))
    rest.request("GET", "/api")
    assert server.requests[-1].headers["Authorization"] == "Bearer from-exec"


def test_master_overrides_the_kubeconfig_server(server: MiniServer, tmp_path: Path) -> None:
    path = write_kubeconfig(tmp_path, "https://unused.invalid:6443", {"token": "t"})
    rest = RESTClient.from_kubeconfig(path, context="other", master=server.url)
    rest.request("GET", "/api")
    assert server.requests[-1].headers["Authorization"] == "Bearer t"


def test_config_errors_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist") as info:
        RESTClient.from_kubeconfig(tmp_path / "missing")
    assert "\n" not in str(info.value)
    bad = tmp_path / "bad"
    bad.write_text("clusters: [\n  - this is: [not yaml")
    with pytest.raises(ConfigError, match="invalid kubeconfig") as info:
        RESTClient.from_kubeconfig(bad)
    assert "\n" not in str(info.value)
    path = write_kubeconfig(tmp_path, "http://127.0.0.1:1", {"token": "t"})
    with pytest.raises(ConfigError, match="nope"):
        RESTClient.from_kubeconfig(path, context="nope")


def test_in_cluster_outside_a_cluster_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ConfigError, match="not running in a cluster"):
        RESTClient.in_cluster()


def test_load_rest_client_fallback_order(server: MiniServer, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    # master alone: no credentials
    load_rest_client(master=server.url).request("GET", "/api")
    assert "Authorization" not in server.requests[-1].headers
    # no flags, not in a cluster: $KUBECONFIG
    monkeypatch.setenv("KUBECONFIG", str(write_kubeconfig(tmp_path, server.url, {"token": "env"})))
    load_rest_client().request("GET", "/api")
    assert server.requests[-1].headers["Authorization"] == "Bearer env"
    # then ~/.kube/config
    monkeypatch.delenv("KUBECONFIG")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    with pytest.raises(ConfigError, match=r"\.kube/config"):
        load_rest_client()


def test_custom_user_agent(server: MiniServer) -> None:
    import kubernetes

    cfg = kubernetes.client.Configuration()
    cfg.host = server.url
    RESTClient.from_config(cfg, user_agent="foo-controller/1.0").request("GET", "/api")
    assert server.requests[-1].headers["User-Agent"] == "foo-controller/1.0"
    api = kubernetes.client.ApiClient(cfg)
    RESTClient.from_api_client(api).request("GET", "/api")
    assert server.requests[-1].headers["User-Agent"] == "samplecontroller/0.1"


def test_broken_in_cluster_falls_back_to_the_default_kubeconfig(server: MiniServer, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    monkeypatch.setenv("KUBECONFIG", str(write_kubeconfig(tmp_path, server.url, {"token": "fallback"})))
    load_rest_client().request("GET", "/api")  # no service account token here: in-cluster fails
    assert server.requests[-1].headers["Authorization"] == "Bearer fallback"
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "nope"))
    with pytest.raises(ConfigError, match="no usable configuration") as info:
        load_rest_client()
    assert "\n" not in str(info.value)


def test_retry_after_is_honoured_then_the_error_is_raised(server: MiniServer) -> None:
    from samplecontroller.apimachinery import errors

    rest = server.rest()
    server.throttle = [(429, "0"), (503, "0")]
    before = len(server.requests)
    assert b"APIVersions" in rest.request("GET", "/api")
    assert len(server.requests) - before == 3
    rest.max_retries = 2
    server.throttle = [(429, "0")] * 3
    with pytest.raises(errors.StatusError) as info:
        rest.request("POST", "/api")
    assert info.value.code == 429
    assert not server.throttle  # one try and two retries


def test_a_5xx_without_retry_after_is_not_retried(server: MiniServer) -> None:
    from samplecontroller.apimachinery import errors

    rest = server.rest()
    server.throttle = [(500, "not-a-number")]
    before = len(server.requests)
    with pytest.raises(errors.StatusError):
        rest.request("GET", "/api")
    assert len(server.requests) - before == 1


def test_client_side_throttling_is_opt_in(server: MiniServer, tmp_path: Path) -> None:
    path = write_kubeconfig(tmp_path, server.url, {"token": "t"})
    assert load_rest_client(kubeconfig=str(path)).throttle is None
    throttled = load_rest_client(kubeconfig=str(path), qps=20, burst=30)
    assert throttled.throttle is not None and (throttled.throttle.qps, throttled.throttle.burst) == (20, 30)


def test_main_rejects_a_negative_qps_in_one_line() -> None:
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, str(root / "main.py"), "--kube-api-qps", "-1"], capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == "main.py: error: argument --kube-api-qps: must be 0 or more, got -1 (see --help)"


def test_main_port_needs_local_and_a_valid_number() -> None:
    root = Path(__file__).resolve().parents[2]
    for args, message in ((["--port", "80"], "--port applies only with --local"),
                          (["--local", "--port", "70000"], "argument --port: must be between 0 and 65535, got 70000")):
        proc = subprocess.run([sys.executable, str(root / "main.py"), *args], capture_output=True, text=True,
                              timeout=30)
        assert proc.returncode == 1 and message in proc.stderr and "Traceback" not in proc.stderr


def test_main_and_codegen_without_the_venv_are_one_line(tmp_path: Path) -> None:
    """``python -S`` hides the installed packages, as a Python without .venv does: one line naming
    the missing package and the make target, never a ModuleNotFoundError traceback."""
    root = Path(__file__).resolve().parents[2]
    for script, args, target in (("main.py", ["--local", "--port", "0", "--local-dir", str(tmp_path)], "make run"),
                                 ("hack/update_codegen.py", ["--verify"], "make codegen")):
        proc = subprocess.run([sys.executable, "-S", str(root / script), *args], capture_output=True, text=True,
                              timeout=30, cwd=tmp_path)
        assert proc.returncode == 1, proc.stderr
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert "is not installed" in proc.stderr and target in proc.stderr

