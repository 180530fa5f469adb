"""The launcher on the real llama-server: readiness, fallback, crashes, stop, orphans.

No fake engine: every launch here is the provisioned binary on a tiny real model (each
start takes well under a second).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import pytest

from draftwise.cli.launch import EXIT_NOT_READY
from draftwise.core.engines import args as engine_args
from draftwise.core.engines import capabilities
from draftwise.core.gguf import reader as gguf
from draftwise.core.launch import crash, headless, launch_flow, launch_spec
from draftwise.core.processes import lifeline, orphans
from draftwise.core.speculation import resolver
from draftwise.core.speculation.broken import BrokenDrafters
from draftwise.testing import tinymodels as tm
from process_checks import StdoutLines, until_gone
from process_checks import gone as _gone  # the shared helper, under the name the call sites use

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _own_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("DRAFTWISE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DRAFTWISE_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def family(tmp_path: Path) -> dict[str, Path]:
    """A target with a companion draft the engine cannot load (same vocabulary)."""
    folder = tmp_path / "models"
    target = tm.TinyModel(name="fam")
    model = tm.write_tiny_model(folder / "fam-F32.gguf", target)[0]
    draft = tm.broken_draft(folder / "fam-draft.gguf", target)
    return {"model": model, "draft": draft}


@pytest.fixture
def lone_model(tmp_path: Path) -> Path:
    return tm.write_tiny_model(tmp_path / "alone" / "tiny-F32.gguf", tm.TinyModel())[0]


class Recorder:
    def __init__(self) -> None:
        self.actions: list[launch_flow.Action] = []

    def __call__(self, action: launch_flow.Action) -> None:
        self.actions.append(action)

    def of(self, kind: type) -> list:
        return [a for a in self.actions if isinstance(a, kind)]


def _spec(binary: Path, model_path: Path, *, broken: BrokenDrafters | None = None, port: int | None = None,
          pinned: bool = False, **options) -> launch_spec.LaunchSpec:
    model = gguf.read_model(model_path)
    caps = capabilities.capabilities(binary)
    known = broken.broken_for(binary) if broken is not None else frozenset()
    decision = resolver.resolve(model, resolver.SpecOptions(broken=known, **options), caps)
    chosen, _note = launch_spec.choose_port(port, pinned=pinned)
    return launch_spec.llamacpp_launch(binary, model, decision, port=chosen, plan_options=(engine_args.option("-c", "512"),),
                                       extra_args=options.get("extra_args", ()), pinned_port=pinned)


def _run(spec: launch_spec.LaunchSpec, broken: BrokenDrafters | None = None) -> tuple[headless.HeadlessLaunch, Recorder]:
    rec = Recorder()
    run = headless.HeadlessLaunch(spec, broken=broken, on_action=rec)
    run.start()
    return run, rec


def _group_empty(pid: int) -> bool:
    for p in psutil.process_iter(["pid"]):
        try:
            if os.getpgid(p.pid) == pid and p.status() != psutil.STATUS_ZOMBIE:
                return False
        except (psutil.Error, ProcessLookupError):
            continue
    return True


def _run_files() -> list[Path]:
    return sorted(orphans.run_dir().glob("engine-*.json")) if orphans.run_dir().is_dir() else []


# ------------------------------------------------------------------ the good path
pytestmark = pytest.mark.engine


def test_ready_completion_stop_nothing_left(engine, lone_model):
    run, rec = _run(_spec(engine.binary, lone_model))
    try:
        assert run.wait_ready(60), run.log_text()
        assert rec.of(launch_flow.Ready)[0].url == run.spec.url
        assert [a.stage for a in rec.of(launch_flow.StageChanged)][:1] == ["starting"]
        assert len(_run_files()) == 1
        result = headless.complete(run.spec.url, run.spec.api_key, "Hello", n_predict=4)
        assert result["tokens_predicted"] > 0
    finally:
        run.stop()
    assert run.stage == launch_flow.STOPPED and rec.of(launch_flow.Stopped)
    assert all(_gone(pid) and _group_empty(pid) for pid in run.pids)
    assert _run_files() == []


def test_key_is_not_in_cmdline_and_is_required(engine, lone_model):
    run, _rec = _run(_spec(engine.binary, lone_model))
    try:
        assert run.wait_ready(60)
        pid = run.pids[-1]
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        assert run.spec.api_key.encode() not in cmdline
        assert b"--api-key" not in cmdline
        req = urllib.request.Request(run.spec.url + "/completion", data=b'{"prompt":"a","n_predict":1}')
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=10)
        assert err.value.code == 401
        status, _ = headless.request(run.spec.url, run.spec.api_key, "/completion", {"prompt": "a", "n_predict": 1})
        assert status == 200
    finally:
        run.stop()


# ------------------------------------------------------------------ fallback
def test_auto_drafter_rejected_at_startup_falls_back_once_and_is_remembered(engine, family):
    broken = BrokenDrafters()
    spec = _spec(engine.binary, family["model"], broken=broken)
    assert spec.spec.source == resolver.AUTO_COMPANION and spec.fallback_eligible
    run, rec = _run(spec, broken)
    try:
        assert run.wait_ready(60), run.log_text()
        spawns = rec.of(launch_flow.Spawn)
        assert [s.attempt for s in spawns] == [0, 1]
        assert spawns[1].argv == spec.fallback_argv and "--spec-type" not in spawns[1].argv
        fell = rec.of(launch_flow.FellBack)
        assert len(fell) == 1 and fell[0].cause.kind == crash.DRAFT_LOAD
        assert "fam-draft.gguf" in fell[0].reason
        assert run.flow.fallback_reason == fell[0].reason
        # Same port, and the dead first engine left nothing behind.
        assert spawns[1].argv[spawns[1].argv.index("--port") + 1] == str(spec.port)
        assert _gone(run.pids[0])
        assert headless.complete(run.spec.url, run.spec.api_key, "Hi", n_predict=2)["tokens_predicted"] > 0
    finally:
        run.stop()
    assert BrokenDrafters().broken_for(engine.binary) == {spec.drafter_key}

    # The next launch leaves the drafter out without crashing first.
    again = _spec(engine.binary, family["model"], broken=BrokenDrafters())
    assert again.spec.source == resolver.NONE and "--spec-type" not in again.argv
    assert any("made this engine fail before" in n for n in again.notes)
    run2, rec2 = _run(again)
    try:
        assert run2.wait_ready(60)
        assert len(rec2.of(launch_flow.Spawn)) == 1 and not rec2.of(launch_flow.FellBack)
    finally:
        run2.stop()


def test_explicit_draft_that_fails_is_not_relaunched(engine, family):
    broken = BrokenDrafters()
    spec = _spec(engine.binary, family["model"], broken=broken, draft=family["draft"])
    assert spec.spec.source == resolver.EXPLICIT and not spec.fallback_eligible
    run, rec = _run(spec, broken)
    try:
        assert not run.wait_ready(60)
    finally:
        run.stop()
    assert len(rec.of(launch_flow.Spawn)) == 1 and not rec.of(launch_flow.FellBack)
    cause = rec.of(launch_flow.Crashed)[0].cause
    assert cause.kind == crash.DRAFT_LOAD and "fam-draft.gguf" in cause.sentence
    assert run.stage == launch_flow.FAILED
    assert BrokenDrafters().entries() == []  # a drafter the user forced stays theirs
    assert _run_files() == []


def test_user_spec_type_that_fails_is_not_relaunched(engine, lone_model):
    # draft-mtp forced on a plain llama: exit 1, "failed to create MTP context".
    spec = _spec(engine.binary, lone_model, extra_args=("--spec-type", "draft-mtp"))
    run, rec = _run(spec)
    try:
        assert not run.wait_ready(60)
    finally:
        run.stop()
    assert len(rec.of(launch_flow.Spawn)) == 1
    assert rec.of(launch_flow.Crashed)[0].cause.kind == crash.MTP_CONTEXT


def test_engine_killed_after_ready_is_reported_not_relaunched(engine, family):
    broken = BrokenDrafters()
    spec = _spec(engine.binary, family["model"], broken=broken, mtp="off")
    run, rec = _run(spec, broken)
    try:
        assert run.wait_ready(60)
        os.kill(run.pids[-1], signal.SIGKILL)
        deadline = time.monotonic() + 20
        while not run.flow.ended and time.monotonic() < deadline:
            run.pump()
    finally:
        run.stop()
    assert run.stage == launch_flow.FAILED
    assert rec.of(launch_flow.Crashed)[0].cause.kind == crash.KILLED
    assert len(rec.of(launch_flow.Spawn)) == 1 and BrokenDrafters().entries() == []


# ------------------------------------------------------------------ address, binary
def test_port_taken_moves_unless_pinned_and_the_engine_says_why(engine, lone_model):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        with pytest.raises(launch_spec.LaunchError, match=f"Port {taken} is in use"):
            _spec(engine.binary, lone_model, port=taken, pinned=True)
        moved = _spec(engine.binary, lone_model, port=taken)
        assert moved.port != taken
        run, _rec = _run(moved)
        try:
            assert run.wait_ready(60)
        finally:
            run.stop()
        # Taken between the check and the start (another program was faster):
        direct = _spec(engine.binary, lone_model)
        argv = list(direct.argv)
        argv[argv.index("--port") + 1] = str(taken)
        raced = launch_spec.LaunchSpec(**{**direct.__dict__, "argv": tuple(argv), "port": taken})
        run, rec = _run(raced)
        try:
            assert not run.wait_ready(30)
        finally:
            run.stop()
    cause = rec.of(launch_flow.Crashed)[0].cause
    assert cause.kind == crash.PORT_IN_USE and str(taken) in cause.sentence


@pytest.mark.parametrize("how", ["missing", "not-executable"])
def test_binary_missing_or_not_executable_is_a_message(engine, lone_model, tmp_path, how):
    fake = tmp_path / "bin" / "llama-server"
    if how == "not-executable":
        fake.parent.mkdir()
        shutil.copy(engine.binary, fake)
        fake.chmod(0o644)
    spec = _spec(engine.binary, lone_model, mtp="off")
    argv = (str(fake), *spec.argv[1:])
    broken_spec = launch_spec.LaunchSpec(**{**spec.__dict__, "binary": fake, "argv": argv})
    run, rec = _run(broken_spec)
    assert not run.wait_ready(10)
    cause = rec.of(launch_flow.Crashed)[0].cause
    assert cause.kind == crash.FAILED_TO_START
    assert ("No such file" in cause.sentence) if how == "missing" else ("Permission denied" in cause.sentence)
    assert "draftwise engine install" in cause.next_step


# ------------------------------------------------------------------ the CLI and orphans
def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "draftwise.cli.main", "launch", *args]


def _spawn_cli(engine, model: Path, *args: str) -> tuple[subprocess.Popen, StdoutLines]:
    proc = subprocess.Popen(
        _cli(str(model), "--engine", str(engine.binary), "--ctx", "512", *args),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    return proc, StdoutLines(proc)


def test_cli_prints_ready_and_stops_on_sigint(engine, lone_model):
    proc, lines = _spawn_cli(engine, lone_model, "--mtp", "off")
    try:
        ready = lines.wait_for("ready")
        assert "http://127.0.0.1:" in ready
        record = json.loads(_run_files()[0].read_text())
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _gone(record["pid"]) and _run_files() == []
    assert any(x.startswith("stage: starting") for x in lines.seen)


def test_cli_reports_fallback_and_a_crash_that_never_got_ready(engine, family):
    proc, lines = _spawn_cli(engine, family["model"], "--draft", str(family["draft"]))
    try:
        lines.wait_for("crashed:")
        assert proc.wait(30) == EXIT_NOT_READY
    finally:
        if proc.poll() is None:
            proc.kill()
    proc, lines = _spawn_cli(engine, family["model"])
    try:
        assert "without speculation" in lines.wait_for("fallback:")
        lines.wait_for("ready")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def test_app_killed_with_its_lifeline_leaves_an_orphan_that_the_next_start_stops(engine, lone_model):
    """The run files are the last net: when the lifeline watcher dies with the app (both
    SIGKILLed; tests/test_process_groups.py has the app alone), the engine outlives them in
    its own session, and the next start stops it."""
    proc, lines = _spawn_cli(engine, lone_model, "--mtp", "off")
    try:
        lines.wait_for("ready")
        record = json.loads(_run_files()[0].read_text())
        [watcher] = [p for p in psutil.Process(proc.pid).children()
                     if lifeline.WATCHER_NAME in " ".join(p.cmdline())]
        watcher.kill()
        assert until_gone([watcher.pid], 10)  # a zombie of the app's until the app dies too
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    engine_pid = record["pid"]
    # No lifeline is left to stop the engine: the app is reaped and the one watcher it had was
    # gone before it died. The engine still serves (a stopping server stops answering /health).
    assert not _gone(engine_pid), "the engine should outlive the killed app and watcher (own session)"
    assert headless.health_status(f"http://127.0.0.1:{record['port']}/health", timeout=10) == 200
    reports = orphans.stop_orphans()
    assert [(r.pid, r.stopped) for r in reports] == [(engine_pid, True)]
    assert _gone(engine_pid) and _group_empty(engine_pid)
    assert _run_files() == []


def test_orphan_check_never_kills_a_reused_pid(tmp_path):
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        path = orphans.run_dir() / f"engine-{stranger.pid}.json"
        path.parent.mkdir(parents=True)
        record = orphans.RunRecord(stranger.pid, psutil.Process(stranger.pid).create_time(),
                                   str(Path(sys.executable).resolve()), ["llama-server", "-m", "x.gguf"], 8080,
                                   owner_pid=999_999_999, owner_create_time=0.0)
        path.write_text(json.dumps(record.__dict__))
        assert orphans.stop_orphans() == []
        assert stranger.poll() is None and not path.exists()
    finally:
        stranger.kill()
        stranger.wait()


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP here")
def test_closing_the_terminal_stops_the_engine(engine, lone_model):
    proc, lines = _spawn_cli(engine, lone_model, "--mtp", "off")
    try:
        lines.wait_for("ready")
        engine_pid = json.loads(_run_files()[0].read_text())["pid"]
        proc.send_signal(signal.SIGHUP)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _gone(engine_pid) and _run_files() == []


def test_a_named_engine_that_is_missing_is_an_error_not_a_substitute(lone_model, tmp_path):
    out = subprocess.run(_cli(str(lone_model), "--engine", str(tmp_path / "cuda" / "llama-server")),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "does not exist" in out.stderr
    assert "ready" not in out.stdout


# ------------------------------------------------------------------ a drafter that kills a serving engine
def test_auto_drafter_that_kills_the_serving_engine_is_dropped_once_and_remembered(engine, tmp_path):
    """Issue 11 item 2 on the real engine: a model whose vocabulary has 100 real tokens past
    its draft's. The resolver refuses the pair (so the decision is built by hand, as an
    older rule would have made it); the engine takes it, is ready, and aborts on the first
    reply holding such a token. The launcher relaunches once without speculation, records
    the drafter, and the next reply works."""
    folder = tmp_path / "extra"
    target = tm.TinyModel(name="extra", n_pieces=641)
    model_path = tm.write_tiny_model(folder / "extra-F32.gguf", target)[0]
    draft = tm.write_tiny_model(folder / "extra-draft.gguf", tm.draft_model(tm.TinyModel(n_pieces=541)))[0]
    model = gguf.read_model(model_path)
    caps = capabilities.capabilities(engine.binary)
    key = resolver.drafter_key(draft, "draft-simple")
    decision = resolver.SpecDecision("draft-simple", draft, resolver.AUTO_COMPANION, True, drafter_key=key,
                                     draft_flag=resolver._draft_flag(caps))
    port, _ = launch_spec.choose_port(None)
    spec = launch_spec.llamacpp_launch(engine.binary, model, decision, port=port, plan_options=(engine_args.option("-c", "512"),))
    broken = BrokenDrafters()
    run, rec = _run(spec, broken)
    try:
        assert run.wait_ready(60), run.log_text()
        # A prompt holding token 850, which the draft's vocabulary lacks.
        prompt = {"prompt": [1, 850, 300, 400], "n_predict": 8, "temperature": 0}
        with pytest.raises(OSError):
            headless.request(spec.url, spec.api_key, "/completion", prompt, 30)
        deadline = time.monotonic() + 60
        while not rec.of(launch_flow.FellBack) and time.monotonic() < deadline:
            run.pump()
        fell = rec.of(launch_flow.FellBack)
        assert fell and fell[0].cause.kind == crash.DRAFTER_CRASH, run.log_text()
        assert "extra-draft.gguf made the engine stop while it was serving" in fell[0].reason
        assert "token 850" in fell[0].cause.sentence or "which the draft's vocabulary lacks" in fell[0].cause.sentence
        assert key in broken.broken_for(engine.binary)
        assert any("left out from now on" in n.text for n in rec.of(launch_flow.Notice))
        assert run.wait_ready(60), run.log_text()
        assert len(run.pids) == 2 and "--spec-type" not in run.flow.current_argv
        status, body = headless.request(spec.url, spec.api_key, "/completion", prompt, 30)
        assert status == 200 and json.loads(body)["tokens_predicted"] > 0
    finally:
        run.stop()
    assert all(_gone(pid) for pid in run.pids)
