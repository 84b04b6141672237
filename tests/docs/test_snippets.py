"""Every Python block of the site's hand-written pages runs, or says it is a fragment.

A block is one of: included from a file the tests run (``--8<--`` of the tutorial's project,
which tests/docs/test_tutorial.py builds and tests, of ``examples/docs/``, which this module
runs, or of the kopf migration guide's operator, its test and the kopf example ports, which
tests/examples runs); titled ``Fragment: ...`` (the reader sees the title above the code, so
it cannot be taken for a program); or a whole program, which this module runs as written."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
EXAMPLES = sorted((ROOT / "examples" / "docs").glob("*.py"))
BLOCK = re.compile(r"^(?P<indent> *)```python(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=indent)```$", re.S | re.M)
INCLUDE = re.compile(r'^--8<-- "(?P<path>[^":]+)(?::[\w-]+)?"$')


def pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if "project" not in p.relative_to(DOCS).parts)


def python_blocks() -> list[tuple[str, str, str]]:
    """(page, info string, dedented body) of every Python block of the pages checked."""
    found = []
    for page in pages():
        for match in BLOCK.finditer(page.read_text()):
            indent = len(match.group("indent"))
            body = "\n".join(line[indent:] for line in match.group("body").splitlines())
            found.append((page.relative_to(DOCS).as_posix(), match.group("info").strip(), body))
    return found


def kind(info: str, body: str) -> str:
    """``include PATH``, ``fragment`` or ``program``."""
    lines = [line for line in body.strip().splitlines() if line.strip()]
    includes = [INCLUDE.match(line.strip()) for line in lines]
    if lines and all(includes):
        return "include " + " ".join(sorted({m.group("path") for m in includes if m}))
    if re.search(r'\btitle="Fragment: [^"]+"', info):
        return "fragment"
    return "program"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_each_docs_example_runs(example: Path) -> None:
    runpy.run_path(str(example), run_name="__main__")


def test_every_python_block_is_tested_or_a_fragment() -> None:
    blocks = python_blocks()
    assert len(blocks) >= 20, blocks
    tested_roots = (DOCS / "tutorial" / "project", ROOT / "examples" / "docs",
                    # tests/examples/test_kopf_migration.py and test_kopf_examples.py
                    ROOT / "examples" / "kopf_migration.py", ROOT / "examples" / "kopf",
                    ROOT / "tests" / "examples" / "test_kopf_migration.py")
    for page, info, body in blocks:
        what = kind(info, body)
        for path in what.removeprefix("include ").split() if what.startswith("include ") else []:
            candidates = [root / path for root in tested_roots] + [ROOT / path]
            assert any(c.is_file() and any(c.is_relative_to(r) for r in tested_roots) for c in candidates), (
                f"{page}: includes {path}, which no test runs")


@pytest.mark.parametrize("block", [b for b in python_blocks() if kind(b[1], b[2]) == "program"],
                         ids=lambda b: f"{b[0]}:{b[2].splitlines()[0][:30]}")
def test_each_whole_program_block_runs(block: tuple[str, str, str]) -> None:
    page, _, body = block
    exec(compile(body, f"<{page}>", "exec"), {"__name__": "__docs__"})


def test_an_untitled_block_that_does_not_run_is_caught() -> None:
    """The check can fail: the testing guide's old reactor example (its ``...`` stood for the
    call under test) raises IndexError when run as written."""
    old = ("from samplecontroller.kubernetes.clientset.fake import new_clientset\n"
           "kube = new_clientset()\n...\n"
           "assert [a.get_verb() for a in kube.actions()][-1] == 'create'\n")
    assert kind("", old) == "program"
    with pytest.raises(IndexError):
        exec(compile(old, "<old testing guide>", "exec"), {})
    assert kind(' title="Fragment: the call under test is left out"', old) == "fragment"
