"""Every entry point plans through the launch session (core/launch/session.py): the same
request over a data folder that holds a remembered engine fix, a ladder rung, a broken
drafter and a measurement gives the same argv and environment from `draftwise plan --json`,
the launch CLI's preparation, measure's preparation and the window's real Launch."""

from __future__ import annotations

import argparse
import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from draftwise.core.engines import capabilities
from draftwise.core.launch import ladder
from draftwise.core.launch.fixes import EngineFixes
from draftwise.core.launch.ladder import Concessions
from draftwise.core.launch.ladder_record import LadderRecord
from draftwise.core.launch.session import devices_of
from draftwise.core.machine import hardware
from draftwise.core.speculation import resolver
from draftwise.core.speculation.broken import BrokenDrafters
from draftwise.core.speculation.measured import MeasuredRecords, Measurement
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
    machine = hardware.select(hardware.inventory(binary), None, {})

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


def _launch_args(model: Path, **extra) -> argparse.Namespace:
    base = dict(model=str(model), mtp="auto", draft=None, ngram=False, port=8181, ctx=None, kv=None,
                network=False, device=None, engine=None, keep_free=None, use_at_most=None, rpc=None,
                verbose=False, full=False, engine_args=[])
    return argparse.Namespace(**{**base, **extra})


def _env(spec) -> dict[str, str]:
    return {k: v for k, v in spec.env.items() if not k.endswith("API_KEY")}


def _window(qtbot, model: Path, binary: Path):
    from draftwise.core.settings import LoadResult, Settings
    from draftwise.viewmodels.app import AppViewModel
    from draftwise.viewmodels.engine import EngineChoice

    made = []

    class Captured:
        def __init__(self, spec, parent):
            self.spec = spec

        def start(self):
            made.append(self.spec)

    vm = AppViewModel(LoadResult(Settings(port=8181), Path("/nonexistent/settings.json")), persist=False,
                      engine_factory=Captured)
    vm.engine.set_engines([EngineChoice("llama.cpp", binary, "cpu", "test", "test", "", CAPS)])
    vm.set_machine(hardware.inventory(binary))
    with qtbot.waitSignal(vm.outcome_changed, timeout=20000):
        vm.open_model(model)
    qtbot.waitUntil(lambda: not vm.replanning, timeout=20000)
    assert vm.do_launch(), vm.launch_error
    return made[0], vm


def test_every_entry_point_runs_the_same_launch(qtbot, populated):
    from draftwise.cli import launch as cli_launch
    from draftwise.cli import main as cli_main

    model, binary = populated["model"], populated["binary"]
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli_main.main(["plan", str(model), "--json", "--port", "8181"]) == 0
    plan = json.loads(out.getvalue())

    with redirect_stdout(io.StringIO()):
        run, _watch = cli_launch._prepare(_launch_args(model))
        _found, _machine, measured = cli_launch.planned_launch(_launch_args(model), ignore_measurements=True)
    launched = run.spec
    window, vm = _window(qtbot, model, binary)
    measure_spec = measured.spec(8181)

    argv = list(launched.argv)
    # Every record had its say: the fix, the rung, the broken drafter left out, the measured length.
    assert argv[argv.index("-fa") + 1] == "off"
    assert argv[argv.index("-c") + 1] == "2048"
    assert "b-draft-F32.gguf" in " ".join(argv) and "a-draft-F32.gguf" not in " ".join(argv)
    assert argv[argv.index("--spec-draft-n-max") + 1] == "5"

    assert plan["argv"] == plan["launch"]["argv"] == argv == list(window.argv) == list(vm.outcome.argv)
    assert {k: v for k, v in plan["launch"]["env"].items() if not k.endswith("API_KEY")} == _env(launched)
    assert _env(launched) == _env(window) and sorted(launched.env) == sorted(window.env)
    # measure measures the drafter again (no old measurement's say), all else the same.
    i = argv.index("--spec-draft-n-max")
    assert list(measure_spec.argv) == argv[:i] + argv[i + 2:]
    assert _env(measure_spec) == _env(launched)


# ------------------------------------------------------------------ measurements decide
@pytest.mark.parametrize(("with_tps", "used"), [(28.0, True), (20.2, True), (19.8, False), (14.0, False)])
def test_a_measured_ngram_speed_up_is_used_by_auto_without_the_flag(tmp_path, with_tps, used):
    """1.40× measured (as on the real Gemma 3 270M): auto runs n-gram from then on; so does a
    result above 1× within the noise (a drafter's benefit of the doubt, `Measurement.pays`); one
    at or below 1×, or slower, leaves it off; measure itself ignores the record."""
    from draftwise.core.launch import prepare
    from draftwise.core.launch.session import Engine, Records, plan_launch

    model = write_tiny_model(tmp_path / "alone" / "tiny-F32.gguf", TinyModel())[0]
    binary = tmp_path / "llama-server"
    binary.write_bytes(b"#!/bin/sh\n")
    machine = hardware.select(hardware.inventory(binary), None, {})
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
