"""The real window launched on the real engine: the one path a window test with a running
model starts from (the chat and vision tests)."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt

from draftwise.core.engines import capabilities
from draftwise.core.settings import LoadResult, Settings


def launched_window(qtbot, engine, model: Path, *, ready_timeout: int = 60_000):
    """(AppViewModel, MainWindow) with `model` opened and Launch clicked until it is ready."""
    from draftwise.ui.main_window import MainWindow
    from draftwise.viewmodels.app import AppViewModel
    from draftwise.viewmodels.engine import EngineChoice

    s = Settings(model_files=[str(model)])
    s.close_action = "stop"
    vm = AppViewModel(LoadResult(s, Path(os.devnull)), persist=False)
    vm.engine.set_engines([EngineChoice("llama.cpp", engine.binary, engine.backend, engine.version, engine.source,
                                        "", capabilities.capabilities(engine.binary))])
    win = MainWindow(vm)
    qtbot.addWidget(win)
    win.resize(1200, 800)
    win.show()
    vm.start(detect_engines=False, probe=False, scan=False, reopen_last=False, stop_orphans=False)
    vm.open_model(model)
    qtbot.waitUntil(win.launch_card.launch_button.isEnabled, timeout=20_000)
    with qtbot.waitSignal(vm.launch.became_ready, timeout=ready_timeout):
        qtbot.mouseClick(win.launch_card.launch_button, Qt.MouseButton.LeftButton)
    return vm, win
