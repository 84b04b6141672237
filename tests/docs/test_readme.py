"""The README: the source of the two commands, and its example controller, run against the
embedded API server (the example's ``__main__`` part is what this test does with its fixtures)."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Any

import msgspec

from samplecontroller.client.scheme import Scheme
from samplecontroller.kubernetes.apis.core.v1 import ConfigMap
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.kubernetes.clientset import Clientset
from samplecontroller.rest import RESTClient

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def block(language: str, after: str) -> str:
    """The first ```language block after the heading ``after``."""
    section = README[README.index(after):]
    match = re.search(rf"^```{language}\n(.*?)^```$", section, re.S | re.M)
    assert match, f"no {language} block after {after!r}"
    return match.group(1)


def test_the_readme_names_the_two_commands() -> None:
    commands = block("sh", "## The two commands")
    assert [line.split("#")[0].strip() for line in commands.splitlines()] == ["make run", "make test"]
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^run: ", makefile, re.M)
    # make test: lint and typecheck, then pytest beside the other checks (the docs among them)
    assert re.search(r"^test: .*\btypecheck\b\n\t.*-j2 .*\bpytest checks$", makefile, re.M)
    assert re.search(r"^checks: .*\bverify\b.*\bdocs\b.*\bsmoke-pythons$", makefile, re.M)


def test_the_example_controller_labels_a_config_map(rest_client: RESTClient, namespace: str) -> None:
    source = block("python", "## A controller")
    assert len(source.splitlines()) <= 35
    example: dict[str, Any] = {"__name__": "readme_example"}
    exec(compile(source, "README.md", "exec"), example)  # defines Labeler; its __main__ part does not run

    from samplecontroller.runtime.builder import controller_managed_by
    from samplecontroller.runtime.manager import Manager, Options

    scheme: Scheme = Scheme()
    scheme.add(example["CONFIGMAPS"])
    mgr = Manager(rest_client, Options(namespaces=[namespace]), scheme=scheme)
    controller_managed_by(mgr).for_(ConfigMap).complete(example["Labeler"](mgr.get_client()))
    stop = threading.Event()
    thread = threading.Thread(target=mgr.start, args=(stop,), daemon=True)
    thread.start()
    try:
        config_maps = Clientset(rest_client).core_v1().configmaps(namespace)
        config_maps.create(ConfigMap(metadata=ObjectMeta(name="settings", labels={"app": "web"}), data={"a": "b"}))
        deadline = time.monotonic() + 30
        while (labels := config_maps.get("settings").metadata.labels) != {"app": "web", "team": "platform"}:
            assert time.monotonic() < deadline, f"not labeled: {labels}"
            time.sleep(0.05)
        assert msgspec.structs.asdict(config_maps.get("settings"))["data"] == {"a": "b"}
    finally:
        stop.set()
        thread.join(30)
