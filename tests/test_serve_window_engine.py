"""The window's "Serve my models" card on the real engine: two tiny models in a library
folder served from the card; both listed with their state (one loaded after a request by
its name, the other not loaded), the reply, the last request's figures from the engine's own
lines, the copy lines, and Stop.

No fake engine: the provisioned llama-server on tiny real models (app/draftwise/testing).
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from draftwise.core.engines import capabilities
from draftwise.core.launch import headless
from draftwise.core.launch.outcome import READY, STOPPED
from draftwise.core.serving import instances
from draftwise.core.settings import LoadResult, Settings
from test_serve_engine import lib  # noqa: F401  (alpha with its drafter, and beta: the same library)

pytestmark = [pytest.mark.engine, pytest.mark.skipif(sys.platform == "win32", reason="the Job Object covers Windows")]


def _cells(table, column: int) -> dict[str, str]:
    return {table.item(r, 0).text(): table.item(r, column).text() for r in range(table.rowCount())}


def test_the_card_serves_two_models_shows_their_states_and_one_answers_by_name(qtbot, engine, lib,  # noqa: F811
                                                                              described_machine):
    from draftwise.ui.main_window import MainWindow
    from draftwise.viewmodels.app import AppViewModel
    from draftwise.viewmodels.engine import EngineChoice

    s = Settings(model_folders=[str(lib)])
    s.close_action = "stop"
    vm = AppViewModel(LoadResult(s, Path(os.devnull)), persist=False)
    vm.engine.set_engines([EngineChoice("llama.cpp", engine.binary, engine.backend, engine.version, engine.source,
                                        "", capabilities.capabilities(engine.binary))])
    vm.set_machine(described_machine)
    win = MainWindow(vm)
    qtbot.addWidget(win)
    win.resize(1200, 800)
    win.show()
    vm.start(detect_engines=False, probe=False, scan=False, reopen_last=False, stop_orphans=False)
    win.open_serve_page()
    card = win.serve_page.card
    qtbot.waitUntil(card.serve_button.isEnabled, timeout=20_000)
    qtbot.mouseClick(card.serve_button, Qt.MouseButton.LeftButton)

    serve = vm.serve
    qtbot.waitUntil(lambda: serve.ready and len(serve.instances) == 2, timeout=180_000)
    assert serve.outcome.stage == READY
    # The drafter beside alpha is its helper, not a model of its own.
    assert [r.id for r in serve.rows()] == ["alpha-F32", "beta-F32"]
    assert _cells(card.table, 1) == {"alpha-F32": "Not loaded", "beta-F32": "Not loaded"}
    assert _cells(card.table, 2) == {"alpha-F32": "draft model", "beta-F32": "none"}
    claude = card.client_rows["Claude Code"][1].text()
    assert claude == (f"ANTHROPIC_BASE_URL={serve.url} ANTHROPIC_AUTH_TOKEN={serve.api_key} claude --model "
                      f"alpha-F32")
    assert card.address.text() == serve.url and card.key.text() == serve.api_key

    # A request by name, off the GUI thread: the router loads alpha for it.
    answer: dict = {}

    def ask() -> None:
        answer["reply"] = headless.request(serve.url, serve.api_key, "/v1/completions",
                                           {"model": "alpha-F32", "prompt": "Hello", "max_tokens": 8}, 120.0)

    threading.Thread(target=ask, daemon=True).start()
    qtbot.waitUntil(lambda: "reply" in answer, timeout=150_000)
    status, body = answer["reply"]
    assert status == 200, body
    qtbot.waitUntil(lambda: serve.instances["alpha-F32"].state == instances.LOADED, timeout=10_000)
    assert serve.instances["beta-F32"].state == instances.UNLOADED
    assert _cells(card.table, 1) == {"alpha-F32": "Loaded", "beta-F32": "Not loaded"}
    # Its last request's figures, from its own `eval time` line forwarded by the router.
    qtbot.waitUntil(lambda: serve.live.of("alpha-F32").requests == 1, timeout=10_000)
    alpha = serve.live.of("alpha-F32")
    assert alpha.tokens_per_second is not None and alpha.tokens_per_second > 0
    assert _cells(card.table, 4)["alpha-F32"].endswith("% of drafts accepted")
    assert _cells(card.table, 4)["beta-F32"] == ""
    win.grab().save(os.environ.get("SERVE_SHOT", str(lib.parent / "serve.png")))

    # Closing the window to the tray keeps serving, as it keeps a launched engine.
    win.ask_close = lambda: "tray"
    win.close()
    assert not win.isVisible() and serve.running
    assert headless.request(serve.url, serve.api_key, "/health", None, 10.0)[0] == 200
    win.show()

    qtbot.mouseClick(card.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not serve.running, timeout=30_000)
    assert serve.outcome.stage == STOPPED
    assert card.serve_button.isVisible() and not card.lines_box.isVisible() and not card.table.isVisible()
    assert card.status.text() == "Not serving."
