"""Every shell block of the site that is neither included from the tutorial's ``commands.sh`` nor
titled ``Fragment: ...`` runs here as written, as a user runs it: from this checkout's wheel
installed in a virtualenv outside the checkout, in an empty directory that is also ``$HOME``.

A page's program blocks (``sh``, ``bash``, ``console``) become one script, run once (each
``samplecontroller`` command costs a second or two of CPU). A ``console`` block is a transcript:
its ``$ `` lines run, and what each prints must be what the page shows after whitespace is
collapsed (the page wraps long lines), ``/home/me`` standing for the directory and the toolkit's
version for this wheel's.

A page whose blocks need more than an empty directory names what it needs in ``SETUPS`` (shell
lines run first, not shown); a page with a program block and no entry there fails.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from docs.hooks import snippets
from tests.wheelenv import WheelEnv

SETUPS: dict[str, str] = {
    # step 1 (a fragment: pip from an index) made the environment: the fixture's, active
    "getting-started.md": "",
}
MARK = "@@@ samplecontroller docs: output of command "
VERSION = re.compile(r"samplecontroller-\d+\.\d+\.\d+[\w.+-]*?-py3")


def program_pages() -> dict[str, list[snippets.Block]]:
    """The pages with shell program blocks, each with its blocks in order."""
    found: dict[str, list[snippets.Block]] = {}
    for block in snippets.all_blocks():
        if block.kind == "program" and block.lang in snippets.SHELL_LANGS:
            found.setdefault(block.page, []).append(block)
    return found


def transcript(block: snippets.Block) -> list[tuple[str, str]]:
    """(command, expected output) of each ``$ `` line of a console block."""
    steps: list[tuple[str, str]] = []
    for line in block.body.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], ""))
        elif steps:
            steps[-1] = (steps[-1][0], steps[-1][1] + line + "\n")
        else:
            raise AssertionError(f"{block.page}:{block.line}: a console block starts with output: {line!r}")
    return steps


def script(page: str, blocks: list[snippets.Block]) -> tuple[str, list[str]]:
    """The page's script and the outputs its console commands must print, in order."""
    lines = ["set -euo pipefail", "exec 2>&1", SETUPS[page]]
    expected: list[str] = []
    for block in blocks:
        if block.lang != "console":
            lines.append(block.body)
            continue
        for command, output in transcript(block):
            lines += [f"printf '\\n%s%d\\n' {shlex.quote(MARK)} {len(expected)}", command]
            expected.append(output)
    return "\n".join(lines) + "\n", expected


def normalized(text: str, home: Path) -> str:
    text = VERSION.sub("samplecontroller-VERSION-py3", text.replace(str(home), "/home/me"))
    return " ".join(text.split())


def test_every_page_with_shell_programs_says_what_they_need() -> None:
    missing = sorted(set(program_pages()) - set(SETUPS))
    assert not missing, (f"shell blocks on {missing} are run as written: add the page to SETUPS "
                         "(what they need), or title them `Fragment: ...`")


@pytest.mark.parametrize("page", sorted(SETUPS))
def test_a_pages_shell_blocks_run_and_print_what_the_page_shows(page: str, wheel_env: WheelEnv,
                                                                tmp_path: Path) -> None:
    blocks = program_pages().get(page)
    assert blocks, f"{page}: no shell program block left (drop it from SETUPS)"
    text, expected = script(page, blocks)
    home = tmp_path / "me"
    home.mkdir()
    env = {**wheel_env.env(), "HOME": str(home)}
    done = subprocess.run(["bash", "-c", text], cwd=home, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, f"{page}: its script failed\n{text}\n{done.stdout}\n{done.stderr}"
    printed = re.split(rf"^{re.escape(MARK)}\d+$", done.stdout, flags=re.M)[1:]
    assert len(printed) == len(expected), done.stdout
    for want, got in zip(expected, printed, strict=True):
        assert normalized(got, home) == normalized(want, home), f"{page}: the page shows\n{want}\nit prints\n{got}"
