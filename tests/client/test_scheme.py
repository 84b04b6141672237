"""Scheme: type <-> ResourceInfo <-> group/version/kind."""

from __future__ import annotations

import pytest

from samplecontroller.client import Scheme
from samplecontroller.client.resource import decoder_for

from .conftest import WIDGETS, WIDGETS_DYNAMIC, Widget


def test_scheme_lookups() -> None:
    s = Scheme()
    s.add(WIDGETS)
    assert s.info_for(Widget) is WIDGETS
    assert s.info_for_gvk("example.com", "v1", "Widget") is WIDGETS
    assert s.info_for_gvr("example.com", "v1", "widgets") is WIDGETS
    assert s.type_for_gvk("example.com", "v1", "Widget") is Widget
    assert s.gvk_for(Widget) == ("example.com", "v1", "Widget")
    assert s.recognizes(Widget) and not s.recognizes(dict)
    assert s.all() == [WIDGETS]
    with pytest.raises(ValueError, match="already registered"):
        s.add(WIDGETS_DYNAMIC)
    with pytest.raises(KeyError, match="int is not registered"):
        s.info_for(int)
    with pytest.raises(KeyError, match="no kind Gadget"):
        s.info_for_gvk("example.com", "v1", "Gadget")


def test_decoders_are_shared_per_model() -> None:
    assert decoder_for(Widget) is decoder_for(Widget)
    assert decoder_for(Widget).decode(b'{"metadata":{"name":"a"}}').metadata.name == "a"
