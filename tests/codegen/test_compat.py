"""Generated names are public API (issue 38, item 2): a generated name a generator change replaced
keeps working for a release as a deprecated alias, typed for mypy and warning at run time.

The rename the issue met: the kubebuilder CronJob's ``status.active`` items, generated as
``CronJobStatusActiveItem`` by builds before 0.1.0, are the built-in ``ObjectReference`` now."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from samplecontroller.apimachinery import deprecation
from samplecontroller.codegen import compat
from samplecontroller.kubernetes.apis.batch.v1 import JobTemplateSpec
from samplecontroller.kubernetes.apis.core.v1 import ObjectReference
from tests.codegen.test_builtin_types import cronjob_crd, generate, load

ROOT = Path(__file__).resolve().parents[2]


def test_the_old_name_imports_warns_and_is_the_new_type(tmp_path: Path) -> None:
    code, models, _ = generate(tmp_path, cronjob_crd())
    assert code == 0
    module = load(models)
    with pytest.warns(DeprecationWarning, match=r"CronJobStatusActiveItem is deprecated and goes in samplecontroller "
                                                r"0\.3\.0: use samplecontroller\.kubernetes\.apis\.core\.v1\."
                                                r"ObjectReference"):
        assert module.CronJobStatusActiveItem is ObjectReference
    with pytest.warns(DeprecationWarning, match=r"use samplecontroller\.kubernetes\.apis\.batch\.v1\.JobTemplateSpec"):
        assert module.CronJobSpecJobTemplate is JobTemplateSpec
    with pytest.raises(AttributeError, match="has no attribute 'CronJobStatusNothing'"):
        _ = module.CronJobStatusNothing
    assert "CronJobStatusActiveItem" not in module.__dict__  # not a name of its own: only the alias
    # mypy sees the alias as the type (a user's import and use type-check), with no run of the library
    user = tmp_path / "user.py"
    user.write_text(f"from {models.parents[3].name}.apis.batch.v1 import CronJobStatusActiveItem\n\n"
                    "ref: CronJobStatusActiveItem = CronJobStatusActiveItem(name='x')\n"
                    "name: str = ref.name  # an error unless it is ObjectReference (name: str | UnsetType)\n")
    config = tmp_path / "mypy.ini"  # the library skipped but for ObjectReference's module (seconds, not a minute)
    config.write_text("[mypy]\nstrict = True\nfollow_imports = skip\nallow_subclassing_any = True\n"
                      "[mypy-samplecontroller.kubernetes.apis.core.v1]\nfollow_imports = normal\n")
    checked = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(config), "--no-incremental",
                              "--python-version", "3.11", str(user), str(models)],
                             cwd=tmp_path, env={"MYPYPATH": f"{ROOT}:{tmp_path}", "PATH": ""},
                             capture_output=True, text=True, timeout=300, check=False)
    assert 'Incompatible types in assignment (expression has type "str | UnsetType"' in checked.stdout, checked.stdout


class _Renamed:
    """A generated class the module defines itself (a rename within the module)."""


_Renamed.__module__ = "myop.generated.apis.batch.v1"


def test_the_warning_says_where_the_new_name_is() -> None:
    """A built-in type is imported into the generated module, not exported by it (mypy --strict refuses
    ``from myop.generated.apis.batch.v1 import EnvVar``): the warning names the module to import it
    from. A class the generated module defines itself is named as it is."""
    module = "myop.generated.apis.batch.v1"
    namespace = {"ObjectReference": ObjectReference, "Renamed": _Renamed}
    table = {"CronJobStatusActiveItem": ("ObjectReference", "0.3.0"), "Old": ("Renamed", "0.3.0")}
    with pytest.warns(DeprecationWarning) as caught:
        assert deprecation.alias(module, namespace, table, "CronJobStatusActiveItem") is ObjectReference
        assert deprecation.alias(module, namespace, table, "Old") is _Renamed
    assert [str(w.message) for w in caught] == [
        f"{module}.CronJobStatusActiveItem is deprecated and goes in samplecontroller 0.3.0: use "
        "samplecontroller.kubernetes.apis.core.v1.ObjectReference",
        f"{module}.Old is deprecated and goes in samplecontroller 0.3.0: use Renamed"]


def test_a_rule_past_its_release_generates_no_alias() -> None:
    renamed = {"CronJobStatusActiveItem": ("ObjectReference", compat.BUILTIN_MATCH)}
    defined = {"ObjectReference", "CronJob"}
    assert "CronJobStatusActiveItem: TypeAlias = ObjectReference" in compat.alias_block(renamed, defined, "0.2.0")
    assert compat.alias_block(renamed, defined, compat.RENAMES[compat.BUILTIN_MATCH].until) == ""
    assert compat.alias_block(renamed, defined | {"CronJobStatusActiveItem"}, "0.2.0") == ""  # a class of its own
    assert compat.alias_block({"X": ("Gone", "no-such-rule")}, defined, "0.2.0") == ""
