"""A kind in three versions, shaped as the generator writes models, and their conversions.

Widget (shapes.example.com): v1alpha1 has ``size: "10cm"`` (a string), v1beta1 ``sizeCm: 10``,
v1 (the hub) ``size: {value: 10, unit: cm}``. Both spokes convert to and from v1.
"""

from __future__ import annotations

from msgspec import UNSET, Struct, UnsetType, field

from samplecontroller.client.scheme import Scheme
from samplecontroller.client.types import ResourceInfo
from samplecontroller.kubernetes.apis.meta.v1 import ListMeta, ObjectMeta

GROUP = "shapes.example.com"


class Size(Struct, frozen=True, kw_only=True, gc=False):
    value: int = 0
    unit: str = ""


class WidgetStatus(Struct, frozen=True, kw_only=True, gc=False):
    observed_generation: int | UnsetType = field(name="observedGeneration", default=UNSET)


class WidgetV1Spec(Struct, frozen=True, kw_only=True, gc=False):
    size: Size | UnsetType = UNSET


class WidgetV1(Struct, frozen=True, kw_only=True, gc=False):
    api_version: str = field(name="apiVersion", default=f"{GROUP}/v1")
    kind: str = "Widget"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: WidgetV1Spec | UnsetType = UNSET
    status: WidgetStatus | UnsetType = UNSET


class WidgetV1beta1Spec(Struct, frozen=True, kw_only=True, gc=False):
    size_cm: int | UnsetType = field(name="sizeCm", default=UNSET)


class WidgetV1beta1(Struct, frozen=True, kw_only=True, gc=False):
    api_version: str = field(name="apiVersion", default=f"{GROUP}/v1beta1")
    kind: str = "Widget"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: WidgetV1beta1Spec | UnsetType = UNSET
    status: WidgetStatus | UnsetType = UNSET


class WidgetV1alpha1Spec(Struct, frozen=True, kw_only=True, gc=False):
    size: str | UnsetType = UNSET


class WidgetV1alpha1(Struct, frozen=True, kw_only=True, gc=False):
    api_version: str = field(name="apiVersion", default=f"{GROUP}/v1alpha1")
    kind: str = "Widget"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: WidgetV1alpha1Spec | UnsetType = UNSET
    status: WidgetStatus | UnsetType = UNSET


class WidgetList(Struct, frozen=True, kw_only=True, gc=False):
    metadata: ListMeta = field(default_factory=ListMeta)


def _info(version: str, model: type[object]) -> ResourceInfo[object]:
    return ResourceInfo(group=GROUP, version=version, resource="widgets", kind="Widget", namespaced=True,
                        model=model, list_model=WidgetList, list_kind="WidgetList", singular="widget")


def scheme(*versions: str) -> Scheme:
    """A Scheme with the Widget versions named (default: all three)."""
    models = {"v1": WidgetV1, "v1beta1": WidgetV1beta1, "v1alpha1": WidgetV1alpha1}
    s = Scheme()
    for version in versions or tuple(models):
        s.add(_info(version, models[version]))
    return s


class WidgetV1beta1Conversion:
    """v1beta1 <-> v1: ``sizeCm`` is ``size`` in centimetres."""

    spoke = WidgetV1beta1
    hub = WidgetV1

    def convert_to(self, src: WidgetV1beta1) -> WidgetV1:
        spec = WidgetV1Spec()
        if src.spec is not UNSET and src.spec.size_cm is not UNSET:
            spec = WidgetV1Spec(size=Size(value=src.spec.size_cm, unit="cm"))
        return WidgetV1(metadata=src.metadata, spec=spec, status=src.status)

    def convert_from(self, hub: WidgetV1) -> WidgetV1beta1:
        spec = WidgetV1beta1Spec()
        if hub.spec is not UNSET and hub.spec.size is not UNSET:
            if hub.spec.size.unit != "cm":
                raise ValueError(f"v1beta1 sizes are in cm, not {hub.spec.size.unit}")
            spec = WidgetV1beta1Spec(size_cm=hub.spec.size.value)
        return WidgetV1beta1(metadata=hub.metadata, spec=spec, status=hub.status)


class WidgetV1alpha1Conversion:
    """v1alpha1 <-> v1: ``size`` is a string ``<value><unit>``."""

    spoke = WidgetV1alpha1
    hub = WidgetV1

    def convert_to(self, src: WidgetV1alpha1) -> WidgetV1:
        spec = WidgetV1Spec()
        if src.spec is not UNSET and src.spec.size is not UNSET:
            digits = "".join(c for c in src.spec.size if c.isdigit())
            spec = WidgetV1Spec(size=Size(value=int(digits), unit=src.spec.size[len(digits):]))
        return WidgetV1(metadata=src.metadata, spec=spec, status=src.status)

    def convert_from(self, hub: WidgetV1) -> WidgetV1alpha1:
        spec = WidgetV1alpha1Spec()
        if hub.spec is not UNSET and hub.spec.size is not UNSET:
            spec = WidgetV1alpha1Spec(size=f"{hub.spec.size.value}{hub.spec.size.unit}")
        return WidgetV1alpha1(metadata=hub.metadata, spec=spec, status=hub.status)
