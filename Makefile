# Two commands do everything on a fresh clone: `make generate` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: generate check test interop update-schema bench bench-gen bench-rpc clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

generate: $(STAMP)
	$(PY) -m generator generate

check: $(STAMP)
	$(PY) -m generator check

test: $(STAMP)
	$(PY) -m generator check
	$(PY) -m pytest -n auto

# acp_v2 against the official TypeScript SDK (node + npm; the SDK goes to interop/node_modules).
interop: $(STAMP)
	@command -v node >/dev/null || { echo "make interop: skipped, node is not installed"; exit 0; }
	cd interop && npm install --silent --no-audit --no-fund
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

clean:
	rm -rf $(VENV) .cache
