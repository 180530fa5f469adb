"""View-models without widgets: library scan, details, speculation, plan, engine, launch,
logs, machine check, language. Background work is awaited with signals, never with sleep."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, QTimer, Signal

from draftwise.core.check.machine_check import CheckStep
from draftwise.core.engines import capabilities
from draftwise.core.launch import crash
from draftwise.core.launch.outcome import Stage
from draftwise.core.settings import LoadResult, ModelOverrides, Settings
from draftwise.testing.tinymodels import TinyModel, draft_model, mtp_model, write_tiny_model
from draftwise.viewmodels.app import AppViewModel
from draftwise.viewmodels.engine import EngineChoice
from draftwise.viewmodels.launch import LaunchViewModel
from draftwise.viewmodels.library import COL, FitRole, LibraryViewModel
from draftwise.viewmodels.logs import LogsViewModel, line_level
from draftwise.viewmodels.machine_check import MachineCheckViewModel
from draftwise.viewmodels.plan import context_steps, probe_machine
from draftwise.viewmodels.replan import split_args

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRAFTWISE_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("DRAFTWISE_DATA_DIR", str(tmp_path / "data"))


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("models")
    t = TinyModel()
    out = {
        "llama": write_tiny_model(d / "tiny-llama-F32.gguf", t)[0],
        "mtp": write_tiny_model(d / "sub" / "tiny-glm4moe-mtp-F32.gguf", mtp_model())[0],
        "other_vocab": write_tiny_model(d / "elsewhere" / "other-vocab.gguf", draft_model(t, vocab="other"))[0],
        "draft": write_tiny_model(d / "elsewhere" / "good-draft.gguf", draft_model(t))[0],
        # Heads of 32 values: quantized KV caches work (the default tiny model has 16).
        "wide": write_tiny_model(d / "wide" / "wide-heads.gguf", TinyModel(name="wide-heads", n_head=2, n_head_kv=2))[0],
    }
    shards = write_tiny_model(d / "split" / "tiny-split-F32.gguf", t, split_max_tensors=4)
    out["split"] = shards[0]
    out["split_count"] = len(shards)  # type: ignore[assignment]
    junk = d / "elsewhere" / "junk.gguf"
    junk.write_bytes(b"not a model at all")
    out["junk"] = junk
    out["root"] = d
    return out


def fake_engine() -> EngineChoice:
    return EngineChoice("llama.cpp", Path("/opt/fake/llama-server"), "cpu", "0.6.0", "test", "",
                        capabilities.pinned_caps())


def make_vm(settings: Settings | None = None, path: Path | None = None, **kw) -> AppViewModel:
    s = settings or Settings()
    vm = AppViewModel(LoadResult(s, path or Path("/nonexistent/settings.json")), persist=path is not None, **kw)
    vm.engine.set_engines([fake_engine()])
    return vm


def open_and_wait(qtbot, vm: AppViewModel, path: Path) -> None:
    vm.set_machine(probe_machine()) if vm.machine is None else None
    with qtbot.waitSignal(vm.outcome_changed, timeout=20000):
        vm.open_model(path)
    qtbot.waitUntil(lambda: not vm.replanning, timeout=20000)


# ------------------------------------------------------------------ logs
def test_logs_are_batched_bounded_and_filtered(qtbot) -> None:
    vm = LogsViewModel(max_lines=100)
    batches: list[list[str]] = []
    vm.lines_added.connect(batches.append)
    with qtbot.waitSignal(vm.lines_added, timeout=2000):
        for i in range(250):
            vm.append_line(f"0.00.000.{i:03d} {'E' if i % 50 == 0 else 'I'} srv line {i}")
    assert len(batches) == 1, "many lines, one batch for the view"
    assert len(vm.lines()) == 100 and vm.dropped == 150
    assert vm.lines()[-1].endswith("line 249")
    vm.set_level("errors")
    assert [line_level(x) for x in vm.visible_lines()] == ["E", "E"]
    vm.set_level("all")
    with qtbot.waitSignal(vm.reset, timeout=1000) as blocker:
        vm.set_filter("LINE 24")
    assert blocker.args[0] == [f"0.00.000.{i:03d} I srv line {i}" for i in range(240, 250)]
    assert vm.text().count("\n") == 10


def test_logs_save_and_clear(qtbot, tmp_path: Path) -> None:
    vm = LogsViewModel(max_lines=3)
    vm.append(["a", "b", "c", "d"])
    vm.set_filter("b")
    out = vm.save(tmp_path / "engine.log")
    text = out.read_text()
    assert "dropped" in text and text.rstrip().endswith("b\nc\nd"), "save writes the whole log, not the filter"
    vm.clear()
    assert vm.lines() == [] and vm.text() == ""


# ------------------------------------------------------------------ library
def test_library_scan_lists_models_shards_once_and_unreadable_files(qtbot, models) -> None:
    from draftwise.services.library_scan import TaskRunner

    lib = LibraryViewModel(TaskRunner())
    lib.machine = probe_machine()
    lib.set_sources([str(models["root"])], [])
    with qtbot.waitSignal(lib.scan_finished, timeout=20000):
        lib.rescan()
    names = sorted(r.name for r in lib.model.rows)
    assert models["split_count"] > 1
    assert names.count("tiny-split-F32") == 1, "a split model is one row"
    assert {"tiny-llama-F32", "tiny-glm4moe-mtp-F32", "junk"} <= set(names)
    junk = next(r for r in lib.model.rows if r.name == "junk")
    assert junk.info is None and "GGUF" in junk.error
    mtp_row = lib.model.row_of(models["mtp"])
    assert lib.model.index(mtp_row, COL["mtp"]).data() == "MTP"
    assert lib.model.index(mtp_row, COL["fit"]).data(FitRole) == "fits"
    assert lib.model.index(mtp_row, COL["arch"]).data() == "glm4moe"
    lib.set_search("glm4")
    assert lib.proxy.rowCount() == 1
    lib.set_search("")
    assert lib.proxy.rowCount() == len(names)
    # Removing the folder empties the table after the rescan.
    with qtbot.waitSignal(lib.scan_finished, timeout=20000):
        lib.remove_folder(str(models["root"]))
    assert lib.model.rowCount() == 0


def test_scan_never_blocks_and_a_new_scan_cancels_the_old(qtbot, models) -> None:
    from draftwise.services.library_scan import LibraryScanner

    scanner = LibraryScanner()
    finished: list[int] = []
    scanner.scan_finished.connect(lambda i, n, s: finished.append(i))
    first = scanner.scan([models["root"]])
    second = scanner.scan([models["root"]])
    qtbot.waitUntil(lambda: second in finished, timeout=20000)
    assert first not in finished, "results of a cancelled scan never arrive"
    scanner.runner.wait()


# ------------------------------------------------------------------ the app view-model
def test_choosing_a_model_fills_details_speculation_plan_and_command(qtbot, models) -> None:
    vm = make_vm()
    open_and_wait(qtbot, vm, models["mtp"])
    assert vm.details.title() == "tiny-glm4moe-mtp-F32"
    assert "glm4moe" in vm.details.subtitle()
    assert dict(vm.details.facts())["MTP head"] == "yes, built in"
    assert "helper built in (an MTP head)" in vm.speculation.headline()
    assert vm.plan.result is not None and vm.plan.result.devices
    assert "--spec-type draft-mtp" in vm.command_text()
    assert vm.launch_block_reason() is None


def test_mtp_off_removes_speculative_flags(qtbot, models) -> None:
    vm = make_vm()
    open_and_wait(qtbot, vm, models["mtp"])
    with qtbot.waitSignal(vm.outcome_changed, timeout=10000):
        vm.speculation.set_mtp("off")
    assert "--spec-type" not in vm.command_text()
    assert vm.speculation.headline() == "Speculation is off, as you chose."
    assert vm.settings.overrides_for(models["mtp"]).mtp == "off", "the choice is remembered per model"


@pytest.mark.parametrize("which, state, words", [
    ("missing", "missing", "does not exist; choose the file again."),
    ("junk", "not-gguf", "The draft model cannot be used: "),
    ("other_vocab", "vocab", "cannot draft for this model: token "),
    ("llama", "same-file", "is the model itself; choose a smaller draft model."),
])
def test_a_bad_draft_blocks_launch_with_the_reason(qtbot, models, tmp_path: Path, which: str, state: str,
                                                   words: str) -> None:
    """The field shows the resolver's own draft check, the one the command line refuses with."""
    vm = make_vm()
    open_and_wait(qtbot, vm, models["llama"])
    path = tmp_path / "missing.gguf" if which == "missing" else models[which]
    with qtbot.waitSignal(vm.outcome_changed, timeout=10000):
        vm.speculation.set_draft(str(path))
    check = vm.speculation.check
    assert check is not None and check.state == state and check.path == path
    assert vm.speculation.error is not None and vm.speculation.error.draft == check
    assert words in vm.speculation.draft_message() and vm.speculation.draft_message() == str(check.reason)
    assert vm.speculation.draft_state() == "error"
    assert not vm.can_launch() and vm.launch_block_reason()


@pytest.mark.parametrize("explicit", [False, True])
def test_one_replan_reads_each_header_once(tmp_path: Path, monkeypatch, explicit: bool) -> None:
    """A model with a drafter beside it (found by auto, or named in the Draft model field):
    the re-plan parses the draft's header once (the resolver's check, pairing, the planner's
    shape and weights all reuse it) and the model's not at all (read when it was chosen);
    the next re-plan parses nothing."""
    import os

    from draftwise.core.gguf import reader as gguf
    from draftwise.core.machine import hardware
    from draftwise.viewmodels.replan import Inputs, replan

    geometry = TinyModel(n_embd=128, n_head=4, n_head_kv=4)
    model = write_tiny_model(tmp_path / "tiny-dense-F32.gguf", geometry)[0]
    draft = write_tiny_model(tmp_path / "tiny-draft-F32.gguf", draft_model(geometry))[0]
    for p in (model, draft):  # written long ago: the cache keeps no file modified a moment ago
        os.utime(p, ns=(10**18, 10**18))
    gguf.clear_header_cache()
    parsed: list[str] = []
    real = gguf._read_header_file
    monkeypatch.setattr(gguf, "_read_header_file", lambda path, kv: parsed.append(path.name) or real(path, kv))
    info = gguf.read_model(model)  # choosing the model
    assert parsed == [model.name]
    inputs = Inputs(generation=1, model=info, mtp="auto", draft=str(draft) if explicit else "", extra_args=(),
                    engine=fake_engine(), caps=capabilities.pinned_caps(), context=None, kv_type=None,
                    machine=hardware.cpu_only(16 * hardware.GB), port=8181)
    parsed.clear()
    out = replan(inputs)
    assert out.error is None and str(draft) in out.argv
    assert (out.check is not None and out.check.ok) is explicit
    assert parsed == [draft.name]
    parsed.clear()
    assert replan(inputs).argv == out.argv and parsed == []


def test_the_draft_check_is_shown_when_another_field_stops_the_plan(qtbot, models) -> None:
    """Extra arguments that are refused stop the plan before the resolver looks at the draft:
    the field still says what the resolver's check says of it."""
    vm = make_vm()
    open_and_wait(qtbot, vm, models["llama"])
    with qtbot.waitSignal(vm.outcome_changed, timeout=10000):
        vm.set_extra_args_text("-ot exps=CPU")
    with qtbot.waitSignal(vm.outcome_changed, timeout=10000):
        vm.speculation.set_draft(str(models["other_vocab"]))
    assert vm.outcome.error is not None and vm.outcome.error.field == "extra_args"
    assert vm.speculation.check is not None and vm.speculation.check.state == "vocab"
    assert vm.speculation.draft_state() == "error"


def test_a_good_draft_says_which_type(qtbot, models) -> None:
    vm = make_vm()
    open_and_wait(qtbot, vm, models["llama"])
    with qtbot.waitSignal(vm.outcome_changed, timeout=10000):
        vm.speculation.set_draft(str(models["draft"]))
    assert vm.speculation.draft_message() == "OK — draft model"
    assert "draft-simple" in vm.speculation.draft_tooltip()
    assert "good-draft.gguf" in vm.command_text()
    assert vm.can_launch()


def test_kv_types_offered_are_the_ones_the_model_can_use(qtbot, models) -> None:
    vm = make_vm()
    open_and_wait(qtbot, vm, models["llama"])
    assert vm.plan.kv_types == ("f16",)
    with pytest.raises(ValueError):
        vm.plan.set_kv_type("q8_0")
    open_and_wait(qtbot, vm, models["wide"])
    assert vm.plan.kv_types == ("f16", "q8_0", "q4_0")


def test_context_and_kv_changes_replan_at_once(qtbot, models) -> None:
    vm = make_vm()
    open_and_wait(qtbot, vm, models["wide"])
    kv_before = vm.plan.result.devices[0].kv
    with qtbot.waitSignal(vm.outcome_changed, timeout=10000):
        vm.plan.set_context(2048)
    assert vm.plan.result.context == 2048
    assert "-c 2048" in vm.command_text()
    assert vm.plan.result.devices[0].kv < kv_before
    with qtbot.waitSignal(vm.outcome_changed, timeout=10000):
        vm.plan.set_kv_type("q8_0")
    assert vm.plan.result.kv_type == "q8_0" and "-ctk q8_0" in vm.command_text()
    ov = vm.settings.overrides_for(models["wide"])
    assert (ov.context, ov.kv_type) == (2048, "q8_0")
    # Reset: back to automatic.
    with qtbot.waitSignal(vm.outcome_changed, timeout=10000):
        vm.profiles.reset()
    assert vm.plan.context is None and vm.settings.overrides_for(models["wide"]).is_empty()


def test_stale_results_are_dropped(qtbot, models) -> None:
    vm = make_vm()
    open_and_wait(qtbot, vm, models["llama"])
    for ctx in (2048, 3072, 4096, 2048):
        vm.plan.set_context(ctx)
    qtbot.waitUntil(lambda: not vm.replanning, timeout=10000)
    assert vm.plan.result.context == 2048 and "-c 2048" in vm.command_text()


def test_extra_args_errors_block_launch(qtbot, models) -> None:
    assert split_args("--a 'b c'") == (("--a", "b c"), None)
    assert split_args("'open")[1]
    vm = make_vm()
    open_and_wait(qtbot, vm, models["llama"])
    with qtbot.waitSignal(vm.outcome_changed, timeout=10000):
        vm.set_extra_args_text("-m other.gguf")
    assert vm.speculation.error is not None and vm.speculation.error.field == "extra_args"
    assert not vm.can_launch()
    with qtbot.waitSignal(vm.outcome_changed, timeout=10000):
        vm.set_extra_args_text("--api-key secret")
    assert vm.launch_block_reason() == ("Extra engine arguments may not contain --api-key. Keys on the command "
                                        "line are visible to every user (ps); Draftwise passes its key in the "
                                        "environment.")
    with qtbot.waitSignal(vm.outcome_changed, timeout=10000):
        vm.set_extra_args_text("--spec-draft-n-max 4")
    # The user's arguments, then Draftwise's own: the prompt log, with the consent the default gives.
    assert vm.can_launch() and " --spec-draft-n-max 4 --log-prompts-dir " in vm.command_text()


def test_a_drafter_the_plan_leaves_out_is_explained(qtbot, models) -> None:
    from draftwise.core.machine import hardware

    vm = make_vm()
    vm.set_machine(hardware.cpu_only(hardware.GB + 9 * 2**20))  # a few MB free: the head costs context
    open_and_wait(qtbot, vm, models["mtp"])
    assert vm.plan.result.drop_drafter
    assert vm.speculation.headline().startswith("The MTP head was left out: with it, the context would shrink")
    assert "--spec-type" not in vm.command_text()
    assert vm.plan.reasons()[0] == str(vm.plan.result.drop_reason)


def test_other_backends_get_their_own_command_and_no_speculation(qtbot, models) -> None:
    vm = make_vm()
    vm.engine.set_engines([EngineChoice("vllm", Path("/venv/bin/python"), "cuda", "0.9.0", "python")])
    open_and_wait(qtbot, vm, models["mtp"])
    assert vm.command_text().startswith("/venv/bin/python -m vllm.entrypoints.openai.api_server --model ")
    assert "--spec-type" not in vm.command_text()
    assert "only for llama.cpp" in vm.speculation.headline()
    with qtbot.waitSignal(vm.outcome_changed, timeout=10000):
        vm.speculation.set_mtp("off")
    assert vm.speculation.error is not None and not vm.can_launch()


def test_port_and_network_settings_reach_the_command(qtbot, models) -> None:
    vm = make_vm()
    open_and_wait(qtbot, vm, models["llama"])
    with qtbot.waitSignal(vm.outcome_changed, timeout=10000):
        vm.set_port(8181)
    assert "--host 127.0.0.1 --port 8181" in vm.command_text()
    with qtbot.waitSignal(vm.outcome_changed, timeout=10000):
        vm.set_network(True)
    assert "--host 0.0.0.0 --port 8181" in vm.command_text()
    assert vm.settings.network and vm.settings.port == 8181


def test_overrides_and_profiles_follow_the_model(qtbot, models, tmp_path: Path) -> None:
    s = Settings()
    s.set_overrides(models["llama"], ModelOverrides(context=2048, mtp="off"))
    vm = make_vm(s, tmp_path / "settings.json")
    open_and_wait(qtbot, vm, models["llama"])
    assert vm.speculation.mtp == "off" and vm.plan.context == 2048
    vm.profiles.save("small")
    open_and_wait(qtbot, vm, models["mtp"])
    assert vm.speculation.mtp == "auto" and vm.plan.context is None
    with qtbot.waitSignal(vm.outcome_changed, timeout=10000):
        vm.profiles.apply("small")
    assert vm.speculation.mtp == "off" and vm.plan.result.context == 2048
    assert vm.save_settings() is None
    assert (tmp_path / "settings.json").exists()


def test_model_that_cannot_be_read_explains_itself(qtbot, models) -> None:
    vm = make_vm()
    with qtbot.waitSignal(vm.model_changed, timeout=10000):
        vm.open_model(models["junk"])
    qtbot.waitUntil(lambda: not vm.details.loading, timeout=10000)
    assert vm.details.subtitle() == "This file cannot be used"
    assert "GGUF" in vm.launch_block_reason()
    assert vm.open_file(models["root"] / "notes.txt") is not None


def test_no_engine_blocks_launch_with_a_next_step(qtbot, models) -> None:
    vm = make_vm()
    vm.engine.set_engines([])
    open_and_wait(qtbot, vm, models["llama"])
    assert "Install engine" in vm.launch_block_reason()


def test_settings_problem_is_reported(qtbot, tmp_path: Path) -> None:
    from draftwise.core import settings as st

    path = tmp_path / "config" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text("{broken")
    vm = AppViewModel(st.load(), persist=True)
    with qtbot.waitSignal(vm.settings_problem, timeout=2000) as blocker:
        vm.start(detect_engines=False, probe=False, scan=False)
    assert "set aside" in blocker.args[0]
    assert list(path.parent.glob("settings.json.corrupt-*"))


# ------------------------------------------------------------------ engine
def test_engine_choice_labels_and_selection(qtbot) -> None:
    from draftwise.services.library_scan import TaskRunner
    from draftwise.viewmodels.engine import EngineViewModel

    vm = EngineViewModel(TaskRunner())
    a = EngineChoice("llama.cpp", Path("/a/llama-server"), "cuda", "0.6.0-dev (build 0)", "provisioned")
    b = EngineChoice("vllm", Path("/b/vllm"), "cuda")
    vm.set_engines([b, a])
    assert vm.selected == a, "a launchable llama.cpp build is preferred"
    assert a.label() == "Graphics card (CUDA)"
    vm.select(b.key)
    assert vm.blocks_launch() is None and vm.selected.label() == "vLLM"


def test_install_reports_progress_and_redetects(qtbot, monkeypatch: pytest.MonkeyPatch) -> None:
    from draftwise.core.engines import provision
    from draftwise.services.library_scan import TaskRunner
    from draftwise.viewmodels import engine as engine_vm

    def fake_install(backend, progress=None, **kw):
        for i in range(5):
            progress(f"[{i}/4] building", i / 4)
        return object()

    monkeypatch.setattr(provision, "install", fake_install)
    monkeypatch.setattr(provision, "missing_tools", lambda backend="cpu": [])
    monkeypatch.setattr(engine_vm, "detect_engines", lambda configured=None: [fake_engine()])
    vm = engine_vm.EngineViewModel(TaskRunner())
    fractions: list[float] = []
    vm.install_progress.connect(lambda line, f: fractions.append(f))
    with qtbot.waitSignal(vm.install_finished, timeout=10000) as blocker:
        vm.install("cpu")
    assert blocker.args[0] is True
    assert fractions[-1] == 1.0 and fractions == sorted(fractions)
    qtbot.waitUntil(lambda: vm.selected is not None, timeout=10000)


def test_install_without_build_tools_says_what_to_install(qtbot, monkeypatch) -> None:
    from draftwise.core.engines import provision
    from draftwise.services.library_scan import TaskRunner
    from draftwise.viewmodels.engine import EngineViewModel

    monkeypatch.setattr(provision, "missing_tools", lambda backend="cpu": ["cmake"])
    vm = EngineViewModel(TaskRunner())
    with qtbot.waitSignal(vm.install_finished, timeout=2000) as blocker:
        vm.install("cpu")
    assert blocker.args[0] is False and "cmake" in blocker.args[1]


# ------------------------------------------------------------------ launch (a fake engine process)
class FakeProcess(QObject):
    """The engine process's signals without an engine: its outcome, whole, in `changed`, as
    EngineProcess sends it (the first one is the launch flow's own). `report` stands for what
    the flow would decide. Like QProcess, a stop only asks: stopped arrives later from the
    event loop (after `stop_ms`), never inside stop()."""

    changed = Signal(object)
    log_batch = Signal(list)

    def __init__(self, spec, parent=None, stop_ms: int = 150) -> None:
        from draftwise.core.launch import launch_flow

        super().__init__(parent)
        self.spec = spec
        self.stop_ms = stop_ms
        self.started = self.stop_asked = self.ended = self.refused = False
        self.outcome = launch_flow.LaunchFlow(spec).outcome

    def report(self, **changes) -> None:
        self.outcome = dataclasses.replace(self.outcome, **changes)
        self.changed.emit(self.outcome)

    def start(self) -> None:
        self.started = True
        self.report(stage=Stage.STARTING)

    def stop(self) -> None:
        if self.stop_asked:
            return
        self.stop_asked = True
        self.report(stage=Stage.STOPPING)
        QTimer.singleShot(self.stop_ms, self, self._exit)

    def relaunch_refused(self) -> None:
        self.refused = True

    def _exit(self) -> None:
        self.ended = True
        self.report(stage=Stage.STOPPED)

    # What EngineProcess used to say in signals of their own, as the outcome says it now.
    def fall_back(self, reason, cause) -> None:
        self.report(fallback_reason=reason, fallback_cause=cause, stage=Stage.STARTING,
                    attempt=self.outcome.attempt + 1)

    def ready(self, url: str) -> None:
        self.report(stage=Stage.READY, url=url, ready_seconds=0.5)

    def notice(self, text) -> None:
        self.report(notices=(*self.outcome.notices, text))

    def fallback_note(self, text) -> None:
        self.report(fallback_notes=(*self.outcome.fallback_notes, text))

    def crash(self, cause) -> None:
        self.report(cause=cause, stage=Stage.FAILED)


def _spec(tmp_path: Path):
    from draftwise.core.gguf import reader as gguf
    from draftwise.core.launch import launch_spec

    model = gguf.read_model(write_tiny_model(tmp_path / "m.gguf")[0])
    return launch_spec.llamacpp_launch(Path("/x/llama-server"), model, launch_spec.NO_SPECULATION, port=8123)


def test_launch_stages_ready_fallback_banner_and_stop(qtbot, tmp_path: Path) -> None:
    made: list[FakeProcess] = []
    vm = LaunchViewModel(lambda spec, parent: made.append(FakeProcess(spec, parent)) or made[-1])
    vm.start(_spec(tmp_path))
    p = made[0]
    assert p.started and vm.state == "starting" and vm.status_text().startswith("Starting…")
    p.report(stage=Stage.LOADING)
    assert vm.status_text().startswith("Loading model…")
    segv = crash.classify(crash.ExitStatus.from_returncode(-11), ["0.1 E check_tensor_dims: tensor 'blk.0.attn_q.weight'"])
    p.fall_back(_fallback_reason(segv), segv)
    # One short sentence, said once; the cause and the engine's words only in the details.
    banner = vm.banner_text()
    assert banner == "The engine could not start with Tiny-draft.gguf, so it was started again without speculation."
    assert "(" not in banner and "blk.0" not in banner and banner.count("speculation") == 1
    details = vm.fallback_details()
    assert "segmentation fault" in details and "blk.0.attn_q.weight" in details
    with qtbot.waitSignal(vm.became_ready, timeout=1000) as ready:
        p.ready("http://127.0.0.1:8123")
    assert ready.args[0] == "http://127.0.0.1:8123/v1"
    assert vm.status_text().startswith("Ready") and vm.api_key()
    p.fallback_note("The engine started without Tiny-draft.gguf, so it will be left out from now on.")
    assert "left out from now on" in vm.fallback_details() and "left out" not in vm.banner_text()
    p.notice(crash.SPECULATION_OFF_WARNING)
    assert str(crash.SPECULATION_OFF_WARNING) in vm.banner_text()
    ended: list[str] = []
    vm.ended.connect(ended.append)
    vm.stop()
    # A stop only asks: the engine is still running until its exit is reported.
    assert p.stop_asked and vm.state == "stopping" and vm.running and ended == []
    qtbot.waitUntil(lambda: p.ended, timeout=2000)
    qtbot.wait(50)
    assert vm.state == "stopped" and not vm.running
    assert ended == ["stopped"], "one end"
    # The banner described the running engine: gone once it stopped.
    assert vm.banner_text() == "" and vm.fallback_details() == ""


def test_port_move_is_told_while_the_engine_runs(qtbot, tmp_path: Path) -> None:
    from draftwise.core.messages import msg

    made: list[FakeProcess] = []
    vm = LaunchViewModel(lambda spec, parent: made.append(FakeProcess(spec, parent)) or made[-1])
    spec = _spec(tmp_path)  # listens on 8123
    note = msg("Port {port} is in use; the engine listens on {other} instead.", port=8080, other=8123)
    vm.start(spec, [note], wanted_port=8080)
    assert vm.port_moved() == (8080, 8123)
    assert vm.port_note() == "Port 8080 is in use; the engine listens on 8123 instead."
    made[0].ready(spec.url)
    assert vm.port_moved() == (8080, 8123)
    vm.stop()
    qtbot.waitUntil(lambda: not vm.running, timeout=2000)
    assert vm.port_moved() is None and vm.port_note() == ""
    vm.start(spec, [], wanted_port=8123)
    assert vm.port_moved() is None and vm.port_note() == ""


def test_crash_message_has_a_next_step(qtbot, tmp_path: Path) -> None:
    made: list[FakeProcess] = []
    vm = LaunchViewModel(lambda spec, parent: made.append(FakeProcess(spec, parent)) or made[-1])
    vm.start(_spec(tmp_path))
    cause = crash.classify(crash.ExitStatus(1), ["0.00.1 E llama_model_load: error loading model: bad tensor"])
    with qtbot.waitSignal(vm.ended, timeout=1000):
        made[0].crash(cause)
    assert vm.state == "failed"
    text = vm.failure_text()
    assert str(cause.sentence) in text and "Next step:" in text and str(cause.next_step) in text
    assert "exit code" not in vm.status_text()


# ------------------------------------------------------------------ machine check
def test_machine_check_posts_steps_from_a_worker(qtbot, monkeypatch) -> None:
    from draftwise.services.library_scan import TaskRunner
    from draftwise.viewmodels import machine_check as mc

    threads: list[int] = []

    def fake_check(configured_engine=None):
        threads.append(threading.get_ident())
        yield CheckStep("Test model", "ok", "written")
        yield CheckStep("Engine", "fail", "none installed")

    monkeypatch.setattr(mc, "run_check", fake_check)
    vm = MachineCheckViewModel(TaskRunner())
    with qtbot.waitSignal(vm.finished, timeout=5000) as blocker:
        vm.run()
    assert blocker.args == [False]
    assert [s.title for s in vm.steps] == ["Test model", "Engine"]
    assert threads and threads[0] != threading.get_ident(), "the check runs off the GUI thread"
    assert "Engine" in vm.summary() and "none installed" in vm.summary()


# ------------------------------------------------------------------ plan helpers
def test_context_steps_and_planned_vs_actual(qtbot, models) -> None:
    from draftwise.core.gguf import reader as gguf
    from draftwise.core.launch.launch_spec import NO_SPECULATION
    from draftwise.viewmodels.plan import PlanViewModel, make_plan

    steps = context_steps(40960)
    assert steps[0] == 2048 and steps[-1] == 40960 and steps == sorted(set(steps))
    assert context_steps(1024) == [2048]
    view = make_plan(gguf.read_model(models["llama"]), NO_SPECULATION, probe_machine(), 4096, "f16")
    assert view.context == 4096 and view.fit == "fits" and view.devices[0].used > 0
    vm = PlanViewModel()
    vm.set_result(view)
    vm.feed_log(["0.00.009.719 I load_tensors:   CPU_Mapped model buffer size =     0.44 MiB"])
    assert vm.planned_vs_actual() == [], "nothing is compared before a launch"
    vm.set_launched(view)
    with qtbot.waitSignal(vm.changed, timeout=1000):
        vm.feed_log([
            "0.00.009.719 I load_tensors:   CPU_Mapped model buffer size =     0.44 MiB",
            "0.00.010.000 I srv  some other line",
            "0.00.010.164 I llama_kv_cache:        CPU KV buffer size =     1.00 MiB",
            "0.00.011.419 I sched_reserve:        CPU compute buffer size =     5.14 MiB",
        ])
    rows = {what: (planned, actual) for what, planned, actual in vm.planned_vs_actual()}
    # 1024-based sizes carry 1024-based units.
    assert rows["model"][1] == "450.6 KiB" and rows["conversation"][1] == "1.0 MiB"
    assert set(rows) >= {"model", "conversation", "working space", "total"}
    # A relaunch (the start crashed after allocating): its own lines, never added to the last.
    with qtbot.waitSignal(vm.changed, timeout=1000):
        vm.new_attempt()
    assert vm.actual is None and vm.launched is view
    vm.feed_log(["0.00.009.719 I load_tensors:   CPU_Mapped model buffer size =     0.44 MiB"])
    assert vm.actual.summary()["weights"] == round(0.44 * (1 << 20)) and vm.actual.summary()["kv"] == 0
    # A rung or a fix re-planned: compared with the plan that start runs.
    other = make_plan(gguf.read_model(models["llama"]), NO_SPECULATION, probe_machine(), 2048, "f16")
    vm.new_attempt(other.raw)
    assert vm.launched.context == 2048


# ------------------------------------------------------------------ language
def test_japanese_translation_is_complete_and_switches(qtbot) -> None:
    import subprocess
    import sys

    from draftwise.viewmodels.i18n import LanguageManager, resources_dir, tr

    root = resources_dir()
    check = subprocess.run([sys.executable, str(root / "i18n" / "update_ts.py"), "--check"],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout
    lm = LanguageManager()
    try:
        lm.apply("ja")
        assert lm.current == "ja" and lm.problem is None
        assert tr("Launch") != "Launch"
    finally:
        lm.apply("en")
    assert tr("Launch") == "Launch"


def test_start_stops_engines_an_earlier_crash_left_and_says_so(qtbot, monkeypatch) -> None:
    from draftwise.core.processes import orphans

    report = orphans.OrphanReport(4242, 8080, True, "Stopped an engine left running by an earlier Draftwise (pid 4242, port 8080).")
    calls = []
    monkeypatch.setattr(orphans, "stop_orphans", lambda *a, **k: calls.append(1) or [report])
    vm = make_vm()
    with qtbot.waitSignal(vm.message, timeout=5000) as sig:
        vm.start(detect_engines=False, probe=False, scan=False, reopen_last=False)
    assert calls == [1] and "pid 4242" in sig.args[0]


# ------------------------------------------------------------------ QA review fixes
def test_a_drafter_left_out_as_broken_is_said_and_can_be_tried_again(qtbot, tmp_path: Path) -> None:
    from draftwise.core.speculation.broken import BrokenDrafters
    from draftwise.core.speculation.resolver import drafter_key

    t = TinyModel(name="tiny-llama")
    model = write_tiny_model(tmp_path / "fam" / "tiny-llama-F32.gguf", t)[0]
    draft = write_tiny_model(tmp_path / "fam" / "tiny-llama-draft.gguf", draft_model(t))[0]
    BrokenDrafters().record(fake_engine().binary, drafter_key(draft, "draft-simple"), "test")
    vm = make_vm()
    open_and_wait(qtbot, vm, model)
    s = vm.speculation
    assert s.left_out_broken() and "No drafter found" not in s.headline()
    assert "could not start with it" in s.headline()
    assert "tiny-llama-draft.gguf" not in vm.command_text()
    with qtbot.waitSignal(vm.outcome_changed, timeout=10000):
        assert vm.retry_broken_drafters() == 1
    assert not s.left_out_broken() and "tiny-llama-draft.gguf" in vm.command_text()


def test_a_companion_that_cannot_draft_is_named_with_why_never_none_found(qtbot, tmp_path: Path) -> None:
    """Beside the model, a draft its vocabulary rules out (Phi-3's <|end|> only in the model):
    the card names it and says why; "No draft model found" would be false."""
    t = TinyModel(name="tiny-llama", extra_tokens=(("<|end|>", 3),))
    model = write_tiny_model(tmp_path / "fam" / "tiny-llama-F32.gguf", t)[0]
    write_tiny_model(tmp_path / "fam" / "tiny-llama-draft.gguf", draft_model(TinyModel(name="tiny-llama")))
    vm = make_vm()
    open_and_wait(qtbot, vm, model)
    head = vm.speculation.headline()
    assert head.startswith("tiny-llama-draft.gguf is beside the model but cannot draft for it: token 323 ('<|end|>')")
    assert "ends a reply" in head and "No draft model found" not in head
    assert not any("Skipped tiny-llama-draft.gguf" in n for n in vm.speculation.notes())


def test_settings_problem_stays_until_dismissed(qtbot) -> None:
    vm = AppViewModel(LoadResult(Settings(), Path("/nonexistent/s.json"), "settings were damaged"), persist=False)
    assert "settings were damaged" in vm.banner_text()
    vm.launch.changed.emit()
    assert "settings were damaged" in vm.banner_text()
    with qtbot.waitSignal(vm.banner_changed, timeout=1000):
        vm.dismiss_settings_problem()
    assert vm.banner_text() == ""


def test_running_model_is_named_and_blocks_launching_another(qtbot, models) -> None:
    made: list[FakeProcess] = []
    vm = make_vm(engine_factory=lambda spec, parent: made.append(FakeProcess(spec, parent)) or made[-1])
    open_and_wait(qtbot, vm, models["llama"])
    assert vm.do_launch()
    made[0].ready("http://127.0.0.1:8080")
    assert vm.launch.status_text().startswith("Ready — tiny-llama")
    assert vm.launch_block_reason() == "The engine is running."
    open_and_wait(qtbot, vm, models["mtp"])
    why = vm.launch_block_reason()
    assert why.startswith("Stop tiny-llama") and why.endswith("to launch this model.")
    vm.do_stop()


def test_changing_inputs_after_a_failure_clears_the_failure(qtbot, models) -> None:
    made: list[FakeProcess] = []
    vm = make_vm(engine_factory=lambda spec, parent: made.append(FakeProcess(spec, parent)) or made[-1])
    open_and_wait(qtbot, vm, models["llama"])
    assert vm.do_launch()
    cause = crash.classify(crash.ExitStatus(1), ["0.00.1 E llama_model_load: error loading model: bad tensor"])
    made[0].crash(cause)
    assert vm.launch.failure_text()
    vm.speculation.set_mtp("off")
    assert vm.launch.state == "idle" and not vm.launch.failure_text()


def test_bad_draft_is_said_once(qtbot, models) -> None:
    vm = make_vm()
    open_and_wait(qtbot, vm, models["llama"])
    with qtbot.waitSignal(vm.outcome_changed, timeout=10000):
        vm.speculation.set_draft(str(models["junk"]))
    s = vm.speculation
    assert s.draft_message().startswith("The draft model cannot be used: ")
    assert s.draft_message() not in (s.headline(), vm.launch_block_reason())
    assert vm.launch_block_reason() == "Fix the draft model first (see the message under the field)."


# ------------------------------------------------------------------ core sentences in Japanese
_JA = __import__("re").compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


@pytest.fixture
def japanese(qtbot):
    from draftwise.viewmodels.i18n import LanguageManager

    lm = LanguageManager()
    lm.apply("ja")
    assert lm.problem is None
    yield lm
    lm.apply("en")


def _companion_folder(tmp_path: Path) -> tuple[Path, Path]:
    t = TinyModel(n_layer=6, n_embd=128, n_ff=256)
    target = write_tiny_model(tmp_path / "Tiny-7B-Q8_0.gguf", t)[0]
    draft = write_tiny_model(tmp_path / "Tiny-draft.gguf", draft_model(t, n_layer=1, n_embd=32, n_ff=64))[0]
    return target, draft


def _fallback_reason(cause: crash.Cause):
    """The launch flow's own FellBack reason for an automatic drafter that crashed with `cause`."""
    from draftwise.core.launch import launch_flow, launch_spec
    from draftwise.core.speculation import resolver

    argv = ("--spec-type", "draft-simple", "-md", "/m/Tiny-draft.gguf")
    d = resolver.SpecDecision("draft-simple", Path("/m/Tiny-draft.gguf"), resolver.AUTO_COMPANION, True, draft_flag="-md")
    spec = launch_spec.LaunchSpec(kind="llama.cpp", binary=Path("/x/llama-server"), model_path=Path("/m/t.gguf"),
                                  argv=("/x/llama-server", *argv), env={}, host="127.0.0.1", port=8080, api_key="k",
                                  spec=d, fallback_argv=("/x/llama-server",))
    flow = launch_flow.LaunchFlow(spec)
    flow.start(0.0)
    flow.exited(cause.status or crash.ExitStatus(1), 1.0)
    assert flow.fallback_reason is not None
    return flow.fallback_reason


def test_core_sentences_show_in_japanese(japanese, tmp_path: Path) -> None:
    from draftwise.core.gguf import reader as gguf
    from draftwise.core.machine.hardware import Machine
    from draftwise.core.planning import planner
    from draftwise.core.speculation import resolver
    from draftwise.viewmodels.i18n import tr_message

    refused = TinyModel(name="tiny-ja", extra_tokens=(("<|end|>", 3),))
    write_tiny_model(tmp_path / "ja" / "tiny-ja-F32.gguf", refused)
    write_tiny_model(tmp_path / "ja" / "tiny-ja-draft.gguf", draft_model(TinyModel(name="tiny-ja")))
    r = resolver.resolve(gguf.read_model(tmp_path / "ja" / "tiny-ja-F32.gguf"), resolver.SpecOptions(),
                         capabilities.pinned_caps())
    from draftwise.viewmodels.speculation import SpeculationViewModel

    card = SpeculationViewModel()
    card.set_result(None, r, None)
    ja_head = card.headline()
    assert _JA.search(ja_head) and "tiny-ja-draft.gguf" in ja_head and "cannot draft" not in ja_head
    assert "<|end|>" in ja_head and "ends a reply" not in ja_head

    target, draft = _companion_folder(tmp_path)
    other = write_tiny_model(tmp_path / "x-draft.gguf", draft_model(TinyModel(), vocab="other", n_layer=1, n_embd=32, n_ff=64))[0]
    d = resolver.resolve(gguf.read_model(target), resolver.SpecOptions(), capabilities.pinned_caps())
    note = d.notes[0]
    assert note.startswith("Draft model found beside the model: Tiny-draft.gguf")
    ja = tr_message(note)
    assert _JA.search(ja) and "Tiny-draft.gguf" in ja and "Draft model found" not in ja
    assert "ドラフトモデル" in ja  # the kind in the parentheses is translated too
    skipped = [tr_message(n) for n in d.notes if "x-draft.gguf" in n]
    assert other.exists() and skipped and all(_JA.search(s) and "its vocabulary" not in s for s in skipped)
    assert all("トークン 259" in s for s in skipped)  # the pairing reason, translated with its id
    from draftwise.core.messages import msg
    from draftwise.core.speculation import pairing

    no_bos = tr_message(pairing.Verdict(pairing.BOS, msg(
        "it adds a BOS token differently (add_bos {draft} in the draft, {target} in the model)",
        draft=msg("off"), target=msg("on"))).reason)
    assert "オフ" in no_bos and "オン" in no_bos and "add_bos" in no_bos

    no = planner.plan(gguf.read_model(target), d, Machine(64 * 2**20, 64 * 2**20, [], "Linux"), planner.PlanPrefs())
    refusal = no.reasons[-1]
    assert refusal.startswith("It does not fit")
    ja = tr_message(refusal)
    assert _JA.search(ja) and "It does not fit" not in ja
    sizes = __import__("re").findall(r"\d+(?:\.\d+)? (?:GiB|MiB)", str(refusal))
    assert sizes and all(n in ja for n in sizes)  # the sizes are said, and kept in the translation

    cause = crash.classify(crash.ExitStatus(1), ["E ggml_cuda: cudaMalloc failed: out of memory"])
    ja = tr_message(cause.sentence)
    assert _JA.search(ja) and "CUDA" in ja and _JA.search(tr_message(cause.next_step))

    ja = tr_message(_fallback_reason(cause))
    assert "Tiny-draft.gguf" in ja and "could not start" not in ja and _JA.search(ja)
    assert "（" not in ja and "(" not in ja  # one sentence: the cause is in the details


def test_launch_failure_and_banner_in_japanese(qtbot, japanese, tmp_path: Path) -> None:
    made: list[FakeProcess] = []
    vm = LaunchViewModel(lambda spec, parent: made.append(FakeProcess(spec, parent)) or made[-1])
    vm.start(_spec(tmp_path))
    segv = crash.classify(crash.ExitStatus.from_returncode(-11), [])
    made[0].fall_back(_fallback_reason(segv), segv)
    made[0].notice(crash.SPECULATION_OFF_WARNING)
    banner = vm.banner_text()
    assert "Tiny-draft.gguf" in banner and "segmentation" not in banner and "vocabulary" not in banner
    cause = crash.classify(crash.ExitStatus.from_returncode(-11), ["I srv load_model: loading model 'm.gguf'"])
    with qtbot.waitSignal(vm.ended, timeout=1000):
        made[0].crash(cause)
    text = vm.failure_text()
    assert "segmentation fault" not in text and _JA.search(text.splitlines()[0])
    assert "m.gguf" in text  # the log line stays as it is


def test_core_sentences_stay_english_in_english(tmp_path: Path) -> None:
    from draftwise.core.gguf import reader as gguf
    from draftwise.core.speculation import resolver
    from draftwise.viewmodels.i18n import tr_message

    target, _draft = _companion_folder(tmp_path)
    d = resolver.resolve(gguf.read_model(target), resolver.SpecOptions(), capabilities.pinned_caps())
    for s in d.notes:
        assert tr_message(s) == str(s)
    cause = crash.classify(crash.ExitStatus(1), ["E ggml_cuda: cudaMalloc failed: out of memory"])
    assert tr_message(cause.sentence) == str(cause.sentence) and tr_message(cause.next_step) == str(cause.next_step)


def test_untranslated_and_broken_entries_keep_the_english(japanese, monkeypatch) -> None:
    from draftwise.core.messages import msg
    from draftwise.viewmodels import i18n

    assert i18n.tr_message(msg("Something the catalog has never seen: {x}.", x=1)) == "Something the catalog has never seen: 1."
    assert i18n.tr_message("an OS error, shown as it is") == "an OS error, shown as it is"
    assert i18n.tr_message(None) == ""
    # A known frame with an unknown part keeps the part as it is.
    ja = i18n.tr_message(msg("Skipped {name}: {reason}.", name="odd.gguf", reason="a reason nobody wrote down"))
    assert "odd.gguf" in ja and "a reason nobody wrote down" in ja and _JA.search(ja)
    # A translation whose fields do not match its template must not lose the sentence.
    monkeypatch.setattr(i18n, "tr", lambda text, *a: "壊れた {nope}" if text.startswith("Port {port}") else text)
    m = msg("Port {port} is in use; the engine listens on {other} instead.", port=1, other=2)
    assert i18n.tr_message(m) == str(m)



def test_damaged_files_engine_problems_and_check_steps_read_in_japanese(japanese, tmp_path: Path) -> None:
    from draftwise.core.engines import discovery
    from draftwise.core.gguf import reader as gguf
    from draftwise.core.messages import msg
    from draftwise.viewmodels.i18n import tr_error, tr_message

    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a model at all")
    with pytest.raises(gguf.GGUFError) as err:
        gguf.read_model(junk)
    ja = tr_error(err.value)
    assert "junk.gguf" in ja and _JA.search(ja) and "or it is damaged" not in ja
    assert str(err.value).endswith("It is not a GGUF model, or it is damaged.")  # the English is unchanged
    problem = discovery.binary_version(tmp_path / "no-llama-server")[1]
    assert "cannot be read" in str(problem) and _JA.search(tr_message(problem))
    from draftwise.services.library_scan import TaskRunner

    vm = MachineCheckViewModel(TaskRunner())
    step = CheckStep(msg("Stopping it"), "ok", msg("stopped (exit code {code}); nothing is left running", code=0))
    text = vm.step_text(step)
    assert _JA.search(text) and "0" in text and "stopped" not in text


def test_the_memory_why_keeps_its_summary_beside_the_engine_settings_chosen(qtbot, models) -> None:
    """A measured choice of engine settings ("the engine's own are kept; -nr, -fa off did not
    beat them …") is said after the memory card's why, never in its place: the real window showed
    only that sentence once Gemma 3 270M had been measured."""
    from dataclasses import replace as replaced

    from draftwise.core.messages import msg

    vm = make_vm()
    open_and_wait(qtbot, vm, models["llama"])
    before = vm.plan.reasons()
    assert before and before[0].startswith("Everything fits")
    note = msg("Engine settings: the engine's own are kept; {others} did not beat them beyond the noise on most "
               "prompts here.", others="-nr, -fa off")
    vm.plan.result = replaced(vm.plan.result, settings_notes=(note,))
    assert vm.plan.reasons() == [*before, str(note)]
