"""End to end: main.py as a subprocess against the embedded API server, driven by real kubectl.

The deployment-status simulator stands in for the kube-controller-manager, so a Deployment's
``status.availableReplicas`` follows its ``spec.replicas`` and the Foo's status can be checked.
"""

from __future__ import annotations

import itertools
import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.controller.conftest import ROOT, ControllerProcess, Kubectl, wait_for
from tests.live import free_port, http_get

pytestmark = [pytest.mark.kubectl, pytest.mark.slow]

_ns_counter = itertools.count()
STYLES = ["classic", "runtime", "async"]
"""The Foo controllers: controller.py, the runtime layer's FooReconciler and its async twin (main.py --controller)."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from samplecontroller.apiserver import LocalAPIServer

    tmp = tmp_path_factory.mktemp("apiserver")
    with LocalAPIServer(simulate_deployments=True, kubeconfig_path=tmp / "kubeconfig", record_requests=100_000) as s:
        yield s


@pytest.fixture(scope="module")
def kubectl(server: Any, kubectl_binary: str, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    k = Kubectl(kubectl_binary, Path(server.kubeconfig_path), tmp_path_factory.mktemp("home"))
    k.run("apply", "-f", str(ROOT / "crds"))
    k.run("wait", "--for", "condition=Established", "crd/foos.samplecontroller.k8s.io", "--timeout", "20s")
    return k


@pytest.fixture
def namespace(kubectl: Kubectl) -> str:
    name = f"e2e-{next(_ns_counter)}"
    # kubectl's create generators send protobuf, which the embedded server does not speak: apply JSON.
    kubectl.run("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "Namespace",
                                                       "metadata": {"name": name}}))
    return name


def foo_manifest(name: str, deployment_name: str, replicas: int | None) -> str:
    spec: dict[str, Any] = {"deploymentName": deployment_name}
    if replicas is not None:
        spec["replicas"] = replicas
    return json.dumps({"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                       "metadata": {"name": name}, "spec": spec})


def get(kubectl: Kubectl, ns: str, kind: str, name: str) -> Any:
    return kubectl.json("get", kind, name, "-n", ns)


def events_for(kubectl: Kubectl, ns: str, name: str, reason: str) -> list[dict[str, Any]]:
    data = kubectl.json("get", "events", "-n", ns, "--field-selector", f"involvedObject.name={name},reason={reason}")
    return list(data["items"]) if data else []


@pytest.mark.parametrize("style", STYLES)
def test_foo_lifecycle(kubectl: Kubectl, server: Any, namespace: str,
                       start_controller: Callable[..., ControllerProcess], style: str) -> None:
    ns = namespace
    controller = start_controller(Path(server.kubeconfig_path), "--controller", style)
    kubectl.run("apply", "-n", ns, "-f", str(ROOT / "examples" / "example-foo.yaml"))
    foo = wait_for(lambda: get(kubectl, ns, "foo", "example-foo"), what="the Foo")
    deployment = wait_for(lambda: get(kubectl, ns, "deployment", "example-foo"), what="the Deployment",
                          timeout=30)

    refs = deployment["metadata"]["ownerReferences"]
    assert refs == [{
        "apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "name": "example-foo",
        "uid": foo["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True,
    }]
    assert deployment["spec"]["replicas"] == foo["spec"]["replicas"]
    assert deployment["spec"]["selector"]["matchLabels"] == {"app": "nginx", "controller": "example-foo"}
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert [(c["name"], c["image"]) for c in containers] == [("nginx", "nginx:latest")]

    # Changing replicas updates the Deployment, and the simulated status flows back to the Foo.
    kubectl.run("patch", "foo", "example-foo", "-n", ns, "--type", "merge", "-p", '{"spec":{"replicas":3}}')
    wait_for(lambda: (get(kubectl, ns, "deployment", "example-foo") or {}).get("spec", {}).get("replicas") == 3,
             what="Deployment replicas 3")
    wait_for(lambda: (get(kubectl, ns, "foo", "example-foo") or {}).get("status", {}).get("availableReplicas") == 3,
             what="Foo status.availableReplicas 3")
    assert "Synced" in kubectl.run("describe", "foo", "example-foo", "-n", ns).stdout

    # Another writer's label survives the controller's replica change (improvement 2).
    kubectl.run("label", "deployment", "example-foo", "-n", ns, "team=blue")
    kubectl.run("patch", "foo", "example-foo", "-n", ns, "--type", "merge", "-p", '{"spec":{"replicas":2}}')
    wait_for(lambda: (get(kubectl, ns, "deployment", "example-foo") or {}).get("spec", {}).get("replicas") == 2,
             what="Deployment replicas 2")
    assert get(kubectl, ns, "deployment", "example-foo")["metadata"]["labels"]["team"] == "blue"

    # Deleting the Foo garbage-collects its Deployment.
    kubectl.run("delete", "foo", "example-foo", "-n", ns, "--wait=true")
    wait_for(lambda: get(kubectl, ns, "deployment", "example-foo") is None, what="the Deployment to be collected")

    assert controller.stop() == 0, controller.output()
    # nothing went wrong: an expected, retried conflict (a status write from a stale cache) is no error
    errors = [line for line in controller.output().splitlines() if "level=error" in line]
    assert errors == [], errors


@pytest.mark.parametrize("style", STYLES)
def test_unowned_deployment_warns_once_and_resumes(kubectl: Kubectl, server: Any, namespace: str,
                                                   start_controller: Callable[..., ControllerProcess], style: str) -> None:
    ns = namespace
    labels = {"app": "someone-else"}
    kubectl.run("apply", "-n", ns, "-f", "-", stdin=json.dumps({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "taken"},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}))
    controller = start_controller(Path(server.kubeconfig_path), "--controller", style)
    kubectl.run("apply", "-n", ns, "-f", "-", stdin=foo_manifest("squatter", "taken", 1))

    describe = wait_for(
        lambda: (out := kubectl.run("describe", "foo", "squatter", "-n", ns).stdout) and "ErrResourceExists" in out
        and out, what="the ErrResourceExists warning", timeout=20)
    assert 'Resource "taken" already exists and is not managed by Foo' in describe
    time.sleep(3)  # Go would record a Warning on every rate-limited retry meanwhile
    warnings = events_for(kubectl, ns, "squatter", "ErrResourceExists")
    assert sum(int(e.get("count", 1)) for e in warnings) == 1, warnings

    # Removing the squatting Deployment lets the Foo proceed at once, not after the backoff.
    kubectl.run("delete", "deployment", "taken", "-n", ns)
    dep = wait_for(lambda: get(kubectl, ns, "deployment", "taken"), what="the Foo's own Deployment", timeout=10)
    assert dep["metadata"]["ownerReferences"][0]["name"] == "squatter"
    assert controller.stop() == 0, controller.output()


@pytest.mark.parametrize("style", STYLES)
def test_changes_while_down_are_reconciled_after_restart(
        kubectl: Kubectl, server: Any, namespace: str, start_controller: Callable[..., ControllerProcess], style: str) -> None:
    ns = namespace
    kubeconfig = Path(server.kubeconfig_path)
    first = start_controller(kubeconfig, "--controller", style)
    kubectl.run("apply", "-n", ns, "-f", "-", stdin=foo_manifest("one", "one", 1))
    wait_for(lambda: get(kubectl, ns, "deployment", "one"), what="Deployment one", timeout=30)

    started = time.monotonic()
    assert first.stop(signal.SIGTERM) == 0, first.output()
    assert time.monotonic() - started < 10 + 5  # within --shutdown-timeout (10s) and some slack

    kubectl.run("patch", "foo", "one", "-n", ns, "--type", "merge", "-p", '{"spec":{"replicas":4}}')
    kubectl.run("apply", "-n", ns, "-f", "-", stdin=foo_manifest("two", "two", 2))
    time.sleep(0.5)
    assert get(kubectl, ns, "deployment", "two") is None  # nobody is reconciling

    second = start_controller(kubeconfig, "--controller", style)
    wait_for(lambda: (get(kubectl, ns, "deployment", "one") or {}).get("spec", {}).get("replicas") == 4,
             what="Deployment one at 4 replicas", timeout=30)
    wait_for(lambda: get(kubectl, ns, "deployment", "two"), what="Deployment two")
    assert second.stop() == 0, second.output()


@pytest.mark.parametrize("style", STYLES)
def test_missing_deployment_name_is_a_warning_event(
        kubectl: Kubectl, server: Any, namespace: str, start_controller: Callable[..., ControllerProcess], style: str) -> None:
    ns = namespace
    controller = start_controller(Path(server.kubeconfig_path), "--controller", style)
    kubectl.run("apply", "-n", ns, "-f", "-", stdin=json.dumps({
        "apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
        "metadata": {"name": "nameless"}, "spec": {"replicas": 1}}))
    wait_for(lambda: events_for(kubectl, ns, "nameless", "InvalidSpec"), what="the InvalidSpec warning")
    assert controller.stop() == 0, controller.output()


def _run_main(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "main.py"), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def _assert_one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "error" in line.lower()]
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0], proc.stderr


def test_crd_not_installed_says_what_to_run(tmp_path: Path) -> None:
    from samplecontroller.apiserver import LocalAPIServer

    with LocalAPIServer(kubeconfig_path=tmp_path / "kubeconfig") as s:
        proc = _run_main("--kubeconfig", str(s.kubeconfig_path))
    _assert_one_line_error(proc, "kubectl apply -f crds/")


def test_unreachable_server_and_bad_kubeconfig_are_one_line_errors(tmp_path: Path) -> None:
    _assert_one_line_error(_run_main("--kubeconfig", str(tmp_path / "missing")), str(tmp_path / "missing"))
    bad = tmp_path / "bad"
    bad.write_text("this: is: not: a kubeconfig")
    _assert_one_line_error(_run_main("--kubeconfig", str(bad)))
    _assert_one_line_error(_run_main("--master", "http://127.0.0.1:9", "--kubeconfig", str(tmp_path / "missing")))
    dead = tmp_path / "dead"
    dead.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": "http://127.0.0.1:9"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}]}))
    _assert_one_line_error(_run_main("--kubeconfig", str(dead)), "127.0.0.1:9")
    _assert_one_line_error(_run_main("--workers", "0"), "--workers")


def test_runtime_mode_manager_leads_on_the_flagged_lease_and_serves_probes(
        kubectl: Kubectl, server: Any, namespace: str, start_controller: Callable[..., ControllerProcess]) -> None:
    """``--controller runtime --leader-elect``: the Manager elects on the Lease the flags name and
    serves /healthz and /readyz with its named checks; a standby is ready (its cache syncs, as in
    controller-runtime) but does not lead until the leader stops, then takes over; the Manager
    serves /metrics on --metrics-bind-address."""
    kubeconfig = Path(server.kubeconfig_path)
    lease_args = ("--controller", "runtime", "--leader-elect", "--leader-election-namespace", namespace,
                  "--leader-election-id", "runtime-lock")
    ports, metrics_port = [free_port(), free_port()], free_port()

    def holder() -> str:
        lease = kubectl.json("get", "lease", "runtime-lock", "-n", namespace) or {}
        return str(lease.get("spec", {}).get("holderIdentity", ""))

    first = start_controller(kubeconfig, *lease_args, "--health-probe-bind-address", f"127.0.0.1:{ports[0]}")
    first_id = wait_for(holder, what="a leader", timeout=20)
    second = start_controller(kubeconfig, *lease_args, "--health-probe-bind-address", f"127.0.0.1:{ports[1]}",
                              "--metrics-bind-address", f"127.0.0.1:{metrics_port}")
    def ready(port: int) -> Callable[[], tuple[int, str] | None]:
        def check() -> tuple[int, str] | None:
            answer = http_get(port, "/readyz?verbose")
            return answer if answer[0] == 200 else None
        return check

    for port in ports:
        _, body = wait_for(ready(port), what=f"/readyz on {port}", timeout=20)
        assert "[+]informers ok" in body, body
        assert http_get(port, "/healthz?verbose") == (200, "[+]ping ok\nhealthz check passed\n")
        assert http_get(port, "/healthz") == (200, "ok")
    assert holder() == first_id  # the second one stands by
    assert "Became leader" in first.output() and "Became leader" not in second.output()

    assert first.stop(signal.SIGTERM) == 0, first.output()
    wait_for(lambda: (h := holder()) not in ("", first_id) and h, what="the second leader", timeout=20)
    wait_for(lambda: "Became leader" in second.output(), what="the second Manager to lead")
    kubectl.run("apply", "-n", namespace, "-f", "-", stdin=foo_manifest("led-rt", "led-rt", 1))
    wait_for(lambda: get(kubectl, namespace, "deployment", "led-rt"), what="a Deployment from the new leader")
    wait_for(lambda: 'controller_runtime_reconcile_total{controller="foo",result="success"}'
             in http_get(metrics_port, "/metrics")[1], what="the Manager's reconcile metrics")
    assert second.stop() == 0, second.output()


@pytest.mark.parametrize("style", STYLES)
def test_probe_address_in_use_is_a_one_line_error(server: Any, style: str) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        address = f"127.0.0.1:{busy.getsockname()[1]}"
        proc = _run_main("--kubeconfig", str(server.kubeconfig_path), "--controller", style,
                         "--health-probe-bind-address", address)
    _assert_one_line_error(proc, "cannot listen", address.split(":")[1])
    _assert_one_line_error(_run_main("--kubeconfig", str(server.kubeconfig_path), "--controller", style,
                                     "--metrics-bind-address", "127.0.0.1:http"), "--metrics-bind-address")


NON_RESOURCE_PREFIXES = ("/api", "/version", "/openapi", "/healthz", "/livez", "/readyz")


def test_cluster_role_covers_every_request_the_controller_made(server: Any) -> None:
    """Runs last in this module: every request main.py made above is allowed by config/rbac/role.yaml."""
    from tests.controller.rbac import allows, cluster_role_rules

    rules = cluster_role_rules()
    made = {(r.verb, r.resource) for r in server.requests if r.user_agent.startswith("samplecontroller/")}
    resource_requests = {(v, res) for v, res in made if not res.startswith(NON_RESOURCE_PREFIXES)}
    assert resource_requests, "the controller made no requests?"
    for verb, resource in sorted(resource_requests):
        group, _, rest = resource.partition("/")
        plural, _, sub = rest.partition("/")
        assert allows(rules, verb, group, plural, sub), f"ClusterRole does not allow {verb} {resource}"
    # The controller's essential requests were all seen (the test would be vacuous otherwise).
    for needed in [("list", "samplecontroller.k8s.io/foos"), ("watch", "apps/deployments"),
                   ("create", "apps/deployments"), ("patch", "apps/deployments"),
                   ("patch", "samplecontroller.k8s.io/foos/status"), ("create", "/events")]:
        assert needed in resource_requests, (needed, sorted(resource_requests))


def test_make_run_path_local_server_end_to_end(tmp_path: Path, kubectl_binary: str) -> None:
    """``main.py --local --port N`` (what ``make run`` runs): the server listens on N, banner, kubectl
    works, the Foo is reconciled, SIGTERM exits 0."""
    local = tmp_path / "local"
    log = tmp_path / "local.log"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, str(ROOT / "main.py"), "--local", "--local-dir", str(local),
                                 "--port", str(port)], stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        try:
            wait_for(lambda: "export KUBECONFIG=" in log.read_text(), what="the banner", timeout=30)
            text = log.read_text()
            assert f"ready at https://127.0.0.1:{port} " in text
            assert f"export KUBECONFIG={local / 'kubeconfig'}" in text
            assert "kubectl apply -f examples/example-foo.yaml" in text
            k = Kubectl(kubectl_binary, local / "kubeconfig", tmp_path / "home")
            k.run("apply", "-f", str(ROOT / "examples" / "example-foo.yaml"))
            wait_for(lambda: (k.json("get", "foo", "example-foo") or {}).get("status", {}).get("availableReplicas") == 1,
                     what="the simulated status", timeout=30)
        finally:
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(30)
    assert code == 0, log.read_text()
    assert (local / "kubeconfig").exists()


def test_leader_election_hands_over_on_sigterm(kubectl: Kubectl, server: Any, namespace: str,
                                               start_controller: Callable[..., ControllerProcess]) -> None:
    """Two controllers with --leader-elect: one leads; SIGTERM releases the Lease and the other takes over."""
    kubeconfig = Path(server.kubeconfig_path)
    lease_args = ("--leader-elect", "--leader-election-namespace", namespace, "--leader-election-id", "lock")

    def holder() -> str:
        lease = kubectl.json("get", "lease", "lock", "-n", namespace) or {}
        return str(lease.get("spec", {}).get("holderIdentity", ""))

    first = start_controller(kubeconfig, *lease_args)
    first_id = wait_for(holder, what="a leader", timeout=20)
    second = start_controller(kubeconfig, *lease_args)
    time.sleep(3)
    assert holder() == first_id  # the second one waits

    assert first.stop(signal.SIGTERM) == 0, first.output()
    second_id = wait_for(lambda: (h := holder()) not in ("", first_id) and h, what="the second leader", timeout=20)
    assert second_id != first_id
    kubectl.run("apply", "-n", namespace, "-f", "-", stdin=foo_manifest("led", "led", 1))
    wait_for(lambda: get(kubectl, namespace, "deployment", "led"), what="a Deployment from the new leader")
    assert second.stop() == 0, second.output()



def synced_count(kubectl: Kubectl, ns: str, name: str) -> int:
    """How many ``Synced`` events the Foo got (repeats are counted into one Event by the correlator)."""
    return sum(int(e.get("count", 1)) for e in events_for(kubectl, ns, name, "Synced"))


def available(kubectl: Kubectl, ns: str, name: str) -> Any:
    return ((get(kubectl, ns, "foo", name) or {}).get("status") or {}).get("availableReplicas")


@pytest.mark.parametrize("style", STYLES)
def test_own_writes_do_not_sync_the_foo_again_other_changes_do(
        kubectl: Kubectl, server: Any, namespace: str, start_controller: Callable[..., ControllerProcess], style: str) -> None:
    """Issue 27: two syncs for a new Foo (its Deployment created, then available), each changing
    something (a third when the Deployment's revision annotation and status arrive apart); none
    for the events of the controller's own writes (Go has them, which record more Synced events). A changed spec, an externally written status and a deleted Deployment
    are reconciled as before."""
    ns = namespace
    controller = start_controller(Path(server.kubeconfig_path), "--controller", style)
    kubectl.run("apply", "-n", ns, "-f", "-", stdin=foo_manifest("one", "one", 1))
    wait_for(lambda: available(kubectl, ns, "one") == 1, what="Foo one available", timeout=30)
    wait_for(lambda: synced_count(kubectl, ns, "one") >= 2, what="two Synced events", timeout=30)
    # A second Foo's whole life takes longer than handling the first one's last write events.
    kubectl.run("apply", "-n", ns, "-f", "-", stdin=foo_manifest("two", "two", 1))
    wait_for(lambda: available(kubectl, ns, "two") == 1 and synced_count(kubectl, ns, "two") >= 2,
             what="Foo two available and synced", timeout=30)
    # 2 syncs; 3 when the simulated deployment controller's two writes after the create (the
    # revision annotation, then the status, as kube's writes them) reach the controller as two
    # events rather than one queued key. Syncing for the controller's own writes made 4-5.
    assert synced_count(kubectl, ns, "one") in (2, 3)

    kubectl.run("patch", "foo", "one", "-n", ns, "--subresource=status", "--type", "merge",
                "-p", '{"status":{"availableReplicas":7}}')
    wait_for(lambda: available(kubectl, ns, "one") == 1, what="the external status write undone", timeout=30)
    kubectl.run("patch", "foo", "one", "-n", ns, "--type", "merge", "-p", '{"spec":{"replicas":2}}')
    wait_for(lambda: available(kubectl, ns, "one") == 2, what="the new spec reconciled", timeout=30)
    uid = get(kubectl, ns, "deployment", "one")["metadata"]["uid"]
    kubectl.run("delete", "deployment", "one", "-n", ns)
    wait_for(lambda: ((get(kubectl, ns, "deployment", "one") or {}).get("metadata") or {}).get("uid") not in (None, uid),
             what="the deleted Deployment recreated", timeout=30)
    assert controller.stop() == 0, controller.output()
