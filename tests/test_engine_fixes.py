"""Engine fixes at the scope of their cause (core/launch/fixes.py; issue 19 item 3).

The AMX illegal instruction is the CPU's: remembered for the machine and engine build, so
every quantized model starts with `-nr` after the first crash — found by the machine check's
quantized model before a user's launch, and recorded by `draftwise measure` as by every
launch path. A flash-attention fault stays per model and device. Records written per model
by the earlier version are still read.

The fault itself cannot depend on the machine the tests run on: the unit tests feed the
flow the engine's own lines from a start that died so; the engine tests use the real engine
behind `draftwise.testing.faults.amx_faulting_engine`, which dies the same way on any machine.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from draftwise.cli.main import main
from draftwise.core.check import machine_check
from draftwise.core.engines import args as engine_args
from draftwise.core.engines.engine_settings import DEFAULTS
from draftwise.core.launch import crash, headless, launch_flow, launch_spec, prepare
from draftwise.core.launch.fixes import EngineFixes, key, machine_wide_key
from draftwise.core.machine import hardware
from draftwise.core.machine.hardware import GB, Gpu, Machine
from draftwise.core.speculation.resolver import NO_SPECULATION
from draftwise.testing import faults
from draftwise.testing import tinymodels as tm

MACHINE = Machine(ram_total=16 * GB, ram_available=12 * GB, os="Linux")
ENGINE_DIR = "/opt/llama.cpp-11434.0.0-cpu"
# A synthetic log, written by hand in the engine's format (pinned 11434, -lv 4) for the crash
# ladder: a start of Gemma 3 270M Q4_K_M on a virtual machine that reports AMX but does not
# run it, up to the warm-up that dies of SIGILL inside the AMX kernels. The ladder reads the
# sapphirerapids module's load line and the death; it is not a recorded start, and its time
# stamps and sizes are no engine figures to test against (a test that needs them reads a
# recorded log). So that none disagrees with the engine, the buffer lines are copied from the
# recorded start of the same file on an AMX CPU that runs it:
# tests/data/engine-lines/gemma-3-270m-it-real-amx-c4096-np1.log (-c 4096 -np 1).
AMX_START = f"""\
0.00.000.993 I srv  llama_server: initializing ...
0.00.001.794 I load_backend: loaded RPC backend from {ENGINE_DIR}/libggml-rpc.so
0.00.010.525 I load_backend: loaded CPU backend from {ENGINE_DIR}/libggml-cpu-sapphirerapids.so
0.00.010.628 I cmn  common_param: common_params_print_info: verbosity = 4 (adjust with the `-lv N` CLI arg)
0.00.214.270 I load_model: loading model '/models/gemma-3-270m-q4_k_m.gguf'
0.01.529.034 I load_tensors: loading model tensors, this can take a while... (load_mode = mmap)
0.01.581.188 I load_tensors:          AMX model buffer size =   213.91 MiB
0.01.581.189 I load_tensors:   CPU_Mapped model buffer size =   235.16 MiB
0.01.607.379 I llama_context:        CPU  output buffer size =     1.00 MiB
0.01.607.429 I llama_kv_cache:        CPU KV buffer size =    12.00 MiB
0.01.607.511 I llama_kv_cache:        CPU KV buffer size =    15.00 MiB
0.01.616.431 I sched_reserve:        CPU compute buffer size =    23.28 MiB
0.01.616.451 I sched_reserve: reserve took 8.74 ms, sched copies = 1
0.01.616.502 I cmn  common_init_: warming up the model with an empty run - please wait ... (--no-warmup to disable)
""".splitlines()
SIGILL = crash.ExitStatus(None, crash.SIGILL)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    engine = tmp_path / "engine" / "llama-server"
    engine.parent.mkdir()
    engine.write_bytes(b"a build")
    out = {"engine": engine, "store": tmp_path / "engine-fixes.json"}
    for name in ("gemma-3-270m-q4_k_m.gguf", "other-Q4_0.gguf"):
        out[name] = tmp_path / name
        out[name].write_bytes(b"GGUF" + name.encode())
    return out


def _flow(files, model: Path, fixes: EngineFixes) -> launch_flow.LaunchFlow:
    spec = launch_spec.llamacpp_launch(files["engine"], model, NO_SPECULATION, port=18080, plan_options=(engine_args.option("-c", "512"),))
    return launch_flow.LaunchFlow(spec, fixes=fixes)


def test_the_synthetic_starts_buffers_are_the_recorded_ones():
    from draftwise.core.planning import logparse
    from draftwise.testing.corpus import engine_lines

    rec = engine_lines.read("gemma-3-270m-it-real-amx-c4096-np1")
    assert logparse.parse_lines(AMX_START).by_buffer_component() == logparse.parse_lines(rec.lines).by_buffer_component()


def test_the_amx_fault_from_the_engines_own_lines():
    cause = crash.classify(SIGILL, AMX_START)
    assert cause.kind == crash.ILLEGAL_INSTRUCTION
    fix = crash.feature_fix(SIGILL, AMX_START, DEFAULTS, after_ready=False)
    assert fix is not None and fix.args == crash.NO_REPACK
    assert "for every model" in str(fix.message)
    # Not without the AMX module's line (another CPU's illegal instruction), nor twice.
    assert crash.feature_fix(SIGILL, [x.replace("sapphirerapids", "zen4") for x in AMX_START], DEFAULTS,
                             after_ready=False) is None
    assert crash.feature_fix(SIGILL, AMX_START, crash.NO_REPACK_FIX, after_ready=False) is None


def test_an_amx_fault_is_remembered_for_the_machine_not_the_model(files):
    fixes = EngineFixes(files["store"], machine=MACHINE)
    flow = _flow(files, files["gemma-3-270m-q4_k_m.gguf"], fixes)
    flow.start(0.0)
    flow.spawned(0.0)
    flow.output(AMX_START, 1.6)
    actions = flow.exited(SIGILL, 1.7)
    assert [type(a).__name__ for a in actions][:2] == ["Relaunched", "Notice"]
    assert flow.current_argv[-1:] == ("-nr",)
    flow.spawned(1.8)
    flow.health(200, 2.5)  # ready without AMX: recorded
    [entry] = fixes.entries()
    assert entry.key == machine_wide_key(files["engine"], MACHINE) and entry.args == crash.NO_REPACK
    # Every model on this machine with this build starts with it, whatever GPUs the launch uses.
    with_gpu = replace(MACHINE, gpus=[Gpu(0, "vulkan", "llvmpipe", 2 * GB, 2 * GB, device="Vulkan0")])
    for machine in (MACHINE, with_gpu):
        assert EngineFixes(files["store"], machine).args_for(files["engine"], files["other-Q4_0.gguf"], ()) == ("-nr",)
    # Not another machine, not another build, not a store that was not told the machine.
    other = replace(MACHINE, ram_total=64 * GB)
    assert EngineFixes(files["store"], other).args_for(files["engine"], files["other-Q4_0.gguf"], ()) == ()
    assert EngineFixes(files["store"]).args_for(files["engine"], files["other-Q4_0.gguf"], ()) == ()
    files["engine"].write_bytes(b"another build")
    assert EngineFixes(files["store"], MACHINE).args_for(files["engine"], files["other-Q4_0.gguf"], ()) == ()


def test_a_flash_attention_fault_stays_with_its_model_and_device(files):
    fixes = EngineFixes(files["store"], machine=MACHINE)
    gemma, other = files["gemma-3-270m-q4_k_m.gguf"], files["other-Q4_0.gguf"]
    fixes.record(files["engine"], gemma, ("Vulkan0",), crash.FA_OFF, "driver fault")
    assert fixes.args_for(files["engine"], gemma, ("Vulkan0",)) == crash.FA_OFF
    assert fixes.args_for(files["engine"], other, ("Vulkan0",)) == ()
    assert fixes.args_for(files["engine"], gemma, ()) == ()


def test_a_per_model_record_of_the_earlier_version_is_still_read(files):
    gemma = files["gemma-3-270m-q4_k_m.gguf"]
    old = {"version": 1, "entries": [{"key": key(files["engine"], gemma, ()), "args": ["-nr"],
                                      "reason": "The CPU's AMX kernels stopped ...", "when": "2026-11-30T10:00:00"}]}
    files["store"].write_text(json.dumps(old))
    fixes = EngineFixes(files["store"], machine=MACHINE)
    assert fixes.args_for(files["engine"], gemma, ()) == ("-nr",)
    assert fixes.args_for(files["engine"], files["other-Q4_0.gguf"], ()) == ()
    # The next fault on another model files it machine-wide; the old entry stays, read once.
    fixes.record(files["engine"], files["other-Q4_0.gguf"], (), crash.NO_REPACK, "again")
    assert fixes.args_for(files["engine"], gemma, ()) == ("-nr",)
    assert len(fixes.entries()) == 2


# ------------------------------------------------------------------ the real engine


@pytest.fixture
def faulty(engine, tmp_path: Path) -> Path:
    """The real engine as a machine with the AMX fault runs it (any machine)."""
    return faults.amx_faulting_engine(engine.binary, tmp_path / "amx-vm")


def _quantized(tmp_path: Path, name: str) -> Path:
    return tm.write_tiny_model(tmp_path / "models" / f"{name}-Q4_0.gguf", tm.TinyModel(name=name, dtype="Q4_0"))[0]


@pytest.mark.engine
def test_the_machine_check_meets_the_fault_once_and_the_next_launch_starts_without_it(faulty, tmp_path):
    steps = list(machine_check.run_check(configured_engine=str(faulty)))
    by_title = {str(s.title): s for s in steps}
    quantized = by_title["Quantized models"]
    # The step's own words first: CI prints only the start of a long assertion message.
    assert quantized.status == "info" and "(-nr)" in str(quantized.detail), (
        f"{quantized.status}: {quantized.detail} | faults {faults.faults(faulty)} | "
        + "; ".join(f"{s.title}: {s.status}" for s in steps))
    assert all(s.status != "fail" for s in steps), [(str(s.title), str(s.detail)) for s in steps]
    assert faults.faults(faulty) == 1
    machine = hardware.inventory(faulty)
    [entry] = EngineFixes().entries()
    assert entry.key == machine_wide_key(faulty, machine) and entry.args == crash.NO_REPACK
    # A model the user never launched: its first launch starts with -nr and does not crash.
    model = _quantized(tmp_path, "first-launch")
    fixes = EngineFixes(machine=machine)
    remembered = fixes.args_for(faulty, model, ())
    from draftwise.core.engines import capabilities

    prepared = prepare.prepare(prepare.Request(model=model, mtp="off", extra_args=remembered),
                               capabilities.capabilities(faulty), machine)
    spec = prepared.launch(faulty, port=launch_spec.any_free_port())
    run = headless.HeadlessLaunch(spec, fixes=fixes)
    try:
        run.start()
        assert run.wait_ready(60), run.log_text()[-2000:]
        assert "-nr" in run.flow.current_argv and run.flow.fix is None
    finally:
        run.stop()
    assert faults.faults(faulty) == 1
    # The check again: nothing to meet any more.
    again = {str(s.title): s for s in machine_check.run_check(configured_engine=str(faulty))}
    assert again["Quantized models"].status == "ok" and faults.faults(faulty) == 1


@pytest.mark.engine
def test_measure_records_the_fix_and_crashes_at_most_once_per_machine(faulty, tmp_path, capsys):
    """Issue 19: `draftwise measure` crashed on all 8 of its starts and wrote no engine-fixes.json."""
    model = _quantized(tmp_path, "measured")
    argv = ["measure", str(model), "--engine", str(faulty), "--ngram", "--tokens", "8", "--rounds", "2",
            "--n-max", "2"]
    assert main(argv) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert faults.faults(faulty) == 1, out  # the first arm's first start; the 3 starts after it have -nr
    [entry] = EngineFixes().entries()
    assert entry.key == machine_wide_key(faulty, hardware.inventory(faulty)) and entry.args == crash.NO_REPACK
    # Another model, another measurement: the fix applies from the start.
    assert main([*argv[:1], str(_quantized(tmp_path, "second")), *argv[2:]]) == 0
    out = capsys.readouterr().out
    assert faults.faults(faulty) == 1 and "after an earlier crash with this engine: -nr" in out, out
