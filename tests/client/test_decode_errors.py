"""Never silent on decode: a list, a get, a watch and an informer that meet an object their model
cannot decode name the object (namespace/name), the field and the likely cause, in one line.

The CRD (tests/testdata/decode) has two versions with different schemas and no conversion, so an
object written as v2 is served as v1 unconverted: the kubebuilder multi-version tutorial's trap."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from samplecontroller.apimachinery import errors
from samplecontroller.cache.reflector import Reflector
from samplecontroller.cache.store import new_store
from samplecontroller.client.resource import ObjectDecodeError, ResourceClient
from samplecontroller.client.types import ResourceInfo
from samplecontroller.kubernetes.apis.meta.v1 import ListMeta, ObjectMeta
from samplecontroller.rest import RESTClient

pytestmark = pytest.mark.samplecontroller_crds("tests/testdata/decode")


class CronTabSpec(msgspec.Struct, frozen=True, kw_only=True):
    schedule: str | msgspec.UnsetType = msgspec.UNSET


class CronTab(msgspec.Struct, frozen=True, kw_only=True):
    api_version: str = msgspec.field(name="apiVersion", default="decode.example.com/v1")
    kind: str = "CronTab"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: CronTabSpec | msgspec.UnsetType = msgspec.UNSET


class CronTabList(msgspec.Struct, frozen=True, kw_only=True):
    api_version: str = msgspec.field(name="apiVersion", default="decode.example.com/v1")
    kind: str = "CronTabList"
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: tuple[CronTab, ...] = ()


V1: ResourceInfo[CronTab] = ResourceInfo("decode.example.com", "v1", "crontabs", "CronTab", True, CronTab,
                                         CronTabList, "CronTabList")
V2: ResourceInfo[dict[str, Any]] = ResourceInfo("decode.example.com", "v2", "crontabs", "CronTab", True, dict, dict,
                                                "CronTabList")


@pytest.fixture
def written_as_v2(rest_client: RESTClient, namespace: str) -> Iterator[str]:
    ResourceClient(rest_client, V2, namespace).create(
        {"apiVersion": "decode.example.com/v2", "kind": "CronTab", "metadata": {"name": "nightly"},
         "spec": {"schedule": {"minute": "5"}}})
    ResourceClient(rest_client, V2, namespace).create(
        {"apiVersion": "decode.example.com/v2", "kind": "CronTab", "metadata": {"name": "fine"}, "spec": {}})
    yield namespace


def check(message: str, namespace: str) -> None:
    assert "\n" not in message
    assert f"CronTab {namespace}/nightly (decode.example.com/v1)" in message, message
    assert "spec.schedule: Expected `str`, got `object`" in message, message
    assert "conversion" in message and "likely cause" in message, message


def test_a_list_names_the_object_the_field_and_the_cause(rest_client: RESTClient, written_as_v2: str) -> None:
    client: ResourceClient[CronTab, CronTabList] = ResourceClient(rest_client, V1, written_as_v2)
    with pytest.raises(ObjectDecodeError) as caught:
        client.list()
    check(str(caught.value), written_as_v2)
    assert isinstance(caught.value, msgspec.ValidationError)  # what callers caught before
    with pytest.raises(ObjectDecodeError) as one:
        client.get("nightly")
    check(str(one.value), written_as_v2)
    assert client.get("fine").metadata.name == "fine"


def test_a_watch_event_names_the_object(rest_client: RESTClient, written_as_v2: str) -> None:
    client: ResourceClient[CronTab, CronTabList] = ResourceClient(rest_client, V1, written_as_v2)
    events = client.watch(resource_version="0", timeout_seconds=5)
    errored = None
    try:
        errored = next((e for e in events if e.type == "ERROR"), None)
    finally:
        events.stop()
    assert errored is not None and errored.status is not None, "no ERROR event for the undecodable object"
    check(str(errored.status.get("message")), written_as_v2)


def test_an_informer_reports_the_object(rest_client: RESTClient, written_as_v2: str) -> None:
    reported: list[BaseException] = []
    done = threading.Event()

    def handler(_name: str, err: BaseException) -> None:
        reported.append(err)
        done.set()

    reflector = Reflector(ResourceClient(rest_client, V1, written_as_v2).lister_watcher(), new_store(),
                          watch_error_handler=handler)
    stop = threading.Event()
    thread = threading.Thread(target=reflector.run, args=(stop,), daemon=True)
    thread.start()
    try:
        assert done.wait(30)
    finally:
        stop.set()
        thread.join(30)
    assert isinstance(reported[0], ObjectDecodeError)
    check(str(reported[0]), written_as_v2)
    assert not isinstance(reported[0], errors.StatusError)
