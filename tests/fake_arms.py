"""Fake arms and the two prepared launches the measurement tests share (no engine).

An arm here is a function of the setup (a speed landscape), so a test states which setup is
fastest and checks that it is the one found, tried at the cost stated, and then launched."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from draftwise.core.engines.capabilities import pinned_caps
from draftwise.core.engines.spec_types import NGRAM_MEASURED
from draftwise.core.launch import prepare
from draftwise.core.machine.hardware import Machine
from draftwise.core.measurements import live_figures, measured
from draftwise.core.measuring import arms, quick
from draftwise.core.measuring.arm import Arm
from draftwise.core.planning import planner
from draftwise.core.speculation import resolver
from draftwise.core.speculation.setup import Setup
from draftwise.testing.tinymodels import TinyModel, draft_model, mtp_model, write_tiny_model

CAPS = pinned_caps()
TARGET = TinyModel(name="Tiny", n_layer=4, n_embd=128, n_ff=256)
MACHINE = Machine(ram_total=16 << 30, ram_available=12 << 30, gpus=[], os="linux")
ENGINE = Path("/e/llama-server")
SETTINGS = arms.MeasureSettings(tokens=64, rounds=2)


def _prefs() -> planner.PlanPrefs:
    return planner.PlanPrefs(margin_bytes=0, ctx=4096, ctx_floor=512)


def with_drafter(tmp_path: Path) -> prepare.Prepared:
    """A tiny model with its draft model beside it: auto's companion."""
    write_tiny_model(tmp_path / "Tiny-Q8_0.gguf", TARGET)
    write_tiny_model(tmp_path / "Tiny-draft.gguf", draft_model(TARGET))
    p = prepare.prepare(prepare.Request(model=tmp_path / "Tiny-Q8_0.gguf", prefs=_prefs()), CAPS, MACHINE)
    assert p.spec.source == resolver.AUTO_COMPANION
    return p


def mtp_with_companion(tmp_path: Path) -> prepare.Prepared:
    """A tiny model with an embedded MTP head (auto's choice) and a draft model beside it
    (the resolver's alternative)."""
    target = mtp_model(name="TinyMTP")
    write_tiny_model(tmp_path / "mtp" / "TinyMTP-Q8_0.gguf", target)
    write_tiny_model(tmp_path / "mtp" / "TinyMTP-draft.gguf", draft_model(target))
    p = prepare.prepare(prepare.Request(model=tmp_path / "mtp" / "TinyMTP-Q8_0.gguf", prefs=_prefs()), CAPS, MACHINE)
    assert p.spec.source == resolver.AUTO_MTP and len(p.spec.alternatives) == 1
    return p


def alone(tmp_path: Path) -> prepare.Prepared:
    """A tiny model with no drafter, planned as `measure` plans it: auto's n-gram speculation."""
    write_tiny_model(tmp_path / "alone" / "Tiny-Q8_0.gguf", TARGET)
    p = prepare.prepare(prepare.Request(model=tmp_path / "alone" / "Tiny-Q8_0.gguf", prefs=_prefs()), CAPS, MACHINE)
    assert p.spec.source == resolver.NONE
    request = quick.ngram_request(p)
    assert request is not None and request.ngram_when_no_drafter
    ngram = prepare.prepare(request, CAPS, MACHINE)
    assert ngram.spec.source == resolver.AUTO_NGRAM
    return ngram


class Fake:
    """Arms whose tokens/s is `speed(setup)` (on each of three prompts, or one per prompt),
    1 % apart between rounds; every start counted."""

    def __init__(self, speed: Callable[[Setup], float | tuple[float, float, float]], acceptance: float = 0.6) -> None:
        self.speed, self.acceptance = speed, acceptance
        self.starts: list[tuple[Setup, int]] = []

    def __call__(self, setup: Setup, r: int) -> Arm:
        self.starts.append((setup, r))
        speed = self.speed(setup)  # one figure, or one per prompt (three prompts)
        per_prompt = [v * (1.0 + 0.01 * (r % 2)) for v in (speed if isinstance(speed, tuple) else (speed,) * 3)]
        n = 64.0 * 3
        ms = sum(64.0 * 1000.0 / v for v in per_prompt)
        drafted = 100.0 if setup.speculates else 0.0
        counters = live_figures.Counters(drafted, drafted * self.acceptance, 20.0 if drafted else 0.0, n, ms / 1000.0)
        return Arm(setup, n, ms, tuple((i, r, v) for i, v in enumerate(per_prompt)), counters)

    def ran(self, setup: Setup) -> int:
        return sum(1 for s, _ in self.starts if s == setup)


def run_measure(p: prepare.Prepared, fake: Fake) -> measured.Measurement:
    return quick.measure(p, ENGINE, MACHINE, settings=SETTINGS, runner=fake, engine_types=NGRAM_MEASURED)


def run_sweep(p: prepare.Prepared, fake: Fake):
    from draftwise.core.measuring import sweep

    return sweep.sweep(p, ENGINE, MACHINE, settings=SETTINGS, runner=fake, engine_types=NGRAM_MEASURED)
