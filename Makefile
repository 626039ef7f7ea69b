# memcli: `make demo` and `make test` work on a fresh machine with only Python.
# Both install the exact versions locked in .ci/lock/ (`make lock` refreshes them);
# pyproject.toml keeps the ranges that `pip install memcli` resolves for users.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip --disable-pip-version-check -q
LOCK   := .ci/lock
SMOKE  := build/smoke

# The real embedding model for the local-embedder tests (tests/test_local_embedder.py): beside
# the project (../shared/models) or where MEMCLI_TEST_MODEL_DIR says; .ci/run requires it.
MODEL_NAME := all-MiniLM-L6-v2-onnx
MEMCLI_TEST_MODEL_DIR ?= $(firstword $(patsubst %/model.onnx,%,$(wildcard \
	$(abspath ../shared/models/$(MODEL_NAME))/model.onnx /work/shared/models/$(MODEL_NAME)/model.onnx)))
export MEMCLI_TEST_MODEL_DIR

.PHONY: help demo extras test check e2e test-latest smoke lock lock-upgrade lint typecheck fmt bench \
	bench-guard completions man docs plugin site tour clean print-model-dir

# Every target with its line: the text after `##` on the target's line.
help: ## this list
	@awk 'BEGIN {FS = ":.*## "} /^[a-z][a-z0-9 -]*:.*## / {printf "  %-22s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(VENV)/.installed: pyproject.toml $(LOCK)/demo.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -c $(LOCK)/demo.txt -e .
	$(BIN)/python -m compileall -q memcli
	touch $@

$(VENV)/.installed-dev: pyproject.toml $(LOCK)/test.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -c $(LOCK)/test.txt -e '.[dev,local,mcp]'
	$(BIN)/python -m compileall -q memcli
	touch $(VENV)/.installed $(VENV)/.installed-extras $@

demo: $(VENV)/.installed  ## install memcli in .venv and run a short session with it
	PATH="$(CURDIR)/$(BIN):$$PATH" bash .ci/demo
	@printf '\nmemcli is installed in %s. To run it from anywhere:\n  export PATH="%s:$$PATH"\n(or . %s/activate); `make extras` adds the MCP server and local embeddings for agents.\n' \
		"$(CURDIR)/$(BIN)" "$(CURDIR)/$(BIN)" "$(CURDIR)/$(BIN)"

# The extras agents use, pinned: the MCP server (mcp) and local embeddings (local).
extras: $(VENV)/.installed-extras  ## add the MCP server and local embeddings to .venv
$(VENV)/.installed-extras: $(VENV)/.installed $(LOCK)/test.txt
	$(PIP) install -c $(LOCK)/test.txt -e '.[local,mcp]'
	touch $@

# The whole check: lint (ruff, types, layers, the docs site built strictly), then the whole
# suite in parallel.
test: $(VENV)/.installed-dev lint  ## lint, then the whole test suite (what CI runs)
	$(BIN)/python -m pytest

# The quick check before a commit: lint, then the tests not marked `slow` (pyproject.toml:
# the ones that start processes or servers, run the whole CLI many times, or load real models).
# Bytecode is written even where PYTHONDONTWRITEBYTECODE is set: pytest then keeps the test
# modules it rewrites for its asserts (tests/__pycache__) instead of rewriting all of them in
# each worker on every run (collection: 10 s of CPU a worker, 4 s with them kept).
check: $(VENV)/.installed-dev lint  ## lint, then the tests not marked slow (about 30 s on 2 cores)
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -m 'not slow'

# memcli inside the real agent CLIs: the versions pinned in tests/e2e/package-lock.json
# (npm ci), run headless against a loopback model API (tests/e2e).
E2E := build/e2e
$(E2E)/.installed: tests/e2e/package.json tests/e2e/package-lock.json
	rm -rf $(E2E) && mkdir -p $(E2E)
	cp tests/e2e/package.json tests/e2e/package-lock.json $(E2E)/
	cd $(E2E) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

e2e: $(VENV)/.installed-dev $(E2E)/.installed  ## memcli inside the real Claude Code and Codex CLIs
	E2E_AGENTS_BIN="$(CURDIR)/$(E2E)/node_modules/.bin" $(BIN)/python -m pytest tests/e2e

# The newest versions pyproject.toml allows, in a venv of their own: a breaking release of a
# dependency shows here first, not as a red CI later.
test-latest:  ## the suite against the newest versions pyproject.toml allows
	rm -rf $(VENV)-latest
	$(PYTHON) -m venv $(VENV)-latest
	$(VENV)-latest/bin/python -m pip --disable-pip-version-check -q install -e '.[dev,local,mcp]'
	$(VENV)-latest/bin/python -m pip --disable-pip-version-check list --format=freeze
	$(VENV)-latest/bin/python -m pytest

# Build the wheel, install it (not editable) in a fresh venv, run a short session with it.
smoke:  ## build the wheel, install it in a fresh venv, run a short session
	rm -rf $(SMOKE)
	$(PYTHON) -m pip --disable-pip-version-check -q wheel --no-deps -w $(SMOKE)/dist .
	$(PYTHON) -m venv $(SMOKE)/venv
	$(SMOKE)/venv/bin/python -m pip --disable-pip-version-check -q install \
		-c $(LOCK)/demo.txt $(SMOKE)/dist/memcli-*.whl
	bash .ci/smoke $(SMOKE)/venv/bin

# Regenerate the locks from pyproject.toml with uv (installed in a venv of its own): `make lock`
# keeps the pinned versions that still fit and adds what is new; `make lock-upgrade` moves every
# pin to the newest version allowed.
lock lock-upgrade:  ## refresh .ci/lock/ from pyproject.toml (lock-upgrade: every pin to the newest)
	$(PYTHON) -m venv $(VENV)-lock
	$(VENV)-lock/bin/python -m pip --disable-pip-version-check -q install uv
	$(VENV)-lock/bin/uv pip compile -q $(if $(filter lock-upgrade,$@),--upgrade) --universal \
		--python-version 3.11 pyproject.toml -o $(LOCK)/demo.txt
	$(VENV)-lock/bin/uv pip compile -q $(if $(filter lock-upgrade,$@),--upgrade) --universal \
		--python-version 3.11 --all-extras pyproject.toml -o $(LOCK)/test.txt

DEVTOOLS := .ci/gendocs.py .ci/genplugin.py .ci/gentour.py .ci/mkdocs_hooks.py
# Never with --quiet: it hides the warnings that --strict counts, and the build then passes.
MKDOCS   := NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs

LINTED   := memcli tests benchmarks $(DEVTOOLS)

# What .pre-commit-config.yaml runs too.
lint: $(VENV)/.installed-dev typecheck  ## ruff, mypy, the layer contracts, the docs site built strictly
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/lint-imports --no-cache
	$(MKDOCS) build --strict

# mypy with pyproject.toml's [tool.mypy]: memcli/ strict, tests/ checked (not strict).
typecheck: $(VENV)/.installed-dev  ## mypy over memcli/ (strict) and tests/
	$(BIN)/mypy

fmt: $(VENV)/.installed-dev  ## ruff's fixes and formatting, in place
	$(BIN)/ruff check --fix $(LINTED)
	$(BIN)/ruff format $(LINTED)

bench: $(VENV)/.installed-dev  ## the benchmarks (results in benchmarks/RESULTS.md)
	$(BIN)/python benchmarks/run.py

# CPU instructions (valgrind's callgrind) of the hot paths: cold index and search at 1k files,
# --help, the prompt hook, MCP initialize; fails when one grows more than 15% over
# benchmarks/bench_baseline.json unless HEAD raised that baseline with a 'bench-guard:' reason.
bench-guard: $(VENV)/.installed-dev  ## CPU instructions of the hot paths against their baselines
	$(BIN)/python benchmarks/bench_guard.py

# completions/, man/memcli.1 and docs/reference.md are generated from the command tree (tests
# check they are current)
completions: $(VENV)/.installed  ## regenerate completions/
	$(BIN)/python .ci/gendocs.py --only completions

man: $(VENV)/.installed  ## regenerate man/memcli.1
	$(BIN)/python .ci/gendocs.py --only man

docs: $(VENV)/.installed plugin  ## regenerate completions/, the man page, docs/reference.md and the plugin
	$(BIN)/python .ci/gendocs.py

# The Claude Code plugin and its marketplace (.claude-plugin/), from the hooks, the MCP server
# and the policy that 'memcli agent install claude-code' writes (a test checks they are current)
plugin: $(VENV)/.installed  ## regenerate the Claude Code plugin under .claude-plugin/
	$(BIN)/python .ci/genplugin.py

# The documentation site (docs/, mkdocs.yml, Material theme) into build/site; --strict fails on
# a broken link or anchor, a page missing from the nav, or any other warning.
site: $(VENV)/.installed-dev  ## build the documentation site into build/site
	$(MKDOCS) build --strict

# docs/tour.md's tour is a run of .ci/demo, README.md's Quick start one of .ci/quickstart
# (tests/test_tour.py and tests/test_readme.py check they agree)
tour: $(VENV)/.installed  ## regenerate docs/tour.md and README.md's Quick start
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python .ci/gentour.py

print-model-dir:  ## the folder of the embedding model the tests use
	@echo $(MEMCLI_TEST_MODEL_DIR)

clean:  ## remove the venvs and everything built
	rm -rf $(VENV) $(VENV)-latest $(VENV)-lock .pytest_cache build dist *.egg-info
