"""The QProcess owner: ready and stop on the real engine, fallback, crashes, bounded logs.

Waits on signals (qtbot.waitSignal on `changed` until the outcome says so), never sleeps.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from draftwise.core.engines import args as engine_args
from draftwise.core.engines import capabilities
from draftwise.core.gguf import reader as gguf
from draftwise.core.launch import crash, launch_spec
from draftwise.core.launch.outcome import FAILED, READY, STOPPED, EngineOutcome
from draftwise.core.processes import orphans
from draftwise.core.speculation import resolver
from draftwise.core.speculation.broken import BrokenDrafters
from draftwise.core.speculation.resolver import NONE, SpecDecision
from draftwise.services.engine_process import EngineProcess
from draftwise.testing import tinymodels as tm
from process_checks import gone as _gone  # the shared helper, under the name the call sites use


@pytest.fixture(autouse=True)
def _own_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("DRAFTWISE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DRAFTWISE_CACHE_DIR", str(tmp_path / "cache"))


def _spec(binary: Path, model_path: Path, **options) -> launch_spec.LaunchSpec:
    model = gguf.read_model(model_path)
    broken = BrokenDrafters().broken_for(binary)
    decision = resolver.resolve(model, resolver.SpecOptions(broken=broken, **options), capabilities.capabilities(binary))
    return launch_spec.llamacpp_launch(binary, model, decision, port=launch_spec.any_free_port(),
                                       plan_options=(engine_args.option("-c", "512"),))


def _at(stage, attempt: int | None = None):
    """For waitSignal(proc.changed, check_params_cb=...): the outcome reached `stage`."""
    return lambda outcome: outcome.stage == stage and (attempt is None or outcome.attempt == attempt)


def _seen(proc: EngineProcess, field: str) -> list:
    """Each new value of the outcome's `field`, in order, as `changed` tells them."""
    values: list = []

    def take(outcome: EngineOutcome) -> None:
        value = getattr(outcome, field)
        if not values or value != values[-1]:
            values.append(value)

    proc.changed.connect(take)
    return values


@pytest.fixture
def lone_model(tmp_path: Path) -> Path:
    return tm.write_tiny_model(tmp_path / "alone" / "tiny-F32.gguf", tm.TinyModel())[0]


@pytest.mark.engine
def test_reaches_ready_and_stops_leaving_nothing(qtbot, engine, lone_model):
    proc = EngineProcess(_spec(engine.binary, lone_model))
    stages = _seen(proc, "stage")
    with qtbot.waitSignal(proc.changed, timeout=30_000, check_params_cb=_at(READY)) as ready:
        proc.start()
    assert ready.args[0].url == proc.spec.url and proc.url == proc.spec.url and proc.stage == "ready"
    pid = proc.pid
    assert pid and Path(f"/proc/{pid}/cmdline").read_bytes().find(proc.api_key.encode()) < 0
    assert len(list(orphans.run_dir().glob("engine-*.json"))) == 1
    # /health says 200 before the engine's log thread writes "model loaded".
    qtbot.waitUntil(lambda: any("model loaded" in x for x in proc.log_lines()), timeout=10_000)
    with qtbot.waitSignal(proc.changed, timeout=15_000, check_params_cb=_at(STOPPED)):
        proc.stop()
    assert stages[0] == "starting" and stages[-2:] == ["stopping", "stopped"]
    assert _gone(pid) and not proc.running
    assert list(orphans.run_dir().glob("engine-*.json")) == []


@pytest.mark.engine
def test_startup_fallback_in_the_window(qtbot, engine, tmp_path):
    target = tm.TinyModel(name="fam")
    model = tm.write_tiny_model(tmp_path / "m" / "fam-F32.gguf", target)[0]
    tm.broken_draft(tmp_path / "m" / "fam-draft.gguf", target)
    proc = EngineProcess(_spec(engine.binary, model), broken=BrokenDrafters())
    reasons = _seen(proc, "fallback_reason")
    with qtbot.waitSignal(proc.changed, timeout=30_000, check_params_cb=_at(READY)):
        proc.start()
    reasons = [str(r) for r in reasons if r is not None]
    assert len(reasons) == 1 and "fam-draft.gguf" in reasons[0] and len(proc.pids) == 2
    # The reason is one short sentence; the cause travels beside it for the details.
    assert "(" not in reasons[0] and proc.outcome.fallback_cause.kind
    # "left out from now on" is more about the fallback, not a separate piece of news.
    notes, news = [str(n) for n in proc.outcome.fallback_notes], [str(n) for n in proc.outcome.notices]
    assert notes and "left out from now on" in notes[0] and not any("left out" in n for n in news)
    assert BrokenDrafters().broken_for(engine.binary) == {proc.spec.drafter_key}
    with qtbot.waitSignal(proc.changed, timeout=15_000, check_params_cb=_at(STOPPED)):
        proc.stop()


@pytest.mark.engine
def test_crash_after_ready_is_reported_without_relaunch(qtbot, engine, lone_model):
    proc = EngineProcess(_spec(engine.binary, lone_model))
    with qtbot.waitSignal(proc.changed, timeout=30_000, check_params_cb=_at(READY)):
        proc.start()
    with qtbot.waitSignal(proc.changed, timeout=15_000, check_params_cb=_at(FAILED)) as crashed:
        os.kill(proc.pid, signal.SIGKILL)
    assert crashed.args[0].cause.kind == crash.KILLED and proc.stage == "failed" and len(proc.pids) == 1


@pytest.mark.engine
def test_drafter_that_kills_the_serving_engine_relaunches_in_the_window(qtbot, engine, tmp_path):
    """The QProcess service drives the same flow: an automatic drafter whose vocabulary
    lacks a token the prompt holds kills the ready engine; it starts again without it."""
    from draftwise.core.launch import headless

    target = tm.TinyModel(name="extra", n_pieces=641)
    model_path = tm.write_tiny_model(tmp_path / "x" / "extra-F32.gguf", target)[0]
    draft = tm.write_tiny_model(tmp_path / "x" / "extra-draft.gguf", tm.draft_model(tm.TinyModel(n_pieces=541)))[0]
    caps = capabilities.capabilities(engine.binary)
    key = resolver.drafter_key(draft, "draft-simple")
    decision = SpecDecision("draft-simple", draft, resolver.AUTO_COMPANION, True, drafter_key=key,
                            draft_flag=resolver._draft_flag(caps))
    spec = launch_spec.llamacpp_launch(engine.binary, gguf.read_model(model_path), decision,
                                       port=launch_spec.any_free_port(), plan_options=(engine_args.option("-c", "512"),))
    proc = EngineProcess(spec, broken=BrokenDrafters())
    reasons = _seen(proc, "fallback_reason")
    try:
        with qtbot.waitSignal(proc.changed, timeout=30_000, check_params_cb=_at(READY)):
            proc.start()
        prompt = {"prompt": [1, 850, 300, 400], "n_predict": 8, "temperature": 0}
        with qtbot.waitSignal(proc.changed, timeout=60_000, check_params_cb=_at(READY, attempt=1)):
            with pytest.raises(OSError):
                headless.request(spec.url, spec.api_key, "/completion", prompt, 30)
        reasons = [str(r) for r in reasons if r is not None]
        assert len(reasons) == 1 and "extra-draft.gguf made the engine stop while it was serving" in reasons[0]
        assert proc.outcome.fallback_cause.kind == crash.DRAFTER_CRASH
        assert len(proc.pids) == 2 and BrokenDrafters().broken_for(engine.binary) == {key}
        status, _ = headless.request(spec.url, spec.api_key, "/completion", prompt, 30)
        assert status == 200
    finally:
        if proc.running:
            with qtbot.waitSignal(proc.changed, timeout=15_000, check_params_cb=_at(STOPPED)):
                proc.stop()


def test_missing_binary_is_a_failure_not_a_hang(qtbot, tmp_path):
    missing = tmp_path / "nowhere" / "llama-server"
    decision = SpecDecision(None, None, NONE, False)
    spec = launch_spec.LaunchSpec(
        kind="llama.cpp", binary=missing, model_path=tmp_path / "m.gguf", argv=(str(missing), "-m", "m.gguf"),
        env={}, host="127.0.0.1", port=launch_spec.any_free_port(), api_key="k", spec=decision,
    )
    proc = EngineProcess(spec, record_run=False)
    with qtbot.waitSignal(proc.changed, timeout=10_000, check_params_cb=_at(FAILED)) as crashed:
        proc.start()
    cause = crashed.args[0].cause
    assert cause.kind == crash.FAILED_TO_START and "engine install" in cause.next_step


FLOOD = "import sys, time\nw = sys.stdout.write\nfor i in range({n}): w(f'line {{i}} ' + 'x' * 60 + '\\n')\nsys.stdout.flush()\nprint('done', flush=True)\ntime.sleep(60)\n"


def test_log_flood_arrives_in_bounded_batches(qtbot, tmp_path):
    """A child that prints 50k lines: the UI gets few, bounded batches and a bounded tail."""
    decision = SpecDecision(None, None, NONE, False)
    argv = (sys.executable, "-c", FLOOD.format(n=50_000))
    spec = launch_spec.LaunchSpec(
        kind="llama.cpp", binary=Path(sys.executable), model_path=tmp_path / "none", argv=argv, env={},
        host="127.0.0.1", port=launch_spec.any_free_port(), api_key="k", spec=decision,
    )
    proc = EngineProcess(spec, log_lines=3000, max_batch=1000, batch_ms=50, record_run=False)
    batches: list[list[str]] = []
    proc.log_batch.connect(batches.append)
    proc.start()
    qtbot.waitUntil(lambda: any(b and b[-1] == "done" for b in batches), timeout=30_000)
    assert proc.lines_read == 50_001
    assert all(len(b) <= 1001 for b in batches)
    assert len(batches) < 200  # batched per interval, not per line or per read
    assert len(proc.log_lines()) == 3000 and proc.log_lines()[-1] == "done"
    assert any(b[0].startswith("[") and "lines not shown" in b[0] for b in batches)
    pid = proc.pid
    with qtbot.waitSignal(proc.changed, timeout=15_000, check_params_cb=_at(STOPPED)):
        proc.stop()
    assert _gone(pid)


# A stand-in engine whose first /health answer is slow: it says the model is loaded while that
# answer (503) is still on its way, as llama-server can when a poll meets the end of loading.
SLOW_FIRST_ANSWER = r"""
import http.server, sys, time
port = int(sys.argv[1])
asked = []
class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        asked.append(self.path)
        if len(asked) == 1:
            print("srv  llama_server: model loaded", flush=True)
            time.sleep(0.5)
        self.send_response(503 if len(asked) == 1 else 200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Health)
print(f"srv  llama_server: listening on http://127.0.0.1:{port}", flush=True)
server.serve_forever()
"""


def test_ready_said_while_a_health_answer_is_on_its_way_is_asked_again_at_once(qtbot, tmp_path, monkeypatch):
    """The engine's "model loaded" arrives while a /health request is in flight (its answer a
    503): /health is asked again the moment that answer is in, not after the back-off. The
    back-off is made a minute here, so waiting it out would miss the 10 s below."""
    from draftwise.services import engine_process

    monkeypatch.setattr(engine_process, "POLL_FIRST_MS", 60_000)
    monkeypatch.setattr(engine_process, "POLL_MAX_MS", 60_000)
    port = launch_spec.any_free_port()
    spec = launch_spec.LaunchSpec(
        kind="llama.cpp", binary=Path(sys.executable), model_path=tmp_path / "none",
        argv=(sys.executable, "-c", SLOW_FIRST_ANSWER, str(port)), env={}, host="127.0.0.1", port=port,
        api_key="k", spec=SpecDecision(None, None, NONE, False),
    )
    proc = EngineProcess(spec, record_run=False)
    with qtbot.waitSignal(proc.changed, timeout=10_000, check_params_cb=_at(READY)):
        proc.start()
    assert proc.stage == "ready"
    with qtbot.waitSignal(proc.changed, timeout=10_000, check_params_cb=_at(STOPPED)):
        proc.stop()


def test_shutdown_stops_synchronously(qtbot, tmp_path):
    decision = SpecDecision(None, None, NONE, False)
    argv = (sys.executable, "-c", "import time; print('up', flush=True); time.sleep(60)")
    spec = launch_spec.LaunchSpec(
        kind="llama.cpp", binary=Path(sys.executable), model_path=tmp_path / "none", argv=argv, env={},
        host="127.0.0.1", port=launch_spec.any_free_port(), api_key="k", spec=decision,
    )
    proc = EngineProcess(spec, record_run=False)
    with qtbot.waitSignal(proc.log_batch, timeout=10_000):
        proc.start()
    pid = proc.pid
    with qtbot.waitSignal(proc.changed, timeout=10_000, check_params_cb=_at(STOPPED)):
        proc.shutdown()  # what aboutToQuit calls
    assert _gone(pid) and proc.stage == "stopped"


def test_stop_right_after_start_never_signals_our_own_group(qtbot, tmp_path):
    decision = SpecDecision(None, None, NONE, False)
    argv = (sys.executable, "-c", "import time; time.sleep(60)")
    spec = launch_spec.LaunchSpec(
        kind="llama.cpp", binary=Path(sys.executable), model_path=tmp_path / "none", argv=argv, env={},
        host="127.0.0.1", port=launch_spec.any_free_port(), api_key="k", spec=decision,
    )
    proc = EngineProcess(spec, record_run=False)
    with qtbot.waitSignal(proc.changed, timeout=10_000, check_params_cb=_at(STOPPED)):
        proc.start()
        proc.stop()  # this test process surviving is the assertion
    assert proc.stage == "stopped" and all(_gone(p) for p in proc.pids)
