"""The pairs people run, judged by the real engine and by us (docs/pairing.md, "Real pairs").

Each model is a tiny random one carrying its published model's real token list
(draftwise/testing/realvocab.py: the pinned source's models/ggml-vocab-*.gguf and the real
Gemma 3 270M), in its own architecture where the tiny writers have it. The pairing rule reads
only tokenizers, so the verdicts are the published files' verdicts. For each pair: our verdict
(condition and bans), whether auto picks the draft beside the model under its published name,
and the engine's verdict from its own log (-lv 5): refused as incompatible, or accepted and
drafting (`draft_n > 0`) with our bans, or accepted and then dying mid-reply on the id we
refuse for.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from draftwise.core.engines.capabilities import pinned_caps
from draftwise.core.gguf import reader as gguf
from draftwise.core.launch import crash, headless, llamacpp
from draftwise.core.speculation import draft_check, pairing
from draftwise.core.speculation import resolver as rs
from draftwise.testing import realvocab as rv
from draftwise.testing import tinyarchs as ta
from draftwise.testing import tinymodels as tm

CAPS = pinned_caps()
# Tiny geometries: what the engine loads in a second with a 262k-row embedding table. The
# target is wider than the draft, so auto sees the draft as the smaller file it is.
# (under half its size, as a 0.5B beside a 7B; small models tie their embeddings).
TARGET = dict(n_embd=96, n_head=4, n_head_kv=2, n_ff=128, n_layer=2, dtype="F16", n_ctx_train=4096)
DRAFT = dict(n_embd=32, n_head=2, n_head_kv=1, n_ff=64, n_layer=1, dtype="F16", n_ctx_train=4096, seed=1,
             tie_embeddings=True)


def _model(arch: str, **geometry) -> tm.TinyModel:
    if arch == "qwen3moe":
        return ta.qwen3moe_model(n_expert=4, n_expert_used=2, n_ff_exp=64, **geometry)
    if arch == "gemma3":
        return ta.gemma3_model(sliding_window=256, **geometry)
    return tm.TinyModel(arch=arch, **geometry)


@dataclass(frozen=True)
class Side:
    file_name: str  # the published file's name (auto reads names)
    arch: str
    vocab: Callable[[], rv.RealVocab]
    recipe: str  # what the list is made of, for the cache key
    # general.name, when not the file's stem: the engine sets token attributes by it
    # (llama-vocab.cpp: a name with "phi-3" must hold "<|endoftext|>").
    general_name: str = ""

    def write(self, geometry: dict) -> Path:
        model = _model(self.arch, name=self.general_name or self.file_name.removesuffix(".gguf"), **geometry)
        sources = [realvocab_source(self.recipe)]
        key = f"{self.recipe}|{self.arch}|{sorted(geometry.items())}|{rv.identity(*sources)}"
        return rv.cached(self.file_name, key,
                         lambda path: rv.write(path, model, self.vocab(), ta.TENSOR_SETS[self.arch]))


def realvocab_source(recipe: str) -> Path:
    """The file a list is read from (its identity keys the cache)."""
    name = recipe.split(":", 1)[1] if ":" in recipe else recipe
    if name == "gemma3-270m":
        from draftwise.testing import realmodels

        return realmodels.gemma3_270m()
    if name == "synthesized":
        return Path(rv.__file__)
    return rv.source_folder() / "models" / f"ggml-vocab-{name}.gguf"


@dataclass(frozen=True)
class RealPair:
    name: str
    target: Side
    draft: Side
    condition: str | None  # ours
    bans: int  # ids banned on the target
    engine_refuses: bool  # the engine's own rule
    reason: str = ""  # regex on our reason
    considered: bool = True  # auto reads the draft (its name says it may be one)


QWEN25_SMALL = Side("qwen2.5-0.5b-instruct-q8_0.gguf", "qwen2", lambda: rv.qwen(151936), "qwen2.5-151936:qwen2")
GEMMA3_270M = Side("gemma-3-270m-it-Q8_0.gguf", "gemma3", lambda: rv.gemma3(262144), "gemma3-262144:gemma3-270m")
LLAMA32_1B = Side("Llama-3.2-1B-Instruct-Q8_0.gguf", "llama", lambda: rv.from_source("llama-bpe"), "llama3:llama-bpe")
REAL_PAIRS = (
    RealPair("Qwen2.5 7B-72B (152,064) + 0.5B (151,936)",
             Side("Qwen2.5-7B-Instruct-Q4_K_M.gguf", "qwen2", lambda: rv.qwen(152064), "qwen2.5-152064:qwen2"),
             QWEN25_SMALL, None, 128, False),
    RealPair("Qwen2.5 1.5B/3B + 0.5B (151,936 each)",
             Side("qwen2.5-1.5b-instruct-q4_k_m.gguf", "qwen2", lambda: rv.qwen(151936), "qwen2.5-151936:qwen2"),
             QWEN25_SMALL, None, 0, False),
    RealPair("Qwen3-30B-A3B (qwen3moe) + Qwen3-0.6B (qwen3)",
             Side("Qwen3-30B-A3B-Q4_K_M.gguf", "qwen3moe", lambda: rv.qwen(151936, qwen3=True), "qwen3:qwen2"),
             Side("Qwen3-0.6B-Q8_0.gguf", "qwen3", lambda: rv.qwen(151936, qwen3=True), "qwen3:qwen2"),
             None, 0, False),
    RealPair("Gemma 3 4B/12B/27B (262,208) + 270M/1B (262,144)",
             Side("gemma-3-4b-it-Q4_K_M.gguf", "gemma3", lambda: rv.gemma3(262208), "gemma3-262208:gemma3-270m"),
             GEMMA3_270M, None, 64, False),
    RealPair("Llama 3.1 8B + Llama 3.2 1B (128,256 each)",
             Side("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", "llama", lambda: rv.from_source("llama-bpe"),
                  "llama3:llama-bpe"), LLAMA32_1B, None, 0, False),
    RealPair("gpt-oss-120b + gpt-oss-20b (201,088 each)",
             Side("gpt-oss-120b-MXFP4.gguf", "llama", rv.gpt_oss,
                  "o200k:synthesized"),
             Side("gpt-oss-20b-MXFP4.gguf", "llama", rv.gpt_oss, "o200k:synthesized"), None, 0, False),
    RealPair("Phi-3 (32,064) + a 32,000-id draft",
             Side("Phi-3-mini-4k-instruct-q4.gguf", "llama", lambda: rv.from_source("phi-3"), "phi3:phi-3"),
             Side("Phi-3-mini-draft-32000-Q8_0.gguf", "llama", lambda: rv.from_source("llama-spm"),
                  "llama-spm:llama-spm", general_name="tinyllama-32000"),
             pairing.MODEL_ONLY, 0, False, r"token 32000 \('<\|endoftext\|>'\) exists only in the model and ends"),
    RealPair("Llama 3.1 8B + Qwen2.5 0.5B (other families)",
             Side("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", "llama", lambda: rv.from_source("llama-bpe"),
                  "llama3:llama-bpe"), QWEN25_SMALL, pairing.BOS, 0, True, r"add_bos off in the draft, on in the model",
             considered=False),
)
IDS = [p.name for p in REAL_PAIRS]
# The engine's own line for a refused condition (common/speculative.cpp).
ENGINE_SAYS = {pairing.BOS: r"draft model bos tokens must match target model",
               pairing.SIZE: r"difference \d+, max allowed 128"}


@pytest.fixture(scope="module")
def written() -> dict[str, tuple[Path, Path]]:
    try:
        return {p.name: (p.target.write(TARGET), p.draft.write(DRAFT)) for p in REAL_PAIRS}
    except (FileNotFoundError, RuntimeError) as exc:  # no pinned source unpacked, no Gemma 3 270M
        pytest.skip(f"a real token list is not at hand: {exc}")


def _beside(tmp_path: Path, pair: RealPair, files: tuple[Path, Path]) -> tuple[Path, Path]:
    """Both files under their published names in one folder, as a download leaves them."""
    target, draft = tmp_path / pair.target.file_name, tmp_path / pair.draft.file_name
    target.symlink_to(files[0])
    draft.symlink_to(files[1])
    return target, draft


@pytest.mark.parametrize("pair", REAL_PAIRS, ids=IDS)
def test_our_verdict_and_auto(pair: RealPair, written, tmp_path: Path) -> None:
    target, draft = _beside(tmp_path, pair, written[pair.name])
    model = gguf.read_model(target)
    verdict = pairing.check(model, draft_check.read_draft(draft))
    assert verdict.condition == pair.condition, str(verdict)
    assert len(verdict.bans) == pair.bans
    if pair.reason:
        assert re.search(pair.reason, str(verdict)), str(verdict)
    assert verdict.engine_accepts == (not pair.engine_refuses)
    decision = rs.resolve(model, rs.SpecOptions(), CAPS)
    if verdict.ok:
        # Every pair the engine drafts safely is chosen automatically, bans and all.
        assert (decision.source, decision.draft) == (rs.AUTO_COMPANION, draft), decision.notes
        assert decision.bans == verdict.bans
    else:
        assert decision.spec_type is None
        assert [name for name, _why in decision.refused] == ([draft.name] if pair.considered else [])


@pytest.mark.engine
@pytest.mark.parametrize("pair", REAL_PAIRS, ids=IDS)
def test_the_engine_verdict(engine, pair: RealPair, written, tmp_path: Path) -> None:
    target, draft = written[pair.name]
    ours = pairing.check(gguf.read_model(target), draft_check.read_draft(draft))
    server = headless.start_server(engine.binary, target, ctx=512, log_dir=tmp_path,
                                   extra_args=["--spec-type", "draft-simple", "-md", str(draft), "-lv", "5",
                                               "-t", "1", *llamacpp.ban_args(ours.bans)])
    died = False
    try:
        server.wait_ready(90)
        if ours.ok:
            status, raw = headless.request(server.base_url, server.api_key, "/completion",
                                           {"prompt": "Hello there, tell me a story", "n_predict": 8,
                                            "temperature": 0}, 60)
            result = json.loads(raw)
            assert status == 200 and result["tokens_predicted"] > 0 and result["timings"].get("draft_n", 0) > 0
        elif not pair.engine_refuses:
            # The engine took the pair: the id we refuse for, in a prompt, kills it.
            first = int(re.search(r"token (\d+)", str(ours)).group(1))
            try:
                headless.request(server.base_url, server.api_key, "/completion",
                                 {"prompt": [1, first, 300, 400], "n_predict": 4}, 30)
            except OSError:
                died = True
            server.process.wait(10)
        else:
            server.complete("Hello", n_predict=2)
    finally:
        server.stop()
    log = server.log_text()
    assert (crash.VOCAB_MISMATCH in log) == pair.engine_refuses, log[-3000:]
    if pair.engine_refuses:
        assert re.search(ENGINE_SAYS[ours.condition], log), log[-3000:]
    if not ours.ok and not pair.engine_refuses:
        assert died and "get_sub_batch: failed to add token" in log, log[-3000:]
    if ours.ok:
        assert "get_sub_batch" not in log
