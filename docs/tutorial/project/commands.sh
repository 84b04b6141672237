# The tutorial's commands, in order. tests/docs/test_tutorial.py runs the
# `samplecontroller` lines (in-process) and the project's tests; the docs include the
# sections between the markers. A line ending in a backslash goes on on the next.
# --8<-- [start:init]
samplecontroller init memcached-operator --domain example.com --package memcachedop
cd memcached-operator
# --8<-- [end:init]
# --8<-- [start:create-api]
samplecontroller create api --group cache --version v1alpha1 --kind Memcached
# --8<-- [end:create-api]
# --8<-- [start:create-webhook]
samplecontroller create webhook --group cache --version v1alpha1 --kind Memcached \
    --defaulting --programmatic-validation
# --8<-- [end:create-webhook]
# --8<-- [start:create-api-v1beta1]
samplecontroller create api --group cache --version v1beta1 --kind Memcached
# --8<-- [end:create-api-v1beta1]
# --8<-- [start:create-conversion]
samplecontroller create webhook --group cache --version v1alpha1 --kind Memcached \
    --conversion --spoke v1beta1
# --8<-- [end:create-conversion]
# --8<-- [start:codegen]
make codegen
# --8<-- [end:codegen]
# --8<-- [start:manifests]
make manifests
# --8<-- [end:manifests]
# --8<-- [start:test]
make test
# --8<-- [end:test]
# --8<-- [start:run]
make run PORT=7443
# --8<-- [end:run]
# --8<-- [start:kubectl]
export KUBECONFIG=$PWD/.local/kubeconfig
kubectl apply -f config/samples/
kubectl wait --for=condition=Ready memcached/memcached-sample --timeout=60s
kubectl get memcacheds
kubectl get deployments
kubectl patch memcached memcached-sample --type merge -p '{"spec": {"size": 1}}'
kubectl get deployment memcached-sample -o jsonpath='{.spec.replicas}'
kubectl describe memcached memcached-sample
# --8<-- [end:kubectl]
# --8<-- [start:kubectl-webhooks]
kubectl patch memcacheds.v1alpha1.cache.example.com memcached-sample --type merge \
    -p '{"spec": {"port": 11300}}'
kubectl get memcacheds.v1alpha1.cache.example.com memcached-v1beta1-sample \
    -o jsonpath='{.spec.port} {.spec.image}'
kubectl get memcacheds.v1beta1.cache.example.com memcached-sample \
    -o jsonpath='{.spec.containerPort}'
# --8<-- [end:kubectl-webhooks]
# --8<-- [start:cluster]
kubectl apply -f config/crd/bases/
.venv/bin/python -m memcachedop --kubeconfig ~/.kube/config
# --8<-- [end:cluster]
# --8<-- [start:deploy]
kubectl apply -f \
https://github.com/cert-manager/cert-manager/releases/latest/download/cert-manager.yaml
make docker-build IMG=memcached-operator:latest
kind load docker-image memcached-operator:latest
make deploy
kubectl -n memcached-operator-system rollout status deployment/memcached-operator
kubectl apply -f config/samples/
kubectl get memcacheds
# --8<-- [end:deploy]
