"""Crash causes, the launch state machine and the broken-drafter record — no engine needed.

The log lines are the ones measured on the pinned engine (docs/engine-observations.md,
docs/engine-facts.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from draftwise.core.identity import engine_build_key
from draftwise.core.launch import crash, gpu_check, launch_flow
from draftwise.core.launch.crash import ExitStatus, classify
from draftwise.core.launch.launch_flow import (
    FAILED,
    LOADING,
    READY,
    STARTING,
    STOPPED,
    STOPPING,
    Crashed,
    FellBack,
    LaunchFlow,
    Notice,
    Ready,
    Spawn,
    StageChanged,
    Stalled,
    Stopped,
    Terminate,
)
from draftwise.core.launch.launch_spec import LaunchSpec
from draftwise.core.speculation.broken import BrokenDrafters
from draftwise.core.speculation.resolver import (
    AUTO_COMPANION,
    AUTO_MTP,
    AUTO_NGRAM,
    EXPLICIT,
    USER_ARGS,
    SpecDecision,
)

# ------------------------------------------------------------------ the classifier
DRAFT_MISSING = """\
E llama_model_load: error loading model: check_tensor_dims: tensor 'blk.0.ffn_down.weight' not found
E llama_model_load_from_file_impl: failed to load model
W operator(): failed to measure the memory of the extra model, fitting without it: failed to load model
I common_speculative_init_result: loading draft model '/tmp/tm/broken-missing.gguf'
E llama_model_load: error loading model: check_tensor_dims: tensor 'blk.0.ffn_down.weight' not found
E llama_model_load_from_file_impl: failed to load model
E common_speculative_init_result: failed to load draft model, '/tmp/tm/broken-missing.gguf'
E srv    load_model: failed to load draft model, '/tmp/tm/broken-missing.gguf'
I srv    operator(): operator(): cleaning up before exit...
E srv  llama_server: exiting due to model loading error"""

MTP_MISSING = """\
W operator(): failed to measure the memory of the extra model, fitting without it: failed to create llama_context from model
I common_speculative_init_result: creating MTP draft context against the target model '/tmp/tm/target.gguf'
W llama_init_from_model: context type MTP requested but model doesn't contain MTP layers
E common_speculative_init_result: failed to create MTP context
E srv    load_model: failed to create MTP context
E srv  llama_server: exiting due to model loading error"""

TRUNK_ASSERT = """\
I srv    load_model: loading model 'trunk.gguf'
.../src/models/glm4-moe.cpp:147: GGML_ASSERT(layer.nextn.eh_proj && "MTP block missing nextn.eh_proj") failed"""


def _lines(text: str) -> list[str]:
    return [f"0.00.0{i:02d}.000 {line}" if line[1:2] == " " else line for i, line in enumerate(text.splitlines())]


@pytest.mark.parametrize(
    ("status", "log", "kind", "words"),
    [
        (ExitStatus(1), DRAFT_MISSING, crash.DRAFT_LOAD, "broken-missing.gguf"),
        (ExitStatus(1), MTP_MISSING, crash.MTP_CONTEXT, "no MTP layers"),
        (ExitStatus.from_returncode(-6), TRUNK_ASSERT, crash.MTP_CONTEXT, "MTP head is incomplete"),
        (ExitStatus(134), TRUNK_ASSERT, crash.MTP_CONTEXT, "MTP head is incomplete"),
        (ExitStatus(1), "E done_getting_tensors: wrong number of tensors; expected 30, got 27",
         crash.TENSOR_COUNT, "more tensors than it holds"),
        (ExitStatus(1), "E srv         start: couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 8080\n"
                        "E srv  llama_server: exiting due to HTTP server error", crash.PORT_IN_USE, "port 8080"),
        (ExitStatus(127), "./llama-server: error while loading shared libraries: libcudart.so.12: cannot open "
                          "shared object file: No such file or directory", crash.MISSING_LIBRARY, "libcudart.so.12"),
        (ExitStatus(1), "E ggml_backend_cuda_buffer_type_alloc_buffer: allocating 8192.00 MiB on device 0: "
                        "cudaMalloc failed: out of memory", crash.OUT_OF_MEMORY, "CUDA GPU memory"),
        (ExitStatus(1), "E ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4096.00 MiB on device 0: "
                        "hipMalloc failed: out of memory", crash.OUT_OF_MEMORY, "ROCm GPU memory"),
        (ExitStatus(1), "E ggml_vulkan: Device memory allocation of size 4294967296 failed.\n"
                        "E ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory", crash.OUT_OF_MEMORY,
         "Vulkan GPU memory"),
        (ExitStatus.from_returncode(-6), "terminate called after throwing an instance of 'std::bad_alloc'",
         crash.OUT_OF_MEMORY, "system memory"),
        (ExitStatus.from_returncode(-4), "I srv    load_model: loading model 'm.gguf'", crash.ILLEGAL_INSTRUCTION,
         "instructions this computer lacks"),
        (ExitStatus(132), "", crash.ILLEGAL_INSTRUCTION, "illegal instruction"),
        (ExitStatus(0xC000001D), "", crash.ILLEGAL_INSTRUCTION, "illegal instruction"),
        (ExitStatus.from_returncode(-6), ".../common/common.cpp:2225: GGML_ASSERT(n_tokens > 0) failed",
         crash.ASSERT, "n_tokens > 0"),
        (ExitStatus.from_returncode(-9), "I srv  llama_server: model loaded", crash.KILLED, "killed from outside"),
        (ExitStatus.from_returncode(-11), "I srv    load_model: loading model 'sidecar.gguf'", crash.SEGFAULT,
         "segmentation fault"),
        (ExitStatus(1), "E llama_model_load: error loading model: tensor 'x' data is not within the file bounds\n"
                        "E srv  llama_server: exiting due to model loading error", crash.MODEL_LOAD,
         "not within the file bounds"),
        (ExitStatus(3), "I something odd", crash.UNKNOWN, "exit code 3"),
    ],
)
def test_each_failure_is_a_sentence_and_a_next_step(status, log, kind, words):
    cause = classify(status, _lines(log))
    assert cause.kind == kind
    assert words in cause.sentence
    step = str(cause.next_step)
    assert step and step[0].isupper() and step.endswith((".", ")"))
    assert str(cause.message).startswith(str(cause.sentence))


def test_draft_failure_names_the_loader_reason_and_is_speculation_related():
    cause = classify(ExitStatus(1), _lines(DRAFT_MISSING))
    assert "check_tensor_dims: tensor 'blk.0.ffn_down.weight' not found" in cause.sentence
    assert cause.speculation_related
    assert "failed to load draft model" in cause.evidence
    assert not classify(ExitStatus(1), ["E done_getting_tensors: wrong number of tensors"]).speculation_related


def test_non_fatal_fit_lines_alone_decide_nothing():
    lines = ["W operator(): failed to measure the memory of the extra model, fitting without it: "
             "failed to create llama_context from model",
             "E llama_init_from_model: failed to initialize the context: eagle3 requires ctx_other to be set "
             "(this warning is normal during memory fitting)"]
    cause = classify(ExitStatus.from_returncode(-9), lines)
    assert cause.kind == crash.KILLED


def test_exit_status_words():
    assert str(ExitStatus.from_returncode(-11).words()) == "killed by SIGSEGV"
    assert ExitStatus(139).effective_signal == 11
    assert str(ExitStatus(0xC0000005).words()) == "exit code 0xC0000005"
    assert not ExitStatus(0).failed and ExitStatus(None, 15).failed


def test_speculation_silently_off_is_a_warning_not_a_crash():
    line = "E spec common_specu: the target and draft vocabs are not compatible"
    assert crash.speculation_warning(line) == crash.SPECULATION_OFF_WARNING
    assert crash.speculation_warning("I srv  llama_server: model loaded") is None


@pytest.mark.parametrize(
    ("backend", "lines", "unused"),
    [
        ("cuda", ["I ggml_cuda_init: found 1 CUDA devices",
                  "I llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4090) (0000:01:00.0) - 23712 MiB free",
                  "I load_tensors: offloaded 33/33 layers to GPU"], False),
        ("cuda", ["W ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected"], True),
        ("rocm", ["W ggml_cuda_init: failed to initialize ROCm: no ROCm-capable device is detected"], True),
        ("vulkan", ["W ggml_vulkan: No devices found."], True),
        ("vulkan", [], True),
        ("cpu", [], False),
        ("metal", ["I using device MTL0 (Apple M2) (unknown id) - 21845 MiB free",
                   "I load_tensors: offloaded 29/29 layers to GPU"], False),
    ],
)
def test_gpu_unused_verdict(backend, lines, unused):
    verdict = gpu_check.check(backend, [], lines)
    assert (verdict is not None and not verdict.used) == unused
    if unused and lines:
        assert "runs on the CPU" in str(verdict) and lines[0].split(": ", 1)[1][:20] in str(verdict)


# ------------------------------------------------------------------ the launch state machine
BIN = Path("/opt/engine/llama-server")


def _spec(source: str = AUTO_COMPANION, eligible: bool = True, backend: str = "cpu") -> LaunchSpec:
    spec_argv = ("--spec-type", "draft-simple", "-md", "/m/fam-draft.gguf")
    decision = SpecDecision("draft-simple", Path("/m/fam-draft.gguf"), source, eligible,
                            drafter_key="draft-simple|/m/fam-draft.gguf|1|2", draft_flag="-md")
    base = (str(BIN), "-m", "/m/fam.gguf", "--host", "127.0.0.1", "--port", "8080")
    return LaunchSpec(
        kind="llama.cpp", binary=BIN, model_path=Path("/m/fam.gguf"), argv=base + spec_argv,
        env={"LLAMA_API_KEY": "k"}, host="127.0.0.1", port=8080, api_key="k", spec=decision,
        fallback_argv=base if eligible else None, backend=backend,
    )


class _Store:
    def __init__(self, fail: bool = False) -> None:
        self.recorded: list[tuple[Path, str, str]] = []
        self.fail = fail

    def record(self, binary: Path, key: str, reason: str) -> None:
        if self.fail:
            raise PermissionError(13, "Permission denied")
        self.recorded.append((binary, key, reason))


def _kinds(actions) -> list[type]:
    return [type(a) for a in actions]


def test_startup_crash_of_an_auto_drafter_relaunches_once_without_speculation():
    store = _Store()
    spec = _spec()
    flow = LaunchFlow(spec, broken=store)
    first = flow.start(0.0)
    assert first == [StageChanged(STARTING), Spawn(spec.argv, 0)]
    flow.spawned(0.01)
    assert flow.output(["I srv    load_model: loading model '/m/fam.gguf'"], 0.02) == [StageChanged(LOADING)]
    flow.output(_lines(DRAFT_MISSING), 0.05)
    actions = flow.exited(ExitStatus(1), 0.06)
    assert _kinds(actions) == [FellBack, StageChanged, Spawn]
    assert actions[-1] == Spawn(spec.fallback_argv, 1)
    assert "fam-draft.gguf" in actions[0].reason and "without speculation" in actions[0].reason
    assert store.recorded == []  # not blamed yet: the start without it must work first
    assert not flow.speculating and flow.current_argv == spec.fallback_argv
    # The fallback crashes too: exactly once means no third start, and the drafter was not
    # the cause, so it is not recorded.
    flow.spawned(0.07)
    again = flow.exited(ExitStatus(1), 0.1)
    assert _kinds(again) == [Crashed, StageChanged] and flow.stage == FAILED
    assert store.recorded == []


def test_drafter_is_recorded_when_the_start_without_it_works():
    store = _Store()
    spec = _spec()
    flow = LaunchFlow(spec, broken=store)
    flow.start(0.0)
    crashed = flow.exited(ExitStatus(1), 0.06)
    ready = flow.health(200, 0.5)
    assert store.recorded == [(BIN, spec.drafter_key, crashed[0].cause.sentence)]
    assert _kinds(ready)[-1] is Notice and "left out from now on" in ready[-1].text


def test_fallback_then_ready():
    flow = LaunchFlow(_spec(), broken=_Store())
    flow.start(0.0)
    flow.exited(ExitStatus.from_returncode(-6), 0.5)
    assert flow.health(None, 0.6) == []
    assert flow.health(503, 0.7) == [StageChanged(LOADING)]
    ready = flow.health(200, 0.9)
    assert ready[0] == StageChanged(READY) and ready[1] == Ready("http://127.0.0.1:8080", 0.9)
    assert flow.fallback_reason and flow.cause is None


@pytest.mark.parametrize("source, eligible", [
    # What the user chose is never dropped: the resolver marks it ineligible
    # (tests/test_resolver.py checks each source), so the spec has no fallback argv.
    (EXPLICIT, False), (USER_ARGS, False),
    # Auto sources fall back...
    (AUTO_MTP, True), (AUTO_COMPANION, True), (AUTO_NGRAM, True),
    # ...but only through a fallback argv: an auto decision launched without one stays down.
    (AUTO_MTP, False),
])
def test_only_an_eligible_spec_falls_back(source, eligible):
    store = _Store()
    spec = _spec(source, eligible=eligible)
    assert spec.fallback_eligible == eligible
    flow = LaunchFlow(spec, broken=store)
    flow.start(0.0)
    flow.output(_lines(DRAFT_MISSING), 0.05)
    actions = flow.exited(ExitStatus(1), 0.06)
    if eligible:
        assert _kinds(actions) == [FellBack, StageChanged, Spawn]
        assert actions[-1] == Spawn(spec.fallback_argv, 1) and flow.stage == STARTING
        assert actions[0].cause.kind == crash.DRAFT_LOAD
    else:
        assert _kinds(actions) == [Crashed, StageChanged] and flow.stage == FAILED
        assert actions[0].cause.kind == crash.DRAFT_LOAD and flow.attempt == 0
    assert store.recorded == []  # blamed only once a start without it works


def test_no_fallback_after_ready_after_a_user_stop_or_after_the_window():
    after_ready = LaunchFlow(_spec(), broken=_Store())
    after_ready.start(0.0)
    after_ready.health(200, 0.1)
    actions = after_ready.exited(ExitStatus.from_returncode(-9), 5.0)
    assert _kinds(actions) == [Crashed, StageChanged] and actions[0].cause.kind == crash.KILLED

    stopped = LaunchFlow(_spec(), broken=_Store())
    stopped.start(0.0)
    assert stopped.stop() == [StageChanged(STOPPING), Terminate()]
    assert stopped.stop() == []  # a second click changes nothing
    assert stopped.exited(ExitStatus.from_returncode(-15), 0.2) == [StageChanged(STOPPED), Stopped()]
    assert stopped.exited(ExitStatus(1), 0.3) == []

    late = LaunchFlow(_spec(), broken=_Store(), startup_window=180.0)
    late.start(0.0)
    late.spawned(0.0)
    assert _kinds(late.exited(ExitStatus(1), 181.0)) == [Crashed, StageChanged]

    clean = LaunchFlow(_spec(), broken=_Store())
    clean.start(0.0)
    assert _kinds(clean.exited(ExitStatus(0), 0.1)) == [Crashed, StageChanged]


def test_a_record_that_cannot_be_written_does_not_stop_the_fallback():
    flow = LaunchFlow(_spec(), broken=_Store(fail=True))
    flow.start(0.0)
    actions = flow.exited(ExitStatus(1), 0.1)
    assert _kinds(actions) == [FellBack, StageChanged, Spawn]
    ready = flow.health(200, 0.5)
    assert _kinds(ready)[:2] == [StageChanged, Ready] and "Permission denied" in ready[-1].text


def test_missing_binary_is_a_failure_with_a_next_step():
    flow = LaunchFlow(_spec())
    flow.start(0.0)
    actions = flow.spawn_failed("No such file or directory", 0.01)
    assert _kinds(actions) == [Crashed, StageChanged]
    cause = actions[0].cause
    assert cause.kind == crash.FAILED_TO_START and "No such file" in cause.sentence and "install" in cause.next_step


def test_vocab_mismatch_and_unused_gpu_are_notices_once():
    flow = LaunchFlow(_spec(backend="cuda"))
    flow.start(0.0)
    lines = ["W ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected",
             "E spec common_specu: the target and draft vocabs are not compatible",
             "E srv    load_model: failed to initialize speculative decoding context: draft model vocab type must match"]
    actions = flow.output(lines, 0.1)
    assert [a.text for a in actions if isinstance(a, Notice)] == [crash.SPECULATION_OFF_WARNING]
    assert not any(isinstance(a, Notice) for a in flow.output(lines, 0.2))
    ready = flow.health(200, 0.3)
    notices = [a.text for a in ready if isinstance(a, Notice)]
    assert len(notices) == 1 and "CUDA engine runs on the CPU" in notices[0] and "failed to initialize CUDA" in notices[0]


def test_listening_line_asks_for_health_at_once():
    flow = LaunchFlow(_spec())
    flow.start(0.0)
    actions = flow.output(["I srv  llama_server: listening on http://127.0.0.1:8080"], 0.1)
    assert launch_flow.PollHealth() in actions


def test_stall_watchdog_reports_once_and_rearms_on_output():
    flow = LaunchFlow(_spec(), stall_after=30.0)
    flow.start(0.0)
    flow.spawned(0.0)
    assert flow.tick(29.0) == []
    assert flow.tick(31.0) == [Stalled(31.0)]
    assert flow.tick(60.0) == []
    flow.output(["I still loading"], 61.0)
    assert flow.tick(92.0) == [Stalled(31.0)]
    flow.health(200, 93.0)
    assert flow.tick(500.0) == []


def test_output_tail_is_bounded():
    flow = LaunchFlow(_spec())
    flow.start(0.0)
    flow.output([f"line {i}" for i in range(10_000)], 0.1)
    assert len(flow.tail) == launch_flow.TAIL_LINES and flow.tail[-1] == "line 9999"


# ------------------------------------------------------------------ the broken-drafter record
def test_record_is_per_engine_identity_and_survives_a_restart(tmp_path):
    engine = tmp_path / "llama-server"
    engine.write_bytes(b"v1")
    store = BrokenDrafters(tmp_path / "data" / "broken.json")
    store.record(engine, "draft-simple|/m/d.gguf|1|2", "could not load")
    assert BrokenDrafters(store.path).broken_for(engine) == {"draft-simple|/m/d.gguf|1|2"}
    assert not list(store.path.parent.glob("*.tmp"))
    store.record(engine, "draft-simple|/m/d.gguf|1|2", "again")  # no duplicates
    assert len(store.entries()) == 1
    engine.write_bytes(b"v2 is a new build")  # size and mtime change: a new chance
    assert BrokenDrafters(store.path).broken_for(engine) == frozenset()
    assert engine_build_key(engine).startswith(str(engine.resolve()))
    assert store.forget() == 1 and store.entries() == []


def test_corrupt_record_is_set_aside_and_reported(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("{not json", encoding="utf-8")
    store = BrokenDrafters(path)
    assert store.broken_for(tmp_path / "llama-server") == frozenset()
    assert store.problem and "set aside" in store.problem
    aside = list(tmp_path.glob("broken.json.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_text() == "{not json"
    store.record(tmp_path / "llama-server", "k", "r")
    assert json.loads(path.read_text())["entries"][0]["drafter"] == "k"


def test_record_lives_in_the_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DRAFTWISE_DATA_DIR", str(tmp_path / "d"))
    assert BrokenDrafters().path == tmp_path / "d" / "broken-drafters.json"


def test_kv_cache_type_the_heads_cannot_take():
    lines = ["E llama_init_from_model: K cache type q8_0 with block size 32 does not divide n_embd_head_k=16",
             "E srv    load_model: failed to load model, '/m/glm.gguf'",
             "E srv    load_model: exiting due to model loading error"]
    cause = crash.classify(ExitStatus(1), lines)
    assert cause.kind == crash.KV_CACHE_TYPE and "(q8_0)" in cause.sentence and "Auto" in cause.next_step


# ------------------------------------------------------------------ a drafter that kills a serving engine
# As the pinned engine printed it (900-token model, 800-token draft, first request; gdb
# present), and the same frames as glibc's backtrace_symbols writes them without gdb.
SUB_BATCH_ABORT = """\
I srv  llama_server: listening on http://127.0.0.1:55001
I slot launch_slot_: id  3 | task 0 | processing task, is_child = 0
/src/llama.cpp/common/common.cpp:2216: get_sub_batch: failed to add token 896 at index 0 (error -2, n = 1)
#1  0x00007f1efa34e6fb in ggml_print_backtrace () from /e/libggml-base.so.0
#2  0x00007f1efa34e84e in ggml_abort () from /e/libggml-base.so.0
#3  0x00007f1efa01d828 in common_batch::get_sub_batch(int, int) () from /e/libllama-common.so.0
#4  0x00007f1efa0f814f in common_speculative_impl_draft_simple::draft(std::vector<common_speculative_draft_params, std::allocator<common_speculative_draft_params> >&) () from /e/libllama-common.so.0
#5  0x00007f1efa0e5b59 in common_speculative_draft(common_speculative*) () from /e/libllama-common.so.0"""

SPEC_SEGV_GLIBC = """\
I srv  llama_server: listening on http://127.0.0.1:55001
/e/libggml-base.so.0(+0x1a6fb) [0x7f1efa34e6fb]
/e/libllama-common.so.0(_ZN36common_speculative_impl_draft_eagle35draftERSt6vectorI31common_speculative_draft_paramsSaIS1_EE+0x2af) [0x7f1efa0f814f]
/e/libllama-server-impl.so(_ZN19server_context_impl10pre_decodeEv+0x44) [0x7f1efa96b2a4]"""

NOT_SPEC_SEGV = """\
I srv  llama_server: listening on http://127.0.0.1:55001
I common_speculative_init_result: loading draft model '/m/fam-draft.gguf'
#3  0x00007f1efa01d828 in llama_decode () from /e/libllama.so.0
#4  0x00007f1efa0f814f in server_context_impl::update_slots() () from /e/libllama-server-impl.so"""


@pytest.mark.parametrize("log, words", [
    (SUB_BATCH_ABORT, "the model wrote token 896, which the draft's vocabulary lacks"),
    (SPEC_SEGV_GLIBC, "inside its speculative decoding"),
])
def test_a_serving_engine_killed_inside_speculation_is_a_drafter_crash(log, words):
    cause = classify(ExitStatus.from_returncode(-6), _lines(log), speculation=True, after_ready=True)
    assert cause.kind == crash.DRAFTER_CRASH and words in cause.sentence and cause.speculation_related
    # One next step for either evidence: run without the drafter, or one that knows the tokens.
    assert str(cause.next_step) == ("Start without this drafter, or choose a draft model whose vocabulary "
                                    "covers the model's.")
    if "get_sub_batch" in log:
        assert cause.evidence.startswith("get_sub_batch: failed to add token 896")


def test_other_crashes_while_serving_are_not_the_drafter():
    cause = classify(ExitStatus.from_returncode(-11), _lines(NOT_SPEC_SEGV), speculation=True, after_ready=True)
    assert cause.kind == crash.SEGFAULT
    # Without speculative flags nothing is blamed on a drafter.
    assert classify(ExitStatus.from_returncode(-6), _lines(SUB_BATCH_ABORT), after_ready=True).kind != crash.DRAFTER_CRASH


def test_drafter_crash_while_serving_relaunches_once_and_records_at_once():
    store = _Store()
    spec = _spec()
    flow = LaunchFlow(spec, broken=store)
    flow.start(0.0)
    flow.spawned(0.01)
    flow.health(200, 0.5)
    flow.output(_lines(SUB_BATCH_ABORT), 400.0)  # long after the startup window
    actions = flow.exited(ExitStatus.from_returncode(-6), 400.1)
    assert _kinds(actions) == [FellBack, Notice, StageChanged, Spawn]
    assert actions[-1] == Spawn(spec.fallback_argv, 1)
    assert "fam-draft.gguf made the engine stop while it was serving" in actions[0].reason
    assert actions[0].cause.kind == crash.DRAFTER_CRASH
    assert store.recorded == [(BIN, spec.drafter_key, actions[0].cause.sentence)]
    assert "left out from now on" in actions[1].text
    ready = flow.health(200, 401.0)
    assert _kinds(ready) == [StageChanged, Ready] and len(store.recorded) == 1  # not twice
    # Exactly once: a second crash, even the same one, is reported, not relaunched.
    flow.output(_lines(SUB_BATCH_ABORT), 402.0)
    again = flow.exited(ExitStatus.from_returncode(-6), 402.1)
    assert _kinds(again) == [Crashed, StageChanged] and flow.stage == FAILED


def test_a_forced_drafter_that_kills_a_serving_engine_is_reported_not_dropped():
    store = _Store()
    flow = LaunchFlow(_spec(EXPLICIT, eligible=False), broken=store)
    flow.start(0.0)
    flow.health(200, 0.5)
    flow.output(_lines(SUB_BATCH_ABORT), 10.0)
    actions = flow.exited(ExitStatus.from_returncode(-6), 10.1)
    assert _kinds(actions) == [Crashed, StageChanged]
    assert actions[0].cause.kind == crash.DRAFTER_CRASH and store.recorded == []
