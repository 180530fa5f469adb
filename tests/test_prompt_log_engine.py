"""API requests teach auto, with consent, on the real llama-server (docs/learn-from-use.md).

`draftwise launch` (a child process, as a user runs it) with the default settings (consent to
keep prompts on) starts its engine with `--log-prompts-dir`; requests sent through its
OpenAI-compatible endpoint by the real `openai` client — chat requests, and a plain completion
— are logged by the engine as the model got them (the chat template applied), taken in as the
model's kept prompts when they finish and when the launch ends, and the files deleted. The next
`draftwise launch` measures again on those prompts before its engine starts (learn.before_launch),
records it, and runs the setup that was fastest on them, saying why.

The model is the paying target of tinydrafts (12 blocks of 512, F16: each token costs real
work; with `zero_output` the next token is a function of the current one, so its answer soon
repeats itself, which n-gram drafting predicts). Its starting measurement is a recorded one,
filed under this run's keys as the window's test of this loop files its own
(tests/data/learn/tiny-model-measured.json: `draftwise measure --tokens 32 --rounds 2 -- -t 1`
of tinymodels' 2-block TinyModel on the 2-core test machine: none 6765.8 tokens/s, ngram-simple
32 6085.3 (0.90×, noise ±12 %), ngram-mod 32 5901.3: n-gram not faster, so auto leaves it off).
So the first launch runs no speculation, and its requests, on this far larger model, run far
below the 6085.3 tokens/s measured with n-gram: the requests' own trigger ("behind another
setup"). Measured again on the logged prompts, n-gram pays on this model (a live run here:
ngram-simple 32 316.7 tokens/s against none 206.6, 1.53×, noise ±4 %), and the next launch
switches to it and says why. The figures are this machine's and printed.

`serve` is checked the same way, shorter: each model's instance logs into its own folder, and
serve takes the prompts in (the `openai` client for one model, the `anthropic` client for the
other).

The idle probe is the one thing the child is told (`idle.idle` answers True): it asks whether
other programs keep the cores busy, which on the shared test machine they always do.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from draftwise.core import identity
from draftwise.core.launch import launch_spec, prepare
from draftwise.core.measurements import measured, prompt_log, usage
from draftwise.core.measuring import learn
from draftwise.core.speculation.setup import NONE
from draftwise.testing import tinydrafts as td
from draftwise.testing import tinymodels as tm
from process_checks import StdoutLines
from test_serve_engine import box, lib  # noqa: F401  (serve's library of tiny models and its machine)

# The subprocess's machine is this machine (its own hardware probe): so is the plan made here.
pytestmark = [pytest.mark.engine, pytest.mark.real_machine]

RECORDED = Path(__file__).parent / "data" / "learn" / "tiny-model-measured.json"
KEY = "prompt-log-key"
ROWS = [("apple", "red", 3), ("banana", "yellow", 5), ("cherry", "red", 2), ("grape", "green", 7)]
TABLE = "| fruit | colour | crates |\n" + "".join(f"| {n} | {c} | {k} |\n" for n, c, k in ROWS)
ASKS = [f"Copy the stock table once more for shelf {s}, exactly as before.\n\n" + (TABLE + "\n") * 2 for s in "AB"]
# One engine thread (tests/test_learn_engine.py ONE_THREAD: on 2 shared cores, two threads
# meeting at a spinning barrier cost far more than they give).
ENGINE_ARGS = ("--", "-t", "1")


def _launch(model: Path, engine, port: int, *, idle: bool = False) -> subprocess.Popen:
    argv = ["launch", str(model), "--engine", str(engine.binary), "--ctx", "1024", "--port", str(port), *ENGINE_ARGS]
    if idle:  # the child's idle probe says idle (see the module's docstring); nothing else changes
        code = ("import sys\nfrom draftwise.core.machine import idle\nidle.idle = lambda *a, **k: True\n"
                "from draftwise.cli.main import main\nsys.exit(main(sys.argv[1:]))")
        command = [sys.executable, "-c", code, *argv]
    else:
        command = [sys.executable, "-m", "draftwise.cli.main", *argv]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1", "DRAFTWISE_API_KEY": KEY})


def _stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGINT)
    assert proc.wait(60) == 0


@pytest.mark.timeout(900)  # a few minutes on the 2-core machine; more under others' load
def test_api_requests_are_logged_kept_and_the_next_launch_runs_what_is_faster_on_them(tmp_path: Path, engine):
    from openai import OpenAI

    from draftwise.cli import launch as cli_launch
    from draftwise.cli.main import build_parser

    model = tm.write_tiny_model(tmp_path / "alone" / "plain.gguf", td.paying_target())[0]
    # The options as the child reads them (cli/main.py: what follows `--` is the engine's).
    args = build_parser().parse_args(["launch", str(model), "--engine", str(engine.binary), "--ctx", "1024"])
    args.engine_args = list(ENGINE_ARGS[1:])
    _engine, machine, planned = cli_launch.planned_launch(args)
    target = learn.measured_planned(planned)
    assert target is not None  # no drafter: auto's n-gram speculation is what is measured
    combination = prepare.combination(model, target.prepared.spec, engine.binary, machine)
    recorded = replace(measured.Measurement.from_json(json.loads(RECORDED.read_text(encoding="utf-8"))),
                       combination=combination)
    measured.MeasuredRecords().record(recorded)
    assert not recorded.pays and learn.running_setup(cli_launch.planned_launch(args)[2].prepared) == NONE

    # The first launch: five chat requests and a plain completion, through the OpenAI API.
    proc = _launch(model, engine, launch_spec.any_free_port())
    lines = StdoutLines(proc)
    store = usage.UsageRecords()
    folder = prompt_log.folder(store, model)
    try:
        url = lines.wait_for("ready", timeout=180).split()[1]
        client = OpenAI(base_url=f"{url}/v1", api_key=KEY, timeout=300, max_retries=0)
        for ask in (*ASKS, *ASKS, ASKS[0]):
            reply = client.chat.completions.create(model="plain", messages=[{"role": "user", "content": ask}],
                                                   max_tokens=24, temperature=0, extra_body={"ignore_eos": True})
            assert reply.usage is not None and reply.usage.completion_tokens == 24
        plain = client.completions.create(model="plain", prompt=TABLE * 2, max_tokens=24, temperature=0,
                                          extra_body={"ignore_eos": True})
        assert plain.usage is not None and plain.usage.completion_tokens == 24
        # Taken in as the requests finish (the figures poll, every 3 s), the files deleted.
        deadline = time.monotonic() + 60
        while len(store.model(model).prompts) < 3 and time.monotonic() < deadline:
            lines.drain()
            time.sleep(0.2)
        _stop(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    lines.drain()
    prompts = store.model(model).prompts
    # The engine's own rendering (chatml, its default for a model with no template), each once,
    # the latest last; the plain completion's text as it was sent.
    assert prompts == (*(f"<|im_start|>user\n{a}<|im_end|>\n<|im_start|>assistant\n" for a in ASKS[1:] + ASKS[:1]),
                       TABLE * 2), prompts
    assert not folder.exists() or list(folder.iterdir()) == []
    seen = store.usage(learn.usage_key(cli_launch.planned_launch(args)[2]))
    assert seen is not None and seen.count == 6 and all(r.tokens == 24 for r in seen.requests)
    print(f"requests: {seen.count}, {seen.tokens_per_s:.1f} tokens/s, drafted {seen.drafted}")

    # The next launch measures again on them before its engine starts, and runs what it found.
    proc = _launch(model, engine, launch_spec.any_free_port(), idle=True)
    lines = StdoutLines(proc)
    try:
        why = lines.wait_for("learning: ", timeout=60)
        assert why.startswith(f"learning: measuring again on 3 of your prompts, because {NONE.label()} ran "), why
        assert why.endswith("on your last 6 requests; ngram-simple 32 reached 6085.3 when measured"), why
        found = lines.wait_for("learning: ", timeout=600)
        lines.wait_for("ready", timeout=180)
        _stop(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    lines.drain()
    m = measured.MeasuredRecords().get(combination)
    assert m is not None and m.learned is not None and m.learned.before == NONE.label() and m.prompts == 3
    assert found == f"learning: {m.summary()}"
    print(f"measured again on the logged prompts: {m.summary()}; "
          + ", ".join(f"{s.label()} {tps:.1f}" for s, tps in m.others))
    # It switched: the next launch ran the n-gram setup fastest on the user's requests, and said why.
    assert m.pays and m.setup is not None and m.setup.ngram is not None
    notes = [line for line in lines.seen if line.startswith("  - ")]
    said = [line for line in notes if f"{m.setup.label()} is faster on your requests: {m.ratio:.2f}× vs " in line]
    assert said, notes
    print(why, said[0], sep="\n")
    assert learn.running_setup(cli_launch.planned_launch(args)[2].prepared) == m.setup


@pytest.mark.timeout(300)
def test_serve_keeps_each_served_models_logged_prompts(engine, lib, box, monkeypatch):  # noqa: F811
    """`draftwise serve` with consent: each model's instance logs into its own folder (its preset
    section), and serve takes them in on its watch of the router and at its end — from the
    `openai` client for one model and the `anthropic` client for the other — and keeps each
    request's figures under the model's key, as a launch does."""
    import anthropic
    import openai

    from test_serve_engine import KEY as SERVE_KEY
    from test_serve_engine import _Serve

    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(var, "127.0.0.1,localhost")
    store = usage.UsageRecords()
    alpha, beta = lib / "alpha-F32.gguf", lib / "beta" / "beta-F32.gguf"
    serve = _Serve(engine, lib, box)
    try:
        oa = openai.OpenAI(base_url=serve.url + "/v1", api_key=SERVE_KEY, max_retries=0)
        oa.chat.completions.create(model="alpha-F32", messages=[{"role": "user", "content": "Hello alpha"}],
                                   max_tokens=4, temperature=0)
        an = anthropic.Anthropic(base_url=serve.url, api_key=SERVE_KEY, max_retries=0)
        an.messages.create(model="beta-F32", max_tokens=4, messages=[{"role": "user", "content": "Hello beta"}])
        # Serve's watch reads the router every second: it takes the prompts in and keeps the
        # requests' figures that arrived (the router forwards its instances' lines as they come).
        def kept_figures() -> set[str]:
            return {u.key.model for u in store.record_file.read()}

        both = {identity.file_key(alpha), identity.file_key(beta)}
        deadline = time.monotonic() + 30
        while not (store.model(alpha).prompts and store.model(beta).prompts and both <= kept_figures()) \
                and time.monotonic() < deadline:
            serve.drain()
            time.sleep(0.2)  # polling the records with a deadline
    finally:
        assert serve.stop() == 0
    assert store.model(alpha).prompts == ("<|im_start|>user\nHello alpha<|im_end|>\n<|im_start|>assistant\n",)
    assert store.model(beta).prompts == ("<|im_start|>user\nHello beta<|im_end|>\n<|im_start|>assistant\n",)
    for model in (alpha, beta):
        folder = prompt_log.folder(store, model)
        assert folder.is_dir() and list(folder.iterdir()) == []  # made by the engine, emptied by serve
    # Each request's figures too, from its instance's own lines in the router's output
    # (core/serving/served_usage.py), under the model's key as a launch of it keeps them: one
    # request each, on this engine build.
    kept = {u.key.model: u for u in store.record_file.read()}
    for model in (alpha, beta):
        u = kept[identity.file_key(model)]
        assert u.count == 1 and u.key.engine == identity.engine_build_key(engine.binary)
        assert u.requests[0].tokens >= 1 and u.requests[0].ms > 0


@pytest.mark.timeout(180)
def test_the_windows_launch_logs_its_requests_and_the_chat_keeps_no_copy(qtbot, engine, tmp_path: Path):
    """The window's Launch with consent (its default): the engine logs each request, the chat's
    among them, and the window takes them in when the engine stops; the chat keeps no transcript
    of its own beside it, so its request is kept once, as the model got it."""
    from launched_window import launched_window
    from test_chat_engine import _wait_reply

    model = tm.write_tiny_model(tmp_path / "alone" / "tiny-F32.gguf", tm.TinyModel())[0]
    vm, _win = launched_window(qtbot, engine, model)
    store = usage.UsageRecords()
    assert vm.launch.spec is not None and vm.launch.spec.prompt_log == prompt_log.folder(store, model)
    assert vm.chat.send("What is speculative decoding?")
    # Sent (the chat keeps its own copy as it sends, when it does), and no event handled yet, so
    # nothing taken in from the engine either: the chat kept none.
    assert store.model(model).prompts == ()
    _wait_reply(qtbot, vm.chat)
    with qtbot.waitSignal(vm.launch.ended, timeout=30_000):
        vm.do_stop()
    [kept] = store.model(model).prompts
    # The tiny model has no chat template: the window continues the text (/completion), and
    # the engine logged the prompt it got.
    assert vm.chat.writing and "What is speculative decoding?" in kept
    assert list(prompt_log.folder(store, model).iterdir()) == []
