"""A hub file's header read over HTTP ranges (core/hub/remote.py), against a loopback hub."""

from __future__ import annotations

import dataclasses

from draftwise.core.gguf import reader as gguf
from draftwise.core.hub import client, remote
from draftwise.testing.tinymodels import TinyModel, write_tiny_model


def _parsed(h: gguf.GGUFHeader) -> dict:
    """Everything a header says, without where it was read from."""
    return {f.name: getattr(h, f.name) for f in dataclasses.fields(h) if f.name != "path"}


def test_the_copy_parses_to_the_original_header_and_a_second_read_fetches_nothing(hub, tmp_path):
    # A few MB, so the header's first range (remote.FIRST_RANGE) is a small part of it.
    tiny = TinyModel(dtype="Q8_0", n_embd=256, n_ff=768, n_layer=4, n_pieces=2000)
    original = write_tiny_model(tmp_path / "tiny-Q8_0.gguf", tiny)[0]
    served = hub.add_sparse("org/Tiny-GGUF", original.name, original)
    model = client.list_models("org/Tiny-GGUF")[0]

    copy = remote.read_remote_header("org/Tiny-GGUF", model.first)
    want = gguf.read_header(original)
    got = gguf.read_header(copy.path)
    assert not copy.kept and copy.size == original.stat().st_size == copy.path.stat().st_size
    assert copy.header_bytes == want.data_offset
    assert got.tensors == want.tensors and got.kv == want.kv and got.arrays == want.arrays
    assert _parsed(got) == _parsed(want)
    assert original.stat().st_size > 4 * remote.FIRST_RANGE
    assert served.served == copy.fetched and copy.header_bytes <= copy.fetched < copy.size
    with copy.path.open("rb") as f, original.open("rb") as g:
        assert f.read(copy.header_bytes) == g.read(copy.header_bytes)

    requests, sent = len(served.requests), served.served
    again = remote.read_remote_header("org/Tiny-GGUF", model.first)
    assert again.kept and again.path == copy.path and again.header_bytes == copy.header_bytes
    assert (len(served.requests), served.served) == (requests, sent)  # nothing fetched
