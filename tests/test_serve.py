"""`draftwise serve` without the engine: which files are served under which id, the preset
sections against `plan`, the loaded-together budget, and bad input in plain words.

The engine's side (the router running these sections, the client libraries, nothing left
after a SIGKILL) is tests/test_serve_engine.py.
"""

from __future__ import annotations

import json
import socket
from dataclasses import replace
from pathlib import Path

import pytest

from argv_checks import argv_options
from draftwise.cli.main import main
from draftwise.core.engines import args as engine_args
from draftwise.core.kinds import DeviceKind
from draftwise.core.planning.plan_types import DeviceUse
from draftwise.core.serving import library, preset, together
from draftwise.testing import tinymodels as tm
from draftwise.testing.projectors import write_gemma3_projector


def _machine_file(folder: Path, machine) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "machine.json"
    path.write_text(json.dumps(machine.to_json()))
    return path


@pytest.fixture
def lib(tmp_path: Path) -> Path:
    """alpha (with its companion drafter beside it) and beta, a split model."""
    folder = tmp_path / "lib"
    alpha = tm.TinyModel(name="alpha")
    tm.write_tiny_model(folder / "alpha-F32.gguf", alpha)
    tm.write_tiny_model(folder / "alpha-draft-F32.gguf", tm.draft_model(alpha))
    tm.write_tiny_model(folder / "beta" / "beta-F32.gguf", tm.TinyModel(name="beta", seed=7), split_max_tensors=8)
    return folder


# ------------------------------------------------------------------ ids
def test_ids_are_file_stems_shards_grouped_projectors_and_drafters_left_out(lib: Path):
    write_gemma3_projector(lib / "mmproj-alpha-F16.gguf", projection_dim=tm.TinyModel().n_embd)
    tm.write_tiny_model(lib / "glm-mtp.gguf", tm.mtp_model(), part="mtp")
    found = library.collect([lib])
    shards = sorted(p.name for p in (lib / "beta").iterdir())
    assert len(shards) > 1 and shards[0] == f"beta-F32-00001-of-{len(shards):05d}.gguf"
    # The projector and the MTP-only sidecar are helpers; the companion drafter is still a
    # plain model to the library (the serve plan leaves it out once a model drafts with it).
    assert [(m.id, m.path.name) for m in found.models] == [
        ("alpha-draft-F32", "alpha-draft-F32.gguf"), ("alpha-F32", "alpha-F32.gguf"),
        ("beta-F32", shards[0])]
    assert found.left_out == ()


def test_the_plan_lists_a_drafter_as_its_models_helper_not_as_a_model(lib: Path, capsys, described_machine):
    box = _machine_file(lib.parent / "m", described_machine)
    assert main(["serve", str(lib), "--json", "--machine", str(box)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [m["id"] for m in out["models"]] == ["alpha-F32", "beta-F32"]
    assert [d["file"] for d in out["drafters"]] == [str(lib / "alpha-draft-F32.gguf")]


# ------------------------------------------------------------------ bad input
def test_a_folder_without_gguf_is_named(tmp_path: Path, capsys):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("x")
    assert main(["serve", str(tmp_path / "empty"), "--json"]) == 2
    assert capsys.readouterr().err == (
        f"draftwise: {tmp_path / 'empty'} holds no GGUF file; give a folder with models in it (or download one "
        f"with `draftwise get`).\n")


def test_two_models_with_the_same_stem_are_named_both(tmp_path: Path, capsys):
    for sub in ("a", "b"):
        tm.write_tiny_model(tmp_path / sub / "same-F32.gguf", tm.TinyModel())
    assert main(["serve", str(tmp_path / "a"), str(tmp_path / "b"), "--json"]) == 2
    assert capsys.readouterr().err == (
        f"draftwise: Two models would both be named same-F32: {tmp_path / 'a' / 'same-F32.gguf'} and "
        f"{tmp_path / 'b' / 'same-F32.gguf'}. Clients pick a model by its file name, so rename one of them (or "
        f"serve one folder only).\n")


def test_an_unreadable_file_is_left_out_and_named_the_rest_served(lib: Path, capsys, described_machine):
    (lib / "broken-Q4.gguf").write_bytes(b"GGUF" + b"\x00" * 12)
    box = _machine_file(lib.parent / "m", described_machine)
    assert main(["serve", str(lib), "--json", "--machine", str(box)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [m["id"] for m in out["models"]] == ["alpha-F32", "beta-F32"]
    [left] = out["left_out"]
    assert left["file"] == str(lib / "broken-Q4.gguf")
    assert left["why"].startswith("broken-Q4.gguf cannot be read (")
    assert left["why"].endswith("); it is left out. Download it again or remove it from the folder.")


def test_a_port_in_use_is_named(lib: Path, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", str(lib), "--port", str(port)]) == 2
    assert capsys.readouterr().err == (
        f"draftwise: Port {port} is in use by another program; choose another port or stop that program.\n")


def test_no_path_and_no_library_folder_says_what_to_give(capsys):
    assert main(["serve", "--json"]) == 2
    assert "give a folder of GGUF models (`draftwise serve ~/models`)" in capsys.readouterr().err


# ------------------------------------------------------------------ sections against plan
def _plan_json(model: Path, box: Path, capsys) -> dict:
    assert main(["plan", str(model), "--json", "--machine", str(box)]) == 0
    return json.loads(capsys.readouterr().out)


def test_each_section_is_what_plan_gives_that_file_less_host_port_and_key(lib: Path, capsys, described_machine):
    """With one model loaded at a time, each model has the whole machine: its section is
    `plan FILE`'s argv, option for option, without --host/--port (the key is never in argv)."""
    box = _machine_file(lib.parent / "m", described_machine)
    assert main(["serve", str(lib), "--json", "--machine", str(box), "--models-max", "1"]) == 0
    served = json.loads(capsys.readouterr().out)
    assert served["together"]["models_max"] == 1
    for m in served["models"]:
        plan = _plan_json(Path(m["file"]), box, capsys)
        argv = plan["argv"]
        rest = argv[1:]
        for flag in ("--host", "--port"):
            i = rest.index(flag)
            del rest[i:i + 2]
        assert "--api-key" not in rest
        assert m["argv"] == argv
        assert list(m["preset"]) == [engine_args.canonical(t).lstrip("-") for t in rest
                                     if t.startswith("-") and not t[1:2].isdigit()]
        assert m["preset"] == argv_options(argv)
        assert m["speculative"] == plan["speculative"]
    alpha = served["models"][0]["preset"]
    assert (alpha["spec-type"], alpha["spec-draft-model"]) == ("draft-simple", str(lib / "alpha-draft-F32.gguf"))


def test_loaded_together_each_section_is_plan_on_its_share_of_the_machine(lib: Path, capsys, described_machine):
    """Two loaded together: each is planned as `plan` plans it on a machine with half the
    RAM (TEST_MACHINE: 12 GiB available, so 6 GiB each)."""
    box = _machine_file(lib.parent / "m", described_machine)
    half = _machine_file(lib.parent / "half", replace(described_machine,
                                                      ram_available=described_machine.ram_available // 2))
    assert main(["serve", str(lib), "--json", "--machine", str(box)]) == 0
    served = json.loads(capsys.readouterr().out)
    assert served["together"]["models_max"] == 2
    for m in served["models"]:
        assert m["argv"] == _plan_json(Path(m["file"]), half, capsys)["argv"]
    [ram] = served["together"]["devices"]
    held = [m["held_bytes"]["RAM"] for m in served["models"]]
    assert ram["largest_together"] == sum(held) and ram["largest_together"] <= ram["capacity"]


# ------------------------------------------------------------------ the preset format
def test_a_section_holds_every_option_once_switches_as_true():
    argv = ["llama-server", "-m", "/m/a.gguf", "--host", "127.0.0.1", "--port", "8080", "--metrics", "-lv", "4",
            "-c", "512", "--spec-type", "draft-simple", "-md", "/m/d.gguf", "-l", "7-inf", "--no-mmap"]
    s = preset.section("a", engine_args.read_options(argv[1:]))
    assert s.options == (("model", "/m/a.gguf"), ("metrics", "true"), ("verbosity", "4"), ("ctx-size", "512"),
                         ("spec-type", "draft-simple"), ("spec-draft-model", "/m/d.gguf"), ("logit-bias", "7-inf"),
                         ("no-mmap", "true"))
    text = preset.render([s, preset.section("b", (engine_args.option("-m", "/m/b.gguf"),))])
    assert preset.parse(text) == {"default": {"version": "1"}, "a": dict(s.options), "b": {"model": "/m/b.gguf"}}


def test_what_a_section_cannot_hold_is_refused_by_name():
    with pytest.raises(preset.PresetError) as two:
        preset.section("a", engine_args.read_options(["-m", "/m/a.gguf", "-l", "5-inf", "-l", "6-inf"]))
    assert two.value.option == "--logit-bias"
    with pytest.raises(preset.PresetError) as comment:
        preset.section("a", (engine_args.option("-m", "/m/a#1.gguf"),))
    assert comment.value.option == "--model"


# ------------------------------------------------------------------ the budget
def _ram(total: int, host_cache: int = 0) -> list[DeviceUse]:
    return [DeviceUse("RAM", DeviceKind.CPU, 10 * 2**30, weights=total, host_cache=host_cache, device="CPU")]


def test_the_budget_adds_up_the_largest_models_max_per_device():
    gib = 2**30
    planned = {"a": _ram(3 * gib, 1 * gib), "b": _ram(2 * gib), "c": _ram(5 * gib, 1 * gib)}
    b2 = together.check(2, planned, {"RAM": 10 * gib})
    # the two that hold most: c (5 + 1 GiB) and a (3 + 1 GiB) = 10 GiB, exactly the capacity
    assert (b2.devices[0].worst, b2.fits) == (10 * gib, True)
    b3 = together.check(3, planned, {"RAM": 10 * gib})
    assert (b3.devices[0].worst, b3.fits) == (12 * gib, False)


def test_a_share_divides_ram_and_each_gpus_free_memory(described_machine):
    from draftwise.core.machine.hardware import Gpu

    m = replace(described_machine, gpus=[Gpu(0, "vulkan", "g", total_bytes=8 * 2**30, free_bytes=7 * 2**30)])
    s = together.share(m, 2)
    assert (s.ram_available, s.gpus[0].free_bytes, s.gpus[0].total_bytes) == (6 * 2**30, 7 * 2**29, 8 * 2**30)


def test_without_a_path_the_windows_library_folders_are_served(lib: Path, capsys, described_machine):
    from draftwise.core import settings as settings_mod

    stored = settings_mod.load().settings
    assert stored.add_folder(lib)
    settings_mod.save(stored)
    box = _machine_file(lib.parent / "m", described_machine)
    assert main(["serve", "--json", "--machine", str(box)]) == 0
    assert [m["file"] for m in json.loads(capsys.readouterr().out)["models"]] == [
        str(lib / "alpha-F32.gguf"), str(lib / "beta" / "beta-F32-00001-of-00003.gguf")]


def test_the_routers_lines_are_split_by_instance_port():
    from draftwise.core.serving import instances

    # Lines as the pinned router printed them (tests/test_serve_engine.py's runs).
    lines = ["[52877] 0.00.039.041 E ggml_aligned_malloc: insufficient memory (attempted to allocate 1088.00 MB)",
             "0.01.125.468 I srv           run: instance name=kv-heavy-F16 exited with status 1",
             "[ 8081] 0.00.010.843 I load_backend: loaded RPC backend"]
    kept = instances.ChildLines.new()
    kept.add(lines)
    assert kept.of(("llama-server", "--port", "52877")) == [
        "0.00.039.041 E ggml_aligned_malloc: insufficient memory (attempted to allocate 1088.00 MB)"]
    assert kept.of(("llama-server", "--port", "8081")) == ["0.00.010.843 I load_backend: loaded RPC backend"]
    assert kept.of(("llama-server",)) == []
