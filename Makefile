# The two commands a new machine needs: `make demo` and `make test`. Each builds .venv itself.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
CONSTRAINTS := requirements/constraints.txt
STAMP_ALL := $(VENV)/.installed-all-dev
STAMP_CORE := $(VENV)/.installed-core

export PIP_DISABLE_PIP_VERSION_CHECK := 1
# Hosts' telemetry off everywhere this Makefile runs something.
export DEEPEVAL_TELEMETRY_OPT_OUT := 1
export RAGAS_DO_NOT_TRACK := true

.PHONY: view-screenshots help venv install install-core test lint typecheck pytest test-core demo bench constraints clean \
	traces-fixtures test-hosts

help:
	@echo "make demo         build .venv, install ek-agents, run the demo offline"
	@echo "make test         build .venv, install .[all,dev], run ruff, mypy and pytest;"
	@echo "                  then test-core"
	@echo "make test-core    build .venv-core with the core alone (.[test], no extra) and run"
	@echo "                  the tests and doctests there (tests needing an extra skip)"
	@echo "make bench        run every benchmark script in bench/"
	@echo "make view-screenshots  regenerate docs/view-*.png (the demo's ek-agents view)"
	@echo "make test-hosts   each adapter's tests and example against the oldest and newest"
	@echo "                  supported host release, one venv each under .venv-hosts/"
	@echo "make constraints  re-resolve requirements/constraints.txt with uv"
	@echo "make traces-fixtures  regenerate tests/data/traces/stacks/ (one venv a stack)"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade "pip>=24"

venv: $(BIN)/python

$(STAMP_ALL): $(BIN)/python pyproject.toml $(CONSTRAINTS)
	$(PIP) install -q -c $(CONSTRAINTS) -e ".[all,dev]"
	touch $@

$(STAMP_CORE): $(BIN)/python pyproject.toml
	$(PIP) install -q -c $(CONSTRAINTS) -e .
	touch $@

install: $(STAMP_ALL)

install-core: $(STAMP_CORE)

lint: install
	$(BIN)/ruff check ek adapters tests examples bench tools
	$(BIN)/ruff format --check ek adapters tests examples bench tools
	$(BIN)/python tools/complexity.py ek adapters

# adapters/<name> are installed as ek.adapters.<name>; checked as their own package bases so
# that adapters/inspect does not shadow the standard library's inspect module.
typecheck: install
	$(BIN)/mypy
	$(BIN)/mypy --explicit-package-bases adapters/inspect adapters/deepeval adapters/ragas adapters/pydantic_evals

# Two workers (pytest-xdist): the machine this suite is sized for has two cores. Every test
# uses its own tmp_path and loopback sockets only, so the workers share nothing.
pytest: install
	$(BIN)/python -m pytest -n 2

# The core installs alone: a separate venv with `pip install -e .[test]` (pytest and hypothesis,
# no host framework, no matplotlib) runs the same tests and the doctests of ek/. A test that needs
# an extra skips itself (pytest.importorskip), so what runs here is what `pip install ek-agents`
# supports. The venv builds in about 20 s; the run takes a few minutes (the host frameworks'
# tests, the slowest ones, skip).
CORE_VENV := .venv-core
CORE_BIN := $(CORE_VENV)/bin
STAMP_CORE_ONLY := $(CORE_VENV)/.installed-core-test

$(CORE_BIN)/python:
	$(PYTHON) -m venv $(CORE_VENV)
	echo '*' > $(CORE_VENV)/.gitignore  # the venv ignores itself (git status stays clean)
	$(CORE_BIN)/python -m pip install -q --upgrade "pip>=24"

$(STAMP_CORE_ONLY): $(CORE_BIN)/python pyproject.toml $(CONSTRAINTS)
	$(CORE_BIN)/python -m pip install -q -c $(CONSTRAINTS) -e ".[test]"
	touch $@

# (pyproject's asyncio_default_fixture_loop_scope is pytest-asyncio's option: unknown here.)
test-core: $(STAMP_CORE_ONLY)
	$(CORE_BIN)/python -m pytest -q -n 2 -W "ignore:Unknown config option:pytest.PytestConfigWarning"

test: lint typecheck pytest test-core

# The host matrix (issue 37, docs/host_versions.md): for each adapter, the floor of its host range
# and the newest release the range allows, each in its own uv venv under .venv-hosts/ (ek editable
# with its extra, the host pinned): the adapter's tests and its example, offline; then real pip
# installs beside a user's host (tests/hosts/test_install_behaviour.py). Writes
# tests/hosts/results.json and the README's compatibility table. Two runs side by side (2 cores).
HOSTS_JOBS ?= 2
test-hosts: install
	$(BIN)/python tests/hosts/matrix.py run --jobs $(HOSTS_JOBS)

# The demo: a retail suite run with k trials by two scripted agents (own harness, the
# regression gate, an Inspect AI run with mockllm, and two plots), offline, no API key.
# It needs ek with the Inspect adapter and the plots (.[inspect,plot]), not the test tools: pip
# shows its progress (a fresh venv takes a few minutes; the demo itself well under one).
DEMO_DIR ?= ek-demo-run
STAMP_DEMO := $(VENV)/.installed-demo
$(STAMP_DEMO): $(BIN)/python pyproject.toml $(CONSTRAINTS)
	@echo "== installing ek-agents with .[inspect,plot] into $(VENV)"
	$(PIP) install --progress-bar on -c $(CONSTRAINTS) -e ".[inspect,plot]"
	touch $@

demo: $(STAMP_DEMO)
	$(BIN)/ek-agents demo $(DEMO_DIR)
	@echo "the same agents as pytest tests (5 trials a test, one verdict from pass^2; pytest is not in .[inspect,plot]: $(PIP) install pytest):"
	@echo "  $(BIN)/python -m pytest examples/test_agent_with_pytest.py"
	@echo "  expect 75 passed, 15 failed (exit 1), by design: both agents are flaky on hard refunds; each failure lists its failed trials with ek's reasons"

bench: install
	@for f in bench/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

# The README's screenshots of `ek-agents view` (the demo's page; headless Chromium from the
# operating system's package: apt-get install chromium).
view-screenshots: install
	$(BIN)/python tools/view_screenshot.py

# Re-resolve the pinned constraints with a real resolver (plain pip backtracks for many minutes).
constraints: $(BIN)/python
	$(PIP) install -q uv
	$(BIN)/uv pip compile requirements/all.in --python-version 3.11 -o $(CONSTRAINTS)

# The trace fixtures of issue 29 (tests/data/traces/stacks/): each instrumentation stack runs the
# same scripted world offline in its own venv under .venv-traces/ (their pins conflict with each
# other and with ours), built from its exact pins, and rewrites its spans and truth files. Not
# part of `make test`: the tests read the committed files.
TRACES_GEN := tests/data/traces/stacks/gen
TRACES_VENVS := .venv-traces
TRACES_STACKS := agents_sdk_openinference agents_sdk_openllmetry langgraph_openinference \
	langgraph_openllmetry smolagents_openinference openai_v2_genai pydantic_ai_instrumentation
TRACES_UV := $(TRACES_VENVS)/_uv/bin/uv

$(TRACES_UV):
	$(PYTHON) -m venv $(TRACES_VENVS)/_uv
	$(TRACES_VENVS)/_uv/bin/python -m pip install -q "uv==0.13.9"

$(TRACES_VENVS)/%/.installed: $(TRACES_GEN)/requirements-%.txt | $(TRACES_UV)
	$(TRACES_UV) venv -q --clear --python $(PYTHON) $(TRACES_VENVS)/$*
	$(TRACES_UV) pip install -q --python $(TRACES_VENVS)/$*/bin/python -r $<
	touch $@

traces-fixtures: $(TRACES_STACKS:%=$(TRACES_VENVS)/%/.installed)
	@for s in $(TRACES_STACKS); do $(TRACES_VENVS)/$$s/bin/python $(TRACES_GEN)/$$s.py || exit 1; done

clean:
	rm -rf $(VENV) $(CORE_VENV) .venv-hosts build *.egg-info .pytest_cache .mypy_cache .ruff_cache
