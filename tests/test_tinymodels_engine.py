"""The tiny speculative-decoding models of `draftwise.testing.tinymodels` on the real engine.

Each case is one short llama-server run (ctx 512, 8 tokens); what they check is recorded
with the exact log lines in docs/engine-observations.md.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from draftwise.core.launch import headless
from draftwise.testing import tinydrafts as td
from draftwise.testing import tinymodels as tm

pytestmark = pytest.mark.engine

PROMPT = "Hello world, this is"


@contextlib.contextmanager
def _serving(engine, model: Path, tmp_path: Path, *args: str) -> Iterator[headless.RunningServer]:
    server = headless.start_server(engine.binary, model, extra_args=args, log_dir=tmp_path)
    try:
        server.wait_ready(timeout=60)
        yield server
    finally:
        server.stop()


def _exit_of(engine, model: Path, tmp_path: Path, *args: str) -> tuple[int, str]:
    """Start a server that is expected to die during startup; return (exit code, log)."""
    server = headless.start_server(engine.binary, model, extra_args=args, log_dir=tmp_path)
    try:
        code = server.process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.stop()
        pytest.fail(f"llama-server kept running with {args}:\n{server.log_text()[-2000:]}")
    return code, server.log_text()


def _drafted(result: dict) -> int:
    return int(result["timings"].get("draft_n", 0))


@pytest.fixture
def target(tmp_path: Path) -> tuple[tm.TinyModel, Path]:
    model = tm.TinyModel()
    return model, tm.write_tiny_model(tmp_path / "target.gguf", model)[0]


@pytest.fixture
def mtp_files(tmp_path: Path) -> dict[str, Path]:
    model = tm.mtp_model()
    return {
        part: tm.write_tiny_model(tmp_path / f"glm4moe-{part}.gguf", model, part=part)[0]
        for part in ("full", "trunk", "mtp")
    }


def test_file_layouts_of_the_mtp_parts(mtp_files):
    import gguf

    def names(path: Path) -> tuple[set[str], int]:
        reader = gguf.GGUFReader(path)
        nextn = reader.fields["glm4moe.nextn_predict_layers"].contents()
        return {t.name for t in reader.tensors}, nextn

    full, n_full = names(mtp_files["full"])
    trunk, n_trunk = names(mtp_files["trunk"])
    head, n_head = names(mtp_files["mtp"])
    assert n_full == n_trunk == n_head == 1
    assert "blk.2.nextn.eh_proj.weight" in full and "blk.2.nextn.eh_proj.weight" in head
    assert not any(n.startswith("blk.2.") for n in trunk)
    assert "blk.0.attn_norm.weight" not in head and "token_embd.weight" in head
    assert trunk | head == full


def test_embedded_mtp_head_drafts(engine, mtp_files, tmp_path):
    with _serving(engine, mtp_files["full"], tmp_path, "--spec-type", "draft-mtp") as server:
        result = server.complete(PROMPT, n_predict=8)
    log = server.log_text()  # after stop: the timing lines may follow the HTTP answer
    assert result["tokens_predicted"] == 8
    assert _drafted(result) > 0
    assert "creating MTP draft context against the target model" in log
    assert "draft acceptance = " in log


def test_trunk_only_serves_without_speculation(engine, mtp_files, tmp_path):
    with _serving(engine, mtp_files["trunk"], tmp_path) as server:
        result = server.complete(PROMPT, n_predict=8)
    log = server.log_text()  # after stop: the timing lines may follow the HTTP answer
    assert result["tokens_predicted"] == 8
    assert "model has unused tensor" not in log  # the full file warns about its nextn block


def test_trunk_only_with_forced_mtp_aborts(engine, mtp_files, tmp_path, monkeypatch):
    monkeypatch.setenv("GGML_NO_BACKTRACE", "1")  # no gdb attach on the abort
    code, log = _exit_of(engine, mtp_files["trunk"], tmp_path, "--spec-type", "draft-mtp")
    if sys.platform != "win32":
        assert code == -signal.SIGABRT
    assert code != 0
    assert 'GGML_ASSERT(layer.nextn.eh_proj && "MTP block missing nextn.eh_proj") failed' in log


def test_mtp_sidecar_drafts_for_the_trunk(engine, mtp_files, tmp_path):
    args = ("--spec-type", "draft-mtp", "-md", str(mtp_files["mtp"]))
    with _serving(engine, mtp_files["trunk"], tmp_path, *args) as server:
        result = server.complete(PROMPT, n_predict=8)
    log = server.log_text()  # after stop: the timing lines may follow the HTTP answer
    assert _drafted(result) > 0
    assert f"loading draft model '{mtp_files['mtp']}'" in log
    assert "draft acceptance = " in log


def test_companion_draft_with_the_same_vocabulary(engine, target, tmp_path):
    model, path = target
    draft = tm.write_tiny_model(tmp_path / "draft.gguf", tm.draft_model(model))[0]
    args = ("--spec-type", "draft-simple", "-md", str(draft))
    with _serving(engine, path, tmp_path, *args) as server:
        result = server.complete(PROMPT, n_predict=8)
    log = server.log_text()  # after stop: the timing lines may follow the HTTP answer
    assert result["tokens_predicted"] == 8
    assert _drafted(result) > 0
    assert "draft acceptance = " in log
    assert "not compatible" not in log


def test_twin_draft_is_always_accepted(engine, target, tmp_path):
    model, path = target
    twin = tm.write_tiny_model(tmp_path / "twin.gguf", td.twin_draft(model))[0]
    with _serving(engine, path, tmp_path, "--spec-type", "draft-simple", "-md", str(twin)) as server:
        result = server.complete(PROMPT, n_predict=8)
    timings = result["timings"]
    assert timings["draft_n"] > 0
    assert timings["draft_n_accepted"] == timings["draft_n"]


def test_companion_draft_with_another_vocabulary_serves_without_speculation(engine, target, tmp_path):
    model, path = target
    draft = tm.write_tiny_model(tmp_path / "other.gguf", tm.draft_model(model, vocab="other"))[0]
    args = ("--spec-type", "draft-simple", "-md", str(draft))
    with _serving(engine, path, tmp_path, *args) as server:
        result = server.complete(PROMPT, n_predict=8)
    log = server.log_text()  # after stop: the timing lines may follow the HTTP answer
    assert result["tokens_predicted"] == 8
    assert _drafted(result) == 0
    assert "the target and draft vocabs are not compatible" in log
    assert "failed to initialize speculative decoding context" in log
    assert "draft acceptance" not in log


def test_forced_mtp_on_a_plain_llama_exits_1(engine, target, tmp_path):
    _, path = target
    code, log = _exit_of(engine, path, tmp_path, "--spec-type", "draft-mtp")
    assert code == 1
    assert "context type MTP requested but model doesn't contain MTP layers" in log
    assert "failed to create MTP context" in log
    assert "exiting due to model loading error" in log


@pytest.mark.parametrize(
    ("how", "reason"),
    [
        ("missing", "check_tensor_dims: tensor 'blk.0.ffn_down.weight' not found"),
        ("shape", "check_tensor_dims: tensor 'blk.0.attn_q.weight' has wrong shape"),
    ],
)
def test_broken_draft_exits_1(engine, target, tmp_path, how, reason):
    model, path = target
    draft = tm.broken_draft(tmp_path / f"broken-{how}.gguf", model, how=how)
    code, log = _exit_of(engine, path, tmp_path, "--spec-type", "draft-simple", "-md", str(draft))
    assert code == 1
    assert reason in log
    assert f"failed to load draft model, '{draft}'" in log
    assert "exiting due to model loading error" in log


@pytest.mark.parametrize(("kind", "make"), [("eagle3", td.eagle3_draft), ("dflash", td.dflash_draft)])
def test_feature_drafts_run(engine, target, tmp_path, kind, make):
    model, path = target
    draft = tm.write_tiny_model(tmp_path / f"{kind}.gguf", make(model))[0]
    with _serving(engine, path, tmp_path, "--spec-type", f"draft-{kind}", "-md", str(draft)) as server:
        result = server.complete(PROMPT, n_predict=8)
    assert _drafted(result) > 0
