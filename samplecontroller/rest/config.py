"""Client configuration of our own: kubeconfig files and the in-cluster service account.

Ports what client-go's clientcmd and rest.InClusterConfig give a controller, so the controller
never imports the official ``kubernetes`` package (about 24 MB of a process's memory):

- kubeconfig: ``clusters``/``contexts``/``users``, ``current-context`` or an explicit context;
  cluster ``server``, ``certificate-authority(-data)``, ``insecure-skip-tls-verify``,
  ``tls-server-name``, ``proxy-url``; user ``client-certificate(-data)``/``client-key(-data)``,
  ``token``, ``tokenFile`` (its contents win over ``token`` and are read again on every refresh),
  ``username``/``password``, ``exec`` credential plugins (``client.authentication.k8s.io/v1``
  and ``v1beta1`` ExecCredential; run once at load, again once the credential's
  ``expirationTimestamp`` has passed or the server answers 401; client certificates from a
  plugin are read at load). Relative file paths are relative to the kubeconfig's directory.
  A user with an ``auth-provider`` is loaded by the official package (imported only then).
- in-cluster: ``https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT``, the service
  account's CA and its token file (read again on every refresh, as client-go does each minute).
- proxies: ``proxy-url``, else ``$HTTPS_PROXY``/``$HTTP_PROXY``/``$ALL_PROXY`` unless
  ``$NO_PROXY`` names the host, resolved once at load.

Every failure is a ``ConfigError`` with a one-line message.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import ipaddress
import json
import os
import shlex
import signal
import ssl
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from urllib.request import getproxies

import urllib3
import yaml

__all__ = ["Config", "ConfigError", "ExecPlugin", "SERVICE_ACCOUNT_DIR", "server_url", "load_in_cluster",
           "load_kubeconfig"]

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
"""Where a pod's service account token and CA are mounted."""
EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
EXEC_TIMEOUT = 60.0
"""Seconds an exec credential plugin may run by default (client-go has no bound; a plugin that
never exits would hang the process): past it the plugin is killed and its command named in the
``ConfigError``. ``load_kubeconfig(..., exec_timeout=)`` / main.py's ``--exec-plugin-timeout``
change it."""
SERVER_SCHEMES = ("https", "http")


class ConfigError(Exception):
    """The client configuration could not be loaded."""


@dataclass
class ExecPlugin:
    """A kubeconfig ``exec`` credential plugin; ``run()`` returns its ExecCredential status."""

    command: str
    api_version: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cluster: dict[str, Any] | None = None
    """The cluster info passed in KUBERNETES_EXEC_INFO (``provideClusterInfo: true``)."""
    cwd: str | None = None
    timeout: float = EXEC_TIMEOUT
    """Seconds the plugin may run before it is killed (``ConfigError``)."""

    def run(self) -> dict[str, Any]:
        """Run the plugin and check its output; raise ``ConfigError`` naming the problem."""
        spec: dict[str, Any] = {"interactive": False}
        if self.cluster is not None:
            spec["cluster"] = self.cluster
        info = {"apiVersion": self.api_version, "kind": "ExecCredential", "spec": spec}
        env = {**os.environ, **self.env, "KUBERNETES_EXEC_INFO": json.dumps(info)}
        try:
            proc = self._run_bounded(env)
        except subprocess.TimeoutExpired:
            raise ConfigError(f"exec plugin {shlex.join([self.command, *self.args])} did not exit within "
                              f"{self.timeout:g}s (killed; main.py's --exec-plugin-timeout sets the bound)") from None
        except (OSError, subprocess.SubprocessError) as err:
            raise ConfigError(f"exec plugin {self.command}: {one_line(err)}") from None
        if proc.returncode != 0:
            detail = f": {one_line(proc.stderr)}" if proc.stderr.strip() else ""
            raise ConfigError(f"exec plugin {self.command} exited with status {proc.returncode}{detail}")
        try:
            data = json.loads(proc.stdout)
        except ValueError as err:
            raise ConfigError(f"exec plugin {self.command}: output is not JSON: {one_line(err)}") from None
        if not isinstance(data, dict) or data.get("kind") != "ExecCredential":
            raise ConfigError(f"exec plugin {self.command}: output is not an ExecCredential")
        if data.get("apiVersion") != self.api_version:
            raise ConfigError(f"exec plugin {self.command}: apiVersion {data.get('apiVersion')!r} does not match "
                              f"{self.api_version!r}")
        status = data.get("status")
        if not isinstance(status, dict) or not (status.get("token") or status.get("clientCertificateData")):
            raise ConfigError(f"exec plugin {self.command}: the ExecCredential has no status.token or "
                              "status.clientCertificateData")
        if status.get("clientCertificateData") and not status.get("clientKeyData"):
            raise ConfigError(f"exec plugin {self.command}: status.clientCertificateData without clientKeyData")
        return status

    def _run_bounded(self, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        """Run the plugin in its own process group; past ``timeout`` the whole group is killed
        (a shell script's children too, so nothing keeps running or holds the pipes) and
        ``TimeoutExpired`` is raised."""
        with subprocess.Popen([self.command, *self.args], env=env, cwd=self.cwd, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True) as proc:
            try:
                out, err = proc.communicate(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
                raise
            return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@dataclass
class Config:
    """Where the API server is and how to authenticate to it (client-go's rest.Config).

    ``credentials()`` gives the Authorization header; ``pool_manager()`` the urllib3 pool with
    this configuration's TLS settings and proxy. Thread-safety: callers serialize
    ``credentials()`` (``RESTClient`` does).
    """

    host: str
    ca_file: str | None = None
    ca_data: bytes | None = None
    cert_file: str | None = None
    key_file: str | None = None
    cert_data: bytes | None = None
    key_data: bytes | None = None
    insecure: bool = False
    tls_server_name: str | None = None
    proxy: str | None = None
    token: str | None = None
    token_file: str | None = None
    username: str | None = None
    password: str | None = None
    exec_plugin: ExecPlugin | None = None
    _exec_token: str | None = field(default=None, repr=False)
    _exec_expiry: float | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.host = self.host.rstrip("/")

    @property
    def has_tls_settings(self) -> bool:
        """client-go's IsConfigTransportTLS: a CA, a client certificate, insecure or a server name."""
        return bool(self.ca_file or self.ca_data or self.cert_file or self.cert_data or self.insecure
                    or self.tls_server_name)

    @property
    def refreshable(self) -> bool:
        """Whether ``credentials(refresh=True)`` may give other credentials than before."""
        return bool(self.token_file or (self.exec_plugin and self._exec_token is not None))

    def credentials(self, refresh: bool = False) -> tuple[dict[str, str], float | None]:
        """The Authorization header (or none) and when it expires (``time.time()``; None: no
        known expiry). Reads the token file again; runs the exec plugin if it has no token yet,
        the token has expired or ``refresh``. Raises ``ConfigError``."""
        if self.token_file:
            return {"Authorization": f"Bearer {_read_token(self.token_file)}"}, None
        if self.token:
            return {"Authorization": f"Bearer {self.token}"}, None
        if self.exec_plugin is not None and self._exec_token is not None:
            expired = self._exec_expiry is not None and time.time() >= self._exec_expiry
            if refresh or expired:
                self.run_exec()
            return {"Authorization": f"Bearer {self._exec_token}"}, self._exec_expiry
        if self.username is not None and self.password is not None:
            return dict(urllib3.util.make_headers(basic_auth=f"{self.username}:{self.password}")), None
        return {}, None

    def run_exec(self) -> None:
        """Run the exec plugin: keep its token and expiry; take its client certificate if it
        gives one (used by pools made after this call). Raises ``ConfigError``."""
        assert self.exec_plugin is not None
        status = self.exec_plugin.run()
        self._exec_token = str(status["token"]) if status.get("token") else None
        expiry = status.get("expirationTimestamp")
        self._exec_expiry = _parse_time(str(expiry)) if expiry else None
        if status.get("clientCertificateData"):
            self.cert_data = str(status["clientCertificateData"]).encode()
            self.key_data = str(status["clientKeyData"]).encode()
            self.cert_file = self.key_file = None

    def ssl_context(self) -> ssl.SSLContext:
        """The TLS settings: the CA (else the system's), the client certificate, verification."""
        ctx = urllib3.util.ssl_.create_urllib3_context(cert_reqs=ssl.CERT_NONE if self.insecure else ssl.CERT_REQUIRED)
        try:
            if not self.insecure:
                if self.ca_file or self.ca_data:
                    ctx.load_verify_locations(cafile=self.ca_file,
                                              cadata=self.ca_data.decode() if self.ca_data else None)
                else:
                    ctx.load_default_certs()
            if self.cert_file or self.cert_data:
                _load_client_cert(ctx, self.cert_file, self.key_file, self.cert_data, self.key_data)
        except (OSError, ssl.SSLError, ValueError) as err:
            raise ConfigError(f"invalid TLS settings for {self.host}: {one_line(err)}") from None
        return ctx

    def pool_manager(self, maxsize: int) -> urllib3.PoolManager:
        """A pool (through the proxy, if any) keeping ``maxsize`` connections per host."""
        kw: dict[str, Any] = {"maxsize": maxsize}
        if self.host.startswith("https:"):
            kw["ssl_context"] = self.ssl_context()
            kw["cert_reqs"] = ssl.CERT_NONE if self.insecure else ssl.CERT_REQUIRED
            if self.insecure:
                kw["assert_hostname"] = False
            elif self.tls_server_name:
                kw["server_hostname"] = self.tls_server_name
        if not self.proxy:
            return urllib3.PoolManager(**kw)
        if urlsplit(self.proxy).scheme.lower().startswith("socks"):
            try:
                from urllib3.contrib.socks import SOCKSProxyManager
            except ImportError:
                raise ConfigError(f"proxy {self.proxy} needs the PySocks package") from None
            return SOCKSProxyManager(self.proxy, **kw)
        return urllib3.ProxyManager(self.proxy, **kw)


# -- loading -----------------------------------------------------------------------------------


def server_url(host: str, tls: bool) -> str:
    """``host`` as the URL requests go to, as client-go's DefaultServerURL makes it: a host or
    host:port without a scheme gets https:// when the configuration has TLS settings, else
    http://. ``ConfigError`` (one line naming the value) for what is no http(s) URL, instead of
    an urllib3 error from deep in the first request."""
    if host.lower().rstrip(":/") in SERVER_SCHEMES:  # "https://" (its slashes stripped by Config)
        raise ConfigError(f"the API server URL {host!r} has no host")
    url = host if "://" in host else ("https://" if tls else "http://") + host
    try:
        parsed = urllib3.util.parse_url(url)
    except urllib3.exceptions.LocationParseError as err:
        raise ConfigError(f"the API server URL {host!r} is not a URL: {one_line(err)}") from None
    if (parsed.scheme or "").lower() not in SERVER_SCHEMES:
        raise ConfigError(f"the API server URL {host!r} has the unsupported scheme {parsed.scheme!r} "
                          "(use https:// or http://)")
    if not parsed.host:
        raise ConfigError(f"the API server URL {host!r} has no host")
    return url


def load_kubeconfig(path: str, context: str | None = None, exec_timeout: float = EXEC_TIMEOUT) -> Config | None:
    """The ``Config`` of ``context`` (default: current-context) in the kubeconfig at ``path``;
    None if its user has an ``auth-provider`` (load it with the official package). Runs an
    exec plugin once (each run bounded by ``exec_timeout`` seconds). Raises ``ConfigError``
    (message without the path)."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise ConfigError(one_line(err)) from None
    if not isinstance(doc, dict):
        raise ConfigError("not a kubeconfig (expected a mapping with clusters, contexts and users)")
    base = os.path.dirname(os.path.abspath(path))
    name = context or doc.get("current-context")
    if not name:
        raise ConfigError("current-context is not set (pass a context)")
    ctx = _named(doc, "contexts", "context", str(name), required=True)
    cluster = _named(doc, "clusters", "cluster", str(ctx.get("cluster") or ""), required=True)
    user = _named(doc, "users", "user", str(ctx.get("user") or ""), required=False)
    if user.get("auth-provider"):
        return None
    server = cluster.get("server")
    if not server:
        raise ConfigError(f"cluster {ctx.get('cluster')!r} has no server")
    cfg = Config(host=str(server), insecure=bool(cluster.get("insecure-skip-tls-verify")),
                 tls_server_name=_opt(cluster.get("tls-server-name")), proxy=_opt(cluster.get("proxy-url")))
    cfg.ca_file, cfg.ca_data = _file_or_data(cluster, "certificate-authority", base)
    cfg.cert_file, cfg.cert_data = _file_or_data(user, "client-certificate", base)
    cfg.key_file, cfg.key_data = _file_or_data(user, "client-key", base)
    if bool(cfg.cert_file or cfg.cert_data) != bool(cfg.key_file or cfg.key_data):
        raise ConfigError("client-certificate and client-key must be given together")
    _load_auth(cfg, user, base, cluster, exec_timeout)
    if cfg.proxy is None:
        cfg.proxy = env_proxy(cfg.host)
    return cfg


def load_in_cluster() -> Config:
    """The service account configuration of a pod (client-go's rest.InClusterConfig)."""
    host, port = os.environ.get("KUBERNETES_SERVICE_HOST", ""), os.environ.get("KUBERNETES_SERVICE_PORT", "")
    if not host or not port:
        raise ConfigError("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set")
    token_file = os.path.join(SERVICE_ACCOUNT_DIR, "token")
    ca_file = os.path.join(SERVICE_ACCOUNT_DIR, "ca.crt")
    _read_token(token_file)
    try:
        if not Path(ca_file).read_bytes().strip():
            raise ConfigError(f"the service account CA {ca_file} is empty")
    except OSError as err:
        raise ConfigError(f"cannot read the service account CA: {one_line(err)}") from None
    if ":" in host:
        host = f"[{host}]"  # an IPv6 address
    cfg = Config(host=f"https://{host}:{port}", ca_file=ca_file, token_file=token_file)
    cfg.proxy = env_proxy(cfg.host)
    return cfg


def _load_auth(cfg: Config, user: Mapping[str, Any], base: str, cluster: Mapping[str, Any],
               exec_timeout: float = EXEC_TIMEOUT) -> None:
    """The user's credentials, in the official package's order: token(File), exec, basic."""
    if user.get("tokenFile"):
        cfg.token_file = os.path.join(base, str(user["tokenFile"]))
        _read_token(cfg.token_file)
    elif user.get("token"):
        cfg.token = str(user["token"])
    elif user.get("exec"):
        cfg.exec_plugin = _exec_plugin(user["exec"], base, cluster, exec_timeout)
        cfg.run_exec()
    elif user.get("username") is not None and user.get("password") is not None:
        cfg.username, cfg.password = str(user["username"]), str(user["password"])


def _exec_plugin(spec: Any, base: str, cluster: Mapping[str, Any], timeout: float) -> ExecPlugin:
    if not isinstance(spec, dict) or not spec.get("command"):
        raise ConfigError("exec: command is required")
    api_version = str(spec.get("apiVersion") or "")
    if api_version not in EXEC_API_VERSIONS:
        raise ConfigError(f"exec: apiVersion {api_version!r} is not supported (use {' or '.join(EXEC_API_VERSIONS)})")
    command = str(spec["command"])
    if os.sep in command and not os.path.isabs(command):
        command = os.path.join(base, command)  # like client-go: a relative path is the kubeconfig's
    env = {str(e.get("name")): str(e.get("value", "")) for e in spec.get("env") or () if isinstance(e, dict)}
    info = None
    if spec.get("provideClusterInfo"):
        info = {k: v for k, v in cluster.items() if k != "extensions"}
        for ext in cluster.get("extensions") or ():
            if isinstance(ext, dict) and ext.get("name") == "client.authentication.k8s.io/exec":
                info["config"] = ext.get("extension")
    return ExecPlugin(command=command, api_version=api_version, args=[str(a) for a in spec.get("args") or ()],
                      env=env, cluster=info, cwd=base, timeout=timeout)


def _named(doc: Mapping[str, Any], section: str, inner: str, name: str, required: bool) -> dict[str, Any]:
    """The ``inner`` mapping of the entry called ``name`` in ``doc[section]``."""
    for item in doc.get(section) or ():
        if isinstance(item, dict) and item.get("name") == name:
            value = item.get(inner) or {}
            if not isinstance(value, dict):
                raise ConfigError(f"{section} entry {name!r} has no {inner} mapping")
            return value
    if required:
        raise ConfigError(f"{inner} {name!r} not found in {section}")
    return {}  # like the official package: a user that is not there means no credentials


def _file_or_data(section: Mapping[str, Any], key: str, base: str) -> tuple[str | None, bytes | None]:
    """``key-data`` (base64) wins over the file ``key`` (relative to ``base``)."""
    data = section.get(f"{key}-data")
    if data:
        try:
            return None, base64.b64decode(str(data), validate=True)
        except ValueError:
            raise ConfigError(f"{key}-data is not valid base64") from None
    path = section.get(key)
    return (os.path.join(base, str(path)) if path else None), None


def _load_client_cert(ctx: ssl.SSLContext, cert_file: str | None, key_file: str | None, cert_data: bytes | None,
                      key_data: bytes | None) -> None:
    """Load the client certificate; PEM data goes through files in a private temporary
    directory that are removed at once (ssl reads files only)."""
    if cert_data is None and key_data is None:
        ctx.load_cert_chain(str(cert_file), str(key_file))
        return
    with tempfile.TemporaryDirectory(prefix="samplecontroller-") as tmp:
        paths = []
        for name, data, path in (("tls.crt", cert_data, cert_file), ("tls.key", key_data, key_file)):
            if data is None:
                paths.append(str(path))
                continue
            target = os.path.join(tmp, name)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            paths.append(target)
        ctx.load_cert_chain(paths[0], paths[1])


def _read_token(path: str) -> str:
    try:
        token = Path(path).read_text().strip()
    except OSError as err:
        raise ConfigError(f"cannot read the token file: {one_line(err)}") from None
    if not token:
        raise ConfigError(f"the token file {path} is empty")
    return token


def _parse_time(value: str) -> float:
    """An RFC 3339 time as ``time.time()`` seconds."""
    try:
        parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ConfigError(f"exec: expirationTimestamp {value!r} is not an RFC 3339 time") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.UTC)
    return parsed.timestamp()


def _opt(value: Any) -> str | None:
    return str(value) if value else None


def env_proxy(host: str) -> str | None:
    """The proxy the environment names for ``host`` (None if none or ``$NO_PROXY`` matches)."""
    proxies = getproxies()
    proxy = proxies.get(urlsplit(host).scheme) or proxies.get("all")
    if not proxy or _bypass(host, proxies.get("no", "")):
        return None
    return proxy


def _bypass(url: str, no_proxy: str) -> bool:
    """Whether ``url``'s host matches the comma-separated ``no_proxy`` rules (names, domain
    suffixes, host:port, IP networks, ``*``)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if not host:
        return True
    host_port = parts.netloc.lower().rpartition("@")[2]
    try:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    for rule in (r.strip().lower() for r in no_proxy.split(",")):
        if not rule:
            continue
        if rule == "*":
            return True
        if ip is not None:
            try:
                if ip in ipaddress.ip_network(rule, strict=False):
                    return True
            except ValueError:
                pass
        rule = rule.lstrip(".")
        if host in (rule,) or host.endswith("." + rule) or host_port == rule or host_port.endswith("." + rule):
            return True
    return False


def one_line(err: object) -> str:
    """``err`` as one line of at most 300 characters."""
    text = " ".join(str(err).split())
    return text[:300]
