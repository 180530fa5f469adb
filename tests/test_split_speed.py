"""The speed of a model split with workers and whether a worker pays (issue 29, items 2 and 3),
with described links and rates: no network, no engine (core/rpc/split_speed.py and the
launch session's choice, core/launch/session.py)."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import pytest

from draftwise.core.engines import capabilities
from draftwise.core.kinds import WorkerUse
from draftwise.core.launch import prepare, speed_probe
from draftwise.core.launch.session import Engine, Records, plan_launch
from draftwise.core.machine import speed
from draftwise.core.machine.machine_types import GB, RPC, Gpu, Machine
from draftwise.core.messages import msg
from draftwise.core.rpc import link, split_speed
from draftwise.testing.tinymodels import TinyModel, write_tiny_model

CAPS = capabilities.pinned_caps()
TP = speed.Throughput(4e9, "described")  # a described rate: 4 GB/s of Q4_K
WORKER = "192.168.1.20:50052"


def _work(vocab: int = 262144, n_embd: int = 640) -> split_speed.SplitWork:
    blocks = (("Q4_K", 100 << 20),)
    head = (("Q8_0", 170 << 20),)
    work = speed.Workload(active=270 << 20, resident=440 << 20, vocab=vocab, quant="Q4_K_M",
                          by_type=(("Q8_0", 170 << 20), ("Q4_K", 100 << 20)), blocks=18)
    return split_speed.SplitWork(work, blocks, head, n_embd, vocab)


def _link(mbit: float, rtt_ms: float, endpoint: str = WORKER, ratio: float | None = None) -> link.Link:
    return link.Link(endpoint, rtt_ms, mbit, 4 << 20, rate_ratio=ratio,
                     compute_gb_s=None if ratio is None else ratio * TP.cpu / 1e9)


def test_without_workers_the_split_estimate_is_the_single_machine_one():
    sw = _work()
    alone = split_speed.predict(sw, (), TP)
    # By hand, at 4 GB/s with the pinned engine's figures (docs/get-models.md, "Speed before
    # download": Q8_0 at 1.12 of Q4_K's rate, 76 us a block, 7.7 ns an entry, 47 us a token):
    # 170 MiB of Q8_0 / (4e9 x 1.12)  = 178,257,920 / 4.48e9 = 0.0397897 s
    # 100 MiB of Q4_K / 4e9           = 104,857,600 / 4e9    = 0.0262144 s
    # 18 blocks x 76 us                                      = 0.0013680 s
    # 262,144 entries x 7.7 ns                               = 0.0020185 s
    # the token                                              = 0.0000470 s
    # 1 / 0.0694376 s = 14.4014 tokens/s, the split and the single machine's estimate alike.
    assert alone.tokens_per_s == pytest.approx(14.4014, rel=1e-4)
    assert speed.estimate(sw.work, Machine(0, 0), TP).tokens_per_s == pytest.approx(14.4014, rel=1e-4)
    assert alone.hops == 0 and alone.link_s == 0


def test_a_worker_holding_the_head_sends_the_logits_back_every_token():
    sw = _work()
    lk = _link(20, 10)
    est = split_speed.predict(sw, [split_speed.WorkerPart(WORKER, 18, output=True)], TP, links={WORKER: lk})
    sent, back = 640 * 4, 262144 * 4  # the hidden state out, the logits (F32) back
    assert est.hops == 1 and est.crossing_bytes == sent + back
    assert est.link_s == pytest.approx(0.010 + (sent + back) * 8 / 20e6)
    # The same rate there as here: moving the layers costs nothing but the link.
    alone = split_speed.predict(sw, (), TP)
    assert 1 / est.tokens_per_s == pytest.approx(1 / alone.tokens_per_s + est.link_s)
    # Without the head only the hidden state comes back: far less over the same link.
    blocks_only = split_speed.predict(sw, [split_speed.WorkerPart(WORKER, 9)], TP, links={WORKER: lk})
    assert blocks_only.crossing_bytes == 2 * sent and blocks_only.tokens_per_s > est.tokens_per_s


def test_a_faster_worker_on_a_fast_link_pays_and_on_a_slow_one_does_not():
    sw = _work(vocab=32000, n_embd=4096)
    fast = split_speed.WorkerPart(WORKER, 18, output=True, rate=4 * TP.cpu)
    alone = split_speed.predict(sw, (), TP).tokens_per_s
    assert split_speed.predict(sw, [fast], TP, links={WORKER: _link(1000, 0.3)}).tokens_per_s > alone * 1.1
    assert split_speed.predict(sw, [fast], TP, links={WORKER: _link(20, 10)}).tokens_per_s < alone


def test_a_worker_is_predicted_at_the_rate_its_link_measured():
    sw = _work(vocab=32000, n_embd=4096)
    part = split_speed.WorkerPart(WORKER, 18, output=True)
    same = split_speed.predict(sw, [part], TP, links={WORKER: _link(1000, 0.3)})
    measured = split_speed.predict(sw, [part], TP, links={WORKER: _link(1000, 0.3, ratio=4.0)})
    # The ratio's rate is the one a part given it explicitly gets: the same prediction.
    given = split_speed.predict(sw, [replace(part, rate=4 * TP.cpu)], TP, links={WORKER: _link(1000, 0.3)})
    assert measured == given
    assert measured.workers_s < same.workers_s / 3 and measured.link_s == same.link_s
    # A part's own rate stands before its link's.
    assert split_speed.predict(sw, [replace(part, rate=TP.cpu)], TP, links={WORKER: _link(1000, 0.3, ratio=4.0)}
                               ).workers_s == pytest.approx(same.workers_s)


def test_hops_from_the_engines_split_count():
    # This computer's split (the embedding lookup), then the worker's with the head: 2 splits.
    assert split_speed.hops_from_splits(2) == 1
    # ... and back here for the head: 3 splits, still one run on the worker.
    assert split_speed.hops_from_splits(3) == 1
    assert split_speed.hops_from_splits(1) == 0


def test_the_plans_layout_puts_the_head_on_the_last_offload_device():
    class D:
        def __init__(self, kind, layers, worker=None):
            self.kind, self.layers, self.worker = kind, layers, worker

    every = [D("gpu", 18, WORKER), D("cpu", 0)]
    assert split_speed.parts_of(every, 19, 19) == [split_speed.WorkerPart(WORKER, 18, True)]
    partly = [D("gpu", 10, WORKER), D("cpu", 8)]
    assert split_speed.parts_of(partly, 10, 19) == [split_speed.WorkerPart(WORKER, 10, False)]
    argv = ["llama-server", "--rpc", WORKER, "-ngl", "all"]
    assert split_speed.layout_from_argv(argv, _work()) == [split_speed.WorkerPart(WORKER, 18, True)]


def test_auto_takes_workers_only_when_needed_or_faster_beyond_the_noise():
    alone = split_speed.Alternative((), 50.0, True)
    slower = split_speed.Alternative((WORKER,), 2.0, True)
    slightly = split_speed.Alternative((WORKER,), 50.0 * (1 + split_speed.NOISE * 0.5), True)
    faster = split_speed.Alternative((WORKER,), 80.0, True)
    assert split_speed.choose([alone, slower]) == alone
    assert split_speed.choose([alone, slightly]) == alone
    assert split_speed.choose([alone, faster]) == faster
    assert split_speed.choose([replace(alone, fits=False), slower]) == slower
    assert split_speed.choose([replace(alone, fits=False), replace(slower, fits=False)]) is None


# ------------------------------------------------------------------ the launch session
def _worker(free_gb: float, endpoint: str = WORKER, index: int = 0) -> Gpu:
    return Gpu(index=index, backend=RPC, name=endpoint, total_bytes=int(free_gb * GB), free_bytes=int(free_gb * GB),
               device=f"RPC{index}", endpoint=endpoint, remote_index=0)


@pytest.fixture
def tiny(tmp_path) -> Path:
    # A big vocabulary, as Gemma's: the logits a worker holding the head sends back weigh.
    return write_tiny_model(tmp_path / "m.gguf", TinyModel(n_layer=6, n_embd=256, n_ff=512, n_pieces=32000))[0]


def _plan(model: Path, machine: Machine, links, use=WorkerUse.AUTO, binary: Path = Path("/x/llama-server")):
    speed.remember(None, TP)  # this computer's rate, as the probe keeps it
    request = prepare.Request(model=model, mtp="off", use_workers=use)
    return plan_launch(request, Engine(binary, CAPS), machine, Records(links=links))


def test_auto_leaves_out_a_worker_on_a_slow_link_and_says_why(tiny):
    machine = Machine(16 * GB, 12 * GB, [], "Linux", workers=[_worker(8)])
    slow = _plan(tiny, machine, lambda ep, b: _link(20, 10, ep))
    assert "--rpc" not in slow.spec().argv and slow.machine.workers == []
    said = [str(r) for r in slow.prepared.plan.reasons]
    assert f"{WORKER} would make it slower here (20 Mbit/s, 10.0 ms): not used." in said
    out = json.loads(json.dumps(slow.prepared.to_json(), default=str))["plan"]["speed"]
    assert out["workers"] == [] and out["link"] == [{"endpoint": WORKER, "rtt_ms": 10.0, "mbit_s": 20.0,
                                                     "rate_ratio": None, "compute_gb_s": None}]
    by = {tuple(a["workers"]): a for a in out["alternatives"]}
    assert set(by) == {(), (WORKER,)} and by[()]["fits"] and by[(WORKER,)]["fits"]
    assert by[(WORKER,)]["tokens_per_s"] < by[()]["tokens_per_s"] == out["tokens_per_s"]
    kept = _plan(tiny, machine, lambda ep, b: _link(20, 10, ep), use=WorkerUse.ALWAYS)
    argv = kept.spec().argv
    assert argv[argv.index("--rpc") + 1] == WORKER
    assert kept.prepared.to_json()["plan"]["speed"]["workers"] == [WORKER]


def test_auto_takes_a_worker_measured_faster_on_a_fast_link_though_the_model_fits_here(tiny):
    machine = Machine(16 * GB, 12 * GB, [], "Linux", workers=[_worker(8)])
    # A recorded link with the worker's rate, as link.link_to keeps it (no live worker).
    record = link.record_path()
    link.remember(replace(_link(1000, 0.3, ratio=5.0), measured_at=time.time()), "build", path=record)
    kept = lambda ep, b: link.link_to(ep, "build", path=record, measure_now=False)  # noqa: E731
    fast = _plan(tiny, machine, kept)
    argv = fast.spec().argv
    assert argv[argv.index("--rpc") + 1] == WORKER and fast.machine.workers
    out = json.loads(json.dumps(fast.prepared.to_json(), default=str))["plan"]["speed"]
    assert out["workers"] == [WORKER] and out["link"][0]["rate_ratio"] == 5.0
    by = {tuple(a["workers"]): a["tokens_per_s"] for a in out["alternatives"]}
    assert by[(WORKER,)] > by[()] * (1 + split_speed.NOISE)
    # The same link at this computer's rate only adds the link's time: left out.
    level = _plan(tiny, machine, lambda ep, b: _link(1000, 0.3, ep))
    assert "--rpc" not in level.spec().argv
    assert f"{WORKER} would make it slower here (1000 Mbit/s, 0.3 ms): not used." in [
        str(r) for r in level.prepared.plan.reasons]


def test_a_worker_whose_rate_failed_is_predicted_at_this_computers_rate_with_one_sentence(tiny):
    machine = Machine(16 * GB, 12 * GB, [], "Linux", workers=[_worker(8)])
    why = msg("it stopped answering during the test ({error})", error="the worker closed the connection")
    failed = replace(_link(1000, 0.3), rate_error=why)
    planned = _plan(tiny, machine, lambda ep, b: failed)
    said = [str(r) for r in planned.prepared.plan.reasons]
    assert (f"The speed of {WORKER} could not be measured (it stopped answering during the test (the worker "
            "closed the connection)); it is predicted at this computer's speed.") in said
    assert "--rpc" not in planned.spec().argv  # at this computer's rate the link only costs
    # Kept with the link, the reason reads back as the same sentence.
    failed = replace(failed, measured_at=time.time())
    link.remember(failed, "build", path=link.record_path())
    assert link.recorded(WORKER, "build", path=link.record_path()) == failed


@pytest.fixture
def bigger(tmp_path) -> Path:
    """About 290 MiB to hold: 1.1 GB of free RAM (less the margin) holds it only with a worker."""
    return write_tiny_model(tmp_path / "b.gguf", TinyModel(n_layer=12, n_embd=512, n_ff=2048, n_pieces=32000))[0]


def test_auto_keeps_a_worker_the_model_needs_even_on_a_slow_link(bigger):
    small = Machine(16 * GB, int(1.1 * GB), [], "Linux", workers=[_worker(8)])
    planned = _plan(bigger, small, lambda ep, b: _link(20, 10, ep))
    argv = planned.spec().argv
    assert argv[argv.index("--rpc") + 1] == WORKER and planned.prepared.plan.fits
    alone = [a for a in planned.prepared.speed.alternatives if not a.workers]
    assert alone and not alone[0].fits


def test_of_two_workers_the_slow_one_is_left_out_and_the_other_renumbered(bigger):
    other = "192.168.1.21:50052"
    small = Machine(16 * GB, int(1.1 * GB), [], "Linux", workers=[_worker(8, WORKER, 0), _worker(8, other, 1)])
    links = {WORKER: _link(20, 10), other: _link(1000, 0.3, other)}
    planned = _plan(bigger, small, lambda ep, b: links[ep])
    argv = planned.spec().argv
    assert argv[argv.index("--rpc") + 1] == other
    assert [(w.endpoint, w.device, w.index) for w in planned.machine.workers] == [(other, "RPC0", 0)]


def test_a_worker_whose_link_cannot_be_measured_is_used_with_a_note(tiny):
    machine = Machine(16 * GB, 12 * GB, [], "Linux", workers=[_worker(8)])

    def broken(ep, binary):
        raise link.LinkError(ep, msg("The worker {worker} did not answer (refused).", worker=ep))

    planned = _plan(tiny, machine, broken)
    assert "--rpc" in planned.spec().argv
    assert any("could not be measured" in str(r) and WORKER in str(r) for r in planned.prepared.plan.reasons)
    assert planned.prepared.speed.links == ()


def test_without_a_link_source_every_worker_is_used_as_before(tiny):
    machine = Machine(16 * GB, 12 * GB, [], "Linux", workers=[_worker(8)])
    planned = _plan(tiny, machine, None)
    assert "--rpc" in planned.spec().argv and planned.prepared.speed is None


def _unmeasured(model: Path, machine: Machine, probe, monkeypatch, use=WorkerUse.AUTO):
    """The plan in an empty home (no rate kept in this test's data folder), the engine probe
    answering with `probe` (a stand-in for core/launch/speed_probe.py's)."""
    calls: list[Path] = []

    def measured(binary, **kw):
        calls.append(binary)
        return probe

    monkeypatch.setattr(speed_probe, "probe_engine", measured)
    request = prepare.Request(model=model, mtp="off", use_workers=use)
    return plan_launch(request, Engine(Path("/x/llama-server"), CAPS), machine,
                       Records(links=lambda ep, b: _link(20, 10, ep))), calls


def test_without_this_computers_rate_the_plan_measures_it_first_and_weighs_every_layout(tiny, monkeypatch):
    """Issue 36: an unknown speed here is measured with the engine before the workers are
    weighed (not "used as listed"), and kept for the next plan, which measures nothing."""
    machine = Machine(16 * GB, 12 * GB, [], "Linux", workers=[_worker(8)])
    planned, calls = _unmeasured(tiny, machine, TP, monkeypatch)
    assert calls == [Path("/x/llama-server")]
    assert "--rpc" not in planned.spec().argv
    sp = planned.prepared.speed
    assert [a.workers for a in sp.alternatives] == [(), (WORKER,)]
    assert all(a.tokens_per_s is not None for a in sp.alternatives)
    # The same figures as with that rate kept beforehand (the weighing itself is tested above).
    assert sp == _plan(tiny, machine, lambda ep, b: _link(20, 10, ep)).prepared.speed
    again, calls = _unmeasured(tiny, machine, None, monkeypatch)
    assert calls == [] and again.prepared.speed == sp


def test_when_the_engine_cannot_measure_this_computer_a_model_that_fits_runs_alone(tiny, monkeypatch):
    machine = Machine(16 * GB, 12 * GB, [], "Linux", workers=[_worker(8)])
    planned, calls = _unmeasured(tiny, machine, None, monkeypatch)
    assert calls == [Path("/x/llama-server")]
    assert "--rpc" not in planned.spec().argv and planned.machine.workers == []
    assert (f"{WORKER} is not used: this computer's speed could not be measured, so it cannot be weighed, and the "
            "model fits without it.") in [str(r) for r in planned.prepared.plan.reasons]
    assert planned.prepared.speed.chosen == () and planned.prepared.speed.tokens_per_s is None
    kept, _calls = _unmeasured(tiny, machine, None, monkeypatch, use=WorkerUse.ALWAYS)
    assert "--rpc" in kept.spec().argv  # the user's "always" stands


def test_when_the_engine_cannot_measure_this_computer_a_worker_the_model_needs_is_used(bigger, monkeypatch):
    small = Machine(16 * GB, int(1.1 * GB), [], "Linux", workers=[_worker(8)])
    planned, _calls = _unmeasured(bigger, small, None, monkeypatch)
    argv = planned.spec().argv
    assert argv[argv.index("--rpc") + 1] == WORKER and planned.prepared.plan.fits
    assert ("This computer's speed could not be measured, so the workers are used only because the model does not "
            "fit without them.") in [str(r) for r in planned.prepared.plan.reasons]
