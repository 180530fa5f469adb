"""The engine's speed settings as measured choices (issue 30): what the settings stage tries
where, the rule that judges a setting on decode and prompt speed together, faults, the
record, and the launch that passes what was kept (a remembered engine fix and the user's own
arguments first). On fake arms: each test states the speeds and checks the choice made on
them; the real engine's side is tests/test_engine_settings_engine.py."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from tests import fake_arms as fa

from draftwise.core.engines.capabilities import pinned_caps
from draftwise.core.engines.engine_settings import DEFAULTS, EngineSettings
from draftwise.core.kinds import Switch
from draftwise.core.launch import crash, prepare, session
from draftwise.core.launch.fixes import EngineFixes
from draftwise.core.machine.hardware import Gpu, Machine
from draftwise.core.measurements import live_figures, measured, tuned
from draftwise.core.measuring import arms, quick, tuning
from draftwise.core.measuring.arm import Arm
from draftwise.core.speculation import resolver
from draftwise.core.speculation.setup import NONE, Setup
from draftwise.testing.tinymodels import TinyModel, write_tiny_model

HASWELL = replace(fa.MACHINE, cpu_variant="haswell")  # AVX2: the CPU re-lays Q4_0 (CPU_REPACK)
Q4 = TinyModel(name="TinyQ4", n_layer=4, n_embd=256, n_head=4, n_head_kv=2, n_ff=512, dtype="Q4_0")


# ------------------------------------------------------------------ the settings as data
def test_settings_pass_only_what_is_set_and_read_back_from_records_without_them():
    s = EngineSettings(repack=False, threads=1, flash_attn=Switch.OFF, ubatch=1024)
    assert s.argv() == ("-nr", "-t", "1", "-fa", "off", "-ub", "1024")
    assert EngineSettings(repack=True) == DEFAULTS and DEFAULTS.argv() == () and DEFAULTS.default
    assert EngineSettings.from_json(s.to_json()) == s
    # A setup keeps its settings beside the speculation; one without them (every record from
    # before) reads as the engine's defaults, and its JSON is what it always was.
    old = {"drafter": None, "n_max": None, "p_min": None, "ngram": "ngram-mod", "ngram_len": 32}
    assert Setup.from_json(old) == Setup(ngram="ngram-mod", ngram_len=32)
    assert Setup(ngram="ngram-mod", ngram_len=32).to_json() == old
    with_settings = Setup(ngram="ngram-mod", ngram_len=32, engine=EngineSettings(threads=1))
    assert Setup.from_json(json.loads(json.dumps(with_settings.to_json()))) == with_settings
    alone = resolver.SpecDecision(None, None, resolver.NONE, False)
    assert with_settings.on(alone).argv == ("--spec-type", "ngram-mod", "--spec-ngram-mod-n-max", "32")  # not speculation
    assert with_settings.label() == "ngram-mod 32 · -t 1"
    with pytest.raises(ValueError):
        EngineSettings.from_json({"threads": 0})
    with pytest.raises(ValueError):
        EngineSettings.from_json({"flash_attn": "sometimes"})


def test_a_flag_the_build_does_not_know_and_one_already_given_are_never_passed():
    s = EngineSettings(repack=False, threads=1, flash_attn=Switch.OFF)
    assert s.known_by(lambda flag: flag != "-nr") == EngineSettings(threads=1, flash_attn=Switch.OFF)
    # The user's `--threads 4` and a fix's `-nr` win: neither is passed twice.
    assert s.without(("--threads", "4", "-nr")) == EngineSettings(flash_attn=Switch.OFF)
    assert s.without(("--repack",)) == EngineSettings(threads=1, flash_attn=Switch.OFF)


# ------------------------------------------------------------------ the rule
def test_a_small_decode_gain_does_not_buy_a_much_slower_prompt():
    base = tuned.Speed(decode=40.0, prompt=400.0)
    # 5 % faster writing, prompts read at 40 % of the speed: the request takes longer.
    assert not tuned.faster(tuned.Speed(decode=42.0, prompt=160.0), base)
    assert tuned.gain(tuned.Speed(decode=42.0, prompt=160.0), base) < 0
    # 12 % faster writing for 10 % slower reading: the request is shorter, beyond the floor.
    assert tuned.faster(tuned.Speed(decode=44.8, prompt=360.0), base)
    # Within the noise of the two: not faster.
    noisy = tuned.Speed(decode=44.8, prompt=360.0, decode_error=0.1)
    assert not tuned.faster(noisy, base)
    # The prompt batch: prompt speed alone.
    assert tuned.faster(tuned.Speed(decode=39.0, prompt=480.0), base, prompt_only=True)
    assert not tuned.faster(tuned.Speed(decode=60.0, prompt=400.0), base, prompt_only=True)


# ------------------------------------------------------------------ where each applies
def _q4(tmp_path: Path, machine: Machine = HASWELL, **request) -> prepare.Prepared:
    write_tiny_model(tmp_path / "TinyQ4.gguf", Q4)
    prefs = prepare.planner.PlanPrefs(margin_bytes=0, ctx=2048, ctx_floor=512)
    return prepare.prepare(prepare.Request(model=tmp_path / "TinyQ4.gguf", prefs=prefs, **request), fa.CAPS, machine)


def _names(dims):
    return {d.name: d.values for d in dims}


def test_the_dimensions_that_apply_on_a_cpu_that_repacks(tmp_path):
    p = _q4(tmp_path)
    assert p.plan.bytes.cpu_extra.get("CPU_REPACK", 0) > 0  # the plan has re-laid copies
    dims = tuning.dimensions(p, fa.CAPS.has_flag, which=tuning.SWEEP, physical=4, logical=8)
    assert _names(dims) == {"repack": (None, False), "threads": (3, None, 5), "threads_batch": (None, 8),
                            "flash_attn": (None, Switch.OFF), "ubatch": (256, None, 1024)}
    # The quick measurement: repack, threads, flash attention. Two cores and no SMT: one thread beside two.
    assert _names(tuning.dimensions(p, fa.CAPS.has_flag, physical=2, logical=2)) == {
        "repack": (None, False), "threads": (1, None), "flash_attn": (None, Switch.OFF)}


def test_what_the_user_the_fixes_the_build_and_a_recorded_fault_rule_out(tmp_path):
    p = _q4(tmp_path)
    quick_dims = dict(physical=2, logical=2)
    # A fix found during the measurement (the AMX fault): repack stays off.
    assert "repack" not in _names(tuning.dimensions(p, fa.CAPS.has_flag, fixed=crash.NO_REPACK_FIX, **quick_dims))
    # A build that does not know a flag: never tried.
    assert "flash_attn" not in _names(tuning.dimensions(p, lambda f: f != "-fa", **quick_dims))
    # A setting that crashed here before.
    assert "threads" not in _names(tuning.dimensions(p, fa.CAPS.has_flag, faults=(EngineSettings(threads=1),),
                                                     **quick_dims))
    # The user's own -t and -fa.
    own = _q4(tmp_path, extra_args=("-t", "2", "-fa", "on"))
    assert _names(tuning.dimensions(own, fa.CAPS.has_flag, **quick_dims)) == {"repack": (None, False)}
    # The user's -nr: no copies to weigh.
    flat = _q4(tmp_path, extra_args=("-nr",))
    assert flat.plan.bytes.cpu_extra == {} and "repack" not in _names(
        tuning.dimensions(flat, fa.CAPS.has_flag, **quick_dims))
    # On a GPU every layer runs there: no repack, no threads, no flash attention to measure.
    gpu = replace(fa.MACHINE, gpus=[Gpu(index=0, backend="vulkan", name="GPU", total_bytes=8 << 30,
                                        free_bytes=8 << 30, device="Vulkan0")])
    assert _names(tuning.dimensions(_q4(tmp_path, machine=gpu), fa.CAPS.has_flag, **quick_dims)) == {}


# ------------------------------------------------------------------ the stage on fake arms
class TimedFake(fa.Fake):
    """Fake arms with a prompt speed too: `speed(setup)` -> (decode, prompt) tokens/s."""

    def __init__(self, speed, crash_on: EngineSettings | None = None) -> None:
        super().__init__(lambda s: speed(s)[0])
        self.both, self.crash_on = speed, crash_on

    def __call__(self, setup: Setup, r: int) -> Arm:
        if self.crash_on is not None and setup.engine == self.crash_on:
            self.starts.append((setup, r))
            cause = crash.classify(crash.ExitStatus(signal=crash.SIGSEGV), ["segfault"])
            raise arms.SettingFault(cause.sentence, setup.engine, cause)
        arm = super().__call__(setup, r)
        prompt = self.both(setup)[1] * (1.0 + 0.01 * (r % 2))
        return replace(arm, prompt_tokens=1000.0, prompt_ms=1000.0 * 1000.0 / prompt, prompt_rounds=((r, prompt),))


def _landscape(s: Setup) -> tuple[float, float]:
    """One thread writes 15 % faster here (a busy second core), reading a little slower;
    flash attention off writes 4 % faster but reads at half the speed; repack off 2 % (noise)."""
    e = s.engine
    decode, prompt = (130.0 if s.speculates else 100.0), 500.0
    if e.threads == 1:
        decode, prompt = decode * 1.15, prompt * 0.9
    if e.flash_attn == Switch.OFF:
        decode, prompt = decode * 1.04, prompt * 0.5
    if e.repack is False:
        decode *= 1.02
    return decode, prompt


def test_the_quick_measurement_keeps_what_measured_faster_and_the_launch_passes_it(tmp_path):
    p = _q4(tmp_path, ngram_when_no_drafter=True)
    store = measured.MeasuredRecords()
    def landscape(s: Setup) -> tuple[float, float]:
        """Repack off writes 15 % faster here, reading a little slower; flash attention off
        writes 4 % faster but reads at half the speed (the quick measurement leaves threads
        to the sweep)."""
        decode, prompt = (130.0 if s.speculates else 100.0), 500.0
        if s.engine.repack is False:
            decode, prompt = decode * 1.15, prompt * 0.9
        if s.engine.flash_attn == Switch.OFF:
            decode, prompt = decode * 1.04, prompt * 0.5
        return decode, prompt

    fake = TimedFake(landscape)
    m = quick.measure(p, fa.ENGINE, HASWELL, settings=fa.SETTINGS, runner=fake, engine_types=("ngram-mod",),
                      caps=fa.CAPS, tuned=store.tuned())
    t = m.tuned
    assert t is not None and t.settings == EngineSettings(repack=False)
    # Measured without speculation (none's own arms at the defaults, not run again), never
    # crossed with every setup; repack alone (flash attention is the sweep's), once.
    assert t.on == NONE.label() and m.setup.speculates
    assert [s.engine for s, _ in fake.starts if not s.engine.default] == [EngineSettings(repack=False)]
    assert not any(s.speculates for s, _ in fake.starts if not s.engine.default)
    # Nothing is recorded by the run: the caller records it.
    assert store.tuned().entries() == ()
    store.record(m)
    store.tuned().record(t)
    # Auto launches with it, and the plan says which and why.
    engine = session.Engine(fa.ENGINE, pinned_caps())
    planned = session.plan_launch(p.request, engine, HASWELL, session.Records(measured=store))
    argv = planned.spec().argv
    assert planned.settings == EngineSettings(repack=False) and "-nr" in argv
    why = [str(r) for r in planned.prepared.plan.settings_notes]
    # Writing 15 % faster for reading 10 % slower: the reference request 9 % shorter.
    # (Against none's two rounds, the second of which the fake runs 1 % faster and reads at
    # 504: 256/450 + 256/115 s against 256/502 + 256/100.5 s, 2.795 against 3.057, 8.6 % shorter.)
    assert any(r.startswith("weights not repacked (-nr): 9 % faster here, measured "
                            "(115.0 against 100.5 tokens/s written, 450 against 502 read)") for r in why), why
    # `measure` measures afresh: nothing kept is passed.
    again = session.plan_launch(p.request, engine, HASWELL, session.Records(measured=store), ignore_measurements=True)
    assert again.settings == DEFAULTS and "-nr" not in again.spec().argv
    # Forgetting the model forgets its settings.
    assert store.forget(model=p.model.path) == 1 and store.tuned().entries() == ()


def test_a_remembered_fix_and_the_users_own_argument_outrank_a_measured_setting(tmp_path):
    p = _q4(tmp_path)
    store = measured.MeasuredRecords()
    fake = TimedFake(_landscape)
    key = tuned.key_for(p.model.path, fa.ENGINE, HASWELL)
    dims = tuning.dimensions(p, fa.CAPS.has_flag, physical=2, logical=2)
    t = tuning.tune(fake, NONE, dims, 2, arms.Steps(4), key=key)
    store.tuned().record(replace(t, settings=EngineSettings(repack=False, threads=1)))
    fixes = EngineFixes(tmp_path / "fixes.json", machine=HASWELL)
    fixes.record(fa.ENGINE, p.model.path, (), crash.NO_REPACK, msg_for_fix())
    engine = session.Engine(fa.ENGINE, pinned_caps())
    records = session.Records(measured=store, fixes=fixes)
    planned = session.plan_launch(replace(p.request, extra_args=("--threads", "2")), engine, HASWELL, records)
    argv = list(planned.spec().argv)
    assert planned.fixes == crash.NO_REPACK_FIX and planned.settings == DEFAULTS  # -nr from the fix, -t the user's
    assert argv.count("-nr") == 1 and argv[argv.index("--threads") + 1] == "2" and "-t" not in argv
    assert planned.prepared.plan.bytes.cpu_extra == {}  # memory follows the layout that runs
    # A build that does not know -t: not passed either.
    bare = session.Engine(fa.ENGINE, replace(pinned_caps(), flags=pinned_caps().flags - {"-t", "--threads"}))
    planned = session.plan_launch(p.request, bare, HASWELL, session.Records(measured=store))
    assert planned.settings == EngineSettings(repack=False) and "-t" not in planned.spec().argv


def msg_for_fix():
    return crash.feature_fix(crash.ExitStatus(signal=crash.SIGILL), [
        "load_backend: loaded CPU backend from /e/libggml-cpu-sapphirerapids.so"], DEFAULTS, after_ready=False).message


def test_two_settings_faster_alone_are_measured_together_in_a_final(tmp_path):
    p = _q4(tmp_path)

    def both(s: Setup) -> tuple[float, float]:
        e = s.engine
        decode, prompt = 100.0, 500.0
        if e.threads == 1:
            decode *= 1.15
        if e.repack is False:
            decode *= 1.10
        return decode, prompt

    fake = TimedFake(both)
    dims = tuning.dimensions(p, fa.CAPS.has_flag, physical=2, logical=2)
    t = tuning.tune(fake, NONE, dims, 2, arms.Steps(4), key=tuned.key_for(p.model.path, fa.ENGINE, HASWELL))
    assert t.settings == EngineSettings(repack=False, threads=1)
    together = Setup(engine=t.settings)
    assert fake.ran(together) == tuning.FINAL_ROUNDS and fake.ran(NONE) == 2 + tuning.FINAL_ROUNDS
    notes = [str(n) for n in t.notes()]
    # Writing 10 % faster, reading as fast: the reference request 8 % shorter; both: 21 %.
    assert notes[0].startswith("weights not repacked (-nr): 8 % faster here, measured")
    assert notes[-1] == "Together: 21 % faster than the engine's own settings, measured side by side."


def test_where_the_engines_own_settings_stay_the_note_names_what_did_not_beat_them(tmp_path):
    """Not "the fastest": a setting within the noise of the defaults is not kept either, so
    the note says which settings did not beat them (here both are slower)."""
    p = _q4(tmp_path)
    fake = TimedFake(lambda s: (100.0 * (0.9 if s.engine.threads == 1 else 0.97 if s.engine.repack is False else 1.0),
                                500.0))
    dims = tuning.dimensions(p, fa.CAPS.has_flag, physical=2, logical=2)
    t = tuning.tune(fake, NONE, dims, 2, arms.Steps(4), key=tuned.key_for(p.model.path, fa.ENGINE, HASWELL))
    assert t.settings == DEFAULTS
    others = ", ".join(r.settings.label() for r in t.rows if r.settings != DEFAULTS)
    assert "-nr" in others and "-t 1" in others
    assert [str(n) for n in t.notes()] == [
        f"Engine settings: the engine's own are kept; {others} did not beat them beyond the noise on most prompts here."]


def test_a_setting_that_crashes_is_left_out_and_recorded_once_per_machine(tmp_path):
    p = _q4(tmp_path)
    store = tuned.TunedRecords(tmp_path / "settings.json")
    fake = TimedFake(_landscape, crash_on=EngineSettings(threads=1))
    dims = tuning.dimensions(p, fa.CAPS.has_flag, physical=2, logical=2)
    t = tuning.tune(fake, NONE, dims, 2, arms.Steps(4), key=tuned.key_for(p.model.path, fa.ENGINE, HASWELL),
                    on_fault=tuning.recording_faults(store, fa.ENGINE, HASWELL))
    assert fake.ran(Setup(engine=EngineSettings(threads=1))) == 1  # not started again
    assert t.settings == DEFAULTS
    row = next(r for r in t.rows if r.settings == EngineSettings(threads=1))
    assert "segmentation fault" in row.fault
    # Once per machine and engine build, whatever the model: the next stage does not try it.
    assert store.faults_for(fa.ENGINE, HASWELL) == (EngineSettings(threads=1),)
    other = replace(HASWELL, ram_total=HASWELL.ram_total * 2)
    assert store.faults_for(fa.ENGINE, other) == ()
    again = tuning.dimensions(p, fa.CAPS.has_flag, faults=store.faults_for(fa.ENGINE, HASWELL),
                              physical=2, logical=2)
    assert "threads" not in _names(again)


def test_the_kept_settings_read_back_and_an_unreadable_record_is_set_aside(tmp_path):
    p = _q4(tmp_path)
    store = tuned.TunedRecords(tmp_path / "settings.json")
    t = tuning.tune(TimedFake(_landscape), NONE, tuning.dimensions(p, fa.CAPS.has_flag, physical=2, logical=2), 2,
                    arms.Steps(4), key=tuned.key_for(p.model.path, fa.ENGINE, HASWELL))
    store.record(t)
    assert tuned.TunedRecords(tmp_path / "settings.json").get(t.combination) == t
    (tmp_path / "settings.json").write_text("{not json")
    assert tuned.TunedRecords(tmp_path / "settings.json").get(t.combination) is None
    assert list(tmp_path.glob("settings.json.corrupt-*"))


def test_the_carrier_is_what_auto_runs_after_the_measurement():
    m = measured.Measurement(combination=measured.Combination("m", "d", "e", "x"), spec_type="ngram-mod",
                             what="n-gram", tokens_per_s_with=101.0, tokens_per_s_without=100.0, noise=0.01,
                             acceptance=0.5, mean_length=2.0, n_max=None, n_max_flag=None,
                             setup=Setup(ngram="ngram-mod", ngram_len=32))
    # n-gram on trial within the noise: auto leaves it off, so the settings are measured on none.
    assert tuning.carrier_of(m, automatic=True, on_trial=True) == NONE
    assert tuning.carrier_of(replace(m, tokens_per_s_with=130.0), automatic=True, on_trial=True) == m.setup
    # An automatic drafter slower beyond the noise is left out; a chosen one stays.
    slow = replace(m, tokens_per_s_with=50.0)
    assert tuning.carrier_of(slow, automatic=True, on_trial=False) == NONE
    assert tuning.carrier_of(slow, automatic=False, on_trial=False) == m.setup


# ------------------------------------------------------------------ memory follows the choice
def test_a_model_that_fits_only_without_repack_is_planned_without_it(tmp_path):
    """AMX re-lays Q8_0 with 4 bytes more per 34-byte block (amx/mmq.cpp): its copies need more
    than the mapped pages they leave unread. Where that is what stops the fit, the plan turns
    them off (-nr) before any measurement, and says so."""
    amx = replace(fa.MACHINE, cpu_variant="sapphirerapids")
    write_tiny_model(tmp_path / "TinyQ8.gguf", replace(Q4, name="TinyQ8", dtype="Q8_0"))
    prefs = prepare.planner.PlanPrefs(margin_bytes=0, ctx=2048, ctx_floor=2048, kv_type="f16")

    def plan(machine: Machine, *extra: str) -> prepare.Prepared:
        return prepare.prepare(prepare.Request(model=tmp_path / "TinyQ8.gguf", prefs=prefs, extra_args=extra),
                               fa.CAPS, machine)

    def need(p: prepare.Prepared) -> int:
        return sum(d.working_set for d in p.plan.per_device)

    relaid, flat = plan(amx), plan(amx, "-nr")
    assert relaid.plan.bytes.cpu_extra.get("AMX", 0) > 0 and flat.plan.bytes.cpu_extra == {}
    assert need(relaid) > need(flat)
    squeezed = plan(replace(amx, ram_available=(need(relaid) + need(flat)) // 2))
    assert squeezed.plan.fits and squeezed.plan.bytes.cpu_extra == {} and "-nr" in squeezed.plan.plan_args
    assert need(squeezed) == need(flat)  # the plan and the fit are the layout that runs
    assert str(squeezed.plan.reasons[0]).startswith(
        "Weights not repacked (-nr): re-laying them for the CPU's faster kernels would take")
    # Where it fits either way the copies stay (their speed is the measurement's to judge).
    assert "-nr" not in relaid.plan.plan_args and relaid.plan.reasons == flat.plan.reasons


def test_a_setting_arm_is_planned_as_a_launch_with_it_would_be(tmp_path):
    p = _q4(tmp_path)
    flat = prepare.with_engine_settings(p, EngineSettings(repack=False), HASWELL)
    assert flat.plan.bytes.cpu_extra == {} and flat.argv(fa.ENGINE)[-1:] == ["-nr"]
    big = prepare.with_engine_settings(p, EngineSettings(ubatch=1024), HASWELL)
    assert big.plan.bytes.compute > p.plan.bytes.compute and "-ub" in big.plan.plan_args
    off = prepare.with_engine_settings(p, EngineSettings(flash_attn=Switch.OFF), HASWELL)
    assert ("-fa", "off") == off.plan.plan_args[off.plan.plan_args.index("-fa"):][:2]
    # Without flash attention the attention phase holds its f32 KQ scores and mask: ubatch x
    # cells x (4 x heads + 2) more (compute_buffer.scores_bytes), here 512 x 2048 x 18.
    assert off.plan.bytes.compute - p.plan.bytes.compute == 512 * 2048 * (4 * Q4.n_head + 2)


# ------------------------------------------------------------------ a repack kernel that faults
def test_a_repack_kernel_fault_is_fixed_with_no_repack_for_the_machine():
    lines = ["load_tensors:   CPU_REPACK model buffer size =    12.00 MiB", "... "]
    fix = crash.feature_fix(crash.ExitStatus(signal=crash.SIGILL), lines, DEFAULTS, after_ready=False)
    assert fix is not None and fix.args == crash.NO_REPACK and "CPU_REPACK" in str(fix.message)
    # Filed for the machine, whatever the model (core/launch/fixes.py MACHINE_WIDE).
    assert EngineFixes(machine=HASWELL).key_for(fa.ENGINE, Path("m.gguf"), (), fix.args).endswith(
        "#machine=ram=16384|gpus=|unified=0")
    assert crash.feature_fix(crash.ExitStatus(signal=crash.SIGSEGV), lines, DEFAULTS, after_ready=False).args == ("-nr",)
    # Already without repack, or a segfault once serving, or no re-laid weights: not this fault.
    assert crash.feature_fix(crash.ExitStatus(signal=crash.SIGILL), lines, crash.NO_REPACK_FIX, after_ready=False) is None
    assert crash.feature_fix(crash.ExitStatus(signal=crash.SIGSEGV), lines, DEFAULTS, after_ready=True) is None
    assert crash.feature_fix(crash.ExitStatus(signal=crash.SIGILL), ["CPU_Mapped model buffer size = 1"], DEFAULTS,
                             after_ready=False) is None


def test_an_arm_without_prompt_timings_judges_on_decode(tmp_path):
    arm = Arm(NONE, 100.0, 1000.0, ((0, 0, 100.0),), live_figures.Counters())
    assert arm.prompt_per_s == 0.0 and tuning._speed(arm).seconds() == pytest.approx(2.56)
