# memcli: `make demo` and `make test` work on a fresh machine with only Python.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip --disable-pip-version-check -q

.PHONY: demo test lint bench completions man docs clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -e .
	$(BIN)/python -m compileall -q memcli
	touch $@

$(VENV)/.installed-dev: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -e '.[dev]'
	$(BIN)/python -m compileall -q memcli
	touch $(VENV)/.installed $@

demo: $(VENV)/.installed
	PATH="$(CURDIR)/$(BIN):$$PATH" bash .ci/demo

test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check memcli tests benchmarks
	$(BIN)/ruff format --check memcli tests benchmarks

bench: $(VENV)/.installed-dev
	$(BIN)/python benchmarks/run.py

# completions/ and man/memcli.1 are generated from the command tree (tests check they are current)
completions: $(VENV)/.installed
	$(BIN)/python -m memcli.cli.gendocs --only completions

man: $(VENV)/.installed
	$(BIN)/python -m memcli.cli.gendocs --only man

docs: $(VENV)/.installed
	$(BIN)/python -m memcli.cli.gendocs

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
