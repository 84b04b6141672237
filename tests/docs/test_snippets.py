"""Every code block of the site's hand-written pages runs, is parsed, or says it is a fragment
(docs/hooks/snippets.py classifies them; the site's "Snippets and their tests" page lists them).

A Python block is one of: included from a file the tests run (``--8<--`` of the tutorial's
project, which tests/docs/test_tutorial.py builds and tests, of ``examples/docs/``, which this
module runs, or of the kopf migration guide's operator, its test and the kopf example ports,
which tests/examples runs); titled ``Fragment: ...`` (the reader sees the title above the code,
so it cannot be taken for a program); or a whole program, which this module runs as written.
Shell blocks follow the same rule (tests/docs/test_shell_snippets.py runs the programs); YAML,
TOML and JSON blocks are parsed here."""

from __future__ import annotations

import json
import runpy
import tomllib
from pathlib import Path

import pytest
import yaml

from docs.hooks import snippets

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
EXAMPLES = sorted((ROOT / "examples" / "docs").glob("*.py"))


def python_blocks() -> list[tuple[str, str, str]]:
    """(page, info string, dedented body) of every Python block of the pages checked."""
    return [(b.page, b.info, b.body) for b in snippets.all_blocks() if b.lang == "python"]


def kind(info: str, body: str) -> str:
    """``include PATH``, ``fragment`` or ``program``."""
    block = snippets.Block("", 0, "python", info, body)
    if block.kind == "include":
        return "include " + " ".join(sorted({path for path, _ in block.includes}))
    return block.kind


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_each_docs_example_runs(example: Path) -> None:
    runpy.run_path(str(example), run_name="__main__")


def test_every_included_block_comes_from_a_file_a_test_runs() -> None:
    blocks = [b for b in snippets.all_blocks() if b.kind == "include"]
    assert len(blocks) >= 50, blocks
    untested = [f"{b.page}:{b.line}: includes {path}" for b in blocks for path, section in b.includes
                if not snippets.tested_by(path, section)]
    assert not untested, untested


def test_every_block_is_run_parsed_a_fragment_or_output() -> None:
    """Python and shell programs run (here and in test_shell_snippets.py), data is parsed below;
    a block of another language (or none) must be output, a diagram or a fragment."""
    for block in snippets.all_blocks():
        if block.kind == "output":
            assert block.lang == "text", (f"{block.page}:{block.line}: a {block.lang or 'plain'} block "
                                          "no test runs: give it its language (text for output)")
            assert not block.body.lstrip().startswith("$ "), (
                f"{block.page}:{block.line}: a transcript: make it a console block (run) or a fragment")


@pytest.mark.parametrize("block", [b for b in snippets.all_blocks() if b.kind == "data"],
                         ids=lambda b: f"{b.page}:{b.line}")
def test_each_data_block_parses(block: snippets.Block) -> None:
    if block.lang == "yaml":
        assert [doc for doc in yaml.safe_load_all(block.body) if doc is not None]
    elif block.lang == "toml":
        assert tomllib.loads(block.body)
    else:
        json.loads(block.body)


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
