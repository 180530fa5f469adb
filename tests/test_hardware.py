"""The machine probes: parsers on recorded outputs, probes that turn failures into notes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from draftwise.core.machine import (
    engine_devices,
    hardware,
    machine_types,
    probe_parsers,
    system_probes,
)
from draftwise.core.machine.hardware import GB, Gpu, Machine, MiB

LIST_2X_CUDA = """\
ggml_cuda_init: found 2 CUDA devices:
  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes
  Device 1: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes
Available devices:
  CUDA0: NVIDIA GeForce RTX 3090 (24135 MiB, 23811 MiB free)
  CUDA1: NVIDIA GeForce RTX 3090 (24135 MiB, 24043 MiB free)
"""

NVIDIA_SMI_2X = """\
0, GPU-5f2c6e1a-8b0d-4c7e-9d61-0a1b2c3d4e5f, NVIDIA GeForce RTX 3090, 24576, 23811
1, GPU-9a8b7c6d-5e4f-3a2b-1c0d-ffeeddccbbaa, NVIDIA GeForce RTX 3090, 24576, 24043
"""

LIST_ROCM = """\
ggml_cuda_init: found 2 ROCm devices:
  Device 0: AMD Radeon RX 7900 XTX, gfx1100 (0x1100), VMM: no, Wave Size: 32
  Device 1: AMD Radeon 780M Graphics, gfx1103 (0x1103), VMM: no, Wave Size: 32
Available devices:
  ROCm0: AMD Radeon RX 7900 XTX (24560 MiB, 24438 MiB free)
  ROCm1: AMD Radeon 780M Graphics (16384 MiB, 16210 MiB free)
"""

LIST_VULKAN = """\
ggml_vulkan: Found 1 Vulkan devices:
ggml_vulkan: 0 = AMD Radeon RX 6700 XT (RADV NAVI22) (radv) | uma: 0 | fp16: 1 | bf16: 0 | warp size: 64 | shared memory: 65536 | int dot: 1 | matrix cores: none
Available devices:
  Vulkan0: AMD Radeon RX 6700 XT (RADV NAVI22) (12272 MiB, 11943 MiB free)
"""

LIST_METAL = """\
Available devices:
  MTL0: Apple M3 Pro (27648 MiB, 27647 MiB free)
  BLAS: Accelerate (0 MiB, 0 MiB free)
"""

LIST_CPU = "Available devices:\n  (none)\n"

KFD_CPU = "cpu_cores_count 16\nsimd_count 0\ngfx_target_version 0\ndrm_render_minor 0\n"
KFD_7900 = "cpu_cores_count 0\nsimd_count 192\ngfx_target_version 110000\ndrm_render_minor 128\n"
KFD_780M = "cpu_cores_count 0\nsimd_count 24\ngfx_target_version 110003\ndrm_render_minor 129\n"


# ------------------------------------------------------------------ parsers
def test_list_devices_two_cuda():
    gpus = probe_parsers.parse_list_devices(LIST_2X_CUDA)
    assert [g.device for g in gpus] == ["CUDA0", "CUDA1"]
    assert gpus[0] == Gpu(0, "cuda", "NVIDIA GeForce RTX 3090", None, 24135 * MiB, 23811 * MiB,
                          False, None, "CUDA0")  # fmt: skip


def test_list_devices_rocm_igpu_and_dgpu():
    dgpu, igpu = probe_parsers.parse_list_devices(LIST_ROCM)
    assert dgpu.backend == igpu.backend == "rocm"
    assert not dgpu.integrated and igpu.integrated
    machine = Machine(32 * GB, 30 * GB, [dgpu, igpu])
    assert machine.discrete_gpus == [dgpu]


def test_list_devices_vulkan_metal_and_cpu_only():
    (vk,) = probe_parsers.parse_list_devices(LIST_VULKAN)
    assert (vk.backend, vk.name, vk.total_bytes) == ("vulkan", "AMD Radeon RX 6700 XT (RADV NAVI22)", 12272 * MiB)
    (mtl,) = probe_parsers.parse_list_devices(LIST_METAL)  # BLAS is not a GPU
    assert mtl.backend == "metal" and mtl.integrated and mtl.label == "MTL0 (Apple M3 Pro)"
    assert probe_parsers.parse_list_devices(LIST_CPU) == []
    assert probe_parsers.parse_list_devices("") == []


def test_nvidia_smi():
    gpus = probe_parsers.parse_nvidia_smi(NVIDIA_SMI_2X + "2, GPU-x, Tesla, [N/A], [N/A]\nnot a row\n")
    assert [(g.index, g.uuid[:12], g.free_bytes) for g in gpus] == [
        (0, "GPU-5f2c6e1a", 23811 * MiB), (1, "GPU-9a8b7c6d", 24043 * MiB)]


def test_merge_keeps_the_engine_view_and_adds_vendor_facts():
    engine = probe_parsers.parse_list_devices(LIST_2X_CUDA)
    merged = probe_parsers.merge_gpus(engine, probe_parsers.parse_nvidia_smi(NVIDIA_SMI_2X))
    assert merged[1].uuid.startswith("GPU-9a8b") and merged[1].free_bytes == 24043 * MiB
    assert probe_parsers.merge_gpus([], engine) == engine


def test_gfx_names():
    assert probe_parsers.gfx_name(110003) == "gfx1103"
    assert probe_parsers.gfx_name(110000) == "gfx1100"
    assert probe_parsers.gfx_name(100300) == "gfx1030"
    assert probe_parsers.gfx_name(90010) == "gfx90a"
    assert probe_parsers.gfx_name(0) is None


def test_amd_sysfs_parser():
    cards = [
        {"mem_info_vram_total": f"{24 * GB}\n", "mem_info_vram_used": f"{GB}\n",
         "product_name": "Radeon RX 7900 XTX\n"},
        {"mem_info_vram_total": f"{512 * MiB}\n", "mem_info_vram_used": "0\n", "product_name": ""},
    ]  # fmt: skip
    dgpu, igpu = probe_parsers.parse_amd_sysfs(cards, [KFD_CPU, KFD_7900, KFD_780M])
    assert (dgpu.gfx_target, dgpu.free_bytes, dgpu.integrated) == ("gfx1100", 23 * GB, False)
    assert (igpu.gfx_target, igpu.integrated, igpu.name) == ("gfx1103", True, "AMD GPU (gfx1103)")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_probe_amd_reads_a_sysfs_tree(tmp_path):
    drm = tmp_path / "sys/class/drm"
    for i, (total, name) in enumerate([(24 * GB, "Radeon RX 7900 XTX"), (512 * MiB, "")]):
        dev = drm / f"card{i}/device"
        _write(dev / "vendor", "0x1002\n")
        _write(dev / "mem_info_vram_total", str(total))
        _write(dev / "mem_info_vram_used", "0")
        _write(dev / "product_name", name)
    _write(drm / "card0-DP-1/status", "connected")
    nv = drm / "card2/device"
    _write(nv / "vendor", "0x10de\n")
    nodes = tmp_path / "sys/class/kfd/kfd/topology/nodes"
    for i, text in enumerate([KFD_CPU, KFD_7900, KFD_780M]):
        _write(nodes / str(i) / "properties", text)
    gpus, note = system_probes.probe_amd(tmp_path)
    assert note is None and [g.gfx_target for g in gpus] == ["gfx1100", "gfx1103"]
    assert [g.integrated for g in gpus] == [False, True]
    # Without kfd ROCm cannot run: the GPUs are listed, the note says why.
    import shutil

    shutil.rmtree(tmp_path / "sys/class/kfd")
    gpus, note = system_probes.probe_amd(tmp_path)
    assert len(gpus) == 2 and "kfd" in note
    assert system_probes.probe_amd(tmp_path / "nowhere") == ([], "no AMD GPU found (no /sys/class/drm)")


def test_sysctl_memsize():
    assert probe_parsers.parse_sysctl_memsize("25769803776\n") == 24 * GB
    assert probe_parsers.parse_sysctl_memsize("hw.memsize: 17179869184") == 16 * GB
    assert probe_parsers.parse_sysctl_memsize("") == 0


# ------------------------------------------------------------------ probes never raise
def _raiser(exc: BaseException):
    def run(argv, timeout):
        raise exc
    return run


@pytest.mark.parametrize("exc, words", [
    (FileNotFoundError(2, "No such file or directory"), "nvidia-smi failed"),
    (subprocess.TimeoutExpired(["nvidia-smi"], 5), "did not answer within 5 s"),
    (subprocess.CalledProcessError(9, ["nvidia-smi"]), "driver may not be loaded"),
])  # fmt: skip
def test_failing_nvidia_smi_is_a_note(exc, words):
    gpus, note = system_probes.probe_nvidia(_raiser(exc), timeout=5)
    assert gpus == [] and words in note


def test_nvidia_smi_runner_output_is_parsed():
    gpus, note = system_probes.probe_nvidia(lambda argv, timeout: NVIDIA_SMI_2X)
    assert note is None and len(gpus) == 2


def test_engine_list_devices_from_a_fake_binary(tmp_path):
    if sys.platform == "win32":
        pytest.skip("shell script binary")
    fake = tmp_path / "llama-server"
    fake.write_text("#!/bin/sh\ncat <<'EOF'\n" + LIST_ROCM + "EOF\n")
    fake.chmod(0o755)
    found = engine_devices.probe_engine_devices(fake)
    assert found.note is None and [g.device for g in found.gpus] == ["ROCm0", "ROCm1"]
    slow = tmp_path / "slow"
    slow.write_text("#!/bin/sh\nexec sleep 5\n")
    slow.chmod(0o755)
    late = engine_devices.probe_engine_devices(slow, timeout=0.2)
    assert (late.gpus, late.note) == ([], "the engine did not list its devices within 0 s")
    assert "could not be asked" in engine_devices.probe_engine_devices(tmp_path / "missing").note


@pytest.mark.engine
def test_cpu_engine_sees_no_gpu(engine):
    found = engine_devices.probe_engine_devices(engine.binary)
    assert found.gpus == [] and "no GPU" in found.note and not found.vulkan_build
    # A build with one CPU module per level says which one it loaded.
    if any(p.name.startswith("libggml-cpu-") for p in engine.binary.parent.iterdir()):
        assert found.cpu_variant


@pytest.mark.real_machine
def test_probe_collects_notes_and_inventory_caches(monkeypatch):
    # hardware.probe() looks the probes up in hardware's own namespace: patched there.
    monkeypatch.setattr(hardware.platform, "system", lambda: "Linux")
    monkeypatch.setattr(hardware, "probe_nvidia", lambda: ([], "no NVIDIA driver found"))
    monkeypatch.setattr(hardware, "probe_amd", lambda: ([], "no AMD GPU found"))
    m = hardware.probe()
    assert m.gpus == [] and m.ram_total > 0 and m.ram_available > 0
    assert "no NVIDIA driver found" in m.notes and "no AMD GPU found" in m.notes
    calls = []
    monkeypatch.setattr(hardware, "probe", lambda binary=None: calls.append(1) or m)
    hardware._cache.clear()
    assert hardware.inventory() is hardware.inventory() is m
    assert len(calls) == 1
    hardware.inventory(max_age=0)
    assert len(calls) == 2


def test_gpus_a_cpu_engine_cannot_use_are_not_planned_for(monkeypatch, tmp_path):
    monkeypatch.setattr(hardware.platform, "system", lambda: "Linux")
    monkeypatch.setattr(hardware, "probe_nvidia", lambda: (probe_parsers.parse_nvidia_smi(NVIDIA_SMI_2X), None))
    monkeypatch.setattr(hardware, "probe_amd", lambda: ([], "no AMD GPU found"))
    monkeypatch.setattr(hardware, "probe_engine_devices", lambda b: engine_devices.EngineDevices([], engine_devices.NO_ENGINE_GPU))
    m = hardware.probe(tmp_path / "llama-server")
    assert m.gpus == [] and any("cannot use NVIDIA GeForce RTX 3090" in n for n in m.notes)
    monkeypatch.setattr(hardware, "probe_engine_devices",
                        lambda b: engine_devices.EngineDevices([], "the engine did not list its devices"))
    assert len(hardware.probe(tmp_path / "llama-server").gpus) == 2  # unknown: trust the driver


# ------------------------------------------------------------------ described machines
def test_machine_from_json_in_gb_and_back():
    m = Machine.from_json({"ram_gb": 16, "gpus": [{"backend": "cuda", "name": "RTX 4060", "memory_gb": 8}],
                           "unified_memory": False})  # fmt: skip
    assert m.ram_total == m.ram_available == 16 * GB and m.described
    assert m.gpus[0].total_bytes == m.gpus[0].free_bytes == 8 * GB and not m.gpus[0].integrated
    again = Machine.from_json(json.loads(json.dumps(m.to_json())))
    assert again.gpus == m.gpus and again.ram_total == m.ram_total


@pytest.mark.parametrize("data, words", [
    ({}, "ram_gb"),
    ({"ram_gb": 8, "gpus": [{"backend": "opencl", "memory_gb": 4}]}, "backend"),
    ({"ram_gb": 8, "gpus": [{"backend": "cuda"}]}, "memory_gb"),
    ([1, 2], "JSON object"),
])  # fmt: skip
def test_bad_descriptions(data, words):
    with pytest.raises(ValueError, match=words):
        Machine.from_json(data)


def test_load_machine(tmp_path):
    p = tmp_path / "m.json"
    p.write_text('{"ram_gb": 24, "unified_memory": true}')
    m = machine_types.load_machine(p)
    assert m.unified_memory and m.gpus == []
    p.write_text("{nope")
    with pytest.raises(ValueError, match="not valid JSON"):
        machine_types.load_machine(p)
    with pytest.raises(ValueError, match="could not read"):
        machine_types.load_machine(tmp_path / "none.json")


def test_a_machine_reads_back_what_it_wrote():
    """--machine files and the plan's JSON: a pinned software device and a limit survive."""
    from draftwise.core.machine.hardware import GB, DeviceLimit, Gpu, Machine

    gpu = Gpu(0, "vulkan", "llvmpipe", total_bytes=2 * GB, free_bytes=2 * GB, software=True,
              device="Vulkan0", limit=DeviceLimit(keep_free=GB))
    again = Machine.from_json(Machine(16 * GB, 12 * GB, [gpu], pinned=True, cpu_variant="haswell").to_json())
    assert again.pinned and again.cpu_variant == "haswell"
    assert again.gpus[0].limit == DeviceLimit(keep_free=GB) and again.gpus[0].software
    assert [g.name for g in again.automatic_gpus] == ["llvmpipe"]
