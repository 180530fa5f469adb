"""Tiny multimodal projector (mmproj) files the pinned engine loads with `--mmproj`.

A Gemma 3 vision projector (clip.projector_type "gemma3", tools/mtmd/clip.cpp: the SigLIP
encoder of clip_graph_siglip, then an average pool, the soft-embedding norm and
mm.input_projection) of a few blocks of width 64, its output width (`projection_dim`) set
to the text model's embedding length, as mtmd requires. Weights are zeros: the encoder
runs (the engine's warm-up encodes a blank image) and nothing it says matters here.
"""

from __future__ import annotations

from pathlib import Path


def write_gemma3_projector(path: Path, projection_dim: int, *, n_embd: int = 64, n_layer: int = 2,
                           n_ff: int = 128, n_head: int = 2, image_size: int = 64, patch_size: int = 8,
                           dtype: str = "F16") -> Path:  # fmt: skip
    """Write the projector; `projection_dim` is the text model's n_embd (mtmd checks it)."""
    import gguf
    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    w = gguf.GGUFWriter(path, "clip")
    w.add_name("tiny-gemma3-mmproj")
    w.add_file_type(1 if dtype == "F16" else 0)
    w.add_bool("clip.has_vision_encoder", True)
    w.add_string("clip.projector_type", "gemma3")
    w.add_bool("clip.use_gelu", True)
    for key, value in (("embedding_length", n_embd), ("feed_forward_length", n_ff), ("block_count", n_layer),
                       ("projection_dim", projection_dim), ("attention.head_count", n_head),
                       ("image_size", image_size), ("patch_size", patch_size)):
        w.add_uint32(f"clip.vision.{key}", value)
    w.add_float32("clip.vision.attention.layer_norm_epsilon", 1e-6)
    w.add_array("clip.vision.image_mean", [0.5, 0.5, 0.5])
    w.add_array("clip.vision.image_std", [0.5, 0.5, 0.5])
    mat = np.float16 if dtype == "F16" else np.float32
    n_pos = (image_size // patch_size) ** 2

    def t(name: str, *shape: int, matrix: bool = True) -> None:
        # numpy shapes (outermost first); 1-D tensors (norms, biases) stay f32
        w.add_tensor(name, np.zeros(shape, dtype=mat if matrix and len(shape) > 1 else np.float32))

    t("v.patch_embd.weight", n_embd, 3, patch_size, patch_size)
    t("v.patch_embd.bias", n_embd)
    # f32 like the converter's: the CPU backend cannot add an f16 position table to the f32
    # patch embeddings (ggml-cpu binary_op aborts), so an F16 file keeps it f32.
    t("v.position_embd.weight", n_pos, n_embd, matrix=False)
    for il in range(n_layer):
        p = f"v.blk.{il}."
        for name in ("attn_q", "attn_k", "attn_v", "attn_out"):
            t(p + name + ".weight", n_embd, n_embd)
            t(p + name + ".bias", n_embd)
        for name in ("ln1", "ln2"):
            t(p + name + ".weight", n_embd)
            t(p + name + ".bias", n_embd)
        t(p + "ffn_up.weight", n_ff, n_embd)
        t(p + "ffn_up.bias", n_ff)
        t(p + "ffn_down.weight", n_embd, n_ff)
        t(p + "ffn_down.bias", n_embd)
    t("v.post_ln.weight", n_embd)
    t("v.post_ln.bias", n_embd)
    t("mm.input_projection.weight", n_embd, projection_dim)
    t("mm.soft_emb_norm.weight", n_embd)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
