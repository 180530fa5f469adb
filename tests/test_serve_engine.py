"""`draftwise serve` on the real engine: the router runs each model's section, the real
`openai` and `anthropic` clients get streamed replies by name, a wrong key gets 401 from
both, an automatic drafter that kills its instance is dropped for that model alone, and a
SIGKILLed `draftwise serve` leaves nothing behind with two models loaded.

No fake engine: the provisioned llama-server on tiny real models (app/draftwise/testing).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from argv_checks import argv_options
from draftwise.cli.main import main
from draftwise.core.launch import headless
from draftwise.core.planning import logparse
from draftwise.core.processes import orphans
from draftwise.core.serving import instances
from draftwise.core.speculation.broken import BrokenDrafters
from draftwise.testing import tinymodels as tm
from process_checks import StdoutLines
from test_ladder_engine import _wrapper, cap, kv_heavy  # noqa: F401  (the capped engine and its fixtures)

ROOT = Path(__file__).resolve().parents[1]
KEY = "serve-test-key-0123456789"
GONE_WITHIN_S = 5.0  # the lifeline's "within a second", with slack for two loaded instances on 2 busy cores

pytestmark = [pytest.mark.engine, pytest.mark.skipif(sys.platform == "win32", reason="the Job Object covers Windows")]


@pytest.fixture
def lib(tmp_path: Path) -> Path:
    """alpha with its companion drafter beside it (speculation on), and beta alone."""
    folder = tmp_path / "lib"
    alpha = tm.TinyModel(name="alpha")
    tm.write_tiny_model(folder / "alpha-F32.gguf", alpha)
    tm.write_tiny_model(folder / "alpha-draft-F32.gguf", tm.draft_model(alpha))
    tm.write_tiny_model(folder / "beta" / "beta-F32.gguf", tm.TinyModel(name="beta", seed=7))
    return folder


@pytest.fixture
def box(tmp_path: Path, described_machine) -> Path:
    path = tmp_path / "machine.json"
    path.write_text(json.dumps(described_machine.to_json()))
    return path


class _Serve:
    """`draftwise serve` in a child process, its stdout read on a thread."""

    def __init__(self, engine, lib: Path, box: Path, *args: str, no_ctx: bool = False) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "draftwise.cli.main", "serve", str(lib), "--engine", str(engine.binary),
             "--machine", str(box), *(() if no_ctx else ("--ctx", "512")), "--verbose", *args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "DRAFTWISE_API_KEY": KEY},
        )
        self.lines = StdoutLines(self.proc)
        self.seen = self.lines.seen
        self.url = self.wait_for("ready ").split()[1]

    def wait_for(self, start: str, timeout: float = 120) -> str:
        return self.lines.wait_for(start, timeout)

    def drain(self) -> None:
        self.lines.drain()

    def models(self) -> dict[str, instances.Instance]:
        status, body = headless.request(self.url, KEY, "/models", None, 10.0)
        assert status == 200, body
        return instances.read(body)

    def load_all(self, ids: list[str], timeout: float = 120) -> dict[str, instances.Instance]:
        for ident in ids:
            status, body = headless.request(self.url, KEY, "/models/load", {"model": ident}, 10.0)
            assert status == 200, body
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            now = self.models()
            if all(now[i].state == instances.LOADED for i in ids):
                return now
            assert not any(now[i].state == instances.FAILED for i in ids), now
            time.sleep(0.2)  # polling the router's list with a deadline
        raise AssertionError(f"not all loaded: {self.models()}")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


@dataclass(frozen=True)
class _Engine:
    binary: Path


def _planned(lib: Path, box: Path, engine, capsys) -> dict:
    assert main(["serve", str(lib), "--json", "--engine", str(engine.binary), "--machine", str(box),
                 "--ctx", "512"]) == 0
    return json.loads(capsys.readouterr().out)


def _engine_spellings(source: Path) -> dict[str, str]:
    """Every spelling of every option of the pinned engine → the one it renders an
    instance's argv with (common/preset.cpp `to_args`: the last spelling), from arg.cpp."""
    text = (source / "common" / "arg.cpp").read_text(encoding="utf-8")
    out: dict[str, str] = {}
    for group, negs in re.findall(r'common_arg\(\s*\{([^}]*)\}(?:\s*,\s*\{(\s*"-[^}]*)\})?', text):
        for names in (group, negs):
            spellings = re.findall(r'"(-[^"]+)"', names)
            for s in spellings:
                out[s] = spellings[-1]
    return out


def _options(argv: list[str], spellings: dict[str, str]) -> dict[str, str]:
    """`{option: value}` of an argv (binary first) in the engine's spellings; what the router
    sets on every instance (its address, name, log colours, idle time) left out."""
    router_sets = {"--host", "--port", "--alias", "--log-colors", "--sleep-idle-seconds"}
    opts = argv_options(argv)  # canonical keys, switches as "true"
    named = {spellings.get("--" + k, spellings.get("-" + k, "--" + k)): v for k, v in opts.items()}
    return {k: v for k, v in named.items() if k not in router_sets}


# ------------------------------------------------------------------ the instances run their plan
def test_each_instance_runs_its_own_plan_and_two_loaded_together_stay_within_it(engine, lib, box, capsys,
                                                                                   pinned_source):
    planned = _planned(lib, box, engine, capsys)
    assert [m["id"] for m in planned["models"]] == ["alpha-F32", "beta-F32"]
    assert planned["together"]["models_max"] == 2
    serve = _Serve(engine, lib, box)
    try:
        loaded = serve.load_all(["alpha-F32", "beta-F32"])
        spellings = _engine_spellings(pinned_source)
        for m in planned["models"]:
            inst = loaded[m["id"]]
            assert _options(list(inst.args), spellings) == _options(m["argv"], spellings), m["id"]
        assert "--spec-type" in loaded["alpha-F32"].args and "--spec-type" not in loaded["beta-F32"].args
        serve.drain()
        # Each instance's buffer lines come through the router prefixed with its port.
        totals = {}
        for m in planned["models"]:
            port = loaded[m["id"]].args[loaded[m["id"]].args.index("--port") + 1]
            tag = re.compile(rf"^\s*\|\s*\[\s*{port}\]\s?")
            lines = [tag.sub("", x) for x in serve.seen if tag.match(x)]
            actual = logparse.parse_lines(lines)
            assert actual.lines, f"no buffer lines for {m['id']}"
            # tests/test_plan_engine.py's rule for one launch, for each of the two loaded together
            # (its compute-buffer bound is the planner tests' business: alpha's drafter setup is
            # 16 % over here, on the safe side).
            p, t = m["bytes"], actual.by_component(logparse.TARGET)
            assert abs(p["weights"] - t["weights"]) <= 0.02 * t["weights"], (m["id"], p, t)
            assert abs(p["kv"] - (t["kv"] + t["rs"])) <= 0.02 * (t["kv"] + t["rs"]) + 10240, (m["id"], p, t)
            assert m["planned_bytes"]["RAM"] >= 0.98 * actual.total, (m["id"], m["planned_bytes"], actual.summary())
            totals[m["id"]] = actual.total
        [ram] = planned["together"]["devices"]
        assert sum(totals.values()) <= ram["capacity"]
    finally:
        assert serve.stop() == 0


# ------------------------------------------------------------------ the client libraries
def test_the_real_openai_and_anthropic_clients_get_a_streamed_reply_from_each_model(engine, lib, box, monkeypatch):
    import anthropic
    import openai

    # The clients honour proxy variables: loopback never goes through one.
    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(var, "127.0.0.1,localhost")

    serve = _Serve(engine, lib, box)
    try:
        oa = openai.OpenAI(base_url=serve.url + "/v1", api_key=KEY)
        an = anthropic.Anthropic(base_url=serve.url, api_key=KEY)
        listed = sorted(m.id for m in oa.models.list())
        assert listed == ["alpha-F32", "beta-F32"]
        for ident in listed:
            chunks = list(oa.chat.completions.create(model=ident, messages=[{"role": "user", "content": "Hello"}],
                                                     max_tokens=4, temperature=0, stream=True))
            assert chunks[-1].choices[-1].finish_reason == "length" and chunks[-1].model == ident, (ident, chunks)
            # Greedy (the client's default temperature is 1: a draw), and long enough that some
            # token completes a character: a fresh clone's CI run drew four partial bytes from
            # a tiny model and got no text block at all.
            with an.messages.stream(model=ident, max_tokens=16, extra_body={"temperature": 0},
                                    messages=[{"role": "user", "content": "Hello"}]) as stream:
                events = list(stream)
            # The pinned engine sends `message_start` with the partial result of the first token
            # only (server-task.cpp `to_json_anthropic`: `n_decoded == 1`); a tiny model's first
            # token is often part of a UTF-8 character, which sends no partial, and then the
            # stream starts at `content_block_start` (the real Gemma 3 270M's below has it).
            # The reply itself is whole: its blocks, its stop reason and `message_stop`.
            kinds = [e.type for e in events]
            assert kinds[-1] == "message_stop" and "content_block_delta" in kinds, (ident, kinds)
            [delta] = [e for e in events if e.type == "message_delta"]
            assert delta.delta.stop_reason == "max_tokens", (ident, delta)
        wrong_oa = openai.OpenAI(base_url=serve.url + "/v1", api_key="wrong")
        with pytest.raises(openai.AuthenticationError) as oa_401:
            wrong_oa.chat.completions.create(model="alpha-F32", messages=[{"role": "user", "content": "Hi"}],
                                             max_tokens=2, stream=True)
        assert oa_401.value.status_code == 401
        wrong_an = anthropic.Anthropic(base_url=serve.url, api_key="wrong")
        with pytest.raises(anthropic.AuthenticationError) as an_401:
            wrong_an.messages.create(model="alpha-F32", max_tokens=2, messages=[{"role": "user", "content": "Hi"}])
        assert an_401.value.status_code == 401
    finally:
        assert serve.stop() == 0


# ------------------------------------------------------------------ per-model failures
def test_an_automatic_drafter_that_kills_its_instance_is_dropped_for_that_model_alone(engine, tmp_path, box, capsys):
    folder = tmp_path / "lib"
    fam = tm.TinyModel(name="fam")
    tm.write_tiny_model(folder / "fam-F32.gguf", fam)
    draft = tm.broken_draft(folder / "fam-draft.gguf", fam)
    tm.write_tiny_model(folder / "beta-F32.gguf", tm.TinyModel(name="beta", seed=7, n_pieces=541))
    planned = _planned(folder, box, engine, capsys)
    [fam_plan] = [m for m in planned["models"] if m["id"] == "fam-F32"]
    assert fam_plan["speculative"]["source"] == "auto-companion"
    serve = _Serve(engine, folder, box)
    try:
        status, _body = headless.request(serve.url, KEY, "/models/load", {"model": "fam-F32"}, 10.0)
        assert status == 200
        assert serve.wait_for("fallback: fam-F32").startswith("fallback: fam-F32 is loaded again without speculation")
        deadline = time.monotonic() + 120
        while (now := serve.models())["fam-F32"].state != instances.LOADED:
            assert time.monotonic() < deadline, now
            time.sleep(0.2)  # polling the router's list with a deadline
        assert "--spec-type" not in now["fam-F32"].args
        assert [e.drafter for e in BrokenDrafters().entries()] == [fam_plan["drafter_key"]]
        assert str(draft) in fam_plan["drafter_key"]
        # The other model is untouched: it loads with its own plan.
        assert serve.load_all(["beta-F32"])["beta-F32"].state == instances.LOADED
    finally:
        assert serve.stop() == 0


# ------------------------------------------------------------------ nothing left behind
def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_a_sigkilled_serve_leaves_nothing_with_two_models_loaded(engine, lib, box):
    serve = _Serve(engine, lib, box)
    try:
        serve.load_all(["alpha-F32", "beta-F32"])
        [record] = [json.loads(p.read_text()) for p in orphans.run_dir().glob("engine-*.json")]
        router = psutil.Process(record["pid"])
        pids = [router.pid, *(c.pid for c in router.children(recursive=True))]
        assert len(pids) >= 3, pids  # the router and its two instances
        killed = time.monotonic()
        serve.proc.send_signal(signal.SIGKILL)
        serve.proc.wait(10)
        while not all(_gone(p) for p in pids):
            assert time.monotonic() - killed < GONE_WITHIN_S, [p for p in pids if not _gone(p)]
            time.sleep(0.05)  # polling the process table with a deadline
    finally:
        if serve.proc.poll() is None:
            serve.proc.kill()


# ------------------------------------------------------------------ the library folder
def test_the_real_gemma_smollm2_and_a_qwen35_mtp_geometry_answer_both_clients_by_name(engine, tmp_path, box,
                                                                                       pinned_source, monkeypatch,
                                                                                       capsys):
    """The folder of the issue's "Done when": the real Gemma 3 270M, SmolLM2-135M-Instruct's
    and Qwen3.5-0.8B's published geometries (testing/corpus: zero weights in file holes, so
    they answer one token again and again). Each instance runs the speculation its plan shows
    (Qwen3.5's own MTP head, none for the others), and each answers both clients."""
    import anthropic
    import openai

    from draftwise.testing import realmodels
    from draftwise.testing.corpus import build, registry

    try:
        files = {"gemma-3-270m-it-Q4_K_M": realmodels.gemma3_270m(),
                 **{f"{n}-Q4_K_M": build.generate(registry.get(n), pinned=pinned_source)
                    for n in ("SmolLM2-135M-Instruct", "Qwen3.5-0.8B")}}
    except RuntimeError as exc:
        pytest.skip(f"the real models could not be had: {exc}")
    folder = tmp_path / "library"
    folder.mkdir()
    for ident, path in files.items():
        (folder / f"{ident}.gguf").symlink_to(path)
    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(var, "127.0.0.1,localhost")
    planned = {m["id"]: m for m in _planned(folder, box, engine, capsys)["models"]}
    assert {i: m["speculative"]["type"] for i, m in planned.items()} == {
        "gemma-3-270m-it-Q4_K_M": None, "SmolLM2-135M-Instruct-Q4_K_M": None, "Qwen3.5-0.8B-Q4_K_M": "draft-mtp"}
    serve = _Serve(engine, folder, box)
    try:
        oa = openai.OpenAI(base_url=serve.url + "/v1", api_key=KEY)
        an = anthropic.Anthropic(base_url=serve.url, api_key=KEY)
        assert sorted(m.id for m in oa.models.list()) == sorted(files)
        for ident in sorted(files):
            chunks = list(oa.chat.completions.create(model=ident, messages=[{"role": "user", "content": "Hello"}],
                                                     max_tokens=4, temperature=0, stream=True))
            assert chunks[-1].choices[-1].finish_reason in ("length", "stop") and chunks[-1].model == ident
            # Greedy (the client's default temperature is 1: a draw), and long enough that some
            # token completes a character: a fresh clone's CI run drew four partial bytes from
            # a tiny model and got no text block at all.
            with an.messages.stream(model=ident, max_tokens=16, extra_body={"temperature": 0},
                                    messages=[{"role": "user", "content": "Hello"}]) as stream:
                final = stream.get_final_message()
            assert final.model == ident and final.stop_reason in ("max_tokens", "end_turn"), (ident, final)
            args = serve.models()[ident].args
            spec = planned[ident]["speculative"]["type"]
            got = args[args.index("--spec-type") + 1] if "--spec-type" in args else None
            assert got == spec, (ident, args)
    finally:
        assert serve.stop() == 0


# ------------------------------------------------------------------ out of memory, per model
@pytest.mark.skipif(sys.platform != "linux" or shutil.which("prlimit") is None,
                    reason="needs Linux and prlimit for the address-space cap")
@pytest.mark.timeout(900)
def test_an_instance_that_runs_out_of_memory_takes_its_ladder_rungs(engine, kv_heavy, cap, tmp_path, box):  # noqa: F811
    """tests/test_ladder_engine.py's capped engine, as the router: every process it starts
    inherits the address-space cap, so the instance's full start (f16 KV at 32k) and its
    q8_0 start die of an allocation failure and the halved context fits; each failure takes
    the model's next rung, its section written again, as one launch does."""
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / kv_heavy.name).symlink_to(kv_heavy)
    capped = _wrapper(tmp_path / "capped", engine.binary, cap)
    serve = _Serve(_Engine(capped), folder, box, no_ctx=True)
    try:
        ident = kv_heavy.stem
        status, body = headless.request(serve.url, KEY, "/models/load", {"model": ident}, 10.0)
        assert status == 200, body
        first = serve.wait_for(f"ladder: {ident}:", timeout=240)
        second = serve.wait_for(f"ladder: {ident}:", timeout=240)
        assert "out of memory" in first and "a q8_0 KV cache" in first, first
        assert "a 16k context" in second, second
        deadline = time.monotonic() + 240
        while (now := serve.models())[ident].state != instances.LOADED:
            assert time.monotonic() < deadline, now
            time.sleep(0.2)  # polling the router's list with a deadline
        args = now[ident].args
        assert args[args.index("--ctx-size") + 1] == "16384" and args[args.index("--cache-type-k") + 1] == "q8_0"
    finally:
        assert serve.stop() == 0
