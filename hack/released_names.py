"""Write tests/codegen/testdata/names-<version>.json: the model names a release's generator wrote
for each project of the codegen corpus (its classes, by models module), which
``tests/codegen/test_corpus.py`` checks the current generator still defines, imports or aliases
(generated names are public API: docs/reference/compatibility.md).

    python hack/released_names.py v0.1.0

The release is checked out (``git worktree``) into a temporary directory and its generator run
there, on the corpus of this checkout; nothing of it is kept but the names.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "codegen" / "testdata" / "corpus"
CLASS = re.compile(r"^class (\w+)", re.MULTILINE)
RUN = ("import sys; from samplecontroller.codegen import cli; "
       "sys.argv = ['codegen', '--crds', sys.argv[1], '--output', 'g', '--package', 'g']; cli()")


def names_of(release: Path, crds: Path) -> dict[str, list[str]]:
    """{models module (``apis/<pkg>/<version>``): sorted class names} of ``release``'s output."""
    with tempfile.TemporaryDirectory() as out:
        env = {**os.environ, "PYTHONPATH": str(release)}
        subprocess.run([sys.executable, "-c", RUN, str(crds)], cwd=out, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        found = {}
        for models in sorted(Path(out, "g", "apis").glob("*/*/__init__.py")):
            names = sorted(set(CLASS.findall(models.read_text())))
            if names:
                found[models.parent.relative_to(Path(out, "g")).as_posix()] = names
        return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tag", help="the release's git tag (v0.1.0)")
    tag = parser.parse_args().tag
    with tempfile.TemporaryDirectory() as tmp:
        release = Path(tmp, "release")
        subprocess.run(["git", "worktree", "add", "--detach", str(release), tag], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            projects = sorted(p for p in CORPUS.iterdir() if (p / "crds").is_dir())
            names = {p.name: names_of(release, p / "crds") for p in projects}
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(release)], cwd=ROOT, check=True)
    target = ROOT / "tests" / "codegen" / "testdata" / f"names-{tag.lstrip('v')}.json"
    target.write_text(json.dumps(names, indent=1, sort_keys=True) + "\n")
    print(f"wrote {target.relative_to(ROOT)}: {sum(len(n) for p in names.values() for n in p.values())} names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
