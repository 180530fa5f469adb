"""Sparse GGUF files of real models' geometries, for checking the memory plan on the engine.

A sparse file has the exact metadata and tensor table of a published model (the shapes and
ggml types the pinned converter and llama-quantize write), but its data section is a file
hole: the file is as long as the real one and takes no disk. Started with `-nr --no-warmup`
(`ENGINE_ARGS`) the engine maps it, prints every buffer it allocates, and never needs the
weights' values (a request would compute on zeros). The token list is synthetic but of the
real length, so the embedding, the head and the logits are real-sized.

These are the planner helper's own geometries (issue 18, item 5); the corpus package
(draftwise/testing/corpus) is the shared, larger set. Nothing here is committed as a file:
each is written into the cache on demand.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The engine flags that keep the hole unread: no re-laid CPU copies (they read the weights
# while loading) and no warm-up decode.
ENGINE_ARGS = ("-nr", "--no-warmup")

# ggml type name -> (elements per block, bytes per block): the types these tables use.
_TYPES: dict[str, tuple[int, int]] = {
    "F32": (1, 4), "F16": (1, 2), "BF16": (1, 2), "Q8_0": (32, 34), "Q4_0": (32, 18),
    "Q5_0": (32, 22), "Q4_K": (256, 144), "Q5_K": (256, 176), "Q6_K": (256, 210),
    "MXFP4": (32, 17),
}  # fmt: skip


@dataclass(frozen=True)
class Tensor:
    name: str
    ne: tuple[int, ...]  # ggml order: ne[0] is the row length
    type_name: str = "F32"

    @property
    def nbytes(self) -> int:
        block, size = _TYPES[self.type_name]
        n = 1
        for d in self.ne:
            n *= d
        if n % block:
            raise ValueError(f"{self.name}: {self.ne} is not a whole number of {self.type_name} blocks")
        return n // block * size


@dataclass(frozen=True)
class Geometry:
    """One published model as its header describes it."""

    name: str
    arch: str
    kv: dict[str, Any]  # metadata without the tokenizer (keys without the arch prefix get it)
    tensors: tuple[Tensor, ...]
    n_vocab: int
    source: str = ""  # where the config values come from
    file_type: int = 15  # llama_ftype (15 = Q4_K_M)
    extra: dict[str, Any] = field(default_factory=dict)


def write_sparse(path: Path, g: Geometry) -> Path:
    """Write `g` to `path`: header, metadata and tensor table, then a hole to the end."""
    import gguf
    import numpy as np

    from draftwise.testing.tinymodels import _add_value
    from draftwise.testing.tinyspec import TinyModel, vocabulary

    path.parent.mkdir(parents=True, exist_ok=True)
    w = gguf.GGUFWriter(path, g.arch)
    w.add_name(g.name)
    w.add_file_type(g.file_type)
    for key, value in g.kv.items():
        _add_value(w, key if "." in key and key.split(".", 1)[0] in (g.arch, "general", "tokenizer")
                   else f"{g.arch}.{key}", value)  # fmt: skip
    # A synthetic SentencePiece vocabulary of the real size (3 specials, 256 bytes, pieces).
    tokens, scores, types = vocabulary(TinyModel(vocab=g.name, n_pieces=g.n_vocab - 259))
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    for t in g.tensors:
        qtype = getattr(gguf.GGMLQuantizationType, t.type_name)
        # numpy order (outermost first); a float32 dtype keeps the element shape as given.
        w.add_tensor_info(t.name, tuple(reversed(t.ne)), np.dtype(np.float32), t.nbytes, raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    assert w.fout is not None
    fout = w.fout[0]
    start = fout.tell()
    start += -start % w.data_alignment
    end = start + sum(t.nbytes + (-t.nbytes % w.data_alignment) for t in g.tensors)
    w.close()
    os.truncate(path, end)  # the data section: a hole, read as zeros
    return path


def cached(g: Geometry, folder: Path | None = None) -> Path:
    """`g` written once into the cache (or `folder`)."""
    from draftwise.core import paths

    folder = folder or paths.cache_dir() / "geometries"
    path = folder / f"{g.name}.gguf"
    if not path.is_file():
        tmp = path.with_suffix(".part")
        write_sparse(tmp, g)
        tmp.replace(path)
    return path


# ------------------------------------------------------------------ building blocks
def _norm(name: str, n: int) -> Tensor:
    return Tensor(name, (n,))


def _blocks(n_layer: int, per_layer: Iterable[tuple[str, tuple[int, ...], str]]) -> list[Tensor]:
    spec = list(per_layer)
    return [Tensor(f"blk.{i}.{name}", ne, ty) for i in range(n_layer) for name, ne, ty in spec]


def _head(n_embd: int, n_vocab: int, embd_type: str, out_type: str | None) -> list[Tensor]:
    out = [Tensor("token_embd.weight", (n_embd, n_vocab), embd_type), _norm("output_norm.weight", n_embd)]
    if out_type is not None:
        out.append(Tensor("output.weight", (n_embd, n_vocab), out_type))
    return out


# ------------------------------------------------------------------ published models
def qwen3moe(name: str, *, n_embd: int, n_layer: int, n_head: int, n_head_kv: int, head_dim: int,
             n_expert: int, n_expert_used: int, n_ff_exp: int, n_vocab: int, n_ctx_train: int = 40960,
             n_ff: int = 0, source: str = "") -> Geometry:  # fmt: skip
    """A qwen3moe file of any geometry, with the tensor table convert_hf_to_gguf.py writes
    (Qwen3MoeModel) in Q4_K_M's types: Q4_K matrices, Q6_K for attn_v / ffn_down / the head
    (llama-quantize's Q4_K_M choice on alternate layers simplified to all of them; the
    compute buffer does not depend on the types)."""
    e, heads, kv, hd, n_exp, ff = n_embd, n_head, n_head_kv, head_dim, n_expert, n_ff_exp
    per = [
        ("attn_norm.weight", (e,), "F32"),
        ("attn_q.weight", (e, heads * hd), "Q4_K"),
        ("attn_k.weight", (e, kv * hd), "Q4_K"),
        ("attn_v.weight", (e, kv * hd), "Q6_K"),
        ("attn_output.weight", (heads * hd, e), "Q4_K"),
        ("attn_q_norm.weight", (hd,), "F32"),
        ("attn_k_norm.weight", (hd,), "F32"),
        ("ffn_norm.weight", (e,), "F32"),
        ("ffn_gate_inp.weight", (e, n_exp), "F32"),
        ("ffn_gate_exps.weight", (e, ff, n_exp), "Q4_K"),
        ("ffn_up_exps.weight", (e, ff, n_exp), "Q4_K"),
        ("ffn_down_exps.weight", (ff, e, n_exp), "Q6_K"),
    ]
    kvs = {
        "context_length": n_ctx_train, "embedding_length": e, "feed_forward_length": n_ff or 3 * ff * 8 // 3,
        "block_count": n_layer, "attention.head_count": heads, "attention.head_count_kv": kv,
        "attention.key_length": hd, "attention.value_length": hd, "rope.freq_base": 1000000.0,
        "attention.layer_norm_rms_epsilon": 1e-6, "expert_count": n_exp, "expert_used_count": n_expert_used,
        "expert_feed_forward_length": ff,
    }  # fmt: skip
    tensors = _head(e, n_vocab, "Q4_K", "Q6_K") + _blocks(n_layer, per)
    return Geometry(name, "qwen3moe", kvs, tuple(tensors), n_vocab, source=source)


def qwen3_30b_a3b(n_layer: int = 48) -> Geometry:
    """Qwen3-30B-A3B (Qwen/Qwen3-30B-A3B config.json: hidden_size 2048, 48 layers, 32 heads,
    4 KV heads, head_dim 128, 128 experts, 8 used, moe_intermediate_size 768,
    intermediate_size 6144, max_position_embeddings 40960, vocab_size 151936). `n_layer`
    below 48 keeps every block's geometry with fewer blocks (quicker to map)."""
    name = "qwen3-30b-a3b-Q4_K_M" if n_layer == 48 else f"qwen3-30b-a3b-{n_layer}L-Q4_K_M"
    return qwen3moe(name, n_embd=2048, n_layer=n_layer, n_head=32, n_head_kv=4, head_dim=128, n_expert=128,
                    n_expert_used=8, n_ff_exp=768, n_vocab=151936, n_ff=6144,
                    source="Qwen/Qwen3-30B-A3B config.json")


def moe_grid(n_embd: int, ff: int, used: int) -> Geometry:
    """A small qwen3moe of any expert geometry (2 blocks, 16 heads x 128, 4 KV heads, 16
    experts of width `ff`, `used` of them, a vocabulary of 4096): the grid the MoE compute
    buffer's fit is held to (tests/test_planner_real.py)."""
    return qwen3moe(f"qwen3moe-grid-e{n_embd}-ff{ff}-u{used}", n_embd=n_embd, n_layer=2, n_head=16, n_head_kv=4,
                    head_dim=128, n_expert=16, n_expert_used=used, n_ff_exp=ff, n_vocab=4096,
                    source="a grid of expert geometries, not a published model")


def dense(arch: str, *, n_embd: int, q: int, kv: int, ff: int, n_layer: int, n_vocab: int = 4096) -> Geometry:
    """A small dense `qwen3`, `llama` or `gemma3` file of any attention and FFN widths: query
    `q` wide, K and V `kv` wide each, heads of 128 (gemma3: 256, a 512-token sliding window on
    the engine's own pattern of five sliding blocks to one full), a vocabulary of `n_vocab`.
    The tensors are the ones `src/models/<arch>.cpp` loads (qwen3 and gemma3 per-head Q/K
    norms, gemma3's post-attention and post-FFN norms and tied head); the grid the Vulkan
    compute buffer's replay is held to (tests/test_vulkan_compute.py)."""
    gemma = arch == "gemma3"
    hd = 256 if gemma else 128
    e = n_embd
    per = [("attn_norm.weight", (e,), "F32"), ("attn_q.weight", (e, q), "Q4_K"), ("attn_k.weight", (e, kv), "Q4_K"),
           ("attn_v.weight", (e, kv), "Q6_K"), ("attn_output.weight", (q, e), "Q4_K")]  # fmt: skip
    if arch != "llama":
        per += [("attn_q_norm.weight", (hd,), "F32"), ("attn_k_norm.weight", (hd,), "F32")]
    per += [("ffn_norm.weight", (e,), "F32"), ("ffn_gate.weight", (e, ff), "Q4_K"), ("ffn_up.weight", (e, ff), "Q4_K"),
            ("ffn_down.weight", (ff, e), "Q6_K")]  # fmt: skip
    if gemma:
        per += [("post_attention_norm.weight", (e,), "F32"), ("post_ffw_norm.weight", (e,), "F32")]
    kvs: dict[str, Any] = {
        "context_length": 40960, "embedding_length": e, "feed_forward_length": ff, "block_count": n_layer,
        "attention.head_count": q // hd, "attention.head_count_kv": kv // hd, "attention.key_length": hd,
        "attention.value_length": hd, "rope.dimension_count": hd, "rope.freq_base": 1000000.0,
        "attention.layer_norm_rms_epsilon": 1e-6,
    }  # fmt: skip
    if gemma:
        kvs |= {"attention.sliding_window": 512, "rope.freq_base_swa": 10000.0}
    tensors = _head(e, n_vocab, "Q4_K", None if gemma else "Q6_K") + _blocks(n_layer, per)
    return Geometry(f"{arch}-e{e}-q{q}-kv{kv}-ff{ff}-{n_layer}L", arch, kvs, tuple(tensors), n_vocab,
                    source="a grid of attention and FFN widths, not a published model")


def gpt_oss_20b(n_layer: int = 24) -> Geometry:
    """gpt-oss-20b (openai/gpt-oss-20b config.json: hidden_size 2880, 24 layers, 64 heads,
    8 KV heads, head_dim 64, 32 experts, 4 used, intermediate_size 2880, sliding_window 128,
    layer_types alternating sliding/full from a sliding layer 0, rope_theta 150000, YaRN
    factor 32 over 4096, vocab 201088). MXFP4 experts as the converter writes them; F16
    attention and a Q8_0 embedding and head stand in for the published file's types (the
    caches and compute do not depend on them). `n_layer` below 24 keeps the alternation
    with fewer blocks."""
    e, heads, kv, hd, n_exp, ff = 2880, 64, 8, 64, 32, 2880
    per = [
        ("attn_norm.weight", (e,), "F32"),
        ("attn_q.weight", (e, heads * hd), "F16"),
        ("attn_q.bias", (heads * hd,), "F32"),
        ("attn_k.weight", (e, kv * hd), "F16"),
        ("attn_k.bias", (kv * hd,), "F32"),
        ("attn_v.weight", (e, kv * hd), "F16"),
        ("attn_v.bias", (kv * hd,), "F32"),
        ("attn_output.weight", (heads * hd, e), "F16"),
        ("attn_output.bias", (e,), "F32"),
        ("attn_sinks.weight", (heads,), "F32"),
        ("post_attention_norm.weight", (e,), "F32"),
        ("ffn_gate_inp.weight", (e, n_exp), "F32"),
        ("ffn_gate_inp.bias", (n_exp,), "F32"),
        ("ffn_gate_exps.weight", (e, ff, n_exp), "MXFP4"),
        ("ffn_gate_exps.bias", (ff, n_exp), "F32"),
        ("ffn_up_exps.weight", (e, ff, n_exp), "MXFP4"),
        ("ffn_up_exps.bias", (ff, n_exp), "F32"),
        ("ffn_down_exps.weight", (ff, e, n_exp), "MXFP4"),
        ("ffn_down_exps.bias", (e, n_exp), "F32"),
    ]
    vocab = 201088
    kvs = {
        "context_length": 131072, "embedding_length": e, "feed_forward_length": ff,
        "block_count": n_layer, "attention.head_count": heads, "attention.head_count_kv": kv,
        "attention.key_length": hd, "attention.value_length": hd, "rope.freq_base": 150000.0,
        "rope.dimension_count": hd, "attention.layer_norm_rms_epsilon": 1e-5,
        "expert_count": n_exp, "expert_used_count": 4, "expert_feed_forward_length": ff,
        "attention.sliding_window": 128, "rope.scaling.type": "yarn", "rope.scaling.factor": 32.0,
        "rope.scaling.original_context_length": 4096,
    }  # fmt: skip
    tensors = _head(e, vocab, "Q8_0", "Q8_0") + _blocks(n_layer, per)
    name = "gpt-oss-20b-MXFP4" if n_layer == 24 else f"gpt-oss-20b-{n_layer}L-MXFP4"
    return Geometry(name, "gpt-oss", kvs, tuple(tensors), vocab, file_type=38,
                    source="openai/gpt-oss-20b config.json")


def deepseek32_small(n_layer: int = 4, n_head: int = 128) -> Geometry:
    """DeepSeek-V3.2's attention geometry (deepseek-ai/DeepSeek-V3.2-Exp config.json:
    hidden 7168, 128 heads, q_lora_rank 1536, kv_lora_rank 512, qk_rope_head_dim 64,
    qk_nope_head_dim 128, v_head_dim 128, index_n_heads 64, index_head_dim 128,
    index_topk 2048) on `n_layer` dense blocks with a small FFN and vocabulary: the KV and
    indexer caches per layer are the real ones; the rest is kept small to start fast."""
    e, heads, q_lora, kv_lora, rope, nope, vhd = 7168, n_head, 1536, 512, 64, 128, 128
    idx_heads, idx_hd, ff, vocab = 64, 128, 1024, 4096
    per = [
        ("attn_norm.weight", (e,), "F32"),
        ("attn_q_a.weight", (e, q_lora), "Q8_0"),
        ("attn_q_a_norm.weight", (q_lora,), "F32"),
        ("attn_q_b.weight", (q_lora, heads * (nope + rope)), "Q8_0"),
        ("attn_kv_a_mqa.weight", (e, kv_lora + rope), "Q8_0"),
        ("attn_kv_a_norm.weight", (kv_lora,), "F32"),
        ("attn_k_b.weight", (nope, kv_lora, heads), "Q8_0"),
        ("attn_v_b.weight", (kv_lora, vhd, heads), "Q8_0"),
        ("attn_output.weight", (heads * vhd, e), "Q8_0"),
        ("indexer.k_norm.weight", (idx_hd,), "F32"),
        ("indexer.k_norm.bias", (idx_hd,), "F32"),
        ("indexer.proj.weight", (e, idx_heads), "F32"),
        ("indexer.attn_k.weight", (e, idx_hd), "Q8_0"),
        ("indexer.attn_q_b.weight", (q_lora, idx_heads * idx_hd), "Q8_0"),
        ("ffn_norm.weight", (e,), "F32"),
        ("ffn_gate.weight", (e, ff), "Q8_0"),
        ("ffn_up.weight", (e, ff), "Q8_0"),
        ("ffn_down.weight", (ff, e), "Q8_0"),
    ]
    kvs = {
        "context_length": 163840, "embedding_length": e, "feed_forward_length": ff,
        "block_count": n_layer, "attention.head_count": heads, "attention.head_count_kv": 1,
        "attention.key_length": kv_lora + rope, "attention.value_length": kv_lora,
        "attention.key_length_mla": nope + rope, "attention.value_length_mla": vhd,
        "attention.q_lora_rank": q_lora, "attention.kv_lora_rank": kv_lora,
        "rope.dimension_count": rope, "rope.freq_base": 10000.0,
        "attention.layer_norm_rms_epsilon": 1e-6, "leading_dense_block_count": n_layer,
        "expert_count": 256, "expert_used_count": 8, "expert_shared_count": 1,
        "expert_feed_forward_length": 2048, "expert_weights_scale": 2.5, "expert_weights_norm": True,
        "expert_gating_func": 2, "attention.indexer.head_count": idx_heads,
        "attention.indexer.key_length": idx_hd, "attention.indexer.top_k": 2048,
    }  # fmt: skip
    tensors = _head(e, vocab, "Q8_0", "Q8_0") + _blocks(n_layer, per)
    name = f"deepseek32-attn-{n_layer}L" + ("" if n_head == 128 else f"-{n_head}h")
    return Geometry(name, "deepseek32", kvs, tuple(tensors), vocab,
                    file_type=7, source="deepseek-ai/DeepSeek-V3.2-Exp config.json (attention, indexer)")


def all_geometries() -> Sequence[Geometry]:
    return (qwen3_30b_a3b(), gpt_oss_20b(), deepseek32_small())
