"""Package names of API groups: distinct and deterministic without help (more DNS labels where the
first collides), overridable with ``--group-package GROUP=NAME``; only an override can collide."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from samplecontroller.codegen.naming import PackageNameError, group_packages
from tests.codegen.test_generator import crd_doc, snapshot, write_crds

# The generator reserves no name: the built-in groups live in samplecontroller.kubernetes, never
# in a package generated from CRDs.
NONE_RESERVED: dict[str, str] = {}


def test_first_label_when_unique() -> None:
    assert group_packages(["cert-manager.io", "acme.cert-manager.io", "kafka.strimzi.io"], NONE_RESERVED) == {
        "cert-manager.io": "cert_manager", "acme.cert-manager.io": "acme", "kafka.strimzi.io": "kafka"}


def test_colliding_groups_take_more_labels() -> None:
    names = group_packages(["gateway.networking.k8s.io", "gateway.networking.x-k8s.io", "core.strimzi.io",
                            "apps.example.com", "class.example.com", "start.example.com"], NONE_RESERVED)
    assert names == {
        "gateway.networking.k8s.io": "gateway_networking_k8s",
        "gateway.networking.x-k8s.io": "gateway_networking_x_k8s",
        "core.strimzi.io": "core",  # the built-in core group is not in the generated package
        "apps.example.com": "apps",  # nor is apps
        "class.example.com": "class_example",  # not a keyword
        "start.example.com": "start_example",  # not SharedInformerFactory.start
    }


def test_reserved_names_are_avoided() -> None:
    names = group_packages(["core.strimzi.io", "apps.example.com"], {"core": "", "apps": "apps.example.com"})
    assert names == {"core.strimzi.io": "core_strimzi", "apps.example.com": "apps"}


def test_names_depend_on_the_set_of_groups_only() -> None:
    groups = ["b.x.io", "b.y.io", "a.x.io", "c.io"]
    assert group_packages(groups, NONE_RESERVED) == group_packages(list(reversed(groups)), NONE_RESERVED)


def test_overrides_win_and_automatic_names_avoid_them() -> None:
    names = group_packages(["gateway.networking.k8s.io", "gateway.networking.x-k8s.io", "x.io"], NONE_RESERVED,
                           {"gateway.networking.x-k8s.io": "gatewayx", "x.io": "gateway"})
    assert names == {"gateway.networking.x-k8s.io": "gatewayx", "x.io": "gateway",
                     "gateway.networking.k8s.io": "gateway_networking"}


@pytest.mark.parametrize(("overrides", "message"), [
    ({"a.example.com": "start"}, "not a keyword nor an informer factory attribute"),
    ({"a.example.com": "same", "b.example.com": "same"}, "already the package of group 'a.example.com'"),
    ({"nowhere.io": "x"}, "no CRD has the group 'nowhere.io'"),
    ({"a.example.com": "Not-A-Name"}, "must be a lowercase Python identifier"),
    ({"a.example.com": "import"}, "must be a lowercase Python identifier"),
])
def test_a_colliding_or_bad_override_is_an_error(overrides: dict[str, str], message: str) -> None:
    with pytest.raises(PackageNameError, match=message):
        group_packages(["a.example.com", "b.example.com"], NONE_RESERVED, overrides)


def strimzi_and_gateway(crds: Path) -> Path:
    return write_crds(
        crds,
        podsets=crd_doc(group="core.strimzi.io", kind="StrimziPodSet", plural="strimzipodsets"),
        topics=crd_doc(group="kafka.strimzi.io", kind="KafkaTopic", plural="kafkatopics"),
        gateways=crd_doc(group="gateway.networking.k8s.io", kind="Gateway", plural="gateways"),
        meshes=crd_doc(group="gateway.networking.x-k8s.io", kind="XMesh", plural="xmeshes"),
    )


def test_the_command_line_generates_distinct_packages(codegen: ModuleType, tmp_path: Path) -> None:
    crds = strimzi_and_gateway(tmp_path / "crds")
    out = tmp_path / "generated"
    assert codegen.main(["--crds", str(crds), "--output", str(out)]) == 0
    apis = {p.name for p in (out / "apis").iterdir() if p.is_dir()}
    assert apis == {"core", "kafka", "gateway_networking_k8s", "gateway_networking_x_k8s"}
    clientset = (out / "clientset" / "__init__.py").read_text()
    assert "def core_v1(self) -> CoreV1Client:" in clientset and "def gateway_networking_x_k8s_v1(self)" in clientset
    overridden = tmp_path / "overridden"
    assert codegen.main(["--crds", str(crds), "--output", str(overridden), "--group-package",
                         "gateway.networking.x-k8s.io=gatewayx", "--group-package", "core.strimzi.io=strimzi"]) == 0
    apis = {p.name for p in (overridden / "apis").iterdir() if p.is_dir()}
    assert apis == {"strimzi", "kafka", "gateway", "gatewayx"}


@pytest.mark.parametrize(("flags", "expected"), [
    (["--group-package", "core.strimzi.io=start"], "'start' must be a lowercase Python identifier"),
    (["--group-package", "core.strimzi.io=kafka"], "'kafka' is already the package"),
    (["--group-package", "core.strimzi.io"], "expected GROUP=NAME"),
    (["--group-package", "core.strimzi.io=a", "--group-package", "core.strimzi.io=b"], "given twice"),
])
def test_a_colliding_override_is_one_line_exit_2(codegen: ModuleType, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str], flags: list[str],
                                                 expected: str) -> None:
    crds = strimzi_and_gateway(tmp_path / "crds")
    before = snapshot(tmp_path)
    assert codegen.main(["--crds", str(crds), "--output", str(tmp_path / "out"),
                         "--group-package", "kafka.strimzi.io=kafka", *flags]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and expected in err, err
    assert snapshot(tmp_path) == before
