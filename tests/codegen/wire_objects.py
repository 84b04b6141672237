"""Realistic wire objects (as a 1.32 API server returns them) for the round-trip tests."""

from __future__ import annotations

from typing import Any

MANAGED_FIELDS: list[dict[str, Any]] = [
    {
        "apiVersion": "apps/v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}, "f:spec": {"f:replicas": {}}},
        "manager": "kubectl-client-side-apply",
        "operation": "Update",
        "time": "2024-05-01T10:00:00Z",
    },
    {
        "apiVersion": "apps/v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:status": {"f:replicas": {}}},
        "manager": "kube-controller-manager",
        "operation": "Update",
        "subresource": "status",
        "time": "2024-05-01T10:00:03Z",
    },
]

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {
        "annotations": {"deployment.kubernetes.io/revision": "1"},
        "creationTimestamp": "2024-05-01T10:00:00Z",
        "generation": 1,
        "labels": {"app": "nginx", "controller": "example-foo"},
        "managedFields": MANAGED_FIELDS,
        "name": "example-foo",
        "namespace": "default",
        "ownerReferences": [
            {
                "apiVersion": "samplecontroller.k8s.io/v1alpha1",
                "blockOwnerDeletion": True,
                "controller": True,
                "kind": "Foo",
                "name": "example-foo",
                "uid": "6a3c1f7e-0000-4000-8000-000000000001",
            }
        ],
        "resourceVersion": "1234",
        "uid": "6a3c1f7e-0000-4000-8000-000000000002",
    },
    "spec": {
        "progressDeadlineSeconds": 600,
        "replicas": 1,
        "revisionHistoryLimit": 10,
        "selector": {"matchLabels": {"app": "nginx", "controller": "example-foo"}},
        "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}, "type": "RollingUpdate"},
        "template": {
            "metadata": {"creationTimestamp": None, "labels": {"app": "nginx", "controller": "example-foo"}},
            "spec": {
                "containers": [
                    {
                        "image": "nginx:latest",
                        "imagePullPolicy": "Always",
                        "name": "nginx",
                        "ports": [{"containerPort": 80, "protocol": "TCP"}],
                        "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": 0.25}},
                        "readinessProbe": {"httpGet": {"path": "/", "port": "http", "scheme": "HTTP"},
                                           "periodSeconds": 10},
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File",
                    }
                ],
                "dnsPolicy": "ClusterFirst",
                "restartPolicy": "Always",
                "schedulerName": "default-scheduler",
                "securityContext": {},
                "terminationGracePeriodSeconds": 30,
            },
        },
    },
    "status": {
        "availableReplicas": 1,
        "conditions": [
            {
                "lastTransitionTime": "2024-05-01T10:00:03Z",
                "lastUpdateTime": "2024-05-01T10:00:03Z",
                "message": "Deployment has minimum availability.",
                "reason": "MinimumReplicasAvailable",
                "status": "True",
                "type": "Available",
            }
        ],
        "observedGeneration": 1,
        "readyReplicas": 1,
        "replicas": 1,
        "updatedReplicas": 1,
    },
}

FOO: dict[str, Any] = {
    "apiVersion": "samplecontroller.k8s.io/v1alpha1",
    "kind": "Foo",
    "metadata": {
        "creationTimestamp": "2024-05-01T10:00:00Z",
        "generation": 2,
        "managedFields": MANAGED_FIELDS[:1],
        "name": "example-foo",
        "namespace": "default",
        "resourceVersion": "1200",
        "uid": "6a3c1f7e-0000-4000-8000-000000000001",
    },
    "spec": {"deploymentName": "example-foo", "replicas": 1},
    "status": {"availableReplicas": 1},
}

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default", "deletionTimestamp": "2024-05-01T10:00:00Z",
                 "deletionGracePeriodSeconds": 30, "finalizers": ["x/y"]},
    "spec": {
        "containers": [{"name": "c", "image": "busybox", "command": ["sh", "-c", "sleep 1"],
                        "env": [{"name": "A", "value": "1"},
                                {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]}],
        "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "1Gi"}}],
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}],
    },
    "status": {"phase": "Running", "podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}],
               "startTime": "2024-05-01T10:00:00Z",
               "containerStatuses": [{"name": "c", "ready": True, "restartCount": 0, "image": "busybox",
                                      "imageID": "", "started": True,
                                      "state": {"running": {"startedAt": "2024-05-01T10:00:01Z"}}}]},
}

EVENT: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Event",
    "metadata": {"name": "example-foo.17c", "namespace": "default"},
    "involvedObject": {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "name": "example-foo",
                       "namespace": "default", "uid": "u", "resourceVersion": "1"},
    "reason": "Synced",
    "message": "Foo synced successfully",
    "source": {"component": "sample-controller"},
    "firstTimestamp": "2024-05-01T10:00:00Z",
    "lastTimestamp": "2024-05-01T10:00:05Z",
    "count": 2,
    "type": "Normal",
    "eventTime": None,
    "reportingComponent": "",
    "reportingInstance": "",
}

LEASE: dict[str, Any] = {
    "apiVersion": "coordination.k8s.io/v1",
    "kind": "Lease",
    "metadata": {"name": "sample-controller", "namespace": "kube-system"},
    "spec": {"holderIdentity": "host_1", "leaseDurationSeconds": 15, "acquireTime": "2024-05-01T10:00:00.000000Z",
             "renewTime": "2024-05-01T10:00:10.123456Z", "leaseTransitions": 0},
}

NAMESPACE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Namespace",
    "metadata": {"name": "default", "labels": {"kubernetes.io/metadata.name": "default"}},
    "spec": {"finalizers": ["kubernetes"]},
    "status": {"phase": "Active"},
}

WIDGET: dict[str, Any] = {
    "apiVersion": "gadgets.example.io/v1",
    "kind": "Widget",
    "metadata": {"name": "w1", "creationTimestamp": "2024-05-01T10:00:00Z"},
    "spec": {
        "replicas": 3,
        "ratio": 2,
        "enabled": False,
        "color": "purple",  # an enum value this client does not know still decodes
        "from": "upstream",
        "class": "gold",
        "maxSurge": "25%",
        "selector": {"matchLabels": {"a": "b"}, "tiers": [["x", "y"], []]},
        "ports": [{"name": "http", "port": 80, "target": "http"}, {"port": 81, "target": 8081, "protocol": "UDP"}],
        "limits": {"cpu": {"min": 1, "max": None}, "mem": {"min": 2, "max": 4}},
        "config": {"anything": [1, {"goes": None}], "deep": {"x": 1.5}},
        "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "t"}, "spec": {"unknown": True}},
        "owner": None,
        "nested": {"inner": {"deep": {"value": "v"}, "weights": [1, 2.5, -3]}},
    },
    "status": {"replicas": 3, "phase": "Ready",
               "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2024-05-01T10:00:00Z",
                               "message": None}]},
}
