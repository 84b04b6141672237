"""The generated async clientsets (CRD kinds and built-ins) against the embedded API server:
the same models as the sync clientsets, verbs awaited, watches as async iterators (issue 25)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from generated.apis.samplecontroller.v1alpha1 import Foo, FooSpec
from generated.clientset import AsyncClientset
from samplecontroller.apimachinery import errors
from samplecontroller.kubernetes.apis.core.v1 import ConfigMap
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.kubernetes.clientset import AsyncClientset as KubeAsyncClientset
from samplecontroller.rest import RESTClient
from samplecontroller.rest.aio import AsyncRESTClient
from tests.live import ns, rest

__all__ = ["ns", "rest"]


def test_crd_and_builtin_clientsets(rest: RESTClient, ns: str) -> None:
    async def go() -> None:
        async with AsyncRESTClient(rest) as arest:
            foos = AsyncClientset(arest).samplecontroller_v1alpha1().foos(ns)
            created = await foos.create(Foo(metadata=ObjectMeta(name="f1", namespace=ns),
                                            spec=FooSpec(deployment_name="d1", replicas=1)))
            assert isinstance(created, Foo) and created.metadata.uid
            assert (await foos.get("f1")).spec.deployment_name == "d1"  # type: ignore[union-attr]
            with pytest.raises(errors.AlreadyExistsError):
                await foos.create(created)
            cms = KubeAsyncClientset(arest).core_v1().configmaps(ns)
            listed = await cms.list()
            watch = await cms.watch(resource_version=listed.metadata.resource_version or "0")
            await cms.create(ConfigMap(metadata=ObjectMeta(name="c1", namespace=ns), data={"k": "v"}))
            async with watch:
                async for event in watch:
                    assert event.type == "ADDED" and isinstance(event.object, ConfigMap)
                    assert event.object.data == {"k": "v"}
                    break
            await cms.delete("c1")
            with pytest.raises(errors.NotFoundError):
                await cms.get("c1")

    asyncio.run(asyncio.wait_for(go(), 60))


def test_async_clientset_constructors(rest: RESTClient, apiserver: Any) -> None:
    cs = AsyncClientset.from_kubeconfig(str(apiserver.kubeconfig_path))
    assert isinstance(cs.rest, AsyncRESTClient) and cs.rest.host == rest.host

    async def go() -> int:
        async with cs.rest:
            return len((await cs.samplecontroller_v1alpha1().foos().list()).items) >= 0

    assert asyncio.run(go())


def test_warnings_reach_the_shared_handler_from_both_transports(apiserver: Any, ns: str) -> None:
    """``fieldValidation=Warn`` with an unknown field: the server's Warning header is parsed and
    handed to the client's ``warning_handler``, by the sync and the async transport alike."""
    from samplecontroller.rest import load_rest_client

    seen: list[str] = []

    class Collect:
        def handle_warning_header(self, code: int, agent: str, text: str) -> None:
            seen.append(text)

    sync = load_rest_client(kubeconfig=str(apiserver.kubeconfig_path), warning_handler=Collect())
    path = f"/apis/samplecontroller.k8s.io/v1alpha1/namespaces/{ns}/foos"

    def body(name: str) -> bytes:
        return json.dumps({"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                           "metadata": {"name": name}, "spec": {"deploymentName": name, "bogus": 1}}).encode()

    sync.request("POST", path, query={"fieldValidation": "Warn"}, body=body("w1"))
    assert seen == ['unknown field "spec.bogus"']

    async def go() -> None:
        async with AsyncRESTClient(sync) as client:
            await client.request("POST", path, query={"fieldValidation": "Warn"}, body=body("w2"))

    asyncio.run(go())
    assert seen == ['unknown field "spec.bogus"'] * 2


def test_warning_header_parsing_and_the_default_logger(caplog: pytest.LogCaptureFixture) -> None:
    from samplecontroller.rest import warnings

    assert warnings.parse(['299 - "a \\"q\\" b", 299 - "second"', '199 agent "not 299"',
                           '299 - "dated" "Mon, 01 Jan 2024 00:00:00 GMT"']) == ['a "q" b', "second", "dated"]
    assert warnings.parse(['299 - "kept", 299 - unquoted', '299 - "after a bad value"']) == ["kept"]
    logger = warnings.WarningLogger()
    logger.handle_warning_header(299, "-", "deprecated")
    logger.handle_warning_header(299, "-", "deprecated")
    assert [getattr(r, "kv", {}).get("warning") for r in caplog.records] == ["deprecated"]


def test_in_cluster_over_tls_with_the_service_account_token(apiserver: Any, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``AsyncRESTClient.in_cluster()``: the pod's service account files and env, TLS verified
    against its CA (the embedded server's), the token file sent."""
    import base64
    from urllib.parse import urlsplit

    import yaml

    from samplecontroller.rest import config as rest_config

    kubeconfig = yaml.safe_load(apiserver.kubeconfig_path.read_text())
    cluster, user = kubeconfig["clusters"][0]["cluster"], kubeconfig["users"][0]["user"]
    (tmp_path / "token").write_text(user["token"])
    (tmp_path / "ca.crt").write_bytes(base64.b64decode(cluster["certificate-authority-data"]))
    server = urlsplit(cluster["server"])
    monkeypatch.setattr(rest_config, "SERVICE_ACCOUNT_DIR", str(tmp_path))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", server.hostname or "")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(server.port))
    client = AsyncRESTClient.in_cluster()

    async def go() -> dict[str, Any]:
        async with client:
            return dict(json.loads(await client.request("GET", "/api/v1/namespaces/default")))

    assert asyncio.run(go())["metadata"]["name"] == "default"
