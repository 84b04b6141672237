"""Package names of API groups: distinct and deterministic without help (more DNS labels where the
first collides), overridable with ``--group-package GROUP=NAME``; only an override can collide."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from samplecontroller.codegen.naming import PackageNameError, group_packages
from tests.codegen.test_generator import crd_doc, snapshot, write_crds

BUILTIN = {"core": "", "apps": "apps", "coordination": "coordination.k8s.io", "meta": "meta.k8s.io"}


def test_first_label_when_unique() -> None:
    assert group_packages(["cert-manager.io", "acme.cert-manager.io", "kafka.strimzi.io"], BUILTIN) == {
        "cert-manager.io": "cert_manager", "acme.cert-manager.io": "acme", "kafka.strimzi.io": "kafka"}


def test_colliding_groups_take_more_labels() -> None:
    names = group_packages(["gateway.networking.k8s.io", "gateway.networking.x-k8s.io", "core.strimzi.io",
                            "apps.example.com", "class.example.com", "start.example.com"], BUILTIN)
    assert names == {
        "gateway.networking.k8s.io": "gateway_networking_k8s",
        "gateway.networking.x-k8s.io": "gateway_networking_x_k8s",
        "core.strimzi.io": "core_strimzi",  # not the core group ''
        "apps.example.com": "apps_example",  # not the built-in apps
        "class.example.com": "class_example",  # not a keyword
        "start.example.com": "start_example",  # not SharedInformerFactory.start
    }


def test_names_depend_on_the_set_of_groups_only() -> None:
    groups = ["b.x.io", "b.y.io", "a.x.io", "c.io"]
    assert group_packages(groups, BUILTIN) == group_packages(list(reversed(groups)), BUILTIN)


def test_overrides_win_and_automatic_names_avoid_them() -> None:
    names = group_packages(["gateway.networking.k8s.io", "gateway.networking.x-k8s.io", "x.io"], BUILTIN,
                           {"gateway.networking.x-k8s.io": "gatewayx", "x.io": "gateway"})
    assert names == {"gateway.networking.x-k8s.io": "gatewayx", "x.io": "gateway",
                     "gateway.networking.k8s.io": "gateway_networking"}


@pytest.mark.parametrize(("overrides", "message"), [
    ({"a.example.com": "core"}, "already the package of group ''"),
    ({"a.example.com": "same", "b.example.com": "same"}, "already the package of group 'a.example.com'"),
    ({"nowhere.io": "x"}, "no CRD has the group 'nowhere.io'"),
    ({"a.example.com": "Not-A-Name"}, "must be a lowercase Python identifier"),
    ({"a.example.com": "import"}, "must be a lowercase Python identifier"),
])
def test_a_colliding_or_bad_override_is_an_error(overrides: dict[str, str], message: str) -> None:
    with pytest.raises(PackageNameError, match=message):
        group_packages(["a.example.com", "b.example.com"], BUILTIN, overrides)


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
    assert {"core", "core_strimzi", "kafka", "gateway_networking_k8s", "gateway_networking_x_k8s"} <= apis
    clientset = (out / "clientset" / "__init__.py").read_text()
    assert "self.core_strimzi_v1 = CoreStrimziV1Client(rest)" in clientset
    overridden = tmp_path / "overridden"
    assert codegen.main(["--crds", str(crds), "--output", str(overridden), "--group-package",
                         "gateway.networking.x-k8s.io=gatewayx", "--group-package", "core.strimzi.io=strimzi"]) == 0
    apis = {p.name for p in (overridden / "apis").iterdir() if p.is_dir()}
    assert {"strimzi", "gateway", "gatewayx"} <= apis and "core_strimzi" not in apis


@pytest.mark.parametrize(("flags", "expected"), [
    (["--group-package", "core.strimzi.io=apps"], "'apps' is already the package of group 'apps'"),
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
