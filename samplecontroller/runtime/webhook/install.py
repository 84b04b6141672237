"""A project's webhooks pointed at a webhook server on this machine (envtest's WebhookInstallOptions).

A project's manifests address its webhooks as they run in a cluster: each webhook's
``clientConfig.service`` names the operator's Service, and cert-manager injects the CA. To run
them against the embedded API server (in tests, and with ``--local``), ``WebhookInstallOptions``:

- reads ``paths`` (directories of YAML files, or files): every ``MutatingWebhookConfiguration``
  and ``ValidatingWebhookConfiguration``, and every ``CustomResourceDefinition`` document with
  ``spec.conversion`` (a kustomize patch such as kubebuilder's ``config/crd/patches/webhook_in_*.yaml``);
  other documents (Services, Kustomizations, the CA injection patches) are not for a local run;
- ``read()`` only reads them; ``setup()`` reads them, picks the port (``local_serving_port``, 0: a free one) and writes a self-signed
  serving certificate into ``local_serving_cert_dir`` (a new temporary directory when empty),
  keeping its CA;
- rewrites each ``clientConfig``: ``service`` becomes ``url: https://<host>:<port><service.path>``
  and ``caBundle`` the CA (``rewrite``);
- ``patch_crds(docs)`` gives CRD documents their conversion settings (the named CRDs must be
  among them: ``InstallError`` otherwise), rewritten the same way;
- ``install(rest_client)`` server-side applies the webhook configurations.

The webhook server to start is ``Server(host=local_serving_host, port=local_serving_port,
cert_dir=local_serving_cert_dir)``; ``manager_flags()`` are the ``runtime.cmd`` flags that make a
Manager's webhook server exactly that. A file that is not YAML, or a document of those kinds
without a name or ``clientConfig``, is ``InstallError`` (one line naming the file).
"""

from __future__ import annotations

import base64
import copy
import json
import socket
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from samplecontroller.apimachinery import k8syaml
from samplecontroller.runtime.webhook.certs import write_self_signed

__all__ = ["CONFIGURATION_KINDS", "InstallError", "WebhookInstallOptions"]

CONFIGURATION_KINDS = {
    "MutatingWebhookConfiguration": "mutatingwebhookconfigurations",
    "ValidatingWebhookConfiguration": "validatingwebhookconfigurations",
}
CRD_KIND = "CustomResourceDefinition"
FIELD_MANAGER = "samplecontroller-webhook-install"


class InstallError(Exception):
    """Manifests that cannot be installed (``str()`` is one line)."""


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


def _documents(path: Path) -> list[tuple[Path, dict[str, Any]]]:
    files = sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file()) if path.is_dir() else [path]
    docs: list[tuple[Path, dict[str, Any]]] = []
    for file in files:
        try:
            loaded = list(k8syaml.load_all(file.read_bytes()))
        except (OSError, yaml.YAMLError) as err:
            raise InstallError(f"{file}: cannot read it as YAML: {str(err).splitlines()[0]}") from None
        docs.extend((file, doc) for doc in loaded if isinstance(doc, dict))
    return docs


@dataclass
class WebhookInstallOptions:
    """See the module docstring."""

    paths: Sequence[Path] = ()
    local_serving_host: str = "127.0.0.1"
    local_serving_port: int = 0
    local_serving_cert_dir: Path | None = None
    ca_pem: bytes = b""
    configurations: list[dict[str, Any]] = field(default_factory=list)
    conversions: dict[str, dict[str, Any]] = field(default_factory=dict)
    _read: bool = field(default=False, repr=False)

    def read(self) -> WebhookInstallOptions:
        """Read the manifests of ``paths`` (once); ``self``."""
        if self._read:
            return self
        for path in self.paths:
            if not Path(path).exists():
                raise InstallError(f"{path}: no such file or directory of webhook manifests")
            for file, doc in _documents(Path(path)):
                self._add(file, doc)
        self._read = True
        return self

    def setup(self) -> WebhookInstallOptions:
        """Read the manifests, pick the port, write the serving certificate; ``self``."""
        self.read()
        if not self.local_serving_port:
            self.local_serving_port = _free_port(self.local_serving_host)
        if self.local_serving_cert_dir is None:
            self.local_serving_cert_dir = Path(tempfile.mkdtemp(prefix="samplecontroller-webhook-certs-"))
        self.ca_pem = write_self_signed(self.local_serving_cert_dir, (self.local_serving_host,))
        self.configurations = [self.rewrite(doc) for doc in self.configurations]
        self.conversions = {name: self.rewrite_conversion(conv) for name, conv in self.conversions.items()}
        return self

    def _add(self, file: Path, doc: dict[str, Any]) -> None:
        kind = doc.get("kind")
        name = (doc.get("metadata") or {}).get("name") if isinstance(doc.get("metadata"), dict) else None
        if kind in CONFIGURATION_KINDS:
            if not isinstance(name, str) or not name:
                raise InstallError(f"{file}: a {kind} without metadata.name")
            self.configurations.append(doc)
        elif kind == CRD_KIND and isinstance(doc.get("spec"), dict) and "conversion" in doc["spec"]:
            if not isinstance(name, str) or not name:
                raise InstallError(f"{file}: a CustomResourceDefinition patch without metadata.name")
            self.conversions[name] = doc["spec"]["conversion"]

    @property
    def url(self) -> str:
        """The webhook server's base URL."""
        host = self.local_serving_host
        return f"https://{'[' + host + ']' if ':' in host else host}:{self.local_serving_port}"

    def client_config(self, config: Any, where: str) -> dict[str, Any]:
        """``config`` (a clientConfig) pointing at the local server: ``service`` -> ``url``, the CA."""
        if not isinstance(config, dict) or not (config.get("service") or config.get("url")):
            raise InstallError(f"{where}: clientConfig needs a service or url")
        out = {k: v for k, v in config.items() if k not in ("service", "url", "caBundle")}
        service = config.get("service")
        path = str((service or {}).get("path") or "/") if service else "/"
        out["url"] = self.url + (path if path.startswith("/") else "/" + path)
        out["caBundle"] = base64.b64encode(self.ca_pem).decode()
        return out

    def rewrite(self, configuration: dict[str, Any]) -> dict[str, Any]:
        """A webhook configuration with every webhook's clientConfig pointing at the local server."""
        out = copy.deepcopy(configuration)
        name = out["metadata"]["name"]
        out["metadata"] = {k: v for k, v in out["metadata"].items() if k in ("name", "labels", "annotations")}
        for i, hook in enumerate(out.get("webhooks") or []):
            hook["clientConfig"] = self.client_config(hook.get("clientConfig"), f"{out['kind']} {name} webhooks[{i}]")
        return out

    def rewrite_conversion(self, conversion: dict[str, Any]) -> dict[str, Any]:
        """A copy of a CRD's ``spec.conversion`` whose webhook points at the local server.

        A ``strategy: Webhook`` gets this server's ``url`` and CA in place of its ``service``
        (and ``conversionReviewVersions`` v1, v1beta1 when unset); any other strategy is
        returned unchanged. The argument is never modified.
        """
        out = copy.deepcopy(conversion)
        if out.get("strategy") == "Webhook":
            webhook = out.setdefault("webhook", {})
            webhook["clientConfig"] = self.client_config(webhook.get("clientConfig"), "CRD conversion webhook")
            webhook.setdefault("conversionReviewVersions", ["v1", "v1beta1"])
        return out

    def patch_crds(self, docs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """``docs`` (CRDs) with the conversion settings of the manifests, pointing at the local server."""
        names = {d.get("metadata", {}).get("name") for d in docs}
        missing = sorted(set(self.conversions) - names)
        if missing:
            raise InstallError(f"conversion settings for {', '.join(missing)}, but no such CRD is installed")
        out = []
        for doc in docs:
            conversion = self.conversions.get(doc["metadata"]["name"])
            out.append(doc if conversion is None else {**doc, "spec": {**doc["spec"], "conversion": conversion}})
        return out

    def manager_flags(self) -> list[str]:
        """The ``runtime.cmd`` flags for a Manager whose webhook server these webhooks call."""
        return ["--webhook-host", self.local_serving_host, "--webhook-port", str(self.local_serving_port),
                "--webhook-cert-dir", str(self.local_serving_cert_dir)]

    def install(self, rest_client: Any) -> list[str]:
        """Server-side apply the webhook configurations; their ``<kind>/<name>``s."""
        installed = []
        for doc in self.configurations:
            resource, name = CONFIGURATION_KINDS[doc["kind"]], doc["metadata"]["name"]
            rest_client.request("PATCH", f"/apis/admissionregistration.k8s.io/v1/{resource}/{name}",
                                query={"fieldManager": FIELD_MANAGER, "force": "true"},
                                body=json.dumps(doc).encode(), content_type="application/apply-patch+yaml")
            installed.append(f"{doc['kind']}/{name}")
        return installed
