# Two commands do everything on a fresh clone: `make generate` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: generate check test update-schema bench bench-gen clean

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
	$(PY) -m pytest

update-schema: $(STAMP)
	@test -n "$(VERSION)" || { echo "usage: make update-schema VERSION=2.4.0"; exit 2; }
	$(PY) -m generator update-schema $(VERSION)

bench: $(STAMP)
	$(PY) bench/codec.py

bench-gen: $(STAMP)
	$(PY) bench/generate.py

clean:
	rm -rf $(VENV) .cache
