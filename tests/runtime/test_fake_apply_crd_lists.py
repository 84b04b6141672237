"""The fake runtime client merges a custom resource's lists and maps as the API server does: by the
CRD schema's ``x-kubernetes-list-type`` (map with ``x-kubernetes-list-map-keys``, set) and
``x-kubernetes-map-type``. The same server-side apply sequence (``tests/listmaps.py``: two managers,
list-map items owned by each, conflicts on atomic fields, force, status) runs against the fake and
against the embedded API server over HTTP; the objects and their managedFields must be equal.

The fake learns the schema three ways: automatically from the generated package of the kinds in
its Scheme (``<package>.applyconfigurations.new_type_converter()``), from CRD YAML
(``with_crds(dir)``, as envtest's ``CRDDirectoryPaths``) or from explicit type converters
(``with_type_converters``, controller-runtime's ``WithTypeConverters``)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from samplecontroller.apimachinery import errors, fieldmanager
from samplecontroller.apiserver.testing import install_crds
from samplecontroller.client.scheme import Scheme
from samplecontroller.runtime.client import Client
from samplecontroller.runtime.client.fake import ClientBuilder
from tests.listmaps import CRDS, check_server_result, generate_package, normalized, route, run_steps


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with generate_package(tmp_path_factory.mktemp("listmaps")) as package:
        yield package


def _scheme(pkg: Any) -> Scheme:
    scheme: Scheme = importlib.import_module(f"{pkg.__name__}.scheme").SCHEME
    return scheme


def scenario(c: Client, ns: str, model: type[Any]) -> tuple[dict[str, Any], list[str]]:
    """``STEPS`` through the runtime client: (the normalized Route, the conflict messages)."""
    def apply(body: dict[str, Any], manager: str, force: bool, status: bool) -> Any:
        return (c.status() if status else c).apply(body, field_owner=manager, force=force)

    conflicts = run_steps(apply, ns)
    return normalized(c.get(model, ns, "r")), conflicts


def _builders(pkg: Any) -> dict[str, Callable[[], ClientBuilder]]:
    scheme = _scheme(pkg)
    converter = importlib.import_module(f"{pkg.__name__}.applyconfigurations").new_type_converter()
    return {
        "automatic": lambda: ClientBuilder().with_scheme(scheme),
        "with_crds": lambda: ClientBuilder().with_scheme(scheme).with_crds(CRDS),
        "with_type_converters": lambda: ClientBuilder().with_scheme(scheme).with_type_converters(
            converter, fieldmanager.BuiltinTypeConverter()),
    }


@pytest.mark.parametrize("how", ["automatic", "with_crds", "with_type_converters"])
def test_fake_merges_crd_lists_as_the_server_does(pkg: Any, apiserver: Any, rest: Any, ns: str, how: str) -> None:
    install_crds(apiserver, CRDS)
    model = importlib.import_module(f"{pkg.__name__}.apis.net.v1").Route
    server, server_conflicts = scenario(Client.for_rest_client(rest, scheme=_scheme(pkg)), ns, model)
    fake, fake_conflicts = scenario(_builders(pkg)[how]().build(), ns, model)
    assert fake_conflicts == server_conflicts
    assert fake == server
    check_server_result(server, server_conflicts)


@pytest.mark.parametrize("how", ["file", "documents"])
def test_with_crds_takes_files_and_crd_documents_too(pkg: Any, how: str) -> None:
    from samplecontroller.apiserver.preload import load_crds

    crds: list[Any] = [CRDS / "routes.yaml"] if how == "file" else load_crds([CRDS])
    # the CRDs come first: the deduced converter (lists atomic) is never asked for Route
    fake = ClientBuilder().with_scheme(_scheme(pkg)).with_crds(*crds).with_type_converters(
        fieldmanager.DeducedTypeConverter()).build()
    fake.apply(route("default", {"backends": [{"name": "a", "port": 80}]}), field_owner="alpha")
    fake.apply(route("default", {"backends": [{"name": "b", "port": 80}]}), field_owner="beta")  # merged by key
    live = fake.get(importlib.import_module(f"{pkg.__name__}.apis.net.v1").Route, "default", "r")
    assert [b.name for b in live.spec.backends] == ["a", "b"]


def test_the_deduced_converter_treats_crd_lists_as_atomic(pkg: Any) -> None:
    """controller-runtime's fallback for kinds without a schema (dict kinds, a package generated
    before packages carried their schemas): lists atomic, unlike the server."""
    fake = ClientBuilder().with_scheme(_scheme(pkg)).with_type_converters(fieldmanager.DeducedTypeConverter()).build()
    fake.apply(route("default", {"backends": [{"name": "a", "port": 80}]}), field_owner="alpha")
    with pytest.raises(errors.ConflictError, match=r"conflict with \"alpha\": \.spec\.backends"):
        fake.apply(route("default", {"backends": [{"name": "b", "port": 80}]}), field_owner="beta")


def test_a_kind_no_type_converter_knows_is_refused_by_name(pkg: Any) -> None:
    fake = ClientBuilder().with_scheme(_scheme(pkg)).with_type_converters(fieldmanager.BuiltinTypeConverter()).build()
    with pytest.raises(ValueError, match=r"no type converter knows net\.example\.org/v1 Route"):
        fake.apply(route("default", {"hosts": ["a"]}), field_owner="alpha")


def test_with_crds_refuses_a_missing_directory_and_a_document_that_is_not_a_crd() -> None:
    with pytest.raises(ValueError, match="not a directory of CRD YAML files"):
        ClientBuilder().with_crds(CRDS / "missing")
    with pytest.raises(ValueError, match="not a CustomResourceDefinition: 'Route'"):
        ClientBuilder().with_crds(route("default"))
    with pytest.raises(ValueError, match="not valid YAML"):
        ClientBuilder().with_crds(Path(__file__))
