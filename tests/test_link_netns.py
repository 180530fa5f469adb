"""The link to a worker measured over a real network path (issue 29, items 1 and 4).

A real `ggml-rpc-server` runs in a network namespace behind a veth pair shaped with tc (tbf)
and a delaying relay (draftwise/testing/netlab.py); core/rpc/link.py measures it through
the RPC protocol. The shaped rate and the relay's delay are what the probe must find: the
round trip can be no shorter than twice the relay's delay, and the bandwidth no higher than
the shaping allows. On loopback (no shaping, no relay) both would fail these bounds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from draftwise.core.launch import launch_spec
from draftwise.core.machine import speed
from draftwise.core.rpc import link, share, worker_rate
from draftwise.testing import netlab

NO_LAB = netlab.available()


@pytest.fixture
def rpc_binary(engine) -> Path:
    return share.worker_binary(engine.binary)


@pytest.fixture
def worker_in_namespace(rpc_binary, request):
    profile: netlab.Profile = request.param
    # As many threads as this computer's engine, so its compute rate compares with this one's.
    with netlab.worker(profile, rpc_binary, share.worker_env(rpc_binary), launch_spec.any_free_port(),
                       threads=speed.cores()) as w:
        yield profile, w


@pytest.mark.skipif(NO_LAB is not None, reason=str(NO_LAB))
@pytest.mark.parametrize("worker_in_namespace", [netlab.Profile("20 Mbit, 10 ms", 20, 5.0)], indirect=True)
def test_the_probe_finds_the_shaped_links_bandwidth_and_round_trip(worker_in_namespace, engine):
    profile, w = worker_in_namespace
    here = [worker_rate.here(engine.binary)]
    direct = link.measure(w.direct, max_bytes=4 << 20)
    through = link.measure(w.endpoint, max_bytes=4 << 20, reference=lambda: here[0])
    for lk in (direct, through):
        # The shaping caps it; TCP and tbf's burst leave it a little under.
        assert 0.6 * profile.mbit <= lk.mbit_s <= 1.1 * profile.mbit, lk
    # The relay holds each chunk delay_ms each way: the round trip is at least twice that.
    assert through.rtt_ms >= 2 * profile.delay_ms, through
    assert through.rtt_ms - direct.rtt_ms >= 1.5 * profile.delay_ms, (through, direct)
    assert direct.rtt_ms < 2 * profile.delay_ms, direct
    # The compute probe through the same path: the worker is this computer's processor, and
    # the relay's round trip is taken off each timing, so it reads near this computer's
    # figure. Other work comes and goes here for seconds at a time: the middle of three
    # pairs, this computer's figure measured again before each.
    assert through.rate_error is None and through.rate_ratio > 0, through
    ratios = [through.rate_ratio]
    for _ in range(2):
        here[0] = worker_rate.measure_here(engine.binary)
        ratios.append(worker_rate.measure(w.endpoint) / here[0])
    assert 0.5 <= sorted(ratios)[1] <= 2.0, ratios


def test_a_worker_that_is_not_there_is_named():
    port = launch_spec.any_free_port()
    with pytest.raises(link.LinkError) as caught:
        link.measure(f"127.0.0.1:{port}", timeout=2)
    assert f"127.0.0.1:{port}" in str(caught.value.message)


def test_a_link_is_kept_a_day_per_worker_and_engine_build(tmp_path):
    record = tmp_path / "worker-links.json"
    measured = link.Link("10.0.0.5:50052", 4.2, 93.5, 4 << 20, measured_at=1_000_000.0)
    link.remember(measured, "build-a", path=record)
    assert link.recorded("10.0.0.5:50052", "build-a", path=record, now=1_000_000.0 + 3600) == measured
    # Another engine build, another worker, or a day later: not kept.
    assert link.recorded("10.0.0.5:50052", "build-b", path=record, now=1_000_000.0) is None
    assert link.recorded("10.0.0.6:50052", "build-a", path=record, now=1_000_000.0) is None
    assert link.recorded("10.0.0.5:50052", "build-a", path=record, now=1_000_000.0 + link.MAX_AGE_S + 1) is None
    # An entry of another shape is measured again, and the file is not called damaged.
    record.write_text('{"version": 1, "entries": {"10.0.0.5:50052#build-a": {"rtt": 1}}}')
    assert link.recorded("10.0.0.5:50052", "build-a", path=record, now=1_000_000.0) is None
    assert link.record_file(record).problem is None


def test_a_link_that_failed_is_not_measured_again_at_every_plan(tmp_path):
    """The window plans again at each change: a worker whose link failed is answered with the
    same LinkError for minutes instead of a new wait; Check again (forget_failure) asks at once."""
    port = launch_spec.any_free_port()
    ep = f"127.0.0.1:{port}"
    record = tmp_path / "worker-links.json"
    link.forget_failure()
    with pytest.raises(link.LinkError) as first:
        link.link_to(ep, "build-a", path=record)
    try:
        with pytest.raises(link.LinkError) as again:
            link.link_to(ep, "build-a", path=record)
        assert again.value is first.value  # the same answer: not asked again
        link.forget_failure(ep)
        with pytest.raises(link.LinkError) as fresh:
            link.link_to(ep, "build-a", path=record)
        assert fresh.value is not first.value  # asked again
    finally:
        link.forget_failure()
