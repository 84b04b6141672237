"""The cluster around the API (issue 19 item 4) with every installed kubectl: Service cluster IPs
and node ports, the kubernetes Service's endpoints, bootstrap PriorityClasses, Job and CronJob and
Secret validation, ``rollout history|undo`` through the deployment simulator's ReplicaSets,
graceful Pod deletion, ``certificate approve|deny`` and the verbose health endpoints. The rows
use the conformance table's ``Row`` and checks (conftest.py) on a server of their own that runs the
deployment simulator."""

from __future__ import annotations

import base64
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from samplecontroller.apiserver import LocalAPIServer
from tests.conformance.conftest import (
    FULL_VERSIONS,
    ROOT,
    Row,
    _binary,
    _problems,
    all_rows,
    kubectl_binaries,
)

pytestmark = pytest.mark.kubectl


def _csr_yaml(name: str) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    request = (x509.CertificateSigningRequestBuilder()
               .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "conformance")]))
               .sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM))
    return (f"apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata: {{name: {name}}}\n"
            f"spec:\n  request: {base64.b64encode(request).decode()}\n"
            "  signerName: kubernetes.io/kube-apiserver-client\n  usages: [client auth]\n")


_CSR_APPROVE, _CSR_DENY = _csr_yaml("csr-{v}-a"), _csr_yaml("csr-{v}-d")
_NS = ("-n", "{ns}")
ROWS: tuple[Row, ...] = (
    Row(("create", "namespace", "{ns}"), out=(r"^namespace/{ns} created",)),
    # Services
    Row((*_NS, "create", "service", "clusterip", "web", "--tcp=80:8080"), out=("^service/web created",)),
    Row((*_NS, "get", "service", "web", "-o", "jsonpath={.spec.clusterIP} {.spec.ipFamilyPolicy} {.spec.ipFamilies}"),
        out=(r"^10\.(9[6-9]|10[0-9]|11[01])\.\d+\.\d+ SingleStack \[\"IPv4\"\]",)),
    Row((*_NS, "create", "service", "nodeport", "np", "--tcp=80:8080"), out=("^service/np created",)),
    Row((*_NS, "get", "service", "np", "-o", "jsonpath={.spec.ports[0].nodePort}"), out=(r"^3[0-2]\d\d\d$",)),
    Row((*_NS, "create", "service", "clusterip", "taken", "--tcp=80:80", "--clusterip=10.96.0.1"), rc=1,
        err=(re.escape('spec.clusterIPs: Invalid value: ["10.96.0.1"]: failed to allocate IP 10.96.0.1: '
                       "provided IP is already allocated"),)),
    Row((*_NS, "create", "service", "clusterip", "headless", "--clusterip=None"), out=("^service/headless created",)),
    Row(("-n", "default", "get", "endpoints", "kubernetes", "-o", "jsonpath={.subsets[0].addresses[0].ip}"),
        out=(r"^127\.0\.0\.1$",)),
    Row(("-n", "default", "get", "endpointslices", "kubernetes"), out=(r"(?m)^kubernetes\s+IPv4\s+\d+\s+127\.0\.0\.1",)),
    # PriorityClasses, Jobs, CronJobs, Secrets
    Row(("get", "priorityclass", "system-node-critical", "system-cluster-critical"),
        out=(r"(?m)^system-node-critical\s+2000001000\s+false", r"(?m)^system-cluster-critical\s+2000000000\s+false")),
    Row((*_NS, "create", "job", "j", "--image=busybox"), out=("^job.batch/j created",)),
    Row((*_NS, "set", "image", "job/j", "j=busybox:2"), rc=1,
        err=(r'Job.batch "j" is invalid: spec.template: Invalid value: .*: field is immutable',)),
    Row((*_NS, "create", "cronjob", "cj", "--image=busybox", "--schedule=bad"), rc=1,
        err=(re.escape('spec.schedule: Invalid value: "bad": expected exactly 5 fields, found 1: [bad]'),)),
    Row((*_NS, "create", "cronjob", "cj", "--image=busybox", "--schedule=@hourly"), out=("^cronjob.batch/cj created",)),
    Row((*_NS, "create", "secret", "generic", "t", "--type=kubernetes.io/tls", "--from-literal=a=b"), rc=1,
        err=(re.escape('Secret "t" is invalid: [data[tls.crt]: Required value, data[tls.key]: Required value]'),)),
    Row((*_NS, "create", "secret", "generic", "ba", "--type=kubernetes.io/basic-auth", "--from-literal=username=u"),
        out=("^secret/ba created",)),
    Row((*_NS, "create", "secret", "docker-registry", "reg", "--docker-username=u", "--docker-password=p"),
        out=("^secret/reg created",)),
    # Deployments: ReplicaSets per template, rollout history and undo
    Row((*_NS, "create", "deployment", "web", "--image=nginx:1.25"), out=("^deployment.apps/web created",)),
    Row((*_NS, "rollout", "status", "deployment/web", "--timeout=30s"), out=('deployment "web" successfully rolled out',)),
    Row((*_NS, "set", "image", "deployment/web", "nginx=nginx:1.26"), out=("^deployment.apps/web image updated",)),
    Row((*_NS, "rollout", "status", "deployment/web", "--timeout=30s"), out=('deployment "web" successfully rolled out',)),
    Row((*_NS, "rollout", "history", "deployment/web"),
        out=(r"^deployment.apps/web \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n",)),
    Row((*_NS, "rollout", "undo", "deployment/web"), out=("^deployment.apps/web rolled back",)),
    Row((*_NS, "rollout", "status", "deployment/web", "--timeout=30s"), out=('deployment "web" successfully rolled out',)),
    Row((*_NS, "rollout", "history", "deployment/web"), out=(r"\n2         <none>\n3         <none>\n",)),
    Row((*_NS, "rollout", "undo", "deployment/web", "--to-revision=7"), rc=1,
        err=("unable to find specified revision 7 in history",)),
    Row((*_NS, "get", "rs", "-l", "app=web", "-o", "jsonpath={.items[*].spec.template.spec.containers[0].image}"),
        out=(r"^nginx:1\.2[56] nginx:1\.2[56]$",)),
    # graceful Pod deletion
    Row((*_NS, "run", "bound", "--image=nginx", "--overrides", '{"spec":{"nodeName":"local-node"}}'),
        out=("^pod/bound created",)),
    Row((*_NS, "delete", "pod", "bound", "--wait=false"), out=('^pod "bound" deleted',)),
    Row((*_NS, "get", "pod", "bound"), out=(r"(?m)^bound\s+0/1\s+Terminating\s",)),
    Row((*_NS, "delete", "pod", "bound", "--grace-period=0", "--force"), out=('^pod "bound" force deleted',),
        err=("Immediate deletion does not wait for confirmation",)),
    Row((*_NS, "get", "pod", "bound"), rc=1, err=('pods "bound" not found',)),
    # CertificateSigningRequests
    Row(("create", "-f", "-"), stdin=_CSR_APPROVE, out=("^certificatesigningrequest.certificates.k8s.io/csr-{v}-a created",)),
    Row(("create", "-f", "-"), stdin=_CSR_DENY, out=("^certificatesigningrequest.certificates.k8s.io/csr-{v}-d created",)),
    Row(("get", "csr", "csr-{v}-a"), out=(r"(?m)^csr-{v}-a\s+\S+\s+kubernetes.io/kube-apiserver-client\s+admin\s+<none>"
                                          r"\s+Pending$",)),
    Row(("certificate", "approve", "csr-{v}-a"), out=("^certificatesigningrequest.certificates.k8s.io/csr-{v}-a approved",)),
    Row(("certificate", "deny", "csr-{v}-d"), out=("^certificatesigningrequest.certificates.k8s.io/csr-{v}-d denied",)),
    Row(("get", "csr", "csr-{v}-a", "csr-{v}-d"), out=(r"(?m)Approved$", r"(?m)Denied$")),
    # health and metrics
    Row(("get", "--raw", "/readyz?verbose"), out=(r"^\[\+\]ping ok\n", r"readyz check passed\n$")),
    Row(("get", "--raw", "/livez?verbose"), out=(r"^\[\+\]ping ok\n", r"livez check passed\n$")),
    Row(("get", "--raw", "/metrics"), out=(r'(?m)^apiserver_request_total\{.*verb="LIST"',)),
)


@pytest.fixture(scope="module")
def cluster_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalAPIServer]:
    with LocalAPIServer(simulate_deployments=True, simulate_delay=0.05,
                        kubeconfig_path=tmp_path_factory.mktemp("cluster") / "kubeconfig") as server:
        yield server


def cluster_versions() -> list[str]:
    """The boundary versions and the dispatcher (every version under
    ``SAMPLECONTROLLER_KUBECTL_ALL_ROWS=1``: ``make test-kubectl``): the cluster's rows are server
    behaviour and kubectl's printing of it, which the conformance table covers for the others."""
    return sorted(v for v in kubectl_binaries() if v in FULL_VERSIONS or v == "dispatcher" or all_rows())


@pytest.mark.parametrize("version", cluster_versions())
def test_cluster_conformance(version: str, cluster_server: LocalAPIServer, tmp_path: Path) -> None:
    binary = _binary(version)
    short = version.replace("1.", "").replace("dispatcher", "d")
    ns = f"cluster-{short}"

    def fill(text: str) -> str:
        return text.replace("{ns}", ns).replace("{v}", short)

    env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(cluster_server.kubeconfig_path)}
    failures: list[str] = []
    for row in ROWS:
        args = [fill(a) for a in row.args]
        proc = subprocess.run([binary, "--cache-dir", str(tmp_path / "cache"), *args], capture_output=True, text=True,
                              env=env, input=fill(row.stdin), timeout=60, cwd=ROOT)
        problems = _problems(row, proc, fill)
        if problems:
            failures.append(f"kubectl {' '.join(args)}: {'; '.join(problems)}\n"
                            f"    stdout: {proc.stdout.strip()[:400]!r}\n    stderr: {proc.stderr.strip()[:400]!r}")
    if failures:
        pytest.fail(f"kubectl {version}: {len(failures)} of {len(ROWS)} rows differ from Kubernetes:\n"
                    + "\n".join(failures), pytrace=False)
