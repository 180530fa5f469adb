"""The upload to the workers (core/rpc/upload.py, services/upload_reader.py): what the
engine's sockets say, turned into bytes, rate and time left; the expected time from the
link where no socket can be read. The live path over a shaped link is tests/test_upload_netns.py."""

from __future__ import annotations

import os
import socket
import threading

import pytest

from draftwise.core.planning.plan_types import DeviceUse
from draftwise.core.rpc import upload
from draftwise.viewmodels.i18n import tr_message

MiB = 1 << 20

# `ss -tinpH state established` on this project's CI machine while bench/rpc_network.py ran: the
# relay's side and the engine's (pid 27989) connection to the worker behind it.
SS = """\
0      18824        127.0.0.1:39493       127.0.0.1:54562 users:(("python",pid=27114,fd=41))
\t bbr wscale:10,10 rto:208 rtt:5.294/4.92 mss:65483 cwnd:22 bytes_sent:9358157 bytes_acked:9339333 bytes_received:70039195
0      0            127.0.0.1:54562       127.0.0.1:39493 users:(("llama-server",pid=27989,fd=4))
\t bbr wscale:10,10 rto:204 rtt:0.865/1.672 mss:65483 bytes_sent:70235644 bytes_retrans:196449 bytes_acked:70039196 bytes_received:9358157
0      0            127.0.0.1:58459       127.0.0.1:36066 users:(("llama-server",pid=27989,fd=6))
\t bbr wscale:10,10 rto:200 rtt:0.005/0.002 mss:32768 bytes_received:332 segs_out:2
"""


def test_the_engine_sockets_bytes_acknowledged_by_each_peer():
    acked = upload.parse_ss(SS, [27989])
    assert acked == {("127.0.0.1", 39493): 70039196}  # the HTTP client's socket sent nothing
    assert upload.sent_by_endpoint(acked, {"127.0.0.1:39493": ("127.0.0.1", 39493), "b:1": None}) == {
        "127.0.0.1:39493": 70039196}
    assert upload.parse_ss(SS, [1]) == {}


def test_uploads_are_each_workers_weights_and_head_with_its_link():
    rows = [DeviceUse("RPC0 (a:1)", "gpu", 1, worker="a:1", weights=100 * MiB, output=10 * MiB),
            DeviceUse("RPC1 (b:2)", "gpu", 1, worker="b:2", weights=50 * MiB),
            DeviceUse("RAM", "cpu", 1, weights=300 * MiB)]

    class Link:
        endpoint, mbit_s = "a:1", 80.0

    assert upload.uploads(rows, [Link()]) == (upload.Upload("a:1", 110 * MiB, 80.0), upload.Upload("b:2", 50 * MiB))


def test_progress_from_readings_and_the_expected_time_without_them():
    watch = upload.UploadWatch([upload.Upload("127.0.0.1:9", 100 * MiB, 80.0)], started_at=0.0)
    first = watch.update(1.0, {"127.0.0.1:9": 10 * MiB})
    assert first.measured and first.sent == 10 * MiB and first.bytes_per_s is None
    later = watch.update(3.0, {"127.0.0.1:9": 30 * MiB})
    assert later.bytes_per_s == pytest.approx(10 * MiB) and later.seconds_left == pytest.approx(7.0)
    assert tr_message(later.text()) == ("Sending weights to 127.0.0.1:9: 30.0 MiB of up to 100.0 MiB, "
                                        "10.0 MiB/s, about 7.0 s left.")
    done = watch.update(4.0, {"127.0.0.1:9": 120 * MiB})  # more than the weights: other commands too
    assert done.done and done.sent == 100 * MiB
    # No socket to read (not Linux, no `ss`): the time the measured link gives, counting down.
    blind = upload.UploadWatch([upload.Upload("127.0.0.1:9", 100 * MiB, 80.0)], started_at=0.0)
    guess = blind.update(4.0, None)
    assert not guess.measured and guess.seconds_left == pytest.approx(100 * MiB * 8 / 80e6 - 4.0)
    assert "at the measured link speed" in tr_message(guess.text())
    unknown = upload.UploadWatch([upload.Upload("127.0.0.1:9", 100 * MiB)], started_at=0.0).update(1.0, None)
    assert unknown.seconds_left is None and tr_message(unknown.text()).startswith("Sending up to 100.0 MiB")


@pytest.mark.skipif(upload.ss_argv() is None, reason="no `ss` here")
def test_the_reader_reads_a_real_socket_of_this_process(qtbot):
    from draftwise.services.upload_reader import UploadReader

    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    got = bytearray()

    def drain() -> None:
        conn, _ = server.accept()
        with conn:
            while chunk := conn.recv(1 << 16):
                got.extend(chunk)

    t = threading.Thread(target=drain, daemon=True)
    t.start()
    with socket.create_connection(("127.0.0.1", port)) as client:
        client.sendall(b"x" * (3 * MiB))
        qtbot.waitUntil(lambda: len(got) >= 3 * MiB, timeout=5000)
        reader = UploadReader()
        ep = f"127.0.0.1:{port}"
        with qtbot.waitSignal(reader.read, timeout=5000) as seen:
            reader.request(os.getpid(), {ep: upload.peer_of(ep)})
        assert seen.args[0][ep] >= 3 * MiB
    t.join(5)
    server.close()
