"""Built-in kinds' rules a real cluster enforces (issue 19 item 4): the bootstrap PriorityClasses
and PriorityClass immutability, a Job's immutable pod template, CronJob schedules (robfig/cron),
and the keys each Secret type requires, with kube-apiserver's messages."""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.cron import go_duration_error, schedule_error
from tests.apiserver.cluster_helpers import new_namespace
from tests.apiserver.conftest import Raw

Run = Callable[..., subprocess.CompletedProcess[str]]
PCS = "/apis/scheduling.k8s.io/v1/priorityclasses"


@pytest.fixture
def raw(apiserver: LocalAPIServer) -> Raw:
    return Raw(apiserver)


@pytest.fixture
def ns(raw: Raw) -> str:
    return new_namespace(raw)


def merge(raw: Raw, path: str, patch: dict[str, Any]) -> tuple[int, Any]:
    code, _, body = raw.call("PATCH", path, patch, ctype="application/merge-patch+json")
    return code, body


# ---------------------------------------------------------------------------- PriorityClasses


def test_bootstrap_priority_classes(raw: Raw) -> None:
    code, _, listed = raw.call("GET", PCS)
    assert code == 200
    values = {item["metadata"]["name"]: item["value"] for item in listed["items"]}
    assert values["system-node-critical"] == 2000001000
    assert values["system-cluster-critical"] == 2000000000
    code, _, pc = raw.call("GET", f"{PCS}/system-node-critical")
    assert pc["preemptionPolicy"] == "PreemptLowerPriority"
    assert pc["description"] == "Used for system critical pods that must not be moved from their current node."
    code, _, err = raw.call("DELETE", f"{PCS}/system-cluster-critical")
    assert code == 403 and err["reason"] == "Forbidden"
    assert err["message"] == ('priorityclasses.scheduling.k8s.io "system-cluster-critical" is forbidden: '
                              "this is a system priority class and cannot be deleted")


def test_priority_class_value_is_immutable_and_bounded(raw: Raw) -> None:
    body = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "pc-high"},
            "value": 1000}
    assert raw.call("POST", PCS, body)[0] == 201
    code, err = merge(raw, f"{PCS}/pc-high", {"value": 2000})
    assert code == 422
    assert err["message"] == ('PriorityClass.scheduling.k8s.io "pc-high" is invalid: value: Forbidden: '
                              "may not be changed in an update.")
    code, err = merge(raw, f"{PCS}/pc-high", {"preemptionPolicy": "Never"})
    assert code == 422 and 'preemptionPolicy: Invalid value: "Never": field is immutable' in err["message"]
    assert merge(raw, f"{PCS}/pc-high", {"description": "changed"})[0] == 200
    code, _, err = raw.call("POST", PCS, {**body, "metadata": {"name": "pc-huge"}, "value": 1000000001})
    assert code == 422 and err["message"].endswith(
        "value: Forbidden: maximum allowed value of a user defined priority is 1000000000")
    code, _, err = raw.call("POST", PCS, {**body, "metadata": {"name": "system-mine"}})
    assert code == 422 and err["message"].endswith(
        "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
        "error: system-mine is not a known system priority class")


# ---------------------------------------------------------------------------- Jobs and CronJobs


def job(name: str, suspend: bool = False) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"suspend": suspend, "template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "c", "image": "busybox"}]}}}}


def test_job_template_is_immutable(raw: Raw, ns: str) -> None:
    path = f"/apis/batch/v1/namespaces/{ns}/jobs"
    assert raw.call("POST", path, job("j"))[0] == 201
    code, err = merge(raw, f"{path}/j", {"spec": {"template": {"spec": {"containers": [
        {"name": "c", "image": "busybox:2"}]}}}})
    assert code == 422, err
    assert err["message"].startswith('Job.batch "j" is invalid: spec.template: Invalid value: ')
    assert err["message"].endswith(": field is immutable")
    assert err["details"]["causes"][0]["field"] == "spec.template"
    assert merge(raw, f"{path}/j", {"metadata": {"labels": {"a": "b"}}})[0] == 200
    # a suspended Job that never started may change its scheduling directives, nothing else
    assert raw.call("POST", path, job("s", suspend=True))[0] == 201
    code, body = merge(raw, f"{path}/s", {"spec": {"template": {"spec": {"nodeSelector": {"disk": "ssd"}}}}})
    assert code == 200, body
    code, err = merge(raw, f"{path}/s", {"spec": {"template": {"spec": {"containers": [
        {"name": "c", "image": "busybox:2"}]}}}})
    assert code == 422 and "spec.template: Invalid value" in err["message"]


@pytest.mark.parametrize("schedule, message", [
    ("bad", "expected exactly 5 fields, found 1: [bad]"),
    ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
    ("61 * * * *", "end of range (61) above maximum (59): 61"),
    ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
    ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
    ("@every 5", 'failed to parse duration @every 5: time: missing unit in duration "5"'),
    ("@fortnightly", "unrecognized descriptor: @fortnightly"),
])
def test_cron_schedule_errors(schedule: str, message: str) -> None:
    assert schedule_error(schedule) == message


@pytest.mark.parametrize("schedule", ["*/5 * * * *", "0 0 * * MON-FRI", "0 12 1 jan,jul ?", "@hourly",
                                      "@every 1h30m", "@midnight", "0-59/15 1,2,3 * * 0"])
def test_cron_schedules_accepted(schedule: str) -> None:
    assert schedule_error(schedule) is None


def test_go_durations() -> None:
    assert go_duration_error("1h30m") is None and go_duration_error("1.5s") is None
    assert go_duration_error("5x") == 'time: unknown unit "x" in duration "5x"'
    assert go_duration_error("") == 'time: invalid duration ""'


def cronjob(name: str, schedule: str, **spec: Any) -> dict[str, Any]:
    template = job("x")["spec"]
    del template["suspend"]
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": schedule, "jobTemplate": {"spec": template}, **spec}}


def test_cronjob_schedule_and_time_zone_validated(raw: Raw, ns: str) -> None:
    path = f"/apis/batch/v1/namespaces/{ns}/cronjobs"
    code, _, err = raw.call("POST", path, cronjob("c1", "70 * * * *"))
    assert code == 422
    assert err["message"] == ('CronJob.batch "c1" is invalid: spec.schedule: Invalid value: "70 * * * *": '
                              "end of range (70) above maximum (59): 70")
    code, _, err = raw.call("POST", path, cronjob("c2", "CRON_TZ=UTC 0 * * * *"))
    assert code == 422 and "cannot use TZ or CRON_TZ in schedule, use timeZone field instead" in err["message"]
    code, _, err = raw.call("POST", path, cronjob("c3", "@hourly", timeZone="Mars/Olympus"))
    assert code == 422 and 'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus' \
        in err["message"]
    code, _, ok = raw.call("POST", path, cronjob("c4", "@every 1h", timeZone="Europe/Berlin"))
    assert code == 201, ok
    code, err = merge(raw, f"{path}/c4", {"spec": {"schedule": "* * *"}})
    assert code == 422 and "expected exactly 5 fields, found 3: [* * *]" in err["message"]


@pytest.mark.kubectl
def test_kubectl_create_cronjob_with_a_bad_schedule(kubectl: Run, ns: str) -> None:
    bad = kubectl("create", "cronjob", "cj", "--image=busybox", "--schedule=bad", "-n", ns)
    assert bad.returncode == 1
    assert bad.stderr == ('error: failed to create cronjob: CronJob.batch "cj" is invalid: spec.schedule: '
                          'Invalid value: "bad": expected exactly 5 fields, found 1: [bad]\n')
    good = kubectl("create", "cronjob", "cj", "--image=busybox", "--schedule=*/5 * * * *", "-n", ns)
    assert good.returncode == 0, good.stderr


# ---------------------------------------------------------------------------- Secrets


def secret(name: str, type_: str, data: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    encoded = {k: base64.b64encode(v.encode()).decode() for k, v in (data or {}).items()}
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, **meta}, "type": type_, "data": encoded}


@pytest.mark.parametrize("type_, data, message", [
    ("kubernetes.io/tls", {"tls.crt": "x"}, "data[tls.key]: Required value"),
    ("kubernetes.io/tls", {}, "[data[tls.crt]: Required value, data[tls.key]: Required value]"),
    ("kubernetes.io/basic-auth", {"other": "x"}, "[data[username]: Required value, data[password]: Required value]"),
    ("kubernetes.io/ssh-auth", {}, "data[ssh-privatekey]: Required value"),
    ("kubernetes.io/dockerconfigjson", {}, "data[.dockerconfigjson]: Required value"),
    ("kubernetes.io/dockerconfigjson", {".dockerconfigjson": "{not json"},
     'data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": '
     "invalid character 'n' looking for beginning of value"),
    ("kubernetes.io/dockercfg", {}, "data[.dockercfg]: Required value"),
    ("kubernetes.io/service-account-token", {},
     "metadata.annotations[kubernetes.io/service-account.name]: Required value"),
])
def test_secret_types_require_their_keys(raw: Raw, ns: str, type_: str, data: dict[str, str], message: str) -> None:
    code, _, err = raw.call("POST", f"/api/v1/namespaces/{ns}/secrets", secret("s", type_, data))
    assert code == 422, err
    assert err["message"] == f'Secret "s" is invalid: {message}'


def test_secret_types_accept_their_keys(raw: Raw, ns: str) -> None:
    for i, (type_, data) in enumerate([
        ("kubernetes.io/tls", {"tls.crt": "c", "tls.key": "k"}),
        ("kubernetes.io/basic-auth", {"username": "u"}),
        ("kubernetes.io/ssh-auth", {"ssh-privatekey": "k"}),
        ("kubernetes.io/dockerconfigjson", {".dockerconfigjson": '{"auths": {}}'}),
        ("Opaque", {}),
    ]):
        code, _, body = raw.call("POST", f"/api/v1/namespaces/{ns}/secrets", secret(f"ok{i}", type_, data))
        assert code == 201, body
    code, _, body = raw.call("POST", f"/api/v1/namespaces/{ns}/secrets", secret(
        "sa", "kubernetes.io/service-account-token",
        annotations={"kubernetes.io/service-account.name": "default"}))
    assert code == 201, body


@pytest.mark.kubectl
def test_kubectl_create_secrets_by_type(kubectl: Run, ns: str, tmp_path: Path) -> None:
    bad = kubectl("create", "secret", "generic", "t1", "--type=kubernetes.io/tls", "--from-literal=a=b", "-n", ns)
    assert bad.returncode == 1
    assert 'Secret "t1" is invalid: [data[tls.crt]: Required value, data[tls.key]: Required value]' in bad.stderr
    auth = kubectl("create", "secret", "generic", "b1", "--type=kubernetes.io/basic-auth", "--from-literal=a=b", "-n", ns)
    assert auth.returncode == 1 and "data[username]: Required value" in auth.stderr
    ok = kubectl("create", "secret", "generic", "b2", "--type=kubernetes.io/basic-auth",
                 "--from-literal=username=u", "--from-literal=password=p", "-n", ns)
    assert ok.returncode == 0, ok.stderr
    registry = kubectl("create", "secret", "docker-registry", "reg", "--docker-server=r.example.com",
                       "--docker-username=u", "--docker-password=p", "-n", ns, "-o", "json")
    assert registry.returncode == 0, registry.stderr
    assert json.loads(registry.stdout)["type"] == "kubernetes.io/dockerconfigjson"
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    from samplecontroller.tls import serving_material

    material = serving_material(())
    cert.write_bytes(material.cert_pem)
    key.write_bytes(material.key_pem)
    tls = kubectl("create", "secret", "tls", "tls", f"--cert={cert}", f"--key={key}", "-n", ns)
    assert tls.returncode == 0, tls.stderr


def test_pod_priority_comes_from_its_priority_class(raw: Raw, ns: str) -> None:
    pods = f"/api/v1/namespaces/{ns}/pods"

    def pod(name: str, **spec: Any) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}

    code, _, critical = raw.call("POST", pods, pod("critical", priorityClassName="system-cluster-critical"))
    assert code == 201, critical
    assert critical["spec"]["priority"] == 2000000000
    assert critical["spec"]["preemptionPolicy"] == "PreemptLowerPriority"
    code, _, plain = raw.call("POST", pods, pod("plain"))
    assert code == 201 and plain["spec"]["priority"] == 0 and "priorityClassName" not in plain["spec"]
    code, _, err = raw.call("POST", pods, pod("unknown", priorityClassName="nope"))
    assert code == 403 and err["reason"] == "Forbidden"
    assert err["message"] == 'pods "unknown" is forbidden: no PriorityClass with name nope was found'
    code, _, err = raw.call("POST", pods, pod("mismatch", priorityClassName="system-node-critical", priority=5))
    assert code == 403 and err["message"] == (
        'pods "mismatch" is forbidden: the integer value of priority (5) must not be provided in pod spec; '
        "priority admission controller computed 2000001000 from the given PriorityClass name")
    never = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": f"{ns}-never"},
             "value": 10, "preemptionPolicy": "Never"}
    assert raw.call("POST", PCS, never)[0] == 201
    code, _, low = raw.call("POST", pods, pod("low", priorityClassName=f"{ns}-never"))
    assert code == 201 and low["spec"]["priority"] == 10 and low["spec"]["preemptionPolicy"] == "Never"


def test_the_global_default_priority_class(fresh_apiserver: LocalAPIServer) -> None:
    raw = Raw(fresh_apiserver)
    assert raw.call("POST", PCS, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                  "metadata": {"name": "everyone"}, "value": 7, "globalDefault": True})[0] == 201
    code, _, pod = raw.call("POST", "/api/v1/namespaces/default/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    assert code == 201
    assert pod["spec"]["priorityClassName"] == "everyone" and pod["spec"]["priority"] == 7
