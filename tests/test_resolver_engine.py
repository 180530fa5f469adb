"""The resolver's decisions, proven on the real llama-server (issue 3, cases a-d)."""

from __future__ import annotations

from pathlib import Path

import pytest

from draftwise.core.engines import capabilities
from draftwise.core.gguf import reader as gguf
from draftwise.core.launch import headless
from draftwise.core.speculation.resolver import SpecOptions, resolve
from draftwise.testing.tinydrafts import eagle3_draft
from draftwise.testing.tinymodels import (
    TinyModel,
    draft_model,
    mtp_model,
    write_tiny_model,
)

pytestmark = pytest.mark.engine


@pytest.fixture(scope="module")
def caps(engine):
    return capabilities.capabilities(engine.binary)


def _serve(engine, model: Path, spec_argv, tmp_path: Path, prompt: str = "Hello there") -> tuple[dict, str]:
    """Start with the decided flags, get tokens, stop; return (timings, log)."""
    server = headless.start_server(engine.binary, model, extra_args=list(spec_argv), log_dir=tmp_path)
    try:
        server.wait_ready(timeout=120)
        assert server.health() == 200
        result = server.complete(prompt, n_predict=12)
        assert result["tokens_predicted"] > 0
    finally:
        server.stop()
    return result.get("timings") or {}, server.log_text()


def test_a_embedded_mtp_head_is_used(engine, caps, tmp_path):
    path = write_tiny_model(tmp_path / "GLM-tiny.gguf", mtp_model())[0]
    decision = resolve(gguf.read_model(path), SpecOptions(), caps)
    assert (decision.spec_type, decision.source) == ("draft-mtp", "auto-mtp")
    timings, log = _serve(engine, path, decision.argv, tmp_path)
    assert "creating MTP draft context" in log
    assert timings.get("draft_n", 0) > 0  # the engine really drafted with the head


def test_a_trunk_only_file_gets_no_mtp(engine, caps, tmp_path):
    path = write_tiny_model(tmp_path / "GLM-tiny.gguf", mtp_model(), part="trunk")[0]
    info = gguf.read_model(path)
    assert info.nextn_predict_layers == 1 and not info.mtp_head_present
    decision = resolve(info, SpecOptions(), caps)
    assert decision.spec_type is None and "--spec-type" not in decision.argv
    timings, _ = _serve(engine, path, decision.argv, tmp_path)
    assert "draft_n" not in timings or timings["draft_n"] == 0


def test_a_trunk_with_mtp_sidecar(engine, caps, tmp_path):
    trunk = write_tiny_model(tmp_path / "GLM-tiny-Q8_0.gguf", mtp_model(), part="trunk")[0]
    sidecar = write_tiny_model(tmp_path / "GLM-tiny-MTP.gguf", mtp_model(), part="mtp")[0]
    decision = resolve(gguf.read_model(trunk), SpecOptions(), caps)
    assert (decision.spec_type, decision.draft) == ("draft-mtp", sidecar)
    timings, _ = _serve(engine, trunk, decision.argv, tmp_path)
    assert timings.get("draft_n", 0) > 0


def test_b_companion_draft_same_vocabulary(engine, caps, tmp_path):
    target = TinyModel(name="Tiny", n_layer=4, n_embd=128, n_ff=256)
    path = write_tiny_model(tmp_path / "Tiny-Q8_0.gguf", target)[0]
    draft = write_tiny_model(tmp_path / "Tiny-draft.gguf", draft_model(target))[0]
    decision = resolve(gguf.read_model(path), SpecOptions(), caps)
    assert (decision.spec_type, decision.draft, decision.source) == ("draft-simple", draft, "auto-companion")
    timings, log = _serve(engine, path, decision.argv, tmp_path)
    assert timings.get("draft_n", 0) > 0
    assert "vocabs are not compatible" not in log


def test_c_companion_of_other_vocabulary_is_skipped(engine, caps, tmp_path):
    target = TinyModel(name="Tiny", n_layer=4, n_embd=128, n_ff=256)
    path = write_tiny_model(tmp_path / "Tiny-Q8_0.gguf", target)[0]
    write_tiny_model(tmp_path / "Tiny-draft.gguf", draft_model(target, vocab="other"))
    decision = resolve(gguf.read_model(path), SpecOptions(), caps)
    assert decision.spec_type is None and decision.source == "none"
    assert any(n.startswith("Skipped Tiny-draft.gguf: token 259 differs") for n in decision.notes)
    timings, log = _serve(engine, path, decision.argv, tmp_path)
    assert "vocabs are not compatible" not in log and not timings.get("draft_n")


def test_c_engine_itself_silently_drops_a_mismatched_draft(engine, tmp_path):
    """Why the check matters: forced past us, the engine serves without speculation."""
    target = TinyModel(name="Tiny", n_layer=4, n_embd=128, n_ff=256)
    path = write_tiny_model(tmp_path / "Tiny.gguf", target)[0]
    other = write_tiny_model(tmp_path / "other.gguf", draft_model(target, vocab="other"))[0]
    timings, log = _serve(engine, path, ["--spec-type", "draft-simple", "-md", str(other)], tmp_path)
    assert "vocabs are not compatible" in log
    assert not timings.get("draft_n")


def test_eagle3_draft_is_typed_by_its_tensors(engine, caps, tmp_path):
    target = TinyModel(name="Tiny", n_layer=4, n_embd=128, n_ff=256)
    path = write_tiny_model(tmp_path / "Tiny.gguf", target)[0]
    draft = write_tiny_model(tmp_path / "Tiny-eagle3.gguf", eagle3_draft(target))[0]
    decision = resolve(gguf.read_model(path), SpecOptions(), caps)
    assert (decision.spec_type, decision.draft) == ("draft-eagle3", draft)
    timings, _ = _serve(engine, path, decision.argv, tmp_path)
    assert timings.get("draft_n", 0) > 0


def test_d_forced_mtp_without_head_exits_1(engine, tmp_path):
    path = write_tiny_model(tmp_path / "plain.gguf", TinyModel())[0]
    server = headless.start_server(engine.binary, path, extra_args=["--spec-type", "draft-mtp"], log_dir=tmp_path)
    try:
        with pytest.raises(headless.EngineError):
            server.wait_ready(timeout=60)
    finally:
        server.stop()
    assert server.process.returncode == 1
    assert "failed to create MTP context" in server.log_text()
