""""Check this machine": prove the engine runs here, on a tiny model we generate.

Each step is reported as it finishes, so the CLI and the window can show progress. The
check never needs a model of the user's: a few-hundred-KB random-weight llama is written
into the cache and launched for real, and a quantized one (Q4_0) through the launch flow with
the engine-fix record, so a CPU feature that faults on this machine (AMX kernels that stop
with an illegal instruction in some virtual machines) is met here, once, and switched off
for every model before the user's first launch (core/launch/fixes.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from draftwise.core import paths
from draftwise.core.check import check_models
from draftwise.core.kinds import Backend, MtpMode
from draftwise.core.messages import Text, msg
from draftwise.core.readable import human_bytes


@dataclass(frozen=True)
class CheckStep:
    title: Text
    status: str  # ok | fail | info
    detail: Text  # a message, or an error's own text


_GPU_LINE = re.compile(r"using device (\w+)")


def tiny_model_path(kind: str = "llama") -> Path:
    return paths.cache_dir() / "check" / f"draftwise-check-tiny-{kind}.gguf"


def write_check_model(kind: str = "llama") -> Path:
    """Write (or reuse) a tiny model: "llama", "q4_0" (the llama with Q4_0 matrices), or "mtp"
    (glm4moe with an MTP head).

    Pure Python (`check_models`), so the frozen app, without numpy or gguf-py, can write it."""
    path = tiny_model_path(kind)
    if not path.is_file():
        if kind == "mtp":
            check_models.write_mtp(path, name="draftwise-check-mtp")
        elif kind == "llama":
            check_models.write_llama(path, name="draftwise-check")
        elif kind == "q4_0":
            check_models.write_llama(path, name="draftwise-check-q4_0", dtype="Q4_0")
        else:
            raise ValueError(f"kind must be 'llama', 'q4_0' or 'mtp', not {kind!r}")
    return path


def run_check(prompt: str = "Hello", configured_engine: str | None = None) -> Iterator[CheckStep]:
    from draftwise.core.engines import discovery
    from draftwise.core.gguf import reader as gguf
    from draftwise.core.launch import headless

    try:
        model = write_check_model()
        info = gguf.read_model(model)
    except (OSError, gguf.GGUFError) as exc:
        yield CheckStep(msg("A tiny test model"), "fail", str(exc))
        return
    yield CheckStep(msg("A tiny test model"), "ok",
                    msg("written ({size}): it only proves the engine works, its words are nonsense",
                        size=human_bytes(info.size_bytes)))

    engine = discovery.best_engine(configured_engine)
    if engine is None:
        found = discovery.find_engines(configured_engine)
        why = "; ".join(str(e.problem) for e in found) or msg("none installed")
        yield CheckStep(msg("The engine that runs models"), "fail",
                        msg("not installed or not working ({why}). Press Install engine, or run "
                            "`draftwise engine install` (10–40 minutes, once).", why=why))
        return
    yield CheckStep(msg("The engine that runs models"), "ok", _engine_words(engine.backend))

    try:
        server = headless.serve(_launch(engine, model, mtp=MtpMode.OFF))
    except (OSError, ValueError) as exc:  # PrepareError / LaunchError are ValueErrors
        yield CheckStep(msg("Starting a model"), "fail", str(exc))
        return
    try:
        yield from _exercise(server, engine, prompt)
    finally:
        # Stop even when the caller stops iterating early: never leave an engine behind.
        code = server.stop()
    yield CheckStep(msg("Stopping it"), "ok" if code == 0 else "info",
                    msg("stopped; nothing is left running") if code == 0 else
                    msg("stopped (exit code {code}); nothing is left running", code=code))
    yield from _check_quantized(engine, prompt)
    yield from _check_speculation(engine)


def _engine_words(backend: str):
    if backend == Backend.CPU:
        return msg("installed; it runs models on the processor")
    return msg("installed; it can use a graphics card ({backend})", backend=backend)


def _launch(engine, model: Path, *, mtp: MtpMode, fixes=None):
    """The launch the window would make for `model` on this engine (the one builder,
    core/launch/prepare.py), with a small context: the check proves the engine, not memory.
    `fixes`: the engine-fix record whose remembered fixes apply (as on every launch path)."""
    from draftwise.core.engines import capabilities
    from draftwise.core.launch import launch_spec, prepare, session
    from draftwise.core.machine import hardware
    from draftwise.core.planning import planner

    caps = capabilities.capabilities(engine.binary)
    machine = hardware.inventory(engine.binary)
    request = prepare.Request(model=model, mtp=mtp, prefs=planner.PlanPrefs(ctx=CHECK_CONTEXT))
    # The launch session with only the engine-fix record: the check's own generated models
    # have no rung, broken drafter or measurement of the user's to honour.
    planned = session.plan_launch(request, session.Engine(engine.binary, caps, engine.backend), machine,
                                  session.Records(fixes=fixes.for_machine(machine) if fixes is not None else None))
    return planned.spec(launch_spec.any_free_port())


CHECK_CONTEXT = 512  # tokens: enough for the check's prompt and answer


def _exercise(server, engine, prompt: str) -> Iterator[CheckStep]:
    from draftwise.core.launch import headless

    try:
        seconds = server.wait_ready(timeout=120)
    except headless.EngineError as exc:
        yield CheckStep(msg("Starting a model"), "fail", str(exc))
        return
    yield CheckStep(msg("Starting a model"), "ok", msg("ready in {seconds} s", seconds=f"{seconds:.1f}"))
    try:
        result = server.complete(prompt, n_predict=8)
    except (headless.EngineError, OSError, ValueError) as exc:
        yield CheckStep(msg("Writing text"), "fail", str(exc))
        return
    timings = result.get("timings") or {}
    speed = timings.get("predicted_per_second")
    tokens = result.get("tokens_predicted", "?")
    if isinstance(speed, int | float):
        detail = msg("{tokens} word pieces at {speed} per second", tokens=tokens, speed=f"{speed:.0f}")
    else:
        detail = msg("{tokens} word pieces", tokens=tokens)
    yield CheckStep(msg("Writing text"), "ok", detail)
    devices = sorted(set(_GPU_LINE.findall(server.log_text())))
    if devices:
        yield CheckStep(msg("Graphics card"), "ok", msg("used: {devices}", devices=", ".join(devices)))
    elif engine.backend in (Backend.CPU, Backend.UNKNOWN):
        yield CheckStep(msg("Graphics card"), "info",
                        msg("not used: this engine runs models on the processor"))
    else:
        yield CheckStep(msg("Graphics card"), "fail",
                        msg("not used, although this engine could use one ({backend}); check the "
                            "graphics driver", backend=engine.backend))


def _check_quantized(engine, prompt: str) -> Iterator[CheckStep]:
    """A quantized model, started through the launch flow with the engine-fix record: where a
    CPU feature faults (the AMX kernels), the flow starts it once more without it and the fix
    is remembered for this machine and engine build — every later launch starts with it."""
    from draftwise.core.launch import headless, session
    from draftwise.core.machine import hardware

    title = msg("Quantized models")
    try:
        fixes = session.Records.load(hardware.inventory(engine.binary)).fixes
        spec = _launch(engine, write_check_model("q4_0"), mtp=MtpMode.OFF, fixes=fixes)
    except (OSError, ValueError) as exc:
        yield CheckStep(title, "fail", str(exc))
        return
    run = headless.HeadlessLaunch(spec, fixes=fixes)
    answer: dict | None = None
    problem: Text | None = None
    try:
        run.start()
        if run.wait_ready(120):
            try:
                answer = headless.complete(run.url, spec.api_key, prompt, n_predict=4)
            except (headless.EngineError, OSError, ValueError) as exc:
                problem = str(exc)
    finally:
        run.stop()
    if answer is None:
        why = problem or (run.flow.cause.sentence if run.flow.cause is not None else msg("it was not ready in time"))
        yield CheckStep(title, "fail", msg("a small quantized model did not run: {why}", why=why))
        return
    tokens = answer.get("tokens_predicted", "?")
    if run.flow.fix is not None:
        yield CheckStep(title, "info", msg("{fix} Then a small quantized model ran ({tokens} word pieces).",
                                           fix=run.flow.fix.message, tokens=tokens))
    else:
        yield CheckStep(title, "ok", msg("a small quantized model runs ({tokens} word pieces)", tokens=tokens))


def _check_speculation(engine) -> Iterator[CheckStep]:
    """MTP auto on a tiny model with a head: the resolver's choice, run for real."""
    from draftwise.core.engines.spec_types import DRAFT_MTP
    from draftwise.core.launch import headless

    try:
        path = write_check_model("mtp")
        spec = _launch(engine, path, mtp=MtpMode.AUTO)
    except (OSError, ValueError) as exc:
        yield CheckStep(msg("Faster answers (speculation)"), "fail", msg("could not prepare the MTP test: {error}", error=str(exc)))
        return
    if spec.spec.spec_type != DRAFT_MTP:
        yield CheckStep(msg("Faster answers (speculation)"), "fail", msg("the engine does not run MTP: {notes}",
                                                        notes=" ".join(map(str, spec.spec.notes))))
        return
    try:
        server = headless.serve(spec)
    except headless.EngineError as exc:
        yield CheckStep(msg("Faster answers (speculation)"), "fail", msg("MTP did not start: {error}", error=str(exc)))
        return
    try:
        server.wait_ready(timeout=120)
        timings = server.complete("Hello", n_predict=16).get("timings") or {}
    except (headless.EngineError, OSError, ValueError) as exc:
        yield CheckStep(msg("Faster answers (speculation)"), "fail", msg("MTP did not start: {error}", error=str(exc)))
        return
    finally:
        server.stop()
    drafted = timings.get("draft_n") or 0
    if drafted > 0:
        yield CheckStep(msg("Faster answers (speculation)"), "ok",
                        msg("works: the model's built-in helper guessed {drafted} word pieces ahead "
                            "(a real model gets many of them right)", drafted=drafted))
    else:
        yield CheckStep(msg("Faster answers (speculation)"), "fail", msg("the engine started with MTP but drafted nothing"))
