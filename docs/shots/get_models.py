"""Screenshot of "Get models" against the loopback hub stand-in (no network), offscreen:

    QT_QPA_PLATFORM=offscreen .venv/bin/python docs/shots/get_models.py OUT.png

The listing claims real sizes (a few GB) without serving bytes; nothing is downloaded. The
machine and its processor's speed are described (16 GB, a Radeon RX 7600 with 8 GB, 36 GB/s),
so the picture is the same everywhere. (docs/get-models.png itself was taken from the real
window under Xvfb from an empty home, with the speed measured by the engine: README, "Getting
models".)
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from PySide6.QtWidgets import QApplication

from draftwise.core.machine import speed
from draftwise.core.machine.hardware import GB, Gpu, Machine
from draftwise.services.library_scan import TaskRunner
from draftwise.testing.hubstub import HubStub
from draftwise.ui.get_models_dialog import GetModelsDialog
from draftwise.viewmodels.get_models import GetModelsViewModel

REPO = "Qwen/Qwen2.5-7B-Instruct-GGUF"
FILES = {
    "qwen2.5-7b-instruct-q2_k.gguf": 3.0, "qwen2.5-7b-instruct-q3_k_m.gguf": 3.8,
    "qwen2.5-7b-instruct-q4_k_m-00001-of-00002.gguf": 3.99,
    "qwen2.5-7b-instruct-q4_k_m-00002-of-00002.gguf": 0.69,
    "qwen2.5-7b-instruct-q5_k_m-00001-of-00002.gguf": 3.99,
    "qwen2.5-7b-instruct-q5_k_m-00002-of-00002.gguf": 1.45,
    "qwen2.5-7b-instruct-q8_0-00001-of-00003.gguf": 3.99,
    "qwen2.5-7b-instruct-q8_0-00002-of-00003.gguf": 3.99,
    "qwen2.5-7b-instruct-q8_0-00003-of-00003.gguf": 0.12,
    "qwen2.5-7b-instruct-fp16-00001-of-00004.gguf": 3.99,
    "qwen2.5-7b-instruct-fp16-00002-of-00004.gguf": 3.99,
    "qwen2.5-7b-instruct-fp16-00003-of-00004.gguf": 3.99,
    "qwen2.5-7b-instruct-fp16-00004-of-00004.gguf": 3.27,
}


def main(out: Path) -> int:
    app = QApplication.instance() or QApplication(sys.argv)
    with HubStub() as hub:
        os.environ["HF_ENDPOINT"] = hub.url
        for name, gb in FILES.items():
            hub.add_file(REPO, name, b"", listed_size=int(gb * GB))
        box = Machine(ram_total=16 * GB, ram_available=12 * GB,
                      gpus=[Gpu(0, "vulkan", "Radeon RX 7600", total_bytes=8 * GB, free_bytes=7 * GB)],
                      described=True)
        runner = TaskRunner()
        vm = GetModelsViewModel(runner, box, Path(tempfile.gettempdir()) / "Models",
                                rate=speed.Throughput(36e9, "described", 2))
        dialog = GetModelsDialog(vm)
        dialog.resize(980, 600)
        dialog.show()
        dialog.starters.setCurrentRow([o.starter.repo for o in vm.offers].index(REPO))
        while not vm.models:
            app.processEvents()
        for _ in range(20):
            app.processEvents()
        dialog.grab().save(str(out))
        runner.wait(5000)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/get-models.png")))
