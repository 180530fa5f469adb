"""From an empty home folder: the window's Get models against the loopback hub stand-in. The
starters are found on the hub and judged from their own headers, a repository's files are
judged before anything is downloaded (fit, context, planned total, speed, what drafts), and a
starter is got with the helper its verdict named, opened with speculation on and launched on
the real engine. Offline, the curated list says why."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from draftwise.core.machine.hardware import GB, Machine
from draftwise.core.settings import LoadResult, Settings
from draftwise.core.speculation.resolver import AUTO_COMPANION, AUTO_MTP
from draftwise.testing import tinymodels as tm
from draftwise.testing.hubstub import HubStub
from draftwise.ui.get_models_dialog import VERDICT_COL, GetModelsDialog
from draftwise.ui.main_window import MainWindow
from draftwise.viewmodels.app import AppViewModel

pytestmark = pytest.mark.timeout(180)
# The Gemma 3 4B starter and the family drafter the catalog names for it (catalog.GEMMA3_DRAFT).
MODEL_REPO, MODEL_FILE = "unsloth/gemma-3-4b-it-GGUF", "gemma-3-4b-it-Q4_K_M.gguf"
DRAFT_REPO, DRAFT_FILE = "unsloth/gemma-3-270m-it-GGUF", "gemma-3-270m-it-Q8_0.gguf"
# The Qwen3.5 0.8B starter, published with its MTP head (a tiny glm4moe with a nextn block).
MTP_REPO, MTP_FILE = "unsloth/Qwen3.5-0.8B-GGUF", "Qwen3.5-0.8B-Q4_K_M.gguf"
BROKEN_FILE = "Qwen3.5-0.8B-Q8_0.gguf"  # listed as a model, but no GGUF
BOX = Machine(ram_total=16 * GB, ram_available=12 * GB, described=True)
SPEED = re.compile(r"^about \d+ tokens a second here$")


def _home(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DRAFTWISE_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("DRAFTWISE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DRAFTWISE_MODELS_DIR", str(tmp_path / "Models"))
    monkeypatch.delenv("HF_TOKEN", raising=False)


def _titled_for(monkeypatch, files: dict[str, Path]) -> None:
    """The curated starters, those whose hint is a key of `files` titled for the stand-in file
    published under their names (its architecture, parameter count and blocks): a starter is
    offered only for a file of its title's size, and these files are tiny (tests/test_hub_judge.py
    checks the real geometries)."""
    from tests.test_hub_judge import sized_as

    from draftwise.core.hub import catalog

    monkeypatch.setattr(catalog, "STARTERS", tuple(sized_as(s, files[s.hint]) if s.hint in files else s
                                                   for s in catalog.STARTERS))


@pytest.fixture
def hub(tmp_path, monkeypatch):
    files = tmp_path / "hubfiles"
    target = tm.TinyModel(name="gemma-3-4b-it")
    tm.write_tiny_model(files / MODEL_FILE, target)
    tm.write_tiny_model(files / DRAFT_FILE, tm.draft_model(target))
    tm.write_tiny_model(files / MTP_FILE, tm.mtp_model())
    _titled_for(monkeypatch, {"gemma-3-4b-it": files / MODEL_FILE, "Qwen3.5-0.8B": files / MTP_FILE})
    with HubStub() as stub:
        stub.add_sparse(MODEL_REPO, MODEL_FILE, files / MODEL_FILE)
        stub.add_sparse(DRAFT_REPO, DRAFT_FILE, files / DRAFT_FILE)
        stub.add_sparse(MTP_REPO, MTP_FILE, files / MTP_FILE)
        stub.add_file(MTP_REPO, BROKEN_FILE, b"<html>not a model</html>" * 100)
        monkeypatch.setenv("HF_ENDPOINT", stub.url)
        _home(tmp_path, monkeypatch)
        yield stub


def _empty_window(qtbot, engine=None) -> MainWindow:
    from tests.test_window import engine_choice

    s = Settings()  # a first start: no folders, no models
    s.close_action = "stop"
    vm = AppViewModel(LoadResult(s, Path(os.devnull)), persist=False)
    vm.engine.set_engines([engine_choice(engine)])
    win = MainWindow(vm)
    qtbot.addWidget(win)
    win.resize(1200, 800)
    win.show()
    vm.start(detect_engines=False, reopen_last=False, probe=False)
    vm.set_machine(BOX)
    return win


def _open(qtbot, win: MainWindow, *, judged: bool = True) -> GetModelsDialog:
    assert win.library.empty.isVisible() and "Get models" in win.library.empty.text()
    qtbot.mouseClick(win.library.get_models, Qt.MouseButton.LeftButton)
    dialog = win._get_models_dialog
    assert isinstance(dialog, GetModelsDialog) and dialog.isVisible()
    qtbot.waitUntil(lambda: dialog.vm.rate is not None and not dialog.vm.finding, timeout=30000)
    return dialog


def _titles(dialog: GetModelsDialog) -> list[str]:
    return [dialog.starters.item(i).data(Qt.ItemDataRole.UserRole) for i in range(dialog.starters.count())]


def _row(dialog: GetModelsDialog, name: str) -> int:
    return next(r for r in range(dialog.files.rowCount()) if dialog.files.item(r, 0).data(Qt.ItemDataRole.UserRole)
                == name)  # fmt: skip


def _cells(dialog: GetModelsDialog, row: int) -> list[str]:
    return [dialog.files.item(row, c).text() for c in range(dialog.files.columnCount())]


def _get_starter(qtbot, win: MainWindow, tmp_path: Path) -> GetModelsDialog:
    dialog = _open(qtbot, win)
    # Found on the hub and judged from their headers: the two the stand-in publishes; the rest
    # are left out, and the note says so (the tooltip says why, per starter).
    assert sorted(_titles(dialog)) == ["Gemma 3 4B", "Qwen3.5 0.8B"]
    assert all(o.verdict is not None and o.verdict.error is None for o in dialog.vm.offers)
    assert dialog.starters_note.text() == "7 more were not offered (hover for why)."
    assert "Qwen3.5 9B was not found on the hub." in dialog.starters_note.toolTip()
    lines = {t: dialog.starters.item(i).text().splitlines() for i, t in enumerate(_titles(dialog))}
    assert re.fullmatch(r"About \d+ tokens a second here\.", lines["Gemma 3 4B"][2])
    assert lines["Qwen3.5 0.8B"][3] == "Fits · 4k context · Drafts itself"
    assert lines["Gemma 3 4B"][3] == "Fits · 4k context · Faster with its helper gemma-3-270m-it-Q8_0"
    item = dialog.starters.item(_titles(dialog).index("Gemma 3 4B"))
    assert "It would run on the processor." in item.toolTip() and MODEL_FILE in item.toolTip()
    # Chosen: its verdict is the one row, at once (nothing asked of the hub again).
    dialog.starters.setCurrentItem(item)
    assert dialog.files.rowCount() == 1
    fit, ctx, planned, speed, drafting = _cells(dialog, 0)[VERDICT_COL:]
    assert (fit, ctx, drafting) == ("Fits", "4k context", "Faster with its helper gemma-3-270m-it-Q8_0")
    assert SPEED.match(speed) and planned.endswith("MiB")
    assert "Judged from its header" in dialog.files.item(0, VERDICT_COL).toolTip()
    assert "Draft model found beside the model" in dialog.files.item(0, VERDICT_COL + 4).toolTip()
    assert dialog.drafter.isVisible() and dialog.drafter.isChecked()
    assert dialog.drafter.text().startswith(f"Get the draft model too: {DRAFT_FILE} (")
    # A double click on the starter downloads it, with the helper its verdict named.
    rect = dialog.starters.visualItemRect(item)
    with qtbot.waitSignal(dialog.vm.downloaded, timeout=30000):
        # A real double click: press and release, then the second press (QTest's alone sends no first press).
        qtbot.mouseClick(dialog.starters.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        qtbot.mouseDClick(dialog.starters.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    folder = tmp_path / "Models" / "unsloth" / "gemma-3-4b-it-GGUF"
    assert (folder / MODEL_FILE).is_file() and (folder / DRAFT_FILE).is_file()
    assert dialog.status.text() == f"Downloaded {MODEL_FILE} and its helper {DRAFT_FILE}."
    return dialog


def test_first_start_gets_a_starter_and_its_drafter_and_speculation_is_on(qtbot, hub, tmp_path):
    win = _empty_window(qtbot)
    _get_starter(qtbot, win, tmp_path)
    vm = win.vm
    assert str(tmp_path / "Models") in vm.library.folders
    qtbot.waitUntil(lambda: vm.outcome is not None and vm.outcome.decision is not None, timeout=20000)
    assert vm.model.path.name == MODEL_FILE
    assert vm.outcome.decision.source == AUTO_COMPANION, vm.outcome.decision.notes
    assert vm.outcome.decision.draft.name == DRAFT_FILE
    assert DRAFT_FILE in vm.command_text() and "--spec-type" in vm.command_text()
    # The drafter Draftwise fetched is a helper in the library's Use column (issue 20).
    from draftwise.viewmodels.library import COL

    qtbot.waitUntil(lambda: vm.library.model.row_of(vm.outcome.decision.draft) is not None, timeout=20000)
    lib = vm.library.model
    row = lib.row_of(vm.outcome.decision.draft)
    assert lib.data(lib.index(row, COL["kind"])) == "helper"


def test_a_listing_is_judged_file_by_file_before_download(qtbot, hub, tmp_path):
    """A repository from the search: each file judged from its header, in words; one that is
    no GGUF says why; an MTP model offers no helper and lands alone, and opens drafting itself."""
    win = _empty_window(qtbot)
    dialog = _open(qtbot, win)
    dialog.query.setText("Qwen3.5-0.8B")
    qtbot.mouseClick(dialog.search_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.hits.count() == 1, timeout=10000)
    dialog.hits.setCurrentRow(0)
    qtbot.waitUntil(lambda: dialog.files.rowCount() == 2, timeout=10000)
    qtbot.waitUntil(lambda: not dialog.vm.pending(dialog.vm.models[0]), timeout=30000)
    good, broken = _row(dialog, MTP_FILE), _row(dialog, BROKEN_FILE)
    fit, ctx, planned, speed, drafting = _cells(dialog, good)[VERDICT_COL:]
    assert (fit, ctx, drafting) == ("Fits", "4k context", "Drafts itself")
    assert SPEED.match(speed) and planned.endswith("MiB")
    assert "MTP head found in the model" in dialog.files.item(good, VERDICT_COL + 4).toolTip()
    said = dialog.files.item(broken, VERDICT_COL).text()
    assert said.startswith("Not judged: ") and "cannot be read as a GGUF model" in said
    assert dialog.files.columnSpan(broken, VERDICT_COL) == dialog.files.columnCount() - VERDICT_COL
    assert dialog.files.currentRow() == good  # the Q4 that fits is chosen
    assert not dialog.drafter.isVisible()  # it drafts itself: nothing comes beside it
    assert dialog.download_button.isEnabled()
    with qtbot.waitSignal(dialog.vm.downloaded, timeout=30000):
        qtbot.mouseClick(dialog.download_button, Qt.MouseButton.LeftButton)
    folder = tmp_path / "Models" / "unsloth" / "Qwen3.5-0.8B-GGUF"
    assert sorted(p.name for p in folder.iterdir()) == [MTP_FILE]
    assert dialog.status.text() == f"Downloaded {MTP_FILE}."
    vm = win.vm
    qtbot.waitUntil(lambda: vm.outcome is not None and vm.outcome.decision is not None, timeout=20000)
    assert vm.outcome.decision.source == AUTO_MTP, vm.outcome.decision.notes


def test_without_the_draft_model_only_the_model_lands(qtbot, hub, tmp_path):
    win = _empty_window(qtbot)
    dialog = _open(qtbot, win)
    dialog.vm.open_repo(MODEL_REPO)  # the listing, judged: the family drafter from its own repository
    qtbot.waitUntil(lambda: dialog.drafter.isVisible(), timeout=30000)
    assert _cells(dialog, 0)[-1] == "Faster with its helper gemma-3-270m-it-Q8_0"
    dialog.drafter.setChecked(False)
    with qtbot.waitSignal(dialog.vm.downloaded, timeout=30000):
        qtbot.mouseClick(dialog.download_button, Qt.MouseButton.LeftButton)
    folder = tmp_path / "Models" / "unsloth" / "gemma-3-4b-it-GGUF"
    assert sorted(p.name for p in folder.iterdir()) == [MODEL_FILE]
    assert dialog.status.text() == f"Downloaded {MODEL_FILE}."


def test_offline_the_curated_list_says_why_and_a_starter_searches_its_name(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens on the discard port
    _home(tmp_path, monkeypatch)
    win = _empty_window(qtbot)
    dialog = _open(qtbot, win)
    note = dialog.starters_note.text()
    assert note.startswith("The model hub could not be reached, so these are Draftwise's own suggestions, "
                           "judged from their usual sizes: Could not reach the model hub")
    assert dialog.starters_note.isVisible()
    assert dialog.starters.count() >= 3 and all(o.verdict is None for o in dialog.vm.offers)
    first = dialog.starters.item(0).text().splitlines()
    assert len(first) == 3 and first[2].startswith("About ")  # curated speed; no verdict line
    offer = dialog.vm.offers[1]
    dialog.starters.setCurrentRow(1)
    assert dialog.query.text() == offer.starter.hint
    qtbot.waitUntil(lambda: "Could not reach the model hub" in dialog.status.text(), timeout=15000)
    assert dialog.files.rowCount() == 0


def test_before_the_rate_is_known_the_curated_list_waits_in_memory_order(qtbot, tmp_path, monkeypatch):
    import threading

    from draftwise.core.launch import speed_probe
    from draftwise.core.machine import speed
    from draftwise.services.library_scan import TaskRunner
    from draftwise.viewmodels.get_models import GetModelsViewModel

    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    _home(tmp_path, monkeypatch)
    go = threading.Event()

    def slow_probe(binary=None, measure=True):
        go.wait(20)
        return speed.Throughput(20e9, "described", 4)

    monkeypatch.setattr(speed_probe, "throughput", slow_probe)
    runner = TaskRunner()
    vm = GetModelsViewModel(runner, BOX, tmp_path / "Models")
    dialog = GetModelsDialog(vm)
    qtbot.addWidget(dialog)
    # The curated ranking with every starter counted readable: the ones that draft themselves
    # first, each group largest first (starters.rank), whatever this computer's speed.
    from draftwise.core.hub import starters

    drafting = [o.size for o in vm.offers if starters.drafts_itself(o)]
    others = [o.size for o in vm.offers if not starters.drafts_itself(o)]
    assert [starters.drafts_itself(o) for o in vm.offers] == [True] * len(drafting) + [False] * len(others)
    assert drafting == sorted(drafting, reverse=True) and others == sorted(others, reverse=True)
    assert vm.judge is None
    assert all(dialog.starters.item(i).text().endswith("Measuring how fast this computer runs models…")
               for i in range(dialog.starters.count()))
    go.set()
    qtbot.waitUntil(lambda: vm.rate is not None and not vm.finding, timeout=20000)
    assert vm.judge is not None and vm.offline.startswith("The model hub could not be reached")
    assert dialog.starters.item(0).text().splitlines()[2].startswith("About ")
    runner.wait(10000)


def test_a_speed_measured_on_a_busy_computer_says_so(qtbot, tmp_path, monkeypatch):
    """Issue 28: a probe taken under load ranked every starter "about 0.2-0.6 tokens a second"
    without a word; the figure is not kept, and the dialog says why the speeds may be low."""
    from draftwise.core.machine import speed
    from draftwise.services.library_scan import TaskRunner
    from draftwise.viewmodels.get_models import GetModelsViewModel

    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    _home(tmp_path, monkeypatch)
    runner = TaskRunner()
    vm = GetModelsViewModel(runner, BOX, tmp_path / "Models", rate=speed.Throughput(3.4e9, "engine", 2, busy=True))
    dialog = GetModelsDialog(vm)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: not vm.finding, timeout=20000)
    dialog.refresh()
    note = dialog.starters_note.text()
    assert note.startswith("This computer was busy when its speed was measured, so these speeds may be low")
    assert "The model hub could not be reached" in note
    quiet = GetModelsViewModel(runner, BOX, tmp_path / "Models", rate=speed.Throughput(3.4e9, "engine", 2))
    qtbot.waitUntil(lambda: not quiet.finding, timeout=20000)
    assert "busy" not in quiet.starters_note()[0]
    # A figure measured but not kept (issue 36: the speed record's write error) is said in the same place.
    unkept = GetModelsViewModel(runner, BOX, tmp_path / "Models",
                                rate=speed.Throughput(3.4e9, "engine", 2, not_kept="No space left on device"))
    qtbot.waitUntil(lambda: not unkept.finding, timeout=20000)
    assert unkept.starters_note()[0].startswith(
        "This computer's speed was measured but could not be kept (No space left on device); the speeds use it for "
        "now, and Draftwise measures again next time.")
    runner.wait(10000)


def test_without_any_rate_files_say_so_and_still_download(qtbot, hub, tmp_path, monkeypatch):
    """The engine probe and the memory scan both fail: nothing can be judged, every row says
    why, and a file can still be downloaded (alone: no verdict named a drafter)."""
    from draftwise.core.launch import speed_probe
    from draftwise.core.machine import speed
    from draftwise.services.library_scan import TaskRunner
    from draftwise.viewmodels.get_models import GetModelsViewModel

    def fail(*_a, **_k):
        raise OSError("no clock")

    monkeypatch.setattr(speed_probe, "throughput", fail)
    monkeypatch.setattr(speed, "memory_throughput", fail)
    runner = TaskRunner()
    vm = GetModelsViewModel(runner, BOX, tmp_path / "Models")
    dialog = GetModelsDialog(vm)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: bool(vm.no_rate), timeout=10000)
    vm.open_repo(MODEL_REPO)
    qtbot.waitUntil(lambda: dialog.files.rowCount() == 1, timeout=10000)
    assert dialog.files.item(0, VERDICT_COL).text() == (
        "Not judged: this computer's speed could not be measured (no clock)")
    assert dialog.download_button.isEnabled() and not dialog.drafter.isVisible()
    with qtbot.waitSignal(vm.downloaded, timeout=30000):
        qtbot.mouseClick(dialog.download_button, Qt.MouseButton.LeftButton)
    assert sorted(p.name for p in (tmp_path / "Models" / "unsloth" / "gemma-3-4b-it-GGUF").iterdir()) == [MODEL_FILE]
    runner.wait(10000)


@pytest.mark.engine
def test_the_downloaded_starter_launches_with_its_drafter(qtbot, hub, tmp_path, engine):
    win = _empty_window(qtbot, engine)
    _get_starter(qtbot, win, tmp_path)
    vm = win.vm
    qtbot.waitUntil(lambda: vm.can_launch(), timeout=20000)
    with qtbot.waitSignal(vm.launch.became_ready, timeout=90000):
        vm.do_launch()
    assert DRAFT_FILE in " ".join(vm.launch.spec.argv)
    with qtbot.waitSignal(vm.launch.ended, timeout=30000):
        vm.do_stop()


# ------------------------------------------------------------------ the Gemma 3 starter, real
GEMMA_REPO, GEMMA_FILE = "unsloth/gemma-3-4b-it-GGUF", "gemma-3-4b-it-Q4_K_M.gguf"
GEMMA_DRAFT_REPO, GEMMA_DRAFT_FILE = "unsloth/gemma-3-270m-it-GGUF", "gemma-3-270m-it-Q4_K_M.gguf"


@pytest.fixture
def gemma_hub(tmp_path, monkeypatch):
    """The starter's two repositories: a "4B" with the real 4B vocabulary (262,208 ids) built
    from the real 270M's weights, and the real 270M Q4_K_M as its drafter (the family's Q8_0
    is not there, so its repository's other file is taken: catalog.pick)."""
    from draftwise.testing import realmodels, realvocab

    try:
        target, draft = realvocab.gemma3_4b_standin(), realmodels.gemma3_270m()
    except RuntimeError as exc:
        pytest.skip(f"the real Gemma 3 270M is not at hand: {exc}")
    _titled_for(monkeypatch, {"gemma-3-4b-it": target})  # the 270M's blocks with the 4B's vocabulary
    with HubStub() as stub:
        stub.add_sparse(GEMMA_REPO, GEMMA_FILE, target)
        stub.add_sparse(GEMMA_DRAFT_REPO, GEMMA_DRAFT_FILE, draft)
        monkeypatch.setenv("HF_ENDPOINT", stub.url)
        _home(tmp_path, monkeypatch)
        yield stub


@pytest.mark.engine
@pytest.mark.timeout(900)
def test_the_gemma_3_starter_launches_with_its_drafter_and_drafts(qtbot, gemma_hub, tmp_path, engine):
    """Done when (issue 18): from an empty home, the Gemma 3 starter and its drafter, got in
    the window, launch with speculation on, the 64 ids only the 4B has banned, and the engine
    drafts: accepted tokens from its own counters."""
    import json

    from draftwise.core.launch import headless

    win = _empty_window(qtbot, engine)
    dialog = _open(qtbot, win)
    offer = next(o for o in dialog.vm.offers if o.starter.title == "Gemma 3 4B")
    assert offer.verdict is not None and offer.verdict.drafter_model is not None, offer.verdict
    assert offer.verdict.drafter_model.name == GEMMA_DRAFT_FILE
    dialog.starters.setCurrentRow(dialog.vm.offers.index(offer))
    assert dialog.drafter.isVisible() and dialog.drafter.isChecked()
    with qtbot.waitSignal(dialog.vm.downloaded, timeout=600000):
        qtbot.mouseClick(dialog.download_button, Qt.MouseButton.LeftButton)
    folder = tmp_path / "Models" / "unsloth" / "gemma-3-4b-it-GGUF"
    assert (folder / GEMMA_FILE).is_file() and (folder / GEMMA_DRAFT_FILE).is_file()
    vm = win.vm
    qtbot.waitUntil(lambda: vm.outcome is not None and vm.outcome.decision is not None, timeout=60000)
    decision = vm.outcome.decision
    assert decision.source == AUTO_COMPANION and decision.draft.name == GEMMA_DRAFT_FILE, decision.notes
    assert decision.bans == tuple(range(262144, 262208))
    assert "262144–262207" in win.speculation.notes.text()  # the card says what is banned
    qtbot.waitUntil(lambda: vm.can_launch(), timeout=60000)
    with qtbot.waitSignal(vm.launch.became_ready, timeout=300000):
        vm.do_launch()
    spec = vm.launch.spec
    argv = list(spec.argv)
    assert GEMMA_DRAFT_FILE in " ".join(argv) and "--spec-type" in argv
    assert argv.count("-l") == 64 and "262144-inf" in argv and "262207-inf" in argv
    status, raw = headless.request(spec.url, spec.api_key, "/completion",
                                   {"prompt": "The capital of France is", "n_predict": 24, "temperature": 0}, 300)
    assert status == 200
    timings = json.loads(raw)["timings"]
    status, metrics = headless.request(spec.url, spec.api_key, "/metrics", None, 10)
    accepted = re.search(r"^llamacpp:spec_decode_num_accepted_tokens_total (\S+)$", metrics.decode(), re.M)
    assert timings.get("draft_n_accepted", 0) > 0 and accepted and float(accepted.group(1)) > 0, timings
    with qtbot.waitSignal(vm.launch.ended, timeout=30000):
        vm.do_stop()
