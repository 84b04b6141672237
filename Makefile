# make run  : set up .venv if needed, then run the controller on the embedded API server
#             (on https://127.0.0.1:$(PORT), default 6443; PORT=0 picks a free port)
# make test : set up .venv if needed, then ruff, mypy, the staleness checks (generated/, the vendored
#             OpenAPI definitions) and pytest
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PORT   ?= 6443

.PHONY: run test venv lint typecheck verify verify-codegen verify-schemas codegen schemas pytest bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(PY) main.py --local --port $(PORT)

test: $(STAMP) lint typecheck verify pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy

verify: verify-codegen verify-schemas

verify-codegen: $(STAMP)
	$(PY) hack/update_codegen.py --verify

# the vendored upstream OpenAPI definitions against the pinned kubernetes-validate
verify-schemas: $(STAMP)
	$(PY) hack/update_openapi_schemas.py --verify

schemas: $(STAMP)
	$(PY) hack/update_openapi_schemas.py

codegen: $(STAMP)
	$(PY) hack/update_codegen.py

pytest: $(STAMP)
	$(PY) -m pytest -n 2 --dist loadfile -q

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) .local .mypy_cache .pytest_cache .ruff_cache
