"""The bootstrap RBAC policy kube-apiserver creates at start (plugin/pkg/auth/authorizer/rbac/
bootstrappolicy: ``ClusterRoles()``, ``ClusterRoleBindings()``, ``ControllerRoles()``; Apache-2.0,
ported as data): the user-facing roles (``cluster-admin``; ``admin``, ``edit`` and ``view``
aggregated from ``system:aggregate-to-*``), discovery and public info for everyone,
``system:basic-user`` (self reviews) for every authenticated user, the control-plane components'
roles, and the bindings (``cluster-admin`` to ``system:masters``, ...).

The rules are those of kube-apiserver 1.37's ``policy.go`` and ``controller_policy.go``; the ones
kube adds behind a feature gate (``utilfeature.DefaultFeatureGate.Enabled``) follow the gate's
default at the server's emulated version (``--emulated-version`` 1.33-1.36 runs the 1.37 policy
with that version's gates, as kube-apiserver does): ``_GATES``. Gates off by default through 1.37
(alpha, or beta off: GenericWorkload, CompositePodGroup, EvictionRequestAPI, WorkloadWithJob,
DRAWorkloadResourceClaims, DRADeviceTaintRules, DRAResourcePoolStatus, CSIVolumeHealth,
StorageVersionAPI) add nothing here, as they add nothing to a default kube-apiserver. The
namespaced Roles and RoleBindings are those of 1.36's
``testdata/namespace-roles.yaml`` and ``namespace-role-bindings.yaml`` (no later
``namespace_policy.go`` was found).

``install(core)`` creates what is missing and, as kube-apiserver does at every start, adds the
rules and subjects an existing bootstrap object lacks unless it is annotated
``rbac.authorization.kubernetes.io/autoupdate: "false"`` (what users added stays), each
object labelled ``kubernetes.io/bootstrapping: rbac-defaults`` and annotated
``rbac.authorization.kubernetes.io/autoupdate: "true"`` as upstream's are; with them the
``system:controller:*`` roles of kube-controller-manager's controllers (``controller_policy.go``)
bound to their ``kube-system`` ServiceAccounts, as ``kubectl get clusterroles`` lists them on a
real cluster, and the Roles and RoleBindings of ``kube-system`` and ``kube-public``
(``namespace_policy.go``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from samplecontroller.apiserver.version import BINARY_MINOR

if TYPE_CHECKING:
    from samplecontroller.apiserver.core import Core

__all__ = ["cluster_role_bindings", "cluster_roles", "install", "namespace_role_bindings", "namespace_roles"]

_GROUP = "rbac.authorization.k8s.io"
_MANAGER = "kube-apiserver"
_RW = "create delete deletecollection patch update"
_READ = "get list watch"
_ALL = "create delete deletecollection get list patch update watch"
Rule = dict[str, list[str]]


def _r(verbs: str, groups: Sequence[str], resources: str, names: str = "") -> Rule:
    rule: Rule = {"apiGroups": list(groups), "resources": resources.split(), "verbs": verbs.split()}
    if names:
        rule["resourceNames"] = names.split()
    return rule


def _urls(verbs: str, urls: str) -> Rule:
    return {"nonResourceURLs": urls.split(), "verbs": verbs.split()}


_C = ("",)  # the core group


# Feature gate -> the first minor version whose kube-apiserver enables it by default (the gates the
# 1.37 policy consults that are on by default at some version from 1.33 to 1.37; the others are off
# through 1.37 and add nothing). From the gates' documented stages (kubernetes/website
# feature-gates/*.md) and kube's versioned specs.
_GATES: dict[str, int] = {
    "DynamicResourceAllocation": 34,  # beta (off) 1.32-1.33, GA 1.34
    "DRADeviceTaints": 36,  # alpha 1.33-1.35, beta (on) 1.36
    "DRAExtendedResource": 36,  # alpha 1.34-1.35, beta (on) 1.36
    "DRAResourceClaimGranularStatusAuthorization": 36,  # beta (on) 1.36
    "KubeletFineGrainedAuthz": 33,  # beta (on) 1.33, GA 1.36
    "KubeletServiceAccountTokenForCredentialProviders": 34,  # alpha 1.33, beta (on) 1.34
    "MultiCIDRServiceAllocator": 33,  # beta (off) 1.31-1.32, GA 1.33
    "SELinuxChangePolicy": 33,  # beta (on) 1.33, GA 1.36
    "VolumeAttributesClass": 34,  # beta (off) 1.31-1.33, GA 1.34
    "ComponentFlagz": 36,  # alpha 1.32-1.35, beta (on) 1.36
    "ComponentStatusz": 36,  # alpha 1.32, beta (on) 1.36
    "ClusterTrustBundle": 37,  # beta (off) 1.33-1.36, GA 1.37
    "PodCertificateRequest": 37,  # alpha 1.34, beta (off) 1.35-1.36, GA 1.37
    "StorageVersionMigrator": 37,  # alpha 1.30-1.34, beta (off) 1.35-1.36, GA 1.37
}


def _on(gate: str, minor: int) -> bool:
    """Whether ``gate`` is on by default at Kubernetes ``1.<minor>``."""
    return minor >= _GATES[gate]


def _view(minor: int) -> list[Rule]:
    rules = [
        _r(_READ, _C, "configmaps endpoints persistentvolumeclaims persistentvolumeclaims/status pods "
           "replicationcontrollers replicationcontrollers/scale serviceaccounts services services/status"),
        _r(_READ, _C, "bindings limitranges namespaces/status pods/log pods/status replicationcontrollers/status "
           "resourcequotas resourcequotas/status"),
        _r(_READ, _C, "namespaces"),
        _r(_READ, ("", "events.k8s.io"), "events"),
        _r(_READ, ("discovery.k8s.io",), "endpointslices"),
        _r(_READ, ("apps",), "controllerrevisions daemonsets daemonsets/status deployments deployments/scale "
           "deployments/status replicasets replicasets/scale replicasets/status statefulsets statefulsets/scale "
           "statefulsets/status"),
        _r(_READ, ("autoscaling",), "horizontalpodautoscalers horizontalpodautoscalers/status"),
        _r(_READ, ("batch",), "cronjobs cronjobs/status jobs jobs/status"),
        _r(_READ, ("extensions",), "daemonsets daemonsets/status deployments deployments/scale deployments/status "
           "ingresses ingresses/status networkpolicies replicasets replicasets/scale replicasets/status "
           "replicationcontrollers/scale"),
        _r(_READ, ("policy",), "poddisruptionbudgets poddisruptionbudgets/status"),
        _r(_READ, ("networking.k8s.io",), "ingresses ingresses/status networkpolicies"),
    ]
    if _on("DynamicResourceAllocation", minor):
        rules.append(_r(_READ, ("resource.k8s.io",), "resourceclaims resourceclaims/status resourceclaimtemplates"))
    return rules


def _edit(minor: int) -> list[Rule]:
    rules = [
        _r(_READ, _C, "pods/attach pods/exec pods/portforward pods/proxy secrets services/proxy"),
        _r("impersonate", _C, "serviceaccounts"),
        _r(_RW, _C, "pods pods/attach pods/exec pods/portforward pods/proxy"),
        _r("create", _C, "pods/eviction"),
        _r(_RW, _C, "configmaps persistentvolumeclaims replicationcontrollers replicationcontrollers/scale secrets "
           "serviceaccounts services services/proxy"),
        _r("create", _C, "serviceaccounts/token"),
        _r(_RW, ("", "events.k8s.io"), "events"),
        _r(_RW, ("apps",), "daemonsets deployments deployments/rollback deployments/scale replicasets "
           "replicasets/scale statefulsets statefulsets/scale"),
        _r(_RW, ("autoscaling",), "horizontalpodautoscalers"),
        _r(_RW, ("batch",), "cronjobs jobs"),
        _r(_RW, ("extensions",), "daemonsets deployments deployments/rollback deployments/scale ingresses "
           "networkpolicies replicasets replicasets/scale replicationcontrollers/scale"),
        _r(_RW, ("policy",), "poddisruptionbudgets"),
        _r(_RW, ("networking.k8s.io",), "ingresses networkpolicies"),
        _r(_ALL, ("coordination.k8s.io",), "leases"),
    ]
    if _on("DynamicResourceAllocation", minor):
        rules.append(_r(_RW, ("resource.k8s.io",), "resourceclaims resourceclaimtemplates"))
    return rules


def _approver(signer: str) -> list[Rule]:
    return [_r("approve", ("certificates.k8s.io",), "signers", f"kubernetes.io/{signer}")]


_EVENTS = _r("create patch update", ("", "events.k8s.io"), "events")
_DRA = ("resource.k8s.io",)


def _node(minor: int) -> list[Rule]:
    """``NodeRules()``: the kubelets' role."""
    rules = [
        _r("create", ("authentication.k8s.io",), "tokenreviews"),
        _r("create", ("authorization.k8s.io",), "localsubjectaccessreviews subjectaccessreviews"),
        _r(_READ, _C, "services"),
        _r("create get list watch", _C, "nodes"),
        _r("patch update", _C, "nodes/status"),
        _r("patch update", _C, "nodes"),
        _EVENTS,
        _r(_READ, _C, "pods"),
        _r("create delete", _C, "pods"),
        _r("patch update", _C, "pods/status"),
        _r("create", _C, "pods/eviction"),
        _r(_READ, _C, "configmaps secrets"),
        _r("get", _C, "persistentvolumeclaims persistentvolumes"),
        _r("get", _C, "endpoints"),
        _r("create get list watch", ("certificates.k8s.io",), "certificatesigningrequests"),
        _r("create delete get patch update", ("coordination.k8s.io",), "leases"),
        _r("get", ("storage.k8s.io",), "volumeattachments"),
        _r("create", _C, "serviceaccounts/token"),
        _r("get patch update", _C, "persistentvolumeclaims/status"),
        _r(_READ, ("storage.k8s.io",), "csidrivers"),
        _r("create delete get patch update", ("storage.k8s.io",), "csinodes"),
        _r(_READ, ("node.k8s.io",), "runtimeclasses"),
    ]
    if _on("DynamicResourceAllocation", minor):
        rules += [_r("get", _DRA, "resourceclaims"), _r("deletecollection", _DRA, "resourceslices")]
    if _on("ClusterTrustBundle", minor):
        rules.append(_r(_READ, ("certificates.k8s.io",), "clustertrustbundles"))
    if _on("KubeletServiceAccountTokenForCredentialProviders", minor):
        rules.append(_r("get", _C, "serviceaccounts"))
    if _on("PodCertificateRequest", minor):
        rules.append(_r("create get list watch", ("certificates.k8s.io",), "podcertificaterequests"))
    return rules


def _scheduler(minor: int) -> list[Rule]:
    rules = [
        _EVENTS,
        _r("create", ("coordination.k8s.io",), "leases"),
        _r("get list update watch", ("coordination.k8s.io",), "leases", "kube-scheduler"),
        _r(_ALL, ("coordination.k8s.io",), "leasecandidates"),
        _r(_READ, _C, "nodes"),
        _r("delete get list watch", _C, "pods"),
        _r("create", _C, "bindings pods/binding"),
        _r("patch update", _C, "pods/status"),
        _r(_READ, _C, "replicationcontrollers services"),
        _r(_READ, ("apps", "extensions"), "replicasets"),
        _r(_READ, ("apps",), "statefulsets"),
        _r(_READ, ("policy",), "poddisruptionbudgets"),
        _r(_READ, _C, "persistentvolumeclaims persistentvolumes"),
        _r("create", ("authentication.k8s.io",), "tokenreviews"),
        _r("create", ("authorization.k8s.io",), "subjectaccessreviews"),
        _r(_READ, ("storage.k8s.io",), "csinodes"),
        _r(_READ, ("storage.k8s.io",), "volumeattachments"),
        _r(_READ, _C, "namespaces"),
        _r(_READ, ("storage.k8s.io",), "csidrivers"),
        _r(_READ, ("storage.k8s.io",), "csistoragecapacities"),
    ]
    if _on("DynamicResourceAllocation", minor):
        rules += [
            _r(_READ, _DRA, "deviceclasses"),
            _r("get list patch update watch", _DRA, "resourceclaims"),
            _r("get list patch update watch", _DRA, "resourceclaims/status"),
            _r("update", _C, "pods/finalizers"),
            _r(_READ, _DRA, "resourceslices"),
        ]
        if _on("DRAExtendedResource", minor):
            rules.append(_r("create delete", _DRA, "resourceclaims"))
        if _on("DRAResourceClaimGranularStatusAuthorization", minor):
            rules.append(_r("patch update", _DRA, "resourceclaims/binding"))
    return rules


def _roles(minor: int) -> dict[str, tuple[list[Rule] | None, dict[str, str], str]]:
    """name -> (rules, extra labels, aggregate-to selector label or "")."""
    agg = "rbac.authorization.k8s.io/aggregate-to-"
    monitoring = ["/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics", "/metrics/slis", "/readyz",
                  "/readyz/*"]
    monitoring += [url for gate, url in (("ComponentFlagz", "/flagz"), ("ComponentStatusz", "/statusz"))
                   if _on(gate, minor)]
    kubelet_api_admin = [_r(_READ, _C, "nodes"), _r("proxy", _C, "nodes"),
                         _r("*", _C, "nodes/log nodes/metrics nodes/proxy nodes/stats")]
    if _on("KubeletFineGrainedAuthz", minor):
        kubelet_api_admin.append(_r("*", _C, "nodes/configz nodes/healthz nodes/pods"))
    proxier = [_r("list watch", _C, "endpoints services"), _r(_READ, _C, "nodes"), _EVENTS]
    if _on("MultiCIDRServiceAllocator", minor):
        proxier.append(_r("list watch", ("networking.k8s.io",), "servicecidrs"))
    proxier.append(_r("list watch", ("discovery.k8s.io",), "endpointslices"))
    roles: dict[str, tuple[list[Rule] | None, dict[str, str], str]] = {
        "admin": (None, {}, agg + "admin"),
        "cluster-admin": ([_r("*", ("*",), "*"), _urls("*", "*")], {}, ""),
        "edit": (None, {agg + "admin": "true"}, agg + "edit"),
        "view": (None, {agg + "edit": "true"}, agg + "view"),
        "system:aggregate-to-admin": ([
            _r("create", ("authorization.k8s.io",), "localsubjectaccessreviews"),
            _r(_ALL, (_GROUP,), "rolebindings roles")], {agg + "admin": "true"}, ""),
        "system:aggregate-to-edit": (_edit(minor), {agg + "edit": "true"}, ""),
        "system:aggregate-to-view": (_view(minor), {agg + "view": "true"}, ""),
        "system:auth-delegator": ([
            _r("create", ("authentication.k8s.io",), "tokenreviews"),
            _r("create", ("authorization.k8s.io",), "subjectaccessreviews")], {}, ""),
        "system:basic-user": ([
            _r("create", ("authorization.k8s.io",), "selfsubjectaccessreviews selfsubjectrulesreviews"),
            _r("create", ("authentication.k8s.io",), "selfsubjectreviews")], {}, ""),
        "system:certificates.k8s.io:certificatesigningrequests:nodeclient": ([
            _r("create", ("certificates.k8s.io",), "certificatesigningrequests/nodeclient")], {}, ""),
        "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient": ([
            _r("create", ("certificates.k8s.io",), "certificatesigningrequests/selfnodeclient")], {}, ""),
        "system:certificates.k8s.io:kube-apiserver-client-approver": (_approver("kube-apiserver-client"), {}, ""),
        "system:certificates.k8s.io:kube-apiserver-client-kubelet-approver": (
            _approver("kube-apiserver-client-kubelet"), {}, ""),
        "system:certificates.k8s.io:kubelet-serving-approver": (_approver("kubelet-serving"), {}, ""),
        "system:certificates.k8s.io:legacy-unknown-approver": (_approver("legacy-unknown"), {}, ""),
        "system:discovery": ([_urls("get", "/api /api/* /apis /apis/* /healthz /livez /openapi /openapi/* /readyz "
                                    "/version /version/")], {}, ""),
        "system:heapster": ([_r(_READ, _C, "events namespaces nodes pods"),
                             _r(_READ, ("extensions",), "deployments")], {}, ""),
        "system:kube-aggregator": ([_r(_READ, _C, "endpoints services")], {}, ""),
        "system:kube-controller-manager": ([
            _EVENTS,
            _r("create", ("coordination.k8s.io",), "leases"),
            _r("get update", ("coordination.k8s.io",), "leases", "kube-controller-manager"),
            _r("create", _C, "secrets serviceaccounts"),
            _r("delete", _C, "secrets"),
            _r("get", _C, "configmaps namespaces secrets serviceaccounts"),
            _r("update", _C, "secrets serviceaccounts"),
            _r("create", ("authentication.k8s.io",), "tokenreviews"),
            _r("create", ("authorization.k8s.io",), "subjectaccessreviews"),
            _r("list watch", ("*",), "*"),
            _r("create", _C, "serviceaccounts/token")], {}, ""),
        "system:kube-dns": ([_r("list watch", _C, "endpoints services")], {}, ""),
        "system:kube-scheduler": (_scheduler(minor), {}, ""),
        "system:kubelet-api-admin": (kubelet_api_admin, {}, ""),
        "system:monitoring": ([_urls("get", " ".join(sorted(monitoring))), _r("get", _C, "nodes/metrics")], {}, ""),
        "system:node": (_node(minor), {}, ""),
        "system:node-bootstrapper": ([
            _r("create get list watch", ("certificates.k8s.io",), "certificatesigningrequests")], {}, ""),
        "system:node-problem-detector": ([
            _r("get", _C, "nodes"), _r("patch", _C, "nodes/status"), _EVENTS], {}, ""),
        "system:node-proxier": (proxier, {}, ""),
        "system:persistent-volume-provisioner": ([
            _r("create delete get list watch", _C, "persistentvolumes"),
            _r("get list update watch", _C, "persistentvolumeclaims"),
            _r(_READ, ("storage.k8s.io",), "storageclasses"),
            _r("watch", _C, "events"), _EVENTS], {}, ""),
        "system:public-info-viewer": ([_urls("get", "/healthz /livez /readyz /version /version/")], {}, ""),
        "system:service-account-issuer-discovery": ([_urls(
            "get", "/.well-known/openid-configuration /.well-known/openid-configuration/ /openid/v1/jwks "
            "/openid/v1/jwks/")], {}, ""),
        "system:volume-scheduler": ([
            _r("get list patch update watch", _C, "persistentvolumes"),
            _r(_READ, ("storage.k8s.io",), "storageclasses"),
            _r("get list patch update watch", _C, "persistentvolumeclaims")], {}, ""),
    }
    if _on("ClusterTrustBundle", minor):
        roles["system:cluster-trust-bundle-discovery"] = (
            [_r(_READ, ("certificates.k8s.io",), "clustertrustbundles")], {}, "")
    return roles


def _controller_roles(minor: int) -> dict[str, list[Rule]]:
    """kube-controller-manager's controllers' roles (``controller_policy.go``), by controller name:
    ClusterRole ``system:controller:<name>`` bound to ServiceAccount ``kube-system/<name>``."""
    apps_ext = ("apps", "extensions")
    ev = _EVENTS
    roles: dict[str, list[Rule]] = {
        "attachdetach-controller": [
            _r("list watch", _C, "persistentvolumeclaims persistentvolumes"), _r(_READ, _C, "nodes"),
            _r("patch update", _C, "nodes/status"), _r("list watch", _C, "pods"), ev,
            _r("create delete get list watch", ("storage.k8s.io",), "volumeattachments"),
            _r(_READ, ("storage.k8s.io",), "csidrivers"), _r(_READ, ("storage.k8s.io",), "csinodes")],
        "certificate-controller": [
            _r("delete get list watch", ("certificates.k8s.io",), "certificatesigningrequests"),
            _r("update", ("certificates.k8s.io",), "certificatesigningrequests/approval "
               "certificatesigningrequests/status"),
            _r("approve", ("certificates.k8s.io",), "signers", "kubernetes.io/kube-apiserver-client-kubelet"),
            _r("sign", ("certificates.k8s.io",), "signers", "kubernetes.io/kube-apiserver-client "
               "kubernetes.io/kube-apiserver-client-kubelet kubernetes.io/kubelet-serving kubernetes.io/legacy-unknown"),
            _r("create", ("authorization.k8s.io",), "subjectaccessreviews"), ev],
        "clusterrole-aggregation-controller": [
            _r("escalate get list patch update watch", (_GROUP,), "clusterroles")],
        "cronjob-controller": [
            _r("get list update watch", ("batch",), "cronjobs"),
            _r("create delete get list patch update watch", ("batch",), "jobs"),
            _r("update", ("batch",), "cronjobs/status"), _r("update", ("batch",), "cronjobs/finalizers"),
            _r("delete list watch", _C, "pods"), ev],
        "daemon-set-controller": [
            _r(_READ, apps_ext, "daemonsets"), _r("update", apps_ext, "daemonsets/status"),
            _r("update", apps_ext, "daemonsets/finalizers"), _r("list watch", _C, "nodes"),
            _r("create delete list patch watch", _C, "pods"), _r("create", _C, "pods/binding"),
            _r("create delete get list patch update watch", ("apps",), "controllerrevisions"), ev],
        "deployment-controller": [
            _r("get list update watch", apps_ext, "deployments"), _r("update", apps_ext, "deployments/status"),
            _r("update", apps_ext, "deployments/finalizers"),
            _r("create delete get list patch update watch", apps_ext, "replicasets"),
            _r("get list update watch", _C, "pods"), ev],
        "disruption-controller": [
            _r(_READ, apps_ext, "deployments"), _r(_READ, apps_ext, "replicasets"),
            _r(_READ, _C, "replicationcontrollers"), _r(_READ, ("policy",), "poddisruptionbudgets"),
            _r(_READ, ("apps",), "statefulsets"), _r("update", ("policy",), "poddisruptionbudgets/status"),
            _r("patch update", _C, "pods/status"), _r("get", ("*",), "*/scale"), ev],
        "endpoint-controller": [
            _r(_READ, _C, "pods services"), _r("create delete get list update watch", _C, "endpoints"),
            _r("create", _C, "endpoints/restricted"), ev],
        "endpointslice-controller": [
            _r(_READ, _C, "nodes pods services"), _r("update", _C, "services/finalizers"),
            _r("create delete get list update watch", ("discovery.k8s.io",), "endpointslices"), ev],
        "endpointslicemirroring-controller": [
            _r(_READ, _C, "endpoints services"), _r("update", _C, "services/finalizers"),
            _r("update", _C, "endpoints/finalizers"),
            _r("create delete get list update watch", ("discovery.k8s.io",), "endpointslices"), ev],
        "ephemeral-volume-controller": [
            _r(_READ, _C, "pods"), _r("update", _C, "pods/finalizers"),
            _r("create get list watch", _C, "persistentvolumeclaims"), ev],
        "expand-controller": [
            _r("get list patch update watch", _C, "persistentvolumes"),
            _r("patch update", _C, "persistentvolumeclaims/status"), _r(_READ, _C, "persistentvolumeclaims"), ev],
        "generic-garbage-collector": [_r("delete get list patch update watch", ("*",), "*"), ev],
        "horizontal-pod-autoscaler": [
            _r(_READ, ("autoscaling",), "horizontalpodautoscalers"),
            _r("update", ("autoscaling",), "horizontalpodautoscalers/status"),
            _r("get update", ("*",), "*/scale"), _r("list watch", _C, "pods"),
            _r("list watch", ("metrics.k8s.io",), "pods"), _r(_READ, ("custom.metrics.k8s.io",), "*"),
            _r(_READ, ("external.metrics.k8s.io",), "*"), ev],
        "job-controller": [
            _r("get list patch update watch", ("batch",), "jobs"), _r("update", ("batch",), "jobs/status"),
            _r("update", ("batch",), "jobs/finalizers"), _r("create delete list patch watch", _C, "pods"), ev],
        "legacy-service-account-token-cleaner": [
            _r("get", _C, "configmaps", "kube-apiserver-legacy-service-account-token-tracking"),
            _r("delete patch", _C, "secrets")],
        "namespace-controller": [
            _r("delete get list watch", _C, "namespaces"), _r("update", _C, "namespaces/finalize namespaces/status"),
            _r("delete deletecollection get list watch", ("*",), "*")],
        # the leases rule is in every post-1.36 controller_policy.go found (not in 1.36's testdata)
        "node-controller": [
            _r("delete get list patch update watch", _C, "nodes"), _r("patch update", _C, "nodes/status"),
            _r("patch update", _C, "pods/status"), _r("delete get list watch", _C, "pods"),
            _r(_READ, ("coordination.k8s.io",), "leases"), ev],
        "persistent-volume-binder": [
            _r("create delete get list update watch", _C, "persistentvolumes"),
            _r("update", _C, "persistentvolumes/status"), _r("get list update watch", _C, "persistentvolumeclaims"),
            _r("update", _C, "persistentvolumeclaims/status"), _r("create delete get list watch", _C, "pods"),
            _r(_READ, ("storage.k8s.io",), "storageclasses"), _r("list watch", _C, "nodes"), ev,
            _r("watch", _C, "events")],
        "pod-garbage-collector": [
            _r("delete list watch", _C, "pods"), _r(_READ, _C, "nodes"), _r("patch", _C, "pods/status")],
        "pv-protection-controller": [_r("get list update watch", _C, "persistentvolumes"), ev],
        "pvc-protection-controller": [
            _r("get list update watch", _C, "persistentvolumeclaims"),
            _r("update", _C, "persistentvolumeclaims/status"), _r(_READ, _C, "pods"), ev],
        "replicaset-controller": [
            _r("get list update watch", apps_ext, "replicasets"), _r("update", apps_ext, "replicasets/status"),
            _r("update", apps_ext, "replicasets/finalizers"), _r("create delete list patch watch", _C, "pods"), ev],
        "replication-controller": [
            _r("get list update watch", _C, "replicationcontrollers"),
            _r("update", _C, "replicationcontrollers/status"), _r("update", _C, "replicationcontrollers/finalizers"),
            _r("create delete list patch watch", _C, "pods"), ev],
        "resourcequota-controller": [
            _r("list watch", ("*",), "*"), _r("update", _C, "resourcequotas/status"), ev],
        "root-ca-cert-publisher": [_r("create update", _C, "configmaps"), ev],
        "route-controller": [_r("list watch", _C, "nodes"), _r("patch", _C, "nodes/status"), ev],
        "service-account-controller": [_r("create", _C, "serviceaccounts"), ev],
        "service-controller": [
            _r(_READ, _C, "services"), _r("patch update", _C, "services/status"), _r("list watch", _C, "nodes"), ev],
        "statefulset-controller": [
            _r("list watch", _C, "pods"), _r(_READ, ("apps",), "statefulsets"),
            _r("update", ("apps",), "statefulsets/status"), _r("update", ("apps",), "statefulsets/finalizers"),
            _r("create delete get patch update", _C, "pods"),
            _r("create delete get list patch update watch", ("apps",), "controllerrevisions"),
            _r("create get list watch", _C, "persistentvolumeclaims"),
            _r("delete update", _C, "persistentvolumeclaims"), _r("update", _C, "pods/finalizers"), ev],
        "ttl-after-finished-controller": [_r("delete get list watch", ("batch",), "jobs"), ev],
        "ttl-controller": [_r("list patch update watch", _C, "nodes"), ev],
        "validatingadmissionpolicy-status-controller": [
            _r(_READ, ("admissionregistration.k8s.io",), "validatingadmissionpolicies"),
            _r("get patch update", ("admissionregistration.k8s.io",), "validatingadmissionpolicies/status"), ev],
    }
    if _on("DynamicResourceAllocation", minor):
        claims = [
            _r(_READ, _C, "pods"), _r("update", _C, "pods/finalizers"),
            _r("create delete get list watch", _DRA, "resourceclaims"),
            _r("patch update", _DRA, "resourceclaims resourceclaims/status"),
            _r("patch update", _C, "pods/status"), ev]
        if _on("DRAResourceClaimGranularStatusAuthorization", minor):
            claims.append(_r("patch update", _DRA, "resourceclaims/binding"))
        roles["resource-claim-controller"] = claims
        if _on("DRADeviceTaints", minor):
            roles["device-taint-eviction-controller"] = [
                _r("delete get list watch", _C, "pods"), _r("patch update", _C, "pods/status"),
                _r(_READ, _DRA, "resourceclaims"), _r(_READ, _DRA, "resourceslices"),
                _r(_READ, _DRA, "deviceclasses"), ev]
    if _on("MultiCIDRServiceAllocator", minor):
        roles["service-cidrs-controller"] = [
            _r("get list patch update watch", ("networking.k8s.io",), "servicecidrs"),
            _r("patch update", ("networking.k8s.io",), "servicecidrs/finalizers"),
            _r("patch update", ("networking.k8s.io",), "servicecidrs/status"),
            _r(_READ, ("networking.k8s.io",), "ipaddresses"), ev]
    if _on("PodCertificateRequest", minor):
        roles["podcertificaterequestcleaner"] = [
            _r("delete get list watch", ("certificates.k8s.io",), "podcertificaterequests")]
    if _on("VolumeAttributesClass", minor):
        roles["volumeattributesclass-protection-controller"] = [
            _r(_READ, _C, "persistentvolumeclaims"), _r(_READ, _C, "persistentvolumes"),
            _r("get list update watch", ("storage.k8s.io",), "volumeattributesclasses"), ev]
    if _on("ClusterTrustBundle", minor):
        roles["kube-apiserver-serving-clustertrustbundle-publisher"] = [
            _r("attest", ("certificates.k8s.io",), "signers", "kubernetes.io/kube-apiserver-serving"),
            _r("create delete list update watch", ("certificates.k8s.io",), "clustertrustbundles"), ev]
    if _on("StorageVersionMigrator", minor):
        roles["storage-version-migrator-controller"] = [
            _r("list patch", ("*",), "*"),
            _r("get", ("apiextensions.k8s.io",), "customresourcedefinitions"),
            _r("patch", ("apiextensions.k8s.io",), "customresourcedefinitions/status"),
            _r("update", ("storagemigration.k8s.io",), "storageversionmigrations/status")]
    if _on("SELinuxChangePolicy", minor):
        roles["selinux-warning-controller"] = [
            ev, _r(_READ, _C, "persistentvolumes"), _r(_READ, _C, "persistentvolumeclaims"), _r(_READ, _C, "pods"),
            _r(_READ, ("storage.k8s.io",), "csidrivers")]
    return dict(sorted(roles.items()))


def _meta(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"name": name, "labels": {"kubernetes.io/bootstrapping": "rbac-defaults", **(labels or {})},
            "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}}


def cluster_roles(minor: int = BINARY_MINOR) -> list[dict[str, Any]]:
    """The bootstrap ClusterRoles of Kubernetes ``1.<minor>`` (aggregated ones with empty rules: the
    aggregation controller fills them)."""
    out = []
    for name, (rules, labels, aggregate) in _roles(minor).items():
        role: dict[str, Any] = {"apiVersion": f"{_GROUP}/v1", "kind": "ClusterRole", "metadata": _meta(name, labels)}
        if aggregate:
            role["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {aggregate: "true"}}]}
            role["rules"] = []
        else:
            role["rules"] = rules or []
        out.append(role)
    for controller, rules in _controller_roles(minor).items():
        out.append({"apiVersion": f"{_GROUP}/v1", "kind": "ClusterRole",
                    "metadata": _meta(f"system:controller:{controller}"), "rules": rules})
    return out


def _subject(kind: str, name: str, namespace: str = "") -> dict[str, str]:
    if kind == "ServiceAccount":
        return {"kind": kind, "name": name, "namespace": namespace}
    return {"apiGroup": _GROUP, "kind": kind, "name": name}


def cluster_role_bindings(minor: int = BINARY_MINOR) -> list[dict[str, Any]]:
    """The bootstrap ClusterRoleBindings of Kubernetes ``1.<minor>`` (binding name = role name, as
    upstream's)."""
    bindings: dict[str, list[dict[str, str]]] = {
        "cluster-admin": [_subject("Group", "system:masters")],
        "system:basic-user": [_subject("Group", "system:authenticated")],
        "system:discovery": [_subject("Group", "system:authenticated")],
        "system:kube-controller-manager": [_subject("User", "system:kube-controller-manager")],
        "system:kube-dns": [_subject("ServiceAccount", "kube-dns", "kube-system")],
        "system:kube-scheduler": [_subject("User", "system:kube-scheduler")],
        "system:monitoring": [_subject("Group", "system:monitoring")],
        "system:node": [],
        "system:node-proxier": [_subject("User", "system:kube-proxy")],
        "system:public-info-viewer": [_subject("Group", "system:authenticated"),
                                      _subject("Group", "system:unauthenticated")],
        "system:service-account-issuer-discovery": [_subject("Group", "system:serviceaccounts")],
        "system:volume-scheduler": [_subject("User", "system:kube-scheduler")],
    }
    if _on("ClusterTrustBundle", minor):
        bindings["system:cluster-trust-bundle-discovery"] = [_subject("Group", "system:serviceaccounts")]
    out = []
    for name, subjects in bindings.items():
        binding: dict[str, Any] = {"apiVersion": f"{_GROUP}/v1", "kind": "ClusterRoleBinding", "metadata": _meta(name),
                                   "roleRef": {"apiGroup": _GROUP, "kind": "ClusterRole", "name": name}}
        if subjects:
            binding["subjects"] = subjects
        out.append(binding)
    for controller in _controller_roles(minor):
        name = f"system:controller:{controller}"
        out.append({"apiVersion": f"{_GROUP}/v1", "kind": "ClusterRoleBinding", "metadata": _meta(name),
                    "roleRef": {"apiGroup": _GROUP, "kind": "ClusterRole", "name": name},
                    "subjects": [_subject("ServiceAccount", controller, "kube-system")]})
    return out


def _namespaced(kind: str, namespace: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
    meta = _meta(name)
    meta["namespace"] = namespace
    return {"apiVersion": f"{_GROUP}/v1", "kind": kind, "metadata": meta, **body}


def namespace_roles() -> list[dict[str, Any]]:
    """The bootstrap Roles of ``kube-system`` and ``kube-public`` (``namespace_policy.go``)."""
    leases = [_r("create get list update watch", ("coordination.k8s.io",), "leases"),
              _r("create get list update watch", ("coordination.k8s.io",), "leasecandidates")]
    roles: list[tuple[str, str, list[Rule]]] = [
        ("kube-public", "system:controller:bootstrap-signer", [
            _r(_READ, _C, "configmaps"), _r("update", _C, "configmaps", "cluster-info"), _EVENTS]),
        ("kube-system", "extension-apiserver-authentication-reader", [
            _r(_READ, _C, "configmaps", "extension-apiserver-authentication")]),
        ("kube-system", "system::leader-locking-kube-controller-manager", leases),
        ("kube-system", "system::leader-locking-kube-scheduler", leases),
        ("kube-system", "system:controller:bootstrap-signer", [_r(_READ, _C, "secrets")]),
        ("kube-system", "system:controller:cloud-provider", [_r("create get list watch", _C, "configmaps")]),
        ("kube-system", "system:controller:token-cleaner", [_r("delete get list watch", _C, "secrets"), _EVENTS]),
    ]
    return [_namespaced("Role", ns, name, {"rules": rules}) for ns, name, rules in roles]


def namespace_role_bindings() -> list[dict[str, Any]]:
    """The bootstrap RoleBindings of ``kube-system`` and ``kube-public``."""
    def sa(name: str) -> dict[str, str]:
        return _subject("ServiceAccount", name, "kube-system")

    kcm, scheduler = _subject("User", "system:kube-controller-manager"), _subject("User", "system:kube-scheduler")
    bindings: list[tuple[str, str, str, list[dict[str, str]]]] = [
        ("kube-public", "system:controller:bootstrap-signer", "system:controller:bootstrap-signer",
         [sa("bootstrap-signer")]),
        ("kube-system", "system::extension-apiserver-authentication-reader",
         "extension-apiserver-authentication-reader", [kcm, scheduler]),
        ("kube-system", "system::leader-locking-kube-controller-manager",
         "system::leader-locking-kube-controller-manager",
         [kcm, sa("kube-controller-manager"), sa("leader-election-controller")]),
        ("kube-system", "system::leader-locking-kube-scheduler", "system::leader-locking-kube-scheduler",
         [scheduler, sa("kube-scheduler")]),
        ("kube-system", "system:controller:bootstrap-signer", "system:controller:bootstrap-signer",
         [sa("bootstrap-signer")]),
        ("kube-system", "system:controller:cloud-provider", "system:controller:cloud-provider",
         [sa("cloud-provider")]),
        ("kube-system", "system:controller:token-cleaner", "system:controller:token-cleaner", [sa("token-cleaner")]),
    ]
    return [_namespaced("RoleBinding", ns, name, {"roleRef": {"apiGroup": _GROUP, "kind": "Role", "name": role},
                                                  "subjects": subjects})
            for ns, name, role, subjects in bindings]


_AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"


def _reconciled(existing: dict[str, Any], wanted: dict[str, Any]) -> dict[str, Any] | None:
    """``existing`` with what ``wanted`` has and it lacks (rules, subjects; an aggregation rule's
    rules are the controller's), or None when nothing is missing or it is not to be auto-updated
    (``rbac.authorization.kubernetes.io/autoupdate: "false"``), as kube-apiserver's reconciliation
    at start (it never removes what a user added)."""
    annotations = (existing.get("metadata") or {}).get("annotations") or {}
    if annotations.get(_AUTOUPDATE) == "false":
        return None
    key = "subjects" if "roleRef" in wanted else "rules"
    if key == "rules" and existing.get("aggregationRule"):
        return None
    current = existing.get(key)
    have: list[Any] = current if isinstance(current, list) else []
    missing = [item for item in wanted.get(key) or () if item not in have]
    if not missing:
        return None
    return {**existing, key: [*have, *missing]}


def install(core: Core) -> None:
    """Create every bootstrap ClusterRole, ClusterRoleBinding, Role and RoleBinding of the server's
    emulated version that is missing and add what the existing ones lack (``_reconciled``), on the
    server loop; the namespaced ones once their namespace exists."""
    minor = core.mapper.emulated_minor
    for plural, objects in (("clusterroles", cluster_roles(minor)),
                            ("clusterrolebindings", cluster_role_bindings(minor)),
                            ("roles", namespace_roles()), ("rolebindings", namespace_role_bindings())):
        res = core.mapper.get(_GROUP, "v1", plural)
        if res is None:
            continue
        for obj in objects:
            ns, name = str(obj["metadata"].get("namespace") or ""), str(obj["metadata"]["name"])
            if ns and core.store.get("/namespaces", "", ns) is None:
                continue
            entry = core.store.get(res.storage_key, ns, name)
            if entry is None:
                core.create(res, ns, obj, manager=_MANAGER)
                continue
            updated = _reconciled(entry.obj, obj)
            if updated is not None:
                core.update(res, ns, name, updated, manager=_MANAGER)
