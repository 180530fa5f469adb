"""Measuring speculation on the real llama-server with the speed fixtures.

Structure, not speed: figures present, record written, the auto drafter left out after a
recorded slower result, nothing left behind after a cancel or a crash. The speed ratios
themselves are the bench's (bench/speculation.py); here the fixtures are shrunk and each
arm generates a few tokens, so the 2-core machine runs the file in seconds.
"""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from pathlib import Path

import psutil
import pytest

from draftwise.cli.main import main
from draftwise.core import identity
from draftwise.core.engines import capabilities
from draftwise.core.launch import prepare
from draftwise.core.machine import hardware
from draftwise.core.measurements import measured
from draftwise.core.measuring import quick
from draftwise.core.speculation import resolver
from draftwise.testing import tinydrafts as td
from draftwise.testing import tinymodels as tm
from process_checks import StdoutLines

SMALL = dict(n_embd=64, n_layer=4, n_head=4, n_head_kv=2, n_ff=128, dtype="F32")
QUICK = quick.MeasureSettings(tokens=8, rounds=1, n_max_values=(2,))
MACHINE = hardware.Machine(ram_total=16 << 30, ram_available=12 << 30, os="linux")


@pytest.fixture(autouse=True)
def _own_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("DRAFTWISE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DRAFTWISE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DRAFTWISE_CONFIG_DIR", str(tmp_path / "config"))


def _pair(folder: Path, draft: tm.TinyModel | None, target: tm.TinyModel) -> Path:
    model = tm.write_tiny_model(folder / "speedy.gguf", target)[0]
    if draft is not None:
        tm.write_tiny_model(folder / "speedy-draft.gguf", draft)
    return model


@pytest.fixture
def paying(tmp_path: Path) -> Path:
    target = td.paying_target(**SMALL)
    return _pair(tmp_path / "pay", td.exact_draft(target), target)


@pytest.fixture
def slow(tmp_path: Path) -> Path:
    target = td.paying_target(**SMALL)
    return _pair(tmp_path / "slow", td.never_accepted_draft(target), target)


def _prepared(model: Path, engine, **request) -> prepare.Prepared:
    caps = capabilities.capabilities(engine.binary)
    return prepare.prepare(prepare.Request(model=model, **request), caps, MACHINE)


def _engine_processes(binary: Path) -> list[psutil.Process]:
    out = []
    for p in psutil.process_iter(["exe", "cmdline"]):
        try:
            if p.info["exe"] and Path(p.info["exe"]).resolve() == binary.resolve():
                out.append(p)
        except (psutil.Error, OSError):
            continue
    return out


def test_fixtures_draft_exactly_and_never(paying: Path, slow: Path, engine, monkeypatch):
    """The paying draft's guesses are all accepted, the slow one's none: the property the
    bench's ratios rest on, independent of machine speed. Behind a proxy that does not
    answer (issue 36): the arms start and ask their engines through the launch path, which
    keeps loopback away from proxies (core/processes/loopback.py)."""
    for var in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    good = quick.measure(_prepared(paying, engine), engine.binary, MACHINE, settings=QUICK)
    assert good.acceptance == pytest.approx(1.0)
    assert good.mean_length == pytest.approx(3.0)  # every step: 2 drafted + the target's own
    bad = quick.measure(_prepared(slow, engine), engine.binary, MACHINE, settings=QUICK)
    assert bad.acceptance == 0.0
    for result in (good, bad):
        assert result.tokens_per_s_with > 0 and result.tokens_per_s_without > 0
        assert result.n_max == 2 and result.n_max_flag == "--spec-draft-n-max"
        assert result.tried and result.tried[0][0] == 2


def test_a_start_of_a_drafter_whose_drafts_are_refused_stops_early(paying: Path, slow: Path, engine):
    """The quick measurement's arms (`stop_refused`): the never-accepted draft stops once it
    drafted REFUSED_DRAFTED tokens with none accepted, its figures on the prompts it ran; the
    same start without the stop runs every prompt, and the paying draft is never stopped."""
    from draftwise.core.measuring import arms

    settings = replace(QUICK, tokens=16)
    prepared = _prepared(slow, engine)
    setup = replace(quick.own_setup(prepared.spec), n_max=2)
    said: list[str] = []
    steps = arms.Steps(1 + len(settings.prompts), report=lambda p: said.append(str(p.text)))
    arm = arms.EngineArms(prepared, engine.binary, settings=replace(settings, stop_refused=True), steps=steps,
                          machine=MACHINE)(setup, 0)
    assert arm.refused and arm.counters.accepted == 0 and arm.counters.drafted >= arms.REFUSED_DRAFTED
    assert 0 < len(arm.per_request) < len(settings.prompts)
    assert any(t.endswith(f"stopped, its drafts are refused (0 of {arm.counters.drafted:.0f} accepted)") for t in said)
    full = arms.EngineArms(prepared, engine.binary, settings=settings, machine=MACHINE)(setup, 0)
    assert not full.refused and len(full.per_request) == len(settings.prompts)
    good = _prepared(paying, engine)
    kept = arms.EngineArms(good, engine.binary, settings=replace(settings, stop_refused=True), machine=MACHINE)(
        replace(quick.own_setup(good.spec), n_max=2), 0)
    assert not kept.refused and len(kept.per_request) == len(settings.prompts)


def test_recorded_slower_result_leaves_the_auto_drafter_out_and_forget_resets(slow: Path, engine, capsys):
    prepared = _prepared(slow, engine)
    assert prepared.spec.source == resolver.AUTO_COMPANION
    result = quick.measure(prepared, engine.binary, MACHINE, settings=QUICK)
    # The decision on a recorded figure, whatever this machine's speed: record it as slower.
    records = measured.MeasuredRecords()
    records.record(replace(result, tokens_per_s_with=result.tokens_per_s_without * 0.5, noise=0.0))
    caps = capabilities.capabilities(engine.binary)
    again = prepare.prepare(prepare.Request(model=slow), caps, MACHINE, measured=records, engine=engine.binary)
    assert again.spec.argv == ()
    assert again.measurement is not None
    assert any("measured slower: 0.50× — started without the draft model speedy-draft.gguf" in str(n)
               for n in again.spec.notes)
    # The user's own draft stays, with the figure.
    forced = prepare.prepare(prepare.Request(model=slow, draft=slow.parent / "speedy-draft.gguf"), caps, MACHINE,
                             measured=records, engine=engine.binary)
    forced_key = prepare.combination(slow, forced.chosen, engine.binary, MACHINE)
    records.record(replace(result, combination=forced_key, tokens_per_s_with=result.tokens_per_s_without * 0.5,
                           noise=0.0))
    forced = prepare.prepare(prepare.Request(model=slow, draft=slow.parent / "speedy-draft.gguf"), caps, MACHINE,
                             measured=records, engine=engine.binary)
    assert forced.spec.argv and "--spec-draft-n-max" in forced.spec.argv
    assert any("you chose it" in str(w) for w in forced.spec.warnings)
    # A faster record passes the tuned draft length.
    records.record(replace(result, tokens_per_s_with=result.tokens_per_s_without * 2, noise=0.0, n_max=8,
                           setup=replace(result.setup, n_max=8)))
    tuned = prepare.prepare(prepare.Request(model=slow), caps, MACHINE, measured=records, engine=engine.binary)
    assert tuned.spec.argv[-2:] == ("--spec-draft-n-max", "8")
    assert main(["measure", str(slow), "--forget"]) == 0
    assert measured.MeasuredRecords().entries() == [r for r in records.entries()
                                                    if not r.combination.matches_model(slow)]


def test_cli_measure_prints_the_figures_and_records_them(paying: Path, engine, capsys):
    code = main(["measure", str(paying), "--engine", str(engine.binary), "--tokens", "8", "--rounds", "2",
                 "--n-max", "2,4", "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    data = json.loads(out[out.index("{"):])
    for key in ("tokens_per_s_with", "tokens_per_s_without", "ratio", "acceptance", "mean_length", "n_max", "noise"):
        assert data[key] is not None, key
    assert data["n_max"] in (2, 4) and len(data["tried"]) == 2
    records = measured.MeasuredRecords()
    entries = records.entries()
    assert len(entries) == 1 and entries[0].combination.matches_model(paying)
    assert entries[0].n_max == data["n_max"] and entries[0].n_max_flag == "--spec-draft-n-max"
    # `plan` on the same engine finds the record measure wrote (the same combination key) and
    # decides by it. Its figures are this machine's, so the record is made a clear 2x first:
    # plan must then pass the tuned length and say the figure, exactly.
    # Which setup won here (the drafter alone, or with ngram-mod beside it) is this machine's
    # too, so the record names the drafter alone at the length measure found.
    alone = replace(entries[0].setup, ngram=None, ngram_len=None)
    records.record(replace(entries[0], tokens_per_s_with=entries[0].tokens_per_s_without * 2, noise=0.0,
                           setup=alone, what="the draft model speedy-draft.gguf"))
    assert main(["plan", str(paying), "--engine", str(engine.binary), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    argv = plan["argv"]
    assert argv[argv.index("--spec-draft-n-max") + 1] == str(data["n_max"])
    assert argv.count("--spec-draft-n-max") == 1 and "speedy-draft.gguf" in " ".join(argv)
    assert "ngram-mod" not in " ".join(argv)
    assert (f"measured 2.00× with the draft model speedy-draft.gguf ({alone.label()}, the fastest tried)"
            in plan["speculative"]["notes"])


def test_cancelled_measurement_leaves_no_engine_and_no_record(paying: Path, engine):
    cancel = threading.Event()
    seen: list[quick.Progress] = []

    def report(p: quick.Progress) -> None:
        seen.append(p)
        if p.step >= 2:  # once the engine of the first arm is serving
            cancel.set()

    with pytest.raises(quick.Cancelled):
        quick.measure(_prepared(paying, engine), engine.binary, MACHINE,
                      settings=quick.MeasureSettings(tokens=8, rounds=2, n_max_values=(2,)), cancel=cancel, report=report)
    assert seen and seen[-1].step < seen[-1].steps
    # Engines of other tests may run on this machine: none may be serving this model.
    left = [p.pid for p in _engine_processes(engine.binary) if str(paying) in (p.info["cmdline"] or [])]
    assert left == []
    assert not (Path(measured.paths.data_dir()) / measured.FILE_NAME).exists()


def test_a_model_that_cannot_run_gets_the_crash_sentence(tmp_path: Path, engine, capsys):
    target = tm.TinyModel(name="wreck")
    model = tm.write_tiny_model(tmp_path / "wreck" / "wreck.gguf", target)[0]
    bad_draft = tm.broken_draft(tmp_path / "wreck" / "wreck-draft.gguf", target)
    code = main(["measure", str(model), "--engine", str(engine.binary), "--draft", str(bad_draft),
                 "--tokens", "4", "--rounds", "1", "--n-max", "2"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "measurement failed: The engine stopped:" in out
    assert "speed-up" not in out
    assert not (Path(measured.paths.data_dir()) / measured.FILE_NAME).exists()


def test_measure_with_no_drafter_measures_the_ngram_types(tmp_path: Path, engine, capsys):
    """Not "There is no speculation to measure … No drafter found": the n-gram types, each
    against none, and the fastest recorded where auto looks for it (no --ngram needed)."""
    model = tm.write_tiny_model(tmp_path / "alone" / "alone.gguf", tm.TinyModel())[0]
    code = main(["measure", str(model), "--engine", str(engine.binary), "--tokens", "8", "--rounds", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "No drafter found for alone.gguf: measuring n-gram speculation" in out
    for kind in ("ngram-mod 32", "ngram-simple 32"):
        assert f"({kind})" in out, kind
    entries = measured.MeasuredRecords().entries()
    assert len(entries) == 1 and entries[0].setup is not None and entries[0].setup.ngram == entries[0].spec_type
    label = entries[0].setup.label()
    # What auto does with it, said as it is: run where it pays, else off.
    assert (f"setup kept: {label}" if entries[0].pays else
            f"fastest setup: {label}; not faster than none beyond the noise") in out
    # Speculation off stays off: nothing to measure.
    assert main(["measure", str(model), "--engine", str(engine.binary), "--mtp", "off"]) == 2
    assert "no speculation to measure" in capsys.readouterr().err


def test_cli_sweep_prints_the_table_records_the_best_and_plan_runs_it(tmp_path: Path, engine, capsys):
    """`measure --sweep` on the engine (a model with no drafter: the three n-gram types at their
    lengths): a row per setup run, the best recorded beside the quick measurements, and the next
    `plan` passing exactly its types and length without --ngram."""
    model = tm.write_tiny_model(tmp_path / "alone" / "alone.gguf", tm.TinyModel())[0]
    code = main(["measure", str(model), "--engine", str(engine.binary), "--tokens", "8", "--rounds", "1", "--sweep"])
    out = capsys.readouterr().out
    assert code == 0, out
    sweeps = measured.MeasuredRecords().sweeps().entries()
    assert len(sweeps) == 1 and measured.MeasuredRecords().entries() == []
    table = sweeps[0]
    kinds = {r.setup.ngram for r in table.rows}
    assert kinds == {"ngram-mod", "ngram-simple", "ngram-map-k"}
    for t in kinds:  # each type widened from 32 both ways
        lengths = {r.setup.ngram_len for r in table.rows if r.setup.ngram == t}
        assert 32 in lengths and lengths & {48, 64} and lengths & {8, 16, 24}, (t, lengths)
    for row in table.rows:
        assert row.setup.label() in out
    best = table.best
    assert f"{best.setup.label()}" in out and "best" in out
    # Whatever this machine's speed: the decision on a best clearly faster than none.
    measured.MeasuredRecords().sweeps().record(replace(table, base_tokens_per_s=best.tokens_per_s / 2, base_noise=0.0))
    assert main(["plan", str(model), "--engine", str(engine.binary), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    s = best.setup  # n-gram types alone: their types and lengths, no drafter
    assert plan["speculative"]["type"] == ",".join(s.types)
    assert plan["speculative"]["argv"] == ["--spec-type", ",".join(s.types),
                                           *(t for flag, n in s.lengths for t in (flag, str(n)))]


def test_measure_refuses_what_does_not_fit(tmp_path: Path, engine, capsys):
    # Trained for 100M tokens: the plan takes the whole context (a slot never gets more than
    # the trained length), and that does not fit.
    target = td.paying_target(**SMALL, n_ctx_train=100_000_000)
    big = _pair(tmp_path / "big", td.exact_draft(target), target)
    assert main(["measure", str(big), "--engine", str(engine.binary), "--ctx", "100000000"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("draftwise: ") and "measure" not in err.split(":", 1)[0]


def test_cli_launch_prints_the_drafting_figures(paying: Path, engine):
    import os
    import signal
    import subprocess
    import sys

    from draftwise.core.launch import headless, launch_spec

    proc = subprocess.Popen(
        [sys.executable, "-m", "draftwise.cli.main", "launch", str(paying), "--engine", str(engine.binary),
         "--ctx", "512", "--port", str(launch_spec.any_free_port())],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "DRAFTWISE_API_KEY": "figures-key"},
    )
    lines = StdoutLines(proc)
    try:
        url = lines.wait_for("ready").split()[1]
        headless.request(url, "figures-key", "/completion",
                         {"prompt": "hello", "n_predict": 24, "temperature": 0, "ignore_eos": True}, 60)
        figures = lines.wait_for("drafting:", timeout=30)
        assert "acceptance 100 %" in figures and "tokens/s" in figures and "mean accepted length" in figures
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not any(line.startswith("warning: The engine started without") for line in lines.seen)
    # The request's own figures, kept per model and setup (docs/learn-from-use.md).
    from draftwise.core.measurements import usage

    [kept] = usage.UsageRecords().record_file.read()
    assert kept.count == 1 and kept.requests[0].tokens == 24 and kept.requests[0].drafted > 0
    assert kept.key.setup.drafter == "draft-simple" and identity.same_file(kept.key.model, paying)


def test_cli_launch_of_a_combined_type_says_which_type_drafted_how_much(paying: Path, engine):
    """Two types in one launch (`--spec-type ngram-simple,draft-simple`): `launch` prints, under
    the figures, the share each drafted, from the engine's per-type statistics lines."""
    import os
    import signal
    import subprocess
    import sys

    from draftwise.core.launch import headless, launch_spec

    proc = subprocess.Popen(
        [sys.executable, "-m", "draftwise.cli.main", "launch", str(paying), "--engine", str(engine.binary),
         "--ctx", "1024", "--port", str(launch_spec.any_free_port()), "--draft", str(paying.parent / "speedy-draft.gguf"),
         "--", "--spec-type", "ngram-simple,draft-simple"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "DRAFTWISE_API_KEY": "figures-key"},
    )
    lines = StdoutLines(proc)
    try:
        url = lines.wait_for("ready").split()[1]
        headless.request(url, "figures-key", "/completion",
                         {"prompt": "the cat sat on the mat. " * 8, "n_predict": 96, "temperature": 0,
                          "ignore_eos": True}, 60)
        lines.wait_for("drafting:", timeout=30)
        by_type = lines.wait_for("  drafted tokens by type:", timeout=10)
        assert "ngram-simple" in by_type and "draft-simple" in by_type and "accepted" in by_type
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_sweep_arm_runs_the_draft_beside_an_mtp_head_with_its_own_plan(tmp_path: Path, engine):
    """The sweep's arm for the resolver's alternative (a draft model beside a model with its own
    MTP head) starts the engine with that file and the draft model's own plan flags, and drafts."""
    from draftwise.core.measuring import arms, sweep
    from draftwise.core.speculation.setup import Setup

    target = tm.mtp_model(name="TinyMTP")
    model = tm.write_tiny_model(tmp_path / "mtp" / "TinyMTP.gguf", target)[0]
    draft = tm.write_tiny_model(tmp_path / "mtp" / "TinyMTP-draft.gguf", tm.draft_model(target))[0]
    p = _prepared(model, engine)
    assert p.spec.source == resolver.AUTO_MTP
    drafters = sweep.fitting_drafters(p, MACHINE)
    (key,) = drafters
    run = arms.EngineArms(p, engine.binary, settings=QUICK, drafters=drafters)
    setup = Setup("draft-simple", n_max=2, drafter_key=key)
    argv = list(run.launch(setup).argv)
    assert argv[argv.index("--spec-draft-model") + 1] == str(draft) and "--spec-draft-ngl" in argv
    arm = run(setup, 0)
    assert arm.tokens > 0 and arm.counters.drafted > 0
