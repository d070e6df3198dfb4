# `make demo` and `make test` each create or refresh .venv idempotently: the stamp file is
# rebuilt only when pyproject.toml or requirements.lock changes.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.itemscale-installed
DEMO_OUT ?= runs/demo

.PHONY: demo test lint typecheck pytest clean-demo bench

$(STAMP): pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# requirements.lock pins every package (torch==2.14.1 / torchvision==0.29.1 come from the
	# machine's local wheel store; an unpinned torch would pull a multi-GB download).
	$(BIN)/python -m pip install --quiet -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# the demo's threads: 2 on an idle 2-core machine; the docs test runs it with 1 beside the
# suite's other worker
DEMO_THREADS ?= 2
# the suite's workers (pytest-xdist): 2 on the 2-core machines the project runs on; PYTEST_WORKERS=0
# runs it in one process
PYTEST_WORKERS ?= 2

demo: $(STAMP)
	OMP_NUM_THREADS=$(DEMO_THREADS) $(BIN)/python -m itemscale demo --out $(DEMO_OUT)

lint: $(STAMP)
	$(BIN)/ruff check --no-cache src tests benchmarks recipes
	$(BIN)/ruff format --no-cache --check src tests benchmarks recipes

typecheck: $(STAMP)
	$(BIN)/mypy

# the slowest tests start first (tests/conftest.py), and an idle worker takes queued tests from
# the busy one (worksteal); --durations lists the 20 slowest, the figures docs/performance.md keeps
pytest: $(STAMP)
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist worksteal --durations=20

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/analysis.py

clean-demo:
	rm -rf runs/demo
