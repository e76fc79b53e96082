# Two commands do all the set-up on a fresh machine with Python >= 3.11 and pip:
#   make run    create .venv, install deep-tui (what the app needs, nothing more), start the app
#   make test   create .venv, install deep-tui with its test tools, run the test suite
# Extras: make bench (benchmarks with their targets), make fuzz (the fuzz farm, writes docs/fidelity.md),
# make wheel.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Two stamps: the app alone (make run), and the app with the test tools (pytest, ruff, mypy, playwright…).
STAMP := $(VENV)/.installed-app
DEV_STAMP := $(VENV)/.installed

FUZZ_SESSIONS ?= 10000

.PHONY: run test bench fuzz wheel clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	[ $(DEV_STAMP) -nt pyproject.toml ] || $(BIN)/python -m pip install --quiet -e .
	touch $(STAMP)

$(DEV_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(DEV_STAMP) $(STAMP)

run: $(STAMP)
	$(BIN)/deep-tui $(ARGS)

test: $(DEV_STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

fuzz: $(STAMP)
	$(BIN)/python -m fuzzfarm run --sessions $(FUZZ_SESSIONS) --workers 2 --floor-sample 500 --report docs/fidelity.md

wheel: $(STAMP)
	$(BIN)/python -m pip wheel --quiet --no-deps -w dist .

clean:
	rm -rf $(VENV) dist build *.egg-info
