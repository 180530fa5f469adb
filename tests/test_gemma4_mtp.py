"""Gemma 4 with its MTP assistant (a `gemma4-assistant` file beside it), and the MTP heads the
engine cannot run: detected, paired, planned (the assistant shares the model's KV cache) and
launched with `--spec-type draft-mtp --spec-draft-model FILE` on the real engine."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from tests.conftest import TEST_MACHINE

from draftwise.core.engines.capabilities import MTP_ONE_NEXTN_11434, pinned_caps
from draftwise.core.gguf import reader as gguf
from draftwise.core.launch import headless, prepare
from draftwise.core.measuring import quick
from draftwise.core.planning import logparse, planner
from draftwise.core.speculation import draft_check
from draftwise.core.speculation import resolver as rs
from draftwise.testing import realvocab as rv
from draftwise.testing import tinyarchs as ta
from draftwise.testing import tinymodels as tm

CAPS = pinned_caps()
MODEL, ASSISTANT = "gemma-4-E2B-it-Q4_K_M.gguf", "gemma-4-E2B-it-assistant-Q8_0.gguf"


@pytest.fixture(scope="module")
def pair_files() -> tuple[Path, Path]:
    """A tiny Gemma 4 and its assistant with Gemma 4's real token list (262,144 ids)."""
    target = ta.gemma4_model(dtype="F16")
    assistant = ta.gemma4_assistant(target)
    try:
        source = rv.source_folder() / "models" / "ggml-vocab-gemma-4.gguf"
        key = rv.identity(source)
        t = rv.cached(MODEL, f"gemma4|{target}|{key}",
                      lambda p: rv.write(p, target, rv.from_source("gemma-4"), ta.TENSOR_SETS["gemma4"]))
        a = rv.cached(ASSISTANT, f"gemma4-assistant|{assistant}|{key}",
                      lambda p: rv.write(p, assistant, rv.from_source("gemma-4"), ta.TENSOR_SETS["gemma4-assistant"]))
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    return t, a


@pytest.fixture
def folder(tmp_path: Path, pair_files) -> Path:
    (tmp_path / MODEL).symlink_to(pair_files[0])
    (tmp_path / ASSISTANT).symlink_to(pair_files[1])
    return tmp_path


def test_the_assistant_is_known_by_its_architecture_and_tensors(folder):
    info = gguf.read_model(folder / ASSISTANT)
    assert (info.architecture, info.sidecar_kind, info.mtp_layout) == ("gemma4-assistant", "assistant", "mtp-only")
    assert info.mtp_head_present and info.embedding_length_out == 64 and info.nextn_predict_layers == 2
    assert draft_check.draft_type(info) == "draft-mtp"
    with pytest.raises(prepare.PrepareError, match="is a drafter"):
        prepare.read_model(folder / ASSISTANT)


def test_auto_picks_the_assistant_with_draft_mtp_and_the_file(folder):
    p = prepare.prepare(prepare.Request(model=folder / MODEL), CAPS, TEST_MACHINE)
    d = p.spec
    assert (d.spec_type, d.source, d.draft) == ("draft-mtp", rs.AUTO_COMPANION, folder / ASSISTANT)
    assert "MTP assistant found beside the model" in str(d.notes[0])
    argv = p.argv("llama-server")
    i = argv.index("--spec-type")
    assert argv[i : i + 4] == ["--spec-type", "draft-mtp", "--spec-draft-model", str(folder / ASSISTANT)]
    assert argv[argv.index("-np") + 1] == "1"


def test_the_plan_counts_the_assistant_weights_and_no_kv_of_its_own(folder):
    from draftwise.core.planning import (
        gemma4_assistant_graph,
        kv_cache,
        model_shape,
        mtp_head,
        weight_table,
    )

    model, assistant = gguf.read_model(folder / MODEL), gguf.read_model(folder / ASSISTANT)
    spec = rs.resolve(model, rs.SpecOptions(), CAPS)
    plan = planner.plan(model, spec, TEST_MACHINE, planner.PlanPrefs(ctx=4096), assistant)
    assert str(plan.drafter) == "MTP head" and plan.slots == 1
    weights = weight_table.read_weight_table(assistant).total()
    c = kv_cache.cells(plan.ctx, plan.slots, model.sliding_window or 0)
    ctx = mtp_head.mtp_context(model_shape.read_shape(assistant), c, plan.kv_type)
    # The drafter is its weights and its compute (its graph replayed); the KV it reads is
    # the model's own.
    assert ctx.kv > 0  # what a cache of its own would have cost
    dims = gemma4_assistant_graph.read_dims(assistant)
    assert dims is not None
    kv = (plan.kv_type, plan.kv_type)
    compute = gemma4_assistant_graph.compute_bytes(dims, c.ubatch, c.per_stream, c.swa_per_stream, c.n_seq, kv)
    assert plan.bytes.drafter == weights + compute + ctx.output


@pytest.mark.parametrize("change, reason", [
    (dict(extra_kv={"gemma4-assistant.embedding_length_out": 96}), "made for a model 96 wide, and this one is 64"),
])
def test_an_assistant_for_another_width_is_refused(tmp_path, pair_files, change, reason):
    target = gguf.read_model(pair_files[0])
    other = ta.gemma4_assistant(ta.gemma4_model(dtype="F16"), **change)
    path = rv.write(tmp_path / ASSISTANT, other, rv.from_source("gemma-4"), ta.TENSOR_SETS["gemma4-assistant"])
    (tmp_path / MODEL).symlink_to(pair_files[0])
    with pytest.raises(rs.ResolveError, match=reason):
        rs.resolve(replace(target, path=tmp_path / MODEL, files=[tmp_path / MODEL]), rs.SpecOptions(draft=path), CAPS)


def test_mtp_lengths_tried_include_1_and_2(folder):
    p = prepare.prepare(prepare.Request(model=folder / MODEL), CAPS, TEST_MACHINE)
    assert quick.candidates(p.spec, quick.MeasureSettings(), ())[:2] == (1, 2)


# ------------------------------------------------------------------ nextn layers the engine asserts on
def test_no_auto_mtp_where_the_engine_asserts_on_the_nextn_count(tmp_path):
    two = tm.write_tiny_model(tmp_path / "glm-two-heads.gguf", tm.mtp_model(n_layer=4, nextn_predict_layers=2))[0]
    one = tm.write_tiny_model(tmp_path / "glm-one-head.gguf", tm.mtp_model())[0]
    assert "glm4moe" in MTP_ONE_NEXTN_11434 and len(MTP_ONE_NEXTN_11434) == 12
    d = rs.resolve(gguf.read_model(two), rs.SpecOptions(), CAPS)
    assert d.spec_type is None and any("MTP head has 2 layers" in str(n) for n in d.notes)
    assert rs.resolve(gguf.read_model(one), rs.SpecOptions(), CAPS).spec_type == "draft-mtp"


def test_the_nextn_rule_reads_the_pinned_sources():
    """12 of the 16 MTP graphs assert a single nextn layer (src/models/*.cpp)."""
    import re

    models = rv.source_folder() / "src" / "models"
    if not models.is_dir():
        pytest.skip("the pinned engine source is not unpacked")
    asserting = set()
    for cpp in models.glob("*.cpp"):
        text = cpp.read_text(encoding="utf-8")
        if re.search(r"GGML_ASSERT\(hparams\.n_layer_nextn == 1", text):
            asserting.add(cpp.stem.replace("glm4-moe", "glm4moe").replace("nemotron-h-moe", "nemotron_h_moe"))
    assert asserting == MTP_ONE_NEXTN_11434


def test_the_assistants_re_laid_copies_are_planned_where_the_cpu_makes_them(folder):
    """Without a GPU the engine offers the assistant's matrices and its duplicated tied head
    to the CPU's extra buffers as it does the model's: on an AMX host the tiny assistant's
    drafter was 42.33 MiB, planned 26.30 before these copies were counted (the engine test
    below, on the sapphirerapids module)."""
    from draftwise.core.planning import cpu_buffers, weight_table

    caps = CAPS
    amx = replace(TEST_MACHINE, cpu_variant="sapphirerapids")
    plain = prepare.prepare(prepare.Request(model=folder / MODEL), caps, TEST_MACHINE).plan
    relaid = prepare.prepare(prepare.Request(model=folder / MODEL), caps, amx).plan
    wt = weight_table.read_weight_table(gguf.read_model(folder / ASSISTANT))
    cw = cpu_buffers.cpu_weights(wt, "sapphirerapids")
    head = cpu_buffers.tied_head_extra(wt, "sapphirerapids")
    copies = sum(cw.extra.values()) + (head[1] if head else 0)
    assert copies > 0
    assert relaid.bytes.drafter - plain.bytes.drafter == copies


# ------------------------------------------------------------------ on the real engine
@pytest.mark.engine
def test_gemma4_drafts_with_its_assistant_on_the_engine(engine, folder, tmp_path):
    from draftwise.core.engines import capabilities
    from draftwise.core.machine import engine_devices

    caps = capabilities.capabilities(engine.binary)
    # Planned for the CPU module this engine loads here: on an AMX or AVX2 host the engine
    # re-lays the assistant's weights into AMX / CPU_REPACK copies, which the plan counts.
    here = replace(TEST_MACHINE, cpu_variant=engine_devices.probe_engine_devices(engine.binary, timeout=60).cpu_variant)
    p = prepare.prepare(prepare.Request(model=folder / MODEL, extra_args=("-t", "1")), caps, here)
    assert p.spec.spec_type == "draft-mtp" and p.spec.draft == folder / ASSISTANT
    spec = p.launch(engine.binary, port=headless_port())
    run = headless.HeadlessLaunch(spec)
    run.start()
    try:
        assert run.wait_ready(90), run.log_text()[-3000:]
        status, raw = headless.request(run.url, spec.api_key, "/completion",
                                       {"prompt": "Hello there", "n_predict": 16, "temperature": 0}, 60)
        timings = json.loads(raw)["timings"]
    finally:
        run.stop()
    log = run.log_text()
    assert status == 200 and timings.get("draft_n", 0) > 0, log[-3000:]
    # The assistant's cache is the model's: each of its layers shares one of the model's.
    assert "sharing with layer 1" in log and "sharing with layer 0" in log
    actual = logparse.parse_log(log)
    drafter = actual.summary()["drafter"]
    assert abs(p.plan.bytes.drafter - drafter) <= 0.05 * drafter + (1 << 20), (p.plan.bytes.drafter, drafter)


@pytest.mark.engine
@pytest.mark.parametrize("spec_type, drafts", [("draft-mtp", True), ("draft-simple", False), (None, False)])
def test_the_engine_drafts_with_an_assistant_only_as_draft_mtp(engine, folder, spec_type, drafts):
    """What the pinned engine needs for a gemma4-assistant file: `--spec-type draft-mtp`. With
    draft-simple it loads the assistant as a plain model and the first request fails (it has no
    hidden state to read: "failed to process speculative batch"); with no type it detects none
    (common_speculative_types_from_gguf looks for blk.N.nextn.eh_proj) and does not speculate."""
    from draftwise.core.engines import capabilities

    caps = capabilities.capabilities(engine.binary)
    p = prepare.prepare(prepare.Request(model=folder / MODEL, extra_args=("-t", "1")), caps, TEST_MACHINE)
    spec = p.launch(engine.binary, port=headless_port())
    argv = list(spec.argv)
    i = argv.index("--spec-type")
    del argv[i : i + 2]
    if spec_type is not None:
        argv[i:i] = ["--spec-type", spec_type]
    run = headless.HeadlessLaunch(replace(spec, argv=tuple(argv)))
    run.start()
    try:
        assert run.wait_ready(90), run.log_text()[-3000:]
        status, raw = headless.request(run.url, spec.api_key, "/completion",
                                       {"prompt": "Hello there", "n_predict": 16, "temperature": 0}, 60)
    finally:
        run.stop()
    log = run.log_text()
    if drafts:
        assert status == 200 and json.loads(raw)["timings"].get("draft_n", 0) > 0, log[-3000:]
    elif spec_type == "draft-simple":
        assert status == 500 and "failed to process speculative batch" in log, (status, log[-3000:])
    else:
        assert status == 200 and "no implementations specified for speculative decoding" in log, log[-3000:]
        assert json.loads(raw)["timings"].get("draft_n", 0) == 0


def headless_port() -> int:
    from draftwise.core.launch import launch_spec

    return launch_spec.any_free_port()
