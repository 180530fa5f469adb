"""A corpus of the sentences core produces, from real calls on tiny fixtures.

The resolver, planner, crash classifier, launch flow, launch settings, prepare, settings and
broken-drafter record are run over a set of cases that reach most of their sentences. Tests
use it twice: the English of every item must stay byte for byte what it was
(`tests/data/core_english.txt`), and every item must be translatable in the window.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from draftwise.core.kinds import Backend, EngineKind, EngineSource, MtpMode
from draftwise.testing.tinydrafts import eagle3_draft
from draftwise.testing.tinymodels import (
    TinyModel,
    draft_model,
    mtp_model,
    write_tiny_model,
)


def _companion_folder(folder: Path) -> tuple[Path, Path]:
    t = TinyModel(n_layer=6, n_embd=128, n_ff=256)
    target = write_tiny_model(folder / "Tiny-7B-Q8_0.gguf", t)[0]
    draft = write_tiny_model(folder / "Tiny-draft.gguf", draft_model(t, n_layer=1, n_embd=32, n_ff=64))[0]
    return target, draft


def _message(exc: Exception) -> Any:
    """What an error says: its Message when it carries one, else its text."""
    return getattr(exc, "message", None) or str(exc)


class _Store:
    """A broken-drafter record that remembers or fails to write."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    def record(self, binary: Path, key: str, reason: str) -> None:
        if self.fail:
            raise PermissionError(13, "Permission denied")


def core_sentences(folder: Path) -> list[Any]:  # noqa: PLR0915 - one long list of cases
    """Every sentence (Message or str) the cases produce, in a stable order."""
    from draftwise.core import settings
    from draftwise.core.engines import capabilities
    from draftwise.core.gguf import reader as gguf
    from draftwise.core.launch import (
        crash,
        gpu_check,
        launch_flow,
        launch_spec,
        mlx,
        prepare,
        session,
        vllm,
    )
    from draftwise.core.machine.hardware import GB, Gpu, Machine
    from draftwise.core.planning import model_shape, planner, weight_table
    from draftwise.core.speculation import resolver

    caps = capabilities.pinned_caps()
    out: list[Any] = []
    target, draft = _companion_folder(folder)
    other = write_tiny_model(folder / "Tiny-other-draft.gguf",
                             draft_model(TinyModel(), vocab="other", n_layer=1, n_embd=32, n_ff=64))[0]
    (folder / "Tiny-broken-draft.gguf").write_bytes(b"GGUF\x03\x00\x00\x00")
    alone = write_tiny_model(folder / "alone" / "Lonely-model.gguf", TinyModel())[0]
    mtp = write_tiny_model(folder / "mtp" / "tiny-glm4moe-mtp-F32.gguf", mtp_model())[0]
    info = gguf.read_model(target)
    key = resolver.drafter_key(draft, "draft-simple")
    option_sets = [
        resolver.SpecOptions(), resolver.SpecOptions(mtp=MtpMode.OFF), resolver.SpecOptions(draft=draft),
        resolver.SpecOptions(backend=EngineKind.VLLM), resolver.SpecOptions(extra_args=("--spec-type", "ngram-mod")),
        resolver.SpecOptions(extra_args=("--spec-type", "draft-simple"), draft=draft),
        resolver.SpecOptions(extra_args=("-sm", "tensor")), resolver.SpecOptions(broken=frozenset({key})),
        resolver.SpecOptions(broken=frozenset({key}), ngram_when_no_drafter=True),
        # errors
        resolver.SpecOptions(mtp="on"), resolver.SpecOptions(backend=EngineKind.VLLM, draft=draft),
        resolver.SpecOptions(backend=EngineKind.VLLM, mtp=MtpMode.OFF), resolver.SpecOptions(mtp=MtpMode.OFF, draft=draft),
        resolver.SpecOptions(extra_args=("--spec-type",)), resolver.SpecOptions(extra_args=("--spec-type", "nope")),
        resolver.SpecOptions(extra_args=("-m", "x.gguf")), resolver.SpecOptions(extra_args=("-md", "x.gguf")),
        resolver.SpecOptions(draft=folder / "missing.gguf"), resolver.SpecOptions(draft=folder / "alone"),
        resolver.SpecOptions(draft=target), resolver.SpecOptions(draft=other),
        resolver.SpecOptions(draft=folder / "Tiny-broken-draft.gguf"),
    ]
    decisions = []
    for model_path, sets in ((target, option_sets), (alone, option_sets[:1]), (mtp, option_sets[:2])):
        for opts in sets:
            try:
                d = resolver.resolve(gguf.read_model(model_path), opts, caps)
            except resolver.ResolveError as exc:
                out.append(_message(exc))
                continue
            decisions.append((model_path, d))
            out += [*d.notes, *d.warnings]
    mtp_info = gguf.read_model(mtp)
    broken_mtp = resolver.drafter_key(mtp, "draft-mtp")
    out += resolver.resolve(mtp_info, resolver.SpecOptions(broken=frozenset({broken_mtp})), caps).notes
    no_mtp = replace(caps, mtp_archs=frozenset())
    out += resolver.resolve(mtp_info, resolver.SpecOptions(), no_mtp).notes
    out += resolver.resolve(replace(mtp_info, mtp_head_present=False), resolver.SpecOptions(), caps).notes

    # The planner: a described 8B model on several machines.
    e, n, vocab = 4096, 32, 128256
    big = replace(info, architecture="llama", block_count=n + 1, embedding_length=e, head_count=32,
                  head_count_kv=8, key_length=128, value_length=128, context_length=131072,
                  feed_forward_length=14336, tokenizer=replace(info.tokenizer, vocab_size=vocab),
                  nextn_predict_layers=1, mtp_head_present=True)
    shape = model_shape.shape_of(big, {})
    emb = int(vocab * e * 4.5 / 8)
    per = int((4.6 * GB - 2 * emb) / (n + 1))

    def gpu(vram: float, ram: float, free: float | None = None) -> Machine:
        f = int((vram - 0.5 if free is None else free) * GB)
        return Machine(int(ram * GB), int(ram * GB), [Gpu(0, Backend.CUDA, "RTX 4060", "GPU-0", int(vram * GB), f,
                                                          device="CUDA0")], "Linux")

    wt = weight_table.WeightTable(tuple([per] * (n + 1)), (0,) * (n + 1), emb, emb, 0, (per,))
    none = resolver.SpecDecision(None, None, resolver.NONE, False)
    mtp_spec = resolver.SpecDecision("draft-mtp", None, resolver.AUTO_MTP, True)
    cases = [
        (none, gpu(8, 16), planner.PlanPrefs()),
        (none, gpu(12, 32), planner.PlanPrefs(slots=4)),
        (none, gpu(6, 32), planner.PlanPrefs()),
        (none, gpu(4, 4), planner.PlanPrefs()),
        (none, gpu(8, 16, free=0.5), planner.PlanPrefs()),
        (none, gpu(8, 16), planner.PlanPrefs(ctx=262144, kv_type="f16")),
        (mtp_spec, gpu(8, 16), planner.PlanPrefs(slots=2)),
        (replace(mtp_spec, source=resolver.EXPLICIT), gpu(8, 16), planner.PlanPrefs()),
        (none, Machine(8 * GB, 8 * GB, [], "Linux"), planner.PlanPrefs(cpu_only=True)),
        (none, Machine(3 * GB, 3 * GB, [], "Linux"), planner.PlanPrefs(slots=4)),
        (none, gpu(2, 64), planner.PlanPrefs(slots=2, kv_type=None)),
    ]
    for spec, machine, prefs in cases:
        p = planner.plan(big, spec, machine, prefs, shape=shape, weights=wt)
        out += [*p.reasons, *p.warnings]
    for _path, d in decisions:
        p = planner.plan(info, d, Machine(64 * 2**20, 64 * 2**20, [], "Linux"), planner.PlanPrefs())
        out += [*p.reasons, *p.warnings]
        p = planner.plan(info, d, Machine(8 * GB, 8 * GB, [], "Linux"), planner.PlanPrefs(ctx=1 << 20))
        out += [*p.reasons, *p.warnings]
    try:
        planner.plan(gguf.read_model(alone), none, Machine(8 * GB, 8 * GB, [], "Linux"),
                     planner.PlanPrefs(kv_type="q4_0"))
    except ValueError as exc:
        out.append(_message(exc))

    # Crashes: every cause with its next step.
    logs = [
        "E llama_init: failed to load draft model, '/m/broken-missing.gguf'",
        "E llama_model_load: error loading model: check_tensor_dims: tensor 'x' has wrong shape\n"
        "E llama_init: failed to load draft model, '/m/d.gguf'",
        "E cudaMalloc failed: out of memory\nE failed to load draft model, '/m/d.gguf'",
        "E context type MTP requested but model doesn't contain MTP layers",
        "E GGML_ASSERT(layer.nextn.eh_proj && \"MTP block missing nextn.eh_proj\") failed",
        "E done_getting_tensors: wrong number of tensors; expected 30, got 27",
        "E couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 8080",
        "E couldn't bind HTTP server socket",
        "./llama-server: error while loading shared libraries: libcudart.so.12: cannot open",
        "E cache type q4_0 does not divide n_embd_head",
        "E does not divide n_embd_head",
        "E cudaMalloc failed: out of memory", "E hipMalloc failed: out of memory",
        "E vk::Device::allocateMemory: ErrorOutOfDeviceMemory", "terminate: std::bad_alloc",
        "E ggml: failed to allocate buffer",
        "E GGML_ASSERT(n_tokens > 0) failed", "E GGML_ABORT", "E llama_model_load: error loading model: bad",
        "E failed to load model",
    ]
    for log in logs:
        c = crash.classify(crash.ExitStatus(1), log.splitlines())
        out += [c.sentence, c.next_step, c.message]
    for status in (None, crash.ExitStatus.from_returncode(-4), crash.ExitStatus(127),
                   crash.ExitStatus.from_returncode(-9), crash.ExitStatus.from_returncode(-11),
                   crash.ExitStatus(0), crash.ExitStatus(3), crash.ExitStatus(0xC0000409),
                   crash.ExitStatus(None, 99)):
        for spec in (False, True):
            for lines in ([], ["I last line"]):
                c = crash.classify(status, lines, speculation=spec)
                out += [c.sentence, c.next_step]
    c = crash.failed_to_start("/opt/llama-server", "No such file or directory")
    out += [c.sentence, c.next_step, crash.SPECULATION_OFF_WARNING,
            gpu_check.check(Backend.CUDA, [], ["failed to initialize CUDA: no device"]).message,
            gpu_check.check(Backend.VULKAN, [], []).message]

    # The launch flow: fallback, the broken-drafter notice, the record that cannot be written.
    binary = Path("/opt/engine/llama-server")
    base = (str(binary), "-m", "/m/fam.gguf", "--host", "127.0.0.1", "--port", "8080")
    for spec_type, path in (("draft-simple", Path("/m/fam-draft.gguf")), ("draft-mtp", None), ("ngram-mod", None)):
        decision = resolver.SpecDecision(spec_type, path, resolver.AUTO_COMPANION, True,
                                         drafter_key=f"{spec_type}|x|1|2", draft_flag="-md")
        argv = decision.argv
        for store in (_Store(), _Store(fail=True)):
            ls = launch_spec.LaunchSpec(
                kind=EngineKind.LLAMA_CPP, binary=binary, model_path=Path("/m/fam.gguf"), argv=base + argv,
                env={}, host="127.0.0.1", port=8080, api_key="k", spec=decision, fallback_argv=base,
                backend=Backend.CUDA)
            flow = launch_flow.LaunchFlow(ls, broken=store)  # type: ignore[arg-type]
            flow.start(0.0)
            flow.output(["E cudaMalloc failed: out of memory"], 1.0)
            for a in flow.exited(crash.ExitStatus(1), 2.0):
                if isinstance(a, launch_flow.FellBack):
                    out.append(a.reason)
            flow.output(["I the target and draft vocabs are not compatible"], 3.0)
            flow.health(200, 4.0)
            out += flow.notices
    flow = launch_flow.LaunchFlow(ls)
    flow.start(0.0)
    flow.spawn_failed("Permission denied", 1.0)
    out += [flow.cause.sentence, flow.cause.next_step] if flow.cause else []

    # Launch settings: GPUs, ports, the network, flags, other backends.
    cuda = [Gpu(0, Backend.CUDA, "RTX 4090", total_bytes=24 * GB), Gpu(1, Backend.CUDA, "Intel iGPU", total_bytes=2 * GB,
                                                                  integrated=True)]
    rocm = [Gpu(0, Backend.ROCM, "RX 7900", total_bytes=24 * GB, gfx_target="gfx1100"),
            Gpu(1, Backend.ROCM, "780M", total_bytes=4 * GB, gfx_target="gfx1103", integrated=True),
            Gpu(2, Backend.ROCM, "RX 6600", total_bytes=8 * GB, gfx_target="gfx1032"),
            Gpu(3, Backend.ROCM, "Old", total_bytes=8 * GB, gfx_target="gfx900")]
    for backend, gpus, chosen, targets in (
        (Backend.CUDA, cuda, None, None), (Backend.VULKAN, cuda, None, None), (Backend.ROCM, rocm, None, {"gfx1100", "gfx1030"}),
        (Backend.ROCM, rocm, [2, 3], {"gfx1030"}), (Backend.ROCM, rocm[3:], None, {"gfx1100"}),
        (Backend.ROCM, rocm[2:3], None, {"gfx1030"}),
    ):
        out += launch_spec.gpu_env(backend, gpus, chosen=chosen, kernel_targets=targets, platform="linux").notes
    out += [launch_spec.network_warning(8080), launch_spec.network_note(8080, ["192.168.1.2", "10.0.0.3"])]
    for args in (("--host", "x"), ("--port", "1"), ("--api-key", "k")):
        try:
            launch_spec.check_owned_flags(args)
        except launch_spec.LaunchError as exc:
            out.append(_message(exc))
    for wanted, pinned in ((70000, False), (None, False)):
        try:
            out.append(launch_spec.choose_port(wanted, pinned=pinned)[1])
        except launch_spec.LaunchError as exc:
            out.append(_message(exc))
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        taken = s.getsockname()[1]
        out.append(launch_spec.choose_port(taken)[1])
        try:
            launch_spec.choose_port(taken, pinned=True)
        except launch_spec.LaunchError as exc:
            out.append(_message(exc))
    mtp_decision = resolver.resolve(mtp_info, resolver.SpecOptions(), caps)
    for fn in (lambda: launch_spec.require_no_speculation(mtp_decision, "vLLM"),
               lambda: launch_spec.llamacpp_launch(binary, info, none, port=8080, network=True, api_key=""),
               lambda: mlx.mlx_launch(binary, info, none, port=8080, network=True) if hasattr(mlx, "mlx_launch") else None,
               lambda: vllm.vllm_launch(binary, info, none, port=8080, network=True, api_key="")
               if hasattr(vllm, "vllm_launch") else None):
        try:
            fn()
        except (launch_spec.LaunchError, TypeError) as exc:
            out.append(_message(exc))

    # Prepare: a drafter given as the model, missing shards.
    eagle = write_tiny_model(folder / "drafters" / "Tiny-eagle3.gguf", eagle3_draft(TinyModel()))[0]
    head = write_tiny_model(folder / "drafters" / "glm-mtp.gguf", mtp_model(), part="mtp")[0]
    split = write_tiny_model(folder / "split" / "Tiny-split.gguf", TinyModel(), split_max_tensors=4)
    split[-1].unlink()
    for path in (eagle, head, split[0]):
        try:
            prepare.read_model(path)
        except prepare.PrepareError as exc:
            out.append(_message(exc))

    # GGUF files that cannot be read, and engines that cannot be used.
    from draftwise.core.engines import discovery

    (folder / "junk.gguf").write_bytes(b"not a model at all, just some bytes here")
    (folder / "old.gguf").write_bytes(b"GGUF\x01\x00\x00\x00" + bytes(32))
    for path in (folder / "nothing-here.gguf", folder / "alone", folder / "junk.gguf", folder / "old.gguf"):
        try:
            prepare.read_model(path)
        except prepare.PrepareError as exc:
            out.append(_message(exc))
    not_exec = folder / "llama-server"
    not_exec.write_text("#!/bin/sh\n")
    not_exec.chmod(0o644)
    out.append(discovery.binary_version(not_exec)[1])
    out.append(discovery.binary_version(folder / "missing-llama-server")[1])
    out += [e.problem for e in discovery.find_engines(str(folder / "no-such-engine")) if e.source == EngineSource.CONFIGURED]

    # Settings problems and the broken-drafter record's.
    conf = folder / "conf"
    conf.mkdir()
    for body in (b"[1, 2]", b"\xff\xfe", b"{not json", json.dumps({"version": 999}).encode()):
        p = conf / "settings.json"
        p.write_bytes(body)
        out.append(settings.load(p, now=0).problem)
    blocked = conf / "blocked"
    blocked.mkdir()
    out.append(settings.load(blocked).problem)
    damaged = session.Records.load(folder=folder / "damaged").broken
    damaged.path.parent.mkdir()
    damaged.path.write_text("{bad")
    unreadable = session.Records.load(folder=folder / "unreadable").broken
    unreadable.path.mkdir(parents=True)  # a folder where the file should be
    for b in (damaged, unreadable):
        b.entries()
        out.append(b.problem)

    # A drafter that kills a serving engine (issue 11): both causes, the relaunch, the notice.
    decision = resolver.SpecDecision("draft-simple", Path("/m/fam-draft.gguf"), resolver.AUTO_COMPANION, True,
                                     drafter_key="draft-simple|x|1|2", draft_flag="-md")
    for line in ("/src/common.cpp:2216: get_sub_batch: failed to add token 896 at index 0 (error -2, n = 1)",
                 "#4  0x00007f1e in common_speculative_impl_draft_simple::draft() () from libllama-common.so"):
        ls = launch_spec.LaunchSpec(
            kind=EngineKind.LLAMA_CPP, binary=binary, model_path=Path("/m/fam.gguf"), argv=base + decision.argv,
            env={}, host="127.0.0.1", port=8080, api_key="k", spec=decision, fallback_argv=base)
        flow = launch_flow.LaunchFlow(ls, broken=_Store())  # type: ignore[arg-type]
        flow.start(0.0)
        flow.health(200, 1.0)
        flow.output([line], 2.0)
        for a in flow.exited(crash.ExitStatus.from_returncode(-6), 3.0):
            if isinstance(a, launch_flow.FellBack):
                out += [a.cause.sentence, a.cause.next_step, a.reason]
        out += flow.notices
    return [s for s in out if s]


def english(items: list[Any], folder: Path) -> list[str]:
    """The English of `items`, with the fixture folder and the time stamps made stable."""
    import re

    text = [str(s).replace(str(folder), "<tmp>") for s in items]
    text = [re.sub(r"corrupt-\d{8}-\d{6}", "corrupt-<time>", t) for t in text]
    text = [re.sub(r"^Port \d+ is in use", "Port <port> is in use", t) for t in text]
    return [re.sub(r"listens on \d+ instead", "listens on <port> instead", t) for t in text]
