#!/usr/bin/env python3
"""The test suite on every CPython a user may have: find this machine's interpreters, give each
its own environment from the same ``uv.lock``, run pytest in it.

    python hack/pythons.py list
    python hack/pythons.py all   [--uv UV] [-- PYTEST ARGS...]                 # make test-pythons
    python hack/pythons.py smoke [--uv UV] [--main PYTHON] [-- PYTEST ARGS...] # part of make test

Interpreters are looked for on PATH (``python3``, ``python3.N``; pyenv's shims are skipped, its
versions are looked at directly) and under pyenv (``$PYENV_ROOT/versions/*``, default
``~/.pyenv``), or taken from ``$PYTHONS`` (paths separated by spaces) when it is set. Each one is
run once to learn what it is. Kept: one CPython per minor version (the newest patch release)
that ``requires-python`` allows, with a working ``ssl`` module, not a free-threaded build; every
other one is listed as skipped with the reason, and so is each minor version from there up to
``NEWEST`` (the newest CPython release) that the machine does not have.

Each kept interpreter gets ``.venv-3.N`` from ``uv sync --locked --extra dev --python PATH``
(``UV_PYTHON_DOWNLOADS=never``: nothing is downloaded but the locked packages, which come from
uv's cache when they were installed before). ``all`` runs pytest with the given arguments in each
and prints one line per interpreter (version, outcome, pytest's summary, duration); its exit
status is 1 when any failed. ``smoke`` runs ``SMOKE`` (plus ``SMOKE_NEWEST`` on the newest
interpreter: the scaffolded project's own ``make test`` from the wheel; ``SMOKE_OTHERS`` on the
rest) on every interpreter of another minor version than ``--main`` (the one ``make test``
already used): test failures make it exit 1; an environment that cannot be set up is a warning,
but fails under ``CI=true``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the newest CPython minor release; the ones up to it that are missing here are named as skipped
NEWEST = (3, 14)

# `make test`'s cross-version smoke: the certificates under strict verification, the embedded API
# server to the toolkit's clients and the kubernetes package, a kubeconfig with client
# certificates, the controller end to end (kubectl against the embedded server, `make run`'s
# path), the pytest plugin a scaffolded project uses
SMOKE = (
    "tests/client/test_strict_tls.py",
    "tests/client/test_kubeconfig.py",
    "tests/apiserver/test_python_client.py",
    "tests/controller/test_e2e.py::test_foo_lifecycle",
    "tests/controller/test_e2e.py::test_make_run_path_local_server_end_to_end",
    "tests/scaffold/test_pytest_plugin.py::test_the_plugin_installs_the_projects_crds_and_runs_the_operator_with_exactly_its_role",
    "tests/scaffold/test_pytest_plugin.py::test_cli_preloads_the_crds_of_every_directory",
)
# and the wheel outside the checkout: on the newest interpreter a project scaffolded from it, its
# own `make test` (uv venv, ruff, mypy, pytest) and `make run` with kubectl (about a minute);
# on the others the embedded API server from the installed wheel
SMOKE_NEWEST = ("tests/scaffold/test_e2e.py",)
SMOKE_OTHERS = ("tests/packaging/test_wheel.py::test_apiserver_from_the_wheel_serves_requests",)

_PROBE = """
import json, sys, sysconfig
try:
    import ssl
    tls = ssl.OPENSSL_VERSION
except ImportError:
    tls = None
print(json.dumps({"implementation": sys.implementation.name, "version": list(sys.version_info[:3]),
                  "release": sys.version_info.releaselevel, "base": getattr(sys, "_base_executable", sys.executable),
                  "free_threaded": bool(sysconfig.get_config_var("Py_GIL_DISABLED")), "ssl": tls}))
"""


@dataclass(frozen=True)
class Interpreter:
    """One CPython that was run and answered."""

    path: str
    version: tuple[int, int, int]
    ssl: str

    @property
    def minor(self) -> str:
        return f"{self.version[0]}.{self.version[1]}"

    @property
    def full(self) -> str:
        return ".".join(map(str, self.version))

    def venv(self, under: Path = ROOT) -> Path:
        """Its environment: ``.venv-3.N`` in ``under`` (the checkout)."""
        return under / f".venv-{self.minor}"


@dataclass(frozen=True)
class Found:
    kept: list[Interpreter]
    skipped: list[tuple[str, str]]  # (what, why)


def _project() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        project: dict[str, object] = tomllib.load(f)["project"]
    return project


def minimum_version() -> tuple[int, int]:
    """The lower bound of ``requires-python`` (only ``>=3.N`` is understood)."""
    spec = str(_project()["requires-python"])
    match = re.fullmatch(r"\s*>=\s*3\.(\d+)\s*", spec)
    if match is None:
        raise SystemExit(f"pythons: requires-python {spec!r} is not of the form '>=3.N'")
    return 3, int(match.group(1))


def candidates() -> list[str]:
    """Interpreter paths to probe, in order: ``$PYTHONS``, else PATH then pyenv's versions."""
    if os.environ.get("PYTHONS"):
        return os.environ["PYTHONS"].split()
    found: list[str] = []
    pyenv_root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        directory = Path(entry or ".")
        if directory.resolve() == (pyenv_root / "shims").resolve() or not directory.is_dir():
            continue
        for child in sorted(directory.iterdir()):
            if re.fullmatch(r"python3(\.\d+)?", child.name) and os.access(child, os.X_OK) and child.is_file():
                found.append(str(child))
    versions = pyenv_root / "versions"
    if versions.is_dir():
        for version in sorted(versions.iterdir()):
            exe = version / "bin" / "python3"
            if exe.is_file() and not (version / "pyvenv.cfg").exists():
                found.append(str(exe))
    return found


@dataclass(frozen=True)
class Probe:
    """What an interpreter said about itself."""

    implementation: str
    version: tuple[int, int, int]
    release: str
    base: str
    free_threaded: bool
    ssl: str | None


def _probe(path: str) -> Probe | str:
    """What ``path`` is, or why it could not be run."""
    try:
        done = subprocess.run([path, "-I", "-c", _PROBE], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"cannot be run: {err}"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"exited {done.returncode}: {last}"
    try:
        out = json.loads(done.stdout.strip().splitlines()[-1])
        major, minor, micro = (int(v) for v in out["version"])
        return Probe(str(out["implementation"]), (major, minor, micro), str(out["release"]), str(out["base"]),
                     bool(out["free_threaded"]), out["ssl"] and str(out["ssl"]))
    except (ValueError, IndexError, KeyError, TypeError):
        return f"unexpected answer {done.stdout.strip()[:80]!r}"


def discover() -> Found:
    """The interpreters to test on (one per minor version) and every other one with the reason."""
    minimum = minimum_version()
    by_minor: dict[str, list[Interpreter]] = {}
    skipped: list[tuple[str, str]] = []
    seen: set[str] = set()
    for path in candidates():
        info = _probe(path)
        if isinstance(info, str):
            skipped.append((path, info))
            continue
        version = info.version
        label = f"{path} ({info.implementation} {'.'.join(map(str, version))})"
        base = os.path.realpath(info.base)
        if base in seen:
            continue  # the same interpreter under another name (python3 -> python3.11)
        seen.add(base)
        if info.implementation != "cpython":
            skipped.append((label, "not CPython"))
        elif version[:2] < minimum:
            skipped.append((label, f"below requires-python >={minimum[0]}.{minimum[1]}"))
        elif info.release != "final":
            skipped.append((label, f"a pre-release ({info.release})"))
        elif info.free_threaded:
            skipped.append((label, "a free-threaded build (the lock's compiled wheels are for the GIL build)"))
        elif not info.ssl:
            skipped.append((label, "no ssl module"))
        else:
            interp = Interpreter(path, version, info.ssl)
            by_minor.setdefault(interp.minor, []).append(interp)
    kept: list[Interpreter] = []
    for minor in sorted(by_minor, key=lambda m: tuple(map(int, m.split(".")))):
        group = sorted(by_minor[minor], key=lambda i: i.version, reverse=True)
        kept.append(group[0])
        skipped += [(f"{i.path} (cpython {i.full})", f"{group[0].full} at {group[0].path} is used for {minor}")
                    for i in group[1:]]
    have = {i.minor for i in kept}
    where = "in $PYTHONS" if os.environ.get("PYTHONS") else "on this machine"
    skipped += [(f"CPython 3.{n}", f"not {where}")
                for n in range(minimum[1], NEWEST[1] + 1) if f"3.{n}" not in have]
    return Found(kept, skipped)


def report(found: Found) -> None:
    print("Python interpreters found:")
    for interp in found.kept:
        print(f"  {interp.full:<8} {interp.path}  ({interp.ssl})")
    if found.skipped:
        print("skipped:")
        for what, why in found.skipped:
            print(f"  {what}: {why}")
    sys.stdout.flush()


def setup_venv(interp: Interpreter, uv: str, venv: Path) -> str | None:
    """``venv`` synced from uv.lock; None when done, else why not (uv's last lines)."""
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(venv), "UV_PYTHON_DOWNLOADS": "never"}
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run([uv, "sync", "--locked", "--extra", "dev", "--python", interp.path, "--quiet"],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return " / ".join((done.stderr.strip() or done.stdout.strip()).splitlines()[-3:])
    return None


@dataclass(frozen=True)
class Outcome:
    interp: Interpreter
    status: str  # passed, FAILED, NOT SET UP
    summary: str
    seconds: float


def run_pytest(interp: Interpreter, venv: Path, args: list[str]) -> Outcome:
    """pytest ``args`` with ``venv``'s Python, its output streamed; the outcome."""
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    print(f"\n== Python {interp.full}: {python} -m pytest {' '.join(args)}", flush=True)
    started = time.monotonic()
    proc = subprocess.Popen([str(python), "-m", "pytest", *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    summary = ""
    for line in proc.stdout:
        sys.stdout.write(line)
        if re.search(r"\b(passed|failed|error|errors|no tests ran)\b.* in [\d.]+s", line):
            summary = line.strip().strip("=").strip()
    code = proc.wait()
    sys.stdout.flush()
    return Outcome(interp, "passed" if code == 0 else f"FAILED (exit {code})", summary, time.monotonic() - started)


def table(outcomes: list[Outcome], title: str) -> None:
    print(f"\n{title}")
    for o in outcomes:
        print(f"  Python {o.interp.full:<8} {o.status:<18} {o.seconds:7.1f}s  {o.summary}")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pythons", description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("command", choices=("list", "all", "smoke"))
    parser.add_argument("--uv", default=str(ROOT / ".tools" / "bin" / "uv"), help="the uv executable")
    parser.add_argument("--venvs", type=Path, default=ROOT, help="where the .venv-3.N go (default: the checkout)")
    parser.add_argument("--main", default=None,
                        help="smoke: the Python `make test` ran (its minor version is not run again)")
    argv = sys.argv[1:] if argv is None else argv
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    pytest_args = argv[split + 1:]
    found = discover()
    report(found)
    if args.command == "list":
        return 0
    if not (shutil.which(args.uv) or Path(args.uv).is_file()):
        print(f"pythons: error: uv not found at {args.uv}: run `make venv` first", file=sys.stderr)
        return 1
    ci = os.environ.get("CI") == "true"
    targets = found.kept
    if args.command == "smoke":
        main_minor = None
        if args.main:
            info = _probe(args.main)
            if isinstance(info, str):
                print(f"pythons: error: --main {args.main}: {info}", file=sys.stderr)
                return 1
            main_minor = f"{info.version[0]}.{info.version[1]}"
        targets = [i for i in found.kept if i.minor != main_minor]
        if not targets:
            print(f"cross-version smoke: no other interpreter than {main_minor} found")
            return 0
    outcomes: list[Outcome] = []
    for interp in targets:
        started = time.monotonic()
        venv = interp.venv(args.venvs)
        why = setup_venv(interp, args.uv, venv)
        if why is not None:
            print(f"\n!! Python {interp.full}: {venv.name} could not be set up from uv.lock: {why}",
                  file=sys.stderr)
            outcomes.append(Outcome(interp, "NOT SET UP", why, time.monotonic() - started))
            continue
        if args.command == "all":
            outcomes.append(run_pytest(interp, venv, pytest_args))
        else:
            files = [*SMOKE, *(SMOKE_NEWEST if interp is targets[-1] else SMOKE_OTHERS)]
            outcomes.append(run_pytest(interp, venv, ["-q", "-p", "no:cacheprovider", *pytest_args, *files]))
    table(outcomes, "make test-pythons:" if args.command == "all" else "cross-version smoke:")
    failed = [o for o in outcomes if o.status.startswith("FAILED")]
    unset = [o for o in outcomes if o.status == "NOT SET UP"]
    if unset and not ci and args.command == "smoke":
        print("!! not every interpreter could be set up (a failure under CI=true)", file=sys.stderr)
    return 1 if failed or (unset and (ci or args.command == "all")) else 0


if __name__ == "__main__":
    sys.exit(main())
