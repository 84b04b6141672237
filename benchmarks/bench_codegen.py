"""Benchmark: code generation time and generated lines per CRD set.

The sets are the projects of ``tests/codegen/testdata/corpus`` (vendored upstream CRDs and the
hand-written cases), all of them together (the largest set the tests use), and any directory given
with ``--crds`` (for example a checkout's CRDs). Each row is one whole ``generate()`` (checking,
normalizing, datamodel-code-generator, the syntax-tree pass and the templates; the built-in
models are recomputed each time, not taken from the in-process memo), best of ``--repeat``.

Printed per row: CRD documents, kinds (served group/version/kind), seconds (wall clock, and the
process's CPU seconds, which a loaded machine inflates less), files, lines and bytes
of every generated file, lines, bytes and classes (Structs) of the CRDs' own model modules. The
corpus holds the real-world sets the tests use (prometheus-operator, Argo Workflows): give
``--crds`` the same directories to compare two checkouts.

    python benchmarks/bench_codegen.py [--repeat 3] [--crds DIR ...]

Not a test: machines are noisy, so numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from samplecontroller.apimachinery import k8syaml  # noqa: E402
from samplecontroller.codegen import generator  # noqa: E402

CORPUS = ROOT / "tests" / "codegen" / "testdata" / "corpus"
STRUCT = re.compile(r"^class \w+\(Struct\b", re.MULTILINE)


@dataclass
class Row:
    name: str
    crds: int
    kinds: int
    seconds: float
    cpu: float
    files: int
    lines: int
    size: int
    model_lines: int
    model_size: int
    classes: int


def crd_documents(directory: Path) -> int:
    return sum(1 for path in directory.glob("*.y*ml") for doc in k8syaml.load_all(path.read_text())
               if isinstance(doc, dict))


def measure(name: str, crds: Path, repeat: int) -> Row:
    best = best_cpu = float("inf")
    files: dict[str, str] = {}
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        files = generator.generate(crds, generator.Target(package="bench"))
        best = min(best, time.perf_counter() - started)
        best_cpu = min(best_cpu, time.process_time() - started_cpu)
    packages = generator.build_packages(crds, "bench")
    crd_modules = {f"apis/{p.pkg}/{p.version}/__init__.py" for p in packages if p.crd_files}
    kinds = sum(1 for p in packages for k in p.kinds if not k.builtin)
    return Row(name, crd_documents(crds), kinds, best, best_cpu, len(files),
               sum(text.count("\n") for text in files.values()),
               sum(len(text.encode()) for text in files.values()),
               sum(files[rel].count("\n") for rel in crd_modules),
               sum(len(files[rel].encode()) for rel in crd_modules),
               sum(len(STRUCT.findall(files[rel])) for rel in crd_modules))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--crds", type=Path, action="append", default=[], help="another CRD directory (repeatable)")
    parser.add_argument("--no-corpus", action="store_true", help="only the --crds directories")
    args = parser.parse_args()
    sets = [] if args.no_corpus else [(p.name, p / "crds") for p in sorted(CORPUS.iterdir()) if (p / "crds").is_dir()]
    rows = [measure(name, crds, args.repeat) for name, crds in sets]
    with tempfile.TemporaryDirectory() as tmp:
        merged = Path(tmp)
        for name, crds in sets:
            for path in crds.glob("*.y*ml"):
                shutil.copy(path, merged / f"{name}-{path.name}")
        if sets:
            rows.append(measure("(whole corpus)", merged, args.repeat))
    rows += [measure(str(d), d, args.repeat) for d in args.crds]
    print(f"{'CRD set':<28} {'CRDs':>5} {'kinds':>6} {'seconds':>8} {'CPU s':>7} {'files':>6} {'lines':>8} {'MB':>7} "
          f"{'CRD model lines':>16} {'model KB':>9} {'classes':>8}")
    for r in rows:
        print(f"{r.name:<28} {r.crds:>5} {r.kinds:>6} {r.seconds:>8.2f} {r.cpu:>7.2f} {r.files:>6} {r.lines:>8} "
              f"{r.size / 1e6:>7.2f} {r.model_lines:>16} {r.model_size / 1e3:>9.1f} {r.classes:>8}")


if __name__ == "__main__":
    main()
