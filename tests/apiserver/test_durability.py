"""What the embedded server promises about durability and its own resources: a write is committed
before its response, a watch from the future gets "Too large resource version", the data
directory and every file are private, the request log is opt-in and bounded, Events expire and
the deployment simulator picks up its work after a restart."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from samplecontroller.apimachinery.durations import parse_duration
from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.testing import install_crds
from tests.apiserver.conftest import FOOS, Raw, foo

ROOT = Path(__file__).resolve().parents[2]
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


def wait_until(cond: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)


def committed_names(data_dir: Path) -> set[str]:
    """Keys committed to the database, read by a second connection (as a restarted server would)."""
    db = sqlite3.connect(str(data_dir / "state.db"))
    try:
        return {row[0].rsplit("/", 1)[-1] for row in db.execute("SELECT name FROM kine")}
    finally:
        db.close()


@pytest.fixture
def disk_server(tmp_path: Path) -> Iterator[LocalAPIServer]:
    with LocalAPIServer(data_dir=tmp_path / "data", kubeconfig_path=tmp_path / "kc") as s:
        install_crds(s, ROOT / "crds")
        yield s


def test_every_acknowledged_write_is_already_committed(disk_server: LocalAPIServer, tmp_path: Path) -> None:
    raw = Raw(disk_server)
    for i in range(20):
        code, _, _ = raw.call("POST", FOOS.format(ns="default"), foo(f"acked-{i}"))
        assert code == 201
        assert f"acked-{i}" in committed_names(tmp_path / "data"), f"acked-{i} was acknowledged before its commit"
        code, _, _ = raw.call("DELETE", FOOS.format(ns="default") + f"/acked-{i}")
        assert code == 200
        db = sqlite3.connect(str(tmp_path / "data" / "state.db"))
        try:
            deleted = db.execute("SELECT COUNT(*) FROM kine WHERE name LIKE ? AND deleted = 1",
                                 (f"%/acked-{i}",)).fetchone()[0]
        finally:
            db.close()
        assert deleted == 1, f"the deletion of acked-{i} was acknowledged before its commit"


def test_a_watch_from_a_future_resource_version_is_told_too_large(disk_server: LocalAPIServer) -> None:
    """As kube-apiserver's watch cache: wait up to 3 s for the version, then an ERROR event with a
    504 Timeout Status whose cause is ResourceVersionTooLarge (client-go then re-lists)."""
    raw = Raw(disk_server)
    rv = int(raw.call("GET", FOOS.format(ns="default"))[2]["metadata"]["resourceVersion"])
    events = list(raw.watch(FOOS.format(ns="default") + f"?watch=true&resourceVersion={rv + 1000}&timeoutSeconds=20",
                            timeout=30))
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert status["code"] == 504 and status["reason"] == "Timeout"
    assert status["details"]["causes"] == [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]
    assert status["message"].startswith(f"Timeout: Too large resource version: {rv + 1000}, current: "), status


def test_a_watch_at_a_version_reached_while_waiting_starts_there(disk_server: LocalAPIServer) -> None:
    raw = Raw(disk_server)
    rv = int(raw.call("GET", FOOS.format(ns="default"))[2]["metadata"]["resourceVersion"])
    stream = raw.watch(FOOS.format(ns="default") + f"?watch=true&resourceVersion={rv + 1}&timeoutSeconds=5")
    threading.Timer(0.5, lambda: [raw.call("POST", FOOS.format(ns="default"), foo(f"later-{i}")) for i in range(2)]
                    ).start()
    events = list(stream)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "later-1")]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_data_directory_and_every_file_are_private(tmp_path: Path) -> None:
    """Even with umask 0: the data and pki directories are 0700, every file 0600 (the database and
    its -wal/-shm, the serving key and certificates, the token, the lock), and so are the kubeconfig
    and its CA file."""
    old_umask = os.umask(0)
    try:
        with LocalAPIServer(data_dir=tmp_path / "data", kubeconfig_path=tmp_path / "cfg" / "kc") as s:
            Raw(s).call("POST", "/api/v1/namespaces", {"metadata": {"name": "private"}})
            data = tmp_path / "data"
            assert _mode(data) == 0o700 and _mode(data / "pki") == 0o700
            files = sorted(p for p in data.rglob("*") if p.is_file())
            assert {p.name for p in files} >= {"state.db", "state.db-wal", "state.db-shm", "token", "lock",
                                               "ca.crt", "tls.crt", "tls.key"}
            assert {str(p.relative_to(data)): oct(_mode(p)) for p in files if _mode(p) != 0o600} == {}
            assert _mode(tmp_path / "cfg" / "kc") == 0o600 and _mode(tmp_path / "cfg" / "kc.ca.crt") == 0o600
    finally:
        os.umask(old_umask)


def test_an_old_world_readable_data_directory_is_made_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with LocalAPIServer(data_dir=data, kubeconfig_path=tmp_path / "kc"):
        pass
    data.chmod(0o755)
    for p in data.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    with LocalAPIServer(data_dir=data, kubeconfig_path=tmp_path / "kc"):
        assert _mode(data) == 0o700
        assert {str(p.relative_to(data)) for p in data.glob("state.db*") if _mode(p) != 0o600} == set()


def test_loosened_keys_and_token_are_tightened_on_restart(tmp_path: Path) -> None:
    """``chmod 666 data/pki/* data/token`` (issue 28 item 10): the next start makes them 0600 again
    (and the pki directory 0700), keeping their contents."""
    data = tmp_path / "data"
    with LocalAPIServer(data_dir=data, kubeconfig_path=tmp_path / "kc") as s:
        token = s.token
    files = [*sorted((data / "pki").iterdir()), data / "token"]
    before = {p: p.read_bytes() for p in files}
    for p in files:
        p.chmod(0o666)
    (data / "pki").chmod(0o755)
    with LocalAPIServer(data_dir=data, kubeconfig_path=tmp_path / "kc") as s:
        assert s.token == token
        assert {str(p.relative_to(data)): oct(_mode(p)) for p in files if _mode(p) != 0o600} == {}
        assert _mode(data / "pki") == 0o700
        assert {p: p.read_bytes() for p in files} == before


def test_the_request_log_is_off_by_default_and_bounded(tmp_path: Path) -> None:
    with LocalAPIServer(kubeconfig_path=tmp_path / "kc") as s:
        Raw(s).call("GET", "/api/v1/namespaces")
        assert s.requests == [] and s.app is not None and s.app.requests.maxlen == 0
    with LocalAPIServer(kubeconfig_path=tmp_path / "kc2", record_requests=3) as s:
        raw = Raw(s)
        for ns in ("a", "b", "c", "d", "e"):
            raw.call("GET", f"/api/v1/namespaces/{ns}")
        assert [r.verb for r in s.requests] == ["get", "get", "get"] and len(s.requests) == 3


def _event(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
            "reason": "Test", "message": "m", "type": "Normal"}


def _new_event(name: str) -> dict[str, Any]:
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": name},
            "eventTime": "2024-01-01T00:00:00.000000Z", "reportingController": "test", "reportingInstance": "t",
            "action": "Test", "reason": "Test", "type": "Normal", "regarding": {"kind": "Pod", "name": "p"}}


def test_events_expire_after_the_ttl_counted_from_their_last_write(tmp_path: Path) -> None:
    core_events = "/api/v1/namespaces/default/events"
    new_events = "/apis/events.k8s.io/v1/namespaces/default/events"
    with LocalAPIServer(kubeconfig_path=tmp_path / "kc", event_ttl=1.5) as s:
        raw = Raw(s)
        assert raw.call("POST", core_events, _event("old"))[0] == 201
        assert raw.call("POST", new_events, _new_event("new"))[0] == 201
        assert raw.call("POST", core_events, _event("renewed"))[0] == 201
        rv = raw.call("GET", core_events)[2]["metadata"]["resourceVersion"]
        renewed, count = time.monotonic(), 1
        while time.monotonic() - renewed < 1.0:  # keep "renewed" alive past the first TTL
            count += 1
            assert raw.call("PATCH", core_events + "/renewed", {"count": count},
                            ctype="application/merge-patch+json")[0] == 200
            time.sleep(0.2)
        wait_until(lambda: raw.call("GET", core_events + "/old")[0] == 404)
        # "new" was created just after "old": its own deadline (and timer) may come a moment later
        wait_until(lambda: raw.call("GET", new_events + "/new")[0] == 404)
        assert raw.call("GET", core_events + "/renewed")[0] == 200  # its TTL counts from its last write
        wait_until(lambda: raw.call("GET", core_events + "/renewed")[0] == 404)
        seen = [(e["type"], e["object"]["metadata"]["name"]) for e in
                raw.watch(core_events + f"?watch=true&resourceVersion={rv}&timeoutSeconds=1")]
        assert seen == [("MODIFIED", "renewed")] * (count - 1) + [("DELETED", "old"), ("DELETED", "renewed")]


def test_event_ttl_flag() -> None:
    assert parse_duration("1h") == 3600 and parse_duration("1h30m") == 5400 and parse_duration("250ms") == 0.25
    with pytest.raises(ValueError):
        parse_duration("1 hour")
    proc = subprocess.run([sys.executable, "-m", "samplecontroller.apiserver", "--event-ttl", "soon"],
                          capture_output=True, text=True, cwd=ROOT, timeout=30)
    assert proc.returncode == 2 and "--event-ttl" in proc.stderr and "Traceback" not in proc.stderr
    with pytest.raises(ValueError, match="event_ttl"):
        LocalAPIServer(event_ttl=0)


def _deployment(name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def test_the_deployment_simulator_resumes_after_a_restart(tmp_path: Path) -> None:
    """A status update still scheduled when the server stopped is made after the restart."""
    data = tmp_path / "data"
    with LocalAPIServer(data_dir=data, kubeconfig_path=tmp_path / "kc", simulate_deployments=True,
                        simulate_delay=60) as s:
        raw = Raw(s)
        assert raw.call("POST", DEPLOYMENTS, _deployment("pending", 2))[0] == 201
        assert raw.call("POST", DEPLOYMENTS, _deployment("zero", 0))[0] == 201
        assert raw.call("GET", DEPLOYMENTS + "/pending")[2].get("status", {}).get("availableReplicas") is None
    with LocalAPIServer(data_dir=data, kubeconfig_path=tmp_path / "kc", simulate_deployments=True,
                        simulate_delay=0.05) as s:
        raw = Raw(s)

        def status(name: str) -> dict[str, Any]:
            return dict(raw.call("GET", DEPLOYMENTS + f"/{name}")[2].get("status") or {})

        wait_until(lambda: status("pending").get("availableReplicas") == 2)
        wait_until(lambda: status("zero").get("observedGeneration") == 1)
        rv = raw.call("GET", DEPLOYMENTS + "/zero")[2]["metadata"]["resourceVersion"]
        time.sleep(0.3)  # several simulator delays: a settled status is not written again
        assert raw.call("GET", DEPLOYMENTS + "/zero")[2]["metadata"]["resourceVersion"] == rv
