# Two commands do everything on a fresh clone: `make generate` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.installed-bench
LINT_STEPS := lint-ruff lint-format lint-mypy lint-mypy-generated
# Parallel steps print their output whole when they end (GNU make 4+; 3.81 interleaves lines).
PARALLEL := -j $(if $(filter 3.%,$(MAKE_VERSION)),,--output-sync=target)

.PHONY: generate check lint $(LINT_STEPS) docs test matrix peers haproxy interop update-schema bench bench-gen bench-rpc bench-import hooks clean

# The generator with what `make test` uses: the test tools and the docs site (pyproject.toml's extras).
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test,docs]'
	touch $(STAMP)

# What the benchmarks compare against, added for `make bench*` only.
$(BENCH_STAMP): $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test,docs,bench]'
	touch $(BENCH_STAMP)

generate: $(STAMP)
	$(PY) -m generator generate

check: $(STAMP)
	$(PY) -m generator check

# Style and types of the generator, tests, benchmarks, examples and interop peers, and types of the
# generated package with the examples and the interop peer that use it. (The samples of the README and
# docs/ are type-checked by tests/test_docs.py; the two Python-SDK peers of interop/ are not type-checked:
# the SDK, in .cache/peers, is not typed for --strict, and mypy refuses the typing_extensions it ships.)
# The steps are independent: they run in parallel.
lint: $(STAMP)
	@$(MAKE) --no-print-directory $(PARALLEL) $(LINT_STEPS)

lint-ruff: $(STAMP)
	$(PY) -m ruff check generator tests bench docs/hooks examples interop .ci

lint-format: $(STAMP)
	$(PY) -m ruff format --check generator tests bench docs/hooks examples interop .ci

# Of tests/, the shared code is checked: conftest.py and tests/support (its peer programs with the
# generated package, below). The test modules are not: they reach the generated packages through
# import_package (typed Any), so mypy would check little but the annotations pytest ignores.
lint-mypy: $(STAMP)
	$(PY) -m mypy --strict generator docs/hooks .ci/matrix.py tests/conftest.py tests/support/helpers.py \
		tests/support/strategies.py tests/support/hostile_lines.py tests/support/raw_proxy.py

lint-mypy-generated: $(STAMP)
	cd generated && MYPYPATH=../examples ../$(PY) -m mypy --strict --cache-dir ../.cache/mypy-generated \
		acp_v2 acp_v1 acp_runtime ../examples/*.py ../interop/ws_echo_agent.py ../tests/support/quiet_agent.py \
		../tests/support/hostile_agent.py ../tests/support/mcp_hostile_agent.py

# The documentation site (mkdocs.yml): the guides in docs/ and the generated package's API reference;
# --strict turns every warning (a broken link, a page left out of nav, a public name the reference
# lacks: docs/hooks/) into a failure. Not --quiet: it hides the warnings from --strict too.
# (NO_MKDOCS_2_WARNING silences mkdocs-material's banner about its own future, printed on every build.)
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

# The drift check, the lint steps, the docs build, the peers' and haproxy's install and the version
# matrix in parallel, then the whole suite (pytest-xdist, a worker per core), the live tests against
# the official SDKs and the load-balancer test included.
test: $(STAMP)
	@$(MAKE) --no-print-directory $(PARALLEL) check $(LINT_STEPS) docs peers haproxy matrix
	$(PY) -m pytest -n auto

# The generated packages' behaviour tests on every other Python version they admit that this
# machine has (.ci/matrix.py: a virtual environment per version, .venv-X.Y; a version the machine
# lacks is reported). `make matrix VERSIONS="3.13"` runs those alone.
matrix: $(STAMP)
	$(PY) .ci/matrix.py $(VERSIONS)

# The official SDKs tests/test_interop.py runs against, in git-ignored folders: the TypeScript SDK
# and acpx (tests/test_interop_acpx.py), pinned in interop/package.json, in interop/node_modules,
# with npm, where node is installed (elsewhere those tests are skipped); the Python SDK in .cache/peers, with pip --target (it brings pydantic,
# which the generated packages must not see). Each is installed again only when its pin changes.
PY_SDK_VERSION := 0.12.1
NODE_PEERS := interop/node_modules/.installed
PY_PEERS := .cache/peers/agent_client_protocol-$(PY_SDK_VERSION).dist-info

peers: $(PY_PEERS)
	@if ! command -v node >/dev/null || ! command -v npm >/dev/null; then \
		echo "node is not installed: the tests against the TypeScript SDK will be skipped"; \
	elif [ ! -f $(NODE_PEERS) ] || [ interop/package.json -nt $(NODE_PEERS) ]; then \
		cd interop && npm install --silent --no-audit --no-fund && touch node_modules/.installed; \
	fi

$(PY_PEERS): | $(STAMP)
	rm -rf .cache/peers
	$(PY) -m pip install --quiet --disable-pip-version-check --target .cache/peers 'agent-client-protocol==$(PY_SDK_VERSION)'

# haproxy, for tests/test_load_balancer.py (two agent processes behind examples/haproxy.cfg): the
# Debian package, installed with apt-get where apt-get is available and haproxy is not on PATH
# (as root, or through sudo without a password; `apt-get update` only when the install fails
# without it). Elsewhere, or when the install fails, that test is skipped and says why.
haproxy:
	@PATH="$$PATH:/usr/sbin:/sbin"; \
	if command -v haproxy >/dev/null; then :; \
	elif ! command -v apt-get >/dev/null; then \
		echo "apt-get is not available: install haproxy to run tests/test_load_balancer.py (skipped)"; \
	else \
		if [ "$$(id -u)" = 0 ]; then as_root=; elif sudo -n true 2>/dev/null; then as_root="sudo -n"; \
		else echo "haproxy is not installed and apt-get needs root: tests/test_load_balancer.py is skipped"; exit 0; fi; \
		install="$$as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy"; \
		$$install >/dev/null 2>&1 || { $$as_root apt-get update -qq >/dev/null 2>&1 && $$install >/dev/null 2>&1; } \
			|| echo "apt-get could not install haproxy: tests/test_load_balancer.py is skipped"; \
	fi

# The live tests alone (make test runs them too).
interop: peers
	$(PY) -m pytest tests/test_interop.py -v

update-schema: $(STAMP)
	@test -n "$(VERSION)" || { echo "usage: make update-schema VERSION=2.4.0"; exit 2; }
	$(PY) -m generator update-schema $(VERSION)

bench: $(BENCH_STAMP)
	$(PY) bench/codec.py
	$(PY) bench/session.py

bench-gen: $(BENCH_STAMP)
	$(PY) bench/generate.py

bench-rpc: $(BENCH_STAMP) peers
	$(PY) bench/rpc.py
	$(PY) bench/rpc_transports.py
	$(PY) bench/http_latency.py
	$(PY) bench/soak.py

bench-import: $(BENCH_STAMP)
	$(PY) bench/imports.py

# This checkout's git hooks (.githooks/): commit-msg refuses a subject over 72 characters.
hooks:
	git config core.hooksPath .githooks

clean:
	rm -rf $(VENV) .venv-* .cache
