"""The main window, offscreen: choosing, speculation, plan, launch/stop with the real
engine, the fallback banner, Japanese, a corrupt settings file, drag and drop, closing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QAbstractButton, QComboBox, QLineEdit, QSlider

from draftwise.core.engines import capabilities
from draftwise.core.settings import LoadResult, Settings
from draftwise.testing.tinymodels import TinyModel, broken_draft, mtp_model, write_tiny_model
from draftwise.ui.main_window import MainWindow
from draftwise.viewmodels.app import AppViewModel
from draftwise.viewmodels.engine import EngineChoice

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRAFTWISE_CONFIG_DIR", str(tmp_path / "config"))
    # The broken-drafter record and run files go here; the engine is passed explicitly.
    monkeypatch.setenv("DRAFTWISE_DATA_DIR", str(tmp_path / "data"))


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("library")
    write_tiny_model(d / "tiny-llama-F32.gguf", TinyModel())
    write_tiny_model(d / "tiny-glm4moe-mtp-F32.gguf", mtp_model())
    return d


def engine_choice(info=None) -> EngineChoice:
    if info is None:
        return EngineChoice("llama.cpp", Path("/opt/fake/llama-server"), "cpu", "0.6.0", "test", "",
                            capabilities.pinned_caps())
    return EngineChoice("llama.cpp", info.binary, info.backend, info.version, info.source, "",
                        capabilities.capabilities(info.binary))


@pytest.fixture
def window(qtbot, folder: Path):
    def make(settings: Settings | None = None, engine=None, path: Path | None = None) -> MainWindow:
        s = settings or Settings(model_folders=[str(folder)])
        s.close_action = "stop"  # pytest-qt closes the windows: never ask in a modal box
        vm = AppViewModel(LoadResult(s, path or Path(os.devnull)), persist=path is not None)
        vm.engine.set_engines([engine_choice(engine)])
        win = MainWindow(vm)
        qtbot.addWidget(win)
        win.resize(1200, 800)
        win.show()
        vm.start(detect_engines=False, reopen_last=False)
        qtbot.waitUntil(lambda: vm.machine is not None and not vm.library.scanning, timeout=20000)
        made.append(win)
        return win

    made: list[MainWindow] = []
    yield make
    for win in made:
        if win.vm.engine_running():
            win.vm.launch.stop()
            qtbot.waitUntil(lambda w=win: not w.vm.engine_running(), timeout=20000)
        win.vm.runner.wait(20000)


def choose(qtbot, win: MainWindow, name: str) -> None:
    """Click the row of `name` in the library table and wait for the plan."""
    proxy = win.vm.library.proxy
    row = next(r for r in range(proxy.rowCount()) if proxy.index(r, 0).data() == name)
    with qtbot.waitSignal(win.vm.outcome_changed, timeout=20000):
        win.library.table.setCurrentIndex(proxy.index(row, 0))
    qtbot.waitUntil(lambda: not win.vm.replanning, timeout=20000)


def test_choosing_a_model_fills_details_and_plan(qtbot, window) -> None:
    win = window()
    assert win.library.table.isVisible() and win.vm.library.proxy.rowCount() == 2
    choose(qtbot, win, "tiny-glm4moe-mtp-F32")
    assert win.header.title.text() == "tiny-glm4moe-mtp-F32"
    assert "glm4moe" in win.header.subtitle.text()
    assert win.header.mtp_chip.isVisible()
    assert "helper built in (an MTP head)" in win.speculation.decision.text()
    assert win.memory.bars.bars and win.memory.bars.bars[0].data.capacity > 0
    assert win.memory.fit_chip.text() == "Fits"
    assert win.memory.reasons.text().startswith("Why:")
    assert win.launch_card.launch_button.isEnabled()
    assert "--spec-type draft-mtp" in win.advanced.command.toPlainText()
    win.details.toggle.setChecked(True)
    assert win.details.facts.rowCount() > 5


def test_mtp_off_removes_speculative_flags_from_the_command(qtbot, window) -> None:
    win = window()
    choose(qtbot, win, "tiny-glm4moe-mtp-F32")
    with qtbot.waitSignal(win.vm.outcome_changed, timeout=10000):
        qtbot.mouseClick(win.speculation.mtp_off, Qt.MouseButton.LeftButton)
    assert "--spec-type" not in win.advanced.command.toPlainText()
    assert "off" in win.speculation.decision.text()
    assert win.launch_card.launch_button.isEnabled()


def test_bad_draft_shows_the_message_and_disables_launch(qtbot, window, tmp_path: Path) -> None:
    win = window()
    choose(qtbot, win, "tiny-llama-F32")
    bad = tmp_path / "not-a-model.gguf"
    bad.write_bytes(b"hello")
    with qtbot.waitSignal(win.vm.outcome_changed, timeout=10000):
        win.speculation.draft_edit.setText(str(bad))
    assert win.speculation.draft_msg.text().startswith("The draft model cannot be used: ")
    assert not win.launch_card.launch_button.isEnabled()
    assert win.launch_card.block_reason.text()
    with qtbot.waitSignal(win.vm.outcome_changed, timeout=10000):
        win.speculation.draft_edit.clear()
    assert win.launch_card.launch_button.isEnabled()


def test_context_slider_and_kv_replan(qtbot, window) -> None:
    win = window()
    choose(qtbot, win, "tiny-llama-F32")
    with qtbot.waitSignal(win.vm.outcome_changed, timeout=10000):
        win.memory.ctx_slider.setValue(0)
    assert win.vm.plan.result.context == 2048 and "-c 2048" in win.advanced.command.toPlainText()
    assert "2k" in win.memory.ctx_value.text() and win.memory.ctx_auto.isVisible()
    # Its heads hold 16 values: a quantized KV cache (blocks of 32) cannot start: not offered.
    assert [win.memory.kv_combo.itemData(i) for i in range(win.memory.kv_combo.count())] == [None, "f16"]


def test_kv_choices_follow_the_model(qtbot, window, tmp_path: Path) -> None:
    win = window()
    wide = write_tiny_model(tmp_path / "wide-heads.gguf", TinyModel(name="wide-heads", n_head=2, n_head_kv=2))[0]
    with qtbot.waitSignal(win.vm.outcome_changed, timeout=20000):
        win.vm.open_file(wide)
    qtbot.waitUntil(lambda: not win.vm.replanning, timeout=20000)
    assert win.memory.kv_combo.findData("q4_0") > 0 and win.memory.kv_combo.findData("q8_0") > 0
    with qtbot.waitSignal(win.vm.outcome_changed, timeout=10000):
        win.memory.kv_combo.setCurrentIndex(win.memory.kv_combo.findData("q4_0"))
    assert "-ctk q4_0" in win.advanced.command.toPlainText()


@pytest.mark.engine
def test_launch_reaches_ready_shows_url_and_stop_returns_to_idle(qtbot, window, engine) -> None:
    win = window(engine=engine)
    choose(qtbot, win, "tiny-llama-F32")
    qtbot.waitUntil(win.launch_card.launch_button.isEnabled, timeout=10000)
    with qtbot.waitSignal(win.vm.launch.became_ready, timeout=90000):
        qtbot.mouseClick(win.launch_card.launch_button, Qt.MouseButton.LeftButton)
    url = win.vm.launch.api_url()
    assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    assert win.status.url_label.isVisible() and url in win.status.url_label.text()
    assert win.status.copy_url.isVisible() and win.status.open_chat.isVisible() and win.status.copy_key.isVisible()
    assert win.status.status_text.text().startswith("Ready")
    assert not win.launch_card.launch_button.isEnabled() and win.launch_card.stop_button.isEnabled()
    # Copy puts the URL on the clipboard.
    qtbot.mouseClick(win.status.copy_url, Qt.MouseButton.LeftButton)
    from PySide6.QtGui import QGuiApplication

    assert QGuiApplication.clipboard().text() == url
    # The engine reported its buffers: planned vs actual is shown.
    qtbot.waitUntil(lambda: win.memory.actual_box.isVisible(), timeout=10000)
    with qtbot.waitSignal(win.vm.launch.ended, timeout=30000):
        win.act_stop.trigger()
    assert not win.vm.engine_running()
    assert win.status.status_text.text() == "Stopped"
    assert not win.status.url_label.isVisible()
    assert win.launch_card.launch_button.isEnabled(), "after a stop the model can be launched again"


@pytest.mark.engine
def test_forced_fallback_shows_the_banner(qtbot, window, engine, tmp_path: Path) -> None:
    d = tmp_path / "fallback"
    target = TinyModel(name="tiny-llama")
    write_tiny_model(d / "tiny-llama-F32.gguf", target)
    # An auto companion (family prefix + "draft") that the engine cannot load.
    broken_draft(d / "tiny-llama-draft.gguf", target)
    win = window(Settings(model_folders=[str(d)]), engine=engine)
    choose(qtbot, win, "tiny-llama-F32")
    assert "tiny-llama-draft.gguf" in win.advanced.command.toPlainText()
    with qtbot.waitSignal(win.vm.launch.became_ready, timeout=90000):
        win.launch_card.launch_button.click()
    assert win.banner.isVisible()
    text = win.banner.text.text()
    assert text == "The engine could not start with tiny-llama-draft.gguf, so it was started again without speculation."
    assert win.vm.launch.fallback_reason
    # Remembered: the next plan for this engine leaves the drafter out without crashing first.
    from draftwise.core.speculation.broken import BrokenDrafters

    assert any("tiny-llama-draft.gguf" in key for key in BrokenDrafters().broken_for(engine.binary))
    qtbot.waitUntil(lambda: "tiny-llama-draft.gguf" not in win.advanced.command.toPlainText(), timeout=10000)
    assert "fail before" in win.speculation.notes.text() + win.speculation.decision.text()


def test_switching_to_japanese_changes_visible_strings(qtbot, window) -> None:
    win = window()
    choose(qtbot, win, "tiny-llama-F32")
    before = (win.launch_card.launch_button.text(), win.speculation.title.text(), win.menu_file.title(), win.status.status_text.text())
    try:
        win.advanced.lang_combo.setCurrentIndex(win.advanced.lang_combo.findData("ja"))
        qtbot.waitUntil(lambda: win.launch_card.launch_button.text() != before[0], timeout=5000)
        after = (win.launch_card.launch_button.text(), win.speculation.title.text(), win.menu_file.title(), win.status.status_text.text())
        assert all(a != b for a, b in zip(after, before, strict=True)), after
        assert win.vm.settings.language == "ja"
        header = win.vm.library.model.headerData(0, Qt.Orientation.Horizontal)
        assert header != "Name"
    finally:
        win.vm.set_language("en")
    assert win.launch_card.launch_button.text() == "Launch"


def test_corrupt_settings_file_is_set_aside_and_reported(qtbot, tmp_path: Path) -> None:
    from draftwise.core import settings as st

    path = tmp_path / "config" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"model_folders": [', encoding="utf-8")
    vm = AppViewModel(st.load(), persist=True)
    vm.engine.set_engines([engine_choice()])
    win = MainWindow(vm)
    qtbot.addWidget(win)
    win.show()
    vm.start(detect_engines=False, probe=False, scan=False)
    qtbot.waitUntil(win.banner.isVisible, timeout=5000)
    aside = list(path.parent.glob("settings.json.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_text() == '{"model_folders": ['
    assert aside[0].name in win.banner.text.text()
    # It stays through status refreshes until the user dismisses it.
    win.refresh_status()
    assert win.banner.isVisible() and win.banner.dismiss.isVisible()
    qtbot.mouseClick(win.banner.dismiss, Qt.MouseButton.LeftButton)
    assert not win.banner.isVisible()
    # Saving writes a fresh, valid file.
    assert vm.save_settings() is None and st.load().problem is None


def test_drop_a_gguf_opens_it(qtbot, window, tmp_path: Path) -> None:
    win = window(Settings())
    loose = write_tiny_model(tmp_path / "dropped-F32.gguf", TinyModel(name="dropped"))[0]
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(loose))])
    ev = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                    Qt.KeyboardModifier.NoModifier)
    with qtbot.waitSignal(win.vm.outcome_changed, timeout=20000):
        win.dropEvent(ev)
    assert win.header.title.text() == "dropped-F32"
    qtbot.waitUntil(lambda: win.vm.library.model.row_of(loose) is not None, timeout=10000)
    assert str(loose) in win.vm.settings.model_files


def test_shortcuts_and_accessible_names(qtbot, window) -> None:
    win = window()
    assert win.act_open.shortcut().toString() == "Ctrl+O"
    assert win.act_launch.shortcut().toString() == "Ctrl+L"
    assert win.act_stop.shortcut().toString() == "Ctrl+."
    unnamed = [w.objectName() or type(w).__name__
               for cls in (QAbstractButton, QLineEdit, QComboBox, QSlider)
               for w in win.findChildren(cls)
               if w.isVisibleTo(win) and not w.accessibleName() and not (isinstance(w, QAbstractButton) and w.text())
               and w.parent() is not None and type(w.parent()).__name__ not in ("QComboBox", "QLineEdit")]
    assert not unnamed, unnamed


def test_closing_with_a_running_engine_asks(qtbot, window, monkeypatch, tmp_path: Path) -> None:
    from test_viewmodels import FakeProcess

    win = window()
    win.vm.launch.factory = lambda spec, parent: FakeProcess(spec, parent)
    choose(qtbot, win, "tiny-llama-F32")
    assert win.vm.do_launch()
    asked: list[str] = []
    monkeypatch.setattr(win, "ask_close", lambda: asked.append("x") or "cancel")
    win.close()
    assert asked and win.isVisible() and win.vm.engine_running(), "cancel keeps the window and the engine"
    monkeypatch.setattr(win, "ask_close", lambda: "stop")
    win.close()
    assert not win.isVisible() and not win.vm.engine_running()


def test_closing_waits_for_the_engine_to_stop(qtbot, window) -> None:
    """The stop is asynchronous (QProcess reports the exit later): closing the window asks
    the engine to stop and returns only once it has."""
    from test_viewmodels import FakeProcess

    win = window()
    made: list[FakeProcess] = []
    win.vm.launch.factory = lambda spec, parent: made.append(FakeProcess(spec, parent, stop_ms=300)) or made[-1]
    choose(qtbot, win, "tiny-llama-F32")
    assert win.vm.do_launch()
    made[0].ready(win.vm.launch.base_url())
    assert win.vm.engine_running()
    win.close()
    assert made[0].stop_asked and made[0].ended, "close returned before the engine had stopped"
    assert not win.isVisible() and not win.vm.engine_running() and win.vm.launch.state == "stopped"


@pytest.mark.engine
def test_closing_the_window_stops_the_real_engine(qtbot, window, engine) -> None:
    import psutil

    from process_checks import gone

    win = window(engine=engine)
    choose(qtbot, win, "tiny-llama-F32")
    qtbot.waitUntil(win.launch_card.launch_button.isEnabled, timeout=10000)
    with qtbot.waitSignal(win.vm.launch.became_ready, timeout=90000):
        win.launch_card.launch_button.click()
    pid = win.vm.launch.process.pid
    assert pid and psutil.pid_exists(pid)
    win.close()
    assert not win.isVisible() and not win.vm.engine_running()
    assert gone(pid)


def test_screenshot_command_writes_a_png(tmp_path: Path, folder: Path) -> None:
    out = tmp_path / "shot.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "DRAFTWISE_CONFIG_DIR": str(tmp_path / "c")}
    r = subprocess.run([sys.executable, "-m", "draftwise.gui", "--screenshot", str(out), "--model",
                        str(folder / "tiny-llama-F32.gguf"), "--size", "900x600"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    from PySide6.QtGui import QImage

    img = QImage(str(out))
    assert (img.width(), img.height()) == (900, 600)
    assert not (tmp_path / "c" / "settings.json").exists(), "a screenshot never touches the user's settings"


def test_library_columns_speculation_off_and_context_reset(qtbot, window) -> None:
    from draftwise.viewmodels.library import COL

    win = window()
    hh = win.library.table.horizontalHeader()
    assert all(hh.isSectionHidden(COL[k]) for k in ("arch", "quant", "ctx"))
    assert hh.visualIndex(COL["fit"]) == 1
    win.resize(1024, 640)
    qtbot.waitUntil(lambda: hh.sectionSize(COL["name"]) >= 180, timeout=5000)
    choose(qtbot, win, "tiny-llama-F32")
    assert win.speculation.draft_edit.isEnabled()
    with qtbot.waitSignal(win.vm.outcome_changed, timeout=10000):
        win.speculation.mtp_off.setChecked(True)
    assert not win.speculation.draft_edit.isEnabled() and not win.speculation.draft_browse.isEnabled()
    with qtbot.waitSignal(win.vm.outcome_changed, timeout=10000):
        win.memory.ctx_slider.setValue(0)
    assert win.memory.ctx_auto.isVisible() and win.memory.ctx_auto.text() == "Reset to auto" and not win.memory.ctx_auto.isFlat()
    # Launch stays reachable in a small window: it is outside the scroll area.
    win.resize(800, 560)
    qtbot.wait(50)
    assert win.launch_card.launch_button.isVisible() and win.launch_card.visibleRegion().boundingRect().height() > 0
