"""Screenshot of "Get models" against the loopback hub stand-in (no network), offscreen:

    QT_QPA_PLATFORM=offscreen .venv/bin/python docs/shots/get_models.py OUT.png

The stand-in publishes tiny real GGUF models under starter names (testing/tinymodels.py: a
"Qwen3.5 0.8B" with its MTP head, a "Gemma 3 4B" and its family's 270M draft model) and one
file that is no GGUF, so every verdict in the picture is the planner's own, judged from the
headers over HTTP ranges; the sizes and speeds are the tiny files', not the real models'. The
machine and its processor's speed are described (16 GB, a Radeon RX 7600 with 8 GB, 36 GB/s),
and the data and cache folders are temporary, so the picture is the same everywhere.
(docs/get-models.png itself was taken from the real window under Xvfb from an empty home:
README, "Getting models".)
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

REPO = "unsloth/gemma-3-4b-it-GGUF"


def main(out: Path) -> int:
    home = Path(tempfile.mkdtemp(prefix="draftwise-shot-"))
    for var, name in (("DRAFTWISE_DATA_DIR", "data"), ("DRAFTWISE_CONFIG_DIR", "config"),
                      ("DRAFTWISE_CACHE_DIR", "cache"), ("DRAFTWISE_MODELS_DIR", "Models")):  # fmt: skip
        os.environ[var] = str(home / name)
    os.environ.pop("HF_TOKEN", None)
    from PySide6.QtWidgets import QApplication

    from draftwise.core.machine import speed
    from draftwise.core.machine.hardware import GB, Gpu, Machine
    from draftwise.services.library_scan import TaskRunner
    from draftwise.testing import tinymodels as tm
    from draftwise.testing.hubstub import HubStub
    from draftwise.ui.get_models_dialog import GetModelsDialog
    from draftwise.viewmodels.get_models import GetModelsViewModel

    app = QApplication.instance() or QApplication(sys.argv)
    files = home / "hubfiles"
    target = tm.TinyModel(name="gemma-3-4b-it")
    published = {
        ("unsloth/Qwen3.5-0.8B-GGUF", "Qwen3.5-0.8B-Q4_K_M.gguf"): tm.mtp_model(),
        (REPO, "gemma-3-4b-it-Q4_K_M.gguf"): target,
        (REPO, "gemma-3-4b-it-Q8_0.gguf"): target,
        ("unsloth/gemma-3-270m-it-GGUF", "gemma-3-270m-it-Q8_0.gguf"): tm.draft_model(target),
    }
    with HubStub() as hub:
        os.environ["HF_ENDPOINT"] = hub.url
        for (repo, name), model in published.items():
            path = tm.write_tiny_model(files / repo / name, model)[0]
            hub.add_sparse(repo, name, path)
        hub.add_file(REPO, "gemma-3-4b-it-IQ2_XS.gguf", b"<html>not a model</html>" * 100)
        box = Machine(ram_total=16 * GB, ram_available=12 * GB,
                      gpus=[Gpu(0, "vulkan", "Radeon RX 7600", total_bytes=8 * GB, free_bytes=7 * GB)],
                      described=True)
        runner = TaskRunner()
        vm = GetModelsViewModel(runner, box, home / "Models", rate=speed.Throughput(36e9, "described", 2))
        dialog = GetModelsDialog(vm)
        dialog.show()
        while vm.finding:
            app.processEvents()
        vm.open_repo(REPO)
        while vm.loading or any(vm.pending(m) for m in vm.models):
            app.processEvents()
        for _ in range(20):
            app.processEvents()
        dialog.grab().save(str(out))
        runner.wait(5000)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/get-models.png")))
