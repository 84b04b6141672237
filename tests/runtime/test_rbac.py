"""RBAC from code (issue 40): declarations, inference from a Manager's setup, controller-gen's
merging and sorting, and this repository's generated config/rbac/role.yaml."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
import yaml

from samplecontroller import manifests
from samplecontroller.runtime import rbac

ROOT = Path(__file__).resolve().parents[2]


def test_normalize_merges_and_sorts_as_controller_gen() -> None:
    rules = [
        rbac.Rule(groups=("apps",), resources=("deployments",), verbs=("get", "list")),
        rbac.Rule(groups=("apps",), resources=("deployments",), verbs=("watch", "get")),
        rbac.Rule(groups=("apps",), resources=("replicasets", "deployments/status"), verbs=("get",)),
        rbac.Rule(groups=("core",), resources=("pods",), verbs=("get", "list", "watch")),
        rbac.Rule(groups=("batch",), resources=("jobs",), verbs=("*", "get")),
        rbac.Rule(urls=("/metrics",), verbs=("get",)),
        rbac.Rule(urls=("/healthz",), verbs=("get",)),
    ]
    got = [r.policy_rule() for r in rbac.normalize(rules)]
    assert got == [
        {"nonResourceURLs": ["/healthz", "/metrics"], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["apps"], "resources": ["deployments/status", "replicasets"], "verbs": ["get"]},
        {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["*"]},
    ]
    # the same groups merged where resources and verbs agree
    merged = rbac.normalize([rbac.Rule(groups=("b",), resources=("x",), verbs=("get",)),
                             rbac.Rule(groups=("a",), resources=("x",), verbs=("get",))])
    assert [r.policy_rule() for r in merged] == [{"apiGroups": ["a", "b"], "resources": ["x"], "verbs": ["get"]}]


def test_declarations_at_module_level_and_as_decorators(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rbac, "_DECLARED", [])
    rbac.rule(groups="batch", resources="jobs;cronjobs", verbs="get;list;watch", namespace="jobs")

    @rbac.rule(groups=["core"], resources=["secrets"], verbs=["get"], resource_names=["token"])
    def reads_a_secret() -> str:
        return "kept"

    assert reads_a_secret() == "kept"
    got = rbac.declared([__name__])
    assert [r.sources for r in got] == [(__name__,), (f"{__name__}.{reads_a_secret.__qualname__}",)]
    assert got[0].resources == ("jobs", "cronjobs") and got[0].namespace == "jobs" and got[1].groups == ("",)
    assert rbac.declared(["elsewhere"]) == []
    docs = rbac.roles(got, "op")
    assert [(d["kind"], d["metadata"]) for d in docs] == [
        ("ClusterRole", {"name": "op"}), ("Role", {"name": "op", "namespace": "jobs"})]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"groups": "apps", "resources": "deployments"}, "verbs are required"),
    ({"groups": "apps", "resources": "deployments", "verbs": "Get"}, "verbs are lower case words"),
    ({"groups": "apps", "verbs": "get"}, "give resources (with groups) or urls"),
    ({"resources": "deployments", "verbs": "get"}, "resources need groups"),
    ({"urls": "/metrics", "resources": "pods", "groups": "", "verbs": "get"}, "urls (non-resource URLs) go in"),
])
def test_a_bad_declaration_is_a_rule_error_naming_it(monkeypatch: pytest.MonkeyPatch, kwargs: dict[str, str],
                                                     message: str) -> None:
    monkeypatch.setattr(rbac, "_DECLARED", [])
    with pytest.raises(rbac.RuleError, match=rf"^rbac.rule at {__name__}:\d+: .*{re.escape(message)}"):
        rbac.rule(**kwargs)  # type: ignore[arg-type]


def test_the_runtime_controllers_needs_are_inferred_from_its_manager() -> None:
    from samplecontroller import foo_reconciler
    from samplecontroller.rest import RESTClient
    from samplecontroller.rest.config import Config

    mgr = foo_reconciler.new_manager(RESTClient(Config(host="https://127.0.0.1:1")), resync=0)
    foo_reconciler.FooReconciler(mgr.get_client(), mgr.get_event_recorder_for("x")).setup_with_manager(mgr, 1)
    got = {(r.groups, r.resources, r.verbs, r.sources) for r in rbac.inferred(mgr)}
    assert got == {
        (("samplecontroller.k8s.io",), ("foos",), ("get", "list", "watch"), ("controller foo watches foos",)),
        (("apps",), ("deployments",), ("get", "list", "watch"), ("controller foo watches deployments",)),
        (("samplecontroller.k8s.io",), ("foos/finalizers",), ("update",),
         ("controller foo owns deployments (blockOwnerDeletion)",)),
        (("",), ("events",), ("create", "patch"), ("the manager's event recorder",)),
    }


def test_a_daemons_kind_and_finalizer_are_inferred() -> None:
    from generated.apis.samplecontroller.v1alpha1 import Foo
    from samplecontroller import foo_reconciler
    from samplecontroller.rest import RESTClient
    from samplecontroller.rest.config import Config
    from samplecontroller.runtime import daemon

    mgr = foo_reconciler.new_manager(RESTClient(Config(host="https://127.0.0.1:1")), resync=0)
    daemon.add_daemon(mgr, Foo, lambda d: None, name="watcher", finalizer="example.com/watcher")
    got = {(r.resources, r.verbs, r.sources) for r in rbac.inferred(mgr)}
    assert got == {(("foos",), ("get", "list", "watch"), ("daemon watcher watches foos",)),
                   (("foos",), ("patch",), ("daemon watcher keeps the finalizer example.com/watcher",)),
                   (("events",), ("create", "patch"), ("the manager's event recorder",))}


def test_config_rbac_role_is_generated_from_the_code_and_checked_for_staleness(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """make verify runs hack/update_manifests.py --verify; dropping one declaration (the Deployment
    create beside foo.new_deployment) makes the committed role stale."""
    spec = importlib.util.spec_from_file_location("update_manifests", ROOT / "hack" / "update_manifests.py")
    assert spec is not None and spec.loader is not None
    update_manifests = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(update_manifests)
    files = update_manifests.files()
    assert manifests.write_or_verify(files, True, "make manifests") == []
    text = files[update_manifests.ROLE]
    assert text.startswith("# Code generated by samplecontroller.manifests. DO NOT EDIT.\n")
    cluster_role, lease_role = yaml.safe_load_all(text)
    assert {"apiGroups": ["apps"], "resources": ["deployments"],
            "verbs": ["create", "get", "list", "patch", "watch"]} in cluster_role["rules"]
    assert lease_role["metadata"] == {"name": "sample-controller", "namespace": "sample-controller-system"}
    assert lease_role["rules"] == [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                                    "verbs": ["create", "get", "update"]}]

    kept = [r for r in rbac._DECLARED if r.sources != ("samplecontroller.foo.new_deployment",)]
    assert len(kept) == len(rbac._DECLARED) - 1
    monkeypatch.setattr(rbac, "_DECLARED", kept)
    stale = manifests.write_or_verify(update_manifests.files(), True, "make manifests")
    assert stale == [f"{update_manifests.ROLE} is stale: run make manifests"]


def test_the_command_line_writes_verifies_and_reports_mistakes_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """python -m samplecontroller.manifests (its main, in this process, from the project's directory)."""
    pkg = tmp_path / "myop"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "jobs.py").write_text('from samplecontroller.runtime import rbac\n'
                                 'rbac.rule(groups="batch", resources="jobs", verbs="create;get")\n')
    (pkg / "__main__.py").write_text("raise SystemExit('a program, never imported')\n")
    role = tmp_path / "config" / "role.yaml"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(rbac, "_DECLARED", [])

    def run(*extra: str) -> int:
        for name in [m for m in sys.modules if m == "myop" or m.startswith("myop.")]:
            del sys.modules[name]
        rbac._DECLARED.clear()
        return manifests.main(["--package", "myop", "--role-name", "op", "--rbac", str(role), *extra])

    assert run("--verify") == 1
    assert capsys.readouterr().err == f"{role} is missing: run make manifests\n"
    assert run() == 0
    assert yaml.safe_load(role.read_text())["rules"] == [
        {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["create", "get"]}]
    assert run("--verify") == 0
    (pkg / "jobs.py").write_text('from samplecontroller.runtime import rbac\nrbac.rule(groups="batch", verbs="get")\n')
    assert run() == 1
    assert capsys.readouterr().err == ("python -m samplecontroller.manifests: rbac.rule at myop.jobs:2: give "
                                       "resources (with groups) or urls\n")
    assert str(tmp_path) not in sys.path
