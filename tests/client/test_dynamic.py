"""DynamicClient: discovery lookups, caching and dict-based clients."""

from __future__ import annotations

import pytest

from samplecontroller.client import DynamicClient, NoMatchError

from .conftest import WIDGETS, MiniServer


def test_resource_for_kind_uses_group_version_discovery(server: MiniServer) -> None:
    dyn = DynamicClient(server.rest())
    info = dyn.resource_for("example.com/v1", "Widget")
    assert (info.group, info.version, info.resource, info.kind) == ("example.com", "v1", "widgets", "Widget")
    assert info.namespaced and info.model is dict and info.subresources == ("status",)
    assert info.short_names == ("wd",) and info.list_kind == "WidgetList"
    core = dyn.resource_for("v1", "Namespace")
    assert core.group == "" and not core.namespaced and core.subresources == ("status",)
    assert dyn.resource_for_gvr("", "v1", "cm").resource == "configmaps"
    gets = [r.path for r in server.requests]
    dyn.resource_for("example.com/v1", "Widget")
    assert [r.path for r in server.requests] == gets, "discovery is cached"
    dyn.refresh()
    dyn.resource_for("example.com/v1", "Widget")
    assert server.requests[-1].path == "/apis/example.com/v1"


def test_unknown_kinds_and_versions_raise_no_match(server: MiniServer) -> None:
    dyn = DynamicClient(server.rest())
    with pytest.raises(NoMatchError, match=r'no matches for kind "Gadget" in version "example\.com/v1"'):
        dyn.resource_for("example.com/v1", "Gadget")
    with pytest.raises(NoMatchError, match=r"other\.io/v9"):
        dyn.resource_for("other.io/v9", "Widget")
    with pytest.raises(NoMatchError, match="gadgets"):
        dyn.resource(("example.com", "v1", "gadgets"))


def test_server_group_versions(server: MiniServer) -> None:
    assert DynamicClient(server.rest()).server_group_versions() == ["v1", "example.com/v1"]


def test_dynamic_clients_round_trip_dicts(server: MiniServer) -> None:
    dyn = DynamicClient(server.rest())
    widgets = dyn.resource(("example.com", "v1", "widgets"), "default")
    created = widgets.create({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                              "spec": {"free": {"form": True}}})
    assert created["spec"] == {"free": {"form": True}}
    assert dyn.for_object(created).get("w")["metadata"]["uid"] == "uid-w"
    typed_info_as_dict = dyn.resource(WIDGETS, "default")
    assert typed_info_as_dict.info.model is dict and typed_info_as_dict.get("w")["kind"] == "Widget"
