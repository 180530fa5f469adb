# The two Quick start commands live here: `make run` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: run test engine lint bench clean prereqs package

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

# The window; on a machine without a display, the machine check in the terminal.
run: engine
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ] || [ "$$(uname)" = Darwin ]; then \
		$(VENV)/bin/draftwise-gui; \
	else \
		echo "No display found: running the machine check in the terminal instead of the window."; \
		$(PY) -m draftwise.cli.main check; \
	fi

test: engine
	$(PY) -m ruff check app tests bench packaging installer
	QT_QPA_PLATFORM=offscreen DRAFTWISE_REQUIRE_ENGINE=1 $(PY) -m pytest -q

lint: $(STAMP)
	$(PY) -m ruff check app tests bench packaging installer
	$(VENV)/bin/lint-imports

bench: engine
	$(PY) bench/gguf_inspect.py
	$(PY) bench/plan_accuracy.py
	$(PY) bench/launch.py

# The onedir app (engine bundled), the .deb and the NSIS installer, into dist/.
package: engine
	DRAFTWISE_EXTRA_DEBS="nsis binutils" $(MAKE) prereqs
	$(PY) -m pip install --quiet -e '.[package]'
	$(PY) packaging/build.py --installers

clean:
	rm -rf $(VENV) build dist .pytest_cache .ruff_cache
