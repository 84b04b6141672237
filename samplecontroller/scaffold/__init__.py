"""``samplecontroller init`` and ``samplecontroller create api``: new operator projects (kubebuilder's).

    samplecontroller init DIR --domain example.com --package NAME [--project-name NAME]
    samplecontroller create api --group G --version V --kind K [--plural P]
                                [--namespaced|--cluster]
                                [--style runtime|async|client-go] [--storage]
    samplecontroller create webhook --group G --version V --kind K [--defaulting]
                                [--programmatic-validation]
                                [--conversion --spoke V2 [--spoke V3 ...]]
    samplecontroller upgrade
    samplecontroller --version

``init`` writes a project (pyproject, Makefile with ``make run``/``make test``, README, PROJECT,
``hack/update_codegen.py``, ``config/`` kustomize manifests, Dockerfile, the package with its
``__main__`` and ``controllers``, tests) and generates ``NAME/generated``. It records where this
toolkit was installed from (``toolkit.current()``: a wheel, a checkout or the index) in PROJECT
and the Makefile's ``TOOLKIT``, so the project installs the same one; a wheel is copied into the
project's ``.toolkit/`` (a checkout's is built first), so nothing in the project refers to a path
outside it. PROJECT records
the scaffold's layout (``LAYOUT``): ``create`` on a project of another layout stops, changing
nothing, and ``upgrade`` moves a project made by an earlier release to this one (the scaffold's
own files; the user's code is kept).

``create api`` (run in the project's directory) adds a kind: its CRD in ``config/crd/bases``
(``G.<domain>`` unless G has a dot; spec, a status subresource with ``observedGeneration`` and
``conditions``, printer columns Ready and Age), a sample in ``config/samples``, a controller in
the chosen style with unit and integration tests; it rewrites ``config/rbac/role.yaml``,
``config/crd/kustomization.yaml`` and the marked regions of ``controllers/__init__.py`` from
PROJECT, and regenerates the package; ``--style async`` adds the toolkit's ``async`` extra to
the project's dependencies. ``create webhook`` adds the handlers, their tests, ``config/webhook``,
``config/certmanager`` and the CRD's conversion patch, and the ``webhook`` extra to the
dependencies (the operator's image installs only those). Everything is checked (names, the generator's checks on
the new CRD, files that would be overwritten) before anything is written.

Templates are package data (``samplecontroller/scaffold/templates``). Needs the ``codegen``
extra. A user mistake is one line ``samplecontroller: error: ...`` and exit status 1 (a bad
command line: exit 2).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import keyword
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from samplecontroller import _extras
from samplecontroller._version import __version__
from samplecontroller.scaffold.toolkit import Toolkit, ToolkitBuildError, build_wheel, current

__all__ = ["PROG", "Project", "Resource", "ScaffoldError", "cli", "create_api", "create_webhook", "init", "main"]

PROG = "samplecontroller"
PROJECT_FILE = "PROJECT"
CRD_DIR = Path("config") / "crd" / "bases"
GENERATOR = "hack/update_codegen.py"
STYLES = ("runtime", "async", "client-go")
_STYLE_SUFFIX = {"runtime": "runtime", "async": "async", "client-go": "clientgo"}
TOOLKIT_DEPENDENCY = re.compile(r'"samplecontroller(?:\[([a-z,]*)\])?>=')
"""The toolkit requirement in pyproject.toml's ``[project] dependencies`` (what the image installs):
``create api --style async`` adds the ``async`` extra to it (the async client's aiohttp), ``create
webhook`` the ``webhook`` extra (the webhook server's aiohttp and cryptography)."""
DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
KIND = re.compile(r"[A-Z][A-Za-z0-9]*")
VERSION = re.compile(r"v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?")
# Names the scaffolded controllers and tests import: a kind may not take them.
IMPORTED_NAMES = {
    "Any", "Callable", "Client", "Clientset", "Condition", "EventRecorder", "FakeClientset", "FakeRecorder", "FakeResourceClient",
    "Iterator", "Manager", "MergeFrom", "ObjectMeta", "RESTClient", "RateLimitingQueue", "Request", "ResourceInfo",
    "Result", "SharedInformerFactory", "T", "TypeVar",
}
# Names controllers/__init__.py defines or imports: no controller module may take them.
RESERVED_MODULES = {"annotations", "argparse", "setup", "Manager"}
WEBHOOK_DIRS = ("config/webhook", "config/crd/patches")
WEBHOOKS_INI = "samplecontroller_webhooks"
MARKER = "# +samplecontroller:scaffold:{region}:{edge}"
LAYOUT = "samplecontroller/v2"
"""The scaffold's layout, recorded in PROJECT (kubebuilder's ``layout``): v1 is what 0.1.0 wrote (its
PROJECT has no ``layout``), v2 this release's (the toolkit's wheel inside the project, no path out of
it). ``samplecontroller upgrade`` moves a project to it; ``create`` refuses another."""
FIRST_LAYOUT = "samplecontroller/v1"
TOOLKIT_DIR = ".toolkit"
"""Where a project keeps the toolkit's wheel (``init`` and ``upgrade`` copy it there): inside the
project, so a moved, copied or cloned project installs the same toolkit."""


_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's when there: CRDs run to 4000 lines


class ScaffoldError(Exception):
    """A user mistake; ``str()`` is one line."""


# -- the project model (the PROJECT file) -----------------------------------------------------------


def _snake(name: str) -> str:
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)).lower()
    return words + "_" if keyword.iskeyword(words) else words


def pluralize(kind: str) -> str:
    """The resource name of ``kind`` as kubebuilder makes it: lowercase, English plural."""
    lower = kind.lower()
    if lower.endswith(("s", "x", "z", "ch", "sh")):
        return lower + "es"
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        return lower[:-1] + "ies"
    return lower + "s"


@dataclass(frozen=True)
class Resource:
    """One kind of the project (a PROJECT entry)."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True
    style: str = "runtime"
    controller: bool = True
    defaulting: bool = False
    validation: bool = False
    conversion: bool = False
    spokes: tuple[str, ...] = ()

    @property
    def webhook_module(self) -> str:
        """The module of this version's defaulting and validation webhooks."""
        return f"{self.module}_{self.version}"

    @property
    def conversion_module(self) -> str:
        return f"{self.module}_conversion"

    def webhook_path(self, prefix: str) -> str:
        """``/mutate-...`` or ``/validate-...``, as ``runtime.webhook.path_for`` makes it."""
        return f"/{prefix}-{self.group.replace('.', '-')}-{self.version}-{self.kind.lower()}"

    def same_kind(self, other: Resource) -> bool:
        """Whether ``other`` is another version (or the same version) of this kind."""
        return (self.group, self.kind) == (other.group, other.kind)

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def module(self) -> str:
        """The controller module's name (and the tests' prefix)."""
        return _snake(self.kind)

    @property
    def var(self) -> str:
        return self.module

    @property
    def group_pkg(self) -> str:
        from samplecontroller.codegen.naming import group_packages

        return group_packages([self.group], {})[self.group]

    @property
    def method(self) -> str:
        """The clientset's and informer factory's accessor."""
        name = re.sub(r"\W", "_", self.plural)
        return name + "_" if keyword.iskeyword(name) else name

    @property
    def clientset_attr(self) -> str:
        return f"{self.group_pkg}_{self.version}"

    @property
    def crd_file(self) -> str:
        return f"{self.group}_{self.plural}.yaml"

    @property
    def sample_file(self) -> str:
        return f"{self.group_pkg}_{self.version}_{self.singular}.yaml"


@dataclass
class Project:
    """The PROJECT file: what ``create api`` needs to know about the project."""

    project: str
    domain: str
    package: str
    toolkit: Toolkit
    resources: list[Resource] = field(default_factory=list)
    root: str = ""  # the project's directory (not recorded): the toolkit's path is recorded relative to it
    layout: str = LAYOUT

    @property
    def toolkit_path(self) -> str:
        """The toolkit's file or checkout relative to the project (POSIX), so that PROJECT and the
        Makefile hold no absolute path: a project moved with (or checked out beside) the toolkit works."""
        if not self.toolkit.location or not self.root:
            return self.toolkit.location
        return Path(os.path.relpath(self.toolkit.location, self.root)).as_posix()

    @property
    def namespace(self) -> str:
        """The namespace the operator is deployed to."""
        return f"{self.project}-system"

    def kinds(self) -> list[Resource]:
        """One entry per kind: the version its controller was made for."""
        return [r for r in self.resources if r.controller]

    def versions(self, r: Resource) -> list[Resource]:
        """Every version of ``r``'s kind."""
        return [o for o in self.resources if o.same_kind(r)]

    def dump(self) -> str:
        """``PROJECT``'s text for this project."""
        entries = [{**asdict(r), "spokes": list(r.spokes)} for r in self.resources]
        doc = {"version": "1", "layout": self.layout, "projectName": self.project, "domain": self.domain,
               "package": self.package, "toolkit": {**asdict(self.toolkit), "location": self.toolkit_path},
               "resources": entries}
        return ("# Written by samplecontroller init, create api and create webhook: the project's kinds, their webhooks\n"
                "# and where the toolkit comes from. Read by samplecontroller create.\n" + yaml.safe_dump(doc, sort_keys=False))

    @classmethod
    def load(cls, root: Path) -> Project:
        """Read ``PROJECT`` from ``root`` (ScaffoldError, one line, without one)."""
        path = root / PROJECT_FILE
        if not path.is_file():
            raise ScaffoldError(f"no {PROJECT_FILE} file in {root}: run this in a project made by `{PROG} init`")
        try:
            doc = yaml.safe_load(path.read_text())
            recorded = Toolkit(**doc["toolkit"])
            if recorded.location and not Path(recorded.location).is_absolute():
                location = os.path.normpath(root.resolve() / recorded.location)
                recorded = Toolkit(recorded.kind, location, recorded.version)
            return cls(project=str(doc["projectName"]), domain=str(doc["domain"]), package=str(doc["package"]),
                       toolkit=recorded,
                       resources=[Resource(**{**r, "spokes": tuple(r.get("spokes") or ())})
                                  for r in doc.get("resources") or []],
                       root=str(root.resolve()), layout=str(doc.get("layout") or FIRST_LAYOUT))
        except (yaml.YAMLError, KeyError, TypeError, AttributeError) as err:
            raise ScaffoldError(f"{path}: not a valid {PROJECT_FILE} file ({type(err).__name__}: {err})") from None


# -- rendering ------------------------------------------------------------------------------------


def _name_order(name: str) -> tuple[int, str]:
    """isort's order-by-type: CONSTANTS, then Classes, then everything else."""
    rank = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return rank, name


def from_imports(items: Sequence[tuple[str, Sequence[str]]]) -> str:
    """``from M import N...`` lines for one import section, sorted and wrapped as ruff's isort wants."""
    lines = []
    for module, names in sorted(items, key=lambda item: item[0].lower()):
        ordered = sorted(names, key=_name_order)
        line = f"from {module} import {', '.join(ordered)}"
        if len(line) > 120:
            line = f"from {module} import (\n" + "".join(f"    {n},\n" for n in ordered) + ")"
        lines.append(line)
    return "\n".join(lines)


def _environment() -> Any:
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("samplecontroller.scaffold", "templates"),
                             keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    env.globals["from_imports"] = from_imports
    env.globals["scaffold_role"] = scaffold_role
    env.globals["scaffold_webhooks"] = scaffold_webhooks
    env.globals["scaffold_conversion_patch"] = scaffold_conversion_patch
    return env


def scaffold_webhooks(project: str, namespace: str, defaulting: list[Resource], validation: list[Resource]) -> str:
    """config/webhook/manifests.yaml as ``make manifests`` writes it for the scaffolded webhooks
    (their ``WebhookOptions`` are kubebuilder's defaults)."""
    from samplecontroller.manifests import render_webhooks
    from samplecontroller.runtime.webhook_options import WebhookDeclaration, WebhookOptions

    declared = [WebhookDeclaration(type_, r.group, r.version, r.kind, r.plural, r.webhook_path(prefix),
                                   WebhookOptions(name=f"{type_[0]}{r.kind.lower()}-{r.version}.{r.group}"))
                for type_, prefix, resources in (("mutating", "mutate", defaulting),
                                                 ("validating", "validate", validation))
                for r in resources]
    return render_webhooks(declared, project, namespace) or (
        "# No admission webhooks yet: `samplecontroller create webhook --defaulting` or\n"
        "# `--programmatic-validation` adds one, and make manifests rewrites this file from the code.\n")


def scaffold_conversion_patch(group: str, plural: str, project: str, namespace: str) -> str:
    """config/crd/patches/webhook_in_<plural>.yaml as ``make manifests`` writes it."""
    from samplecontroller.manifests import render_conversion_patch

    return render_conversion_patch(group, plural, project, namespace)


def scaffold_role(project: str, package: str, resources: list[Resource]) -> str:
    """config/rbac/role.yaml as ``make manifests`` writes it for the scaffolded controllers: the
    ``rbac.rule`` declarations their templates carry and what their Manager shows (get, list and
    watch of a runtime or async controller's kind, the Events of the recorder)."""
    from samplecontroller.manifests import render_roles
    from samplecontroller.runtime.rbac import Rule

    rules: list[Rule] = []
    for r in resources:
        module = f"{package}.controllers.{r.module}"
        if r.style == "client-go":
            declared = f"{module}.{r.kind}Controller"
            rules.append(Rule(groups=(r.group,), resources=(r.plural,), verbs=("get", "list", "watch"),
                              sources=(declared,)))
        else:
            declared = f"{module}.{r.kind}Reconciler"
            rules.append(Rule(groups=(r.group,), resources=(r.plural,), verbs=("get", "list", "watch"),
                              sources=(f"controller {r.singular}-controller watches {r.plural}",)))
        rules.append(Rule(groups=(r.group,), resources=(f"{r.plural}/status",), verbs=("patch",),
                          sources=(declared,)))
    if resources:
        rules.append(Rule(groups=("",), resources=("events",), verbs=("create", "patch"),
                          sources=("the manager's event recorder",)))
    return render_roles(rules, f"{project}-manager")


def _render(template: str, project: Project, **extra: Any) -> str:
    return str(_environment().get_template(template).render(
        project=project.project, domain=project.domain, package=project.package, toolkit=project.toolkit,
        toolkit_path=project.toolkit_path,
        toolkit_description=Toolkit(project.toolkit.kind, project.toolkit_path, project.toolkit.version).describe(),
        namespace=project.namespace, resources=project.kinds(),
        defaulting=[r for r in project.resources if r.defaulting],
        validation=[r for r in project.resources if r.validation],
        conversions=[r for r in project.resources if r.conversion], **extra))


def _setup_regions(package: str, modules: list[str], call: str) -> dict[str, str]:
    """The marked regions of a package's __init__.py: the imports of ``modules`` and their setup calls."""
    modules = sorted(modules)
    line = f"from {package} import {', '.join(modules)}"
    if not modules:
        imports = ""
    elif len(line) <= 120:
        imports = line + "\n\n"
    else:
        imports = f"from {package} import (\n" + "".join(f"    {m},\n" for m in modules) + ")\n\n"
    setups = "".join(f"    {m}.setup({call})\n" for m in modules)
    return {"imports": imports, "setup": setups}


def _controllers_regions(project: Project) -> dict[str, str]:
    """The marked regions of controllers/__init__.py: the imports and the setup calls."""
    return _setup_regions(f"{project.package}.controllers", [r.module for r in project.kinds()], "mgr, args")


def _webhooks_regions(project: Project) -> dict[str, str]:
    """The marked regions of webhooks/__init__.py: the imports and the setup calls."""
    modules = [r.webhook_module for r in project.resources if r.defaulting or r.validation]
    modules += [r.conversion_module for r in project.resources if r.conversion]
    return _setup_regions(f"{project.package}.webhooks", modules, "mgr")


def _splice(text: str, region: str, body: str, path: Path) -> str:
    begin, end = MARKER.format(region=region, edge="begin"), MARKER.format(region=region, edge="end")
    start, stop = text.find(begin), text.find(end)
    if start < 0 or stop < start:
        raise ScaffoldError(f"{path}: the {begin!r} and {end!r} markers are missing; put them back around the "
                            f"{region} lines")
    head = text[: text.index("\n", start) + 1]
    tail = text[text.rfind("\n", 0, stop) + 1:]
    return head + body + tail


def _controllers_init(project: Project, existing: str | None, path: Path) -> str:
    regions = _controllers_regions(project)
    if existing is None:
        return _render("controllers_init.py.j2", project, **regions)
    for region, body in regions.items():
        existing = _splice(existing, region, body, path)
    return existing


def _webhooks_init(project: Project, existing: str | None, path: Path) -> str:
    regions = _webhooks_regions(project)
    if existing is None:
        return _render("webhooks_init.py.j2", project, **regions)
    for region, body in regions.items():
        existing = _splice(existing, region, body, path)
    return existing


# -- code generation ------------------------------------------------------------------------------


def _generate(root: Path, project: Project, extra_crd: tuple[str, str] | None = None) -> dict[str, str]:
    """The generated package's files for the project's CRDs (plus ``extra_crd``: name, text),
    exactly as ``hack/update_codegen.py`` generates them. Raises ScaffoldError for a bad CRD."""
    from samplecontroller.codegen.errors import CodegenError
    from samplecontroller.codegen.generator import Target, generate

    target = Target(f"{project.package}.generated", GENERATOR, "bases/")
    with tempfile.TemporaryDirectory(prefix="scaffold-") as tmp:
        crds = Path(tmp) / "bases"
        existing = root / CRD_DIR
        if existing.is_dir():
            shutil.copytree(existing, crds)
        else:
            crds.mkdir()
        if extra_crd is not None:
            (crds / extra_crd[0]).write_text(extra_crd[1])
        try:
            return generate(crds, target)
        except CodegenError as err:
            raise ScaffoldError(f"the code generator refused the CRD: {err}") from None


def _write_generated(root: Path, project: Project, files: dict[str, str]) -> None:
    from samplecontroller.codegen.errors import CodegenError
    from samplecontroller.codegen.generator import check_output_dir, write_tree

    out = root / project.package / "generated"
    try:
        check_output_dir(out)
    except CodegenError as err:
        raise ScaffoldError(str(err)) from None
    write_tree(files, out)


# -- layouts --------------------------------------------------------------------------------------


def _layout_number(layout: str) -> int:
    found = re.fullmatch(r"samplecontroller/v([0-9]+)", layout)
    return int(found.group(1)) if found else 0


def check_layout(root: Path, project: Project, command: str) -> None:
    """ScaffoldError (nothing changed, the steps to take) unless ``project`` has this toolkit's layout."""
    if project.layout == LAYOUT:
        return
    if _layout_number(project.layout) > _layout_number(LAYOUT):
        raise ScaffoldError(f"{root / PROJECT_FILE}: the layout {project.layout} is newer than this toolkit's "
                            f"({LAYOUT}, {PROG} {__version__}); install samplecontroller {project.toolkit.version} or "
                            "later. Nothing was changed")
    raise ScaffoldError(f"this project has the scaffold layout {project.layout} (made by {PROG} "
                        f"{project.toolkit.version}); this toolkit ({__version__}) writes {LAYOUT}. Nothing was "
                        f"changed: run `{PROG} upgrade` (it keeps your code), then `{PROG} {command}` again")


def _check_webhooks_served(root: Path, project: Project) -> None:
    """ScaffoldError (nothing changed, the steps) unless ``__main__.py`` serves ``webhooks.setup`` and the
    Makefile passes ``--webhook-port``: else a webhook would be written that nothing serves."""
    main_path = root / project.package / "__main__.py"
    makefile = root / "Makefile"
    main_text = main_path.read_text() if main_path.is_file() else ""
    make_text = makefile.read_text() if makefile.is_file() else ""
    missing = [what for what, ok in (
        (f"{main_path.relative_to(root)} calling webhooks.setup(mgr) and passing webhooks=[...] to cmd.main",
         "webhooks.setup(mgr)" in main_text and "webhooks=" in main_text),
        ("the Makefile's run target passing --webhook-port", "--webhook-port" in make_text)) if not ok]
    if missing:
        raise ScaffoldError(f"the webhooks would not be served: missing {' and '.join(missing)}. Nothing was changed: "
                            f"run `{PROG} upgrade` (it rewires them), or add them as a new `{PROG} init` writes "
                            "them, then run this command again")


def _project_toolkit(directory: Path, toolkit: Toolkit) -> tuple[Toolkit, Path | None]:
    """The toolkit as the project records it, and the wheel to copy into the project: a wheel goes to
    ``.toolkit/`` (its location there), so the project never refers to a path outside itself; a
    checkout is built into a wheel first (``toolkit.build_wheel``)."""
    try:
        toolkit = build_wheel(toolkit)
    except ToolkitBuildError as err:
        raise ScaffoldError(f"{err}. Nothing was changed") from None
    if toolkit.kind != "wheel":
        return toolkit, None
    source = Path(toolkit.location)
    inside = directory.resolve() / TOOLKIT_DIR / source.name
    return Toolkit("wheel", str(inside), toolkit.version), (source if source.resolve() != inside else None)


def _copy_toolkit(directory: Path, source: Path | None, toolkit: Toolkit) -> None:
    """Put the toolkit's wheel into ``directory/.toolkit`` (the only one there)."""
    if source is None or not source.is_file():
        return
    target = directory / TOOLKIT_DIR
    target.mkdir(parents=True, exist_ok=True)
    for old in target.glob("samplecontroller-*.whl"):
        if old.name != source.name:
            old.unlink()
    shutil.copyfile(source, target / source.name)


# -- init -----------------------------------------------------------------------------------------


def _check_init(directory: Path, domain: str, package: str, project_name: str) -> None:
    if not DNS1123_SUBDOMAIN.fullmatch(domain):
        raise ScaffoldError(f"--domain {domain!r} is not a DNS subdomain (like example.com)")
    if not package.isidentifier() or keyword.iskeyword(package) or package != package.lower():
        raise ScaffoldError(f"--package {package!r} is not a lowercase Python identifier (like myoperator)")
    if package in sys.stdlib_module_names or package in ("samplecontroller", "tests", "generated", "hack"):
        raise ScaffoldError(f"--package {package!r} would shadow the module of that name; choose another")
    if not DNS1123_LABEL.fullmatch(project_name) or len(project_name) > 50:
        raise ScaffoldError(f"project name {project_name!r} is not a DNS label of at most 50 characters "
                            "(lowercase letters, digits, '-'); pass --project-name")
    if directory.exists() and (not directory.is_dir() or any(p.name != ".git" for p in directory.iterdir())):
        raise ScaffoldError(f"{directory} exists and is not an empty directory")


INIT_FILES = {
    "pyproject.toml": "pyproject.toml.j2",
    "Makefile": "Makefile.j2",
    "README.md": "README.md.j2",
    "Dockerfile": "Dockerfile.j2",
    ".dockerignore": "dockerignore.j2",
    ".gitignore": "gitignore.j2",
    "hack/update_codegen.py": "update_codegen.py.j2",
    "{package}/__init__.py": "package_init.py.j2",
    "{package}/__main__.py": "main.py.j2",
    "{package}/scheme.py": "scheme.py.j2",
    "config/kustomization.yaml": "config_kustomization.yaml.j2",
    "config/crd/kustomization.yaml": "crd_kustomization.yaml.j2",
    "config/rbac/kustomization.yaml": "rbac_kustomization.yaml.j2",
    "config/rbac/role.yaml": "role.yaml.j2",
    "config/rbac/role_binding.yaml": "role_binding.yaml.j2",
    "config/rbac/leader_election_role.yaml": "leader_election_role.yaml.j2",
    "config/rbac/leader_election_role_binding.yaml": "leader_election_role_binding.yaml.j2",
    "config/rbac/service_account.yaml": "service_account.yaml.j2",
    "config/manager/kustomization.yaml": "manager_kustomization.yaml.j2",
    "config/manager/namespace.yaml": "namespace.yaml.j2",
    "config/manager/deployment.yaml": "deployment.yaml.j2",
    "tests/test_main.py": "test_main.py.j2",
}


def init(directory: Path, *, domain: str, package: str, project_name: str | None = None,
         toolkit: Toolkit | None = None) -> Project:
    """Scaffold a new project in ``directory`` (absent or empty); see the module docstring."""
    _extras.require("codegen", f"{PROG} init")
    name = project_name or directory.resolve().name.lower().replace("_", "-")
    _check_init(directory, domain, package, name)
    recorded, wheel = _project_toolkit(directory, toolkit or current())
    project = Project(project=name, domain=domain, package=package, toolkit=recorded,
                      root=str(directory.resolve()))
    generated = _generate(directory, project)
    files = {path.format(package=package): _render(template, project) for path, template in INIT_FILES.items()}
    files[f"{package}/controllers/__init__.py"] = _controllers_init(project, None, directory)
    files[f"{package}/webhooks/__init__.py"] = _webhooks_init(project, None, directory)
    files[f"{package}/py.typed"] = ""
    files[f"{CRD_DIR}/.gitkeep"] = ""
    files["config/samples/.gitkeep"] = ""
    files[PROJECT_FILE] = project.dump()
    for rel, text in files.items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (directory / "hack" / "update_codegen.py").chmod(0o755)
    _copy_toolkit(directory, wheel, recorded)
    _write_generated(directory, project, generated)
    return project


# -- create api -----------------------------------------------------------------------------------


def _resource(project: Project, group: str, version: str, kind: str, plural: str | None, namespaced: bool,
              style: str) -> Resource:
    full_group = group if "." in group else f"{group}.{project.domain}"
    if not group or not DNS1123_SUBDOMAIN.fullmatch(full_group) or not DNS1123_LABEL.fullmatch(group.split(".")[0]):
        raise ScaffoldError(f"--group {group!r} is not a lowercase DNS label (like ops) or subdomain")
    if not VERSION.fullmatch(version):
        raise ScaffoldError(f"--version {version!r} is not a Kubernetes API version (v1, v1alpha1, v2beta3, ...)")
    if not KIND.fullmatch(kind):
        raise ScaffoldError(f"--kind {kind!r} is not CamelCase starting with an uppercase letter (like Backup)")
    if kind in IMPORTED_NAMES:
        raise ScaffoldError(f"--kind {kind!r} clashes with a name the scaffolded controller imports; choose another")
    existing = [o for o in project.resources if (o.group, o.kind) == (full_group, kind)]
    if existing:
        return _new_version(existing, version, plural)
    resource = Resource(group=full_group, version=version, kind=kind, plural=plural or pluralize(kind),
                        namespaced=namespaced, style=style)
    if resource.module in RESERVED_MODULES:
        raise ScaffoldError(f"--kind {kind!r} would make a controller module {resource.module!r}, a name "
                            "controllers/__init__.py uses; choose another")
    if not DNS1123_LABEL.fullmatch(resource.plural):
        raise ScaffoldError(f"--plural {resource.plural!r} is not a lowercase DNS label")
    from samplecontroller.codegen.errors import CodegenError

    try:
        pkg = resource.group_pkg
    except CodegenError:
        raise ScaffoldError(f"--group {group!r}: no Python package name can be made from {full_group!r} "
                            "(start its first DNS label with a letter)") from None
    for other in project.resources:
        if other.group != resource.group and other.group_pkg == pkg:
            raise ScaffoldError(f"--group {group!r}: {full_group} would share the package name {pkg!r} with "
                                f"{other.group}; choose a group with another first DNS label")
        if other.group == resource.group and other.plural == resource.plural:
            raise ScaffoldError(f"{other.kind} ({other.plural}.{other.group}/{other.version}) exists already with "
                                f"the plural {other.plural!r}; pass another --plural")
        if other.module == resource.module:
            raise ScaffoldError(f"the controller module {resource.module}.py exists already (for "
                                f"{other.kind}.{other.group}); choose another kind name")
    return resource


def _new_version(existing: list[Resource], version: str, plural: str | None) -> Resource:
    """Another version of a kind the project has (no controller: the kind has one)."""
    first = existing[0]
    for other in existing:
        if other.version == version:
            raise ScaffoldError(f"{other.kind} ({other.plural}.{other.group}/{version}) exists already")
    if plural is not None and plural != first.plural:
        raise ScaffoldError(f"--plural {plural!r}: {first.kind}.{first.group} is served as {first.plural!r} in "
                            "every version")
    return Resource(group=first.group, version=version, kind=first.kind, plural=first.plural,
                    namespaced=first.namespaced, style=first.style, controller=False)


def _context(project: Project, r: Resource) -> dict[str, Any]:
    """What the templates know about ``r``."""
    models = f"{project.package}.generated.apis.{r.group_pkg}.{r.version}"
    return {**asdict(r), **{k: getattr(r, k) for k in (
        "singular", "module", "var", "group_pkg", "method", "clientset_attr", "crd_file", "webhook_module",
        "conversion_module")}, "models": models, "versions_package": f"{project.package}.generated.apis.{r.group_pkg}",
        "mutate_path": r.webhook_path("mutate"), "validate_path": r.webhook_path("validate")}


def has_example_fields(crd_text: str, version: str, status: bool = False) -> bool:
    """Whether ``version`` of the CRD has the scaffold's example fields, which the example webhook,
    sample and conversion code use: a string ``spec.message`` (and with ``status``,
    ``status.observedGeneration`` and ``status.conditions``). A kind the user brought (the
    kubebuilder CronJob) has not: its stubs then name no field (TODOs instead)."""
    try:
        doc = yaml.load(crd_text, Loader=_LOADER)
        entry = next(v for v in doc["spec"]["versions"] if v.get("name") == version)
        props = entry["schema"]["openAPIV3Schema"]["properties"]
        ok = props["spec"]["properties"]["message"].get("type") == "string"
        if status:
            status_props = props["status"]["properties"]
            ok = ok and "observedGeneration" in status_props and "conditions" in status_props
        return bool(ok)
    except (yaml.YAMLError, KeyError, TypeError, AttributeError, StopIteration):
        return False


def _crd_with_version(path: Path, version: str, storage: bool) -> str:
    """The CRD file at ``path`` with ``version`` added: a copy of the storage version's entry,
    served; the storage version moves to it when ``storage``. A text edit: the rest of the file
    (comments, ``---``, quoting, indentation) stays as it is."""
    text = path.read_text()
    refused = ScaffoldError(f"{path}: not a CRD with a storage version in a block list; add the version by hand")
    try:
        node = yaml.compose(text, Loader=_LOADER)
        spec = _mapping_value(node, "spec")
        versions = _mapping_value(spec, "versions")
        if not isinstance(versions, yaml.SequenceNode) or versions.flow_style or not versions.value:
            raise refused
        entries = [v for v in versions.value if isinstance(v, yaml.MappingNode) and not v.flow_style]
        template = next(v for v in entries if _scalar(_mapping_value(v, "storage")) == "true")
    except (yaml.YAMLError, StopIteration, KeyError):
        raise refused from None
    lines = text.splitlines(keepends=True)
    first = template.start_mark.line  # the line of "- name: v1"
    if not lines[first][:template.start_mark.column].rstrip().endswith("-"):
        raise refused
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    block_start = offsets[first]
    block = text[block_start:offsets[_block_end(lines, template)]]
    if re.search(r"(?:^|[\s:\-\[,])&[^\s,\[\]{}]+", block, re.MULTILINE):
        raise ScaffoldError(f"{path}: the storage version's entry defines YAML anchors, which a copy would repeat; "
                            "add the version by hand")
    edits: list[tuple[int, int, str]] = []
    for key, value in (("name", version), ("served", "true"), ("storage", "true" if storage else "false")):
        try:
            node = _mapping_value(template, key)
            edits.append((node.start_mark.index - block_start, node.end_mark.index - block_start, value))
        except KeyError:
            at = block.index("\n") + 1  # after the "- name: ..." line
            edits.append((at, at, " " * template.start_mark.column + f"{key}: {value}\n"))
    for begin, stop, value in sorted(edits, reverse=True):
        block = block[:begin] + value + block[stop:]
    if not text.endswith("\n"):
        text += "\n"
    insert_at = offsets[_block_end(lines, versions.value[-1])] if versions.value else len(text)
    out = text[:insert_at] + block + text[insert_at:]
    if storage:
        old = _mapping_value(template, "storage")
        out = out[:old.start_mark.index] + "false" + out[old.end_mark.index:]
    return out


def _mapping_value(node: Any, key: str) -> Any:
    if not isinstance(node, yaml.MappingNode):
        raise KeyError(key)
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            return v
    raise KeyError(key)


def _scalar(node: Any) -> str:
    return str(node.value).lower() if isinstance(node, yaml.ScalarNode) else ""


def _block_end(lines: list[str], entry: Any) -> int:
    """The line after the last of a block-list entry (its following comment lines excluded)."""
    mark = entry.end_mark  # where the next token starts: the next entry's "-", or the end of a line
    end: int = mark.line if mark.line >= len(lines) or not lines[mark.line][:mark.column].strip() else mark.line + 1
    while end > entry.start_mark.line + 1 and not lines[end - 1].strip():
        end -= 1
    return end


def shadowed_builtin(resource: Resource) -> str | None:
    """A warning when ``resource``'s plural (or singular) is also a built-in resource's name or short name:
    ``kubectl get <plural>`` then means the built-in one (kubectl prefers the built-in groups), as
    kubebuilder's CronJob tutorial meets with batch/v1 cronjobs."""
    from samplecontroller.kubernetes.scheme import SCHEME as BUILTIN

    for info in sorted(BUILTIN.all(), key=lambda i: (i.group != "", i.group, i.version)):
        names = {info.resource, info.singular or info.kind.lower(), *info.short_names}
        clash = next((n for n in (resource.plural, resource.singular) if n in names), None)
        if clash is not None:
            where = f"{info.group or 'core'}/{info.version} {info.kind}"
            return (f"{clash!r} is also the built-in {where} ({info.resource}): `kubectl get {clash}` shows the "
                    f"built-in one; use `kubectl get {resource.plural}.{resource.group}`, or choose another --plural")
    return None


def _with_extra(root: Path, extra: str, who: str) -> str:
    """pyproject.toml with the toolkit dependency of ``[project] dependencies`` asking for ``extra``
    too (unchanged when it already does); ScaffoldError when no ``"samplecontroller>=...`` or
    ``"samplecontroller[...]>=...`` dependency is there to change (``who`` needs the extra)."""
    path = root / "pyproject.toml"
    text = path.read_text() if path.is_file() else ""
    start = text.find("\ndependencies = [")
    match = TOOLKIT_DEPENDENCY.search(text, start) if start >= 0 else None
    if match is None:
        raise ScaffoldError(f"{path}: no \"samplecontroller>=...\" in [project] dependencies to give the {extra} "
                            f"extra; {who} needs samplecontroller[{extra}] in the project's dependencies")
    extras = {e for e in (match.group(1) or "").split(",") if e}
    if extra in extras:
        return text
    return f'{text[:match.start()]}"samplecontroller[{",".join(sorted(extras | {extra}))}]>={text[match.end():]}'


def create_api(root: Path, *, group: str, version: str, kind: str, plural: str | None = None,
               namespaced: bool = True, style: str = "runtime", storage: bool = False) -> Resource:
    """Add a kind, or a version of one, to the project in ``root``; see the module docstring."""
    _extras.require("codegen", f"{PROG} create api")
    project = Project.load(root)
    check_layout(root, project, "create api ...")
    r = _resource(project, group, version, kind, plural, namespaced, style)
    if not r.controller:
        return _create_version(root, project, r, storage)
    if storage:
        raise ScaffoldError("--storage applies to a new version of a kind the project has; a new kind's only "
                            "version is its storage version")
    ctx: dict[str, Any] = {"r": _context(project, r), "example": True}
    crd = _render("crd.yaml.j2", project, **ctx)
    style_suffix = _STYLE_SUFFIX[style]
    new_files = {
        f"{CRD_DIR}/{r.crd_file}": crd,
        f"config/samples/{r.sample_file}": _render("sample.yaml.j2", project, **ctx),
        f"{project.package}/controllers/{r.module}.py": _render(f"controller_{style_suffix}.py.j2", project, **ctx),
        f"tests/test_{r.module}_controller.py": _render(f"test_controller_{style_suffix}.py.j2", project, **ctx),
        f"tests/test_{r.module}_integration.py": _render(
            "test_integration_async.py.j2" if style == "async" else "test_integration.py.j2", project, **ctx),
    }
    for rel in new_files:
        if (root / rel).exists():
            raise ScaffoldError(f"{root / rel} exists already; remove it or choose another kind")
    pyproject = _with_extra(root, "async", "an async controller") if style == "async" else None
    generated = _generate(root, project, (r.crd_file, crd))  # refuses a bad CRD before anything is written
    init_path = root / project.package / "controllers" / "__init__.py"
    project.resources.append(r)
    rewritten = {
        "config/rbac/role.yaml": _render("role.yaml.j2", project),
        "config/crd/kustomization.yaml": _render("crd_kustomization.yaml.j2", project),
        f"{project.package}/controllers/__init__.py": _controllers_init(
            project, init_path.read_text() if init_path.is_file() else None, init_path),
        PROJECT_FILE: project.dump(),
        **({"pyproject.toml": pyproject} if pyproject is not None else {}),
    }
    for rel, text in {**new_files, **rewritten}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    _write_generated(root, project, generated)
    return r


def _create_version(root: Path, project: Project, r: Resource, storage: bool) -> Resource:
    crd_path = root / CRD_DIR / r.crd_file
    if not crd_path.is_file():
        raise ScaffoldError(f"{crd_path} is missing: the CRD of {r.kind}.{r.group} is needed to add a version")
    crd = _crd_with_version(crd_path, r.version, storage)
    sample = f"config/samples/{r.sample_file}"
    if (root / sample).exists():
        raise ScaffoldError(f"{root / sample} exists already; remove it")
    generated = _generate(root, project, (r.crd_file, crd))
    project.resources.append(r)
    files = {f"{CRD_DIR}/{r.crd_file}": crd, sample: _render("sample.yaml.j2", project, r=_context(project, r),
                                                                   example=has_example_fields(crd, r.version)),
             PROJECT_FILE: project.dump()}
    for rel, text in files.items():
        (root / rel).write_text(text)
    _write_generated(root, project, generated)
    return r


# -- create webhook -------------------------------------------------------------------------------


def _webhook_resource(project: Project, group: str, version: str, kind: str, defaulting: bool, validation: bool,
                      conversion: bool, spokes: Sequence[str]) -> Resource:
    """The PROJECT entry of ``kind`` ``version`` with the webhooks asked for; ScaffoldError for a mistake."""
    full_group = group if "." in group else f"{group}.{project.domain}"
    found = next((r for r in project.resources if (r.group, r.version, r.kind) == (full_group, version, kind)), None)
    if found is None:
        raise ScaffoldError(f"{kind}.{full_group}/{version} is not in {PROJECT_FILE}: run `{PROG} create api --group "
                            f"{group} --version {version} --kind {kind}` first")
    if not (defaulting or validation or conversion):
        raise ScaffoldError("nothing to create: pass --defaulting, --programmatic-validation and/or --conversion")
    if spokes and not conversion:
        raise ScaffoldError("--spoke applies only with --conversion")
    for flag, asked, has in (("--defaulting", defaulting, found.defaulting),
                             ("--programmatic-validation", validation, found.validation)):
        if asked and has:
            raise ScaffoldError(f"{flag}: {kind}.{full_group}/{version} has that webhook already")
    if conversion:
        _check_spokes(project, found, spokes)
    return dataclasses.replace(found, defaulting=found.defaulting or defaulting,
                               validation=found.validation or validation, conversion=found.conversion or conversion,
                               spokes=tuple(spokes) if conversion else found.spokes)


def _check_spokes(project: Project, hub: Resource, spokes: Sequence[str]) -> None:
    where = f"{hub.kind}.{hub.group}"
    if any(r.conversion for r in project.versions(hub)):
        raise ScaffoldError(f"--conversion: {where} has a conversion webhook already")
    others = sorted(r.version for r in project.versions(hub) if r.version != hub.version)
    if not others:
        raise ScaffoldError(f"--conversion: {where} has one version; add another with `{PROG} create api --version ...` "
                            "first")
    unknown = sorted(set(spokes) - set(others))
    if hub.version in spokes:
        raise ScaffoldError(f"--spoke {hub.version}: that is the hub version (--version)")
    if unknown:
        raise ScaffoldError(f"--spoke {', '.join(unknown)}: not a version of {where} (its versions besides the hub: "
                            f"{', '.join(others)})")
    missing = sorted(set(others) - set(spokes))
    if missing:
        raise ScaffoldError(f"--conversion: every other version of {where} converts through the hub; add "
                            + " ".join(f"--spoke {v}" for v in missing))


def _webhook_files(root: Path, project: Project, r: Resource, defaulting: bool, validation: bool,
                   conversion: bool) -> dict[str, str]:
    """The new handler and test files: the example rules when the kind has the example fields, else
    stubs with TODOs that name no field (``has_example_fields``)."""
    crd_path = root / CRD_DIR / r.crd_file
    crd = crd_path.read_text() if crd_path.is_file() else ""
    ctx: dict[str, Any] = {"r": _context(project, r), "with_defaulting": r.defaulting, "with_validation": r.validation,
                           "example": has_example_fields(crd, r.version)}
    files = {}
    if defaulting or validation:
        if r.defaulting != defaulting or r.validation != validation:
            raise ScaffoldError(f"{project.package}/webhooks/{r.webhook_module}.py exists already; add --defaulting and "
                                "--programmatic-validation in one command")
        files[f"{project.package}/webhooks/{r.webhook_module}.py"] = _render("webhook.py.j2", project, **ctx)
        files[f"tests/test_{r.webhook_module}_webhook.py"] = _render("test_webhook.py.j2", project, **ctx)
    if conversion:
        ctx["example"] = all(has_example_fields(crd, v, status=True) for v in (r.version, *r.spokes))
        ctx["spokes"] = [{**_context(project, next(o for o in project.versions(r) if o.version == v)),
                          "conversion_class": f"{r.kind}{v.capitalize()}Conversion"} for v in r.spokes]
        files[f"{project.package}/webhooks/{r.conversion_module}.py"] = _render("conversion.py.j2", project, **ctx)
        files[f"tests/test_{r.conversion_module}.py"] = _render("test_conversion.py.j2", project, **ctx)
        files[f"config/crd/patches/webhook_in_{r.plural}.yaml"] = _render("crd_webhook_patch.yaml.j2", project, **ctx)
        files[f"config/crd/patches/cainjection_in_{r.plural}.yaml"] = _render(
            "crd_cainjection_patch.yaml.j2", project, **ctx)
    return files


def _with_webhooks_ini(path: Path, text: str) -> str:
    """pyproject.toml's ``text`` with the ``samplecontroller_webhooks`` option after ``samplecontroller_crds``
    (unchanged when it has it already)."""
    if WEBHOOKS_INI in text:
        return text
    anchor = re.search(r"^samplecontroller_crds\s*=.*$", text, re.MULTILINE)
    if anchor is None:
        raise ScaffoldError(f"{path}: no samplecontroller_crds line in [tool.pytest.ini_options]; add "
                            f"{WEBHOOKS_INI} = {list(WEBHOOK_DIRS)} there by hand")
    line = f"{WEBHOOKS_INI} = [{', '.join(json.dumps(d) for d in WEBHOOK_DIRS)}]"
    return text[:anchor.end()] + "\n" + line + text[anchor.end():]


def create_webhook(root: Path, *, group: str, version: str, kind: str, defaulting: bool = False,
                   validation: bool = False, conversion: bool = False, spokes: Sequence[str] = ()) -> Resource:
    """Add webhooks for a kind's version to the project in ``root``; see the module docstring."""
    _extras.require("codegen", f"{PROG} create webhook")
    project = Project.load(root)
    check_layout(root, project, "create webhook ...")
    _check_webhooks_served(root, project)
    r = _webhook_resource(project, group, version, kind, defaulting, validation, conversion, spokes)
    init_path = root / project.package / "webhooks" / "__init__.py"
    project.resources = [r if (o.group, o.version, o.kind) == (r.group, r.version, r.kind) else o
                         for o in project.resources]
    new_files = _webhook_files(root, project, r, defaulting, validation, conversion)
    for rel in new_files:
        if (root / rel).exists():
            raise ScaffoldError(f"{root / rel} exists already; remove it first")
    if not (root / "tests" / "conftest.py").exists():
        new_files["tests/conftest.py"] = _render("conftest.py.j2", project)
    pyproject = _with_webhooks_ini(root / "pyproject.toml", _with_extra(root, "webhook", "an operator with webhooks"))
    rewritten = {
        f"{project.package}/webhooks/__init__.py": _webhooks_init(
            project, init_path.read_text() if init_path.is_file() else None, init_path),
        "config/webhook/manifests.yaml": _render("webhook_manifests.yaml.j2", project),
        "config/webhook/service.yaml": _render("webhook_service.yaml.j2", project),
        "config/webhook/kustomization.yaml": _render("webhook_kustomization.yaml.j2", project),
        "config/certmanager/issuer.yaml": _render("certmanager_issuer.yaml.j2", project),
        "config/certmanager/certificate.yaml": _render("certmanager_certificate.yaml.j2", project),
        "config/certmanager/kustomization.yaml": _render("certmanager_kustomization.yaml.j2", project),
        "config/manager_webhook_patch.yaml": _render("manager_webhook_patch.yaml.j2", project),
        "config/kustomization.yaml": _render("config_kustomization.yaml.j2", project),
        "config/crd/kustomization.yaml": _render("crd_kustomization.yaml.j2", project),
        PROJECT_FILE: project.dump(),
        "pyproject.toml": pyproject,
    }
    for rel, text in {**new_files, **rewritten}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return r


# -- upgrade --------------------------------------------------------------------------------------

UPGRADED_FILES = ("Makefile", "hack/update_codegen.py")
"""The scaffold's own files ``upgrade`` merges: the user's edits (against the scaffold their layout
wrote) onto the current template's output (kubebuilder ``alpha update``'s three-way merge)."""
LAYOUT_TEMPLATES = {
    FIRST_LAYOUT: {"Makefile": "v1/Makefile.j2", "hack/update_codegen.py": "v1/update_codegen.py.j2"},
}
"""The templates an older layout wrote ``UPGRADED_FILES`` from (0.1.0's, kept as package data), the
merge base of ``upgrade``; a layout not named here wrote them from the current templates. A release
that changes one of these templates keeps the previous ones here under a new layout."""
CONFLICT_MARKERS = re.compile(r"^(<{7}|>{7})( |$)", re.MULTILINE)


class UpgradeConflict(ScaffoldError):
    """``upgrade`` finished, but the user's edits of ``conflicted`` collided with the new scaffold: the
    files hold standard conflict markers. ``changed`` is everything the upgrade changed."""

    def __init__(self, changed: list[str], conflicted: list[str]) -> None:
        self.changed, self.conflicted = changed, conflicted
        super().__init__(
            f"upgraded, but your edits collided with the new scaffold in {', '.join(conflicted)}: resolve the "
            "conflict markers there (<<<<<<< yours, ======= , >>>>>>> the new scaffold; keep what each side "
            "needs and delete the markers), then run make manifests and make test")


def _merge(rel: str, yours: str, base: str, new: str, version: str) -> tuple[str, bool]:
    """The three-way merge of the user's ``yours`` and the scaffold's ``new`` from their common ``base``
    (``git merge-file``); the text and whether it conflicted (then with standard markers)."""
    if yours in (base, new):
        return new, False
    if base == new:
        return yours, False
    import subprocess

    git = shutil.which("git")
    if git is None:
        raise ScaffoldError(f"{rel} was edited since the scaffold wrote it, and merging the edits into the new "
                            "scaffold needs git (git merge-file), which is not on PATH; install git and run "
                            f"`{PROG} upgrade` again. Nothing was changed")
    with tempfile.TemporaryDirectory(prefix="upgrade-merge-") as tmp:
        paths = [Path(tmp) / name for name in ("yours", "base", "new")]
        for path, text in zip(paths, (yours, base, new), strict=True):
            path.write_text(text)
        done = subprocess.run([git, "merge-file", "-p", "-L", f"{rel} (yours)", "-L", f"{rel} (the old scaffold)",
                               "-L", f"{rel} (samplecontroller {version})", *map(str, paths)],
                              capture_output=True, text=True, check=False)
    if done.returncode < 0 or done.returncode > 127:
        raise ScaffoldError(f"git merge-file failed on {rel} (exit {done.returncode}): {done.stderr.strip()}; "
                            "nothing was changed")
    return done.stdout, done.returncode > 0


def _scaffold_files(root: Path, old: Project, new: Project) -> tuple[dict[str, str], list[str]]:
    """``UPGRADED_FILES`` for ``new``: the user's edits merged into the current templates' output (a
    missing one is written afresh); and the files that conflicted."""
    templates = {rel: template for rel, template in INIT_FILES.items() if rel in UPGRADED_FILES}
    old_templates = LAYOUT_TEMPLATES.get(old.layout, templates)
    files, conflicted = {}, []
    for rel, template in templates.items():
        path = root / rel
        if not path.is_file():
            files[rel] = _render(template, new)
            continue
        yours = path.read_text()
        if CONFLICT_MARKERS.search(yours):
            raise ScaffoldError(f"{rel} holds conflict markers (<<<<<<< or >>>>>>> lines) from an earlier "
                                f"upgrade: resolve them, then run `{PROG} upgrade` again. Nothing was changed")
        text, conflict = _merge(rel, yours, _render(old_templates[rel], old), _render(template, new), __version__)
        files[rel] = text
        if conflict:
            conflicted.append(rel)
    return files, conflicted


_PINNED_TOOLKIT = re.compile(r'("samplecontroller(?:\[[a-z,]*\])?>=)([0-9][^",;\s]*)')


def _gitignore(existing: str, project: Project) -> str:
    """``.gitignore`` with the current template's lines that it lacks appended (the user's kept)."""
    have = {line.strip() for line in existing.splitlines()}
    missing = [line for line in _render("gitignore.j2", project).splitlines() if line.strip() not in have]
    if not missing:
        return existing
    lead = "" if not existing or existing.endswith("\n") else "\n"
    return existing + lead + "# added by samplecontroller upgrade\n" + "".join(f"{line}\n" for line in missing)


def _main_module(existing: str, project: Project) -> str:
    """``__main__.py``: the current template's when it does not serve the webhooks (a layout before
    0.1.0 wrote it so), else the user's as it is."""
    if "webhooks.setup(mgr)" in existing and "webhooks=" in existing:
        return existing
    return _render("main.py.j2", project)


def upgrade(root: Path, toolkit: Toolkit | None = None) -> list[str]:
    """Bring the project in ``root`` to this toolkit's layout and version (kubebuilder's ``alpha update``);
    the relative paths of the files changed, sorted. Merges the user's edits of the scaffold's own files
    (``UPGRADED_FILES``) into the current templates' output (a three-way merge against what the
    project's layout wrote, ``LAYOUT_TEMPLATES``; edits that collide leave conflict markers and raise
    ``UpgradeConflict`` once everything else is done), adds missing ``.gitignore`` lines, rewires ``__main__.py`` when it does not
    serve the webhooks, raises the ``samplecontroller>=`` requirements of pyproject.toml to this
    version, puts the toolkit's wheel into ``.toolkit/``, regenerates the generated package and
    records the layout and toolkit in PROJECT. Controllers, webhooks, tests, CRDs and samples are the
    user's: never touched. Everything is computed (and the CRDs generated) before anything is written."""
    _extras.require("codegen", f"{PROG} upgrade")
    project = Project.load(root)
    if _layout_number(project.layout) > _layout_number(LAYOUT):
        check_layout(root, project, "upgrade")
    old = dataclasses.replace(project)
    old_description = Toolkit(project.toolkit.kind, project.toolkit_path, project.toolkit.version).describe()
    recorded, wheel = _project_toolkit(root, toolkit or current())
    project.toolkit, project.layout = recorded, LAYOUT
    generated = _generate(root, project)
    files, conflicted = _scaffold_files(root, old, project)
    ignore = root / ".gitignore"
    files[".gitignore"] = _gitignore(ignore.read_text() if ignore.is_file() else "", project)
    main_rel = f"{project.package}/__main__.py"
    if (root / main_rel).is_file():
        files[main_rel] = _main_module((root / main_rel).read_text(), project)
    readme = root / "README.md"
    if readme.is_file():  # the sentence saying where the toolkit comes from (the rest is the user's)
        files["README.md"] = readme.read_text().replace(old_description, Toolkit(
            recorded.kind, project.toolkit_path, recorded.version).describe())
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() and recorded.version and recorded.version[:1].isdigit():
        from samplecontroller.codegen.compat import release

        files["pyproject.toml"] = _PINNED_TOOLKIT.sub(  # raised, never lowered
            lambda m: m.group(1) + max(m.group(2), recorded.version, key=release), pyproject.read_text())
    files[PROJECT_FILE] = project.dump()
    out = root / project.package / "generated"
    from samplecontroller.codegen.errors import CodegenError
    from samplecontroller.codegen.generator import check_output_dir, diff_trees, write_tree

    try:
        check_output_dir(out)
    except CodegenError as err:
        raise ScaffoldError(str(err)) from None
    with tempfile.TemporaryDirectory(prefix="upgrade-") as tmp:
        write_tree(generated, Path(tmp))
        stale = diff_trees(Path(tmp), out)
    changed = []
    for rel, text in files.items():
        path = root / rel
        if path.is_file() and path.read_text() == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        changed.append(rel)
    if (root / GENERATOR).is_file():
        (root / GENERATOR).chmod(0o755)
    if wheel is not None and wheel.is_file():
        kept = root / TOOLKIT_DIR / wheel.name
        others = [p for p in (root / TOOLKIT_DIR).glob("samplecontroller-*.whl") if p.name != wheel.name]
        if others or not kept.is_file() or kept.read_bytes() != wheel.read_bytes():
            _copy_toolkit(root, wheel, recorded)
            changed.append(f"{TOOLKIT_DIR}/{wheel.name}")
    if stale:
        _write_generated(root, project, generated)
        changed.append(f"{project.package}/generated/ ({len(stale)} files)")
    if conflicted:
        raise UpgradeConflict(sorted(changed), conflicted)
    return sorted(changed)


# -- the command line -----------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, exit 2 (argparse's default adds the usage)
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = _Parser(prog=PROG, description="Scaffold Kubernetes operator projects built on samplecontroller.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p_init = commands.add_parser("init", help="make a new operator project in DIR")
    p_init.add_argument("directory", type=Path, metavar="DIR", help="where (absent or empty)")
    p_init.add_argument("--domain", required=True, help="the domain of the project's API groups (example.com)")
    p_init.add_argument("--package", required=True, help="the Python package of the project (myoperator)")
    p_init.add_argument("--project-name", default=None,
                        help="the project's name (default DIR's name): the distribution, namespace and image name")
    p_create = commands.add_parser("create", help="add to the project in the current directory")
    things = p_create.add_subparsers(dest="thing", required=True, parser_class=_Parser)
    p_api = things.add_parser("api", help="a new kind: CRD, sample, controller, tests, RBAC, generated code")
    p_api.add_argument("--group", required=True, help="the API group: ops (ops.<domain>) or a full ops.example.com")
    p_api.add_argument("--version", required=True, help="the API version (v1, v1alpha1, ...)")
    p_api.add_argument("--kind", required=True, help="the kind, CamelCase (Backup)")
    p_api.add_argument("--plural", default=None, help="the resource name (default: the kind's English plural)")
    scope = p_api.add_mutually_exclusive_group()
    scope.add_argument("--namespaced", dest="namespaced", action="store_true", default=True,
                       help="objects live in namespaces (the default)")
    scope.add_argument("--cluster", dest="namespaced", action="store_false", help="cluster-scoped objects")
    p_api.add_argument("--style", choices=STYLES, default="runtime",
                       help="runtime (controller-runtime Reconciler; the default), async (the same with an "
                            "async def reconcile: tasks on one event loop) or client-go (informer, work queue "
                            "and workers)")
    p_api.add_argument("--storage", action="store_true",
                       help="for a new version of a kind the project has: make it the storage version")
    commands.add_parser("upgrade", help="bring the project in the current directory to this toolkit's layout and "
                        "version (keeps your code)")
    p_hook = things.add_parser("webhook", help="defaulting, validating and conversion webhooks for a kind's version")
    p_hook.add_argument("--group", required=True, help="the kind's API group (as given to create api)")
    p_hook.add_argument("--version", required=True, help="the version the webhooks are for (with --conversion: the hub)")
    p_hook.add_argument("--kind", required=True, help="the kind")
    p_hook.add_argument("--defaulting", action="store_true", help="a mutating webhook setting defaults")
    p_hook.add_argument("--programmatic-validation", dest="validation", action="store_true",
                        help="a validating webhook on create and update (add DELETE to its operations in "
                        "config/webhook/manifests.yaml for validate_delete to be called)")
    p_hook.add_argument("--conversion", action="store_true",
                        help="a conversion webhook: --version is the hub, each --spoke converts through it")
    p_hook.add_argument("--spoke", dest="spokes", action="append", default=[], metavar="VERSION",
                        help="a version converting to and from the hub (repeat for each other version)")
    return parser.parse_args(argv)


def _write_manifests(root: Path) -> bool:
    """Run the upgraded project's ``make manifests`` (its RBAC and webhook manifests come from its code
    since layout v2, and ``make test`` checks them); False, having said why and what to run, when it
    fails."""
    import shutil
    import subprocess

    make = shutil.which("make")
    if make is None:
        print(f"{PROG}: error: upgraded, but `make` is not on PATH: run `make manifests` in the project, "
              "then make test", file=sys.stderr)
        return False
    print("Writing config/rbac and config/webhook from the code: make manifests", flush=True)
    done = subprocess.run([make, "manifests"], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        tail = "\n".join(done.stdout.splitlines()[-15:])
        print(f"{tail}\n{PROG}: error: upgraded, but `make manifests` failed (exit {done.returncode}): fix what it "
              "says and run `make manifests`, then make test", file=sys.stderr)
        return False
    return True


ROLE_FILE = "config/rbac/role.yaml"


def _grants(text: str) -> set[tuple[str, str, str, str, str]]:
    """What the roles of a role file grant, one ``(namespace, apiGroup, resource or URL, resourceName,
    verb)`` per permission ("" for none; a role file that does not parse grants nothing)."""
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return set()
    out: set[tuple[str, str, str, str, str]] = set()
    for doc in docs:
        if not isinstance(doc, dict) or doc.get("kind") not in ("ClusterRole", "Role"):
            continue
        namespace = str((doc.get("metadata") or {}).get("namespace") or "")
        for rule in doc.get("rules") or ():
            if not isinstance(rule, dict):
                continue
            verbs = [str(v) for v in rule.get("verbs") or ()]
            out.update((namespace, "", f"url:{url}", "", verb) for url in rule.get("nonResourceURLs") or ()
                       for verb in verbs)
            out.update((namespace, str(group), str(resource), str(name), verb)
                       for group in rule.get("apiGroups") or () for resource in rule.get("resources") or ()
                       for name in rule.get("resourceNames") or ("",) for verb in verbs)
    return out


def lost_grants(before: str, after: str) -> list[str]:
    """The ``rbac.rule(...)`` declarations that would grant again what the role file ``before`` granted and
    ``after`` does not (a wildcard or a rule without resource names in ``after`` covers one)."""
    now = _grants(after)

    def covered(grant: tuple[str, str, str, str, str]) -> bool:
        return any(all(h == w or h == "*" or (i == 3 and h == "") for i, (h, w) in enumerate(zip(held, grant, strict=True)))
                   for held in now)

    lost: dict[tuple[str, str, str, str], list[str]] = {}
    for namespace, group, resource, name, verb in sorted(_grants(before)):
        if not covered((namespace, group, resource, name, verb)):
            lost.setdefault((namespace, group, resource, name), []).append(verb)
    rules = []
    for (namespace, group, resource, name), verbs in lost.items():
        what = (f'urls="{resource[4:]}"' if resource.startswith("url:")
                else f'groups="{group or "core"}", resources="{resource}"')
        extra = (f', resource_names="{name}"' if name else "") + (f', namespace="{namespace}"' if namespace else "")
        rules.append(f'rbac.rule({what}, verbs="{";".join(verbs)}"{extra})')
    return rules


UPGRADED_RBAC = "upgraded_rbac.py"


def _keep_grants(root: Path, before: Project, rules: list[str]) -> str:
    """Write ``<package>/upgraded_rbac.py`` declaring ``rules`` (what the role of the release that made the
    project granted and the code does not declare; ``make manifests`` imports every module of the
    package); its path relative to ``root``."""
    rel = f"{before.package}/{UPGRADED_RBAC}"
    path = root / rel
    if path.exists():
        raise ScaffoldError(f"{rel} exists: declare its rules beside the code that needs them and delete it, "
                            "then run make manifests")
    path.write_text(
        f'"""Permissions the role of samplecontroller {before.toolkit.version} granted ({ROLE_FILE}, written from '
        "PROJECT) that\nthis project's code does not declare. Written by `samplecontroller upgrade`: `make "
        "manifests` writes the\nrole from the code's rbac.rule declarations and what the Manager shows. Move each "
        'beside the code\nthat makes the requests, then delete this file."""\n\n'
        "from __future__ import annotations\n\nfrom samplecontroller.runtime import rbac\n\n"
        + "".join(f"{rule}\n" for rule in rules))
    return rel


def main(argv: Sequence[str] | None = None, *, cwd: Path | None = None) -> int:
    """The command line: 0 done, 1 a user mistake (one line), 2 a bad command line."""
    args = parse_args(argv)
    root = cwd or Path.cwd()
    try:
        if args.command == "init":
            directory = root / args.directory
            source = current()
            project = init(directory, domain=args.domain, package=args.package, project_name=args.project_name,
                           toolkit=source)
            if project.toolkit.kind == "wheel" and not Path(project.toolkit.location).is_file():
                print(f"{PROG}: warning: the toolkit's wheel was not found; put samplecontroller's wheel at "
                      f"{project.toolkit_path} in the project", file=sys.stderr)
            built = f", built from the checkout {source.location}" if source.kind == "directory" else ""
            print(f"Scaffolded {project.project} in {directory} (toolkit: {project.toolkit.describe()}{built}).\n"
                  f"Next: cd {args.directory} && {PROG} create api --group GROUP --version v1 --kind KIND"
                  f"; then make test, make run")
        elif args.command == "upgrade":
            before = Project.load(root)
            role = root / ROLE_FILE
            old_role = role.read_text() if role.is_file() else ""
            try:
                changed = upgrade(root)
            except UpgradeConflict as err:
                print(f"Upgraded {before.project} from layout {before.layout} (samplecontroller "
                      f"{before.toolkit.version}) to {LAYOUT} ({__version__}). Changed: {', '.join(err.changed)}.")
                print(f"{PROG}: error: {err}", file=sys.stderr)
                return 1
            if not changed:
                print(f"{before.project} is up to date: layout {LAYOUT}, samplecontroller {__version__}")
            else:
                print(f"Upgraded {before.project} from layout {before.layout} (samplecontroller {before.toolkit.version}) "
                      f"to {LAYOUT} ({__version__}). Changed: {', '.join(changed)}.\n"
                      "Your controllers, webhooks, tests and CRDs are unchanged; your edits of the Makefile and "
                      "hack/update_codegen.py are merged into the new scaffold's.")
                if not _write_manifests(root):
                    return 1
                lost = lost_grants(old_role, role.read_text() if role.is_file() else "")
                if lost:  # the role came from PROJECT before layout v2, from the code now: keep what it granted
                    kept = _keep_grants(root, before, lost)
                    if not _write_manifests(root):
                        return 1
                    still = lost_grants(old_role, role.read_text() if role.is_file() else "")
                    if still:
                        print(f"{PROG}: error: upgraded, but {ROLE_FILE} no longer grants what the role of "
                              f"samplecontroller {before.toolkit.version} did, and {kept} did not bring it back: add, "
                              "beside the code that makes these requests (from samplecontroller.runtime import "
                              "rbac):\n" + "".join(f"    {rule}\n" for rule in still)
                              + "then make manifests and make test", file=sys.stderr)
                        return 1
                    print(f"Kept what {ROLE_FILE} granted and your code does not declare (make manifests writes "
                          f"the role from the code now) in {kept}:\n" + "".join(f"    {rule}\n" for rule in lost)
                          + "Move each beside the code that makes the requests.")
                print("Next: make test (the CHANGELOG says what else changed)")
        elif args.thing == "webhook":
            r = create_webhook(root, group=args.group, version=args.version, kind=args.kind,
                               defaulting=args.defaulting, validation=args.validation, conversion=args.conversion,
                               spokes=args.spokes)
            print(f"Created webhooks for {r.kind} ({r.group}/{r.version}) in webhooks/, their tests and "
                  "config/webhook, config/certmanager manifests.\n"
                  "Next: edit the handlers; make test; make run (the webhooks are served on the embedded API server)")
        else:
            r = create_api(root, group=args.group, version=args.version, kind=args.kind, plural=args.plural,
                           namespaced=args.namespaced, style=args.style, storage=args.storage)
            if r.controller:
                warning = shadowed_builtin(r)
                if warning:
                    print(f"{PROG}: warning: {warning}", file=sys.stderr)
                print(f"Created {r.kind} ({r.plural}.{r.group}/{r.version}, {args.style} style): "
                      f"{CRD_DIR}/{r.crd_file}, controllers/{r.module}.py, tests; generated code updated.\n"
                      f"Next: make test; make run, then kubectl apply -f config/samples/")
            else:
                print(f"Added version {r.version} to {r.kind} ({CRD_DIR}/{r.crd_file}, a sample); generated code "
                      f"updated.\nNext: change its schema, make codegen, then `{PROG} create webhook --conversion` "
                      "for the kind's hub version")
    except (ScaffoldError, _extras.MissingExtraError) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 1
    return 0


def cli() -> None:
    """The ``samplecontroller`` console script."""
    sys.exit(main())
