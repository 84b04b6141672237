"""``python -m samplecontroller.scaffold``: the ``samplecontroller`` command (init, create api)."""

from samplecontroller.scaffold import cli

cli()
