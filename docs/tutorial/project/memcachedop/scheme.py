"""The Manager's scheme: this operator's own kinds and the built-in kinds its controllers use.

The generated ``memcachedop.generated.scheme`` holds the Memcached kind only; the controller also
reads and writes Deployments, so apps/v1's Deployment is added from ``samplecontroller.kubernetes``
(a kubebuilder main.go's ``clientgoscheme.AddToScheme``, limited to what is used).
"""

from __future__ import annotations

from samplecontroller.client.scheme import Scheme
from samplecontroller.kubernetes.apis.apps import v1 as apps_v1

from memcachedop.generated import scheme as generated

# --8<-- [start:scheme]
SCHEME = Scheme()
generated.add_to_scheme(SCHEME)
SCHEME.add(apps_v1.DEPLOYMENTS)
# --8<-- [end:scheme]
