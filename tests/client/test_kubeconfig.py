"""Our own kubeconfig and in-cluster loading (samplecontroller.rest.config), against real servers:
the embedded API server (HTTPS, its CA, a bearer token), a TLS server that requires client
certificates, and the recording loopback server of conftest (headers)."""

from __future__ import annotations

import base64
import datetime
import http.client
import http.server
import json
import ssl
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import urllib3
import yaml
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID

from samplecontroller import tls
from samplecontroller.apimachinery import errors
from samplecontroller.apiserver.server import LocalAPIServer
from samplecontroller.rest import ConfigError, RESTClient, TransportError, config, load_rest_client

from .conftest import MiniServer

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalAPIServer]:
    with LocalAPIServer(kubeconfig_path=tmp_path_factory.mktemp("api") / "kubeconfig") as s:
        yield s


def kubeconfig(tmp_path: Path, cluster: dict[str, Any], user: dict[str, Any], name: str = "config") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "ctx",
        "clusters": [{"name": "c", "cluster": cluster}], "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}]}))
    return path


def get_ns(rest: RESTClient) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(rest.request("GET", "/api/v1/namespaces/default"))
    return out


# -- TLS and the server's CA -------------------------------------------------------------------


def test_certificate_authority_file_and_data(api: LocalAPIServer, tmp_path: Path) -> None:
    assert api.ca_path is not None
    ca = api.ca_path.read_bytes()
    (tmp_path / "certs").mkdir()
    (tmp_path / "certs" / "ca.crt").write_bytes(ca)
    relative = kubeconfig(tmp_path, {"server": api.url, "certificate-authority": "certs/ca.crt"}, {"token": api.token})
    assert get_ns(RESTClient.from_kubeconfig(relative))["metadata"]["name"] == "default"
    inline = kubeconfig(tmp_path, {"server": api.url, "certificate-authority-data": base64.b64encode(ca).decode()},
                        {"token": api.token}, "inline")
    assert get_ns(RESTClient.from_kubeconfig(inline))["metadata"]["name"] == "default"
    unknown_ca = kubeconfig(tmp_path, {"server": api.url}, {"token": api.token}, "system-cas")
    with pytest.raises(TransportError, match="CERTIFICATE_VERIFY_FAILED"):
        get_ns(RESTClient.from_kubeconfig(unknown_ca))


def test_insecure_skip_tls_verify(api: LocalAPIServer, tmp_path: Path) -> None:
    path = kubeconfig(tmp_path, {"server": api.url, "insecure-skip-tls-verify": True}, {"token": api.token})
    with pytest.warns(urllib3.exceptions.InsecureRequestWarning):
        assert get_ns(RESTClient.from_kubeconfig(path))["metadata"]["name"] == "default"


def test_tls_server_name_is_the_name_verified(api: LocalAPIServer, tmp_path: Path) -> None:
    assert api.ca_path is not None
    cluster = {"server": api.url, "certificate-authority": str(api.ca_path)}
    ok = kubeconfig(tmp_path, {**cluster, "tls-server-name": "localhost"}, {"token": api.token}, "ok")
    assert get_ns(RESTClient.from_kubeconfig(ok))["metadata"]["name"] == "default"
    wrong = kubeconfig(tmp_path, {**cluster, "tls-server-name": "not-the-server.example"}, {"token": api.token},
                       "wrong")
    with pytest.raises(TransportError, match=r"not-the-server\.example"):
        get_ns(RESTClient.from_kubeconfig(wrong))


def test_a_bad_certificate_authority_is_a_one_line_config_error(api: LocalAPIServer, tmp_path: Path) -> None:
    path = kubeconfig(tmp_path, {"server": api.url, "certificate-authority-data": base64.b64encode(b"junk").decode()},
                      {"token": api.token})
    with pytest.raises(ConfigError, match="invalid TLS settings") as info:
        RESTClient.from_kubeconfig(path)
    assert "\n" not in str(info.value)


# -- client certificates -------------------------------------------------------------------------


def _pem(cert: tuple[x509.Certificate, ec.EllipticCurvePrivateKey]) -> tuple[bytes, bytes]:
    return tls.cert_pem(cert[0]), tls.key_pem(cert[1])


class MutualTLSServer:
    """HTTPS on loopback that requires a client certificate from its CA; answers with the
    client certificate's common name."""

    def __init__(self, tmp: Path) -> None:
        now = datetime.datetime.now(datetime.UTC)
        validity = (now - datetime.timedelta(hours=1), now + datetime.timedelta(days=1))
        ca = tls.certificate_authority("test-ca", validity)
        self.ca_pem = tls.cert_pem(ca[0])
        server_pem = _pem(tls.leaf_certificate("localhost", ca, validity, ExtendedKeyUsageOID.SERVER_AUTH,
                                               ("localhost",)))
        self.client_pem = _pem(tls.leaf_certificate("alice", ca, validity, ExtendedKeyUsageOID.CLIENT_AUTH))
        (tmp / "server.crt").write_bytes(server_pem[0])
        (tmp / "server.key").write_bytes(server_pem[1])
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(tmp / "server.crt", tmp / "server.key")
        ctx.load_verify_locations(cadata=self.ca_pem.decode())
        ctx.verify_mode = ssl.CERT_REQUIRED
        # client certificates are verified as strictly as Python 3.13 clients verify servers
        ctx.verify_flags |= ssl.VERIFY_X509_STRICT

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                peer = self.connection.getpeercert()  # type: ignore[attr-defined]
                cn = dict(x[0] for x in peer["subject"])["commonName"]
                body = json.dumps({"user": cn}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.url = f"https://localhost:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def mtls(tmp_path: Path) -> Iterator[MutualTLSServer]:
    server = MutualTLSServer(tmp_path)
    yield server
    server.close()


def test_client_certificate_files_and_data(mtls: MutualTLSServer, tmp_path: Path) -> None:
    cluster = {"server": mtls.url, "certificate-authority-data": base64.b64encode(mtls.ca_pem).decode()}
    (tmp_path / "client.crt").write_bytes(mtls.client_pem[0])
    (tmp_path / "client.key").write_bytes(mtls.client_pem[1])
    files = kubeconfig(tmp_path, cluster, {"client-certificate": "client.crt", "client-key": "client.key"})
    assert json.loads(RESTClient.from_kubeconfig(files).request("GET", "/whoami")) == {"user": "alice"}
    data = kubeconfig(tmp_path, cluster, {"client-certificate-data": base64.b64encode(mtls.client_pem[0]).decode(),
                                          "client-key-data": base64.b64encode(mtls.client_pem[1]).decode()}, "data")
    assert json.loads(RESTClient.from_kubeconfig(data).request("GET", "/whoami")) == {"user": "alice"}
    anonymous = kubeconfig(tmp_path, cluster, {}, "anonymous")
    with pytest.raises(TransportError):
        RESTClient.from_kubeconfig(anonymous).request("GET", "/whoami")


def test_fixture_certificates_pass_strict_verification(mtls: MutualTLSServer, tmp_path: Path) -> None:
    """The server's certificate under a strict client context (Python 3.13's default), with the
    client certificate verified strictly by the server, on every Python."""
    (tmp_path / "client.crt").write_bytes(mtls.client_pem[0])
    (tmp_path / "client.key").write_bytes(mtls.client_pem[1])
    ctx = ssl.create_default_context(cadata=mtls.ca_pem.decode())
    ctx.verify_flags |= ssl.VERIFY_X509_STRICT
    ctx.load_cert_chain(tmp_path / "client.crt", tmp_path / "client.key")
    host, port = mtls.url.removeprefix("https://").rsplit(":", 1)
    conn = http.client.HTTPSConnection(host, int(port), context=ctx, timeout=10)
    try:
        conn.request("GET", "/whoami")
        assert json.loads(conn.getresponse().read()) == {"user": "alice"}
    finally:
        conn.close()


def test_exec_plugin_client_certificate(mtls: MutualTLSServer, tmp_path: Path) -> None:
    cred = {"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
            "status": {"clientCertificateData": mtls.client_pem[0].decode(),
                       "clientKeyData": mtls.client_pem[1].decode()}}
    script = tmp_path / "plugin.py"
    script.write_text(f"print({json.dumps(json.dumps(cred))})\n")
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                     "args": [str(script)], "interactiveMode": "Never"}}
    cluster = {"server": mtls.url, "certificate-authority-data": base64.b64encode(mtls.ca_pem).decode()}
    rest = RESTClient.from_kubeconfig(kubeconfig(tmp_path, cluster, user))
    assert json.loads(rest.request("GET", "/whoami")) == {"user": "alice"}


# -- credentials -----------------------------------------------------------------------------------


def test_token_file_is_read_again_after_a_401(api: LocalAPIServer, tmp_path: Path) -> None:
    assert api.app is not None and api.ca_path is not None
    token = tmp_path / "token"
    token.write_text(api.token + "\n")
    path = kubeconfig(tmp_path, {"server": api.url, "certificate-authority": str(api.ca_path)}, {"tokenFile": "token",
                                                                                               "token": "ignored"})
    rest = RESTClient.from_kubeconfig(path)
    get_ns(rest)
    original = api.app.token
    try:
        api.app.token = "rotated-token"
        token.write_text("rotated-token")
        assert get_ns(rest)["metadata"]["name"] == "default"  # 401, the file read again, retried once
    finally:
        api.app.token = original


def test_basic_auth(server: MiniServer, tmp_path: Path) -> None:
    path = kubeconfig(tmp_path, {"server": server.url}, {"username": "admin", "password": "s3cret"})
    RESTClient.from_kubeconfig(path).request("GET", "/api")
    expected = "Basic " + base64.b64encode(b"admin:s3cret").decode()
    assert server.requests[-1].headers["Authorization"] == expected


def _exec_script(tmp_path: Path, api_version: str, expiry: str | None) -> Path:
    """A plugin that hands out token-1, token-2, ... (one per run) and records its input."""
    script = tmp_path / "plugin.py"
    script.write_text(textwrap.dedent(f"""\
        import json, os, pathlib
        runs = pathlib.Path({str(tmp_path / "runs")!r})
        n = len(runs.read_text().splitlines()) + 1 if runs.exists() else 1
        with runs.open("a") as f:
            f.write(os.environ["KUBERNETES_EXEC_INFO"] + "\\n")
        status = {{"token": f"token-{{n}}"}}
        if {expiry!r}:
            status["expirationTimestamp"] = {expiry!r}
        print(json.dumps({{"apiVersion": {api_version!r}, "kind": "ExecCredential", "status": status}}))
        """))
    return script


@pytest.mark.parametrize("api_version", ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"])
def test_exec_plugin_runs_again_once_its_credential_expires(server: MiniServer, tmp_path: Path,
                                                            api_version: str) -> None:
    script = _exec_script(tmp_path, api_version, "2000-01-01T00:00:00Z")  # always expired
    user = {"exec": {"apiVersion": api_version, "command": sys.executable, "args": [str(script)],
                     "env": [{"name": "EXTRA", "value": "1"}], "provideClusterInfo": True}}
    rest = RESTClient.from_kubeconfig(kubeconfig(tmp_path, {"server": server.url}, user))
    rest.request("GET", "/api")
    rest.request("GET", "/api")
    assert [r.headers["Authorization"] for r in server.requests[-2:]] == ["Bearer token-2", "Bearer token-3"]
    info = json.loads((tmp_path / "runs").read_text().splitlines()[0])
    assert info["apiVersion"] == api_version and info["kind"] == "ExecCredential"
    assert info["spec"]["cluster"]["server"] == server.url and info["spec"]["interactive"] is False


def test_exec_plugin_credential_is_reused_until_it_expires_or_a_401(server: MiniServer, tmp_path: Path) -> None:
    script = _exec_script(tmp_path, "client.authentication.k8s.io/v1", "2999-01-01T00:00:00Z")
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                     "args": [str(script)]}}
    rest = RESTClient.from_kubeconfig(kubeconfig(tmp_path, {"server": server.url}, user))
    for _ in range(3):
        rest.request("GET", "/api")
    assert {r.headers["Authorization"] for r in server.requests[-3:]} == {"Bearer token-1"}
    server.force_error = (401, b'{"kind":"Status","code":401,"reason":"Unauthorized"}')
    with pytest.raises(errors.UnauthorizedError):
        rest.request("GET", "/apis/example.com/v1/namespaces/default/widgets")
    server.force_error = None
    assert [r.headers["Authorization"] for r in server.requests[-2:]] == ["Bearer token-1", "Bearer token-2"]


def test_exec_plugin_failures_are_one_line_config_errors(tmp_path: Path) -> None:
    failing = tmp_path / "fail.py"
    failing.write_text("import sys\nprint('no credentials here', file=sys.stderr)\nsys.exit(3)\n")
    wrong_version = tmp_path / "v.py"
    wrong_version.write_text('print(\'{"apiVersion": "client.authentication.k8s.io/v1beta1", '
                             '"kind": "ExecCredential", "status": {"token": "t"}}\')\n')
    for script, message in ((failing, "exited with status 3: no credentials here"),
                            (wrong_version, "does not match")):
        user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                         "args": [str(script)]}}
        with pytest.raises(ConfigError, match=message) as info:
            RESTClient.from_kubeconfig(kubeconfig(tmp_path, {"server": "http://127.0.0.1:1"}, user))
        assert "\n" not in str(info.value)


def test_auth_provider_users_are_loaded_by_the_official_package(server: MiniServer, tmp_path: Path) -> None:
    payload = base64.urlsafe_b64encode(json.dumps({"sub": "me"}).encode()).decode().rstrip("=")
    id_token = f"eyJhbGciOiJub25lIn0.{payload}.sig"
    user = {"auth-provider": {"name": "oidc", "config": {"id-token": id_token, "idp-issuer-url": "https://x"}}}
    RESTClient.from_kubeconfig(kubeconfig(tmp_path, {"server": server.url}, user)).request("GET", "/api")
    assert server.requests[-1].headers["Authorization"] == f"Bearer {id_token}"


# -- proxies ---------------------------------------------------------------------------------------


def test_proxy_url_carries_the_requests(server: MiniServer, tmp_path: Path) -> None:
    """The loopback server plays the proxy: a request for an unresolvable server reaches it."""
    path = kubeconfig(tmp_path, {"server": "http://api.invalid:6443", "proxy-url": server.url}, {"token": "t"})
    RESTClient.from_kubeconfig(path).request("GET", "/api")
    assert server.requests[-1].path == "/api" and server.requests[-1].headers["Host"] == "api.invalid:6443"


def test_environment_proxies_and_no_proxy(server: MiniServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("http_proxy", server.url)
    path = kubeconfig(tmp_path, {"server": "http://api.invalid:6443"}, {"token": "t"})
    RESTClient.from_kubeconfig(path).request("GET", "/api")
    assert server.requests[-1].headers["Host"] == "api.invalid:6443"
    monkeypatch.setenv("no_proxy", "example.com,.invalid")
    assert RESTClient.from_kubeconfig(path).configuration.proxy is None  # type: ignore[union-attr]
    assert config.env_proxy("http://10.1.2.3:443") == server.url
    monkeypatch.setenv("no_proxy", "10.0.0.0/8")
    assert config.env_proxy("http://10.1.2.3:443") is None


# -- contexts and errors ---------------------------------------------------------------------------


def test_current_context_and_explicit_context(server: MiniServer, tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump({
        "current-context": "a",
        "clusters": [{"name": "real", "cluster": {"server": server.url}},
                     {"name": "other", "cluster": {"server": "http://127.0.0.1:1"}}],
        "users": [{"name": "ua", "user": {"token": "ta"}}, {"name": "ub", "user": {"token": "tb"}}],
        "contexts": [{"name": "a", "context": {"cluster": "real", "user": "ua"}},
                     {"name": "b", "context": {"cluster": "real", "user": "ub"}},
                     {"name": "c", "context": {"cluster": "missing", "user": "ub"}}]}))
    RESTClient.from_kubeconfig(path).request("GET", "/api")
    assert server.requests[-1].headers["Authorization"] == "Bearer ta"
    load_rest_client(kubeconfig=str(path), context="b").request("GET", "/api")
    assert server.requests[-1].headers["Authorization"] == "Bearer tb"
    with pytest.raises(ConfigError, match="cluster 'missing' not found"):
        RESTClient.from_kubeconfig(path, context="c")
    path.write_text(yaml.safe_dump({"clusters": [], "contexts": [], "users": []}))
    with pytest.raises(ConfigError, match="current-context is not set"):
        RESTClient.from_kubeconfig(path)


# -- in-cluster --------------------------------------------------------------------------------------


def test_in_cluster_service_account(api: LocalAPIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert api.ca_path is not None and api.app is not None
    (tmp_path / "token").write_text(api.token)
    (tmp_path / "ca.crt").write_bytes(api.ca_path.read_bytes())
    monkeypatch.setattr(config, "SERVICE_ACCOUNT_DIR", str(tmp_path))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", api.url.rsplit(":", 1)[1])
    rest = load_rest_client()
    assert rest.host == api.url and get_ns(rest)["metadata"]["name"] == "default"
    original = api.app.token
    try:
        api.app.token = "projected-token-2"
        (tmp_path / "token").write_text("projected-token-2")  # the kubelet rotates the projected token
        assert get_ns(rest)["metadata"]["name"] == "default"
    finally:
        api.app.token = original
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "::1")
    assert RESTClient.in_cluster().host == f"https://[::1]:{api.url.rsplit(':', 1)[1]}"
    (tmp_path / "token").write_text("")
    with pytest.raises(ConfigError, match=r"not running in a cluster: the token file .* is empty"):
        RESTClient.in_cluster()


# -- footprint -------------------------------------------------------------------------------------


def test_the_controller_path_does_not_import_the_kubernetes_package(api: LocalAPIServer) -> None:
    """The official package costs ~24 MB; loading a kubeconfig and running requests must not
    import it (nor prometheus_client, unless /metrics is served)."""
    code = textwrap.dedent(f"""\
        import sys
        import samplecontroller.app, samplecontroller.controller, samplecontroller.probes
        from samplecontroller.rest import load_rest_client
        load_rest_client(kubeconfig={str(api.kubeconfig_path)!r}).request("GET", "/api/v1/namespaces")
        print(sorted({{m.split(".")[0] for m in sys.modules}} & {{"kubernetes", "prometheus_client", "aiohttp"}}))
        """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
    runtime = "import sys, samplecontroller.foo_reconciler, samplecontroller.runtime; print('kubernetes' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", runtime], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert (proc.returncode, proc.stdout.strip()) == (0, "False"), proc.stderr


def test_a_failing_exec_refresh_is_a_transport_error(server: MiniServer, tmp_path: Path) -> None:
    """The plugin works at load, then fails when its expired credential is renewed: the request
    fails with one line naming the plugin's error (callers retry TransportErrors)."""
    script = tmp_path / "plugin.py"
    script.write_text(textwrap.dedent(f"""\
        import json, pathlib, sys
        marker = pathlib.Path({str(tmp_path / "ran")!r})
        if marker.exists():
            print("the identity provider is down", file=sys.stderr)
            sys.exit(1)
        marker.write_text("1")
        print(json.dumps({{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                          "status": {{"token": "t", "expirationTimestamp": "2000-01-01T00:00:00Z"}}}}))
        """))
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                     "args": [str(script)]}}
    rest = RESTClient.from_kubeconfig(kubeconfig(tmp_path, {"server": server.url}, user))
    with pytest.raises(TransportError, match=r"no credentials .* the identity provider is down") as info:
        rest.request("GET", "/api")
    assert "\n" not in str(info.value)
