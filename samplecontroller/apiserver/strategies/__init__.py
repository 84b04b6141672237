"""Per-kind behaviour of the served resources: one strategy object per kind.

- ``for_resource(res)``: the ``Strategy`` of a resource (defaulting, decoding and validation,
  the status reset on create, update preparation, delete behaviour, Table columns, selectable
  fields, the scale subresource's paths). Kinds without their own get the generic ``Strategy``;
  every custom resource gets ``CustomResourceStrategy``. Per-kind modules: ``kinds`` (Namespace,
  Pod with graceful deletion and the Priority admission plugin, Job, PriorityClass, ...),
  ``services`` (cluster IPs and node ports), ``autoscaling`` (HorizontalPodAutoscalers), ``networking`` (ServiceCIDRs, IPAddresses), ``trustbundles`` (ClusterTrustBundles), ``certificates`` (CertificateSigningRequests), ``crd``,
  ``claims`` (a PersistentVolumeClaim's data sources), ``storage`` (VolumeAttributesClass,
  CSIDriver updates), ``dra`` (resource.k8s.io's DeviceClass, ResourceClaim(Template),
  ResourceSlice and DeviceTaintRule), ``recent`` (the fields of 1.33-1.37 and
  their feature gates).
- ``defaults``: upstream defaulting (pkg/apis/*/v1/defaults.go) plus the admission plugins every
  cluster runs on create that need no other object (ServiceAccount, DefaultTolerationSeconds), and
  the strategies' create-time fields (a Job's generated selector).
- ``prepare_create_status``: the status a kind starts with (the strategies' PrepareForCreate).

All functions work in place on decoded JSON and never raise on malformed input (validation
reports it).
"""

from __future__ import annotations

from typing import Any

from samplecontroller.apiserver import builtins
from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.strategies.autoscaling import HorizontalPodAutoscalerStrategy
from samplecontroller.apiserver.strategies.base import BASE_FIELD_LABELS, CustomResourceStrategy, Strategy
from samplecontroller.apiserver.strategies.certificates import CertificateSigningRequestStrategy
from samplecontroller.apiserver.strategies.crd import CRD_FINALIZER, CRDStrategy
from samplecontroller.apiserver.strategies.defaults import apply_defaults
from samplecontroller.apiserver.strategies.dra import (
    DeviceClassStrategy,
    DeviceTaintRuleStrategy,
    ResourceClaimStrategy,
    ResourceClaimTemplateStrategy,
    ResourceSliceStrategy,
)
from samplecontroller.apiserver.strategies.kinds import (
    JobStrategy,
    KeepsStatusStrategy,
    LoadBalancerStrategy,
    NamespaceStrategy,
    PendingStrategy,
    PodStrategy,
    PriorityClassStrategy,
    ReplicationControllerStrategy,
)
from samplecontroller.apiserver.strategies.migration import StorageVersionMigrationStrategy
from samplecontroller.apiserver.strategies.networking import IPAddressStrategy, ServiceCIDRStrategy
from samplecontroller.apiserver.strategies.podcertificates import PodCertificateRequestStrategy
from samplecontroller.apiserver.strategies.policy import (
    BindingStrategy,
    MutatingBindingStrategy,
    MutatingPolicyStrategy,
    PolicyStrategy,
)
from samplecontroller.apiserver.strategies.services import ServiceStrategy
from samplecontroller.apiserver.strategies.storage import CSIDriverStrategy, VolumeAttributesClassStrategy
from samplecontroller.apiserver.strategies.trustbundles import ClusterTrustBundleStrategy

__all__ = ["BASE_FIELD_LABELS", "CRD_FINALIZER", "CustomResourceStrategy", "Strategy", "apply_defaults",
           "for_kind", "for_resource", "prepare_create_status"]

_REGARDING = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
_POD_FIELDS = ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
               "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName")
_GENERATION = Strategy(tracks_generation=True)

_BY_KIND: dict[tuple[str, str], Strategy] = {
    ("", "Namespace"): NamespaceStrategy(field_labels=["status.phase"]),
    ("", "Pod"): PodStrategy(field_labels=_POD_FIELDS),
    ("", "Node"): KeepsStatusStrategy(field_labels=["spec.unschedulable"]),
    ("", "PersistentVolume"): PendingStrategy(returns_deleted=True),
    ("", "PersistentVolumeClaim"): PendingStrategy(returns_deleted=True),
    ("", "ServiceAccount"): Strategy(returns_deleted=True),
    ("", "PodTemplate"): Strategy(returns_deleted=True),
    ("", "ResourceQuota"): Strategy(returns_deleted=True),
    ("", "Service"): ServiceStrategy(),
    ("", "Secret"): Strategy(field_labels=["type"]),
    ("", "ReplicationController"): ReplicationControllerStrategy(tracks_generation=True,
                                                                 field_labels=["status.replicas"]),
    ("", "Event"): Strategy(field_labels=[f"involvedObject.{f}" for f in _REGARDING]
                            + ["reason", "reportingComponent", "source", "type"]),
    ("events.k8s.io", "Event"): Strategy(field_labels=[f"regarding.{f}" for f in _REGARDING]
                                         + ["reason", "reportingController", "type"]),
    ("apps", "Deployment"): _GENERATION,
    ("apps", "ReplicaSet"): Strategy(tracks_generation=True, field_labels=["status.replicas"]),
    ("apps", "DaemonSet"): _GENERATION,
    ("apps", "StatefulSet"): _GENERATION,
    ("batch", "Job"): JobStrategy(tracks_generation=True, field_labels=["status.successful"]),
    ("batch", "CronJob"): _GENERATION,
    ("policy", "PodDisruptionBudget"): _GENERATION,
    ("autoscaling", "HorizontalPodAutoscaler"): HorizontalPodAutoscalerStrategy(tracks_generation=True),
    ("networking.k8s.io", "Ingress"): LoadBalancerStrategy(tracks_generation=True),
    ("networking.k8s.io", "NetworkPolicy"): _GENERATION,
    ("networking.k8s.io", "ServiceCIDR"): ServiceCIDRStrategy(),
    ("networking.k8s.io", "IPAddress"): IPAddressStrategy(),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): CRDStrategy(),
    ("scheduling.k8s.io", "PriorityClass"): PriorityClassStrategy(),
    ("storage.k8s.io", "StorageClass"): Strategy(returns_deleted=True),
    ("storage.k8s.io", "CSIDriver"): CSIDriverStrategy(returns_deleted=True),
    ("storage.k8s.io", "CSINode"): Strategy(returns_deleted=True),
    ("storage.k8s.io", "VolumeAttachment"): Strategy(returns_deleted=True),
    ("storage.k8s.io", "VolumeAttributesClass"): VolumeAttributesClassStrategy(returns_deleted=True),
    # resource.k8s.io's registries (deviceclass, resourceclaim, resourceclaimtemplate, resourceslice)
    ("resource.k8s.io", "DeviceClass"): DeviceClassStrategy(tracks_generation=True, returns_deleted=True),
    ("resource.k8s.io", "ResourceClaim"): ResourceClaimStrategy(returns_deleted=True),
    ("resource.k8s.io", "ResourceClaimTemplate"): ResourceClaimTemplateStrategy(returns_deleted=True),
    ("resource.k8s.io", "ResourceSlice"): ResourceSliceStrategy(tracks_generation=True, returns_deleted=True),
    ("resource.k8s.io", "DeviceTaintRule"): DeviceTaintRuleStrategy(),
    ("certificates.k8s.io", "CertificateSigningRequest"): CertificateSigningRequestStrategy(),
    ("certificates.k8s.io", "ClusterTrustBundle"): ClusterTrustBundleStrategy(),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): PolicyStrategy(),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"): BindingStrategy(),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"): MutatingPolicyStrategy(),
    ("storagemigration.k8s.io", "StorageVersionMigration"): StorageVersionMigrationStrategy(),
    ("certificates.k8s.io", "PodCertificateRequest"): PodCertificateRequestStrategy(),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"): MutatingBindingStrategy(),
}
_BY_KIND[("", "Binding")] = Strategy(create_action="bind")
_BY_KIND.update({kind: Strategy(create_action="review") for kind in builtins.REVIEW_KINDS})
_GENERIC = Strategy()
_CUSTOM = CustomResourceStrategy()


def for_kind(group: str, kind: str) -> Strategy:
    """The strategy of built-in kind ``group``/``kind`` (the generic one if it has none)."""
    return _BY_KIND.get((group, kind), _GENERIC)


def for_resource(res: Resource) -> Strategy:
    """The strategy of ``res``'s objects."""
    return _CUSTOM if res.is_custom else for_kind(res.group, res.kind)


def prepare_create_status(group: str, version: str, kind: str, obj: dict[str, Any]) -> None:
    """Reset ``obj``'s status as the kind's create strategy does: the zero status as Go encodes
    it (``{"replicas": 0}`` for a ReplicaSet, ``{}`` for a Deployment), ``{"phase": "Pending"}``
    for volumes and claims; nodes, pods and namespaces keep theirs."""
    for_kind(group, kind).reset_status(group, version, kind, obj)
