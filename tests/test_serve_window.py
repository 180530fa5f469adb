"""The pieces of "Serve my models" that need no engine: the login entry per platform (the
Linux file byte for byte), each served model's state and last-request figures from the
router's lines, and the card's view-model offscreen (what blocks it, the idle time, the
login choice)."""

from __future__ import annotations

import os
import plistlib
from pathlib import Path

from draftwise.core.engines import args as engine_args
from draftwise.core.serving import autostart, instances, preset, served_state
from draftwise.core.settings import LoadResult, Settings

LINUX_FILE = """[Desktop Entry]
Type=Application
Name=Draftwise: serve my models
Comment=Serves the models of your Draftwise library to other programs
Exec=/opt/draftwise/bin/draftwise-gui --serve
Icon=draftwise
Terminal=false
X-GNOME-Autostart-enabled=true
"""


def test_the_linux_login_entry_is_this_file_in_the_xdg_autostart_folder(tmp_path: Path) -> None:
    e = autostart.entry(["/opt/draftwise/bin/draftwise-gui", "--serve"], platform="linux", home=tmp_path, env={})
    assert e.path == tmp_path / ".config" / "autostart" / "draftwise-serve.desktop"
    assert not autostart.is_enabled(e)
    autostart.enable(e)
    assert e.path.read_text(encoding="utf-8") == LINUX_FILE
    assert autostart.is_enabled(e)
    autostart.disable(e)
    assert not e.path.exists() and not autostart.is_enabled(e)
    autostart.disable(e)  # already gone: nothing to do


def test_the_linux_entry_follows_xdg_config_home_and_quotes_a_path_with_a_space(tmp_path: Path) -> None:
    e = autostart.entry(["/home/a b/.venv/bin/python", "-m", "draftwise.gui", "--serve"], platform="linux",
                        home=tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path / "cfg")})
    assert e.path == tmp_path / "cfg" / "autostart" / "draftwise-serve.desktop"
    # The Desktop Entry specification: a reserved character quotes the argument.
    assert 'Exec="/home/a b/.venv/bin/python" -m draftwise.gui --serve\n' in e.content
    # `$` and `"` take a backslash inside the quotes, and the value escapes each backslash.
    assert autostart.exec_line(['/x/$y "z"']) == '"/x/\\\\$y \\\\"z\\\\""'
    assert autostart.exec_line(["/x/100%"]) == "/x/100%%"


def test_the_macos_agent_and_the_windows_run_value(tmp_path: Path) -> None:
    mac = autostart.entry(["/Applications/Draftwise.app/Contents/MacOS/draftwise-gui", "--serve"],
                          platform="darwin", home=tmp_path)
    assert mac.path == tmp_path / "Library" / "LaunchAgents" / "org.draftwise.serve.plist"
    assert plistlib.loads(mac.content.encode()) == {
        "Label": "org.draftwise.serve", "RunAtLoad": True, "ProcessType": "Interactive",
        "ProgramArguments": ["/Applications/Draftwise.app/Contents/MacOS/draftwise-gui", "--serve"]}
    win = autostart.entry([r"C:\Program Files\Draftwise\draftwise-gui.exe", "--serve"], platform="win32",
                          home=tmp_path)
    assert win.path is None
    assert win.content == r'"C:\Program Files\Draftwise\draftwise-gui.exe" --serve'


def test_the_command_is_the_packaged_app_the_installed_window_or_this_python_running_it(tmp_path: Path) -> None:
    assert autostart.app_command("/opt/Draftwise/Draftwise", frozen=True) == ["/opt/Draftwise/Draftwise", "--serve"]
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "draftwise-gui").write_text("#!/bin/sh\n")
    assert autostart.app_command(str(venv / "python"), lambda name: None, frozen=False) == [
        str(venv / "draftwise-gui"), "--serve"]
    assert autostart.app_command("/py", lambda name: f"/bin/{name}", frozen=False) == ["/bin/draftwise-gui",
                                                                                      "--serve"]
    assert autostart.app_command("/py", lambda name: None, frozen=False) == ["/py", "-m", "draftwise.gui",
                                                                             "--serve"]


# The router forwards an instance's lines as `[%5d] %s` with the instance's port
# (server-models.cpp); the two lines are the engine's print_timings of one request.
ROUTER_LINES = [
    "srv    load_models: loaded model alpha-F32",
    "[55001] slot print_timing: id  0 | task 0 | prompt eval time =      12.00 ms /     4 tokens",
    "[55001] slot print_timing: id  0 | task 0 |        eval time =     160.00 ms /     8 tokens (   20.00 ms "
    "per token,    50.00 tokens per second)",
    "[55001] slot print_timing: id  0 | task 0 | draft acceptance = 0.75000 (    6 accepted /     8 generated),"
    " mean len =  2.20",
]


def test_each_model_gets_its_last_request_figures_by_its_instance_port() -> None:
    now = {"alpha-F32": instances.Instance("alpha-F32", instances.LOADED, ("llama-server", "--port", "55001")),
           "beta-F32": instances.Instance("beta-F32", instances.UNLOADED)}
    live = served_state.LiveByModel()
    assert live.add(ROUTER_LINES)  # read before the list names the port: kept by port
    live.set_instances(now)
    # 8 tokens in 160 ms: 50 tokens/s (the engine's own figure on the same line); 6 of 8 accepted.
    assert live.of("alpha-F32") == served_state.LiveFigures(50.0, 0.75, 1)
    assert live.of("beta-F32") == served_state.LiveFigures()
    sections = {"alpha-F32": _section("alpha-F32", ["llama-server", "-m", "/m/alpha-F32.gguf",
                                                           "--spec-type", "draft-simple"]),
                "beta-F32": _section("beta-F32", ["llama-server", "-m", "/m/beta-F32.gguf"])}
    rows = served_state.rows(sections, now, live, {"alpha-F32": 1.5})
    assert [(r.id, r.state, str(r.speculation), r.speedup) for r in rows] == [
        ("alpha-F32", "loaded", "draft model", 1.5), ("beta-F32", "unloaded", "none", None)]
    failed = {"beta-F32": instances.Instance("beta-F32", instances.FAILED, (), 1)}
    row = served_state.rows({"beta-F32": sections["beta-F32"]}, failed, live, {})[0]
    assert row.state == "failed"
    assert str(row.problem) == ("beta-F32 stopped while starting (exit code 1). The other models keep serving; "
                                "the log says why.")


def _vm(qtbot, tmp_path: Path, **settings):
    from draftwise.viewmodels.app import AppViewModel

    vm = AppViewModel(LoadResult(Settings(**settings), Path(os.devnull)), persist=False)
    return vm


def test_the_card_says_what_is_missing_before_it_can_serve(qtbot, tmp_path: Path) -> None:
    vm = _vm(qtbot, tmp_path)
    assert vm.serve.block_reason() == "Serving needs the llama.cpp engine: install it first (Engine menu)."
    assert not vm.serve.start()
    assert vm.serve.problem == "Serving needs the llama.cpp engine: install it first (Engine menu)."
    assert vm.serve.status_text() == vm.serve.problem
    assert not vm.serve.running and vm.serve.rows() == () and vm.serve.copy_lines() == ()


def test_the_idle_time_is_ten_minutes_by_default_and_kept_in_the_settings(qtbot, tmp_path: Path) -> None:
    vm = _vm(qtbot, tmp_path)
    assert vm.settings.serve_sleep_idle_s == 600 and vm.serve.sleep_minutes == 10
    vm.serve.set_sleep_minutes(25)
    assert vm.settings.serve_sleep_idle_s == 1500
    vm.serve.set_sleep_minutes(0)  # never
    assert vm.settings.serve_sleep_idle_s == -1 and vm.serve.sleep_minutes == 0
    again = Settings.from_json(vm.settings.to_json())
    assert again.serve_sleep_idle_s == -1
    assert Settings.from_json({"serve_sleep_idle_s": 0}).serve_sleep_idle_s == 600  # not a time: the default


def test_start_when_i_log_in_writes_and_removes_the_entry(qtbot, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setattr("sys.platform", "linux")
    vm = _vm(qtbot, tmp_path)
    entry = tmp_path / "cfg" / "autostart" / "draftwise-serve.desktop"
    assert not vm.serve.at_login
    assert vm.serve.set_at_login(True)
    assert vm.serve.at_login and vm.settings.serve_at_login and entry.is_file()
    assert "--serve" in entry.read_text(encoding="utf-8").splitlines()[4]
    assert vm.serve.set_at_login(False)
    assert not vm.serve.at_login and not vm.settings.serve_at_login and not entry.exists()


def _section(name: str, argv: list[str]) -> preset.Section:
    """The section of a launch written here as argv (a test may read argv; app code reads options)."""
    return preset.section(name, engine_args.read_options(argv[1:]))


def test_a_failed_model_says_why_from_its_own_lines_and_names_itself() -> None:
    section = _section("beta-F32", ["llama-server", "-m", "/m/beta-F32.gguf"])
    failed = {"beta-F32": instances.Instance("beta-F32", instances.FAILED, ("llama-server", "--port", "55002"), 1)}
    lines = instances.ChildLines.new()
    # An instance's Vulkan allocation failure, as the router forwards it (tests/test_crash.py's line).
    lines.add(["[55002] E ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory",
               "[55001] srv  log_server_r: done request: GET /health 127.0.0.1 200"])
    row = served_state.rows({"beta-F32": section}, failed, served_state.LiveByModel(), {}, lines)[0]
    text = str(row.problem)
    assert text.startswith("beta-F32 could not start: ") and text.endswith(" The other models keep serving.")
    assert "memory" in text


def test_serve_flag_starts_once_the_engine_and_the_machine_are_known_and_reads_the_router(
        qtbot, tmp_path: Path, described_machine) -> None:
    """`draftwise-gui --serve` (the login entry): nothing starts before an engine and the
    machine are known; then the library is planned and the router started as one LaunchSpec
    with the user's idle time; its `/models` answer and its lines fill the rows."""
    from draftwise.core.engines import capabilities
    from draftwise.testing import tinymodels as tm
    from draftwise.viewmodels.engine import EngineChoice
    from test_viewmodels import FakeProcess

    lib = tmp_path / "lib"
    tm.write_tiny_model(lib / "alpha-F32.gguf", tm.TinyModel(name="alpha"))
    tm.write_tiny_model(lib / "beta-F32.gguf", tm.TinyModel(name="beta", seed=7))
    vm = _vm(qtbot, tmp_path, model_folders=[str(lib)], serve_sleep_idle_s=300)
    made: list[FakeProcess] = []
    vm.serve.factory = lambda spec, parent: made.append(FakeProcess(spec, parent)) or made[-1]
    vm.serve.start_when_ready()
    assert vm.serve.pending_start and not vm.serve.running
    vm.engine.set_engines([EngineChoice("llama.cpp", Path("/opt/llama/llama-server"), caps=capabilities.pinned_caps())])
    assert vm.serve.pending_start, "the machine is not known yet"
    vm.set_machine(described_machine)
    assert not vm.serve.pending_start and vm.serve.running
    qtbot.waitUntil(lambda: bool(made), timeout=30_000)
    spec = made[0].spec
    argv = list(spec.argv)
    assert argv[:2] == ["/opt/llama/llama-server", "--models-preset"]
    assert argv[argv.index("--sleep-idle-seconds") + 1] == "300"
    assert spec.api_key == vm.settings.api_key  # the port: the settings' one, or the next free one
    assert [r.state for r in vm.serve.rows()] == ["waiting", "waiting"]
    made[0].ready(f"http://127.0.0.1:{spec.port}")
    assert vm.serve.ready and vm.serve.copy_lines()[0].text.endswith("claude --model alpha-F32")
    vm.serve._on_models(b'{"data": [{"id": "alpha-F32", "status": {"value": "loaded", "args": '
                        b'["llama-server", "--port", "55001"]}}, {"id": "beta-F32", "status": {"value": "sleeping"}}]}')
    vm.serve._on_lines(ROUTER_LINES[:3])
    rows = vm.serve.rows()
    assert [(r.id, r.state) for r in rows] == [("alpha-F32", "loaded"), ("beta-F32", "sleeping")]
    assert vm.serve.live_text(rows[0]) == "50.0 tokens/s" and vm.serve.live_text(rows[1]) == ""
    vm.serve.stop()
    qtbot.waitUntil(lambda: not vm.serve.running, timeout=5_000)


def test_a_model_that_fell_back_says_so_on_its_row_and_the_others_keep_serving(
        qtbot, tmp_path: Path, described_machine) -> None:
    """A model whose instance died at start with its drafter: the row says what was done (core/
    serving/serve_flow.py's sentence), its section is written again without speculation in the
    router's preset, and the other model's row is untouched."""
    from dataclasses import replace

    from draftwise.core.engines import capabilities
    from draftwise.core.serving import serve_flow
    from draftwise.testing import tinymodels as tm
    from draftwise.viewmodels.engine import EngineChoice
    from test_viewmodels import FakeProcess

    lib = tmp_path / "lib"
    tm.write_tiny_model(lib / "alpha-F32.gguf", tm.TinyModel(name="alpha"))
    tm.write_tiny_model(lib / "beta-F32.gguf", tm.TinyModel(name="beta", seed=7))
    vm = _vm(qtbot, tmp_path, model_folders=[str(lib)])
    made: list[FakeProcess] = []
    vm.serve.factory = lambda spec, parent: made.append(FakeProcess(spec, parent)) or made[-1]
    vm.engine.set_engines([EngineChoice("llama.cpp", Path("/opt/llama/llama-server"), caps=capabilities.pinned_caps())])
    vm.set_machine(described_machine)
    assert vm.serve.start()
    qtbot.waitUntil(lambda: bool(made), timeout=30_000)
    # The tiny models plan no drafter: alpha is given one here, with its section without it.
    plan = vm.serve.prepared.plan
    with_draft = _section("alpha-F32", ["llama-server", "-m", str(lib / "alpha-F32.gguf"),
                                              "--spec-type", "draft-simple", "-md", "/m/draft.gguf"])
    facts = [serve_flow.facts_of(m) for m in plan.models]
    facts[0] = replace(facts[0], section=with_draft, fallback=plan.models[0].section, drafter_key=None)
    vm.serve.flow = serve_flow.ServeFlow(facts)
    made[0].ready("http://127.0.0.1:9")  # nothing answers there: the reload asked for goes nowhere
    vm.serve._on_models(b'{"data": [{"id": "alpha-F32", "status": {"value": "unloaded", "failed": true, '
                        b'"exit_code": 1, "args": ["llama-server", "--port", "55001"]}}, '
                        b'{"id": "beta-F32", "status": {"value": "loaded", "args": ["llama-server", "--port", "55002"]}}]}')
    said = ("alpha-F32 stopped at start with its draft model, so it was started again without it. The other models "
            "keep serving.")
    alpha, beta = vm.serve.rows()
    assert (alpha.id, alpha.problem, str(alpha.done), str(alpha.speculation)) == ("alpha-F32", None, said, "none")
    assert (beta.state, beta.problem, beta.done) == ("loaded", None, None)
    assert vm.serve.failures() == ([], [said])
    assert vm.serve.state_tip(alpha).endswith(said)
    written = preset.parse(vm.serve.prepared.preset.read_text(encoding="utf-8"))
    assert "spec-type" not in written["alpha-F32"] and written["alpha-F32"] == dict(plan.models[0].section.options)
    vm.serve.stop()
    qtbot.waitUntil(lambda: not vm.serve.running, timeout=5_000)
