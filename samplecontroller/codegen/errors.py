"""The code generator's error for bad input."""

from __future__ import annotations


class CodegenError(Exception):
    """Bad input: printed as one line, exit status 2."""
