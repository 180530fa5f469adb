"""The library's speculation words: "draft" on drafter files, "+ drafter" on models that have
one beside them, "MTP" for a built-in head, and base models marked as continuing text."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from draftwise.core.gguf import reader as gguf
from draftwise.core.speculation import tags
from draftwise.testing.tinymodels import TinyModel, draft_model, mtp_model, write_tiny_model
from draftwise.viewmodels.library import COL, COMPANION_TAG, DRAFT_TAG, LibraryModel, LibraryRow


def _rows(folder: Path, files: dict[str, TinyModel]) -> list[LibraryRow]:
    rows = []
    for name, m in files.items():
        write_tiny_model(folder / name, m)
        rows.append(LibraryRow(folder / name, gguf.read_model(folder / name)))
    return rows


def test_drafter_files_and_their_targets_are_tagged(tmp_path, qtbot):
    target = TinyModel(name="qwen2.5-1.5b-instruct", n_embd=128, n_layer=4)
    rows = _rows(tmp_path, {
        "qwen2.5-1.5b-instruct-q4_k_m.gguf": target,
        "qwen2.5-0.5b-instruct-q8_0.gguf": draft_model(target),
        "lonely-7b-q4_0.gguf": TinyModel(name="lonely", vocab="other"),
    })
    (tmp_path / "mtp").mkdir()
    rows += _rows(tmp_path / "mtp", {"glm-mtp.gguf": mtp_model()})
    model = LibraryModel()
    model.replace_all(rows)
    shown = {r.path.name: model.data(model.index(i, COL["mtp"])) for i, r in enumerate(model.rows)}
    assert shown["qwen2.5-1.5b-instruct-q4_k_m.gguf"] == COMPANION_TAG
    assert shown["lonely-7b-q4_0.gguf"] == ""
    assert shown["glm-mtp.gguf"] == "MTP"
    # The small Qwen is a drafter only by size and family, not by its tensors: beside its big
    # sibling it is that model's helper (issue 20), and says so, not "continues text".
    kinds = {r.path.name: model.data(model.index(i, COL["kind"])) for i, r in enumerate(model.rows)}
    assert shown["qwen2.5-0.5b-instruct-q8_0.gguf"] == DRAFT_TAG == "draft"
    assert kinds["qwen2.5-0.5b-instruct-q8_0.gguf"] == "helper"
    assert kinds["qwen2.5-1.5b-instruct-q4_k_m.gguf"] == "continues text"  # tiny models have no chat template
    assert kinds["lonely-7b-q4_0.gguf"] == "continues text"
    # A file named as a draft is one by its name alone.
    write_tiny_model(tmp_path / "x-draft.gguf", draft_model(target))
    assert tags.is_drafter(gguf.read_model(tmp_path / "x-draft.gguf"))


def test_a_drafter_fetched_for_a_model_is_its_helper(tmp_path, qtbot):
    """Get models' "draft model too" records what it fetched: that file is a helper even
    where the folder and family rule would not pair it (another name, another folder)."""
    from draftwise.core.hub import helpers

    target = TinyModel(name="big", n_embd=128, n_layer=4)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    rows = _rows(tmp_path / "a", {"big-q4_k_m.gguf": target}) + _rows(tmp_path / "b", {"small.gguf": draft_model(target)})
    model = LibraryModel()
    model.replace_all(rows)
    assert model.data(model.index(1, COL["kind"])) == "continues text"
    helpers.remember(tmp_path / "b" / "small.gguf", tmp_path / "a" / "big-q4_k_m.gguf")
    model.replace_all(rows)  # a rescan reads the record again
    assert model.data(model.index(1, COL["kind"])) == "helper"
    assert model.data(model.index(1, COL["mtp"])) == DRAFT_TAG
    assert model.data(model.index(0, COL["kind"])) == "continues text"
    # A damaged record is set aside, and the label falls back to the folder rule.
    helpers.record_path().write_text("{broken")
    assert helpers.recorded() == {}
    assert list(helpers.record_path().parent.glob("helpers.json.corrupt-*"))


def test_model_count_is_singular_for_one(qtbot):
    from draftwise.services.library_scan import TaskRunner
    from draftwise.viewmodels.library import LibraryViewModel

    vm = LibraryViewModel(TaskRunner())
    vm.folders = ["/nowhere"]
    vm.model.replace_all([LibraryRow(Path("/nowhere/a.gguf"), None)])
    assert vm.status_text() == "1 model"
    vm.model.replace_all([LibraryRow(Path("/nowhere/a.gguf"), None), LibraryRow(Path("/nowhere/b.gguf"), None)])
    assert vm.status_text() == "2 models"


def test_the_speed_up_measured_here_shows_beside_the_tag(tmp_path, qtbot, monkeypatch):
    """The "Speed-up" column says what this computer measured once a measurement pays (the
    real Gemma 3 270M's recorded `draftwise measure`: ngram-simple 32, 2.76×, filed under a
    tiny model's path); a newer measurement that does not pay takes it away, and a refresh
    reads the record again."""
    import json
    from dataclasses import replace

    from draftwise.core.measurements import measured

    monkeypatch.setenv("DRAFTWISE_DATA_DIR", str(tmp_path / "data"))
    target = TinyModel(name="qwen2.5-1.5b-instruct", n_embd=128, n_layer=4)
    rows = _rows(tmp_path, {"big-q4_k_m.gguf": target, "big-draft.gguf": draft_model(target)})
    recorded = measured.Measurement.from_json(json.loads(
        (Path(__file__).parent / "data" / "learn" / "gemma-3-270m-measured.json").read_text(encoding="utf-8")))
    combo = measured.Combination(f"{tmp_path / 'big-q4_k_m.gguf'}|1|2", "ngram-simple", "engine|1|2", "m")
    records = measured.MeasuredRecords()
    records.record(replace(recorded, combination=combo))
    model = LibraryModel()
    model.replace_all(rows)
    shown = {r.path.name: model.data(model.index(i, COL["mtp"])) for i, r in enumerate(model.rows)}
    assert recorded.pays and f"{recorded.ratio:.2f}" == "2.76"
    assert shown == {"big-q4_k_m.gguf": "+ drafter · 2.76×", "big-draft.gguf": DRAFT_TAG}
    tip = model.data(model.index(0, COL["mtp"]), Qt.ItemDataRole.ToolTipRole)
    assert tip.endswith("Measured on this computer: 2.76× as fast with speculation")
    # Measured again later, within the noise: nothing to show.
    records.record(replace(recorded, combination=combo, noise=0.9, when="9999-01-01T00:00:00"))
    model.refresh_speedups()
    assert model.data(model.index(0, COL["mtp"])) == "+ drafter"
