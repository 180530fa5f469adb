"""The corpus of real geometries (app/draftwise/testing/corpus) without the engine: the sparse
writer's layout, the converter's type rule, llama-quantize's order, the token lists, the
registry. The engine's judgement is tests/test_real_geometry_engine.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from draftwise.core.gguf import reader
from draftwise.testing.corpus import build, quantize, registry, sparse, vocab
from draftwise.testing.corpus.spec import BF16, Tensor, Vocab, u32

CONTROL, UNUSED = 3, 5


def test_the_corpus_covers_the_families_people_run():
    models = registry.all_models()
    names = {m.name for m in models}
    assert len(models) >= 40
    for want in ("Llama-3.1-8B-Instruct", "Llama-3.1-70B-Instruct", "Llama-3.2-1B-Instruct", "Llama-3.2-3B-Instruct",
                 *(f"Qwen2.5-{s}-Instruct" for s in ("0.5B", "1.5B", "3B", "7B", "14B", "32B", "72B")),
                 "Qwen3-0.6B", "Qwen3-4B", "Qwen3-8B", "Qwen3-32B", "Qwen3-30B-A3B", "Qwen3-235B-A22B",
                 "Qwen3-Next-80B-A3B-Instruct", "Qwen3.5-35B-A3B", "Qwen3.6-35B-A3B", "gpt-oss-20b", "gpt-oss-120b",
                 "gemma-2-2b-it", "gemma-2-9b-it", "gemma-3-270m-it", "gemma-3-1b-it", "gemma-3-4b-it",
                 "gemma-3-12b-it", "gemma-3-27b-it", "gemma-3n-E4B-it", "gemma-4-26B-A4B-it",
                 "gemma-4-26B-A4B-it-assistant", "Phi-3-mini-4k-instruct", "phi-4", "Mistral-7B-Instruct-v0.3",
                 "Mistral-Nemo-Instruct-2407", "Mixtral-8x7B-Instruct-v0.1", "DeepSeek-V2-Lite-Chat", "DeepSeek-V3",
                 "GLM-4.5-Air", "granite-4.0-h-tiny", "LFM2-1.2B", "SmolLM2-135M-Instruct", "SmolLM3-3B"):  # fmt: skip
        assert want in names
    for m in models:
        assert m.repo.count("/") == 1 and m.tensors and m.kv[0] == ("general.architecture", m.arch)
        assert len({t.name for t in m.tensors}) == len(m.tensors), m.name
    with pytest.raises(KeyError, match="no corpus model"):
        registry.get("not-a-model")


def test_a_changed_spec_gets_another_file(pinned_source):
    from dataclasses import replace

    spec = registry.get("SmolLM2-135M-Instruct")
    other = replace(spec, kv=(*spec.kv[:-1], (spec.kv[-1][0], u32(99))))
    assert build.path_for(spec, pinned_source) != build.path_for(other, pinned_source)
    assert build.path_for(spec, pinned_source) == build.path_for(registry.get(spec.name), pinned_source)


def test_the_converters_type_rule():
    t = build.converter_type
    assert t(Tensor("blk.0.attn_q.weight", (64, 64)), BF16) == BF16
    assert t(Tensor("blk.0.attn_norm.weight", (64,)), BF16) == "F32"  # 1-D
    assert t(Tensor("blk.0.ssm_norm.weight", (64, 1)), BF16) == "F32"  # a norm, 2-D
    assert t(Tensor("blk.0.attn_q.bias", (64, 2)), BF16) == "F32"  # not .weight
    assert t(Tensor("blk.0.ssm_a", (1, 8)), BF16) == "F32"
    assert t(Tensor("blk.0.ffn_gate_inp.weight", (64, 8)), BF16) == "F32"  # the router
    assert t(Tensor("blk.0.ssm_conv1d.weight", (4, 64)), BF16) == "F32"
    assert t(Tensor("blk.0.ffn_up_exps.weight", (64, 64, 8), "MXFP4"), BF16) == "MXFP4"


def test_llama_quantize_order_is_by_block_then_name():
    names = ["token_embd.weight", "blk.10.attn_q.weight", "blk.2.ffn_up.weight", "output.weight", "blk.2.attn_k.weight",
             "output_norm.weight"]  # fmt: skip
    assert build.weights_map_order(names) == ["output.weight", "output_norm.weight", "token_embd.weight",
                                              "blk.2.attn_k.weight", "blk.2.ffn_up.weight", "blk.10.attn_q.weight"]  # fmt: skip


def test_the_dry_run_is_parsed_per_tensor():
    out = """
[   1/ 147]                        output.weight - [ 2048, 128256,     1,     1], type =   bf16, size =  501.000 MiB ->   205.49 MiB (q6_K)
[   2/ 147]                   output_norm.weight - [ 2048,      1,     1,     1], type =    f32, size =    0.008 MiB
[ 146/ 147] blk.15.ffn_up_exps.weight            - [  2880,   2880,     32,      1], type =  mxfp4, size =   134.58 MiB
llama_model_quantize_impl: model size  =  2357.26 MiB (16.00 BPW)
"""  # noqa: E501
    assert quantize.parse_dry_run(out) == {"output.weight": "Q6_K", "output_norm.weight": "F32",
                                           "blk.15.ffn_up_exps.weight": "MXFP4"}  # fmt: skip


def test_a_sparse_file_is_a_hole_the_reader_sees_whole(tmp_path: Path):
    tensors = [("token_embd.weight", (256, 1000), "Q4_K"), ("blk.0.attn_norm.weight", (256,), "F32"),
               ("blk.0.ffn_up_exps.weight", (256, 512, 8), "MXFP4")]  # fmt: skip
    kv = [("general.architecture", "llama"), ("llama.block_count", u32(1)), ("tokenizer.ggml.tokens", sparse.Typed(["a", "\u0120b"], "str"))]
    path = sparse.write_sparse(tmp_path / "m.gguf", kv, tensors)
    h = reader.read_header(path)
    sizes = [sparse.nbytes(ne, ty) for _, ne, ty in tensors]
    assert [t.nbytes for t in h.tensors] == sizes
    assert [t.offset % 32 for t in h.tensors] == [0, 0, 0] and h.data_offset % 32 == 0
    assert h.file_size == path.stat().st_size == h.data_offset + sum(n + (-n % 32) for n in sizes)
    # The data was never written: the file takes a few blocks, not its size.
    assert os.stat(path).st_blocks * 512 < 64 * 1024 < path.stat().st_size
    assert dict(sparse.read_kv(path))["tokenizer.ggml.tokens"].value == ["a", "\u0120b"]
    with pytest.raises(ValueError, match="not a whole number"):
        sparse.nbytes((100, 2), "Q4_K")


def test_real_token_lists_with_the_converters_padding(pinned_source):
    # Qwen2.5 7B: the Qwen list, its specials at their ids, [PADn] UNUSED up to 152,064.
    from draftwise.testing.corpus.families import qwen

    kv = dict(vocab.tokenizer_kv(qwen.qwen25_vocab(152064), pinned_source))
    tokens, types = kv["tokenizer.ggml.tokens"].value, kv["tokenizer.ggml.token_type"].value
    assert len(tokens) == len(types) == 152064
    assert (tokens[151645], types[151645]) == ("<|im_end|>", CONTROL)
    assert tokens[151657] == "<tool_call>" and tokens[151664] == "<|file_sep|>"
    assert all(tokens[i] == f"[PAD{i}]" and types[i] == UNUSED for i in range(151665, 152064))
    assert kv["tokenizer.ggml.eos_token_id"].value == 151645 and kv["tokenizer.ggml.add_bos_token"] is False
    assert "tokenizer.chat_template" not in kv
    assert kv["tokenizer.ggml.merges"].value  # copied from the real file
    assert len(set(tokens)) == len(tokens)


def test_a_synthesized_list_has_the_size_types_and_special_ids(pinned_source):
    from draftwise.testing.corpus.families import gpt_oss

    kv = dict(vocab.tokenizer_kv(gpt_oss.HARMONY_VOCAB, pinned_source))
    tokens, types = kv["tokenizer.ggml.tokens"].value, kv["tokenizer.ggml.token_type"].value
    assert len(tokens) == 201088 and len(set(tokens)) == len(tokens)
    assert tokens[200002] == "<|return|>" and set(types[199998:]) == {CONTROL} and set(types[:199998]) == {1}
    assert kv["tokenizer.ggml.pre"] == "gpt-4o" and kv["tokenizer.ggml.bos_token_id"].value == 199998


def test_gemma3_4b_has_the_image_token_and_63_pads(pinned_source):
    v = Vocab("gemma3-270m", 262208, specials=((262144, "<image_soft_token>", CONTROL),))
    try:
        kv = dict(vocab.tokenizer_kv(v, pinned_source))
    except RuntimeError as exc:  # the real 270M could not be downloaded
        pytest.skip(str(exc))
    tokens, types = kv["tokenizer.ggml.tokens"].value, kv["tokenizer.ggml.token_type"].value
    scores = kv["tokenizer.ggml.scores"].value
    assert (tokens[262144], types[262144], scores[262144]) == ("<image_soft_token>", CONTROL, -1000.0)
    assert [(tokens[i], types[i]) for i in (262145, 262207)] == [("[PAD262145]", UNUSED), ("[PAD262207]", UNUSED)]
    assert sum(1 for t in types[262145:] if t == UNUSED) == 63


@pytest.mark.engine
def test_the_270m_tensor_table_is_the_real_files(engine, pinned_source):
    """The pipeline checked against a real download: the sparse Gemma 3 270M (the converter's
    types, then the pinned llama-quantize's dry run and order) has the real Q4_K_M file's
    table: the same tensors in the same order, shapes, types, sizes, data offset and file
    size."""
    from draftwise.testing import realmodels

    try:
        real = reader.read_header(realmodels.gemma3_270m())
    except RuntimeError as exc:
        pytest.skip(str(exc))
    mine = reader.read_header(build.generate(registry.get("gemma-3-270m-it"), pinned=pinned_source))
    assert [(t.name, t.shape, t.type_name, t.nbytes) for t in mine.tensors] == \
        [(t.name, t.shape, t.type_name, t.nbytes) for t in real.tensors]  # fmt: skip
    assert (mine.data_offset, mine.file_size) == (real.data_offset, real.file_size)


def test_every_spec_says_where_its_published_size_comes_from():
    for m in registry.all_models():
        assert m.published_source, m.name
        assert (m.published_size is None) == m.published_source.startswith("not sourced"), m.name


def test_the_sparse_files_have_the_published_sizes(pinned_source):
    """The corpus's weights checked against the world: each sparse file is the published
    GGUF's size within 0.5 % (plus the precision of the published figure), where a size is
    sourced (corpus/published.py)."""
    sourced = [m for m in registry.all_models() if m.published_size is not None]
    assert sourced
    for m in sourced:
        size = build.generate(m, pinned=pinned_source).stat().st_size
        allowed = 0.005 * m.published_size + m.published_precision
        assert abs(size - m.published_size) <= allowed, (
            f"{m.name}: the sparse file has {size:,} bytes, the published one {m.published_size:,} "
            f"({(size - m.published_size) / m.published_size:+.2%}; {m.published_source})")
