# The two Quick start commands live here: `make run` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: run test engine engine-gpu lint bench clean prereqs package

prereqs:
	@if command -v dpkg-query >/dev/null; then bash packaging/debian-prereqs.sh; fi

$(STAMP): pyproject.toml
	$(MAKE) prereqs
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Builds llama-server from the pinned source once per machine (CPU: about 15 min on 2 cores).
engine: $(STAMP)
	$(PY) -m draftwise.cli.main engine install --backend cpu

# The CPU and the Vulkan engine from one build tree (the tests' GPU tier runs on Mesa's
# lavapipe, a Vulkan device on the CPU). Debian 12 needs Debian 13's Vulkan headers for this
# ggml: vulkan-headers.sh fetches them into the cache without touching the system's sources.
VULKAN_DEBS := glslc libvulkan-dev spirv-headers mesa-vulkan-drivers vulkan-tools
engine-gpu: $(STAMP)
	DRAFTWISE_EXTRA_DEBS="$(VULKAN_DEBS)" $(MAKE) prereqs
	@if command -v apt-get >/dev/null; then \
		bash packaging/vulkan-headers.sh "$$($(PY) -c 'from draftwise.core import paths; print(paths.cache_dir())')"; fi
	$(PY) -m draftwise.cli.main engine install --backend cpu,vulkan

# The window; on a machine without a display, the machine check in the terminal.
run: engine
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ] || [ "$$(uname)" = Darwin ]; then \
		$(VENV)/bin/draftwise-gui; \
	else \
		echo "No display found: running the machine check in the terminal instead of the window."; \
		$(PY) -m draftwise.cli.main check; \
	fi

# The packaging tests' tools come first: with DRAFTWISE_REQUIRE_ENGINE=1 a skip is a failure
# (tests/skip_policy.py).
test: engine-gpu
	DRAFTWISE_EXTRA_DEBS="nsis desktop-file-utils iproute2" $(MAKE) prereqs
	$(PY) -m ruff check app tests bench packaging installer
	QT_QPA_PLATFORM=offscreen DRAFTWISE_REQUIRE_ENGINE=1 $(PY) -m pytest -q

lint: $(STAMP)
	$(PY) -m ruff check app tests bench packaging installer
	$(VENV)/bin/lint-imports

# Every benchmark runs; the target fails at the end when any one missed its target.
BENCHES := bench/gguf_inspect.py bench/plan_accuracy.py bench/launch.py bench/gui_startup.py bench/speculation.py bench/speed_estimate.py bench/real_models.py bench/hub_judge.py bench/rpc_network.py bench/engine_settings.py bench/serve.py bench/generalize.py
bench: engine
	@status=0; for b in $(BENCHES); do echo "== $$b"; $(PY) $$b || status=1; done; exit $$status

# The onedir app (engine bundled), the .deb and the NSIS installer, into dist/.
package: engine
	DRAFTWISE_EXTRA_DEBS="nsis binutils" $(MAKE) prereqs
	$(PY) -m pip install --quiet -e '.[package]'
	$(PY) packaging/build.py --installers

clean:
	rm -rf $(VENV) build dist .pytest_cache .ruff_cache
