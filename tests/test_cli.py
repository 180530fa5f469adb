"""The `draftwise` command as a user runs it: output, JSON shape, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from draftwise.testing.tinymodels import TinyModel, write_tiny_model


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "draftwise.cli.main", *args],
        capture_output=True, text=True, timeout=timeout,
    )


@pytest.fixture
def plan(tmp_path, described_machine):
    """`draftwise plan MODEL --machine BOX.json ...`: the child plans for a described
    machine, never for this machine's free RAM."""
    box = tmp_path / "test-machine.json"
    box.write_text(json.dumps(described_machine.to_json()))

    def go(model, *args: str) -> subprocess.CompletedProcess[str]:
        return run("plan", str(model), "--machine", str(box), *args)

    return go


INSPECT_FIELDS = {
    "architecture", "file_type", "parameters", "block_count", "context_length",
    "embedding_length", "head_count", "head_count_kv", "nextn_predict_layers",
    "sliding_window", "expert_count", "tokenizer", "size_bytes", "tensor_bytes",
    "tensor_count", "shards",
}


def test_inspect_json(tiny_llama):
    out = run("inspect", str(tiny_llama), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert INSPECT_FIELDS <= set(data)
    assert data["architecture"] == "llama"
    assert data["block_count"] == 2 and data["head_count"] == 4 and data["head_count_kv"] == 2
    assert data["nextn_predict_layers"] is None and data["sliding_window"] is None
    assert set(data["tokenizer"]) >= {"model", "pre", "vocab_size", "bos_id", "eos_id", "tokens_sha256"}
    assert data["tokenizer"]["vocab_size"] == TinyModel().n_vocab
    assert data["size_bytes"] == tiny_llama.stat().st_size
    assert data["shards"] == 1


def test_inspect_text_reads_like_a_summary(tiny_llama):
    out = run("inspect", str(tiny_llama))
    assert out.returncode == 0, out.stderr
    assert "architecture   llama" in out.stdout
    assert "context        4096 tokens" in out.stdout


def test_inspect_shards_as_one_model(tmp_path):
    files = write_tiny_model(tmp_path / "big.gguf", TinyModel(), split_max_tensors=8)
    out = run("inspect", str(files[1]), "--json")
    data = json.loads(out.stdout)
    assert data["shards"] == len(files)
    assert data["size_bytes"] == sum(f.stat().st_size for f in files)
    files[-1].unlink()
    text = run("inspect", str(files[0])).stdout
    assert "MISSING" in text and files[-1].name in text


@pytest.mark.parametrize("content, words", [
    (None, "no such file"),
    (b"PK\x03\x04 a zip file", "not a GGUF"),
    (b"GGUF\x03\x00\x00\x00\x01", "at byte"),
])
def test_inspect_bad_input_exits_2_with_one_line(tmp_path, content, words):
    path = tmp_path / "model.gguf"
    if content is not None:
        path.write_bytes(content)
    out = run("inspect", str(path))
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr
    # The file as the user named it, first: "draftwise: /tmp/.../model.gguf: no such file."
    assert lines[0].startswith(f"draftwise: {path}: ")
    assert words.lower() in lines[0].lower()


def test_plan_json_shape(tmp_path, plan):
    target = write_tiny_model(tmp_path / "Tiny-Q8_0.gguf", TinyModel(n_layer=6, n_embd=128))[0]
    draft = write_tiny_model(tmp_path / "Tiny-draft.gguf", TinyModel(n_layer=1, n_embd=32, n_ff=64))[0]
    out = plan(target, "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    spec = data["speculative"]
    assert {"type", "draft", "source", "fallback_eligible", "notes"} <= set(spec)
    assert (spec["type"], spec["draft"], spec["source"]) == ("draft-simple", str(draft), "auto-companion")
    argv = data["argv"]
    assert argv[argv.index("-m") + 1] == str(target)
    assert argv[argv.index("--spec-draft-model") + 1] == str(draft)
    assert argv[argv.index("--host") + 1] == "127.0.0.1"


@pytest.mark.parametrize("args, words", [
    (["--mtp", "off", "--draft", "{draft}"], "off but a draft"),
    (["--backend", "vllm", "--draft", "{draft}"], "only with llama.cpp"),
    (["--", "--model-draft={draft}"], "Draft model field"),
    (["--", "-m", "other.gguf"], "Model field"),
    (["--draft", "{missing}"], "does not exist"),
])
def test_plan_user_errors_exit_2(tmp_path, plan, args, words):
    target = write_tiny_model(tmp_path / "Tiny-Q8_0.gguf", TinyModel(n_layer=6, n_embd=128))[0]
    draft = write_tiny_model(tmp_path / "d.gguf", TinyModel(n_layer=1, n_embd=32))[0]
    args = [a.format(draft=draft, missing=tmp_path / "nope.gguf") for a in args]
    out = plan(target, *args)
    assert out.returncode == 2, out.stdout
    assert words in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_plan_text_speaks_plainly(tmp_path, plan):
    target = write_tiny_model(tmp_path / "Tiny-Q8_0.gguf", TinyModel())[0]
    out = plan(target, "--mtp", "off")
    assert out.returncode == 0
    assert "Speculation: off" in out.stdout and "as you chose" in out.stdout
    assert Path(out.stdout.splitlines()[-1].split()[0]).name.startswith("llama-server")


@pytest.mark.engine
def test_planned_argv_parses_in_the_real_engine(engine, tmp_path, plan):
    """`--flag=value` and `_` spellings from the user reach the engine in a form it accepts."""
    import os

    from draftwise.core.engines import provision

    target = write_tiny_model(tmp_path / "Tiny-Q8_0.gguf", TinyModel())[0]
    out = plan(target, "--json", "--", "--ctx-size=512", "--spec_type=ngram-mod")
    assert out.returncode == 0, out.stderr
    plan = json.loads(out.stdout)
    argv = plan["argv"]
    # The context is the plan's input: planned as 512 tokens and given once, in the plan's -c.
    assert plan["plan"]["ctx"] == 512 and argv[argv.index("-c") + 1] == "512"
    assert "--ctx-size" not in argv and "--spec_type" in argv  # the engine reads _ as -
    # The engine parses every argument before it acts on --version.
    check = subprocess.run([str(engine.binary), *argv[1:], "--version"], capture_output=True, text=True,
                           timeout=30, env={**os.environ, **provision.library_env(engine.binary.parent)})
    assert check.returncode == 0, check.stderr[-500:]


def test_broken_list_and_clear(tmp_path, monkeypatch):
    from draftwise.core.speculation.broken import BrokenDrafters
    from draftwise.core.speculation.resolver import drafter_key

    monkeypatch.setenv("DRAFTWISE_DATA_DIR", str(tmp_path / "data"))
    draft = write_tiny_model(tmp_path / "Tiny-draft.gguf", TinyModel(n_layer=1, n_embd=32))[0]
    BrokenDrafters().record(tmp_path / "llama-server", drafter_key(draft, "draft-simple"), "it crashed")
    listed = run("broken", "list")
    assert listed.returncode == 0 and str(draft) in listed.stdout and "it crashed" in listed.stdout
    assert run("broken", "clear", str(tmp_path / "other.gguf")).returncode == 2
    cleared = run("broken", "clear", str(draft))
    assert cleared.returncode == 0 and "Removed 1" in cleared.stdout
    assert BrokenDrafters().entries() == []


def test_prompts_lists_and_deletes_the_kept_prompts(tmp_path, monkeypatch):
    """`draftwise prompts`: what the chat kept for measuring on the user's work, and a way to
    delete it (one model's or all) that leaves the speed figures."""
    from draftwise.core.measurements import usage

    monkeypatch.setenv("DRAFTWISE_DATA_DIR", str(tmp_path / "data"))
    a, b = tmp_path / "a.gguf", tmp_path / "b.gguf"
    usage.UsageRecords().add_prompts(a, ("User: one\nAssistant:", "User: two\nAssistant:"))
    usage.UsageRecords().add_prompts(b, ("User: three\nAssistant:",))
    listed = run("prompts")
    assert listed.returncode == 0, listed.stderr
    assert "  2  " in listed.stdout and str(a) in listed.stdout and str(b) in listed.stdout
    assert "one" not in listed.stdout  # counts and files, never the user's text
    cleared = run("prompts", "--clear", str(a))
    assert cleared.returncode == 0 and "Deleted 2 kept prompts of a.gguf." in cleared.stdout
    assert usage.UsageRecords().model(a).prompts == () and len(usage.UsageRecords().model(b).prompts) == 1
    assert "Deleted 1 kept prompt." in run("prompts", "--clear").stdout
    assert "No prompts are kept." in run("prompts").stdout
