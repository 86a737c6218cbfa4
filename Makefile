# Two commands do everything on a fresh clone: `make generate` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
LINT_STEPS := lint-ruff lint-format lint-mypy lint-mypy-generated
# Parallel steps print their output whole when they end (GNU make 4+; 3.81 interleaves lines).
PARALLEL := -j $(if $(filter 3.%,$(MAKE_VERSION)),,--output-sync=target)

.PHONY: generate check lint $(LINT_STEPS) docs test interop update-schema bench bench-gen bench-rpc bench-import clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

generate: $(STAMP)
	$(PY) -m generator generate

check: $(STAMP)
	$(PY) -m generator check

# Style and types of the generator, tests and benchmarks, and types of the generated package.
# (The samples of the README and docs/ are type-checked by tests/test_docs.py.) The steps are independent:
# they run in parallel.
lint: $(STAMP)
	@$(MAKE) --no-print-directory $(PARALLEL) $(LINT_STEPS)

lint-ruff: $(STAMP)
	$(PY) -m ruff check generator tests bench

lint-format: $(STAMP)
	$(PY) -m ruff format --check generator tests bench

lint-mypy: $(STAMP)
	$(PY) -m mypy --strict generator

lint-mypy-generated: $(STAMP)
	cd generated && ../$(PY) -m mypy --strict --cache-dir ../.cache/mypy-generated acp_v2 acp_v1

# The documentation site (mkdocs.yml): the guides in docs/ and the generated package's API reference;
# --strict turns a broken link or a missing include into a failure.
docs: $(STAMP)
	$(PY) -m mkdocs build --strict --quiet

# The drift check, the lint steps and the docs build in parallel, then the whole suite
# (pytest-xdist, a worker per core).
test: $(STAMP)
	@$(MAKE) --no-print-directory $(PARALLEL) check $(LINT_STEPS) docs
	$(PY) -m pytest -n auto

# acp_v2 against the official TypeScript SDK (node + npm; the SDK goes to interop/node_modules) and the
# example agent's v1 route against the Python SDK's v1 client (pip --target .cache/peers).
interop: $(STAMP)
	@command -v node >/dev/null || { echo "make interop: skipped, node is not installed"; exit 0; }
	cd interop && npm install --silent --no-audit --no-fund
	test -d .cache/peers/acp || $(PY) -m pip install --quiet --disable-pip-version-check --target .cache/peers 'agent-client-protocol==0.12.1'
	$(PY) -m pytest tests/test_interop.py -v

update-schema: $(STAMP)
	@test -n "$(VERSION)" || { echo "usage: make update-schema VERSION=2.4.0"; exit 2; }
	$(PY) -m generator update-schema $(VERSION)

bench: $(STAMP)
	$(PY) bench/codec.py

bench-gen: $(STAMP)
	$(PY) bench/generate.py

bench-rpc: $(STAMP)
	$(PY) bench/rpc.py

bench-import: $(STAMP)
	$(PY) bench/imports.py

clean:
	rm -rf $(VENV) .cache
