"""How fast a graphics card decodes: its memory bandwidth from a table of known cards by
name, times the share of it llama.cpp reaches (core/machine/speed.py's estimate counts a
token's bytes on a card at this rate; core/planning/ffn_offload.py weighs layers by it).

The figures are the makers' (GB/s); GPU_EFFICIENCY is from llama.cpp's published CUDA decode
figures: no GPU was at hand to measure it (docs/get-models.md, "Speed before download").
"""

from __future__ import annotations

import re

from draftwise.core.kinds import Backend
from draftwise.core.machine.machine_types import Gpu

GPU_EFFICIENCY = 0.55  # llama.cpp's CUDA decode reaches about 55 % of the card's bandwidth
# Memory bandwidth of known graphics cards, GB/s (the makers' figures), by name pattern.
GPU_BANDWIDTH: tuple[tuple[str, float], ...] = (
    (r"H200", 4800), (r"H100", 3350), (r"A100", 1555), (r"L40S?", 864), (r"A6000", 768),
    (r"RTX 5090", 1792), (r"RTX 5080", 960), (r"RTX 5070 Ti", 896), (r"RTX 5070", 672),
    (r"RTX 5060 Ti", 448), (r"RTX 5060", 448),
    (r"RTX 4090", 1008), (r"RTX 4080", 717), (r"RTX 4070 Ti", 504), (r"RTX 4070", 504),
    (r"RTX 4060 Ti", 288), (r"RTX 4060", 272),
    (r"RTX 3090", 936), (r"RTX 3080 Ti", 912), (r"RTX 3080", 760), (r"RTX 3070", 448),
    (r"RTX 3060 Ti", 448), (r"RTX 3060", 360), (r"RTX 2080 Ti", 616), (r"RTX 2080", 448),
    (r"RTX 2070", 448), (r"RTX 2060", 336), (r"GTX 1080 Ti", 484), (r"GTX 1080", 320),
    (r"GTX 1070", 256), (r"GTX 1660", 192),
    (r"RX 7900 XTX", 960), (r"RX 7900 XT", 800), (r"RX 7800 XT", 624), (r"RX 7700 XT", 432),
    (r"RX 7600", 288), (r"RX 6900 XT", 512), (r"RX 6800", 512), (r"RX 6700 XT", 384),
    (r"RX 6600", 224), (r"MI300", 5300), (r"MI250", 3277), (r"MI210", 1638),
    (r"M\d (Ultra)", 800), (r"M\d Max", 400), (r"M\d Pro", 200),
)  # fmt: skip
# A card not in the table: a modest one of its kind.
GPU_DEFAULT_BANDWIDTH = {Backend.CUDA: 300.0, Backend.ROCM: 300.0, Backend.VULKAN: 250.0, Backend.METAL: 100.0,
                         Backend.RPC: 0.0}


def gpu_bandwidth(gpu: Gpu) -> float:
    """Bytes a second of the card's memory: the table's figure by name, else its kind's."""
    for pattern, gbs in GPU_BANDWIDTH:
        if re.search(pattern, gpu.name, re.IGNORECASE):
            return gbs * 1e9
    return GPU_DEFAULT_BANDWIDTH.get(gpu.backend, 250.0) * 1e9
