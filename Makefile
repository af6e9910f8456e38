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
	@echo "                  the doctests and the tests of what changes without an extra"
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

# The test environments install with uv (the same pins as pip would take, from the constraints
# file): it fetches and unpacks in parallel, so `.[all,dev]` takes seconds to a minute where pip
# took about three. `make demo` keeps pip, whose progress a first-time user sees.
UV_VERSION := 0.13.9
UV := $(BIN)/uv
$(UV): $(BIN)/python
	$(PIP) install -q "uv==$(UV_VERSION)"

$(STAMP_ALL): $(UV) pyproject.toml $(CONSTRAINTS)
	$(UV) pip install -q --python $(BIN)/python -c $(CONSTRAINTS) -e ".[all,dev]"
	touch $@

$(STAMP_CORE): $(UV) pyproject.toml
	$(UV) pip install -q --python $(BIN)/python -c $(CONSTRAINTS) -e .
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
# uses its own tmp_path and loopback sockets only, so the workers share nothing. A file goes to
# one worker whole (--dist loadfile): a module's fixtures (a run of every verifier attack, an
# Inspect evaluation, the demo) are built once, not once in each worker.
PYTEST_WORKERS := -n 2 --dist loadfile
pytest: install
	$(BIN)/python -m pytest $(PYTEST_WORKERS)

# The core installs alone: a separate venv with `pip install -e .[test]` (pytest, hypothesis and
# pytest-xdist; no host framework, no matplotlib) runs the doctests of ek/ and the tests of what
# changes when no extra is installed: the core's imports (test_core_install), the demo and the
# CLI without Inspect or matplotlib, the plots' "install the extra" errors, the README's blocks
# (those that need an extra skip), the public names, the pytest plugin, the harness and its store.
# The whole suite ran once already in .venv (`make pytest`), where test_core_install also runs the
# core in an interpreter that can import only the standard library; running all of it again here
# would test the same code twice.
CORE_VENV := .venv-core
CORE_BIN := $(CORE_VENV)/bin
STAMP_CORE_ONLY := $(CORE_VENV)/.installed-core-test
CORE_TESTS := ek tests/test_core_install.py tests/test_demo_run.py tests/test_cli.py \
	tests/test_plots.py tests/test_readme_blocks.py tests/test_public_api.py \
	tests/test_pytest_plugin.py tests/test_harness.py tests/test_store.py

$(CORE_BIN)/python:
	$(PYTHON) -m venv $(CORE_VENV)
	echo '*' > $(CORE_VENV)/.gitignore  # the venv ignores itself (git status stays clean)

$(STAMP_CORE_ONLY): $(UV) $(CORE_BIN)/python pyproject.toml $(CONSTRAINTS)
	$(UV) pip install -q --python $(CORE_BIN)/python -c $(CONSTRAINTS) -e ".[test]"
	touch $@

# (pyproject's asyncio_default_fixture_loop_scope is pytest-asyncio's option: unknown here.)
test-core: $(STAMP_CORE_ONLY)
	$(CORE_BIN)/python -m pytest -q $(PYTEST_WORKERS) \
		-W "ignore:Unknown config option:pytest.PytestConfigWarning" $(CORE_TESTS)

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
constraints: $(UV)
	$(UV) pip compile requirements/all.in --python-version 3.11 -o $(CONSTRAINTS)

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
