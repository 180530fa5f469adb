"""Process groups Draftwise owns (core/processes/process_group.py, lifeline.py, services/owned_qprocess.py).

The point of most of these: a Draftwise that dies — SIGKILL, a crash — takes its engine and
its shared worker along within a second or two on Linux and macOS too, through the lifeline
watcher; the run files stay the last net. Killed here for real: the CLI's `draftwise launch`
and a window process (AppViewModel's own launch and its Share this computer), each with the
real engine on a tiny model. Also: the stop's escalation to SIGKILL, and a port that is
taken before the start is a failure, never "listening" or "ready".
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from draftwise.core.launch import crash, launch_spec
from draftwise.core.processes import lifeline, orphans, process_group
from draftwise.core.rpc import share
from draftwise.services.owned_qprocess import OwnedQProcess
from draftwise.testing import tinymodels as tm
from process_checks import gone

ROOT = Path(__file__).resolve().parents[1]
GONE_WITHIN_S = 2.0  # the promise is "within a second"; the rest is slack for a busy 2-core machine

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the Job Object covers Windows")


def _seconds_until_gone(pids: list[int], since: float | None = None, limit: float = 10.0) -> float:
    """Seconds from `since` (default: now) until every pid has exited."""
    start = time.monotonic() if since is None else since
    while time.monotonic() - start < limit:
        if all(gone(p) for p in pids):
            return time.monotonic() - start
        time.sleep(0.005)
    return float("inf")


def _seconds_until(done, since: float, limit: float = 10.0) -> float:
    """Seconds from `since` until `done()` holds (inf after `limit`)."""
    while time.monotonic() - since < limit:
        if done():
            return time.monotonic() - since
        time.sleep(0.005)
    return float("inf")


def _child(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONUNBUFFERED": "1", "QT_QPA_PLATFORM": "offscreen"})


def _read_until(proc: subprocess.Popen[str], prefix: str, timeout: float = 90.0) -> tuple[str, list[str]]:
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line.rstrip("\n"))
        if line.startswith(prefix):
            return line.strip(), seen
    raise AssertionError(f"no {prefix!r} line; got:\n" + "\n".join(seen))


def _watcher_of(pid: int) -> psutil.Process:
    kids = [p for p in psutil.Process(pid).children() if lifeline.WATCHER_NAME in " ".join(p.cmdline())]
    assert len(kids) == 1, [p.cmdline() for p in psutil.Process(pid).children()]
    return kids[0]


# ------------------------------------------------------------------ the lifeline itself
HOLDER = """
import subprocess, sys, time
from draftwise.core.processes import lifeline
held = subprocess.Popen(["sleep", "60"], start_new_session=True)
freed = subprocess.Popen(["sleep", "60"], start_new_session=True)
lifeline.hold(held.pid)
lifeline.hold(freed.pid)
lifeline.let_go(freed.pid)
print("pids", held.pid, freed.pid, flush=True)
time.sleep(60)
"""


def test_a_killed_holder_takes_the_groups_it_holds_and_only_those():
    proc = _child(HOLDER)
    try:
        line, _ = _read_until(proc, "pids", 30)
        held, freed = (int(x) for x in line.split()[1:])
        watcher = _watcher_of(proc.pid)
        assert watcher.cmdline()[:2] == ["/bin/sh", "-c"]
        assert os.getsid(watcher.pid) == watcher.pid, "the watcher leads its own session (Ctrl-C does not reach it)"
        killed = time.monotonic()
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        took = _seconds_until_gone([held], killed)
        assert took <= GONE_WITHIN_S, took
        assert not gone(freed), "a group that was let go is not the watcher's to stop"
        assert _seconds_until_gone([watcher.pid]) < 5
    finally:
        if proc.poll() is None:
            proc.kill()
        for p in psutil.process_iter(["cmdline"]):
            if p.info["cmdline"] == ["sleep", "60"] and p.ppid() in (1, proc.pid):
                p.kill()


def test_a_killed_watcher_is_replaced_with_every_group_still_held(tmp_path):
    life = lifeline.Lifeline()  # one of its own, not the test process's
    sleeper = subprocess.Popen(["sleep", "60"], start_new_session=True)
    other = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        life.hold(sleeper.pid)
        first = life.watcher_pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        psutil.Process(first).wait(5)
        life.hold(other.pid)  # finds the watcher gone: a new one holds both
        second = life.watcher_pid
        assert second is not None and second != first
        life.let_go(sleeper.pid)
        life.let_go(other.pid)
        assert sleeper.poll() is None and other.poll() is None
    finally:
        life._close()  # what the process's exit does: the watcher ends, holding nothing
        sleeper.kill()
        other.kill()
        sleeper.wait()
        other.wait()


# ------------------------------------------------------------------ the Qt owner
def test_a_stop_escalates_to_sigkill_for_a_group_that_ignores_sigterm(qtbot, tmp_path):
    group = OwnedQProcess(stop_timeout_ms=300, record_run=False)
    script = "trap '' TERM; echo up; while :; do sleep 0.05; done"
    with qtbot.waitSignal(group.output, timeout=10_000):
        group.start(["/bin/sh", "-c", script], {"PATH": os.environ["PATH"]}, binary="/bin/sh", host="127.0.0.1",
                    port=launch_spec.any_free_port())
    pid = group.pid
    assert pid and os.getpgid(pid) == pid and lifeline.watcher_pid() is not None
    start = time.monotonic()
    with qtbot.waitSignal(group.exited, timeout=10_000) as exited:
        group.stop()
    assert exited.args[0] == crash.ExitStatus(None, signal.SIGKILL)
    assert 0.25 <= time.monotonic() - start < 5
    assert gone(pid)


def test_a_taken_port_is_refused_before_anything_starts(qtbot):
    group = OwnedQProcess(record_run=False)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with qtbot.waitSignal(group.port_busy, timeout=1000) as refused:
            group.start(["/bin/sleep", "30"], {}, binary="/bin/sleep", host="127.0.0.1", port=port)
    assert refused.args == [port] and group.pid is None and not group.running


# ------------------------------------------------------------------ with the real engine
@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return tm.write_tiny_model(tmp_path / "m" / "tiny-F32.gguf", tm.TinyModel())[0]


def _run_records() -> list[dict]:
    folder = orphans.run_dir()
    return [json.loads(p.read_text()) for p in sorted(folder.glob("engine-*.json"))] if folder.is_dir() else []


def _cli_launch(engine, model: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "draftwise.cli.main", "launch", str(model), "--engine", str(engine.binary),
         "--ctx", "512", "--mtp", "off"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


@pytest.mark.engine
def test_a_sigkilled_cli_takes_its_engine_along(engine, tiny):
    proc = _cli_launch(engine, tiny)
    try:
        ready, _ = _read_until(proc, "ready")
        url = ready.split()[1]
        [record] = _run_records()
        pid = record["pid"]
        assert psutil.Process(pid).name() == "llama-server"
        killed = time.monotonic()
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    took = _seconds_until_gone([pid], killed)
    print(f"engine gone {took:.3f} s after the CLI was SIGKILLed")
    assert took <= GONE_WITHIN_S, took
    port = int(url.rsplit(":", 1)[1])
    # The leader reads as a zombie as soon as its own thread has exited; the listening socket
    # closes with the group's last thread (seen once in a full run: still answering 3 ms after).
    freed = _seconds_until(lambda: not process_group.port_taken("127.0.0.1", port), killed)
    assert freed <= GONE_WITHIN_S, f"the engine's port still answered {freed:.3f} s after the kill"
    # The run file is what a crash leaves; the next start finds the engine gone and clears it.
    assert orphans.stop_orphans() == [] and _run_records() == []


WINDOW = """
import sys
from pathlib import Path
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from draftwise import gui
from draftwise.core.settings import LoadResult, Settings

app = QApplication([sys.argv[0]])
model, engine, share_port = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
s = Settings()
s.model_folders, s.last_model, s.engine_binary = [str(model.parent)], str(model), engine
s.share_host, s.share_port, s.language = "127.0.0.1", share_port, "en"
vm, win = gui._make_window(LoadResult(s, Path(sys.argv[4])), persist=False, lang="en")
vm.start(reopen_last=True)
said = set()

def poll():
    if vm.launch.state == "idle" and vm.can_launch() and "launch" not in said:
        said.add("launch")
        vm.do_launch()
        vm.workers.start_sharing()
    if vm.launch.state == "ready" and "engine" not in said:
        said.add("engine")
        print("engine", vm.launch.process.pid, flush=True)
    if vm.workers.share_status.startswith("Sharing on") and "worker" not in said:
        said.add("worker")
        print("worker", vm.workers.share.pid, flush=True)
    if vm.launch.state == "failed":
        print("failed", vm.launch.failure_text(), flush=True)

timer = QTimer()
timer.timeout.connect(poll)
timer.start(20)
app.exec()
"""


@pytest.mark.engine
def test_a_sigkilled_window_takes_its_engine_and_its_shared_worker_along(engine, tiny, tmp_path):
    rpc = share.worker_binary(engine.binary)
    if not rpc.is_file():
        pytest.skip(f"{rpc} is not installed (an engine built before GGML_RPC=ON)")
    proc = _child(WINDOW, str(tiny), str(engine.binary), str(launch_spec.any_free_port()),
                  str(tmp_path / "settings.json"))
    pids: dict[str, int] = {}
    try:
        while len(pids) < 2:
            line, seen = _read_until(proc, "", 120)
            what, _, value = line.partition(" ")
            assert what != "failed", seen
            if what in ("engine", "worker"):
                pids[what] = int(value)
        assert psutil.Process(pids["engine"]).name() == "llama-server"
        assert psutil.Process(pids["worker"]).name() == "ggml-rpc-server"
        killed = time.monotonic()
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    took = _seconds_until_gone(list(pids.values()), killed)
    print(f"engine and worker gone {took:.3f} s after the window was SIGKILLed")
    assert took <= GONE_WITHIN_S, took
    assert orphans.stop_orphans() == [] and _run_records() == []


@pytest.mark.engine
def test_sharing_on_a_port_another_program_holds_fails_and_never_says_listening(qtbot, engine):
    from draftwise.viewmodels.workers import WorkersViewModel

    if not share.worker_binary(engine.binary).is_file():
        pytest.skip("no ggml-rpc-server beside the engine")
    vm = WorkersViewModel(engine_binary=engine.binary)
    statuses: list[str] = []
    vm.share_changed.connect(lambda: statuses.append(vm.share_status))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        vm.set_share_address("127.0.0.1", port)
        vm.start_sharing()
        qtbot.waitUntil(lambda: "Sharing failed" in vm.share_status, timeout=5000)
        qtbot.wait(300)  # a listening poll would have fired by now
    assert f"Port {port} is already in use on 127.0.0.1" in vm.share_status
    assert not any(s.startswith("Sharing on") for s in statuses) and not vm.sharing
