"""LaunchSpec: argv, fallback argv, address, key and the GPU environment — pure data."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from draftwise.core.engines import args as engine_args
from draftwise.core.engines.capabilities import pinned_caps
from draftwise.core.gguf import reader as gguf
from draftwise.core.launch import launch_spec as ls
from draftwise.core.launch import llamacpp, mlx, vllm
from draftwise.core.launch.launch_spec import LaunchError, gpu_env
from draftwise.core.machine.hardware import Gpu as _HwGpu
from draftwise.core.machine.probe_parsers import gfx_name
from draftwise.core.speculation import resolver
from draftwise.testing import tinymodels as tm

CAPS = pinned_caps()
BINARY = Path("/opt/engine/llama-server")


# ------------------------------------------------------------------ GPU environment


def Gpu(index: int, name: str, *, memory_mib: int = 0, **kw) -> _HwGpu:  # noqa: N802 - reads like the dataclass
    """The inventory's Gpu, with memory in MiB as the recorded facts give it."""
    return _HwGpu(index, "test", name, total_bytes=memory_mib * 1024 * 1024, **kw)


CUDA2 = (Gpu(0, "RTX 4090", memory_mib=24564), Gpu(1, "RTX 3060", memory_mib=12288))
ROCM_APU = (Gpu(0, "Radeon 780M", gfx_target="gfx1103", integrated=True, memory_mib=4096),
            Gpu(1, "RX 7900 XTX", gfx_target="gfx1100", memory_mib=24560))


@pytest.mark.parametrize(
    ("backend", "gpus", "kwargs", "expected"),
    [
        # CUDA: indexes as nvidia-smi numbers them; visibility only when the user picks.
        ("cuda", CUDA2, {}, {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}),
        ("cuda", CUDA2, {"chosen": [1]}, {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": "1"}),
        ("cuda", CUDA2, {"chosen": [0, 1]}, {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": "0,1"}),
        # ROCm: the gfx1103 iGPU beside a gfx1100 dGPU is hidden; ROCR filters, HIP renumbers.
        ("rocm", ROCM_APU, {}, {"ROCR_VISIBLE_DEVICES": "1", "HIP_VISIBLE_DEVICES": "0"}),
        # ...alone, the iGPU runs on gfx1100 kernels.
        ("rocm", ROCM_APU[:1], {}, {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}),
        # The user picks the iGPU on purpose: it gets the override.
        ("rocm", ROCM_APU, {"chosen": [0]},
         {"ROCR_VISIBLE_DEVICES": "0", "HIP_VISIBLE_DEVICES": "0", "HSA_OVERRIDE_GFX_VERSION": "11.0.0"}),
        # A build that has gfx1103 kernels needs no override.
        ("rocm", ROCM_APU[:1], {"kernel_targets": {"gfx1103", "gfx1100"}}, {}),
        # A GPU the build has no kernels for (and no override helps) is hidden.
        ("rocm", (Gpu(0, "Radeon VII", gfx_target="gfx906", memory_mib=16368), ROCM_APU[1]),
         {"kernel_targets": {"gfx1100"}}, {"ROCR_VISIBLE_DEVICES": "1", "HIP_VISIBLE_DEVICES": "0"}),
        # GPUs needing different overrides cannot share one: the largest group stays.
        ("rocm", (Gpu(0, "RX 7900 XTX", gfx_target="gfx1100", memory_mib=24560),
                  Gpu(1, "RX 6600", gfx_target="gfx1032", memory_mib=8176)), {},
         {"ROCR_VISIBLE_DEVICES": "0", "HIP_VISIBLE_DEVICES": "0"}),
        # Vulkan: an iGPU beside a dGPU is hidden; a pick is passed on; nothing otherwise.
        ("vulkan", (Gpu(0, "Intel UHD", integrated=True), Gpu(1, "RTX 3060")), {}, {"GGML_VK_VISIBLE_DEVICES": "1"}),
        ("vulkan", (Gpu(0, "RTX 3060"), Gpu(1, "RTX 3070")), {"chosen": [1]}, {"GGML_VK_VISIBLE_DEVICES": "1"}),
        ("vulkan", (Gpu(0, "RTX 3060"),), {}, {}),
        ("metal", (Gpu(0, "Apple M2", integrated=True),), {}, {}),
        ("cpu", (), {}, {}),
    ],
)
def test_gpu_env_table(backend, gpus, kwargs, expected):
    assert gpu_env(backend, gpus, platform="linux", **kwargs).env == expected


@pytest.mark.parametrize("target", ["gfx1031", "gfx1032", "gfx1034", "gfx1035", "gfx1036"])
def test_rdna2_targets_run_on_gfx1030(target):
    env = gpu_env("rocm", (Gpu(0, "RX 6x00", gfx_target=target),), platform="linux")
    assert env.env == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}
    assert any("gfx1030" in n for n in env.notes)


def test_rocm_on_windows_uses_hip_indexes_and_says_why():
    env = gpu_env("rocm", ROCM_APU, platform="win32")
    assert env.env == {"HIP_VISIBLE_DEVICES": "1"}
    assert any("integrated" in n for n in env.notes)


@pytest.mark.parametrize(("kfd", "target"), [(110003, "gfx1103"), (110000, "gfx1100"), (100302, "gfx1032"), (90010, "gfx90a")])
def test_gfx_target_from_kfd_properties(kfd, target):
    assert gfx_name(kfd) == target


def test_engine_env_libraries_key_and_no_backtrace(monkeypatch):
    env, _notes = ls.engine_env(BINARY.parent, "k3y", backend="cuda", gpus=CUDA2, chosen_gpus=[0])
    assert env["LD_LIBRARY_PATH"].split(":")[0] == str(BINARY.parent)
    assert env["LLAMA_API_KEY"] == "k3y"
    assert env["CUDA_VISIBLE_DEVICES"] == "0"
    assert env["GGML_NO_BACKTRACE"] == "1"
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setenv("PATH", r"C:\Windows")
    env, _ = ls.engine_env(Path(r"C:\engine"), "k")
    assert env["PATH"].startswith(r"C:\engine")


# ------------------------------------------------------------------ models for the decisions
@pytest.fixture
def folder(tmp_path: Path) -> Path:
    target = tm.TinyModel(name="fam")
    tm.write_tiny_model(tmp_path / "fam-F32.gguf", target)
    tm.write_tiny_model(tmp_path / "fam-draft.gguf", tm.draft_model(target))
    return tmp_path


def _decide(path: Path, **options) -> tuple[gguf.ModelInfo, resolver.SpecDecision]:
    model = gguf.read_model(path)
    return model, resolver.resolve(model, resolver.SpecOptions(**options), CAPS)


def test_auto_companion_has_a_fallback_rebuilt_from_scratch(folder):
    model, spec = _decide(folder / "fam-F32.gguf", extra_args=("--spec-draft-n-max", "4"))
    assert spec.source == resolver.AUTO_COMPANION
    launch = ls.llamacpp_launch(BINARY, model, spec, port=8123, extra_args=("--spec-draft-n-max", "4"),
                                plan_options=(engine_args.option("-c", "512"),))
    assert launch.fallback_eligible and launch.drafter_key == spec.drafter_key
    assert "--spec-type" in launch.argv and str(folder / "fam-draft.gguf") in launch.argv
    rebuilt = llamacpp.build_argv(BINARY, model, ls.NO_SPECULATION, extra_args=("--spec-draft-n-max", "4"),
                                  port=8123, plan_options=(engine_args.option("-c", "512"),))
    assert list(launch.fallback_argv) == rebuilt
    assert "--spec-type" not in launch.fallback_argv and "--spec-draft-model" not in launch.fallback_argv
    assert launch.fallback_argv[launch.fallback_argv.index("--port") + 1] == "8123"  # same port


def test_auto_mtp_fallback_drops_the_single_slot_too(tmp_path):
    path = tm.write_tiny_model(tmp_path / "glm-mtp.gguf", tm.mtp_model())[0]
    model, spec = _decide(path)
    assert spec.source == resolver.AUTO_MTP
    launch = ls.llamacpp_launch(BINARY, model, spec, port=8124)
    assert launch.argv[-4:] == ("--spec-type", "draft-mtp", "-np", "1")
    # Verbosity first, so the lines printed while the engine loads its backends show too.
    assert launch.argv[8:10] == llamacpp.VERBOSITY  # after --metrics, before the plan
    assert "-np" not in launch.fallback_argv and "--spec-type" not in launch.fallback_argv


@pytest.mark.parametrize("how", ["explicit", "user-args", "off"])
def test_what_the_user_chose_has_no_fallback(folder, how):
    path = folder / "fam-F32.gguf"
    options = {
        "explicit": {"draft": folder / "fam-draft.gguf"},
        "user-args": {"extra_args": ("--spec-type", "ngram-mod")},
        "off": {"mtp": "off"},
    }[how]
    model, spec = _decide(path, **options)
    launch = ls.llamacpp_launch(BINARY, model, spec, port=8125, extra_args=options.get("extra_args", ()))
    assert not launch.fallback_eligible and launch.fallback_argv is None


def test_key_is_in_the_environment_never_in_argv(folder):
    model, spec = _decide(folder / "fam-F32.gguf")
    launch = ls.llamacpp_launch(BINARY, model, spec, port=8126)
    assert len(launch.api_key) >= 24
    assert launch.env["LLAMA_API_KEY"] == launch.api_key
    assert not any(launch.api_key in a for a in (*launch.argv, *launch.fallback_argv))
    assert launch.host == "127.0.0.1" and launch.url == "http://127.0.0.1:8126"
    assert launch.api_key not in str(launch.to_json())
    other = ls.llamacpp_launch(BINARY, model, spec, port=8126)
    assert other.api_key != launch.api_key  # a fresh key per launch


def test_network_opt_in_listens_everywhere_with_a_key_and_a_warning(folder):
    model, spec = _decide(folder / "fam-F32.gguf")
    launch = ls.llamacpp_launch(BINARY, model, spec, port=8127, network=True)
    assert launch.argv[launch.argv.index("--host") + 1] == "0.0.0.0"
    assert launch.api_key and launch.url == "http://127.0.0.1:8127"
    assert any("other computers" in w for w in launch.warnings)
    with pytest.raises(LaunchError, match="needs an API key") as err:
        ls.llamacpp_launch(BINARY, model, spec, port=8127, network=True, api_key="")
    assert err.value.field == "api_key"


@pytest.mark.parametrize("flag", [["--port", "9"], ["--host=0.0.0.0"], ["--api-key", "secret"]])
def test_extra_args_may_not_take_over_address_or_key(folder, flag):
    model, spec = _decide(folder / "fam-F32.gguf", mtp="off")
    with pytest.raises(LaunchError) as err:
        ls.llamacpp_launch(BINARY, model, spec, port=8128, extra_args=flag)
    assert err.value.field == "extra_args"


# ------------------------------------------------------------------ port
def test_port_taken_gives_another_unless_pinned():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        port, note = ls.choose_port(taken)
        assert port != taken and str(taken) in note and ls.port_is_free(port)
        with pytest.raises(LaunchError, match=f"Port {taken} is in use") as err:
            ls.choose_port(taken, pinned=True)
        assert err.value.field == "port"
    assert ls.choose_port(taken, pinned=True) == (taken, None)
    with pytest.raises(LaunchError):
        ls.choose_port(70000)


# ------------------------------------------------------------------ other engines
NO_SPEC = resolver.SpecDecision(None, None, resolver.NONE, False)


def test_vllm_argv_and_key_variable(tmp_path):
    launch = vllm.vllm_launch(Path("/usr/bin/python3"), tmp_path / "m.gguf", NO_SPEC, port=8200, ctx=4096,
                              extra_args=("--tokenizer", "org/tok"), gpus=CUDA2, chosen_gpus=[1])
    assert list(launch.argv) == [
        "/usr/bin/python3", "-m", "vllm.entrypoints.openai.api_server", "--model", str(tmp_path / "m.gguf"),
        "--host", "127.0.0.1", "--port", "8200", "--max-model-len", "4096", "--tokenizer", "org/tok",
    ]
    assert launch.env["VLLM_API_KEY"] == launch.api_key and launch.api_key not in launch.argv
    assert launch.env["CUDA_VISIBLE_DEVICES"] == "1" and launch.fallback_argv is None
    spec = resolver.SpecDecision("draft-simple", None, resolver.EXPLICIT, False)
    with pytest.raises(LaunchError):
        vllm.vllm_launch(Path("python3"), tmp_path / "m.gguf", spec, port=1)


def test_mlx_argv_stays_local(tmp_path):
    launch = mlx.mlx_launch(Path("python3"), tmp_path / "mlx-model", NO_SPEC, port=8300, ctx=2048)
    assert list(launch.argv) == ["python3", "-m", "mlx_lm.server", "--model", str(tmp_path / "mlx-model"),
                                 "--host", "127.0.0.1", "--port", "8300"]
    assert any("context" in n for n in launch.notes)
    with pytest.raises(LaunchError, match="no API key"):
        mlx.mlx_launch(Path("python3"), tmp_path / "mlx-model", NO_SPEC, port=8300, network=True)


def test_python_engine_discovery_finds_an_installed_package_only():
    found = vllm.find_python_package("probe", "pytest", [sys.executable])
    assert found is not None and found.python == Path(sys.executable) and found.version
    assert vllm.find_python_package("probe", "no_such_package_draftwise", [sys.executable]) is None
    assert vllm.find_python_package("probe", "pytest", ["/nonexistent/python"]) is None


@pytest.mark.parametrize("token", ["--api_key", "--api-key=x", "--host_name_typo_is_fine_but"])
def test_owned_flags_are_read_as_the_engine_reads_them(token):
    if token.startswith("--host_name"):
        ls.check_owned_flags([token])  # another option altogether: allowed
        return
    with pytest.raises(LaunchError, match="--api-key"):
        ls.check_owned_flags([token, "k"])


def test_extra_args_reach_the_engine_in_the_form_it_reads(tmp_path):
    model = gguf.read_model(tm.write_tiny_model(tmp_path / "m.gguf", tm.TinyModel())[0])
    argv = llamacpp.build_argv("llama-server", model, ls.NO_SPECULATION,
                               extra_args=("--ctx-size=512", "--override-kv=a=int:1", "-t", "2"))
    assert argv[-6:] == ["--ctx-size", "512", "--override-kv", "a=int:1", "-t", "2"]


def test_network_mode_says_where_other_computers_reach_it(tmp_path, monkeypatch):
    monkeypatch.setattr(ls, "lan_addresses", lambda: ["192.168.1.20"])
    model = gguf.read_model(tm.write_tiny_model(tmp_path / "m.gguf", tm.TinyModel())[0])
    spec = ls.llamacpp_launch(Path("/opt/llama-server"), model, ls.NO_SPECULATION, port=8080, network=True)
    assert spec.host == ls.ALL_INTERFACES
    assert "Other computers reach it at http://192.168.1.20:8080/v1." in map(str, spec.warnings)
    local = ls.llamacpp_launch(Path("/opt/llama-server"), model, ls.NO_SPECULATION, port=8080)
    assert not any("Other computers" in n for n in (*local.notes, *local.warnings))
    assert ls.network_note(8080, []) is None


def test_lan_addresses_leave_out_loopback():
    assert all(not a.startswith("127.") and not a.startswith("169.254.") for a in ls.lan_addresses())


def test_launch_env_uses_only_the_gpus_of_the_engines_backend(tmp_path):
    """The inventory lists every GPU any driver reports; a Vulkan build hides its iGPU and
    ignores what nvidia-smi said."""
    model = gguf.read_model(tm.write_tiny_model(tmp_path / "m.gguf", tm.TinyModel())[0])
    inventory = [_HwGpu(0, "cuda", "RTX 3060"), _HwGpu(0, "vulkan", "Intel UHD", integrated=True),
                 _HwGpu(1, "vulkan", "RTX 3060")]
    spec = ls.llamacpp_launch(Path("/opt/llama-server"), model, ls.NO_SPECULATION, port=8080,
                              backend="vulkan", gpus=inventory)
    assert spec.env["GGML_VK_VISIBLE_DEVICES"] == "1"
    cpu = ls.llamacpp_launch(Path("/opt/llama-server"), model, ls.NO_SPECULATION, port=8080, gpus=inventory)
    assert "GGML_VK_VISIBLE_DEVICES" not in cpu.env and "CUDA_VISIBLE_DEVICES" not in cpu.env
