"""Learning from every request, with consent (docs/learn-from-use.md): the user's engines log
each request's prompt into a folder of Draftwise's (`--log-prompts-dir`,
core/measurements/prompt_log.py), which is taken in as the kept prompts
(the newest 20, each its last 4,000 characters) and emptied; a measurement's engines never log;
the user's own folder wins; clearing and unticking the box delete it. The engine side (a real
`draftwise launch`, the `openai` client, the next launch measuring on what was logged) is
tests/test_prompt_log_engine.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from draftwise.cli.main import main
from draftwise.core import paths
from draftwise.core.engines import capabilities
from draftwise.core.launch import prepare, session
from draftwise.core.measurements import measured, prompt_log, usage, usage_check
from draftwise.core.measuring import learn
from draftwise.core.messages import msg
from draftwise.core.settings import Settings, save
from draftwise.core.speculation.setup import NONE, Setup
from draftwise.testing import tinymodels as tm

CAPS = capabilities.pinned_caps()


@pytest.fixture
def model(tmp_path: Path) -> Path:
    """A model with a drafter beside it (auto runs it, with a fallback without)."""
    geometry = tm.TinyModel(n_embd=128, n_head=4, n_head_kv=4, n_ctx_train=8192)
    tm.write_tiny_model(tmp_path / "models" / "tiny-draft-F32.gguf", tm.draft_model(geometry))
    return tm.write_tiny_model(tmp_path / "models" / "tiny-F32.gguf", geometry)[0]


def _planned(model: Path, tmp_path: Path, *extra: str) -> session.PlannedLaunch:
    from conftest import TEST_MACHINE

    binary = tmp_path / "engine" / "llama-server"
    binary.parent.mkdir(exist_ok=True)
    binary.write_bytes(b"#!/bin/sh\n")
    return session.plan_launch(prepare.Request(model=model, extra_args=tuple(extra)),
                               session.Engine(binary, CAPS), TEST_MACHINE, session.Records.load(TEST_MACHINE))


def _value(argv, flag: str) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == flag]


# ------------------------------------------------------------------ the option
def test_the_users_engine_logs_prompts_with_consent_and_not_without(model: Path, tmp_path: Path):
    planned = _planned(model, tmp_path)
    logged = planned.spec(8181, log_prompts=True)
    folder = paths.data_dir() / "prompt-log" / prompt_log.key(model)
    assert logged.prompt_log == folder
    # Once, after the user's arguments and Draftwise's own settings; the fallback too.
    assert _value(logged.argv, "--log-prompts-dir") == [str(folder)] and logged.argv[-2] == "--log-prompts-dir"
    assert logged.fallback_argv is not None and _value(logged.fallback_argv, "--log-prompts-dir") == [str(folder)]
    # The folder name: the file's stem, made safe, and a hash of its path.
    assert prompt_log.key(model).startswith("tiny-F32-") and len(prompt_log.key(model)) == len("tiny-F32-") + 12
    assert prompt_log.key(tmp_path / "other" / "tiny-F32.gguf") != prompt_log.key(model)

    plain = planned.spec(8181)  # no consent (and every engine Draftwise starts for itself)
    assert "--log-prompts-dir" not in plain.argv and plain.prompt_log is None
    assert list(logged.argv) == [*plain.argv, "--log-prompts-dir", str(folder)]


def test_the_users_own_log_folder_wins_and_is_never_read(model: Path, tmp_path: Path):
    theirs = tmp_path / "mine"
    spec = _planned(model, tmp_path, "--log_prompts_dir", str(theirs)).spec(8181, log_prompts=True)
    # Theirs alone, as they wrote it (the engine reads `_` as `-`).
    assert _value(spec.argv, "--log_prompts_dir") == [str(theirs)] and spec.prompt_log is None
    assert "--log-prompts-dir" not in spec.argv


def test_a_measurement_of_the_users_prompts_logs_none(model: Path, tmp_path: Path, monkeypatch):
    """Measuring again on the user's prompts (learn.remeasure) starts its arms from the plan,
    never from `PlannedLaunch.spec`: its own prompts are not the user's."""
    from draftwise.core.measurements import live_figures
    from draftwise.core.measuring import arms as arms_mod

    started: list = []

    def run_arm(engine_arms, setup, _r):
        started.append(engine_arms.launch(setup))
        return arms_mod.Arm(setup, 100.0, 1.0, (), live_figures.Counters())

    monkeypatch.setattr(arms_mod.EngineArms, "__call__", run_arm)
    target = learn.measured_planned(_planned(model, tmp_path))
    assert target is not None
    kept = Setup(ngram="ngram-simple", ngram_len=32)
    trigger = usage_check.Trigger(kept, (Setup(ngram="ngram-mod", ngram_len=32),), msg("asked"))
    learn.remeasure(target.prepared, target.engine.binary, target.machine, trigger, ("a b c", "d e f"),
                    settings=arms_mod.MeasureSettings(tokens=8, rounds=1))
    assert started and all("--log-prompts-dir" not in s.argv and s.prompt_log is None for s in started)


# ------------------------------------------------------------------ taking them in
def _log(folder: Path, name: str, text: str | bytes, when: float) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    os.utime(path, (when, when))
    return path


def test_ingestion_keeps_the_newest_twenty_cut_to_size_and_deletes_every_file(model: Path):
    store = usage.UsageRecords()
    folder = prompt_log.folder(store, model)
    # 25 requests, written a second apart; the names are the engine's monotonic clock, which
    # does not order files across engine starts: the time of writing does.
    for i in range(25):
        _log(folder, f"{(25 - i) * 1000:012d}.txt", f"<|im_start|>user\nrequest {i}<|im_end|>\n", 1000.0 + i)
    assert prompt_log.ingest(store, model, keep=True, now=2000.0) == usage.KEEP_PROMPTS
    assert store.model(model).prompts == tuple(f"<|im_start|>user\nrequest {i}<|im_end|>\n" for i in range(5, 25))
    assert list(folder.iterdir()) == []

    # One far over the cap: only its last FILE_BYTES are read, and its last PROMPT_CHARS kept.
    big = "x" * (prompt_log.FILE_BYTES * 3) + "é" * 10 + "y" * (usage.PROMPT_CHARS - 10)
    _log(folder, "000000000001.txt", big, 3000.0)
    assert prompt_log.ingest(store, model, keep=True, now=4000.0) == 1
    assert store.model(model).prompts[-1] == "é" * 10 + "y" * (usage.PROMPT_CHARS - 10)
    assert len(store.model(model).prompts) == usage.KEEP_PROMPTS


def test_prompts_that_are_not_text_and_files_still_being_written(model: Path):
    store = usage.UsageRecords()
    folder = prompt_log.folder(store, model)
    # The engine writes a prompt that is not a string as JSON indented by 2 (prompt.dump(2)).
    _log(folder, "000000000001.txt", json.dumps([1, 2, 3], indent=2), 100.0)  # token ids
    _log(folder, "000000000002.txt", json.dumps(["first one", "second one"], indent=2), 101.0)
    _log(folder, "000000000003.txt", b"[\n  " + b"7,\n  " * prompt_log.FILE_BYTES, 102.0)  # too large to parse
    _log(folder, "000000000004.txt", "[INST] a Mistral prompt [/INST]", 103.0)
    fresh = _log(folder, "000000000005.txt", "written just now", 200.0)
    assert prompt_log.ingest(store, model, keep=True, now=200.5) == 3
    assert store.model(model).prompts == ("first one", "second one", "[INST] a Mistral prompt [/INST]")
    # A file of the last second may be one the engine is writing: the next ingestion's, or the
    # last one's (the engine stopped).
    assert list(folder.iterdir()) == [fresh]
    assert prompt_log.ingest(store, model, keep=True, final=True, now=200.5) == 1
    assert store.model(model).prompts[-1] == "written just now" and list(folder.iterdir()) == []


def test_without_consent_what_the_engine_logged_is_deleted_unread(model: Path):
    store = usage.UsageRecords()
    folder = prompt_log.folder(store, model)
    _log(folder, "000000000001.txt", "a private prompt", 100.0)
    assert prompt_log.ingest(store, model, keep=False, now=500.0) == 0
    assert store.models() == [] and list(folder.iterdir()) == []
    assert prompt_log.ingest(store, Path("/no/such/model.gguf"), keep=True) == 0  # no folder: nothing


def test_the_launchs_keeper_takes_them_in_when_a_request_finishes_and_at_the_end(model: Path):
    store = usage.UsageRecords()
    folder = prompt_log.folder(store, model)
    consent = [True]
    keeper = usage.Keeper(usage.Key("m", "e", "x", NONE), store,
                          prompts=prompt_log.Ingest(store, model, lambda: consent[0]))
    _log(folder, "000000000001.txt", "first request", 100.0)
    assert keeper.save() is None and list(folder.iterdir())  # no request finished: not asked
    keeper.lines(["eval time =      10.00 ms /    10 tokens (    1.00 ms per token,  1000.00 tokens per second)",
                  "slot      release: id  0 | task 1 | stop processing: n_tokens = 20, truncated = 0"])
    assert keeper.save() is None and store.model(model).prompts == ("first request",)
    assert list(folder.iterdir()) == []
    consent[0] = False  # the box unticked while the engine runs
    _log(folder, "000000000002.txt", "after the untick", 101.0)
    assert keeper.save(final=True) is None
    assert store.model(model).prompts == ("first request",) and list(folder.iterdir()) == []


# ------------------------------------------------------------------ clearing
def test_prompts_clear_deletes_the_kept_prompts_and_the_log(model: Path, capsys):
    store = usage.UsageRecords()
    store.add_prompts(model, ("kept",))
    _log(prompt_log.folder(store, model), "000000000001.txt", "logged", 100.0)
    other = model.parent / "other.gguf"
    _log(prompt_log.folder(store, other), "000000000001.txt", "logged", 100.0)
    assert main(["prompts", "--clear", str(model)]) == 0
    assert not prompt_log.folder(store, model).exists() and prompt_log.folder(store, other).exists()
    assert main(["prompts", "--clear"]) == 0
    assert "Deleted 0 kept prompts." in capsys.readouterr().out and not store.prompt_log.exists()
    assert store.models() == []


def test_unticking_the_box_deletes_the_log_and_the_chat_keeps_no_copy_of_what_the_engine_logs(qtbot, model: Path):
    from draftwise.viewmodels.chat import ChatViewModel
    from test_chat_viewmodel import Ready, Scripted

    store = usage.UsageRecords()
    launch = Ready()
    launch.spec.model_path = model
    launch.spec.prompt_log = prompt_log.folder(store, model)  # the engine logs this chat's requests
    vm = ChatViewModel(launch, Settings(), stream_factory=Scripted)
    assert vm.send("Rewrite this table.")
    assert store.models() == []  # the engine's file is the prompt as the model saw it: kept once, from there
    _log(prompt_log.folder(store, model), "000000000001.txt", "<|im_start|>user\nRewrite", 100.0)
    vm.set_keep_prompts(False)
    assert not store.prompt_log.exists() and vm.store_problem is None


# ------------------------------------------------------------------ serving
def test_each_served_model_logs_into_its_own_folder_with_consent(tmp_path: Path, capsys, described_machine):
    folder = tmp_path / "lib"
    tm.write_tiny_model(folder / "alpha-F32.gguf", tm.TinyModel(name="alpha"))
    tm.write_tiny_model(folder / "beta-F32.gguf", tm.TinyModel(name="beta", seed=7))
    box = tmp_path / "machine.json"
    box.write_text(json.dumps(described_machine.to_json()))
    assert main(["serve", str(folder), "--json", "--machine", str(box)]) == 0
    served = json.loads(capsys.readouterr().out)["models"]
    store = usage.UsageRecords()
    assert [m["preset"]["log-prompts-dir"] for m in served] == [
        str(prompt_log.folder(store, folder / f"{name}-F32.gguf")) for name in ("alpha", "beta")]
    save(Settings(keep_prompts=False))
    assert main(["serve", str(folder), "--json", "--machine", str(box)]) == 0
    assert all("log-prompts-dir" not in m["preset"] for m in json.loads(capsys.readouterr().out)["models"])


# ------------------------------------------------------------------ measuring on them
def test_the_usage_check_and_the_measurement_take_the_logged_prompts_as_they_are(model: Path):
    """What the engine logged is the chat template's rendering (chatml here, the engine's
    default): the repetition trigger reads its words, and the measurement sends it as it is
    to /completion (learn.prompts_from), where no template is applied again."""
    rows = "".join(f"| {n} | {c} |\n" for n, c in (("apple", "red"), ("banana", "yellow"), ("cherry", "red")))
    logged = tuple(f"<|im_start|>user\nCopy the table for shelf {s}:\n{rows}{rows}<|im_end|>\n<|im_start|>assistant\n"
                   for s in "AB")
    # By hand: 39 words (7 of the ask, "<|im_start|>user" … "A:"; 5 a row, "| apple | red |",
    # 3 rows twice; 2 of the end), 36 predicted after the first three. A hit is a word that
    # followed the same three words last time: in the second copy, "|" after "| red |" (word
    # 22), then "red |" of apple, all of banana's "| yellow |" and its row end, and "cherry |
    # red |" (words 25-27, 29-36): 12. The ask and the first copy have nothing seen before.
    assert usage_check.repetition(logged[0]) == pytest.approx(12 / 36)
    m = measured.Measurement(measured.Combination("m", None, "e", "x"), "", "", 100.0, 100.0, 0.02, None, None,
                             None, None, setup=None, others=((Setup(ngram="ngram-mod", ngram_len=32), 101.0),))
    seen = usage.Usage(usage.Key("m", "e", "x", NONE), tuple(usage.FinishedRequest(32, 320.0) for _ in range(5)), 5)
    trigger = usage_check.should_remeasure(seen, m, prompts=logged, last=None, now=0.0, idle=True)
    assert trigger is not None and "your prompts repeat themselves (33 % of their words" in str(trigger.reason)
    assert learn.prompts_from(logged) == tuple(learn.arms.Prompt(learn.KIND, t) for t in logged)
