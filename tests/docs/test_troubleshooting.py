"""The troubleshooting page quotes messages as the toolkit prints them: those that need no
server or other interpreter are made again here and looked for on the page (whitespace
normalized, since the page wraps long lines; the port and names are the page's)."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import msgspec
import pytest

from generated.apis.samplecontroller.v1alpha1 import FooList
from samplecontroller import _extras, rest
from samplecontroller.rest.config import Config

PAGE = Path(__file__).resolve().parents[2] / "docs" / "troubleshooting.md"


def on_page(message: str) -> bool:
    flat = " ".join(PAGE.read_text().split())
    return " ".join(message.split()) in flat


def test_a_missing_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_extras, "_importable", lambda module: module != "aiohttp")
    with pytest.raises(_extras.MissingExtraError) as raised:
        _extras.require("apiserver", "samplecontroller.apiserver")
    assert on_page(str(raised.value)), str(raised.value)


def test_connection_refused() -> None:
    with socket.socket() as s:  # a port nothing listens on once it is closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = rest.RESTClient(Config(host=f"https://127.0.0.1:{port}", insecure=True))
    with pytest.raises(rest.TransportError) as raised:
        client.request("GET", "/version")
    message = f"main.py: error: {raised.value}".replace(str(port), "17449")
    assert on_page(message), message


def test_a_list_stored_under_an_older_schema_does_not_decode() -> None:
    data = b'{"items": [{"metadata": {"name": "a"}, "spec": {"replicas": "1"}}]}'
    with pytest.raises(msgspec.ValidationError) as raised:
        msgspec.json.decode(data, type=FooList)
    message = f'error="ValidationError: {raised.value}"'
    assert on_page(message), message
    assert re.search(r"at `\$\.items\[0\]\.spec\.replicas`", message)
