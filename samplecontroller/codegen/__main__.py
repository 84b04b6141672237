"""``python -m samplecontroller.codegen``: the ``samplecontroller-codegen`` command."""

from samplecontroller.codegen.generator import cli

cli()
