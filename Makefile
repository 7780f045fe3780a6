# The two README commands. Each sets up .venv from scratch when it is missing or
# pyproject.toml changed, so a fresh clone needs nothing else.
PYTHON ?= python3
VENV   := .venv
STAMP  := $(VENV)/.installed
GRID   ?= grids/default.yaml
TORCH  := 2.13.0+cpu
JOBS   ?= 2  # worker processes: two single-threaded tiny models use 2 cores better than one

.PHONY: run test test-fast site system-deps clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	# torch first, pinned, and its CPU build: from PyPI, torch==2.13.0 pulls several GB of CUDA
	# packages. A copy pip already finds (a find-links folder of its configuration) comes first;
	# else PyTorch's own CPU index. Both are the same build, 2.13.0+cpu, which records name.
	$(VENV)/bin/pip install --quiet torch==$(TORCH) 2>/dev/null || { \
	  echo "pip finds no local copy of torch $(TORCH): installing it from PyTorch's CPU index"; \
	  $(VENV)/bin/pip install --quiet torch==$(TORCH) --index-url https://download.pytorch.org/whl/cpu; }
	$(VENV)/bin/pip install --quiet -e '.[test]'
	touch $(STAMP)

## make run: train and evaluate every cell of the default job (grids/default.yaml), ingest into DuckDB, render the site
run: $(STAMP)
	$(VENV)/bin/posbench run $(GRID) --jobs $(JOBS)

## make site: render the published leaderboard (leaderboard/, committed) into site/published/; trains nothing
site: $(STAMP)
	$(VENV)/bin/posbench site --published

## make test: the whole test suite (installs the system packages the end-to-end tests use)
test: $(STAMP) system-deps
	$(VENV)/bin/python -m pytest

## make test-fast: the unit and property tests (no end-to-end scenario, no real fit), in about two minutes (docs/benchmarks.md)
test-fast: $(STAMP)
	$(VENV)/bin/python -m pytest --ignore=tests/e2e -m "not integration" -q

system-deps:
	bash scripts/install-system-deps.sh

clean:
	rm -rf $(VENV) results site/_build .cache
