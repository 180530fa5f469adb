"""Every entry point plans through the launch session (core/launch/session.py): the same
request over a data folder that holds a remembered engine fix, a ladder rung, a broken
drafter and a measurement gives the same argv and environment from `draftwise plan --json`,
`launch`, the window's real Launch (AppViewModel.do_launch) and the ladder it climbs, `measure`
and the window's measurement (their arms, as quick.measure builds them), the self-test and
the machine check (each with the records it honours)."""

from __future__ import annotations

import argparse
import io
import json
from contextlib import redirect_stdout
from dataclasses import replace
from pathlib import Path

import pytest

from draftwise.core.engines import capabilities
from draftwise.core.gguf import reader as gguf
from draftwise.core.launch import ladder
from draftwise.core.launch.fixes import EngineFixes
from draftwise.core.launch.ladder import Concessions
from draftwise.core.launch.ladder_record import LadderRecord
from draftwise.core.launch.session import devices_of
from draftwise.core.machine import device_choice, hardware
from draftwise.core.measurements.measured import MeasuredRecords, Measurement
from draftwise.core.speculation import resolver
from draftwise.core.speculation.broken import BrokenDrafters
from draftwise.testing.tinymodels import TinyModel, draft_model, write_tiny_model

CAPS = capabilities.pinned_caps()


class _Found:
    kind, backend, version, usable, problem = "llama.cpp", "cpu", "test", True, None

    def __init__(self, binary: Path) -> None:
        self.binary = binary


@pytest.fixture
def populated(tmp_path, monkeypatch):
    """A model with two drafters beside it, one remembered broken and the other measured; a
    remembered engine fix and ladder rung; a fake engine binary the CLI finds."""
    from draftwise.cli import launch as cli_launch
    from draftwise.cli import main as cli_main
    from draftwise.core.engines import discovery

    d = tmp_path / "models"
    geometry = TinyModel(n_embd=128, n_head=4, n_head_kv=4, n_ctx_train=8192)
    model = write_tiny_model(d / "tiny-dense-F32.gguf", geometry)[0]
    write_tiny_model(d / "a-draft-F32.gguf", draft_model(TinyModel(n_embd=128, n_head=4, n_head_kv=4)))
    write_tiny_model(d / "b-draft-F32.gguf", draft_model(TinyModel(n_embd=128, n_head=4, n_head_kv=4)))
    binary = tmp_path / "engine" / "llama-server"
    binary.parent.mkdir()
    binary.write_bytes(b"#!/bin/sh\n")
    monkeypatch.setattr(discovery, "best_engine", lambda *a, **k: _Found(binary))
    monkeypatch.setattr(cli_launch, "caps_of", lambda b: CAPS)
    monkeypatch.setattr(cli_main, "_engine_caps", lambda configured: (binary, CAPS, "cpu"))
    machine = device_choice.select(hardware.inventory(binary), None, {})

    from draftwise.core.launch import prepare

    first = prepare.prepare(prepare.Request(model=model), CAPS, machine)
    assert first.chosen.source == resolver.AUTO_COMPANION and first.chosen.drafter_key
    BrokenDrafters().record(binary, first.chosen.drafter_key, "it crashed the engine")
    second = prepare.prepare(prepare.Request(model=model), CAPS, machine,
                             broken=BrokenDrafters().broken_for(binary))
    assert second.chosen.drafter_key and second.chosen.drafter_key != first.chosen.drafter_key
    combo = prepare.combination(model, second.chosen, binary, machine)
    MeasuredRecords().record(Measurement(combo, second.chosen.spec_type or "", "b", 30.0, 20.0, 0.02, 0.8, 2.5,
                                         5, "--spec-draft-n-max"))
    EngineFixes(machine=machine).record(binary, model, devices_of(machine), ("-fa", "off"), "flash attention")
    LadderRecord().record(model, machine, binary, Concessions(rung=ladder.CTX_HALF, ctx=2048), "out of memory")
    return {"model": model, "binary": binary, "machine": machine}


def _args(command: str, model: Path, *more: str) -> argparse.Namespace:
    """The options as the command's own parser reads them (cli/main.py)."""
    from draftwise.cli import main as cli_main

    return cli_main.build_parser().parse_args([command, str(model), *more])


def _env(spec) -> dict[str, str]:
    return {k: v for k, v in spec.env.items() if not k.endswith("API_KEY")}


def _window_vm(qtbot, model: Path, binary: Path, made: list):
    """The window's AppViewModel over `model`, re-planned; its engines are `made`'s (nothing starts)."""
    from PySide6.QtCore import QObject, Signal

    from draftwise.core.settings import LoadResult, Settings
    from draftwise.viewmodels.app import AppViewModel
    from draftwise.viewmodels.engine import EngineChoice

    class Captured(QObject):
        changed = Signal(object)  # the engine's outcome (nothing starts: never sent)
        log_batch = Signal(list)

        def __init__(self, spec, parent):
            super().__init__(parent)
            # LaunchViewModel.start set the ladder it climbs and the records the plan was made from.
            made.append((spec, parent.ladder, parent.records))

        def start(self):
            pass

    vm = AppViewModel(LoadResult(Settings(port=8181), Path("/nonexistent/settings.json")), persist=False,
                      engine_factory=Captured)
    vm.engine.set_engines([EngineChoice("llama.cpp", binary, "cpu", "test", "test", "", CAPS)])
    vm.set_machine(hardware.inventory(binary))
    with qtbot.waitSignal(vm.outcome_changed, timeout=20000):
        vm.open_model(model)
    qtbot.waitUntil(lambda: not vm.replanning, timeout=20000)
    return vm


def _at_port(argv, port: str = "8181") -> list[str]:
    """The argv with its --port value set to `port` (paths that pick a free port for each start)."""
    out = list(argv)
    out[out.index("--port") + 1] = port
    return out


def _without_prompt_log(argv) -> list[str]:
    """`argv` without --log-prompts-dir: what Draftwise starts for itself (a measurement, the
    self-test, the machine check) logs no prompt, with the user's consent or not."""
    out = list(argv)
    i = out.index("--log-prompts-dir")
    return out[:i] + out[i + 2:]


def _with_n_max(argv: list[str], n: str | None) -> list[str]:
    """`argv` with its draft length `n` (None: without the option)."""
    i = argv.index("--spec-draft-n-max")
    return argv[:i] + argv[i + 2:] if n is None else argv[:i + 1] + [n] + argv[i + 2:]


class _Arms:
    """Stands in for measure's engine starts: keeps each arm's LaunchSpec and draft length,
    then stops the measurement as a cancel would (nothing is started)."""

    def __init__(self, monkeypatch, arms: int = 2) -> None:
        from draftwise.core.measurements import live_figures
        from draftwise.core.measuring import arms as arms_mod

        self.specs: list = []
        self.n_max: list = []

        def run_arm(engine_arms, setup, _r):
            self.specs.append(engine_arms.launch(setup))  # the LaunchSpec the engine would get
            self.n_max.append(setup.n_max)
            if len(self.specs) == arms:
                raise arms_mod.Cancelled()
            return arms_mod.Arm(setup, 1.0, 1.0, (), live_figures.Counters())

        monkeypatch.setattr(arms_mod.EngineArms, "__call__", run_arm)


def test_every_entry_point_runs_the_same_launch(qtbot, populated, monkeypatch, tmp_path):
    """One request, every entry point: `plan --json`, `launch`, the window's Launch (through
    AppViewModel.do_launch), `measure` and the window's measurement (the drafting service),
    the ladder's re-plan, the self-test and the machine check. Over a data folder holding a fix,
    a rung, a broken drafter and a measurement, all but the last two run the same argv and
    environment; measure only leaves the old measurement's draft length out (it measures the
    drafter again), and the self-test and the machine check, which plan their own generated
    models, honour no record (the self-test) or only the engine fixes (the machine check):
    each equals `plan --json` over a data folder holding only what it honours."""
    import os
    import shutil

    from draftwise import selftest
    from draftwise.cli import launch as cli_launch
    from draftwise.cli import main as cli_main
    from draftwise.core import paths
    from draftwise.core.check import machine_check
    from draftwise.core.launch import fixes

    model, binary = populated["model"], populated["binary"]
    monkeypatch.setattr(capabilities, "capabilities", lambda b, *a, **k: CAPS)

    def plan_json(*extra: str) -> dict:
        out = io.StringIO()
        with redirect_stdout(out):
            assert cli_main.main(["plan", str(model), "--json", "--port", "8181", *extra]) == 0
        return json.loads(out.getvalue())

    plan = plan_json()
    with redirect_stdout(io.StringIO()):
        run, _watch = cli_launch._prepare(_args("launch", model, "--port", "8181"))
    launched = run.spec
    argv = list(launched.argv)
    # Every record had its say: the fix, the rung, the broken drafter left out, the measured length.
    assert argv[argv.index("-fa") + 1] == "off"
    assert argv[argv.index("-c") + 1] == "2048"
    assert "b-draft-F32.gguf" in " ".join(argv) and "a-draft-F32.gguf" not in " ".join(argv)
    assert argv[argv.index("--spec-draft-n-max") + 1] == "5"
    # With the consent to keep prompts (the default), the engine logs them into the model's
    # folder of the data folder (learning from use, docs/learn-from-use.md).
    from draftwise.core.measurements import prompt_log

    assert argv[argv.index("--log-prompts-dir") + 1] == str(
        paths.data_dir() / "prompt-log" / prompt_log.key(model)) and launched.prompt_log is not None

    # plan and launch.
    assert plan["argv"] == plan["launch"]["argv"] == argv
    assert {k: v for k, v in plan["launch"]["env"].items() if not k.endswith("API_KEY")} == _env(launched)

    # The window: its Launch, and the ladder that Launch hands the engine.
    made: list = []
    vm = _window_vm(qtbot, model, binary, made)
    assert vm.do_launch(), vm.launch_error
    (window, climber, engine_records), = made
    assert list(window.argv) == list(vm.outcome.argv) == argv
    # The engine records what it learns in the stores its plan was made from, not fresh ones.
    from draftwise.viewmodels.launch import default_engine_factory

    assert engine_records is vm.outcome.planned.records
    engine = default_engine_factory(window, vm.launch)
    assert engine.flow.broken is engine_records.broken and engine.flow.fixes is engine_records.fixes
    engine.deleteLater()
    assert _env(window) == _env(launched) and sorted(window.env) == sorted(launched.env)
    # The ladder re-plans with the same records: the running rung again is the same launch, and
    # a feature fix adds only itself (the rung, the fix, the drafter and its length stay).
    assert climber is not None and climber.start.ctx == 2048
    again = climber.with_fix(())
    assert list(again.argv) == argv and again.env == window.env
    fixed = list(climber.with_fix(("-nr",)).argv)
    assert "-nr" in fixed and [a for a in fixed if a != "-nr"] == argv

    # measure (the CLI) and the window's measurement (the drafting service): the arms are the
    # launch without the old measurement's length, then with each length tried.
    cli_arms = _Arms(monkeypatch)
    with redirect_stdout(io.StringIO()):
        assert cli_main.main(["measure", str(model), "--n-max", "3"]) == 130  # cancelled after two arms
    window_arms = _Arms(monkeypatch)
    measuring = _window_vm(qtbot, model, binary, [])  # a window whose engine is not running
    measuring.drafting.settings = replace(measuring.drafting.settings, n_max_values=(3,))
    assert measuring.drafting.measure_speed()
    qtbot.waitUntil(lambda: not measuring.drafting.measuring, timeout=20000)
    for arms in (cli_arms, window_arms):
        assert arms.n_max == [None, 3]
        baseline, drafting = (_at_port(a.argv) for a in arms.specs)
        assert drafting == _with_n_max(_without_prompt_log(argv), "3")
        assert all(a.prompt_log is None for a in arms.specs)
        assert "--spec-type" not in baseline and baseline[baseline.index("-c") + 1] == "2048" and "-fa" in baseline
        assert all(_env(a) == _env(launched) for a in arms.specs)

    # The self-test: the session without the user's records, as `plan` over an empty data folder.
    selftest_spec, _words = selftest._plan(gguf.read_model(model), _Found(binary))
    data = paths.data_dir()
    empty, only_fixes = tmp_path / "empty-data", tmp_path / "fixes-data"
    only_fixes.mkdir()
    shutil.copy2(data / fixes.FILE_NAME, only_fixes / fixes.FILE_NAME)
    monkeypatch.setenv("DRAFTWISE_DATA_DIR", str(empty))
    fresh = plan_json()
    assert _at_port(selftest_spec.argv) == _without_prompt_log(fresh["argv"]) and "a-draft-F32.gguf" in " ".join(fresh["argv"])
    assert "-fa" not in fresh["argv"] and fresh["argv"] != argv
    # The machine check: only the engine fixes (and its small context), as `plan --ctx 512` over
    # a data folder holding only them.
    monkeypatch.setenv("DRAFTWISE_DATA_DIR", str(data))
    check_spec = machine_check._launch(_Found(binary), model, mtp="auto", fixes=fixes.EngineFixes())
    monkeypatch.setenv("DRAFTWISE_DATA_DIR", str(only_fixes))
    fixes_only = plan_json("--ctx", str(machine_check.CHECK_CONTEXT))
    assert _at_port(check_spec.argv) == _without_prompt_log(fixes_only["argv"])
    assert fixes_only["argv"][fixes_only["argv"].index("-fa") + 1] == "off"
    assert os.environ["DRAFTWISE_DATA_DIR"] == str(only_fixes)


# ------------------------------------------------------------------ measurements decide
@pytest.mark.parametrize(("with_tps", "used"), [(28.0, True), (21.0, True), (20.2, False), (19.8, False),
                                                (14.0, False)])
def test_a_measured_ngram_speed_up_is_used_by_auto_without_the_flag(tmp_path, with_tps, used):
    """1.40× measured: auto runs n-gram from then on; so does 1.05× (faster beyond the ±2 %
    noise, 3 % at the least); a result within the noise (1.01×) is a tie and leaves it off, as
    one below 1× or slower does; measure itself ignores the record."""
    from draftwise.core.launch import prepare
    from draftwise.core.launch.session import Engine, Records, plan_launch

    model = write_tiny_model(tmp_path / "alone" / "tiny-F32.gguf", TinyModel())[0]
    binary = tmp_path / "llama-server"
    binary.write_bytes(b"#!/bin/sh\n")
    machine = device_choice.select(hardware.inventory(binary), None, {})
    engine = Engine(binary, CAPS)
    assert plan_launch(prepare.Request(model=model), engine, machine, Records.load(machine)).prepared.spec.argv == ()
    ngram = prepare.prepare(prepare.Request(model=model, ngram_when_no_drafter=True), CAPS, machine)
    assert ngram.chosen.source == resolver.AUTO_NGRAM
    combo = prepare.combination(model, ngram.chosen, binary, machine)
    MeasuredRecords().record(Measurement(combo, ngram.chosen.spec_type or "", "n-gram", with_tps, 20.0, 0.02,
                                         0.91, 3.0, None, None))
    planned = plan_launch(prepare.Request(model=model), engine, machine, Records.load(machine))
    assert (planned.prepared.spec.spec_type == ngram.chosen.spec_type) is used
    assert (planned.measurement is not None) is used
    if used:
        assert any("measured faster" in str(n) for n in planned.prepared.spec.notes)
        assert list(planned.spec(8181).argv) == list(ngram.launch(binary, port=8181).argv)
    measuring = plan_launch(prepare.Request(model=model), engine, machine, Records.load(machine),
                            ignore_measurements=True)
    assert measuring.prepared.spec.argv == ()


def test_launch_takes_ngram_like_plan_and_measure():
    from draftwise.cli import main as cli_main

    parser = cli_main.build_parser()
    for command in ("launch", "plan", "measure"):
        assert parser.parse_args([command, "m.gguf", "--ngram"]).ngram is True


def test_the_card_shows_a_measured_ngram_and_one_click_forgets_it(qtbot, tmp_path):
    from draftwise.core.launch import prepare
    from draftwise.core.settings import LoadResult, Settings
    from draftwise.ui.speculation_card import SpeculationCard
    from draftwise.viewmodels.app import AppViewModel
    from draftwise.viewmodels.engine import EngineChoice

    model = write_tiny_model(tmp_path / "alone" / "tiny-F32.gguf", TinyModel())[0]
    binary = tmp_path / "llama-server"
    binary.write_bytes(b"#!/bin/sh\n")
    machine = hardware.inventory(binary)
    ngram = prepare.prepare(prepare.Request(model=model, ngram_when_no_drafter=True), CAPS, machine)
    combo = prepare.combination(model, ngram.chosen, binary, machine)
    MeasuredRecords().record(Measurement(combo, ngram.chosen.spec_type or "", "n-gram", 28.0, 20.0, 0.02,
                                         0.91, 3.0, None, None))
    vm = AppViewModel(LoadResult(Settings(), Path("/nonexistent/settings.json")), persist=False)
    vm.engine.set_engines([EngineChoice("llama.cpp", binary, "cpu", "test", "test", "", CAPS)])
    vm.set_machine(machine)
    card = SpeculationCard(vm.speculation, vm.details, vm.launch)
    card.forget_measurement.connect(vm.drafting.forget)
    qtbot.addWidget(card)
    with qtbot.waitSignal(vm.outcome_changed, timeout=20000):
        vm.open_model(model)
    qtbot.waitUntil(lambda: not vm.replanning, timeout=20000)
    assert "--spec-type" in vm.outcome.argv
    assert vm.speculation.measured_text() == "Measured on this computer: 1.40× with n-gram."
    card.refresh()
    assert not card.forget_measured.isHidden() and card.measured.text() == vm.speculation.measured_text()
    with qtbot.waitSignal(vm.outcome_changed, timeout=20000):
        card.forget_measured.click()
    qtbot.waitUntil(lambda: not vm.replanning, timeout=20000)
    assert "--spec-type" not in vm.outcome.argv and vm.speculation.measured_text() == ""
    card.refresh()
    assert card.forget_measured.isHidden()
    assert MeasuredRecords().entries() == []


def test_the_measurement_arms_run_on_the_sessions_chosen_gpus(tmp_path):
    """Issue 28: the arms left out the GPUs the session chose (no CUDA_VISIBLE_DEVICES on a
    CUDA build), so a measurement could run where the launch would not."""
    from draftwise.core.launch import prepare
    from draftwise.core.launch.session import Engine, Records, plan_launch
    from draftwise.core.machine.hardware import GB, Gpu, Machine
    from draftwise.core.measuring import arms
    from draftwise.core.speculation import setup as setup_mod

    model = write_tiny_model(tmp_path / "alone" / "tiny-F32.gguf", TinyModel())[0]
    binary = tmp_path / "llama-server"
    binary.write_bytes(b"#!/bin/sh\n")
    box = Machine(ram_total=32 * GB, ram_available=24 * GB, os="Linux", described=True,
                  gpus=[Gpu(0, "cuda", "RTX 3060", total_bytes=12 * GB, free_bytes=11 * GB),
                        Gpu(1, "cuda", "RTX 4090", total_bytes=24 * GB, free_bytes=23 * GB)])
    machine = device_choice.select(box, ["CUDA1"])
    planned = plan_launch(prepare.Request(model=model, ngram_when_no_drafter=True), Engine(binary, CAPS, "cuda"),
                          machine, Records.none())
    launched = planned.spec(8181)
    assert launched.env.get("CUDA_VISIBLE_DEVICES") == "1"
    run = arms.runner_for(planned.prepared, binary, machine, arms.Steps(1), backend="cuda", gpus=machine.gpus)
    for setup in (setup_mod.NONE, setup_mod.of_decision(planned.prepared.spec)):
        assert run.launch(setup).env.get("CUDA_VISIBLE_DEVICES") == "1"
