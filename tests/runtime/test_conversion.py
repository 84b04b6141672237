"""runtime.conversion (hub and spokes) and the ConversionReview webhook at /convert, without an API server,
then over HTTPS through the webhook Server (issue 23, item 2)."""

from __future__ import annotations

import json
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from samplecontroller.runtime.conversion import ConversionError, Converter, hub
from samplecontroller.runtime.webhook import CONVERT_PATH, ConversionWebhook, Server, webhook_managed_by
from samplecontroller.runtime.webhook.certs import write_self_signed
from tests.runtime.widgets import (
    GROUP,
    WidgetV1,
    WidgetV1alpha1,
    WidgetV1alpha1Conversion,
    WidgetV1beta1,
    WidgetV1beta1Conversion,
    scheme,
)

V1, V1BETA1, V1ALPHA1 = f"{GROUP}/v1", f"{GROUP}/v1beta1", f"{GROUP}/v1alpha1"


def converter() -> Converter:
    return Converter(scheme()).register(hub(WidgetV1), WidgetV1beta1Conversion(), WidgetV1alpha1Conversion())


def widget(api_version: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "Widget",
            "metadata": {"name": "w", "namespace": "ns", "uid": "u-1", "labels": {"a": "b"}, "generation": 3},
            "spec": spec, "status": {"observedGeneration": 2}}


def test_every_pair_of_versions_converts_through_the_hub() -> None:
    c = converter()
    as_v1 = widget(V1, {"size": {"value": 10, "unit": "cm"}})
    as_beta = widget(V1BETA1, {"sizeCm": 10})
    as_alpha = widget(V1ALPHA1, {"size": "10cm"})
    for src in (as_v1, as_beta, as_alpha):
        for want in (as_v1, as_beta, as_alpha):
            out = c.convert(src, want["apiVersion"])
            assert out["apiVersion"] == want["apiVersion"] and out["spec"] == want["spec"], (src, want)
            assert out["metadata"] == src["metadata"] and out["status"] == src["status"]


def test_an_object_in_the_desired_version_comes_back_unchanged() -> None:
    obj = widget(V1BETA1, {"sizeCm": 1})
    assert converter().convert(obj, V1BETA1) is obj


def test_a_kind_without_a_hub_is_a_clear_error() -> None:
    c = Converter(scheme())
    with pytest.raises(ConversionError, match=r"^Widget.shapes.example.com has no hub version registered"):
        c.convert(widget(V1BETA1, {}), V1)
    with pytest.raises(ConversionError, match=r"has no hub version: declare one"):
        c.check(GROUP, "Widget")


def test_one_hub_per_kind_and_spokes_that_fit() -> None:
    c = Converter(scheme()).register(hub(WidgetV1))
    with pytest.raises(ConversionError, match=r"more than one hub version: v1 and v1beta1"):
        c.register(hub(WidgetV1beta1))
    c.register(hub(WidgetV1), WidgetV1beta1Conversion())  # the same hub again is fine
    with pytest.raises(ConversionError, match=r"v1beta1 has two conversions: WidgetV1beta1Conversion and"):
        c.register(hub(WidgetV1), WidgetV1beta1Conversion())

    class ThroughAlpha(WidgetV1beta1Conversion):
        hub = WidgetV1alpha1  # type: ignore[assignment]

    with pytest.raises(ConversionError, match=r"through v1alpha1, but the hub of Widget.shapes.example.com is v1"):
        Converter().register(hub(WidgetV1), ThroughAlpha())


def test_check_names_the_versions_without_a_conversion() -> None:
    c = Converter(scheme()).register(hub(WidgetV1), WidgetV1beta1Conversion())
    with pytest.raises(ConversionError, match=r"versions v1alpha1 have no conversion to the hub v1"):
        c.check(GROUP, "Widget")
    with pytest.raises(ConversionError, match=r"v1alpha1 has no conversion to the hub v1 \(convertible versions: "
                                              r"v1, v1beta1\)"):
        c.convert(widget(V1ALPHA1, {"size": "1cm"}), V1)
    converter().check(GROUP, "Widget")


def test_bad_objects_and_failing_conversions_are_one_line_errors() -> None:
    c = converter()
    with pytest.raises(ConversionError, match=r"cannot decode the Widget.shapes.example.com/v1beta1 object"):
        c.convert(widget(V1BETA1, {"sizeCm": "ten"}), V1)
    with pytest.raises(ConversionError, match=r"WidgetV1beta1Conversion.convert_from failed: ValueError: "
                                              r"v1beta1 sizes are in cm, not in"):
        c.convert(widget(V1, {"size": {"value": 1, "unit": "in"}}), V1BETA1)
    with pytest.raises(ConversionError, match="no apiVersion or kind"):
        c.convert({"metadata": {}}, V1)
    with pytest.raises(ConversionError, match=r"from group 'shapes\.example\.com' to group 'other\.io'"):
        c.convert(widget(V1, {}), "other.io/v1")


def review(api_version: str, objects: list[Any], desired: str = V1BETA1, uid: str = "uid-7") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "ConversionReview",
            "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects}}


@pytest.mark.parametrize("review_version", ["apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1"])
def test_the_webhook_answers_in_the_request_review_version(review_version: str) -> None:
    hook = ConversionWebhook(converter())
    objs = [widget(V1, {"size": {"value": i, "unit": "cm"}}) for i in range(3)]
    status, answer = hook.serve(json.dumps(review(review_version, objs)).encode())
    assert status == 200 and isinstance(answer, dict)
    assert answer["apiVersion"] == review_version and answer["kind"] == "ConversionReview"
    response = answer["response"]
    assert response["uid"] == "uid-7" and response["result"] == {"status": "Success"}
    assert [o["spec"] for o in response["convertedObjects"]] == [{"sizeCm": i} for i in range(3)]
    assert {o["apiVersion"] for o in response["convertedObjects"]} == {V1BETA1}


def test_one_failing_object_fails_the_whole_review() -> None:
    objs = [widget(V1, {"size": {"value": 1, "unit": "cm"}}), widget(V1, {"size": {"value": 1, "unit": "in"}})]
    _, answer = ConversionWebhook(converter()).serve(json.dumps(review("apiextensions.k8s.io/v1", objs)).encode())
    assert isinstance(answer, dict)
    response = answer["response"]
    assert response["result"]["status"] == "Failure" and response["convertedObjects"] == []
    assert "v1beta1 sizes are in cm, not in" in response["result"]["message"] and response["uid"] == "uid-7"


@pytest.mark.parametrize(("body", "message"), [
    (b"not json", "request body is not JSON"),
    (b'{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1"}', "not a ConversionReview"),
    (b'{"kind": "ConversionReview", "apiVersion": "apiextensions.k8s.io/v2"}', "unsupported ConversionReview version"),
    (b'{"kind": "ConversionReview", "apiVersion": "apiextensions.k8s.io/v1"}', "no request or no request.uid"),
])
def test_a_body_that_is_not_a_review_is_a_400(body: bytes, message: str) -> None:
    status, answer = ConversionWebhook(converter()).serve(body)
    assert status == 400 and isinstance(answer, str) and message in answer and answer.count("\n") == 1


class Host:
    def __init__(self, server: Server) -> None:
        self.server = server

    def get_webhook_server(self) -> Server:
        return self.server

    def get_scheme(self) -> Any:
        return scheme()


def test_the_builder_registers_kinds_on_one_convert_handler(tmp_path: Path) -> None:
    host = Host(Server(port=0, cert_dir=tmp_path))
    assert webhook_managed_by(host).for_(WidgetV1).with_conversion(
        WidgetV1beta1Conversion(), WidgetV1alpha1Conversion()).complete() == [CONVERT_PATH]
    handler = host.server.handler(CONVERT_PATH)
    assert isinstance(handler, ConversionWebhook) and handler.converter.versions(GROUP, "Widget") == [
        "v1", "v1alpha1", "v1beta1"]
    with pytest.raises(ValueError, match=r"conversion webhook: Widget.shapes.example.com has more than one hub"):
        webhook_managed_by(host).for_(WidgetV1beta1).with_conversion().complete()
    incomplete = Host(Server(port=0, cert_dir=tmp_path))
    with pytest.raises(ValueError, match=r"versions v1alpha1 have no conversion to the hub v1"):
        webhook_managed_by(incomplete).for_(WidgetV1).with_conversion(WidgetV1beta1Conversion()).complete()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Server, ssl.SSLContext]]:
    ca = write_self_signed(tmp_path)
    server = Server(host="127.0.0.1", port=0, cert_dir=tmp_path, cert_poll_interval=0.1)
    webhook_managed_by(Host(server)).for_(WidgetV1).with_conversion(
        WidgetV1beta1Conversion(), WidgetV1alpha1Conversion()).complete()
    stop = threading.Event()
    thread = threading.Thread(target=server.start, args=(stop,), daemon=True)
    thread.start()
    assert server.started.wait(10)
    yield server, ssl.create_default_context(cadata=ca.decode())
    stop.set()
    thread.join(10)


def post(server: Server, ctx: ssl.SSLContext, body: bytes) -> tuple[int, str]:
    req = urllib.request.Request(f"https://127.0.0.1:{server.bound_port}{CONVERT_PATH}", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_convert_over_https(served: tuple[Server, ssl.SSLContext]) -> None:
    server, ctx = served
    body = json.dumps(review("apiextensions.k8s.io/v1beta1", [widget(V1ALPHA1, {"size": "4cm"})])).encode()
    status, text = post(server, ctx, body)
    assert status == 200
    answer = json.loads(text)
    assert answer["apiVersion"] == "apiextensions.k8s.io/v1beta1"
    assert answer["response"]["convertedObjects"][0]["spec"] == {"sizeCm": 4}
    assert post(server, ctx, b"[]") == (400, "request body is not a ConversionReview\n")
