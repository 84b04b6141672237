"""The kopf migration guide (docs/guides/migrating-from-kopf.md): its snippets are included from
regions of examples/kopf_migration.py and of this file, and this file runs them against the
embedded server."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from samplecontroller.apimachinery import errors
from samplecontroller.kubernetes.apis.core.v1 import ConfigMap
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.kubernetes.clientset import Clientset
from samplecontroller.kubernetes.scheme import SCHEME
from samplecontroller.runtime.manager import Manager, Options
from samplecontroller.runtime.webhook.admission import ValidatingHandler
from samplecontroller.testing import wait_for
from tests.examples.test_examples import load

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guides" / "migrating-from-kopf.md"
SOURCES = [ROOT / "examples" / "kopf_migration.py", Path(__file__)]
WHOLE = [ROOT / "examples" / "kopf" / f"{name}.py" for name in ("exceptions", "daemons", "builtins", "hooks")]


def test_the_operator_does_what_the_kopf_one_did(rest: Any, ns: str) -> None:
    demo = load("kopf_migration")
    cms = Clientset(rest).core_v1().configmaps(ns)

    def child_size() -> str | None:
        try:
            return (cms.get("p-child").data or {}).get("size")
        except errors.NotFoundError:
            return None

    # --8<-- [start:runner]
    from samplecontroller.kubernetes.scheme import SCHEME  # built-in kinds (ConfigMap here)
    from samplecontroller.testing import wait_for  # None, msgspec.UNSET, NotFound: not yet
    from samplecontroller.testing.runner import OperatorRunner  # kopf.testing.KopfRunner

    mgr = Manager(rest, scheme=SCHEME, options=Options(namespaces=(ns,)))
    demo.setup(mgr, audit_every=0.1)
    with OperatorRunner(mgr) as runner:
        meta = ObjectMeta(name="p", namespace=ns, labels={"app": "demo"})
        cms.create(ConfigMap(metadata=meta))
        wait_for(lambda: "data.size is missing" in runner.output,
                 what="the permanent error")
        cms.patch("p", {"data": {"size": "3"}})
        wait_for(lambda: child_size() == "3", what="the adopted child")
        # ... the daemon, the timer, the index and the deletion, below
        check_the_rest(demo, mgr, cms, ns)
    assert runner.exit_code == 0 and runner.exception is None
    assert "Reconciler error (terminal, not requeued)" in runner.output
    # --8<-- [end:runner]
    assert runner.output.count("data.size is not set yet; retrying") == 3  # three retries first
    assert f"[{ns}/p] Child created" in runner.output


def check_the_rest(demo: Any, mgr: Manager, cms: Any, ns: str) -> None:
    wait_for(lambda: demo.sizes_seen.get("p") == "3", what="the daemon seeing the latest version")
    wait_for(lambda: demo.async_seen.get("p") == "3", what="the async daemon seeing the latest version")
    wait_for(lambda: "p" in demo.audits, what="the timer")
    wait_for(lambda: [c.metadata.name for c in demo.children_of(mgr.get_client(), ns, "p")] == ["p-child"],
             what="the index")
    events = Clientset(mgr.rest).core_v1().events(ns)
    wait_for(lambda: [e for e in events.list().items if e.reason == "ChildSynced"], what="the Event")
    cms.delete("p")
    wait_for(lambda: "p" in demo.cleaned_up, what="the on-delete cleanup")
    wait_for(lambda: demo.async_stopped == ["p"], what="the async daemon cancelled on deletion")
    wait_for(lambda: _gone(cms, "p"), what="the parent deleted once cleaned up")


def _gone(cms: Any, name: str) -> bool:
    try:
        cms.get(name)
    except errors.NotFoundError:
        return True
    return False


def review(size: str) -> dict[str, Any]:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "ns"},
           "data": {"size": size}}
    return {"uid": "u1", "operation": "CREATE", "object": obj, "kind": {"group": "", "version": "v1", "kind": "ConfigMap"}}


def test_the_validator_denies_and_warns(rest: Any) -> None:
    demo = load("kopf_migration")
    handler = ValidatingHandler(ConfigMap, demo.SizeValidator())
    denied = handler.handle(review("big"))
    assert not denied["allowed"] and "data.size must be a number, not 'big'" in denied["status"]["message"]
    warned = handler.handle(review("200"))
    assert warned["allowed"] and warned["warnings"] == ["sizes above 100 are slow"]
    mgr = Manager(rest, scheme=SCHEME)
    demo.setup(mgr, webhooks=True)
    assert "/validate-core-v1-configmap" in mgr.get_webhook_server()._handlers


# -- the guide includes exactly these files' regions ------------------------------------------

INCLUDE = re.compile(r'^```python\n--8<-- "(?P<file>[\w/.]+)(:(?P<name>[\w-]+))?"\n```$', re.M)


def regions(path: Path) -> list[str]:
    """The names of a file's snippet sections (``# --8<-- [start:NAME]`` to ``[end:NAME]``)."""
    text = path.read_text()
    starts = re.findall(r"^[ \t]*# --8<-- \[start:([\w-]+)\]$", text, re.M)
    ends = re.findall(r"^[ \t]*# --8<-- \[end:([\w-]+)\]$", text, re.M)
    assert sorted(starts) == sorted(ends), f"{path}: unbalanced snippet sections"
    return starts


def test_every_snippet_in_the_guide_is_a_tested_region() -> None:
    guide = GUIDE.read_text()
    shown = [(m["file"], m["name"] or "") for m in INCLUDE.finditer(guide)]
    assert guide.count("```python") == len(shown), "a python block that is not an --8<-- include"
    expected = [(str(src.relative_to(ROOT)), name) for src in SOURCES for name in regions(src)]
    # whole files (the kopf example ports, tested by tests/examples/test_kopf_examples.py)
    expected += [(str(src.relative_to(ROOT)), "") for src in WHOLE]
    assert sorted(shown) == sorted(expected), "the guide and the regions differ"
    for link in re.findall(r"\]\((?!https?:)([^)#]+)", guide):
        assert (GUIDE.parent / link).exists(), f"broken relative link {link}"
