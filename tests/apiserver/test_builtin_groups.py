"""Every built-in API group of the pinned Kubernetes version, with the real kubectl and the
official Python client (issue 10 items 3, 8, 10 and 11)."""

from __future__ import annotations

import itertools
import json
import re
import socket
import ssl
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from samplecontroller.apiserver import LocalAPIServer
from tests.apiserver.conftest import checked_kubectl, official_client

ROOT = Path(__file__).resolve().parents[2]
SDK = "/usr/lib/google-cloud-sdk/bin"
Run = Callable[..., subprocess.CompletedProcess[str]]
_ns = itertools.count()


@pytest.fixture(scope="module")
def gserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalAPIServer]:
    with LocalAPIServer(kubeconfig_path=tmp_path_factory.mktemp("g") / "kubeconfig") as s:
        yield s


@pytest.fixture(scope="module")
def k(gserver: LocalAPIServer, tmp_path_factory: pytest.TempPathFactory) -> Run:
    return checked_kubectl(tmp_path_factory.mktemp("home"), gserver)


@pytest.fixture(scope="module")
def api(gserver: LocalAPIServer) -> Iterator[client.ApiClient]:
    with official_client(gserver) as api_client:
        yield api_client


@pytest.fixture
def ns(k: Run) -> str:
    name = f"g-{next(_ns)}"
    k("create", "namespace", name)
    return name


def _header(out: str) -> list[str]:
    return [c for c in out.splitlines()[0].split("  ") if c.strip()]


def _cols(out: str) -> list[str]:
    return [c.strip() for c in _header(out)]


# ---------------------------------------------------------------------------- discovery (item 10)


def test_api_resources_lists_every_builtin_group(k: Run) -> None:
    out = k("api-resources").stdout
    rows = {(line.split()[0], line.split()[-3], line.split()[-1]) for line in out.splitlines()[1:]}
    for plural, api_version, kind in [
        ("roles", "rbac.authorization.k8s.io/v1", "Role"), ("clusterrolebindings", "rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
        ("jobs", "batch/v1", "Job"), ("cronjobs", "batch/v1", "CronJob"), ("ingresses", "networking.k8s.io/v1", "Ingress"),
        ("ingressclasses", "networking.k8s.io/v1", "IngressClass"), ("networkpolicies", "networking.k8s.io/v1", "NetworkPolicy"),
        ("poddisruptionbudgets", "policy/v1", "PodDisruptionBudget"), ("nodes", "v1", "Node"),
        ("persistentvolumeclaims", "v1", "PersistentVolumeClaim"), ("persistentvolumes", "v1", "PersistentVolume"),
        ("endpoints", "v1", "Endpoints"), ("limitranges", "v1", "LimitRange"), ("resourcequotas", "v1", "ResourceQuota"),
        ("tokenreviews", "authentication.k8s.io/v1", "TokenReview"), ("storageclasses", "storage.k8s.io/v1", "StorageClass"),
        ("horizontalpodautoscalers", "autoscaling/v2", "HorizontalPodAutoscaler"),
        ("endpointslices", "discovery.k8s.io/v1", "EndpointSlice"), ("priorityclasses", "scheduling.k8s.io/v1", "PriorityClass"),
        ("statefulsets", "apps/v1", "StatefulSet"), ("daemonsets", "apps/v1", "DaemonSet"),
    ]:
        assert (plural, api_version, kind) in rows, plural
    assert "cronjobs                            cj " in out and "ingresses                           ing " in out
    scoped = {line.split()[0]: line.split()[-2] for line in out.splitlines()[1:]}
    assert scoped["clusterroles"] == "false" and scoped["roles"] == "true" and scoped["nodes"] == "false"


# ---------------------------------------------------------------------------- kubectl (item 10)


def test_apply_config_manifests(k: Run) -> None:
    """`kubectl apply -k config/` (README's install path): the namespace, CRD, RBAC and the
    controller's Deployment, applied through kustomize with no load-restrictor flag; again unchanged."""
    out = k("apply", "-k", str(ROOT / "config")).stdout
    for line in ("namespace/sample-controller-system created",
                 "customresourcedefinition.apiextensions.k8s.io/foos.samplecontroller.k8s.io",
                 "serviceaccount/sample-controller created",
                 "clusterrole.rbac.authorization.k8s.io/sample-controller created",
                 "clusterrolebinding.rbac.authorization.k8s.io/sample-controller created",
                 "deployment.apps/sample-controller created"):
        assert line in out, out
    again = k("apply", "-k", str(ROOT / "config")).stdout
    assert "created" not in again and "unchanged" in again, again
    binding = json.loads(k("get", "clusterrolebinding", "sample-controller", "-o", "json").stdout)
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "sample-controller"}


@pytest.mark.parametrize("binary", [None, f"{SDK}/kubectl.1.33"])
def test_kubectl_create_and_get_new_kinds(k: Run, ns: str, binary: str | None) -> None:
    """kubectl's typed create commands (protobuf bodies on 1.32+) and their table columns."""
    n = ("-n", ns)
    for args in (("role", "r1", "--verb=get", "--resource=pods"), ("job", "j1", "--image=busybox"),
                 ("cronjob", "cj1", "--image=busybox", "--schedule=*/5 * * * *"),
                 ("ingress", "ing1", "--rule=foo.com/bar=svc1:8080"),
                 ("pdb", "pdb1", "--selector=app=x", "--min-available=1"),
                 ("secret", "generic", "s1", "--from-literal=a=b"), ("serviceaccount", "sa1"),
                 ("rolebinding", "rb1", "--role=r1", "--serviceaccount=default:default")):
        k("create", *args, *n, binary=binary)
    k("create", "clusterrolebinding", f"crb-{ns}", "--clusterrole=view", "--user=alice", binary=binary)
    assert _cols(k("get", "role", *n).stdout) == ["NAME", "CREATED AT"]
    assert _cols(k("get", "job", *n).stdout) == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert k("get", "job", "j1", *n).stdout.split()[5:8] == ["j1", "Running", "0/1"]
    assert _cols(k("get", "cronjob", *n).stdout) == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE",
                                                      "LAST SCHEDULE", "AGE"]
    assert _cols(k("get", "ingress", *n).stdout) == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    assert _cols(k("get", "pdb", *n).stdout) == ["NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"]
    assert _cols(k("get", "rolebinding", *n, "-o", "wide").stdout) == [
        "NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    assert "ClusterRole/view" in k("get", "clusterrolebinding", f"crb-{ns}").stdout
    ingress = json.loads(k("get", "ingress", "ing1", *n, "-o", "json").stdout)
    assert ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"] == "svc1"
    job = json.loads(k("get", "job", "j1", *n, "-o", "json").stdout)
    uid = job["metadata"]["uid"]
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert job["spec"]["backoffLimit"] == 6 and job["spec"]["completionMode"] == "NonIndexed"
    assert job["metadata"]["generation"] == 1
    assert job["spec"]["template"]["metadata"]["labels"]["job-name"] == "j1"
    cronjob = json.loads(k("get", "cronjob", "cj1", *n, "-o", "json").stdout)
    assert cronjob["spec"]["concurrencyPolicy"] == "Allow" and cronjob["spec"]["successfulJobsHistoryLimit"] == 3
    pdb = json.loads(k("get", "pdb", "pdb1", *n, "-o", "json").stdout)
    assert pdb["status"] == {"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0}


def test_create_token_is_accepted_by_the_server(k: Run, api: client.ApiClient, ns: str) -> None:
    token = k("create", "token", "default", "-n", ns).stdout.strip()
    assert token.count(".") == 2
    raw: Run = k.raw  # type: ignore[attr-defined]
    proc = raw("get", "pods", "-n", ns, "--token", token)
    assert proc.returncode == 1 and 'cannot list resource "pods"' in proc.stderr, proc.stderr  # RBAC: no binding
    k("create", "rolebinding", "default-view", "--clusterrole=view", f"--serviceaccount={ns}:default", "-n", ns)
    proc = raw("get", "pods", "-n", ns, "--token", token)
    assert proc.returncode == 0, proc.stderr
    whoami = raw("auth", "whoami", "--token", token, "-o", "json")
    assert json.loads(whoami.stdout)["status"]["userInfo"]["username"] == f"system:serviceaccount:{ns}:default"
    review = client.AuthenticationV1Api(api).create_token_review(
        client.V1TokenReview(spec=client.V1TokenReviewSpec(token=token)))
    assert review.status.authenticated and review.status.user.username == f"system:serviceaccount:{ns}:default"
    bad = client.AuthenticationV1Api(api).create_token_review(
        client.V1TokenReview(spec=client.V1TokenReviewSpec(token=token[:-4] + "AAAA")))
    assert not bad.status.authenticated
    assert raw("get", "pods", "--token", token[:-4] + "AAAA").returncode != 0


def test_job_validation_by_schema(k: Run, ns: str) -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "bad"},
           "spec": {"template": {"spec": {"containers": [{"name": "c"}], "restartPolicy": "Always"}}}}
    raw: Run = k.raw  # type: ignore[attr-defined]
    proc = raw("create", "-n", ns, "-f", "-", stdin=json.dumps(job))
    assert proc.returncode != 0
    assert 'The Job "bad" is invalid' in proc.stderr
    assert "spec.template.spec.containers[0].image: Required value" in proc.stderr
    assert 'spec.template.spec.restartPolicy: Unsupported value: "Always"' in proc.stderr
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "rb"},
               "subjects": [{"kind": "User", "name": "bob"}]}
    proc = raw("create", "-n", ns, "-f", "-", stdin=json.dumps(binding))
    assert proc.returncode != 0 and "roleRef: Required value" in proc.stderr
    binding["roleRef"] = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r1"}
    k("create", "-n", ns, "-f", "-", stdin=json.dumps(binding))
    binding["roleRef"]["name"] = "r2"
    proc = raw("apply", "-n", ns, "-f", "-", stdin=json.dumps(binding))
    assert proc.returncode != 0
    assert ('roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"Role", Name:"r2"}: '
            "cannot change roleRef") in proc.stderr
    k("create", "secret", "generic", "s1", "--from-literal=a=b", "-n", ns)
    proc = raw("patch", "secret", "s1", "-n", ns, "-p", '{"type": "kubernetes.io/tls"}')
    assert proc.returncode != 0 and 'type: Invalid value: "kubernetes.io/tls": field is immutable' in proc.stderr


MORE_KINDS = """\
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv1}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /tmp/pv1}
  storageClassName: standard
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: pvc1}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: rancher.io/local-path
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: np1}
spec:
  podSelector: {matchLabels: {app: a}}
  ingress: [{ports: [{port: 80}]}]
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: es1}
addressType: IPv4
ports: [{port: 80}]
endpoints: [{addresses: [10.0.0.1]}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: ep1}
subsets: [{addresses: [{ip: 10.0.0.1}], ports: [{port: 80}]}]
---
apiVersion: v1
kind: LimitRange
metadata: {name: lr1}
spec: {limits: [{type: Container, default: {cpu: 500m}}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: sts1}
spec:
  serviceName: sts1
  selector: {matchLabels: {app: s}}
  template:
    metadata: {labels: {app: s}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds1}
spec:
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: rc1}
handler: runc
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: csi.example.com}
spec: {}
---
apiVersion: v1
kind: PodTemplate
metadata: {name: pt1}
template:
  metadata: {labels: {a: b}}
  spec: {containers: [{name: c, image: nginx}]}
"""


def test_more_kinds_apply_and_print_the_upstream_columns(k: Run, ns: str) -> None:
    k("apply", "-n", ns, "-f", "-", stdin=MORE_KINDS.replace("name: standard\n  annotations", f"name: sc-{ns}\n  annotations")
      .replace("storageClassName: standard", f"storageClassName: sc-{ns}").replace("{name: pv1}", f"{{name: pv-{ns}}}")
      .replace("{name: nginx}", f"{{name: ic-{ns}}}").replace("{name: rc1}", f"{{name: rt-{ns}}}")
      .replace("{name: csi.example.com}", f"{{name: {ns}.csi.example.com}}"))
    expected = {
        "pv": ["NAME", "CAPACITY", "ACCESS MODES", "RECLAIM POLICY", "STATUS", "CLAIM", "STORAGECLASS",
               "VOLUMEATTRIBUTESCLASS", "REASON", "AGE", "VOLUMEMODE"],
        "pvc": ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "AGE",
                "VOLUMEMODE"],
        "sc": ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"],
        "netpol": ["NAME", "POD-SELECTOR", "AGE"],
        "ingressclass": ["NAME", "CONTROLLER", "PARAMETERS", "AGE"],
        "endpointslices": ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"],
        "ep": ["NAME", "ENDPOINTS", "AGE"],
        "limits": ["NAME", "CREATED AT"],
        "sts": ["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"],
        "ds": ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR", "AGE", "CONTAINERS",
               "IMAGES", "SELECTOR"],
        "runtimeclass": ["NAME", "HANDLER", "AGE"],
        "csidriver": ["NAME", "ATTACHREQUIRED", "PODINFOONMOUNT", "STORAGECAPACITY", "TOKENREQUESTS", "REQUIRESREPUBLISH",
                      "MODES", "AGE"],
        "podtemplate": ["NAME", "CONTAINERS", "IMAGES", "POD LABELS", "AGE"],
    }
    for resource, header in expected.items():
        assert _cols(k("get", resource, "-n", ns, "-o", "wide").stdout) == header, resource
    assert k("get", "ep", "ep1", "-n", ns).stdout.split()[4] == "10.0.0.1:80"
    assert k("get", "sts", "sts1", "-n", ns).stdout.split()[4] == "0/1"
    assert f"sc-{ns} (default)" in k("get", "sc").stdout
    policy = json.loads(k("get", "netpol", "np1", "-n", ns, "-o", "json").stdout)
    assert policy["spec"]["policyTypes"] == ["Ingress"] and policy["spec"]["ingress"][0]["ports"][0]["protocol"] == "TCP"
    sts = json.loads(k("get", "sts", "sts1", "-n", ns, "-o", "json").stdout)
    assert sts["spec"]["podManagementPolicy"] == "OrderedReady" and sts["status"] == {"replicas": 0}


# ---------------------------------------------------------------------------- Python client (item 10)


def test_python_client_rbac_and_batch_round_trip(api: client.ApiClient, ns: str) -> None:
    rbac = client.RbacAuthorizationV1Api(api)
    role = client.V1Role(metadata=client.V1ObjectMeta(name="reader"),
                         rules=[client.V1PolicyRule(api_groups=[""], resources=["pods"], verbs=["get", "list"])])
    created = rbac.create_namespaced_role(ns, role)
    assert created.metadata.uid and created.rules[0].verbs == ["get", "list"]
    binding = client.V1RoleBinding(
        metadata=client.V1ObjectMeta(name="reader"),
        role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name="reader"),
        subjects=[client.RbacV1Subject(kind="User", name="alice")])
    got = rbac.create_namespaced_role_binding(ns, binding)
    assert got.subjects[0].api_group == "rbac.authorization.k8s.io"
    assert [r.metadata.name for r in rbac.list_namespaced_role(ns).items] == ["reader"]
    rbac.create_cluster_role(client.V1ClusterRole(metadata=client.V1ObjectMeta(name=f"cr-{ns}"), rules=[]))
    assert rbac.read_cluster_role(f"cr-{ns}").metadata.name == f"cr-{ns}"
    rbac.delete_namespaced_role("reader", ns)
    with pytest.raises(ApiException) as err:
        rbac.read_namespaced_role("reader", ns)
    assert err.value.status == 404

    batch = client.BatchV1Api(api)
    container = client.V1Container(name="c", image="busybox")
    template = client.V1PodTemplateSpec(spec=client.V1PodSpec(containers=[container], restart_policy="Never"))
    job = batch.create_namespaced_job(ns, client.V1Job(metadata=client.V1ObjectMeta(name="j"),
                                                       spec=client.V1JobSpec(template=template)))
    assert job.spec.parallelism == 1 and job.spec.template.spec.termination_grace_period_seconds == 30
    batch.patch_namespaced_job_status("j", ns, {"status": {"succeeded": 1}})
    assert batch.read_namespaced_job("j", ns).status.succeeded == 1
    cron = client.V1CronJob(metadata=client.V1ObjectMeta(name="cj"), spec=client.V1CronJobSpec(
        schedule="@hourly", job_template=client.V1JobTemplateSpec(spec=client.V1JobSpec(template=template))))
    assert batch.create_namespaced_cron_job(ns, cron).spec.suspend is False
    assert [j.metadata.name for j in batch.list_namespaced_cron_job(ns).items] == ["cj"]


def test_horizontal_pod_autoscalers_in_v1_and_v2(k: Run, api: client.ApiClient, ns: str) -> None:
    """kubectl up to 1.32 autoscales with autoscaling/v1; objects are stored as v2."""
    k("create", "deployment", "web", "--image=nginx", "-n", ns)
    k("autoscale", "deployment", "web", "--max=5", "--cpu-percent=50", "-n", ns)
    out = k("get", "hpa", "-n", ns).stdout
    assert _cols(out) == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert "Deployment/web" in out and "cpu: <unknown>/50%" in out
    v2 = client.AutoscalingV2Api(api).read_namespaced_horizontal_pod_autoscaler("web", ns)
    assert v2.spec.metrics[0].resource.target.average_utilization == 50 and v2.spec.min_replicas == 1
    v1 = client.AutoscalingV1Api(api)
    assert v1.read_namespaced_horizontal_pod_autoscaler("web", ns).spec.target_cpu_utilization_percentage == 50
    created = v1.create_namespaced_horizontal_pod_autoscaler(ns, client.V1HorizontalPodAutoscaler(
        metadata=client.V1ObjectMeta(name="h1"), spec=client.V1HorizontalPodAutoscalerSpec(
            max_replicas=3, scale_target_ref=client.V1CrossVersionObjectReference(
                api_version="apps/v1", kind="Deployment", name="web"))))
    assert created.spec.target_cpu_utilization_percentage == 80
    assert [h.metadata.name for h in v1.list_namespaced_horizontal_pod_autoscaler(ns).items] == ["h1", "web"]
    # patches through v1 act on the v2 object (merge and strategic merge as clients send them)
    patched = v1.patch_namespaced_horizontal_pod_autoscaler("h1", ns, {"spec": {"targetCPUUtilizationPercentage": 60,
                                                                               "maxReplicas": 4}})
    assert patched.spec.target_cpu_utilization_percentage == 60 and patched.spec.max_replicas == 4
    stored = client.AutoscalingV2Api(api).read_namespaced_horizontal_pod_autoscaler("h1", ns)
    assert stored.spec.metrics[0].resource.target.average_utilization == 60 and stored.spec.max_replicas == 4
    k("patch", "hpa.v1.autoscaling", "web", "-n", ns, "--type=merge", "-p", '{"spec":{"minReplicas":2}}')
    assert client.AutoscalingV2Api(api).read_namespaced_horizontal_pod_autoscaler("web", ns).spec.min_replicas == 2


def test_scheduler_binding(api: client.ApiClient, ns: str) -> None:
    """What a scheduler does: POST a Binding (``bindings`` or ``pods/<name>/binding``)."""
    core = client.CoreV1Api(api)
    for name in ("b1", "b2"):
        core.create_namespaced_pod(ns, client.V1Pod(metadata=client.V1ObjectMeta(name=name), spec=client.V1PodSpec(
            containers=[client.V1Container(name="c", image="nginx")])))
    target = client.V1ObjectReference(kind="Node", name="local-node")
    core.create_namespaced_binding(ns, client.V1Binding(metadata=client.V1ObjectMeta(name="b1"), target=target),
                                   _preload_content=False)
    core.create_namespaced_pod_binding("b2", ns, client.V1Binding(metadata=client.V1ObjectMeta(name="b2"), target=target),
                                       _preload_content=False)
    for name in ("b1", "b2"):
        pod = core.read_namespaced_pod(name, ns)
        assert pod.spec.node_name == "local-node"
        assert [(c.type, c.status) for c in pod.status.conditions] == [("PodScheduled", "True")]
    with pytest.raises(ApiException) as err:
        core.create_namespaced_binding(ns, client.V1Binding(metadata=client.V1ObjectMeta(name="b1"), target=target),
                                       _preload_content=False)
    assert err.value.status == 409 and "already assigned" in str(err.value.body)


# ---------------------------------------------------------------------------- item 11


def test_one_ready_node_and_the_kubernetes_service(k: Run, api: client.ApiClient) -> None:
    out = k("get", "nodes").stdout
    assert _cols(out) == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    rows = out.splitlines()[1:]
    assert len(rows) == 1 and rows[0].split()[1] == "Ready" and rows[0].split()[-1] == "v1.37.0"
    svc = client.CoreV1Api(api).read_namespaced_service("kubernetes", "default")
    assert svc.spec.cluster_ip == "10.96.0.1" and svc.spec.ports[0].port == 443
    assert svc.metadata.labels == {"component": "apiserver", "provider": "kubernetes"}
    assert "default" in k("get", "serviceaccounts", "-n", "kube-system").stdout


def test_every_namespace_publishes_the_root_ca(k: Run, gserver: LocalAPIServer, ns: str) -> None:
    """kube-root-ca.crt in every namespace, old and new (root-ca-cert-publisher): its ca.crt is the CA
    that verifies the server, as a pod's client would use it."""
    assert gserver.ca_path is not None
    ca = gserver.ca_path.read_text()
    for namespace in ("default", "kube-system", ns):
        got = k("get", "configmap", "kube-root-ca.crt", "-n", namespace, "-o", "jsonpath={.data.ca\\.crt}").stdout
        assert got.strip() == ca.strip(), namespace
    ctx = ssl.create_default_context(cadata=ca)
    host, port = gserver.url.removeprefix("https://").rsplit(":", 1)
    with socket.create_connection((host, int(port))) as sock, ctx.wrap_socket(sock, server_hostname=host):
        pass  # the published CA verifies the serving certificate


def test_drain_evicts_and_cordons_the_node(k: Run, ns: str) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bound"},
           "spec": {"nodeName": "local-node", "containers": [{"name": "c", "image": "nginx"}]}}
    k("create", "-n", ns, "-f", "-", stdin=json.dumps(pod))
    try:
        # the simulated node holds an evicted pod for its grace period, as a kubelet does for a container
        # that ignores SIGTERM (its default is 30 s)
        out = k("drain", "local-node", "--force", "--ignore-daemonsets", "--grace-period=1", "--timeout=20s").stdout
        assert "pod/bound evicted" in out
        assert k("get", "nodes").stdout.split()[6] == "Ready,SchedulingDisabled"
        assert "No resources found" in k("get", "pods", "-n", ns).stderr
        assert k("get", "nodes", "--field-selector", "spec.unschedulable=true", "-o", "name").stdout.strip() == "node/local-node"
    finally:
        k("uncordon", "local-node")
    assert k("get", "nodes", "--field-selector", "spec.unschedulable=false", "-o", "name").stdout.strip() == "node/local-node"


# ---------------------------------------------------------------------------- defaults (item 3)


def test_replicaset_and_pod_defaults(k: Run, ns: str) -> None:
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs1"},
          "spec": {"selector": {"matchLabels": {"app": "a"}},
                   "template": {"metadata": {"labels": {"app": "a"}},
                                "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}}
    k("apply", "-n", ns, "-f", "-", stdin=json.dumps(rs))
    got = json.loads(k("get", "rs", "rs1", "-n", ns, "-o", "json").stdout)
    assert "revisionHistoryLimit" not in got["spec"] and got["status"] == {"replicas": 0}
    again = k("apply", "-n", ns, "-f", "-", stdin=json.dumps({**rs, "metadata": {"name": "rs1", "labels": {"x": "y"}}}))
    assert "unknown field" not in again.stderr
    k("run", "p1", "--image=nginx", "-n", ns)
    spec = json.loads(k("get", "pod", "p1", "-n", ns, "-o", "json").stdout)["spec"]
    assert spec["enableServiceLinks"] is True and spec["priority"] == 0
    assert spec["preemptionPolicy"] == "PreemptLowerPriority" and spec["serviceAccountName"] == "default"
    assert {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
            "tolerationSeconds": 300} in spec["tolerations"]
    assert {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
            "tolerationSeconds": 300} in spec["tolerations"]
    # the ServiceAccount admission plugin's projected token volume, mounted into every container
    (volume,) = spec["volumes"]
    assert re.fullmatch(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}", volume["name"])
    assert volume["projected"] == {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
                                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}
    assert spec["containers"][0]["volumeMounts"] == [
        {"name": volume["name"], "readOnly": True, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]
    opted_out = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p2"},
                 "spec": {"automountServiceAccountToken": False, "containers": [{"name": "c", "image": "nginx"}]}}
    k("create", "-n", ns, "-f", "-", stdin=json.dumps(opted_out))
    spec = json.loads(k("get", "pod", "p2", "-n", ns, "-o", "json").stdout)["spec"]
    assert "volumes" not in spec and "volumeMounts" not in spec["containers"][0]


# ---------------------------------------------------------------------------- item 8


def test_wide_columns_and_explain(k: Run, ns: str) -> None:
    k("run", "w1", "--image=nginx", "-n", ns)
    assert _cols(k("get", "pods", "-n", ns, "-o", "wide").stdout) == [
        "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"]
    k("create", "service", "clusterip", "s1", "--tcp=80:8080", "-n", ns)
    assert _cols(k("get", "svc", "-n", ns, "-o", "wide").stdout)[-1] == "SELECTOR"
    assert k("get", "svc", "s1", "-n", ns, "-o", "wide").stdout.split()[-1] == "app=s1"
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rsw"},
          "spec": {"selector": {"matchLabels": {"app": "w"}},
                   "template": {"metadata": {"labels": {"app": "w"}},
                                "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}}
    k("apply", "-n", ns, "-f", "-", stdin=json.dumps(rs))
    out = k("get", "rs", "-n", ns, "-o", "wide").stdout
    assert _cols(out) == ["NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    assert out.split()[-3:] == ["c", "nginx:1.27", "app=w"]
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1"}, "reason": "Tested", "type": "Normal",
             "message": "hello", "count": 3, "involvedObject": {"kind": "Pod", "name": "w1", "namespace": ns},
             "source": {"component": "tester", "host": "h1"}, "firstTimestamp": "2024-01-01T00:00:00Z",
             "lastTimestamp": "2024-01-01T00:00:00Z"}
    k("create", "-n", ns, "-f", "-", stdin=json.dumps(event))
    out = k("get", "events", "-n", ns, "-o", "wide").stdout
    assert _cols(out) == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "SUBOBJECT", "SOURCE", "MESSAGE",
                          "FIRST SEEN", "COUNT", "NAME"]
    assert "tester, h1" in out and out.split()[-2:] == ["3", "e1"]
    explained = k("explain", "pods").stdout
    assert "enum: v1" not in explained and "enum: Pod" not in explained
    k("apply", "-f", str(ROOT / "crds" / "podset.yaml"))
    k("wait", "--for=condition=established", "crd/podsets.workloads.example.com", "--timeout=20s")
    explained = " ".join(k("explain", "podsets").stdout.split())
    assert "may reject unrecognized values. More info:" in explained
    assert "Servers may infer this from the endpoint the client submits requests to." in explained
    assert "Standard object's metadata. More info:" in explained
