# The two Quick start commands live here: `make run` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: run test engine lint bench clean prereqs

prereqs:
	@if command -v dpkg-query >/dev/null; then bash packaging/debian-prereqs.sh; fi

$(STAMP): pyproject.toml
	$(MAKE) prereqs
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Builds llama-server from the pinned source once per machine (about 20 min on 2 cores).
engine: $(STAMP)
	$(PY) -m draftwise.cli.main engine install

run: engine
	$(PY) -m draftwise.cli.main check

test: engine
	$(PY) -m ruff check app tests bench
	QT_QPA_PLATFORM=offscreen DRAFTWISE_REQUIRE_ENGINE=1 $(PY) -m pytest -q

lint: $(STAMP)
	$(PY) -m ruff check app tests bench
	$(VENV)/bin/lint-imports

bench: $(STAMP)
	$(PY) bench/gguf_inspect.py

clean:
	rm -rf $(VENV) build dist .pytest_cache .ruff_cache
