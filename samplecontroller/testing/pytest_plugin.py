"""The pytest plugin for operator projects: an embedded API server with your CRDs (envtest).

Registered as the ``samplecontroller`` entry point (``pytest11``), so installing the toolkit is
enough; nothing here imports the API server (the ``apiserver`` extra) until a fixture needs it.

Configuration (pyproject.toml ``[tool.pytest.ini_options]``, or pytest.ini / setup.cfg):

- ``samplecontroller_crds = ["config/crd/bases"]``: directories whose CRDs the shared server
  installs before the first test (relative to the ini file). A directory that does not exist,
  a file that is not YAML or a document that is not a CRD fails the tests that use the server,
  with one line naming it (never a server without your CRDs).
- ``samplecontroller_webhooks = ["config/webhook", "config/crd/patches"]``: the project's webhook
  manifests (envtest's WebhookInstallOptions): the shared server installs their
  Mutating/ValidatingWebhookConfigurations and the CRDs' conversion settings with every
  ``clientConfig.service`` rewritten to ``url: https://127.0.0.1:<port><path>`` and the CA of a
  self-signed serving certificate in ``caBundle``, so defaulting, validation and conversion go
  through the real request path to the webhook server the tests start (see
  ``webhook_install_options``). Until one is serving, requests those webhooks intercept fail as
  on a cluster whose webhook is down.
- ``samplecontroller_package = "myoperator.generated"``: the generated package the ``clientset``
  fixture takes its ``clientset.Clientset`` from.
- ``samplecontroller_rbac = ["config/rbac/role.yaml"]``: the operator's roles (``make manifests``
  writes them from its ``runtime.rbac.rule`` declarations): ``operator_rest_client`` runs as a
  ServiceAccount bound to exactly these.
- ``samplecontroller_emulated_version = "1.34"``: the shared and the fresh servers serve the API of
  that Kubernetes version (kube-apiserver's ``--emulated-version``, 1.33 to 1.36; default 1.37):
  test against the version your cluster runs. An unsupported value fails the tests that use a
  server, with one line naming the supported ones.
- ``@pytest.mark.samplecontroller_crds("path/to/dir", ...)``: more CRD directories (relative to
  the rootdir) installed on the shared server before that test.

Fixtures:

- ``apiserver`` (session): the shared ``LocalAPIServer``; tests keep to their own namespaces.
- ``webhook_install_options`` (session): the ``runtime.webhook.install.WebhookInstallOptions`` the
  shared server's webhooks point at: start a webhook server there, e.g. a Manager made with
  ``cmd.parse_flags(webhook_install_options.manager_flags(), ...)`` whose setup registers the
  webhooks, or ``Server(host=o.local_serving_host, port=o.local_serving_port,
  cert_dir=o.local_serving_cert_dir)``.
- ``operator_rest_client`` (session): a ``RESTClient`` for the shared server authenticated as the
  ServiceAccount ``operator`` of namespace ``samplecontroller-operator``, bound to exactly the
  ClusterRoles and Roles of ``samplecontroller_rbac`` (a ClusterRoleBinding or a RoleBinding each,
  namespaces created as needed): build the operator under test on it, so a permission its role
  lacks is refused as on a cluster. Every test after the first use of it fails (at teardown)
  when the API server refused a request of that ServiceAccount during the test, with kube's
  Forbidden message (verb, resource, namespace) and the ``rbac.rule(...)`` declaration to add.
  A test that wants admin rights uses ``rest_client`` instead.
- ``kubeconfig`` (session): its kubeconfig's path.
- ``rest_client`` (session): a ``samplecontroller.rest.RESTClient`` for it.
- ``clientset`` (session): ``<samplecontroller_package>.clientset.Clientset(rest_client)``.
- ``namespace`` (function): a new namespace's name (``test-<random>``), deleted after the test.
- ``fresh_apiserver`` (function): a new, empty server (no CRDs) for this test alone.
- ``kubectl`` (session): ``kubectl(*args, binary=None, stdin=None, check=False, server=None)`` runs
  kubectl with a private HOME and cache dir against the shared server; skips when kubectl is
  missing (fails instead under ``CI=true``).
- ``async_rest_client`` (function): a ``samplecontroller.rest.aio.AsyncRESTClient`` for the
  shared server (sharing ``rest_client``'s credentials), closed after the test.
- ``async_clientset`` (function): ``<samplecontroller_package>.clientset.AsyncClientset`` over it.

Async tests: an ``async def test_...`` runs on a new event loop of its own (``asyncio.Runner``),
with the async fixtures above bound to that loop and closed on it afterwards; no other plugin
is needed. When pytest-asyncio is installed it runs them instead (and tests marked for anyio are
left to anyio). Fixtures themselves stay plain functions (pytest runs no ``async def`` fixture
without such a plugin): they hand out async objects that bind to the test's loop on first use.

To run an operator (a Manager, or a whole ``main``) inside a test against this server, with its
logs captured and a clean stop at the end, use ``samplecontroller.testing.runner.OperatorRunner``.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from samplecontroller.apiserver.server import LocalAPIServer
    from samplecontroller.apiserver.testing import KubectlRunner
    from samplecontroller.rest import RESTClient
    from samplecontroller.rest.aio import AsyncRESTClient
    from samplecontroller.runtime.webhook.install import WebhookInstallOptions

__all__ = [
    "CRDS_INI", "EMULATED_VERSION_INI", "MARKER", "OPERATOR_ACCOUNT", "OPERATOR_NAMESPACE", "PACKAGE_INI",
    "RBAC_INI", "REFUSALS", "WEBHOOKS_INI", "Refusals",
    "apiserver", "async_clientset", "async_rest_client", "clientset", "configured_crd_dirs", "fresh_apiserver",
    "kubeconfig", "kubectl", "namespace", "operator_rest_client", "rest_client", "webhook_install_options",
]

RBAC_INI = "samplecontroller_rbac"
OPERATOR_NAMESPACE = "samplecontroller-operator"
OPERATOR_ACCOUNT = "operator"
CRDS_INI = "samplecontroller_crds"
WEBHOOKS_INI = "samplecontroller_webhooks"
PACKAGE_INI = "samplecontroller_package"
EMULATED_VERSION_INI = "samplecontroller_emulated_version"
MARKER = "samplecontroller_crds"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(CRDS_INI, type="paths", default=[],
                  help="CRD directories the shared embedded API server installs (relative to the ini file)")
    parser.addini(WEBHOOKS_INI, type="paths", default=[],
                  help="webhook manifests (webhook configurations, CRD conversion patches) the shared embedded API "
                       "server installs pointing at the test's webhook server (relative to the ini file)")
    parser.addini(RBAC_INI, type="paths", default=[],
                  help="the operator's role manifests (ClusterRoles, Roles) operator_rest_client is bound to "
                       "(relative to the ini file)")
    parser.addini(PACKAGE_INI, default="",
                  help="import path of the generated package whose clientset.Clientset the clientset fixture returns")
    parser.addini(EMULATED_VERSION_INI, default="",
                  help="the Kubernetes version (1.33 to 1.36) the embedded API servers emulate, as kube-apiserver's "
                       "--emulated-version (default: 1.37)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(*dirs): install the CRDs in these directories (relative to the rootdir) on the "
                   "shared embedded API server before the test")


_ASYNC_CLOSERS = pytest.StashKey[list[Any]]()


def _runs_async_tests_elsewhere(item: pytest.Function) -> bool:
    return item.config.pluginmanager.hasplugin("asyncio") or item.get_closest_marker("anyio") is not None


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run an ``async def`` test on a new event loop (see the module docstring)."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj) or _runs_async_tests_elsewhere(pyfuncitem):
        return None
    kwargs = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    with asyncio.Runner() as runner:
        try:
            runner.run(pyfuncitem.obj(**kwargs))
        finally:
            for client in pyfuncitem.stash.get(_ASYNC_CLOSERS, []):
                runner.run(client.close())
            pyfuncitem.stash[_ASYNC_CLOSERS] = []
    return True


def configured_crd_dirs(config: pytest.Config) -> list[Path]:
    """The ``samplecontroller_crds`` directories (absolute)."""
    try:
        dirs: list[Path] = config.getini(CRDS_INI)
    except ValueError:
        raise pytest.UsageError(
            f"the samplecontroller pytest plugin is not loaded, so {CRDS_INI} is not read "
            "(with PYTEST_DISABLE_PLUGIN_AUTOLOAD set, pass -p samplecontroller.testing.pytest_plugin)") from None
    return [Path(d) for d in dirs]


def _server_class() -> type[LocalAPIServer]:
    """``LocalAPIServer``; without the apiserver extra the test fails with the one-line pip command."""
    from samplecontroller._extras import MissingExtraError

    try:
        from samplecontroller.apiserver.server import LocalAPIServer
    except MissingExtraError as err:
        pytest.fail(f"the samplecontroller test kit: {err}", pytrace=False)
    return LocalAPIServer


def _new_server(config: pytest.Config, kubeconfig_path: Path) -> LocalAPIServer:
    """A ``LocalAPIServer`` (not started) emulating the ``samplecontroller_emulated_version`` ini option."""
    server_class = _server_class()
    from samplecontroller.apiserver.version import EmulationVersionError

    emulated = str(config.getini(EMULATED_VERSION_INI) or "").strip() or None
    try:
        return server_class(kubeconfig_path=kubeconfig_path, emulated_version=emulated)
    except EmulationVersionError as err:
        pytest.fail(f"{EMULATED_VERSION_INI}: {err}", pytrace=False)


def _install(server: LocalAPIServer, dirs: list[Path], webhooks: WebhookInstallOptions | None = None) -> None:
    from samplecontroller.apiserver.preload import CRDError, create_crds, load_crds

    try:
        docs = load_crds(dirs)
        if webhooks is not None:
            docs = _with_conversions(webhooks, docs)
        server.call(lambda core: create_crds(core, docs))
    except CRDError as err:
        pytest.fail(f"cannot install the CRDs: {err}", pytrace=False)


def _with_conversions(webhooks: WebhookInstallOptions, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from samplecontroller.runtime.webhook.install import InstallError

    try:
        return webhooks.patch_crds(docs)
    except InstallError as err:
        pytest.fail(f"cannot install the CRDs: {err}", pytrace=False)


def _install_webhooks(server: LocalAPIServer, webhooks: WebhookInstallOptions) -> None:
    from samplecontroller import rest
    from samplecontroller.apimachinery import errors

    try:
        webhooks.install(rest.load_rest_client(kubeconfig=str(server.kubeconfig_path)))
    except errors.StatusError as err:
        pytest.fail(f"cannot install the webhook configurations: {err}", pytrace=False)


@pytest.fixture(scope="session")
def webhook_install_options(request: pytest.FixtureRequest,
                            tmp_path_factory: pytest.TempPathFactory) -> WebhookInstallOptions:
    """Where the shared server's webhooks point (``samplecontroller_webhooks``; see the module docstring)."""
    from samplecontroller._extras import MissingExtraError

    try:
        from samplecontroller.runtime.webhook.install import InstallError, WebhookInstallOptions
    except MissingExtraError as err:
        pytest.fail(f"the samplecontroller test kit: {err}", pytrace=False)
    paths = [Path(p) for p in request.config.getini(WEBHOOKS_INI)]
    try:
        return WebhookInstallOptions(paths, local_serving_cert_dir=tmp_path_factory.mktemp("webhook-certs")).setup()
    except InstallError as err:
        pytest.fail(f"cannot read the webhook manifests: {err}", pytrace=False)


@pytest.fixture(scope="session")
def apiserver(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalAPIServer]:
    """The shared embedded API server, with the CRDs of ``samplecontroller_crds`` installed (and
    the webhooks of ``samplecontroller_webhooks``)."""
    dirs = configured_crd_dirs(request.config)
    webhooks: WebhookInstallOptions | None = None
    if request.config.getini(WEBHOOKS_INI):
        webhooks = request.getfixturevalue("webhook_install_options")
    tmp = tmp_path_factory.mktemp("shared-apiserver")
    with _new_server(request.config, tmp / "kubeconfig") as server:
        _install(server, dirs, webhooks)
        if webhooks is not None:
            _install_webhooks(server, webhooks)
        yield server


@pytest.fixture(autouse=True)
def _samplecontroller_crds_marker(request: pytest.FixtureRequest) -> None:
    """``@pytest.mark.samplecontroller_crds(dir, ...)``: install those CRDs on the shared server."""
    dirs = [Path(request.config.rootpath, d) for m in request.node.iter_markers(MARKER) for d in m.args]
    if dirs:
        _install(request.getfixturevalue("apiserver"), dirs)


@pytest.fixture
def fresh_apiserver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LocalAPIServer]:
    """A new, empty embedded API server for this test alone (no CRDs installed)."""
    with _new_server(request.config, tmp_path / "kubeconfig") as server:
        yield server


@pytest.fixture(scope="session")
def kubeconfig(apiserver: LocalAPIServer) -> Path:
    """The shared server's kubeconfig path."""
    return apiserver.kubeconfig_path


@pytest.fixture(scope="session")
def rest_client(kubeconfig: Path) -> RESTClient:
    """A REST client for the shared server."""
    from samplecontroller import rest

    return rest.load_rest_client(kubeconfig=str(kubeconfig))


@pytest.fixture(scope="session")
def clientset(request: pytest.FixtureRequest, rest_client: RESTClient) -> Any:
    """The generated package's typed ``Clientset`` on the shared server (``samplecontroller_package``)."""
    return _generated_clientset(request).Clientset(rest_client)


def _generated_clientset(request: pytest.FixtureRequest) -> Any:
    """The ``clientset`` module of the ``samplecontroller_package`` ini option."""
    package = str(request.config.getini(PACKAGE_INI) or "")
    if not package:
        raise pytest.UsageError(f"the {request.fixturename} fixture needs the {PACKAGE_INI} ini option "
                                "(the generated package's import path, e.g. myoperator.generated)")
    try:
        return importlib.import_module(f"{package}.clientset")
    except ImportError as err:
        raise pytest.UsageError(f"{PACKAGE_INI} = {package!r}: cannot import {package}.clientset: {err}") from None


@pytest.fixture
def namespace(rest_client: RESTClient) -> Iterator[str]:
    """A new namespace on the shared server for this test; deleted (with its content) afterwards."""
    from samplecontroller.apimachinery import errors

    name = f"test-{uuid.uuid4().hex[:10]}"
    body = json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}).encode()
    rest_client.request("POST", "/api/v1/namespaces", body=body, content_type="application/json")
    yield name
    try:
        rest_client.request("DELETE", f"/api/v1/namespaces/{name}")
    except errors.StatusError:
        pass


@pytest.fixture(scope="session")
def kubectl(request: pytest.FixtureRequest, apiserver: LocalAPIServer,
            tmp_path_factory: pytest.TempPathFactory) -> KubectlRunner:
    """Runs kubectl against the shared server with a private HOME (see the module docstring)."""
    from samplecontroller.apiserver.testing import make_kubectl

    return make_kubectl(tmp_path_factory.mktemp("kubectl-home"), apiserver, cwd=request.config.rootpath)


@pytest.fixture
def async_rest_client(request: pytest.FixtureRequest, rest_client: RESTClient) -> AsyncRESTClient:
    """An async REST client for the shared server, bound to the test's event loop on first use and
    closed on it after an ``async def`` test (see the module docstring)."""
    from samplecontroller._extras import MissingExtraError

    try:
        from samplecontroller.rest.aio import AsyncRESTClient
    except MissingExtraError as err:
        pytest.fail(f"the samplecontroller test kit: {err}", pytrace=False)
    client = AsyncRESTClient(rest_client)
    request.node.stash.setdefault(_ASYNC_CLOSERS, []).append(client)
    return client


@pytest.fixture
def async_clientset(request: pytest.FixtureRequest, async_rest_client: AsyncRESTClient) -> Any:
    """The generated package's ``AsyncClientset`` on the shared server (``samplecontroller_package``)."""
    return _generated_clientset(request).AsyncClientset(async_rest_client)


class Refusals:
    """The requests of the operator's ServiceAccount the shared server refused (see
    ``operator_rest_client``): ``request.config.stash[REFUSALS].take()`` hands a test the messages
    so far (and clears them), for a test that expects a refusal."""

    def __init__(self, user: str, role_files: list[Path]) -> None:
        self.user = user
        self.role_files = role_files
        self.lock = threading.Lock()
        self._messages: list[str] = []

    def take(self) -> list[str]:
        """The refusals' messages since the last ``take`` (each names the declaration to add)."""
        with self.lock:
            out, self._messages = self._messages, []
        return out

    def listener(self, attrs: Any, status: dict[str, Any]) -> None:
        """The server's denial listener: keeps the message of a refusal of the operator's user."""
        if attrs.user.name != self.user:
            return
        if attrs.resource_request:
            resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
            from samplecontroller.runtime import rbac

            fix = rbac.suggestion(attrs.verb, attrs.api_group, resource)
        else:
            fix = f'rbac.rule(urls="{attrs.path}", verbs="{attrs.verb}")'
        files = ", ".join(str(p) for p in self.role_files)
        with self.lock:
            self._messages.append(f"{status.get('message')}\n  the operator's role ({files}) lacks it: declare it "
                                 f"beside the code that needs it and run `make manifests`:\n    {fix}")


REFUSALS = pytest.StashKey[Refusals]()


def _rbac_docs(paths: list[Path]) -> list[dict[str, Any]]:
    import yaml

    docs: list[dict[str, Any]] = []
    for path in paths:
        try:
            loaded = [d for d in yaml.safe_load_all(path.read_text()) if d]
        except (OSError, yaml.YAMLError) as err:
            pytest.fail(f"{RBAC_INI}: cannot read {path}: {err}", pytrace=False)
        for doc in loaded:
            if not isinstance(doc, dict) or doc.get("kind") not in ("ClusterRole", "Role"):
                kind = doc.get("kind") if isinstance(doc, dict) else type(doc).__name__
                pytest.fail(f"{RBAC_INI}: {path} holds a {kind}, not a ClusterRole or Role", pytrace=False)
            docs.append(doc)
    return docs


def _apply(rest_client: RESTClient, path: str, name: str, body: dict[str, Any]) -> None:
    """Create ``body`` at ``path`` (its collection), or replace the object ``name`` there."""
    from samplecontroller.apimachinery import errors

    data = json.dumps(body).encode()
    try:
        rest_client.request("POST", path, body=data, content_type="application/json")
    except errors.AlreadyExistsError:
        current = json.loads(rest_client.request("GET", f"{path}/{name}"))
        body = {**body, "metadata": {**body["metadata"], "resourceVersion": current["metadata"]["resourceVersion"]}}
        rest_client.request("PUT", f"{path}/{name}", body=json.dumps(body).encode(), content_type="application/json")


def _ensure_namespace(rest_client: RESTClient, name: str) -> None:
    from samplecontroller.apimachinery import errors

    body = json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}).encode()
    try:
        rest_client.request("POST", "/api/v1/namespaces", body=body, content_type="application/json")
    except errors.AlreadyExistsError:
        pass


@pytest.fixture(scope="session")
def operator_rest_client(request: pytest.FixtureRequest, apiserver: LocalAPIServer,
                         rest_client: RESTClient) -> RESTClient:
    """A REST client as the operator's ServiceAccount, bound to exactly its roles (see the module docstring)."""
    from samplecontroller import rest
    from samplecontroller.rest.config import Config

    paths = [Path(p) for p in request.config.getini(RBAC_INI)]
    if not paths:
        raise pytest.UsageError(f"the operator_rest_client fixture needs the {RBAC_INI} ini option (the operator's "
                                "role manifests, e.g. [\"config/rbac/role.yaml\"], written by `make manifests`)")
    docs = _rbac_docs(paths)
    subject = {"kind": "ServiceAccount", "name": OPERATOR_ACCOUNT, "namespace": OPERATOR_NAMESPACE}
    _ensure_namespace(rest_client, OPERATOR_NAMESPACE)
    _apply(rest_client, f"/api/v1/namespaces/{OPERATOR_NAMESPACE}/serviceaccounts", OPERATOR_ACCOUNT,
           {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": OPERATOR_ACCOUNT}})
    rbac_api = "/apis/rbac.authorization.k8s.io/v1"
    for doc in docs:
        name = str(doc["metadata"]["name"])
        role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": doc["kind"],
                "metadata": {"name": name}, "rules": doc.get("rules") or []}
        ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": doc["kind"], "name": name}
        if doc["kind"] == "ClusterRole":
            _apply(rest_client, f"{rbac_api}/clusterroles", name, role)
            _apply(rest_client, f"{rbac_api}/clusterrolebindings", name,
                   {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                    "metadata": {"name": name}, "roleRef": ref, "subjects": [subject]})
        else:
            ns = str(doc["metadata"].get("namespace") or OPERATOR_NAMESPACE)
            _ensure_namespace(rest_client, ns)
            _apply(rest_client, f"{rbac_api}/namespaces/{ns}/roles", name, role)
            _apply(rest_client, f"{rbac_api}/namespaces/{ns}/rolebindings", name,
                   {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                    "metadata": {"name": name}, "roleRef": ref, "subjects": [subject]})
    review = json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                         "spec": {"expirationSeconds": 86400}}).encode()
    answer = json.loads(rest_client.request(
        "POST", f"/api/v1/namespaces/{OPERATOR_NAMESPACE}/serviceaccounts/{OPERATOR_ACCOUNT}/token",
        body=review, content_type="application/json"))
    refusals = Refusals(f"system:serviceaccount:{OPERATOR_NAMESPACE}:{OPERATOR_ACCOUNT}", paths)
    assert apiserver.app is not None
    apiserver.app.authorizer.denial_listeners.append(refusals.listener)
    request.config.stash[REFUSALS] = refusals
    ca = str(apiserver.ca_path) if apiserver.ca_path is not None else None
    return rest.RESTClient(Config(host=apiserver.url, ca_file=ca, token=str(answer["status"]["token"])))


@pytest.fixture(autouse=True)
def _samplecontroller_operator_rights(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test during which the operator's ServiceAccount was refused (``operator_rest_client``)."""
    before = request.config.stash.get(REFUSALS, None)
    if before is not None:
        before.take()  # an earlier test's operator, still stopping: checked there
    yield
    refusals = request.config.stash.get(REFUSALS, None)
    new = refusals.take() if refusals is not None else []
    if new:
        unique = list(dict.fromkeys(new))
        pytest.fail("the API server refused the operator under test:\n" + "\n".join(unique), pytrace=False)
