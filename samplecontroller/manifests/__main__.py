"""``python -m samplecontroller.manifests``: see ``samplecontroller.manifests``."""

import sys

from samplecontroller.manifests import main

sys.exit(main())
