"""The "Other computers" / "Share this computer" card's view-model and worker process, with
the real engine and real ggml-rpc-server on loopback. Waits on signals, never sleeps."""

from __future__ import annotations

import psutil
import pytest

from draftwise.core.launch import launch_spec, orphans, share
from draftwise.core.machine import workers
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
    assert list(orphans.run_dir().glob("engine-*.json")), "the worker has a run file while it runs"
    vm.shutdown()
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
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
