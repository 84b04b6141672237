"""``samplecontroller init`` and ``samplecontroller create api``: new operator projects (kubebuilder's).

    samplecontroller init DIR --domain example.com --package NAME [--project-name NAME]
    samplecontroller create api --group G --version V --kind K [--plural P] [--namespaced|--cluster]
                                [--style runtime|async|client-go]

``init`` writes a project (pyproject, Makefile with ``make run``/``make test``, README, PROJECT,
``hack/update_codegen.py``, ``config/`` kustomize manifests, Dockerfile, the package with its
``__main__`` and ``controllers``, tests) and generates ``NAME/generated``. It records where this
toolkit was installed from (``toolkit.current()``: a wheel, a checkout or the index) in PROJECT
and the Makefile's ``TOOLKIT``, so the project installs the same one.

``create api`` (run in the project's directory) adds a kind: its CRD in ``config/crd/bases``
(``G.<domain>`` unless G has a dot; spec, a status subresource with ``observedGeneration`` and
``conditions``, printer columns Ready and Age), a sample in ``config/samples``, a controller in
the chosen style with unit and integration tests; it rewrites ``config/rbac/role.yaml``,
``config/crd/kustomization.yaml`` and the marked regions of ``controllers/__init__.py`` from
PROJECT, and regenerates the package. Everything is checked (names, the generator's checks on
the new CRD, files that would be overwritten) before anything is written.

Templates are package data (``samplecontroller/scaffold/templates``). Needs the ``codegen``
extra. A user mistake is one line ``samplecontroller: error: ...`` and exit status 1 (a bad
command line: exit 2).
"""

from __future__ import annotations

import argparse
import keyword
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
from samplecontroller.scaffold.toolkit import Toolkit, current

__all__ = ["PROG", "Project", "Resource", "ScaffoldError", "cli", "create_api", "init", "main"]

PROG = "samplecontroller"
PROJECT_FILE = "PROJECT"
CRD_DIR = Path("config") / "crd" / "bases"
GENERATOR = "hack/update_codegen.py"
STYLES = ("runtime", "async", "client-go")
_STYLE_SUFFIX = {"runtime": "runtime", "async": "async", "client-go": "clientgo"}
ASYNC_DEPENDENCY = ('"samplecontroller>=', '"samplecontroller[async]>=')
"""``create api --style async`` turns pyproject.toml's toolkit dependency into one with the
``async`` extra (the async client's aiohttp)."""
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
RESERVED_MODULES = {"annotations", "argparse", "setup"}
MARKER = "# +samplecontroller:scaffold:{region}:{edge}"


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

    @property
    def namespace(self) -> str:
        """The namespace the operator is deployed to."""
        return f"{self.project}-system"

    def dump(self) -> str:
        doc = {"version": "1", "projectName": self.project, "domain": self.domain, "package": self.package,
               "toolkit": asdict(self.toolkit), "resources": [asdict(r) for r in self.resources]}
        return ("# Written by samplecontroller init and create api: the project's kinds and where the toolkit\n"
                "# comes from. Read by samplecontroller create api.\n" + yaml.safe_dump(doc, sort_keys=False))

    @classmethod
    def load(cls, root: Path) -> Project:
        path = root / PROJECT_FILE
        if not path.is_file():
            raise ScaffoldError(f"no {PROJECT_FILE} file in {root}: run this in a project made by `{PROG} init`")
        try:
            doc = yaml.safe_load(path.read_text())
            return cls(project=str(doc["projectName"]), domain=str(doc["domain"]), package=str(doc["package"]),
                       toolkit=Toolkit(**doc["toolkit"]),
                       resources=[Resource(**r) for r in doc.get("resources") or []])
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
    return env


def _render(template: str, project: Project, **extra: Any) -> str:
    return str(_environment().get_template(template).render(
        project=project.project, domain=project.domain, package=project.package, toolkit=project.toolkit,
        namespace=project.namespace, resources=project.resources, **extra))


def _controllers_regions(project: Project) -> dict[str, str]:
    """The marked regions of controllers/__init__.py: the imports and the setup calls."""
    modules = sorted(r.module for r in project.resources)
    line = f"from {project.package}.controllers import {', '.join(modules)}"
    if not modules:
        imports = ""
    elif len(line) <= 120:
        imports = line + "\n\n"
    else:
        imports = (f"from {project.package}.controllers import (\n"
                   + "".join(f"    {m},\n" for m in modules) + ")\n\n")
    setups = "".join(f"    {r.module}.setup(mgr, args)\n" for r in sorted(project.resources, key=lambda r: r.module))
    return {"imports": imports, "setup": setups}


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
    project = Project(project=name, domain=domain, package=package, toolkit=toolkit or current())
    generated = _generate(directory, project)
    files = {path.format(package=package): _render(template, project) for path, template in INIT_FILES.items()}
    files[f"{package}/controllers/__init__.py"] = _controllers_init(project, None, directory)
    files[f"{package}/py.typed"] = ""
    files[f"{CRD_DIR}/.gitkeep"] = ""
    files["config/samples/.gitkeep"] = ""
    files[PROJECT_FILE] = project.dump()
    for rel, text in files.items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (directory / "hack" / "update_codegen.py").chmod(0o755)
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
        if other.group == resource.group and (other.kind == kind or other.plural == resource.plural):
            raise ScaffoldError(f"{other.kind} ({other.plural}.{other.group}/{other.version}) exists already; "
                                "more versions of one kind are not scaffolded")
        if other.module == resource.module:
            raise ScaffoldError(f"the controller module {resource.module}.py exists already (for "
                                f"{other.kind}.{other.group}); choose another kind name")
    return resource


def _with_async_extra(root: Path) -> str:
    """pyproject.toml with the toolkit dependency asking for the ``async`` extra (unchanged when it
    already does); ScaffoldError when no ``"samplecontroller>=...`` dependency is there to change."""
    path = root / "pyproject.toml"
    text = path.read_text() if path.is_file() else ""
    plain, extra = ASYNC_DEPENDENCY
    if extra in text:
        return text
    if plain not in text:
        raise ScaffoldError(f"{path}: no {plain}...\" dependency to give the async extra; an async controller "
                            "needs samplecontroller[async] in the project's dependencies")
    return text.replace(plain, extra, 1)


def create_api(root: Path, *, group: str, version: str, kind: str, plural: str | None = None,
               namespaced: bool = True, style: str = "runtime") -> Resource:
    """Add a kind to the project in ``root``; see the module docstring."""
    _extras.require("codegen", f"{PROG} create api")
    project = Project.load(root)
    r = _resource(project, group, version, kind, plural, namespaced, style)
    models = f"{project.package}.generated.apis.{r.group_pkg}.{r.version}"
    ctx: dict[str, Any] = {"r": {**asdict(r), **{k: getattr(r, k) for k in (
        "singular", "module", "var", "group_pkg", "method", "clientset_attr", "crd_file")}, "models": models}}
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
    pyproject = _with_async_extra(root) if style == "async" else None
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


# -- the command line -----------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, exit 2 (argparse's default adds the usage)
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = _Parser(prog=PROG, description="Scaffold Kubernetes operator projects built on samplecontroller.")
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
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None, *, cwd: Path | None = None) -> int:
    """The command line: 0 done, 1 a user mistake (one line), 2 a bad command line."""
    args = parse_args(argv)
    root = cwd or Path.cwd()
    try:
        if args.command == "init":
            directory = root / args.directory
            project = init(directory, domain=args.domain, package=args.package, project_name=args.project_name)
            print(f"Scaffolded {project.project} in {directory} (toolkit: {project.toolkit.describe()}).\n"
                  f"Next: cd {args.directory} && {PROG} create api --group GROUP --version v1 --kind KIND"
                  f"; then make test, make run")
        else:
            r = create_api(root, group=args.group, version=args.version, kind=args.kind, plural=args.plural,
                           namespaced=args.namespaced, style=args.style)
            print(f"Created {r.kind} ({r.plural}.{r.group}/{r.version}, {args.style} style): "
                  f"{CRD_DIR}/{r.crd_file}, controllers/{r.module}.py, tests; generated code updated.\n"
                  f"Next: make test; make run, then kubectl apply -f config/samples/")
    except (ScaffoldError, _extras.MissingExtraError) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 1
    return 0


def cli() -> None:
    """The ``samplecontroller`` console script."""
    sys.exit(main())
