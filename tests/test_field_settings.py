"""An MTP head starts with the draft length and p-min reported for its family, until a
measurement decides; a user's own setting is never doubled."""

from __future__ import annotations

from pathlib import Path

import pytest

from draftwise.core.measurements import measured
from draftwise.core.speculation import field_settings, resolver
from draftwise.core.speculation.setup import Setup, of_decision


def test_qwen35_mtp_starts_at_the_reported_length_and_p_min():
    for arch in ("qwen35", "qwen35moe"):
        setting, note = field_settings.mtp_setting(arch, ())
        assert (setting.n_max, setting.p_min) == (3, 0.75)
        assert note is not None and "until Draftwise measures it here" in str(note)


def test_an_architecture_without_a_report_keeps_the_engine_defaults():
    assert field_settings.mtp_setting("glm4moe", ()) == (None, None)


def test_the_users_own_setting_is_left_to_them():
    for extra in (("--spec-draft-p-min", "0.5"), ("--spec-draft-n-max=2",), ("--draft-p-min", "0.1")):
        assert field_settings.mtp_setting("qwen35", extra) == (None, None)


def test_a_measured_setup_replaces_the_field_settings():
    """A measured setup's length and p-min replace the field's on the decision; nothing doubled."""
    head = resolver.SpecDecision("draft-mtp", None, resolver.AUTO_MTP, True, lengths=(("--spec-draft-n-max", 3),),
                                 p_min=0.75)
    assert head.argv == ("--spec-type", "draft-mtp", "--spec-draft-n-max", "3", "--spec-draft-p-min", "0.75")
    run = Setup("draft-mtp", n_max=2).on(head)
    assert run.argv == ("--spec-type", "draft-mtp", "--spec-draft-n-max", "2")
    assert of_decision(run) == Setup("draft-mtp", n_max=2)


@pytest.fixture(scope="module")
def qwen35(pinned_source: Path) -> Path:
    """The corpus Qwen3.5-0.8B: the published header with its MTP block (the data a hole)."""
    from draftwise.testing.corpus import build, registry

    return build.generate(registry.get("Qwen3.5-0.8B"), pinned=pinned_source)


def test_a_measurement_supersedes_the_field_note_and_the_window_says_it_once(qwen35, tmp_path, qapp):
    """Seen in the window after Measure speed on the Qwen3.5-0.8B starter: "until Draftwise
    measures it here", then "measured 2.05x with ...", then "Measured on this computer:
    2.05x with ..." again beside its undo."""
    from draftwise.core.engines import capabilities
    from draftwise.core.launch import prepare
    from draftwise.core.machine import hardware
    from draftwise.core.measurements.measured import MeasuredRecords, Measurement
    from draftwise.viewmodels.speculation import SpeculationViewModel

    binary = tmp_path / "llama-server"
    binary.write_bytes(b"#!/bin/sh\n")
    machine = hardware.cpu_only(23 << 30, 20 << 30)
    caps = capabilities.pinned_caps()
    first = prepare.prepare(prepare.Request(model=qwen35), caps, machine)
    assert first.chosen.spec_type == "draft-mtp" and any(field_settings.is_field_note(n) for n in first.chosen.notes)
    combo = prepare.combination(qwen35, first.chosen, binary, machine)
    m = Measurement(combo, "draft-mtp", "the MTP head", 36.3, 17.7, 0.08, 1.0, 3.98, 2, "--spec-draft-n-max")
    MeasuredRecords().record(m)
    again = prepare.prepare(prepare.Request(model=qwen35), caps, machine, measured=MeasuredRecords(), engine=binary)
    notes = again.spec.notes
    assert not any(field_settings.is_field_note(n) for n in notes), notes
    assert any(measured.is_decision_note(n) for n in notes), notes
    vm = SpeculationViewModel()
    vm.set_measurement(again.measurement)
    vm.set_result(None, again.spec, None)
    assert vm.measured_text().startswith("Measured on this computer: 2.05×")
    assert not any("measured 2.05" in n for n in vm.notes()), vm.notes()
