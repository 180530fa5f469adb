"""core/serving/serve_flow.py: each served model's failures, from hand-written `/models`
answers (the router's shape: server-models.cpp `get_router_models`) and forwarded lines
(`[%5d] %s`, the instance's port), with no engine and no I/O."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from draftwise.core.engines import args as engine_args
from draftwise.core.launch import crash
from draftwise.core.launch.ladder import Climb, Concessions
from draftwise.core.launch.outcome import FAILED, IDLE, LOADING, READY
from draftwise.core.messages import msg
from draftwise.core.serving import instances, preset
from draftwise.core.serving import serve_flow as sf

BINARY = Path("/opt/llama/llama-server")


def _answer(*entries: tuple[str, dict]) -> dict[str, instances.Instance]:
    """A `/models` answer as the router writes it, read as the drivers read it."""
    body = json.dumps({"object": "list", "data": [{"id": i, "object": "model", "status": s} for i, s in entries]})
    return instances.read(body.encode())


class Broken:
    """A broken-drafter record that keeps what it was told."""

    def __init__(self) -> None:
        self.recorded: list[tuple[Path, str, str]] = []

    def record(self, binary: Path, drafter_key: str, reason) -> None:
        self.recorded.append((binary, drafter_key, str(reason)))


class Rungs:
    """A ladder with one rung, a 16k context; remembers it once that start loads."""

    def __init__(self) -> None:
        self.climbed: list[Concessions] = []
        self.causes: list[crash.Cause] = []
        self.remembered = 0

    def climb(self, cause: crash.Cause, running_argv: tuple[str, ...]):
        self.causes.append(cause)
        c = Concessions(rung="ctx_half", ctx=16384)
        self.climbed.append(c)
        argv = (*running_argv[:-1], "16384")  # its --ctx-size halved
        spec = SimpleNamespace(argv=argv, options=engine_args.read_options(argv[1:]))
        return Climb(spec, c, msg("Out of memory. Starting it again with a 16k context."), SimpleNamespace(plan=None))

    def succeeded(self):
        self.remembered += 1
        return [msg("gamma starts with a 16k context from now on.")]


ALPHA_ARGV = ("llama-server", "-m", "/m/alpha.gguf", "--spec-type", "draft-simple", "-md", "/m/alpha-draft.gguf")
BETA_ARGV = ("llama-server", "-m", "/m/beta.gguf")
GAMMA_ARGV = ("llama-server", "-m", "/m/gamma.gguf", "--ctx-size", "32768")


def _section(name: str, argv: tuple[str, ...]) -> preset.Section:
    """The section of a launch written here as argv (a test may read argv; app code reads options)."""
    return preset.section(name, engine_args.read_options(argv[1:]))


def _flow(rungs: Rungs, broken: Broken) -> sf.ServeFlow:
    return sf.ServeFlow([
        sf.ServedFacts("alpha", Path("/m/alpha.gguf"), _section("alpha", ALPHA_ARGV), ALPHA_ARGV,
                       fallback=_section("alpha", ALPHA_ARGV[:3]), drafter_key="/m/alpha-draft.gguf"),
        sf.ServedFacts("beta", Path("/m/beta.gguf"), _section("beta", BETA_ARGV), BETA_ARGV),
        sf.ServedFacts("gamma", Path("/m/gamma.gguf"), _section("gamma", GAMMA_ARGV), GAMMA_ARGV,
                       ladder=lambda: rungs),
    ], binary=BINARY, broken=broken)


def test_a_model_killed_by_its_drafter_is_loaded_once_more_without_it_and_the_others_keep_serving() -> None:
    broken = Broken()
    flow = _flow(Rungs(), broken)
    first = flow.models(_answer(("alpha", {"value": "loading", "args": ["llama-server", "--port", "55001"]}),
                                ("beta", {"value": "loaded", "args": ["llama-server", "--port", "55002"]})))
    assert [(type(a), a.instance.id, a.instance.state) for a in first] == [
        (sf.StateChanged, "alpha", "loading"), (sf.StateChanged, "beta", "loaded")]
    assert flow.outcomes["alpha"].stage == LOADING and flow.outcomes["beta"].stage == READY
    assert flow.outcomes["gamma"].stage == IDLE and flow.outcomes["alpha"].model == Path("/m/alpha.gguf")

    died = flow.models(_answer(
        ("alpha", {"value": "unloaded", "failed": True, "exit_code": 1, "args": ["llama-server", "--port", "55001"]}),
        ("beta", {"value": "loaded", "args": ["llama-server", "--port", "55002"]})))
    assert [type(a) for a in died] == [sf.StateChanged, sf.ModelFellBack, sf.ModelNotice, sf.Rewrite]
    said = ("alpha stopped at start with its draft model, so it was started again without it. The other models "
            "keep serving.")
    assert str(died[1].reason) == said
    assert str(died[2].text) == ("alpha runs without its draft model from now on; `draftwise broken clear` lets it "
                                 "try again later.")
    assert broken.recorded == [(BINARY, "/m/alpha-draft.gguf", "The served model alpha stopped at start with this "
                                "drafter (exit code 1); it runs without it.")]
    rewrite = died[3]
    assert rewrite.load == "alpha"
    written = preset.parse(rewrite.text)
    assert written["alpha"] == {"model": "/m/alpha.gguf"}  # no speculation left in its section
    assert written["beta"] == {"model": "/m/beta.gguf"} and written["gamma"] == {"model": "/m/gamma.gguf",
                                                                                 "ctx-size": "32768"}
    out = flow.outcomes["alpha"]
    assert (out.stage, out.attempt, str(out.fallback_reason)) == (LOADING, 1, said)
    assert str(flow.done("alpha")) == said and flow.problem("alpha", None) is None
    assert flow.outcomes["beta"].stage == READY  # untouched

    # It dies again without its drafter (the router gives the new start another port): said, no second load.
    again = flow.models(_answer(
        ("alpha", {"value": "unloaded", "failed": True, "exit_code": 1, "args": ["llama-server", "--port", "55003"]}),
        ("beta", {"value": "loaded", "args": ["llama-server", "--port", "55002"]})))
    assert [type(a) for a in again] == [sf.StateChanged, sf.Failed]
    assert str(again[1].problem) == ("alpha stopped while starting (exit code 1). The other models keep serving; "
                                     "the log says why.")
    assert flow.outcomes["alpha"].stage == FAILED and len(broken.recorded) == 1


def test_a_model_out_of_memory_takes_its_ladder_rung_and_remembers_it_once_loaded() -> None:
    rungs = Rungs()
    flow = _flow(rungs, Broken())
    # An instance's Vulkan allocation failure, as the router forwards it (tests/test_crash.py's line).
    flow.add_lines(["[55005] E ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory",
                    "[55002] srv  log_server_r: done request: GET /health 127.0.0.1 200"])
    died = flow.models(_answer(
        ("gamma", {"value": "unloaded", "failed": True, "exit_code": 1, "args": ["llama-server", "--port", "55005"]})))
    assert [type(a) for a in died] == [sf.StateChanged, sf.ModelClimbed, sf.Rewrite]
    assert [c.kind for c in rungs.causes] == [crash.OUT_OF_MEMORY]
    assert str(died[1].reason) == ("gamma: Out of memory. Starting it again with a 16k context. The other models "
                                   "keep serving.")
    assert died[2].load == "gamma"
    assert preset.parse(died[2].text)["gamma"] == {"model": "/m/gamma.gguf", "ctx-size": "16384"}
    out = flow.outcomes["gamma"]
    assert (out.stage, out.attempt, out.concessions.ctx) == (LOADING, 1, 16384)
    assert str(flow.done("gamma")) == str(died[1].reason)

    loaded = flow.models(_answer(("gamma", {"value": "loaded", "args": ["llama-server", "--port", "55006"]})))
    assert [type(a) for a in loaded] == [sf.StateChanged, sf.ModelNotice]
    assert str(loaded[1].text) == "gamma starts with a 16k context from now on."
    flow.models(_answer(("gamma", {"value": "sleeping"})))
    flow.models(_answer(("gamma", {"value": "loaded", "args": ["llama-server", "--port", "55007"]})))
    assert rungs.remembered == 1  # remembered once, not at each wake-up
    assert flow.outcomes["gamma"].stage == READY


def test_a_failure_with_no_fallback_and_no_ladder_is_said_and_nothing_is_loaded() -> None:
    flow = _flow(Rungs(), Broken())
    flow.add_lines(["[55004] E ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory"])
    died = flow.models(_answer(
        ("beta", {"value": "unloaded", "failed": True, "exit_code": 1, "args": ["llama-server", "--port", "55004"]})))
    assert [type(a) for a in died] == [sf.StateChanged, sf.Failed]
    text = str(died[1].problem)
    assert text.startswith("beta could not start: ") and text.endswith(" The other models keep serving.")
    assert flow.outcomes["beta"].cause.kind == crash.OUT_OF_MEMORY
    assert flow.done("beta") is None


def test_a_deleted_model_is_written_out_of_the_preset() -> None:
    flow = _flow(Rungs(), Broken())
    (rewrite,) = flow.removed("beta")
    assert sorted(k for k in preset.parse(rewrite.text) if k != "default") == ["alpha", "gamma"]
    assert rewrite.load is None and flow.removed("beta") == []
    # The router may still list it until it read the file again: nothing is done about it.
    assert flow.models(_answer(("beta", {"value": "loaded"}))) == []
