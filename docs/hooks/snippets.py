"""Every code block of the hand-written pages, and how the test suite covers it.

A block is one of:

- **included** (``--8<-- "path"``) from a file a test runs: the tutorial's project and its
  ``commands.sh`` (``tests/docs/test_tutorial.py``), ``examples/docs/``
  (``tests/docs/test_snippets.py``), the kopf migration guide's operator and ports
  (``tests/examples/``);
- **a fragment**: titled ``Fragment: ...`` (the reader sees the title above the code, so it
  cannot be taken for a program), in any language;
- **a program** (``python``, ``sh``, ``bash``, ``console``): run as written, Python by
  ``tests/docs/test_snippets.py``, shell and console transcripts by
  ``tests/docs/test_shell_snippets.py`` (one script per page, from a wheel in a temporary
  directory);
- **data** (``yaml``, ``toml``, ``json``): parsed by ``tests/docs/test_snippets.py``;
- **output** (``text``) or **a diagram** (``mermaid``, drawn by the offline check's mermaid).

The docs build makes the list a page (``reference/snippets.md``, generated, so it cannot go
stale); ``python docs/hooks/snippets.py`` prints it.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGE = "reference/snippets.md"

_BLOCK = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
                    re.S | re.M)
_INCLUDE = re.compile(r'^--8<-- "(?P<path>[^":]+)(?::(?P<section>[\w-]+))?"$')
_FRAGMENT = re.compile(r'\btitle="Fragment: (?P<why>[^"]+)"')
PROGRAM_LANGS = ("python", "sh", "bash", "console")
DATA_LANGS = ("yaml", "toml", "json")
SHELL_LANGS = ("sh", "bash", "console")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: str  # relative to docs/
    line: int  # of its opening fence
    lang: str
    info: str  # the rest of the fence line (title=...)
    body: str  # dedented

    @property
    def first_line(self) -> str:
        """The block's first non-blank line (its title where it has one)."""
        title = re.search(r'\btitle="(?P<t>[^"]+)"', self.info)
        if title:
            return title.group("t")
        return next((line.strip() for line in self.body.splitlines() if line.strip()), "")

    @property
    def includes(self) -> list[tuple[str, str]]:
        """(path, section) of each ``--8<--`` line when the block is only includes, else []."""
        lines = [line.strip() for line in self.body.splitlines() if line.strip()]
        found = [_INCLUDE.match(line) for line in lines]
        if not lines or not all(found):
            return []
        return [(m.group("path"), m.group("section") or "") for m in found if m]

    @property
    def fragment(self) -> str:
        """Why the block is a fragment (its title after ``Fragment:``), "" when it is not one."""
        match = _FRAGMENT.search(self.info)
        return match.group("why") if match else ""

    @property
    def kind(self) -> str:
        """``include``, ``fragment``, ``program``, ``data``, ``output`` or ``diagram``."""
        if self.fragment:  # an included one too (the tutorial's commands for a cluster)
            return "fragment"
        if self.includes:
            return "include"
        if self.lang in PROGRAM_LANGS:
            return "program"
        if self.lang in DATA_LANGS:
            return "data"
        if self.lang == "mermaid":
            return "diagram"
        return "output"


def pages() -> list[Path]:
    """The hand-written pages (the tutorial's project files are included, not pages)."""
    return sorted(p for p in DOCS.rglob("*.md") if "project" not in p.relative_to(DOCS).parts)


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of one page, in order, each dedented by its fence's indentation."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in _BLOCK.finditer(text):
        indent = len(match.group("indent"))
        body = "\n".join(line[indent:] for line in match.group("body").splitlines())
        found.append(Block(page.relative_to(DOCS).as_posix(), text.count("\n", 0, match.start()) + 1,
                           match.group("lang"), match.group("info").strip(), body))
    return found


def all_blocks() -> list[Block]:
    """Every fenced code block of every hand-written page."""
    return [block for page in pages() for block in blocks(page)]


# where an included file's code is run: (the path's start, how), after the tutorial's project
_INCLUDED_TESTS = (
    ("examples/docs/", "tests/docs/test_snippets.py runs `{path}`"),
    ("examples/kopf_migration.py", "tests/examples/test_kopf_migration.py runs `{path}`"),
    ("examples/kopf/", "tests/examples/test_kopf_examples.py runs `{path}`"),
    ("tests/examples/", "`{path}` is itself a test"),
)


_TUTORIAL = "tests/docs/test_tutorial.py"
_SCAFFOLD = f"{_TUTORIAL} runs its samplecontroller commands, in order"
# how each section of the tutorial's commands.sh is run ("" for one no test has)
COMMANDS_SH = {
    "init": _SCAFFOLD, "create-api": _SCAFFOLD, "create-webhook": _SCAFFOLD,
    "create-api-v1beta1": _SCAFFOLD, "create-conversion": _SCAFFOLD,
    "codegen": f"{_TUTORIAL} runs make codegen's script (hack/update_codegen.py) and its --verify",
    "manifests": f"{_TUTORIAL} runs make manifests' command with --verify",
    "test": f"{_TUTORIAL} runs make test's steps in the project (ruff, mypy --strict, pytest)",
    "run": f"{_TUTORIAL} runs make run's command (python -m memcachedop --local --port ...)",
    "kubectl": f"{_TUTORIAL} runs each line against make run (kubectl, a temporary HOME)",
    "kubectl-webhooks": f"{_TUTORIAL} runs each line against make run (kubectl, a temporary HOME)",
    # titled fragments on their pages (a cluster of your own): not run as written
    "cluster": "not run: needs a cluster of your own (the suite has none)",
    "deploy": (f"not run as written (cert-manager from the internet, docker, kind); {_TUTORIAL} "
               "applies make deploy's manifests (kubectl apply -k config/) to the embedded server"),
}


def tested_by(path: str, section: str = "") -> str:
    """How an included file is tested ("" for a path no test runs), looked up as the build does
    (``base_path``: the tutorial's project first, then the repository)."""
    if (DOCS / "tutorial" / "project" / path).is_file():
        if path == "commands.sh":
            return COMMANDS_SH.get(section, "")
        return f"tests/docs/test_tutorial.py builds and tests the tutorial's project (`{path}`)"
    if (ROOT / path).is_file():
        for prefix, how in _INCLUDED_TESTS:
            if path.startswith(prefix):
                return how.format(path=path)
    return ""


def how_tested(block: Block) -> str:
    """One line: how the test suite covers a block (or why nothing needs to)."""
    kind = block.kind
    if kind == "include":
        return "; ".join(tested_by(path, section) or f"`{path}`: NO TEST RUNS IT"
                         for path, section in block.includes)
    if kind == "fragment":
        included = " ".join(f"{path}:{section}" if section else path for path, section in block.includes)
        return f"fragment: {block.fragment}" + (f" (included from {included})" if included else "")
    if kind == "program":
        if block.lang == "python":
            return "tests/docs/test_snippets.py runs it as written"
        return "tests/docs/test_shell_snippets.py runs it as written (the page's script)"
    if kind == "data":
        return f"tests/docs/test_snippets.py parses it ({block.lang})"
    if kind == "diagram":
        return "a diagram: drawn by the mermaid shipped with the site"
    return "output or text shown, not run"


def markdown() -> str:
    """The page listing every block and how it is tested."""
    lines = [
        "# Snippets and their tests", "",
        "Every code block of the site's hand-written pages and how the test suite covers it: run",
        "as written, included from a file a test runs, titled `Fragment: ...`, parsed (YAML, TOML)",
        "or shown output. This page is generated by `docs/hooks/snippets.py` when the site is",
        "built (`python docs/hooks/snippets.py` prints it); `tests/docs/test_snippets.py` and",
        "`tests/docs/test_shell_snippets.py` fail on a block that is none of these.", "",
    ]
    by_page: dict[str, list[Block]] = {}
    for block in all_blocks():
        by_page.setdefault(block.page, []).append(block)
    counts: dict[str, int] = {}
    for block in all_blocks():
        counts[block.kind] = counts.get(block.kind, 0) + 1
    lines += ["| kind | blocks |", "|---|---|"]
    lines += [f"| {kind} | {n} |" for kind, n in sorted(counts.items())]
    lines.append("")
    for page, found in by_page.items():
        lines += [f"## [{page}](../{page})", "", "| line | language | block | how it is tested |",
                  "|---|---|---|---|"]
        for block in found:
            first = block.first_line.replace("|", "\\|").replace("`", "")
            first = first if len(first) <= 60 else first[:57] + "..."
            lines.append(f"| {block.line} | {block.lang or '-'} | `{first}` | "
                         f"{how_tested(block).replace('|', '/')} |")
        lines.append("")
    return "\n".join(lines)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """MkDocs hook: add the generated page."""
    files.append(File.generated(config, PAGE, content=markdown()))
    return files


if __name__ == "__main__":
    sys.stdout.write(markdown())
