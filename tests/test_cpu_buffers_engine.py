"""Quantized weights on the real CPU engine: the CPU re-lays some of them (CPU_REPACK on an
AVX2 CPU, AMX on sapphirerapids) beside the mapped file, and the plan must count both."""

from __future__ import annotations

from pathlib import Path

import pytest

from draftwise.core.launch import crash
from draftwise.core.launch.fixes import EngineFixes
from draftwise.core.planning import planner
from draftwise.testing import gpu_launch
from draftwise.testing import tinyarchs as ta
from draftwise.testing.tinymodels import TinyModel, write_tiny_model

pytestmark = [pytest.mark.engine, pytest.mark.real_machine]

G = dict(ta.BENCH_GEOMETRY, n_ctx_train=4096)


@pytest.fixture(scope="module")
def quantized(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("quantized")
    out = {}
    for dtype in ("Q4_0", "Q8_0"):
        out[dtype] = write_tiny_model(d / f"llama-{dtype}.gguf", TinyModel(name=f"q-{dtype}", n_layer=4, dtype=dtype, **G))[0]
    out["moe-Q4_0"] = ta.write_arch(d / "moe-Q4_0.gguf", ta.qwen3moe_model(n_ff_exp=256, dtype="Q4_0", **G))[0]
    return out


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var in ("DRAFTWISE_DATA_DIR", "DRAFTWISE_CONFIG_DIR", "DRAFTWISE_CACHE_DIR"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    return tmp_path


def weights_close(o: gpu_launch.Outcome) -> None:
    row = o.row("CPU", "weights")
    assert row is not None and abs(row["planned"] - row["actual"]) <= 0.02 * row["actual"], o.rows


@pytest.mark.parametrize("name", ["Q4_0", "Q8_0", "moe-Q4_0"])
def test_cpu_repack_on_an_avx2_cpu(engine, quantized, isolated, name):
    if not any(p.name == "libggml-cpu-haswell.so" for p in engine.binary.parent.iterdir()):
        pytest.skip("this engine has no haswell CPU module")
    binary = gpu_launch.engine_with_cpu_variant(engine.binary, isolated / "haswell", "haswell")
    o = gpu_launch.run(binary, "cpu", quantized[name], log_dir=isolated, prefs=planner.PlanPrefs(ctx=512),
                       n_predict=2)  # fmt: skip
    assert o.ready and o.completion is not None and o.machine.cpu_variant == "haswell"
    repacked = o.actual.by_buffer().get("CPU_REPACK", 0)
    # x86 re-lays Q4_0 (dense and expert matrices) but not Q8_0.
    assert (repacked > 0) == name.endswith("Q4_0")
    assert abs(o.prepared.plan.bytes.cpu_extra.get("CPU_REPACK", 0) - repacked) <= 0.02 * max(repacked, 1) + 16384
    weights_close(o)


@pytest.mark.parametrize("name", ["Q4_0", "Q8_0"])
def test_the_engines_own_cpu_module_and_a_failing_amx(engine, quantized, isolated, name):
    """On the engine's best CPU module. Where AMX is advertised but stops with an illegal
    instruction (some virtual machines), the launch relaunches once with -nr, remembers it,
    and the next launch plans and starts with it."""
    fixes = EngineFixes(isolated / "fixes.json")
    o = gpu_launch.run(engine.binary, "cpu", quantized[name], log_dir=isolated, fixes=fixes,
                       prefs=planner.PlanPrefs(ctx=512), n_predict=2)  # fmt: skip
    assert o.ready and o.completion is not None, o.log[-15:]
    if any(type(a).__name__ == "Relaunched" for a in o.actions):
        assert o.machine.cpu_variant == "sapphirerapids"
        assert fixes.for_machine(o.machine).args_for(engine.binary, quantized[name], ()) == crash.NO_REPACK
        o = gpu_launch.run(engine.binary, "cpu", quantized[name], log_dir=isolated, fixes=fixes,
                           prefs=planner.PlanPrefs(ctx=512), n_predict=2)  # fmt: skip
        assert o.ready and "-nr" in o.argv and o.prepared.plan.bytes.cpu_extra == {}
        assert not any(type(a).__name__ == "Relaunched" for a in o.actions)
    weights_close(o)
