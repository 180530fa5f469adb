"""The chained decision (resolve → plan → argv) that the CLI, the window and the self-test share."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from draftwise.core.engines.capabilities import pinned_caps
from draftwise.core.launch import prepare
from draftwise.core.machine.hardware import Machine
from draftwise.core.planning import fit_search, planner
from draftwise.testing.tinymodels import TinyModel, draft_model, write_tiny_model

CAPS = pinned_caps()
TARGET = TinyModel(name="Tiny", n_layer=4, n_embd=128, n_ff=256)


@pytest.fixture
def folder(tmp_path):
    write_tiny_model(tmp_path / "Tiny-Q8_0.gguf", TARGET)
    write_tiny_model(tmp_path / "Tiny-draft.gguf", draft_model(TARGET))
    return tmp_path


def _machine(ram: int) -> Machine:
    return Machine(ram_total=ram, ram_available=ram, gpus=[], os="linux")


def _prefs(**kw) -> planner.PlanPrefs:
    return planner.PlanPrefs(margin_bytes=0, ctx=4096, ctx_floor=512, **kw)


def test_roomy_machine_keeps_the_drafter(folder):
    req = prepare.Request(model=folder / "Tiny-Q8_0.gguf", prefs=_prefs())
    p = prepare.prepare(req, CAPS, _machine(8 << 30))
    assert p.spec.spec_type == "draft-simple" and p.spec is p.chosen
    argv = p.argv("llama-server")
    assert argv[argv.index("-c") + 1] == "4096"
    assert "--spec-draft-model" in argv
    assert p.launch(folder / "llama-server", port=8080).fallback_argv is not None


def test_tight_machine_drops_the_auto_drafter_and_says_why(folder):
    req = prepare.Request(model=folder / "Tiny-Q8_0.gguf", prefs=_prefs())
    alone = prepare.prepare(prepare.Request(model=req.model, mtp="off", prefs=req.prefs), CAPS, _machine(8 << 30))
    with_drafter = prepare.prepare(req, CAPS, _machine(8 << 30))
    # Room for the model at full context, but not for the drafter beside it.
    ram = alone.plan.bytes.total + (with_drafter.plan.bytes.drafter // 2)
    p = prepare.prepare(req, CAPS, _machine(ram))
    assert p.plan.drop_drafter and p.plan.fits
    assert p.chosen.spec_type == "draft-simple" and p.spec.spec_type is None
    assert p.plan.ctx == 4096  # the context the user wanted survives
    assert p.plan.drop_reason in p.spec.notes
    assert "--spec-type" not in p.argv("llama-server")


def test_forced_drafter_stays_on_the_same_tight_machine(folder):
    req = prepare.Request(model=folder / "Tiny-Q8_0.gguf", draft=folder / "Tiny-draft.gguf", prefs=_prefs())
    alone = prepare.prepare(prepare.Request(model=req.model, mtp="off", prefs=req.prefs), CAPS, _machine(8 << 30))
    with_drafter = prepare.prepare(req, CAPS, _machine(8 << 30))
    p = prepare.prepare(req, CAPS, _machine(alone.plan.bytes.total + with_drafter.plan.bytes.drafter // 2))
    assert not p.plan.drop_drafter and p.spec.spec_type == "draft-simple"


def test_user_errors_name_the_field(folder, tmp_path):
    with pytest.raises(prepare.PrepareError) as err:
        prepare.prepare(prepare.Request(model=tmp_path / "none.gguf"), CAPS, _machine(8 << 30))
    assert err.value.field == "model"
    with pytest.raises(prepare.PrepareError) as err:
        prepare.prepare(prepare.Request(model=folder / "Tiny-Q8_0.gguf", mtp="off", draft=folder / "Tiny-draft.gguf"),
                        CAPS, _machine(8 << 30))
    assert err.value.field == "draft"


def test_cli_plan_json_has_the_plan_and_honours_overrides(folder, tmp_path):
    described = tmp_path / "box.json"
    described.write_text(json.dumps({"ram_gb": 16, "gpus": [{"backend": "cuda", "name": "RTX 4060", "memory_gb": 8}]}))
    out = subprocess.run(
        [sys.executable, "-m", "draftwise.cli.main", "plan", str(folder / "Tiny-Q8_0.gguf"), "--json",
         "--ctx", "2048", "--kv", "q8_0", "--machine", str(described)],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    plan = data["plan"]
    assert {"ctx", "kv_type", "slots", "gpu_layers", "bytes", "per_device", "reasons"} <= set(plan)
    assert {"weights", "kv", "drafter", "compute", "total"} <= set(plan["bytes"])
    assert plan["ctx"] == 2048 and plan["kv_type"] == "q8_0"
    assert plan["per_device"][0]["name"].startswith("CUDA0")
    argv = data["argv"]
    assert argv[argv.index("-c") + 1] == "2048" and argv[argv.index("-ctk") + 1] == "q8_0"


@pytest.mark.parametrize("args, words", [
    (["--ctx", "10"], "--ctx must be at least"),
    (["--kv", "q3_weird"], "--kv must be one of"),
    (["--machine", "/nonexistent.json"], "--machine"),
])
def test_cli_plan_bad_overrides_exit_2(folder, args, words):
    out = subprocess.run(
        [sys.executable, "-m", "draftwise.cli.main", "plan", str(folder / "Tiny-Q8_0.gguf"), *args],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 2 and words in out.stderr


def test_a_drafter_file_is_refused_as_the_model(tmp_path):
    from draftwise.testing.tinymodels import mtp_model

    head = write_tiny_model(tmp_path / "GLM-tiny-MTP.gguf", mtp_model(), part="mtp")[0]
    with pytest.raises(prepare.PrepareError, match="is a drafter") as err:
        prepare.prepare(prepare.Request(model=head), CAPS, _machine(8 << 30))
    assert err.value.field == "model" and "Draft model field" in str(err.value)


def test_kv_types_follow_the_head_size(tmp_path):
    """A quantized KV cache needs head sizes divisible by 32; the engine refuses otherwise."""
    from draftwise.core.gguf import reader as gguf
    from draftwise.testing.tinymodels import mtp_model

    small_heads = write_tiny_model(tmp_path / "GLM-tiny.gguf", mtp_model())[0]  # head size 16
    assert fit_search.kv_types_for(gguf.read_model(small_heads)) == ["f32", "f16", "bf16"]
    wide = write_tiny_model(tmp_path / "wide.gguf", TinyModel(n_embd=256, n_head=4))[0]  # 64
    assert "q8_0" in fit_search.kv_types_for(gguf.read_model(wide))
    with pytest.raises(prepare.PrepareError, match="Set the KV cache to Auto") as err:
        prepare.prepare(prepare.Request(model=small_heads, prefs=_prefs(kv_type="q8_0")), CAPS, _machine(8 << 30))
    assert err.value.field == "kv_type"
