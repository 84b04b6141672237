"""Services as a real cluster serves them (issue 19 item 4): cluster IPs from the service CIDR,
node ports from 30000-32767, both unique and released on delete, IP family fields defaulted, and
the ``kubernetes`` Service's Endpoints and EndpointSlice pointing at the server."""

from __future__ import annotations

import ipaddress
import json
import subprocess
from collections.abc import Callable
from typing import Any

import pytest

from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.ipallocator import CIDRRange
from samplecontroller.apiserver.portallocator import PortRange
from tests.apiserver.cluster_helpers import new_namespace
from tests.apiserver.conftest import Raw

Run = Callable[..., subprocess.CompletedProcess[str]]
SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")


@pytest.fixture
def raw(apiserver: LocalAPIServer) -> Raw:
    return Raw(apiserver)


@pytest.fixture
def ns(raw: Raw) -> str:
    return new_namespace(raw)


def service(name: str, type_: str = "ClusterIP", **spec: Any) -> dict[str, Any]:
    ports = spec.pop("ports", [{"name": "http", "port": 80}])
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"type": type_, "selector": {"app": name}, "ports": ports, **spec}}


def create(raw: Raw, ns: str, body: dict[str, Any], query: str = "") -> tuple[int, Any]:
    code, _, obj = raw.call("POST", f"/api/v1/namespaces/{ns}/services{query}", body)
    return code, obj


def test_cluster_ip_allocated_from_the_service_cidr_and_unique(raw: Raw, ns: str) -> None:
    ips = set()
    for i in range(5):
        code, svc = create(raw, ns, service(f"s{i}"))
        assert code == 201, svc
        ip = svc["spec"]["clusterIP"]
        assert ipaddress.ip_address(ip) in SERVICE_CIDR and ip != "10.96.0.1"
        assert svc["spec"]["clusterIPs"] == [ip]
        assert svc["spec"]["ipFamilyPolicy"] == "SingleStack" and svc["spec"]["ipFamilies"] == ["IPv4"]
        assert "nodePort" not in svc["spec"]["ports"][0]
        ips.add(ip)
    assert len(ips) == 5
    code, _, stored = raw.call("GET", f"/api/v1/namespaces/{ns}/services/s0")
    assert code == 200 and stored["spec"]["clusterIP"] in ips


def test_requested_ip_honoured_then_taken_until_deleted(raw: Raw, ns: str) -> None:
    code, svc = create(raw, ns, service("a", clusterIP="10.96.7.7"))
    assert code == 201 and svc["spec"]["clusterIPs"] == ["10.96.7.7"]
    code, err = create(raw, ns, service("b", clusterIP="10.96.7.7"))
    assert code == 422 and err["reason"] == "Invalid"
    assert err["message"] == ('Service "b" is invalid: spec.clusterIPs: Invalid value: ["10.96.7.7"]: '
                              "failed to allocate IP 10.96.7.7: provided IP is already allocated")
    code, err = create(raw, ns, service("c", clusterIP="10.96.0.1"))
    assert code == 422 and "provided IP is already allocated" in err["message"]
    code, err = create(raw, ns, service("d", clusterIP="192.168.1.1"))
    assert code == 422 and err["message"].endswith(
        "failed to allocate IP 192.168.1.1: the provided IP (192.168.1.1) is not in the valid range. "
        "The range of valid IPs is 10.96.0.0/12")
    # a dry run checks but takes nothing
    code, svc = create(raw, ns, service("e", clusterIP="10.96.7.8"), "?dryRun=All")
    assert code == 201 and svc["spec"]["clusterIP"] == "10.96.7.8"
    code, svc = create(raw, ns, service("e", clusterIP="10.96.7.8"))
    assert code == 201
    assert raw.call("DELETE", f"/api/v1/namespaces/{ns}/services/a")[0] == 200
    code, svc = create(raw, ns, service("b", clusterIP="10.96.7.7"))
    assert code == 201, svc


def test_headless_and_external_name(raw: Raw, ns: str) -> None:
    code, svc = create(raw, ns, service("headless", clusterIP="None"))
    assert code == 201
    assert svc["spec"]["clusterIP"] == "None" and svc["spec"]["clusterIPs"] == ["None"]
    assert svc["spec"]["ipFamilyPolicy"] == "SingleStack" and svc["spec"]["ipFamilies"] == ["IPv4"]
    bare = service("bare", clusterIP="None")
    del bare["spec"]["selector"]
    code, svc = create(raw, ns, bare)
    assert code == 201
    assert svc["spec"]["ipFamilyPolicy"] == "RequireDualStack" and svc["spec"]["ipFamilies"] == ["IPv4", "IPv6"]
    code, svc = create(raw, ns, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ext"},
                                 "spec": {"type": "ExternalName", "externalName": "example.com"}})
    assert code == 201 and "clusterIP" not in svc["spec"] and "ipFamilies" not in svc["spec"]


def test_dual_stack_is_refused_on_a_single_stack_cluster(raw: Raw, ns: str) -> None:
    code, err = create(raw, ns, service("ds", ipFamilyPolicy="RequireDualStack"))
    assert code == 422
    assert "spec.ipFamilyPolicy: Invalid value: \"RequireDualStack\": this cluster is not configured for " \
           "dual-stack services" in err["message"]
    code, err = create(raw, ns, service("v6", ipFamilies=["IPv6"]))
    assert code == 422 and 'spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster' in err["message"]
    code, svc = create(raw, ns, service("pref", ipFamilyPolicy="PreferDualStack"))
    assert code == 201 and svc["spec"]["ipFamilies"] == ["IPv4"]


def test_node_ports_allocated_unique_and_released(raw: Raw, ns: str) -> None:
    code, svc = create(raw, ns, service("np", "NodePort", ports=[{"name": "a", "port": 80}, {"name": "b", "port": 81}]))
    assert code == 201, svc
    ports = [p["nodePort"] for p in svc["spec"]["ports"]]
    assert all(30000 <= p <= 32767 for p in ports) and len(set(ports)) == 2
    assert svc["spec"]["externalTrafficPolicy"] == "Cluster"
    code, err = create(raw, ns, service("np2", "NodePort", ports=[{"port": 80, "nodePort": ports[0]}]))
    assert code == 422
    assert err["message"] == (f'Service "np2" is invalid: spec.ports[0].nodePort: Invalid value: {ports[0]}: '
                              "provided port is already allocated")
    code, err = create(raw, ns, service("np3", "NodePort", ports=[{"port": 80, "nodePort": 80}]))
    assert code == 422 and err["message"].endswith(
        "spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. "
        "The range of valid ports is 30000-32767")
    code, lb = create(raw, ns, service("lb", "LoadBalancer", externalTrafficPolicy="Local"))
    assert code == 201, lb
    assert 30000 <= lb["spec"]["ports"][0]["nodePort"] <= 32767
    assert 30000 <= lb["spec"]["healthCheckNodePort"] <= 32767
    assert lb["spec"]["allocateLoadBalancerNodePorts"] is True
    code, err = create(raw, ns, service("cip", ports=[{"port": 80, "nodePort": 30999}]))
    assert code == 422 and "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'" in err["message"]
    assert raw.call("DELETE", f"/api/v1/namespaces/{ns}/services/np")[0] == 200
    code, svc = create(raw, ns, service("np2", "NodePort", ports=[{"port": 80, "nodePort": ports[0]}]))
    assert code == 201, svc


def test_updates_keep_allocations_and_type_changes_release_them(raw: Raw, ns: str) -> None:
    code, svc = create(raw, ns, service("u"))
    assert code == 201
    ip = svc["spec"]["clusterIP"]
    replacement = service("u")
    replacement["metadata"]["resourceVersion"] = svc["metadata"]["resourceVersion"]
    code, _, updated = raw.call("PUT", f"/api/v1/namespaces/{ns}/services/u", replacement)
    assert code == 200 and updated["spec"]["clusterIP"] == ip and updated["spec"]["clusterIPs"] == [ip]
    code, _, err = raw.call("PATCH", f"/api/v1/namespaces/{ns}/services/u", {"spec": {"clusterIP": "10.96.9.9",
                                                                                       "clusterIPs": ["10.96.9.9"]}},
                            ctype="application/merge-patch+json")
    assert code == 422 and 'spec.clusterIPs[0]: Invalid value: ["10.96.9.9"]: may not change once set' in err["message"]
    code, _, np = raw.call("PATCH", f"/api/v1/namespaces/{ns}/services/u", {"spec": {"type": "NodePort"}},
                           ctype="application/merge-patch+json")
    assert code == 200, np
    node_port = np["spec"]["ports"][0]["nodePort"]
    assert 30000 <= node_port <= 32767 and np["spec"]["clusterIP"] == ip
    code, _, back = raw.call("PATCH", f"/api/v1/namespaces/{ns}/services/u", {"spec": {"type": "ClusterIP"}},
                             ctype="application/merge-patch+json")
    assert code == 200, back
    assert "nodePort" not in back["spec"]["ports"][0]
    code, svc = create(raw, ns, service("taker", "NodePort", ports=[{"port": 80, "nodePort": node_port}]))
    assert code == 201, svc


def test_kubernetes_service_endpoints_point_at_the_server(fresh_apiserver: LocalAPIServer) -> None:
    raw = Raw(fresh_apiserver)
    code, _, svc = raw.call("GET", "/api/v1/namespaces/default/services/kubernetes")
    assert code == 200
    assert svc["spec"]["clusterIP"] == "10.96.0.1" and svc["spec"]["ipFamilies"] == ["IPv4"]
    assert svc["spec"]["ports"][0]["port"] == 443
    assert svc["spec"]["ports"][0]["targetPort"] == fresh_apiserver.port
    code, _, endpoints = raw.call("GET", "/api/v1/namespaces/default/endpoints/kubernetes")
    assert code == 200, endpoints
    assert endpoints["subsets"] == [{"addresses": [{"ip": "127.0.0.1"}],
                                     "ports": [{"name": "https", "port": fresh_apiserver.port, "protocol": "TCP"}]}]
    code, _, slice_ = raw.call("GET", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes")
    assert code == 200, slice_
    assert slice_["addressType"] == "IPv4"
    assert slice_["metadata"]["labels"]["kubernetes.io/service-name"] == "kubernetes"
    assert slice_["endpoints"][0]["addresses"] == ["127.0.0.1"]
    assert slice_["ports"] == [{"name": "https", "port": fresh_apiserver.port, "protocol": "TCP"}]


@pytest.mark.kubectl
def test_kubectl_create_service(kubectl: Run, raw: Raw, ns: str) -> None:
    out = kubectl("create", "service", "clusterip", "web", "--tcp=80:8080", "-n", ns, "-o", "json", check=True)
    web = json.loads(out.stdout)
    assert ipaddress.ip_address(web["spec"]["clusterIP"]) in SERVICE_CIDR
    out = kubectl("create", "service", "nodeport", "np", "--tcp=80:8080", "-n", ns, "-o", "json", check=True)
    node_port = json.loads(out.stdout)["spec"]["ports"][0]["nodePort"]
    assert 30000 <= node_port <= 32767
    taken = kubectl("create", "service", "nodeport", "np2", "--tcp=80:8080", f"--node-port={node_port}", "-n", ns)
    assert taken.returncode == 1
    assert f"spec.ports[0].nodePort: Invalid value: {node_port}: provided port is already allocated" in taken.stderr
    clash = kubectl("create", "service", "clusterip", "web2", "--tcp=80:8080",
                    f"--clusterip={web['spec']['clusterIP']}", "-n", ns)
    assert clash.returncode == 1 and "provided IP is already allocated" in clash.stderr
    headless = kubectl("create", "service", "clusterip", "hl", "--clusterip=None", "-n", ns, "-o", "json", check=True)
    assert json.loads(headless.stdout)["spec"]["clusterIP"] == "None"
    table = kubectl("get", "service", "web", "np", "-n", ns, check=True).stdout
    assert web["spec"]["clusterIP"] in table and f"80:{node_port}/TCP" in table


def test_ranges() -> None:
    cidr = CIDRRange("10.96.0.0/12")
    assert cidr.size == 2**20 - 2 and cidr.offset == 256 and cidr.ip_at(0) == "10.96.0.1"
    assert cidr.index_of("10.96.0.0") is None and cidr.index_of("10.111.255.255") is None
    small = CIDRRange("10.0.0.0/29")
    taken = {small.ip_at(i) for i in range(small.size - 1)}
    assert small.allocate_next(taken) == small.ip_at(small.size - 1)
    ports = PortRange()
    assert str(ports) == "30000-32767" and ports.offset == 86
    assert ports.allocate_next(set(range(30000, 32767))) == 32767
