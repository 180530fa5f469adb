"""The out-of-memory ladder on the real engine (docs/ladder.md).

The engine runs under an address-space cap (`prlimit --as`) that the plan does not know
about: the described machine has 16 GB, the cap allows about a gigabyte more than the engine
needs for nothing. The model is a tiny llama whose KV cache is big: 2 GiB at the full 32k
context in f16, 1.06 GiB in q8_0, 544 MiB in q8_0 at 16k. The cap is set from the planner's
totals and the engine's own measured footprint at the floor context, half-way between the
q8_0 start and the q8_0 start at half the context: so the full start and the q8_0 start die
with an allocation failure and the halved context fits. Nothing here depends on speed.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
import urllib.request
from dataclasses import replace
from pathlib import Path

import pytest

from draftwise.core.engines import capabilities, provision
from draftwise.core.launch import crash, headless, ladder, launch_flow, launch_spec, prepare
from draftwise.core.launch.ladder_record import LadderRecord, remember
from draftwise.core.machine.hardware import GB, Gpu, Machine
from draftwise.core.planning import plan_types, planner
from draftwise.testing.tinymodels import TinyModel, write_tiny_model

pytestmark = [pytest.mark.engine,
              pytest.mark.skipif(sys.platform != "linux" or shutil.which("prlimit") is None,
                                 reason="needs Linux and prlimit for the address-space cap")]

MACHINE = Machine(ram_total=16 * GB, ram_available=12 * GB, gpus=[], os="Linux", described=True)
KV_HEAVY = TinyModel(name="kv-heavy", n_embd=256, n_layer=64, n_head=4, n_head_kv=4, n_ff=256,
                     n_ctx_train=32768, dtype="F16")
MiB = 1 << 20


def _vm_peak(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmPeak:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmPeak")


def _planned(model: Path, caps, **prefs) -> int:
    p = prepare.prepare(prepare.Request(model=model, mtp="off", prefs=planner.PlanPrefs(**prefs)), caps, MACHINE)
    return p.plan.bytes.total


def _wrapper(folder: Path, real: Path, cap: int | None, *, then_bad_flag: bool = False) -> Path:
    """A llama-server that is the real one under `prlimit --as=cap` (no cap: None). With
    `then_bad_flag`, every start after the first runs the real engine with an option it does
    not know (a crash that is not about memory). One malloc arena, measured and capped alike:
    uncapped, glibc reserves 64 MiB of address space per thread arena, as many as threads
    happened to contend, and under a cap it simply makes fewer."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "llama-server"
    counter = folder / "starts"
    lines = ["#!/bin/sh", "export MALLOC_ARENA_MAX=1",
             f"export LD_LIBRARY_PATH='{real.parent}'${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}"]
    if then_bad_flag:
        lines += [f"n=$(cat '{counter}' 2>/dev/null || echo 0); n=$((n+1)); echo $n > '{counter}'",
                  f"if [ \"$n\" -ge 2 ]; then exec '{real}' \"$@\" --no-such-option-for-the-test; fi"]
    lines.append(f"exec prlimit --as={cap} -- '{real}' \"$@\"" if cap else f"exec '{real}' \"$@\"")
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    script.chmod(0o755)
    return script


def _launch(binary: Path, request: prepare.Request, caps, record: LadderRecord, tmp_path: Path, name: str):
    start = record.lookup(request.model, MACHINE, binary)
    prepared = prepare.prepare(ladder.apply(request, start), caps, MACHINE)
    spec = prepared.launch(binary, port=launch_spec.any_free_port())
    climber = ladder.for_launch(request, prepared, spec, caps=caps, machine=MACHINE, start=start,
                                on_success=remember(record, request.model, MACHINE, binary))
    actions: list[launch_flow.Action] = []
    run = headless.HeadlessLaunch(spec, ladder=climber, on_action=actions.append, record_run=False,
                                  log_path=tmp_path / f"{name}.log")
    return run, actions, start


def _n_ctx(run) -> int:
    req = urllib.request.Request(run.spec.url + "/props", headers={"Authorization": f"Bearer {run.spec.api_key}"})
    with urllib.request.urlopen(req, timeout=10) as r:  # noqa: S310 - loopback
        return json.loads(r.read())["default_generation_settings"]["n_ctx"]


@pytest.fixture(scope="module")
def kv_heavy(tmp_path_factory) -> Path:
    return write_tiny_model(tmp_path_factory.mktemp("ladder") / "kv-heavy-F16.gguf", KV_HEAVY)[0]


@pytest.fixture(scope="module")
def cap(engine, kv_heavy, tmp_path_factory) -> int:
    """Half-way between what the q8_0 start and the halved-context start need, from the
    planner's totals on top of the engine's own measured footprint at the floor context."""
    caps = capabilities.capabilities(engine.binary)
    base = _base_peak(engine, kv_heavy, caps, tmp_path_factory.mktemp("base"))
    floor = _planned(kv_heavy, caps, ctx=plan_types.CTX_FLOOR)
    q8 = _planned(kv_heavy, caps, kv_type="q8_0")
    half = _planned(kv_heavy, caps, kv_type="q8_0", ctx=16384)
    assert q8 - half > 400 * MiB  # the gap the cap sits in
    cap = base - floor + (q8 + half) // 2
    print(f"base peak {base // MiB} MiB, planned floor/q8_0/q8_0@16k {floor // MiB}/{q8 // MiB}/{half // MiB} MiB, "
          f"cap {cap // MiB} MiB")
    return cap


def test_a_capped_start_climbs_to_the_rung_that_fits_and_the_next_launch_starts_there(
        engine, kv_heavy, cap, tmp_path):
    caps = capabilities.capabilities(engine.binary)
    binary = _wrapper(tmp_path / "capped", engine.binary, cap)
    record = LadderRecord()
    request = prepare.Request(model=kv_heavy, mtp="off")

    run, actions, start = _launch(binary, request, caps, record, tmp_path, "first")
    assert start.empty
    assert "f16" in run.spec.argv and "32768" in run.spec.argv  # the plan knows nothing of the cap
    run.start()
    try:
        assert run.wait_ready(timeout=240), run.log_text()[-3000:]
        n_ctx = _n_ctx(run)
    finally:
        run.stop()
    climbed = [a for a in actions if isinstance(a, launch_flow.Climbed)]
    # f16 at 32k died, q8_0 at 32k died, q8_0 at 16k became ready: one relaunch per rung.
    assert [c.concessions.rung for c in climbed] == [ladder.KV_Q8, ladder.CTX_HALF], [str(c.reason) for c in climbed]
    assert all(c.cause.kind == crash.OUT_OF_MEMORY for c in climbed)
    assert all("allocate" in c.cause.evidence for c in climbed), [c.cause.evidence for c in climbed]
    assert len(run.pids) == 3
    assert n_ctx == 16384
    assert "q8_0" in run.spec.argv and run.spec.argv[run.spec.argv.index("-c") + 1] == "16384"
    assert str(climbed[-1].reason) == "The engine ran out of memory while loading. Starting it again with a 16k context."
    notices = [str(a.text) for a in actions if isinstance(a, launch_flow.Notice)]
    assert any("next launch of this model starts there" in n for n in notices), notices

    remembered = record.lookup(kv_heavy, MACHINE, binary)
    assert (remembered.rung, remembered.kv_type, remembered.ctx) == (ladder.CTX_HALF, "q8_0", 16384)

    # The next launch starts at that rung: ready on the first start, nothing climbed.
    run2, actions2, start2 = _launch(binary, request, caps, record, tmp_path, "second")
    assert start2 == remembered
    run2.start()
    try:
        assert run2.wait_ready(timeout=120), run2.log_text()[-3000:]
    finally:
        run2.stop()
    assert len(run2.pids) == 1
    assert not [a for a in actions2 if isinstance(a, launch_flow.Climbed)]

    # Try full settings again: forgotten, the next plan is the full one again.
    assert record.forget(kv_heavy, MACHINE, binary) == 1
    assert record.lookup(kv_heavy, MACHINE, binary).empty


def test_a_rung_that_crashes_for_another_reason_stops_the_ladder(engine, kv_heavy, cap, tmp_path):
    caps = capabilities.capabilities(engine.binary)
    binary = _wrapper(tmp_path / "capped-then-bad", engine.binary, cap, then_bad_flag=True)
    record = LadderRecord()
    run, actions, _ = _launch(binary, prepare.Request(model=kv_heavy, mtp="off"), caps, record, tmp_path, "bad")
    run.start()
    try:
        assert not run.wait_ready(timeout=180)
    finally:
        run.stop()
    climbed = [a for a in actions if isinstance(a, launch_flow.Climbed)]
    crashed = [a for a in actions if isinstance(a, launch_flow.Crashed)]
    notices = [str(a.text) for a in actions if isinstance(a, launch_flow.Notice)]
    assert len(climbed) == 1 and climbed[0].concessions.rung == ladder.KV_Q8
    assert len(crashed) == 1 and crashed[0].cause.kind != crash.OUT_OF_MEMORY
    assert len(run.pids) == 2  # no third start
    assert any("failed for another reason" in n and "q8_0" in n for n in notices), notices
    assert record.lookup(kv_heavy, MACHINE, binary).empty  # nothing that worked to remember


def test_the_window_service_climbs_the_same_ladder(qtbot, engine, kv_heavy, cap, tmp_path):
    """services/engine_process.py drives the same LaunchFlow: a rung climbed per start, then ready."""
    from draftwise.services.engine_process import EngineProcess

    caps = capabilities.capabilities(engine.binary)
    binary = _wrapper(tmp_path / "capped", engine.binary, cap)
    request = prepare.Request(model=kv_heavy, mtp="off")
    prepared = prepare.prepare(request, caps, MACHINE)
    spec = prepared.launch(binary, port=launch_spec.any_free_port())
    climber = ladder.for_launch(request, prepared, spec, caps=caps, machine=MACHINE)
    proc = EngineProcess(spec, ladder=climber, record_run=False)
    rungs: list[str] = []
    # A rung climbed: the outcome's concessions change (one per rung, the new rung's name).
    proc.changed.connect(lambda o: rungs.append(o.concessions.rung)
                         if o.concessions.rung and (not rungs or rungs[-1] != o.concessions.rung) else None)
    with qtbot.waitSignal(proc.changed, timeout=120_000, check_params_cb=lambda o: o.stage == launch_flow.READY):
        proc.start()
    try:
        assert rungs == [ladder.KV_Q8, ladder.CTX_HALF] and len(proc.pids) == 3
        assert proc.spec.argv[proc.spec.argv.index("-c") + 1] == "16384" and proc.url == spec.url
    finally:
        with qtbot.waitSignal(proc.changed, timeout=15_000, check_params_cb=lambda o: o.stage == launch_flow.STOPPED):
            proc.stop()


# ------------------------------------------------------------------ after a flash-attention fix
def _fa_fault_then_capped(folder: Path, real: Path, cap: int) -> Path:
    """A llama-server that meets a GPU driver fault with flash attention (as lavapipe does on
    Gemma-like models): a start without `-fa off` prints a Vulkan device line, runs the real
    engine until it has loaded and /health has said ready, then dies of SIGSEGV. With `-fa off`
    (the fix's relaunch and the rungs after it) it is the real engine under `prlimit --as=cap`."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "llama-server"
    script.write_text(f"""#!/bin/sh
export MALLOC_ARENA_MAX=1
case " $* " in *" -fa off "*) exec prlimit --as={cap} -- '{real}' "$@" ;; esac
case " $* " in *" -m "*) ;; *) exec '{real}' "$@" ;; esac
ulimit -c 0
echo "0.00.020.000 I llama_model_load_from_file_impl: using device Vulkan0 (llvmpipe (LLVM 15.0.6, 256 bits)) - 2048 MiB free"
fifo="${{TMPDIR:-/tmp}}/draftwise-fa-$$.fifo"
rm -f "$fifo"; mkfifo "$fifo" || exit 70
'{real}' "$@" > "$fifo" 2>&1 &
engine=$!
loaded="$fifo.loaded"
( while [ ! -e "$loaded" ]; do sleep 0.05; done; sleep 1.5; kill -s KILL $engine ) &
while IFS= read -r line; do
  printf '%s\n' "$line"
  case $line in *"model loaded"*) : > "$loaded" ;; esac
done < "$fifo"
wait $engine 2>/dev/null
rm -f "$fifo" "$loaded"
kill -s SEGV $$
""", encoding="utf-8")
    script.chmod(0o755)
    return script


def test_after_a_flash_attention_fix_the_ladder_skips_the_q8_0_rung(engine, kv_heavy, tmp_path):
    """Issue 19 item 10: the fix's relaunch runs out of memory. The q8_0 rung would be refused
    by the engine (a quantized V cache needs flash attention), so the ladder goes on to the
    context instead of halting; the fix and the rung that worked are both in the last command."""
    caps = capabilities.capabilities(engine.binary)
    off = prepare.Request(model=kv_heavy, mtp="off", extra_args=("-fa", "off"))
    full, half = _planned_with(off, caps), _planned_with(off, caps, ctx=16384)
    assert full - half > 900 * MiB  # an f16 cache: 2 GiB at 32k, 1 GiB at 16k
    base = _base_peak(engine, kv_heavy, caps, tmp_path)
    cap = base - _planned(kv_heavy, caps, ctx=plan_types.CTX_FLOOR) + (full + half) // 2
    binary = _fa_fault_then_capped(tmp_path / "fa-fault", engine.binary, cap)
    record = LadderRecord()
    run, actions, _ = _launch(binary, prepare.Request(model=kv_heavy, mtp="off"), caps, record, tmp_path, "fa")
    run.start()
    try:
        assert run.wait_ready(timeout=120), run.log_text()[-2000:]  # the first start, before its fault
        deadline = time.monotonic() + 60
        while run.flow.fix is None and not run.flow.ended and time.monotonic() < deadline:
            run.pump(0.1)
        assert run.flow.fix is not None and run.flow.fix.args == crash.FA_OFF, run.log_text()[-2000:]
        assert run.wait_ready(timeout=180), run.log_text()[-3000:]
        n_ctx = _n_ctx(run)
    finally:
        run.stop()
    climbed = [a for a in actions if isinstance(a, launch_flow.Climbed)]
    notices = [str(a.text) for a in actions if isinstance(a, launch_flow.Notice)]
    assert [c.concessions.rung for c in climbed] == [ladder.CTX_HALF], notices
    assert climbed[0].cause.kind == crash.OUT_OF_MEMORY
    assert not any("failed for another reason" in n for n in notices), notices
    argv = run.spec.argv
    assert n_ctx == 16384 and argv[argv.index("-fa") + 1] == "off" and "q8_0" not in argv
    assert len(run.pids) == 3  # the start that faulted, the fix's (out of memory), the rung


def _planned_with(request: prepare.Request, caps, **prefs) -> int:
    return prepare.prepare(replace(request, prefs=planner.PlanPrefs(**prefs)), caps, MACHINE).plan.bytes.total


def _base_peak(engine, model: Path, caps, tmp_path: Path) -> int:
    """The engine's own measured footprint at the floor context (VmPeak), one malloc arena."""
    uncapped = _wrapper(tmp_path / "uncapped", engine.binary, None)
    floor_req = prepare.Request(model=model, mtp="off", prefs=planner.PlanPrefs(ctx=plan_types.CTX_FLOOR))
    spec = prepare.prepare(floor_req, caps, MACHINE).launch(uncapped, port=launch_spec.any_free_port())
    run = headless.HeadlessLaunch(spec, record_run=False, log_path=tmp_path / "base.log")
    run.start()
    try:
        assert run.wait_ready(timeout=120), run.log_text()[-2000:]
        return _vm_peak(run.pids[-1])
    finally:
        run.stop()


# ------------------------------------------------------------------ a GPU-layer rung on Vulkan
VULKAN_FOLDER = provision.install_folder("vulkan")  # read at import: the tests' data folder is their own
VULKAN_BOX = Machine(ram_total=16 * GB, ram_available=12 * GB, os="Linux", described=True,
                     gpus=[Gpu(0, "vulkan", "llvmpipe", total_bytes=8 * GB, free_bytes=8 * GB, device="Vulkan0")])
# Weights much bigger than the KV cache: on lavapipe the GPU copy of a layer is host memory on
# top of the mapped file, so fewer GPU layers need less address space. Trained for 2048
# tokens, so the context is at the floor and the context rung has nothing to halve.
WEIGHTS_HEAVY = TinyModel(name="weights-heavy", n_embd=768, n_layer=64, n_head=4, n_head_kv=1, n_ff=768,
                          n_ctx_train=2048, dtype="F16")


def _peak_of(binary: Path, spec, tmp_path: Path, name: str) -> int:
    run = headless.HeadlessLaunch(spec, record_run=False, log_path=tmp_path / f"{name}.log")
    run.start()
    try:
        assert run.wait_ready(timeout=120), run.log_text()[-2000:]
        return _vm_peak(run.pids[-1])
    finally:
        run.stop()


def test_a_capped_vulkan_start_climbs_to_fewer_gpu_layers(tmp_path):
    build = provision.load_facts(VULKAN_FOLDER)
    if build is None:
        pytest.skip(f"the Vulkan engine is not installed in {VULKAN_FOLDER}")
    real = build.binary
    caps = capabilities.capabilities(real)
    model = write_tiny_model(tmp_path / "weights-heavy-F16.gguf", WEIGHTS_HEAVY)[0]
    request = prepare.Request(model=model, mtp="off")
    full = prepare.prepare(request, caps, VULKAN_BOX)
    assert full.plan.gpu_layers == full.plan.n_layers and full.plan.ctx == 2048  # all on the "8 GB" GPU

    # The two starts the cap sits between, measured on the engine itself: the q8_0 rung (all
    # layers on the GPU) and the fewer-GPU-layers rung after it. Lavapipe lists only when asked;
    # one malloc arena, so the measured and the capped starts reserve alike (glibc's per-thread
    # arenas reserve 64 MiB each uncapped, and are simply not made under a cap). One start
    # first fills Mesa's shader cache: on a fresh machine the measured starts would compile
    # the pipelines and the capped one would not, and then fit where it must not.
    folder = tmp_path / "visible"
    folder.mkdir()
    show = folder / "llama-server"
    show.write_text(f"#!/bin/sh\nexport GGML_VK_VISIBLE_DEVICES=0 MALLOC_ARENA_MAX=1 LD_LIBRARY_PATH='{real.parent}'\n"
                    f"exec '{real}' \"$@\"\n", encoding="utf-8")
    show.chmod(0o755)
    q8 = ladder.Concessions(rung=ladder.KV_Q8, kv_type="q8_0")
    fewer = replace(q8, rung=ladder.FEWER_GPU, gpu_layers=full.plan.n_layers // 2)

    def spec_of(c, binary):
        p = prepare.prepare(ladder.apply(request, c), caps, VULKAN_BOX)
        return p.launch(binary, engine_backend="vulkan", gpus=VULKAN_BOX.gpus, port=launch_spec.any_free_port())

    _peak_of(show, spec_of(q8, show), tmp_path, "warm-up")
    p_q8 = _peak_of(show, spec_of(q8, show), tmp_path, "q8")
    p_fewer = _peak_of(show, spec_of(fewer, show), tmp_path, "fewer")
    assert p_q8 - p_fewer > 100 * MiB, (p_q8, p_fewer)
    cap = (p_q8 + p_fewer) // 2
    print(f"vulkan peaks: q8_0 all layers {p_q8 // MiB} MiB, {full.plan.n_layers // 2} layers {p_fewer // MiB} MiB, "
          f"cap {cap // MiB} MiB")
    capped = tmp_path / "capped"
    capped.mkdir()
    binary = capped / "llama-server"
    binary.write_text(f"#!/bin/sh\nexport GGML_VK_VISIBLE_DEVICES=0 MALLOC_ARENA_MAX=1 LD_LIBRARY_PATH='{real.parent}'\n"
                      f"exec prlimit --as={cap} -- '{real}' \"$@\"\n", encoding="utf-8")
    binary.chmod(0o755)

    record = LadderRecord()
    spec = full.launch(binary, engine_backend="vulkan", gpus=VULKAN_BOX.gpus, port=launch_spec.any_free_port())
    climber = ladder.for_launch(request, full, spec, caps=caps, machine=VULKAN_BOX,
                                on_success=remember(record, model, VULKAN_BOX, binary))
    actions: list[launch_flow.Action] = []
    run = headless.HeadlessLaunch(spec, ladder=climber, on_action=actions.append, record_run=False,
                                  log_path=tmp_path / "vulkan.log")
    run.start()
    try:
        assert run.wait_ready(timeout=300), run.log_text()[-3000:]
        log_text = run.log_text()
    finally:
        run.stop()
    climbed = [a for a in actions if isinstance(a, launch_flow.Climbed)]
    assert [c.concessions.rung for c in climbed] == [ladder.KV_Q8, ladder.FEWER_GPU], [str(c.reason) for c in climbed]
    assert climbed[0].cause.kind == crash.OUT_OF_MEMORY
    assert "Vulkan" in str(climbed[0].cause.sentence), climbed[0].cause  # "ran out of Vulkan GPU memory"
    n = full.plan.n_layers // 2
    assert run.spec.argv[run.spec.argv.index("-ngl") + 1] == str(n)
    assert f"offloaded {n}/{full.plan.n_layers} layers to GPU" in log_text
    assert "using device Vulkan0" in log_text
    assert f"{n} of {full.plan.n_layers} layers on the GPU" in str(climbed[-1].reason)
    assert record.lookup(model, VULKAN_BOX, binary).gpu_layers == n
