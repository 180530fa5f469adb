"""One record module and one set of keys (issue 19 item 2; core/records.py, core/identity.py).

Every store in the data folder — broken drafters, speed measurements, ladder rungs, engine
fixes, the processor speed, the helper drafters — goes through `records.JsonRecord`, so each
meets the same policy: a round trip keeps its sentences as messages, a damaged file is set
aside and reported, a newer version's file is left untouched and never written over, an
unreadable one is not written over either, and a file of the earlier format (English
reasons, earlier keys) is still read and its reasons shown translated. `measure`, `launch`,
`plan` and the window file and find a measurement under one machine key on a machine with
an integrated GPU and lavapipe beside it, and an engine fix is read under the devices it was
written under.
"""

from __future__ import annotations

import ast
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from draftwise.core import identity, records
from draftwise.core.hub import helpers
from draftwise.core.launch import crash, ladder, launch_flow, prepare
from draftwise.core.launch.fixes import EngineFixes
from draftwise.core.launch.ladder import Concessions
from draftwise.core.launch.ladder_record import LadderRecord
from draftwise.core.machine import device_choice, hardware, speed
from draftwise.core.machine.hardware import GB, Gpu, Machine
from draftwise.core.measurements.measured import Combination, MeasuredRecords, Measurement
from draftwise.core.measurements.usage import FinishedRequest as UsageRequest
from draftwise.core.measurements.usage import Key as UsageKey
from draftwise.core.measurements.usage import UsageRecords
from draftwise.core.messages import Message, from_english, msg
from draftwise.core.speculation.broken import BrokenDrafters
from draftwise.core.speculation.setup import Setup

APP = Path(__file__).resolve().parents[1] / "app" / "draftwise"
MACHINE = Machine(ram_total=16 * GB, ram_available=12 * GB, os="Linux", described=True,
                  gpus=[Gpu(0, "vulkan", "AMD Radeon Graphics (RADV GFX1103_R1)", total_bytes=2 * GB,
                            free_bytes=2 * GB, integrated=True, device="Vulkan0")])
DRAFTER = "draft-simple|/m/tiny-draft.gguf|100|200"
# A sentence as a crash cause gives it: a template with a nested message.
REASON = msg("The engine stopped unexpectedly ({status}).", status=msg("exit code {code}", code=1))
JAPANESE = {"The engine stopped unexpectedly ({status}).": "エンジンが予期せず停止しました（{status}）。",
            "exit code {code}": "終了コード {code}"}


def _translate(template: str) -> str:
    return JAPANESE.get(template, template)


@dataclass
class Ctx:
    engine: Path
    model: Path
    draft: Path


@pytest.fixture
def ctx(tmp_path: Path) -> Ctx:
    engine = tmp_path / "engine" / "llama-server"
    engine.parent.mkdir()
    engine.write_bytes(b"a build")
    model = tmp_path / "models" / "gemma-3-270m-Q4_K_M.gguf"
    model.parent.mkdir()
    model.write_bytes(b"GGUF a model")
    draft = model.with_name("tiny-draft.gguf")
    draft.write_bytes(b"GGUF a drafter")
    return Ctx(engine, model, draft)


def _combination(c: Ctx) -> Combination:
    return Combination(identity.file_key(c.model), DRAFTER, identity.engine_build_key(c.engine),
                       identity.machine_key(MACHINE))


def _measurement(c: Ctx) -> Measurement:
    return Measurement(_combination(c), "draft-simple", "tiny-draft.gguf", 30.0, 20.0, 0.02, 0.8, 2.5, 4,
                       "--spec-draft-n-max")


@dataclass(frozen=True)
class Store:
    """One store as a test drives it: its file name, one entry written, whether it is found,
    the record behind it, and the sentence an entry keeps (None: it keeps none)."""

    name: str
    file_name: str
    write: Callable[[Path, Ctx], None]
    found: Callable[[Path, Ctx], bool]
    record_file: Callable[[Path], records.JsonRecord]
    reason: Callable[[Path], Any] | None = None


STORES = [
    Store("broken drafters", "broken-drafters.json",
          lambda p, c: BrokenDrafters(p).record(c.engine, DRAFTER, REASON),
          lambda p, c: DRAFTER in BrokenDrafters(p).broken_for(c.engine),
          lambda p: BrokenDrafters(p).record_file,
          lambda p: BrokenDrafters(p).entries()[0].reason),
    Store("measurements", "speculation-measured.json",
          lambda p, c: MeasuredRecords(p).record(_measurement(c)),
          lambda p, c: MeasuredRecords(p).get(_combination(c)) is not None,
          lambda p: MeasuredRecords(p).record_file),
    Store("ladder rungs", "ladder-rungs.json",
          lambda p, c: LadderRecord(p).record(c.model, MACHINE, c.engine, Concessions(rung=ladder.CTX_HALF, ctx=2048),
                                              REASON),
          lambda p, c: LadderRecord(p).lookup(c.model, MACHINE, c.engine).ctx == 2048,
          lambda p: LadderRecord(p).record_file,
          lambda p: LadderRecord(p).entries()[0].reason),
    Store("engine fixes", "engine-fixes.json",
          lambda p, c: EngineFixes(p, MACHINE).record(c.engine, c.model, ("Vulkan0",), crash.FA_OFF, REASON),
          lambda p, c: EngineFixes(p, MACHINE).args_for(c.engine, c.model, ("Vulkan0",)) == crash.FA_OFF,
          lambda p: EngineFixes(p).record_file,
          lambda p: EngineFixes(p).entries()[0].reason),
    Store("processor speed", "speed-probe.json",
          lambda p, c: speed.remember(c.engine, speed.Throughput(33e9, "engine", 2, "now"), p),
          lambda p, c: speed.recorded(c.engine, p) is not None,
          speed.record_file),
    Store("your requests", "speculation-usage.json",
          lambda p, c: UsageRecords(p).add(_usage_key(c), (UsageRequest(64, 900.0, 32, 20),)),
          lambda p, c: UsageRecords(p).usage(_usage_key(c)) is not None,
          lambda p: UsageRecords(p).record_file),
    Store("your prompts", "your-prompts.json",
          lambda p, c: UsageRecords(p.with_name("speculation-usage.json")).add_prompts(c.model, ("Summarise this.",)),
          lambda p, c: UsageRecords(p.with_name("speculation-usage.json")).model(c.model).prompts == (
              "Summarise this.",),
          lambda p: UsageRecords(p.with_name("speculation-usage.json")).prompts_file),
    Store("helper drafters", "helpers.json",
          lambda p, c: helpers.remember(c.draft, c.model, p),
          lambda p, c: helpers.recorded(p) == {str(c.draft): str(c.model)},
          helpers.record_file),
]
IDS = [s.name for s in STORES]
def _usage_key(c: Ctx) -> UsageKey:
    return UsageKey(identity.file_key(c.model), identity.engine_build_key(c.engine), identity.machine_key(MACHINE),
                    Setup(ngram="ngram-mod", ngram_len=32))


def _try_write(store: Store, path: Path, c: Ctx) -> OSError | None:
    try:
        store.write(path, c)
    except OSError as exc:
        return exc
    return None


# ------------------------------------------------------------------ every store, one policy
@pytest.mark.parametrize("store", STORES, ids=IDS)
def test_a_round_trip_keeps_the_entry_and_its_sentence_as_a_message(store, ctx, tmp_path):
    path = tmp_path / "data" / store.file_name
    assert not store.found(path, ctx)
    store.write(path, ctx)
    store.write(path, ctx)  # the same entry again: replaced, not added
    assert store.found(path, ctx)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["version"] == 1 and len(data[store.record_file(path).container]) == 1
    assert not list(path.parent.glob(".*.tmp"))  # the atomic write left nothing behind
    if store.reason is not None:
        reason = store.reason(path)
        assert reason == REASON  # template and arguments, nested message included
        assert reason.render(_translate) == "エンジンが予期せず停止しました（終了コード 1）。"
        entry = data["entries"][0]
        assert entry["reason"] == "The engine stopped unexpectedly (exit code 1)."  # the English, for people


DAMAGED = [b"{not json", b"\xff\xfe{}", b"[1, 2]", b'{"entries": []}', b'{"version": "1", "entries": []}',
           b'{"version": 1}']


@pytest.mark.parametrize("body", DAMAGED, ids=["json", "not-text", "list", "no-version", "text-version", "no-entries"])
@pytest.mark.parametrize("store", STORES, ids=IDS)
def test_a_damaged_file_is_set_aside_reported_and_a_new_one_started(store, body, ctx, tmp_path):
    path = tmp_path / store.file_name
    path.write_bytes(body)
    record = store.record_file(path)
    assert record.read() == record._empty()
    assert isinstance(record.problem, Message) and "was set aside as" in str(record.problem)
    [aside] = tmp_path.glob(f"{store.file_name}.corrupt-*")
    assert aside.read_bytes() == body and aside.name in str(record.problem)  # nothing the user had is lost
    assert not path.exists()
    store.write(path, ctx)
    assert store.found(path, ctx)


@pytest.mark.parametrize("store", [s for s in STORES if s.reason is not None], ids=lambda s: s.name)
def test_an_entry_this_version_cannot_read_is_damage_too(store, ctx, tmp_path):
    path = tmp_path / store.file_name
    path.write_text(json.dumps({"version": 1, "entries": [{"reason": "x"}]}), encoding="utf-8")
    record = store.record_file(path)
    assert record.read() == [] and "was set aside as" in str(record.problem)


# One write-error rule for every store (issue 36): a failed write raises, for the caller to
# name to the user; none swallows it (the processor speed's callers carry it: test_speed.py).
@pytest.mark.parametrize("store", STORES, ids=IDS)
def test_a_newer_versions_file_is_left_untouched_and_never_written_over(store, ctx, tmp_path):
    path = tmp_path / store.file_name
    container = store.record_file(path).container
    body = json.dumps({"version": 2, container: {"what": "a later Draftwise's"}, "more": True})
    path.write_text(body, encoding="utf-8")
    record = store.record_file(path)
    assert record.read() == record._empty()
    assert "newer Draftwise" in str(record.problem) and str(path) in str(record.problem)
    failed = _try_write(store, path, ctx)
    assert isinstance(failed, records.NotWritten) and "newer Draftwise" in str(records.write_error(failed))
    assert path.read_text(encoding="utf-8") == body  # untouched
    assert not list(tmp_path.glob(f"{store.file_name}.corrupt-*"))
    assert not store.found(path, ctx)


@pytest.mark.parametrize("store", STORES, ids=IDS)
def test_an_unreadable_file_is_reported_and_not_written_over(store, ctx, tmp_path):
    path = tmp_path / store.file_name
    path.mkdir()  # a folder where the file should be: it cannot be read
    (path / "keep").write_text("mine")
    record = store.record_file(path)
    assert record.read() == record._empty()
    assert str(record.problem).startswith("Could not read the ") and str(path) in str(record.problem)
    failed = _try_write(store, path, ctx)
    assert isinstance(failed, records.NotWritten) and str(path) in str(records.write_error(failed))
    assert (path / "keep").read_text() == "mine"


# ------------------------------------------------------------------ files of the earlier format
ENGLISH = "The engine stopped unexpectedly (exit code 1)."
LADDER_ENGLISH = ("The engine ran out of memory for the context while starting. Starting it again with "
                  "a 2,048-token context.")


def _earlier_files(c: Ctx, folder: Path) -> dict[str, Path]:
    """The four stores as the earlier Draftwise wrote them: English reasons, earlier keys
    (the fix's model by path and size, the measurement's machine by OS, bytes and backend)."""
    engine = identity.engine_build_key(c.engine)
    files = {
        "broken": {"engine": engine, "drafter": DRAFTER, "reason": ENGLISH, "when": "2026-11-30T10:00:00"},
        "ladder": {"model": identity.file_key(c.model), "machine": identity.machine_key(MACHINE), "engine": engine,
                   "concessions": {"rung": ladder.CTX_HALF, "ctx": 2048}, "reason": LADDER_ENGLISH,
                   "when": "2026-11-30T10:00:00"},
        "fixes": {"key": f"{engine}#{c.model.resolve()}|{c.model.stat().st_size}#Vulkan0", "args": ["-fa", "off"],
                  "reason": "Something no template of this version says.", "when": "2026-11-30T10:00:00"},
        "measured": {**_measurement(c).to_json(), "combination": {
            **_combination(c).to_json(),
            "machine": f"Linux|{MACHINE.ram_total}|vulkan:{MACHINE.gpus[0].name}:{MACHINE.gpus[0].total_bytes}"}},
    }
    out = {}
    for name, entry in files.items():
        out[name] = folder / f"{name}.json"
        out[name].write_text(json.dumps({"version": 1, "entries": [entry]}, indent=1), encoding="utf-8")
    return out


def test_files_of_the_earlier_format_are_read_with_their_keys_and_english_reasons(ctx, tmp_path):
    files = _earlier_files(ctx, tmp_path)
    # Found under today's keys.
    assert BrokenDrafters(files["broken"]).broken_for(ctx.engine) == {DRAFTER}
    assert LadderRecord(files["ladder"]).lookup(ctx.model, MACHINE, ctx.engine).ctx == 2048
    assert EngineFixes(files["fixes"], MACHINE).args_for(ctx.engine, ctx.model, ("Vulkan0",)) == crash.FA_OFF
    decision = replace(prepare.resolver.NO_SPECULATION, spec_type="draft-simple", drafter_key=DRAFTER)
    assert decision.argv == ("--spec-type", "draft-simple")
    found = MeasuredRecords(files["measured"]).get(prepare.combination(ctx.model, decision, ctx.engine, MACHINE))
    assert found is not None and found.ratio == pytest.approx(1.5)
    # An English reason a template of this version gives exactly is its message again (and is
    # shown translated); one no template gives is shown as it is.
    reason = BrokenDrafters(files["broken"]).entries()[0].reason
    assert isinstance(reason, Message) and reason.template == "The engine stopped unexpectedly ({status})."
    assert reason.render(_translate) == "エンジンが予期せず停止しました（終了コード 1）。" and str(reason) == ENGLISH
    step = LadderRecord(files["ladder"]).entries()[0].reason
    assert isinstance(step, Message) and step.template == "{cause} Starting it again with {change}."
    assert str(step) == LADDER_ENGLISH
    assert EngineFixes(files["fixes"]).entries()[0].reason == "Something no template of this version says."
    # A new write files the entry under today's key, in place of the earlier one.
    EngineFixes(files["fixes"], MACHINE).record(ctx.engine, ctx.model, ("Vulkan0",), crash.FA_OFF, REASON)
    [entry] = json.loads(files["fixes"].read_text())["entries"]
    assert entry["key"].endswith(f"#{identity.file_key(ctx.model)}#Vulkan0")
    combo = prepare.combination(ctx.model, decision, ctx.engine, MACHINE)  # as measure files it
    MeasuredRecords(files["measured"]).record(replace(_measurement(ctx), combination=combo))
    [entry] = json.loads(files["measured"].read_text())["entries"]
    assert entry["combination"]["machine"] == identity.machine_key(MACHINE)


def test_english_is_matched_only_by_whole_templates_and_always_reads_back_the_same():
    assert from_english("A sentence nobody wrote.") == "A sentence nobody wrote."
    assert from_english("") == ""
    # A bare "{a} {b}" template proves nothing: "two words" stays text.
    assert from_english("two words") == "two words"
    for text in (ENGLISH, LADDER_ENGLISH, "The engine stopped unexpectedly (killed by SIGKILL): out of memory."):
        assert str(from_english(text)) == text


def test_a_stored_message_that_does_not_fill_its_template_is_damage(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text(json.dumps({"version": 1, "entries": [{"engine": "e", "drafter": "d", "reason": "x",
                                                           "reason_message": {"template": "{missing}", "args": {}}}]}))
    store = BrokenDrafters(path)
    assert store.entries() == [] and "was set aside as" in str(store.problem)


# ------------------------------------------------------------------ one record module
@pytest.mark.parametrize("store", STORES, ids=IDS)
def test_every_store_writes_through_the_record_module(store, ctx, tmp_path, monkeypatch):
    """Each store's write reaches the disk by records.write_atomic's os.replace, from no
    other module."""
    callers = []
    real = os.replace

    def spy(src, dst, *a, **k):
        import sys

        callers.append(sys._getframe(1).f_globals.get("__name__"))
        return real(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", spy)
    store.write(tmp_path / store.file_name, ctx)
    assert callers == ["draftwise.core.records"]


# Modules that move files into place that are not records, and why.
NOT_RECORDS = {
    "core/hub/download.py": "a downloaded model file moved from its .part name",
    "core/gguf/writer.py": "a generated GGUF model",
    "core/engines/provision.py": "an engine install folder moved from staging",
    "core/hub/remote.py": "a hub file's header copy (a sparse GGUF file in the cache)",
    "core/hub/judge.py": "a hub model's judged folder of header links, moved into place whole",
}


def test_no_other_module_renames_files_or_dumps_json_into_a_file():
    """The atomic write lives in core/records.py: elsewhere no os.replace/os.rename,
    Path.replace/rename, shutil.move or json.dump, except the files that are not records."""
    found = []
    for path in sorted(APP.rglob("*.py")):
        rel = path.relative_to(APP).as_posix()
        if rel == "core/records.py" or rel in NOT_RECORDS or rel.startswith("testing/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            f = node.func
            owner = f.value.id if isinstance(f.value, ast.Name) else None
            if (owner, f.attr) in {("os", "replace"), ("os", "rename"), ("shutil", "move"), ("json", "dump")} \
                    or (f.attr in ("replace", "rename") and len(node.args) == 1 and not node.keywords):
                found.append(f"{rel}:{node.lineno} {owner or '…'}.{f.attr}")
    assert not found, "write through core/records.py:\n" + "\n".join(found)
    for rel in NOT_RECORDS:
        assert (APP / rel).is_file(), f"{rel} is gone: drop it from NOT_RECORDS"


# The launch session's stores, each made in its own module and in `session.Records.load`
# alone (issue 36 item 3): every caller uses the Records a plan was made from, or loads them.
SESSION_STORES = {
    "MeasuredRecords": "core/measurements/measured.py",
    "BrokenDrafters": "core/speculation/broken.py",
    "EngineFixes": "core/launch/fixes.py",
    "LadderRecord": "core/launch/ladder_record.py",
    "UsageRecords": "core/measurements/usage.py",
}


def test_each_record_store_is_made_in_its_own_module_and_the_launch_session_only():
    made: dict[str, set[str]] = {name: set() for name in SESSION_STORES}
    for path in sorted(APP.rglob("*.py")):
        rel = path.relative_to(APP).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                if name in made:
                    made[name].add(rel)
    outside = {name: sorted(made[name] - {own, "core/launch/session.py"}) for name, own in SESSION_STORES.items()}
    assert outside == {name: [] for name in SESSION_STORES}, "use session.Records.load() or the plan's records"
    assert all("core/launch/session.py" in where for where in made.values())


# ------------------------------------------------------------------ one machine key
# A laptop: an integrated GPU, and lavapipe (a software Vulkan device) beside it.
LAPTOP = Machine(ram_total=16 * GB, ram_available=12 * GB, os="Linux", described=True, gpus=[
    Gpu(0, "vulkan", "llvmpipe (LLVM 15.0.6, 256 bits)", total_bytes=8 * GB, free_bytes=8 * GB, software=True,
        device="Vulkan0"),
    Gpu(1, "vulkan", "AMD Radeon Graphics (RADV GFX1103_R1)", total_bytes=4 * GB, free_bytes=4 * GB, integrated=True,
        device="Vulkan1"),
])


class _Found:
    kind, backend, version, usable, problem = "llama.cpp", "vulkan", "test", True, None

    def __init__(self, binary: Path) -> None:
        self.binary = binary


@pytest.fixture
def laptop(tmp_path, monkeypatch):
    """A model with a drafter beside it, a fake engine the CLI finds, and the laptop as the
    machine every probe answers."""
    from draftwise.cli import launch as cli_launch
    from draftwise.cli import main as cli_main
    from draftwise.core.engines import capabilities, discovery
    from draftwise.testing.tinymodels import TinyModel, draft_model, write_tiny_model

    caps = capabilities.pinned_caps()
    folder = tmp_path / "models"
    model = write_tiny_model(folder / "tiny-dense-F32.gguf", TinyModel(n_embd=128, n_head=4, n_head_kv=4))[0]
    write_tiny_model(folder / "tiny-draft-F32.gguf", draft_model(TinyModel(n_embd=128, n_head=4, n_head_kv=4)))
    binary = tmp_path / "engine" / "llama-server"
    binary.parent.mkdir()
    binary.write_bytes(b"#!/bin/sh\n")
    monkeypatch.setattr(hardware, "inventory", lambda engine_binary=None, max_age=0.0: LAPTOP)
    monkeypatch.setattr(discovery, "best_engine", lambda *a, **k: _Found(binary))
    monkeypatch.setattr(cli_launch, "caps_of", lambda b: caps)
    monkeypatch.setattr(cli_main, "_engine_caps", lambda configured: (binary, caps, "vulkan"))
    return {"model": model, "binary": binary, "caps": caps}


def _fake_arms(monkeypatch) -> None:
    """Every arm of a measurement as if the engine ran it: the drafter with draft length 4 is
    the fastest (tokens per second by draft length; None is the arm without speculation)."""
    from draftwise.core.measurements import live_figures
    from draftwise.core.measuring import arms
    from draftwise.core.measuring.arm import Arm

    speeds = {None: 20.0, 1: 22.0, 2: 26.0, 4: 30.0, 8: 24.0}

    def arm(_engine_arms, setup, r):
        # The draft model alone at length 4 is the fastest: an n-gram beside it or a p-min costs.
        tps = speeds[setup.n_max] * (0.9 if setup.ngram is not None else 1.0) * (0.95 if setup.p_min else 1.0)
        n = 100.0 * 3
        return Arm(setup, n, n * 1000.0 / tps, tuple((i, r, tps) for i in range(3)), live_figures.Counters())

    monkeypatch.setattr(arms.EngineArms, "__call__", arm)


def test_measure_launch_plan_and_the_window_use_one_machine_key(qtbot, laptop, monkeypatch, capsys):
    from draftwise.cli import launch as cli_launch
    from draftwise.cli import main as cli_main
    from draftwise.core.settings import LoadResult, Settings
    from draftwise.viewmodels.app import AppViewModel
    from draftwise.viewmodels.engine import EngineChoice

    model, binary = laptop["model"], laptop["binary"]
    _fake_arms(monkeypatch)
    assert cli_main.main(["measure", str(model), "--rounds", "1"]) == 0
    [measured] = MeasuredRecords().entries()
    # The automatic choice leaves lavapipe out and calls the integrated GPU Vulkan0.
    selected = device_choice.select(LAPTOP, None, {})
    assert [g.name for g in selected.gpus] == [LAPTOP.gpus[1].name]
    assert measured.combination.machine == identity.machine_key(selected) != identity.machine_key(LAPTOP)
    assert measured.n_max == 4
    capsys.readouterr()

    # The real parser, so the test sees every option `launch` has.
    args = cli_main.build_parser().parse_args(["launch", str(model), "--port", "8181"])
    _found, machine, planned = cli_launch.planned_launch(args)
    assert identity.machine_key(machine) == measured.combination.machine
    assert planned.measurement == measured  # launch finds what measure recorded
    assert cli_main.main(["plan", str(model), "--json"]) == 0
    plan_argv = json.loads(capsys.readouterr().out)["argv"]
    assert plan_argv[plan_argv.index("--spec-draft-n-max") + 1] == "4"

    vm = AppViewModel(LoadResult(Settings(), Path("/nonexistent/settings.json")), persist=False)
    vm.engine.set_engines([EngineChoice("llama.cpp", binary, "vulkan", "test", "test", "", laptop["caps"])])
    vm.set_machine(LAPTOP)
    with qtbot.waitSignal(vm.outcome_changed, timeout=20000):
        vm.open_model(model)
    qtbot.waitUntil(lambda: not vm.replanning, timeout=20000)
    assert identity.machine_key(vm.machine) == measured.combination.machine
    assert vm.outcome.prepared is not None and vm.outcome.prepared.measurement == measured
    assert vm.drafting.measurement() == measured
    assert vm.outcome.argv[vm.outcome.argv.index("--spec-draft-n-max") + 1] == "4"


# ------------------------------------------------------------------ one device set for fixes
def test_an_engine_fix_is_read_under_the_devices_it_was_written_under(ctx, tmp_path):
    """A GPU too small for any layer, selected automatically: the plan puts none on it, yet
    the launch ran with it selected, so the fix is written under the selected device — where
    the next plan reads (not under the devices that got layers, `CPU` here)."""
    from draftwise.core.engines import capabilities
    from draftwise.core.launch.session import Engine, Records, plan_launch
    from draftwise.testing.tinymodels import TinyModel, write_tiny_model

    model = write_tiny_model(tmp_path / "m" / "tiny-F32.gguf", TinyModel())[0]
    small = Machine(ram_total=16 * GB, ram_available=12 * GB, os="Linux", described=True,
                    gpus=[Gpu(0, "vulkan", "A small card", total_bytes=512 << 20, free_bytes=512 << 20)])
    machine = device_choice.select(small, None, {})
    assert machine.requested == () and [g.engine_name for g in machine.gpus] == ["Vulkan0"]
    engine = Engine(ctx.engine, capabilities.pinned_caps(), "vulkan")
    store = EngineFixes(machine=machine)
    planned = plan_launch(prepare.Request(model=model, mtp="off"), engine, machine, Records(fixes=store))
    assert planned.prepared.gpu_devices == () and planned.fixes.default  # no layer on the card
    spec = planned.spec(18080)
    assert spec.fix_devices == ("Vulkan0",)
    flow = launch_flow.LaunchFlow(spec, fixes=store)
    flow.start(0.0)
    flow.spawned(0.1)
    flow.output(["llama_model_load_from_file_impl: using device Vulkan0 (A small card) - 512 MiB free"], 0.2)
    flow.health(200, 0.5)
    actions = flow.exited(crash.ExitStatus(None, 11), 3.0)  # a driver segfault on the first request
    assert any(isinstance(a, launch_flow.Relaunched) for a in actions) and flow.fix.args == crash.FA_OFF
    flow.spawned(3.1)
    flow.health(200, 3.5)  # ready with flash attention off: recorded
    [fix] = store.entries()
    assert isinstance(fix.reason, Message) and "flash attention" in str(fix.reason)
    again = plan_launch(prepare.Request(model=model, mtp="off"), engine, machine, Records(fixes=store))
    assert again.fixes == crash.FA_OFF_FIX


def test_an_english_reason_from_an_earlier_file_is_shown_in_japanese(qtbot, ctx, tmp_path):
    """The window's edge (viewmodels/i18n.tr_message) translates a recognised reason with the
    real catalog; an unrecognised one is shown as it is."""
    from draftwise.viewmodels.i18n import LanguageManager, tr_message

    files = _earlier_files(ctx, tmp_path)
    reason = BrokenDrafters(files["broken"]).entries()[0].reason
    unknown = EngineFixes(files["fixes"]).entries()[0].reason
    lm = LanguageManager()
    lm.apply("ja")
    try:
        assert lm.problem is None
        shown = tr_message(reason)
        assert shown != ENGLISH and "1" in shown and any("\u3040" <= ch <= "\u30ff" for ch in shown), shown
        assert tr_message(unknown) == "Something no template of this version says."
    finally:
        lm.apply("en")


def test_a_file_key_follows_a_link_pointed_elsewhere_and_a_replaced_file(tmp_path):
    """identity.file_stamp remembers resolved paths by inode: a link pointed at another file, or
    a file replaced, is resolved again (never the remembered path of what was there before)."""
    a, b, link = tmp_path / "a.gguf", tmp_path / "b.gguf", tmp_path / "model.gguf"
    a.write_bytes(b"a" * 10)
    b.write_bytes(b"b" * 20)
    link.symlink_to(a)
    assert identity.file_key(link) == f"{a}|10|{a.stat().st_mtime_ns}"
    assert identity.file_key(link) == identity.file_key(a)  # asked again: the same answer
    link.unlink()
    link.symlink_to(b)
    assert identity.file_key(link) == f"{b}|20|{b.stat().st_mtime_ns}"
    link.unlink()
    link.write_bytes(b"c" * 30)  # a real file where the link was
    assert identity.file_key(link) == f"{link}|30|{link.stat().st_mtime_ns}"


@pytest.mark.parametrize("entry", ["measure", "sweep"])
def test_measure_and_sweep_file_engine_fixes_under_the_launchs_devices(entry, tmp_path, monkeypatch):
    """The devices an arm's engine fixes are filed under (`fix_devices`) are the ones a launch of
    the same request reads them under: here a device the user asked for that this build has no
    GPU for, so only `requested` names it (an arm built without it would file under "none")."""
    from tests import fake_arms as fa

    from draftwise.core.measuring import arms, quick, sweep

    built: list[arms.EngineArms] = []

    class Stop(Exception):
        pass

    class Captured(arms.EngineArms):
        def __init__(self, *a: Any, **kw: Any) -> None:
            super().__init__(*a, **kw)
            built.append(self)

        def __call__(self, setup, r):  # type: ignore[override]
            raise Stop

    monkeypatch.setattr(arms, "EngineArms", Captured)
    prepared = fa.with_drafter(tmp_path)
    machine = replace(fa.MACHINE, requested=("Vulkan1",))
    run = quick.measure if entry == "measure" else sweep.sweep
    with pytest.raises(Stop):
        run(prepared, fa.ENGINE, machine, settings=fa.SETTINGS)
    [engine_arms] = built
    spec = engine_arms.launch(Setup("draft-simple", n_max=4))
    launch = prepared.launch(fa.ENGINE, port=18080, requested=machine.requested)
    assert spec.fix_devices == launch.fix_devices == ("Vulkan1",)


def test_your_requests_and_prompts_name_a_failed_write_once(ctx, tmp_path):
    """The one write-error rule reaches the stores written while a model runs: a failed write
    is a sentence for the window or the CLI, said the first time, never only logged."""
    from draftwise.core.measurements import usage

    path = tmp_path / "speculation-usage.json"
    path.mkdir()  # a folder where the record should be: never written over
    keeper = usage.Keeper(_usage_key(ctx), UsageRecords(path))
    keeper.tally.take = lambda final=False: (UsageRequest(64, 900.0, 32, 20),)
    first = keeper.save()
    assert str(first) == (f"Your requests' figures could not be kept (Could not read the record of your requests' "
                          f"speed {path}: Is a directory.); learning from use misses them.")
    assert keeper.save(final=True) is None and keeper.saved == 0  # said once per launch
    prompts = path.with_name("your-prompts.json")
    prompts.mkdir()
    said = usage.keep_prompt(ctx.model, {"messages": [{"role": "user", "content": "Summarise this."}]}, path)
    assert str(said).startswith("Your prompt could not be kept for measuring on your own work (Could not read the ")
    assert str(prompts) in str(said)
