"""The "Other computers" / "Share this computer" card's view-model and worker process, with
the real engine and real ggml-rpc-server on loopback. Waits on signals, never sleeps."""

from __future__ import annotations

import socket

import psutil
import pytest

from draftwise.core.launch import launch_spec
from draftwise.core.processes import orphans
from draftwise.core.rpc import share, workers
from draftwise.viewmodels.workers import FAILED, READY, WorkersViewModel


@pytest.fixture
def rpc_binary(engine):
    binary = share.worker_binary(engine.binary)
    if not binary.is_file():
        pytest.skip(f"{binary} is not installed (an engine built before GGML_RPC=ON)")
    return binary


def _wait_rows(qtbot, vm: WorkersViewModel, timeout: int = 20000) -> None:
    qtbot.waitUntil(lambda: all(r.state != "checking" for r in vm.rows), timeout=timeout)


def test_worker_list_probes_each_and_names_the_bad_ones(qtbot, engine, rpc_binary, tmp_path):
    port = launch_spec.any_free_port()
    worker = share.start(rpc_binary, "127.0.0.1", port, log_path=tmp_path / "w.log")
    try:
        nothing = f"127.0.0.1:{launch_spec.any_free_port()}"
        vm = WorkersViewModel(["127.0.0.1:abc"], engine_binary=engine.binary)
        assert vm.rows[0].state == FAILED and "127.0.0.1:abc" in vm.rows[0].text
        with qtbot.waitSignal(vm.error, timeout=2000) as err:
            assert not vm.add("nonsense")
        assert "'nonsense' is not host:port" in err.args[0]
        assert vm.add(f"{worker.endpoint}, {nothing}")
        _wait_rows(qtbot, vm)
        good, bad = vm.rows[1], vm.rows[2]
        assert good.state == READY and "free" in good.text
        assert bad.state == FAILED and f"The worker {nothing} cannot be reached" in bad.text
        assert vm.endpoints() == [worker.endpoint]
        assert [d.device for d in vm.devices()] == ["RPC0"]
        with qtbot.waitSignal(vm.error, timeout=2000) as err:
            vm.add(worker.endpoint)
        assert "listed twice" in err.args[0]
        vm.remove(nothing)
        assert vm.entries() == ["127.0.0.1:abc", worker.endpoint]
    finally:
        worker.stop()


def test_sharing_stays_on_loopback_unless_confirmed_and_stops_with_the_app(qtbot, engine, rpc_binary):
    from process_checks import gone

    vm = WorkersViewModel(engine_binary=engine.binary)
    vm.set_share_address("192.168.1.20", 50052)
    assert "no password" in vm.share_warning()
    assert not vm.start_sharing()  # not confirmed: nothing starts
    assert vm.share is None and "no password" in vm.share_status
    port = launch_spec.any_free_port()
    vm.set_share_address("127.0.0.1", port)
    assert vm.share_warning() == ""
    assert vm.start_sharing()
    assert vm.share is not None
    qtbot.waitUntil(lambda: vm.share_status.startswith("Sharing on"), timeout=10000)
    assert workers.reachable(f"127.0.0.1:{port}")
    pid = vm.share.pid
    assert pid and psutil.Process(pid).name() == "ggml-rpc-server"
    # A computer connects: the card says which (the worker's sockets), and when it leaves.
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        host = sock.getsockname()[0]
        qtbot.waitUntil(lambda: vm.share_status.endswith(f"in use by {host}"), timeout=10000)
    qtbot.waitUntil(lambda: vm.share_status == f"Sharing on 127.0.0.1:{port}", timeout=10000)
    assert list(orphans.run_dir().glob("engine-*.json")), "the worker has a run file while it runs"
    vm.shutdown()
    assert gone(pid)
    assert not workers.reachable(f"127.0.0.1:{port}")
    assert not list(orphans.run_dir().glob("engine-*.json"))


def test_a_worker_that_went_away_is_left_out_of_the_next_launch(qtbot, engine, rpc_binary, tmp_path):
    w = share.start(rpc_binary, "127.0.0.1", launch_spec.any_free_port(), log_path=tmp_path / "w.log")
    vm = WorkersViewModel(engine_binary=engine.binary)
    try:
        vm.add(w.endpoint)
        _wait_rows(qtbot, vm)
        assert vm.endpoints() == [w.endpoint]
    finally:
        w.stop()
    assert vm.drop_gone() == [w.endpoint]
    assert vm.endpoints() == [] and vm.devices() == []
    assert "Launch runs without it" in vm.rows[0].text


def test_the_card_is_folded_until_used_and_its_buttons_act_only_when_they_can(qtbot):
    """Issue 20: Other computers sits inside Advanced, folded on first start, and its Remove
    and Check again buttons are enabled only when there is something to remove or ask."""
    from draftwise.core.machine.hardware import GB, Gpu
    from draftwise.ui.workers_card import WorkersCard

    answered: list[str] = []

    def prober(_binary, endpoint):
        answered.append(endpoint)
        return [Gpu(0, "rpc", "CPU", total_bytes=8 * GB, free_bytes=6 * GB, device="RPC0", endpoint=endpoint)]

    vm = WorkersViewModel(engine_binary=lambda: None, prober=prober)
    card = WorkersCard(vm)
    qtbot.addWidget(card)
    card.show()
    assert not card.toggle.isChecked() and not card.box.isVisible()
    assert not card.remove_button.isEnabled() and not card.recheck_button.isEnabled()
    assert not card.add_button.isEnabled()
    card.address.setText("127.0.0.1:50052")
    assert card.add_button.isEnabled()
    vm._engine_binary = lambda: __import__("pathlib").Path("/opt/fake/llama-server")
    card.add_button.click()
    qtbot.waitUntil(lambda: all(r.state == READY for r in vm.rows), timeout=5000)
    assert card.toggle.isChecked() and card.box.isVisible(), "a listed computer opens the section"
    assert card.recheck_button.isEnabled() and not card.remove_button.isEnabled()
    card.list.setCurrentRow(0)
    assert card.remove_button.isEnabled()
    card.remove_button.click()
    assert vm.rows == [] and not card.remove_button.isEnabled() and not card.recheck_button.isEnabled()
    # Folded again by hand, it stays folded.
    card.toggle.setChecked(False)
    vm.add("127.0.0.1:50053")
    assert not card.toggle.isChecked()


def test_other_computers_is_inside_advanced(qtbot):
    import os
    from pathlib import Path

    from draftwise.core.settings import LoadResult, Settings
    from draftwise.ui.advanced_card import AdvancedSection
    from draftwise.ui.main_window import MainWindow
    from draftwise.ui.workers_card import WorkersCard
    from draftwise.viewmodels.app import AppViewModel

    vm = AppViewModel(LoadResult(Settings(close_action="stop"), Path(os.devnull)), persist=False)
    win = MainWindow(vm)
    qtbot.addWidget(win)
    advanced = win.findChild(AdvancedSection)
    workers = win.findChild(WorkersCard)
    assert advanced.isAncestorOf(workers), "the Other computers section lives inside Advanced"
    assert not workers.toggle.isChecked(), "folded on first start"


def test_the_window_launches_again_without_a_worker_that_went_away(qtbot, engine, rpc_binary, tmp_path):
    """Issue 29, item 6, in the window: the engine loses a worker during a reply; the launch
    card names it, and the same model is launched again on the worker that is left."""
    import json
    import urllib.request
    from pathlib import Path

    from draftwise.core.engines import capabilities
    from draftwise.core.settings import LoadResult, Settings
    from draftwise.testing.tinymodels import TinyModel, write_tiny_model
    from draftwise.viewmodels.app import AppViewModel
    from draftwise.viewmodels.engine import EngineChoice
    from draftwise.viewmodels.plan import probe_machine

    model = write_tiny_model(tmp_path / "m.gguf", TinyModel(n_layer=6, n_embd=256, n_ff=512))[0]
    two = [share.start(rpc_binary, "127.0.0.1", launch_spec.any_free_port(), log_path=tmp_path / f"w{i}.log")
           for i in range(2)]
    # Workers always: the model fits here alone, and auto weighs the workers (this computer's
    # speed measured first) and may leave them out; this test is about losing one.
    vm = AppViewModel(LoadResult(Settings(port=launch_spec.any_free_port(), workers_always=True),
                                 Path("/nonexistent/s.json")), persist=False)
    try:
        vm.engine.set_engines([EngineChoice("llama.cpp", engine.binary, "cpu", "", "test", "",
                                            capabilities.capabilities(engine.binary))])
        vm.set_machine(probe_machine())
        vm.workers.add(",".join(w.endpoint for w in two))
        _wait_rows(qtbot, vm.workers)
        vm.set_extra_args_text("-ngl 5")
        with qtbot.waitSignal(vm.outcome_changed, timeout=30000):
            vm.open_model(model)
        qtbot.waitUntil(lambda: not vm.replanning, timeout=30000)
        assert vm.do_launch()
        qtbot.waitUntil(lambda: vm.launch.state in ("ready", "failed"), timeout=60000)
        assert vm.launch.state == "ready", vm.launch.failure_text()
        first = vm.launch.process.pid
        two[1].process.kill()
        two[1].process.wait(5)
        body = json.dumps({"prompt": "Once upon a time", "n_predict": 64}).encode()
        req = urllib.request.Request(f"{vm.launch.base_url()}/completion", body,
                                     {"Authorization": f"Bearer {vm.launch.api_key()}"})
        try:
            urllib.request.urlopen(req, timeout=30).read()
        except OSError:
            pass  # the engine went away under the reply
        qtbot.waitUntil(lambda: vm.launch.state == "ready" and vm.launch.process.pid != first, timeout=60000)
        lost, kept = two[1].endpoint, two[0].endpoint
        notes = [str(n) for n in vm.launch.launch_notes]
        assert f"{lost} went away during the last run; Draftwise launched again without it." in notes, notes
        argv = vm.launch.spec.argv
        assert argv[argv.index("--rpc") + 1] == kept
        assert vm.workers.endpoints() == [kept]
        with qtbot.waitSignal(vm.launch.ended, timeout=20000):
            vm.do_stop()
    finally:
        vm.shutdown()
        for w in two:
            w.stop()


def test_saved_workers_are_asked_once_an_engine_is_found(qtbot, engine, rpc_binary, tmp_path):
    """The window's first machine probe can finish before the engines are found: the saved
    workers are asked again once there is an engine to ask them with (seen in the real
    window: both rows stayed "No engine is installed" after the engine was found)."""
    w = share.start(rpc_binary, "127.0.0.1", launch_spec.any_free_port(), log_path=tmp_path / "w.log")
    found: list = []
    vm = WorkersViewModel([w.endpoint], engine_binary=lambda: found[0] if found else None)
    try:
        vm.probe_once()
        assert vm.rows[0].state == FAILED and "No engine is installed" in vm.rows[0].text
        found.append(engine.binary)
        vm.probe_once()
        _wait_rows(qtbot, vm)
        assert vm.rows[0].state == READY and vm.endpoints() == [w.endpoint]
    finally:
        w.stop()


def test_use_them_always_is_kept_and_asked_of_the_plan(qtbot):
    from pathlib import Path
    from types import SimpleNamespace

    from draftwise.core.engines import capabilities
    from draftwise.core.kinds import MtpMode, WorkerUse
    from draftwise.core.settings import Settings
    from draftwise.ui.workers_card import WorkersCard
    from draftwise.viewmodels.replan import Inputs, request_of

    settings = Settings(workers=["127.0.0.1:50052"])
    vm = WorkersViewModel.from_settings(settings, lambda: None)
    card = WorkersCard(vm)
    qtbot.addWidget(card)
    assert not card.always.isChecked() and card.always.isEnabled()
    card.always.setChecked(True)
    assert vm.always and settings.workers_always
    assert Settings.from_json(settings.to_json()).workers_always
    # The window's plan asks for every worker, as `--use-workers always` does.
    inp = Inputs(generation=1, model=SimpleNamespace(path=Path("m.gguf")), mtp=MtpMode.AUTO, draft="",
                 extra_args=(), engine=None, caps=capabilities.pinned_caps(), context=None, kv_type=None,
                 machine=None, port=8080, use_workers=WorkerUse.ALWAYS if settings.workers_always else WorkerUse.AUTO)
    assert request_of(inp).use_workers == WorkerUse.ALWAYS
