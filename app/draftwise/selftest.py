"""The shipped app's self-test: `Draftwise --self-test` (frozen) or `draftwise-gui --self-test`.

Proves a build works on the machine it landed on, offscreen and without a model of the user's:
a window paints, every module imports, the resources are found, a GGUF file is written and
read back, a launch is planned, and (with an engine) llama-server is started on that tiny
model, answers a completion and is stopped with nothing left running. Each step prints one
line as it finishes; the last line is `self-test passed` or `self-test failed`.

The window to paint comes from the caller (`run(window_factory=...)`: the GUI entry point
passes its `create_window`), so this module never imports the GUI; a factory that raises,
or a window that never paints, fails the step.

The test model is written in pure Python (`draftwise.core.check.check_models`, no numpy, no
gguf-py): the frozen app does not carry those (about 40 MB); "Check this machine" writes its
models the same way.

Options (unknown ones are ignored, so `--self-test` may be passed through):
  --engine bundled|any|none   bundled: the engine inside the frozen app (the default when
                              frozen); any: the best one found (the default from source);
                              none: skip the engine steps.
  --log FILE                  also write the lines to FILE (a windowed Windows build has no
                              stdout; without --log it writes <cache>/selftest.log there).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import pkgutil
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, TextIO

from draftwise.core.kinds import Backend, EngineSource

# Modules that need the dev-only packages (gguf-py, numpy); the frozen app leaves them out.
DEV_ONLY = ("draftwise.testing",)
PASSED, FAILED = "self-test passed", "self-test failed"


class EngineWanted(StrEnum):
    """`--engine`: the engine the self-test starts."""

    BUNDLED = EngineSource.BUNDLED.value  # the frozen app's own (a missing one fails the test)
    ANY = "any"  # the best one here
    NONE = "none"  # skip the engine steps


# ------------------------------------------------------------------ timing
def process_age() -> float | None:
    """Seconds since this process was created (for the cold-start figure), None if unknown."""
    try:
        if sys.platform.startswith("linux"):
            stat = Path("/proc/self/stat").read_text()
            start_ticks = int(stat.rsplit(")", 1)[1].split()[19])
            uptime = float(Path("/proc/uptime").read_text().split()[0])
            return uptime - start_ticks / os.sysconf("SC_CLK_TCK")
        import psutil

        return time.time() - psutil.Process().create_time()
    except (OSError, ValueError, IndexError, ImportError):
        return None


# ------------------------------------------------------------------ steps
@dataclass
class Report:
    out: list[TextIO]
    failures: list[str] = field(default_factory=list)

    def line(self, text: str) -> None:
        for stream in self.out:
            stream.write(text + "\n")
            stream.flush()

    def step(self, title: str, status: str, detail: str, seconds: float | None = None) -> None:
        if status == "fail":
            self.failures.append(title)
        mark = {"ok": "ok ", "fail": "!! ", "info": "-- "}[status]
        took = f"  ({seconds:.2f} s)" if seconds is not None else ""
        age = process_age()
        at = f"[t+{age:6.2f} s] " if age is not None else ""
        self.line(f"{at}{mark} {title}: {detail}{took}")


def _paint_window(window_factory: Callable[[], Any]) -> str:
    """Build the window, show it offscreen and wait for its first paint; return what was
    painted. Raises (the step fails) when the window cannot be built or never paints."""
    if not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtCore import QCoreApplication, QElapsedTimer, QEvent, QObject
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "draftwise"])
    what = "the main window"
    window = window_factory()

    class _PaintSpy(QObject):
        painted = False

        def eventFilter(self, obj, event):  # noqa: N802 - Qt's name
            if event.type() == QEvent.Type.Paint:
                self.painted = True
            return False

    spy = _PaintSpy()
    window.installEventFilter(spy)
    window.resize(960, 640)
    window.show()
    timer = QElapsedTimer()
    timer.start()
    while not spy.painted and timer.elapsed() < 10_000:
        QCoreApplication.processEvents()
        if not spy.painted:
            time.sleep(0.005)
    window.removeEventFilter(spy)
    window.close()
    window.deleteLater()
    QCoreApplication.processEvents()
    if not spy.painted:
        raise RuntimeError(f"{what} was shown but never painted within 10 s")
    platform = QApplication.platformName() if isinstance(app, QApplication) else "?"
    return f"{what} painted on the {platform} platform"


def _import_everything() -> str:
    import PySide6
    from PySide6 import QtCore, QtGui, QtWidgets  # noqa: F401 - the import is the test

    import draftwise

    names = []
    for mod in pkgutil.walk_packages(draftwise.__path__, "draftwise."):
        if mod.name.startswith(DEV_ONLY) or mod.name.endswith("__main__"):
            continue
        importlib.import_module(mod.name)
        names.append(mod.name)
    if len(names) < 5:
        raise RuntimeError(f"only {len(names)} draftwise modules found: {names}")
    return f"{len(names)} draftwise modules, PySide6 {PySide6.__version__}, Python {sys.version.split()[0]}"


def _check_text() -> str:
    """Locale-aware text: what QtCore asks ICU for on Linux (and the trimmed ICU data keeps)."""
    import functools

    from PySide6.QtCore import QCollator, QLocale, QStringDecoder, QTimeZone

    words = sorted(["b", "\u00e4", "a", "z"], key=functools.cmp_to_key(QCollator(QLocale("de_DE")).compare))
    if words != ["a", "\u00e4", "b", "z"]:
        raise RuntimeError(f"German collation sorted {words}")
    if QLocale("tr_TR").toUpper("i") != "\u0130":
        raise RuntimeError("Turkish upper case of i is not \u0130")
    if not QTimeZone(b"Europe/Berlin").isValid():
        raise RuntimeError("the time zone Europe/Berlin is unknown")
    sjis = QStringDecoder("Shift_JIS").isValid()
    if not sjis and sys.platform.startswith("linux"):
        raise RuntimeError("the Shift_JIS converter is missing (ICU converter data)")
    return "collation, case mapping, time zones" + (", legacy converters" if sjis else "")


def _check_resources() -> str:
    from PySide6.QtGui import QIcon

    from draftwise import resources

    icon = resources.icon_path()
    if icon is None:
        raise RuntimeError(f"no icons/draftwise.png under {resources.resource_root()}")
    if QIcon(str(icon)).isNull():
        raise RuntimeError(f"{icon} is not an image Qt can read")
    return f"icon {icon}"


def _pick_engine(mode: EngineWanted):
    from draftwise.core.engines import discovery

    if mode == EngineWanted.BUNDLED:
        found = [e for e in discovery.find_engines() if e.source == EngineSource.BUNDLED]
        usable = [e for e in found if e.usable]
        if usable:
            return usable[0], ""
        why = "; ".join(str(e.problem) for e in found) or f"none in {[str(d) for d in discovery.bundled_dirs()]}"
        return None, f"no usable bundled engine ({why})"
    engine = discovery.best_engine()
    return engine, "" if engine else "no usable llama-server here (`draftwise engine install` builds one)"


def _plan(info, engine):
    """The launch the app would make for `info`: core.prepare (resolver -> planner) -> LaunchSpec."""
    from draftwise.core.engines import capabilities
    from draftwise.core.launch import launch_spec, prepare, session
    from draftwise.core.machine import hardware

    caps = capabilities.capabilities(engine.binary) if engine else capabilities.pinned_caps()
    machine = hardware.inventory(engine.binary if engine else None)
    binary = engine.binary if engine else Path(provision_binary_name())
    # The launch session without the user's records: the self-test plans its own generated model.
    planned = session.plan_launch(prepare.Request(model=info.path),
                                  session.Engine(Path(binary), caps, engine.backend if engine else Backend.CPU),
                                  machine, session.Records.none(), model=info)
    prepared = planned.prepared
    spec = planned.spec(launch_spec.any_free_port())
    p = prepared.plan
    words = (f"speculation: {prepared.spec.source}; plan: context {p.ctx}, KV {p.kv_type}, "
             f"{p.slots} slot(s), fit {p.fit_state}")
    return spec, words


def provision_binary_name() -> str:
    from draftwise.core.engines import provision

    return provision.binary_name()


def run(
    argv: Sequence[str] | None = None,
    *,
    window_factory: Callable[[], Any],
    out: TextIO | None = None,
) -> int:
    """Run every step, print one line each and the verdict; 0 when all passed.
    `window_factory()` builds the window the "Window" step paints."""
    parser = argparse.ArgumentParser(prog="draftwise --self-test", add_help=False)
    frozen = bool(getattr(sys, "frozen", False))
    parser.add_argument("--engine", type=EngineWanted, choices=tuple(EngineWanted),
                        default=EngineWanted.BUNDLED if frozen else EngineWanted.ANY)
    parser.add_argument("--log", default=None)
    opts, _unknown = parser.parse_known_args(list(sys.argv[1:] if argv is None else argv))

    streams: list[TextIO] = []
    stream = out if out is not None else sys.stdout
    if stream is not None:
        streams.append(stream)
    log_file = None
    log_path = opts.log
    if log_path is None and stream is None:
        from draftwise.core import paths

        log_path = str(paths.cache_dir() / "selftest.log")
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        log_file = open(log_path, "w", encoding="utf-8")  # noqa: SIM115 - closed below
        streams.append(log_file)
    report = Report(streams)
    try:
        return _run(report, opts.engine, frozen, window_factory)
    finally:
        if log_file is not None:
            log_file.close()


def _check_hub() -> str:
    """The hub client is complete in the frozen app (the trimmed build leaves modules out):
    a loopback stand-in would need test code, so this builds the client and a request
    without sending anything."""
    import ssl

    from huggingface_hub import HfApi, hf_hub_url
    from huggingface_hub.utils import build_hf_headers, get_session

    from draftwise.core.hub import client, download  # noqa: F401

    HfApi(endpoint=client.endpoint())
    url = hf_hub_url("org/model-GGUF", "model.gguf", endpoint=client.endpoint())
    get_session()
    build_hf_headers()
    return f"client ready ({url.split('/')[2]}, {ssl.OPENSSL_VERSION.split()[0]} {ssl.OPENSSL_VERSION.split()[1]})"


def _timed(report: Report, title: str, fn: Callable[[], str]) -> bool:
    start = time.perf_counter()
    try:
        detail = fn()
    except Exception as exc:  # noqa: BLE001 - the self-test reports every failure as a step
        report.step(title, "fail", f"{type(exc).__name__}: {exc}", time.perf_counter() - start)
        return False
    report.step(title, "ok", detail, time.perf_counter() - start)
    return True


def _run(report: Report, engine_mode: EngineWanted, frozen: bool, window_factory: Callable[[], Any]) -> int:
    where = f"frozen at {Path(sys.executable).parent}" if frozen else "from source"
    report.line(f"Draftwise self-test ({where}, {sys.platform})")
    report.step("Start", "info", "self-test started")
    _timed(report, "Window", lambda: _paint_window(window_factory))
    _timed(report, "Imports", _import_everything)
    _timed(report, "Resources", _check_resources)
    _timed(report, "Text", _check_text)
    _timed(report, "Model hub", _check_hub)

    tmp = Path(tempfile.mkdtemp(prefix="draftwise-selftest-"))
    try:
        _engine_steps(report, tmp, engine_mode)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    if report.failures:
        report.line(f"{FAILED} ({len(report.failures)} step(s) failed: {', '.join(report.failures)})")
        return 1
    report.line(PASSED)
    return 0


def _engine_steps(report: Report, tmp: Path, engine_mode: EngineWanted) -> None:
    from draftwise.core.check import check_models
    from draftwise.core.gguf import reader as gguf
    from draftwise.core.launch import headless

    state: dict[str, Any] = {}

    def model_step() -> str:
        path = check_models.write_llama(tmp / "selftest-tiny-llama.gguf", name="draftwise-selftest")
        info = gguf.read_model(path)
        if info.architecture != "llama" or info.block_count != 2:
            raise RuntimeError(f"read back {info.architecture}/{info.block_count} instead of llama/2")
        state["path"], state["info"] = path, info
        return f"wrote and read {path.name}: {info.architecture}, {info.block_count} layers, {info.size_bytes // 1024} KiB"

    if not _timed(report, "Test model", model_step):
        return

    engine, why = (None, "skipped (--engine none)") if engine_mode == EngineWanted.NONE else _pick_engine(engine_mode)
    if engine is None:
        must = engine_mode == EngineWanted.BUNDLED or os.environ.get("DRAFTWISE_REQUIRE_ENGINE") == "1"
        report.step("Engine", "fail" if must else "info", why)
    else:
        report.step("Engine", "ok", f"llama.cpp {engine.version} ({engine.backend}, {engine.source}) {engine.binary}")

    def plan_step() -> str:
        spec, words = _plan(state["info"], engine)
        state["spec"] = spec
        return f"{words}; argv: {' '.join(spec.argv[1:])}"

    if not _timed(report, "Plan", plan_step) or engine is None:
        return

    launch = headless.HeadlessLaunch(state["spec"], record_run=False, log_path=tmp / "engine.log")
    try:
        def start() -> str:
            t0 = time.perf_counter()
            launch.start()
            if not launch.wait_ready(timeout=120):
                raise RuntimeError(f"stage {launch.stage}; last lines:\n" + "\n".join(list(launch.log)[-8:]))
            return f"ready in {time.perf_counter() - t0:.2f} s at {launch.url}"

        if _timed(report, "Engine start", start):
            _timed(report, "Generation", lambda: _generate(state["spec"]))
    finally:
        _timed(report, "Engine stop", lambda: _stop(launch))


def _generate(spec) -> str:
    import json

    from draftwise.core.processes import loopback  # never through a proxy

    status, raw = loopback.request(spec.url, spec.api_key, "/completion",
                                   {"prompt": "Hello", "n_predict": 4, "temperature": 0}, 60)
    if status != 200:
        raise RuntimeError(f"/completion answered {status}")
    result = json.loads(raw)
    return f"{result.get('tokens_predicted', '?')} tokens generated"


def _stop(launch) -> str:
    launch.stop()
    if not launch.flow.ended:
        raise RuntimeError(f"the engine did not stop (stage {launch.stage})")
    left = []
    if sys.platform != "win32":
        for pid in launch.pids:
            try:
                os.killpg(pid, 0)
            except ProcessLookupError:
                continue
            left.append(pid)
    if left:
        raise RuntimeError(f"process group(s) {left} still running")
    return f"stopped (stage {launch.stage}), nothing left running"

