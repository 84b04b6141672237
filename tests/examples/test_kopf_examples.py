"""kopf's example operators 02-05, 09-16 and 99 ported (examples/kopf/), each run against the
shared embedded API server, and each in no more lines than kopf's own plus its imports."""

from __future__ import annotations

import importlib.util
import json
import logging
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.testing import install_crds
from samplecontroller.client.scheme import Scheme
from samplecontroller.client.unstructured import Unstructured, unstructured
from samplecontroller.kubernetes.apis.core.v1 import Container, Pod, PodSpec
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.kubernetes.clientset import Clientset
from samplecontroller.kubernetes.scheme import add_to_scheme
from samplecontroller.rest import RESTClient
from samplecontroller.runtime.client import Client
from samplecontroller.runtime.manager import Manager, Options
from samplecontroller.testing import wait_for
from samplecontroller.testing.runner import OperatorRunner
from tests.live import http_get, ns, rest

__all__ = ["ns", "rest"]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "kopf"
KEX = unstructured("kopf.dev/v1", "KopfExample")

# kopf's examples/<NN-name>/example.py, lines (nolar/kopf at the version ported)
KOPF_LINES = {"children": 39, "exceptions": 37, "events": 22, "handlers": 43, "testing": 8, "builtins": 45,
              "filtering": 94, "embedded": 106, "hooks": 92, "daemons": 42, "timers": 13, "indexing": 49,
              "all_at_once": 116}


def line_counts(path: Path) -> tuple[int, int]:
    """(lines, import lines): top-level ``import``/``from`` statements, continuations included."""
    lines = path.read_text().splitlines()
    imports, inside = 0, False
    for line in lines:
        if inside or re.match(r"(import|from) \S", line):
            imports += 1
            inside = line.rstrip().endswith("(") or (inside and not line.rstrip().endswith(")"))
    return len(lines), imports


@pytest.mark.parametrize("name", sorted(KOPF_LINES))
def test_each_port_has_no_more_lines_than_kopfs_own_plus_its_imports(name: str) -> None:
    lines, imports = line_counts(EXAMPLES / f"{name}.py")
    assert lines <= KOPF_LINES[name] + imports, f"{name}: {lines} lines > kopf's {KOPF_LINES[name]} + {imports}"


# -- running them -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def crds(apiserver: LocalAPIServer) -> None:
    install_crds(apiserver, EXAMPLES / "crds")


def load(name: str) -> Any:
    """A fresh copy of examples/kopf/<name>.py (their module state is per test)."""
    spec = importlib.util.spec_from_file_location(f"kopf_example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def scheme() -> Scheme:
    s = Scheme()
    add_to_scheme(s)
    Unstructured("kopf.dev/v1", "KopfExample").add_to_scheme(s)
    return s


def manager(rest: RESTClient, ns: str, **options: Any) -> Manager:
    return Manager(rest, Options(namespaces=(ns,), **options), scheme=scheme())


@pytest.fixture
def api(rest: RESTClient, ns: str, crds: None) -> Client:
    return Client.for_rest_client(rest, None, scheme=scheme())


def kex(api: Client, ns: str, name: str = "kopf-example-1", **fields: Any) -> dict[str, Any]:
    metadata = {"namespace": ns, "name": name, **fields.pop("metadata", {})}
    created: dict[str, Any] = api.create({"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": metadata,
                                         **fields})
    return created


def get(api: Client, ns: str, name: str = "kopf-example-1") -> dict[str, Any]:
    return api.get(KEX, ns, name)


def gone(api: Client, model: Any, ns: str, name: str) -> bool:
    return name not in [o["metadata"]["name"] if isinstance(o, dict) else o.metadata.name
                        for o in api.list(model, namespace=ns)]


def pod(ns: str, name: str, **labels: str) -> Pod:
    return Pod(metadata=ObjectMeta(name=name, namespace=ns, labels=dict(labels)),
               spec=PodSpec(containers=(Container(name="c", image="busybox"),)))


@pytest.fixture
def printed(capsys: pytest.CaptureFixture[str]) -> Iterator[Any]:
    seen: list[str] = []

    def lines() -> list[str]:
        seen.extend(capsys.readouterr().out.splitlines())
        return seen

    yield lines


def test_02_children(rest: RESTClient, ns: str, api: Client) -> None:
    mgr = manager(rest, ns)
    load("children").setup(mgr)
    with OperatorRunner(mgr):
        kex(api, ns, spec={"duration": 1, "field": "value"})
        children = wait_for(lambda: get(api, ns).get("status", {}).get("create_fn", {}).get("children"))
        pods: list[Any] = list(Clientset(rest).core_v1().pods(ns).list().items)
        assert [p.metadata.uid for p in pods] == children
        (owner,) = list(pods[0].metadata.owner_references)
        assert (owner.kind, owner.name, owner.controller) == ("KopfExample", "kopf-example-1", True)
        assert pods[0].spec.containers[0].env[0].value == "value"


def test_03_exceptions(rest: RESTClient, ns: str, api: Client) -> None:
    example = load("exceptions")
    example.DELAY = 0.05
    mgr = manager(rest, ns)
    example.setup(mgr)
    with OperatorRunner(mgr) as runner:
        kex(api, ns)
        annotation = "samplecontroller.io/last-handled.eventual-success-with-a-few-messages"
        wait_for(lambda: annotation in get(api, ns)["metadata"].get("annotations", {}), what="the eventual success")
        wait_for(lambda: runner.output.count("(terminal, not requeued)") == 3, what="the three final failures")

    def errors(controller: str) -> list[Any]:
        return [r for r in runner.records if getattr(r, "kv", {}).get("controller") == controller
                and r.levelno >= logging.ERROR]

    success = errors("eventual-success-with-a-few-messages")
    assert [r.kv["retry_after"] for r in success] == [0.05] * 3  # type: ignore[attr-defined]
    (permanent,) = errors("instant-failure-with-only-a-message")
    assert permanent.kv["error"] == "PermanentError: Fail once and for all."  # type: ignore[attr-defined]
    assert "traceback" not in permanent.kv  # type: ignore[attr-defined]
    retried = errors("eventual-failure-with-tracebacks")
    assert [r.getMessage() for r in retried] == ["Reconciler error"] * 2 + ["Reconciler error (terminal, not requeued)"]
    assert all("MyException: An error" in r.kv["traceback"] for r in retried)  # type: ignore[attr-defined]
    (instant,) = errors("instant-failure-with-traceback")
    assert "MyException" in instant.kv["traceback"]  # type: ignore[attr-defined]


def test_04_events(rest: RESTClient, ns: str, api: Client) -> None:
    mgr = manager(rest, ns)
    load("events").setup(mgr)
    events = Clientset(rest).core_v1().events(ns)
    with OperatorRunner(mgr) as runner:
        kex(api, ns)

        def about_the_object() -> list[tuple[Any, ...]] | None:
            found: list[Any] = list(events.list().items)
            return sorted((e.type, e.reason, e.message) for e in found) if len(found) >= 3 else None

        posted = wait_for(about_the_object)
    assert ("Normal", "SomeReason", "Some message") in posted
    assert ("Warning", "SomeReason", "Some message") in posted
    assert ("Warning", "SomeReason", "Some exception: Exception text.") in posted
    assert 'msg="Unsupported event type" type=SomeType' in runner.output, "refused loudly, as Go's recorder"


def test_05_handlers(rest: RESTClient, ns: str, api: Client, printed: Any) -> None:
    mgr = manager(rest, ns)
    load("handlers").setup(mgr)
    with OperatorRunner(mgr):
        kex(api, ns, spec={"field": "a"})
        wait_for(lambda: {"CREATED 1st", "CREATED 2nd", "FIELD CHANGED: None -> a"} <= set(printed()))
        # the update handler has seen the creation (its own controller: on a busy machine it may
        # lag the others, and a first look at field b would be a creation, not an update)
        wait_for(lambda: "samplecontroller.io/last-handled.update-fn" in
                 (get(api, ns)["metadata"].get("annotations") or {}), what="the update handler's mark")
        api.patch(get(api, ns), _merge({"spec": {"field": "b"}}))
        wait_for(lambda: "FIELD CHANGED: a -> b" in printed())
        wait_for(lambda: any(line.startswith("UPDATED ((") for line in printed()))
    assert "UPDATED (('change', ('spec', 'field'), 'a', 'b'),)" in printed()
    assert not [line for line in printed() if line.startswith("RESUMED")]
    restarted = manager(rest, ns)
    load("handlers").setup(restarted)
    with OperatorRunner(restarted):  # kopf's on.resume: objects found at start
        wait_for(lambda: {"RESUMED 1st", "RESUMED 2nd"} <= set(printed()))
        wait_for(lambda: len(get(api, ns)["metadata"].get("finalizers", [])) == 2, what="each on-delete's finalizer")
        api.delete(get(api, ns))
        wait_for(lambda: {"DELETED 1st", "DELETED 2nd"} <= set(printed()))
        wait_for(lambda: gone(api, KEX, ns, "kopf-example-1"))
    assert printed().count("CREATED 1st") == 1


def _merge(body: dict[str, Any]) -> Any:
    from samplecontroller.client.types import MERGE_PATCH
    from samplecontroller.runtime.client import RawPatch

    return RawPatch(MERGE_PATCH, body)


def test_09_testing(rest: RESTClient, ns: str, api: Client) -> None:
    mgr = manager(rest, ns)
    load("testing").setup(mgr)
    with OperatorRunner(mgr) as runner:  # kopf.testing.KopfRunner
        kex(api, ns)
        wait_for(lambda: f"[{ns}/kopf-example-1] Something was logged here." in runner.output)
        api.delete(get(api, ns))
    assert runner.exception is None and runner.exit_code == 0


def test_10_builtins_a_daemon_deleting_its_own_pod(rest: RESTClient, ns: str, api: Client) -> None:
    example = load("builtins")
    example.TIMEOUT = 0.3
    mgr = manager(rest, ns)
    example.setup(mgr)
    pods = Clientset(rest).core_v1().pods(ns)
    with OperatorRunner(mgr) as runner:
        for i in range(5):
            pods.create(pod(ns, f"p{i}"))
        wait_for(lambda: runner.output.count("Pod killing happens in") == 5, what="five killers")
        pods.delete("p0")  # before its killer: cancelled
        wait_for(lambda: not pods.list().items, what="every pod deleted")
    assert f'msg="[{ns}/p0] === Pod killing is cancelled!"' in runner.output
    assert runner.output.count("Pod killing happens NOW!") == 4


def test_11_filtering(rest: RESTClient, ns: str, api: Client) -> None:
    mgr = manager(rest, ns)
    load("filtering").setup(mgr)
    with OperatorRunner(mgr) as runner:
        kex(api, ns, metadata={"labels": {"somelabel": "somevalue"}, "annotations": {"someannotation": "somevalue"}},
            spec={"field": "value"})
        wait_for(lambda: "Field daemon is satisfied." in runner.output)
        wait_for(lambda: "Field presence is satisfied." in runner.output)
        wait_for(lambda: "samplecontroller.io/last-handled.update-with-field-change"
                 in get(api, ns)["metadata"].get("annotations", {}), what="the creation handled by the update handler")
        api.patch(get(api, ns), _merge({"spec": {"field": "changed"}}))
        wait_for(lambda: "Field change is satisfied." in runner.output)
        wait_for(lambda: "Daemon stopping" in runner.output, what="the daemon stopped: no longer matching")
    said = {m for m in re.findall(r'msg="\[[^]]*\] ([^"]*)"', runner.output)}
    assert {"Label is matching.", "Label is present.", "Label is absent.", "Label callback matching.",
            "Annotation is matching.", "Annotation is present.", "Annotation is absent.", "Filter satisfied.",
            "Field value is satisfied.", "Field presence is satisfied."} <= said
    assert not {"Annotation callback mismatch.", "Filter not satisfied.", "Field value is not satisfied.",
                "Field presence is not satisfied."} & said


def test_12_embedded(rest: RESTClient, ns: str, api: Client) -> None:
    example = load("embedded")
    example.main(rest, ns, steps=2)
    assert example.printed == [
        "Starting the main app.",
        "Do the main app activity here. Step 1/2.", "Hello, kopf-example-0!", "Good bye, kopf-example-0!",
        "Do the main app activity here. Step 2/2.", "Hello, kopf-example-1!", "Good bye, kopf-example-1!",
        "Exiting the main app."]


def test_13_hooks(rest: RESTClient, ns: str, api: Client) -> None:
    example = load("hooks")
    example.SCALE = 0.01
    mgr = manager(rest, ns, health_probe_bind_address="127.0.0.1:0")
    example.setup(mgr)
    with OperatorRunner(mgr) as runner:
        Clientset(rest).core_v1().pods(ns).create(pod(ns, "p"))
        wait_for(lambda: "Served by the background task." in runner.output)
        port = mgr.server_addresses()[0][1]
        assert json.loads(http_get(port, "/healthz?format=json")[1]) == {
            "monitored_objects": {ns: ["p"]}, "tasks_count": 1}
    out = runner.output
    assert out.count('msg="Startup hook failed; retrying in 0.01s"') == 3
    assert out.index("Starting retried...") < out.index("Starting daemons")
    assert "Cleaning up..." in out and "All pod-tasks are requested to stop..." in out


def test_14_daemons(rest: RESTClient, ns: str, api: Client) -> None:
    example = load("daemons")
    example.SCALE = 0.01
    mgr = manager(rest, ns)
    example.setup(mgr)
    with OperatorRunner(mgr) as runner:
        kex(api, ns, metadata={"annotations": {"someannotation": "somevalue"}}, spec={"field": "x"})
        wait_for(lambda: "=> Ping from a sync daemon: field='x', retry=3" in runner.output)
        wait_for(lambda: "=> Ping from an async daemon: field='x'" in runner.output)
        assert get(api, ns)["status"]["message"] == "Failed 3 times."
        api.delete(get(api, ns))
        wait_for(lambda: gone(api, KEX, ns, "kopf-example-1"), what="the object released by its daemon")
    out = runner.output
    assert out.count("Daemon failed temporarily; retrying in 0.01s") == 6
    assert f'msg="[{ns}/kopf-example-1] Daemon cancelled" daemon=background_async' in out
    assert f'msg="[{ns}/kopf-example-1] Daemon stopped" daemon=background_sync' in out


def test_15_timers(rest: RESTClient, ns: str, api: Client) -> None:
    mgr = manager(rest, ns)
    load("timers").setup(mgr, 0.02)
    with OperatorRunner(mgr) as runner:
        kex(api, ns, spec={"field": "x"})
        wait_for(lambda: "Ping from a sync timer: field='x'" in runner.output)
        wait_for(lambda: "Ping from an async timer: field='x'" in runner.output)


def test_16_indexing(rest: RESTClient, ns: str, api: Client) -> None:
    mgr = manager(rest, ns, health_probe_bind_address="127.0.0.1:0")
    load("indexing").setup(mgr, interval=0.05)
    core = Clientset(rest).core_v1()
    with OperatorRunner(mgr):
        core.pods(ns).create(pod(ns, "a", app="x"))
        core.pods(ns).create(pod(ns, "b", app="x"))
        core.pods(ns).patch("a", {"status": {"phase": "Running"}}, subresource="status")
        kex(api, ns)
        wait_for(lambda: get(api, ns).get("status", {}).get("running-pods") == [f"{ns}::a"])
        port = mgr.server_addresses()[0][1]
        probes = wait_for(lambda: json.loads(http_get(port, "/healthz?format=json")[1]))
        assert (probes["pod_count"], sorted(probes["pod_names"])) == (2, ["a", "b"])
        whole = mgr.get_cache().index(Pod, "label")  # kopf's Index read whole
        assert {k: sorted(str(p.metadata.name) for p in v) for k, v in whole.items()} == {"app=x": ["a", "b"]}
        assert set(mgr.get_cache().index(Pod, "running")) == {"True", "False"}


def test_99_all_at_once(rest: RESTClient, ns: str, api: Client, printed: Any) -> None:
    example = load("all_at_once")
    example.SCALE = 0.01
    mgr = manager(rest, ns)
    example.setup(mgr)
    with OperatorRunner(mgr) as runner:
        kex(api, ns, spec={"lst": [1]})
        wait_for(lambda: get(api, ns).get("status", {}).get("create_2") == {"job2-status": 100})
        assert get(api, ns)["status"]["create_1"] == {"job1-status": 100}
        wait_for(lambda: "This pod is special for us." in runner.output)
        api.patch(get(api, ns), _merge({"spec": {"lst": [1, 2]}}))
        wait_for(lambda: "Handling the FIELD = [1] -> [1, 2]" in printed())
        api.delete(get(api, ns))
        wait_for(lambda: gone(api, KEX, ns, "kopf-example-1"))
    out = runner.output
    for line in ("Starting in 1s...", "Starting retried...", "Cleaning up in 3s...", "Whoops!"):
        assert line in out, line
    assert "Handling the diff" in printed()


def test_the_examples_leave_no_thread_behind() -> None:
    assert not [t for t in threading.enumerate() if t.name.startswith("runnable-") and t.is_alive()]
