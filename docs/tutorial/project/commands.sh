# The tutorial's commands, in order. tests/docs/test_tutorial.py runs the `samplecontroller`
# lines (in-process) and the project's tests; the docs include the sections between the markers.
# --8<-- [start:init]
samplecontroller init memcached-operator --domain example.com --package memcachedop
cd memcached-operator
# --8<-- [end:init]
# --8<-- [start:create-api]
samplecontroller create api --group cache --version v1alpha1 --kind Memcached
# --8<-- [end:create-api]
# --8<-- [start:codegen]
make codegen
# --8<-- [end:codegen]
# --8<-- [start:test]
make test
# --8<-- [end:test]
# --8<-- [start:run]
make run PORT=7443
# --8<-- [end:run]
