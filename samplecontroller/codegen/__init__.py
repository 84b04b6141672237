"""The code generator: models, clientsets, listers, informers and a Scheme from CRD YAML.

``samplecontroller-codegen --crds DIR --output DIR --package IMPORT.PATH`` (or
``python -m samplecontroller.codegen``); ``main(argv, defaults)`` is the same in-process. The
generated package depends on ``samplecontroller`` only; the library never imports it (hand its
``SCHEME`` to ``runtime.manager.Manager`` and friends). Needs the ``codegen`` extra (jinja2,
datamodel-code-generator). See ``generator`` for the pipeline.
"""

from samplecontroller.codegen.errors import CodegenError
from samplecontroller.codegen.generator import (
    DEFAULT_PACKAGE,
    PROG,
    Defaults,
    Target,
    cli,
    generate,
    main,
)

__all__ = ["DEFAULT_PACKAGE", "PROG", "CodegenError", "Defaults", "Target", "cli", "generate", "main"]
