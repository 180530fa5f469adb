"""docs/vision.png: the real window, a tiny Gemma 3 launched with its tiny projector, a chat
with an attached picture. Run under Xvfb from the repository root:

    PYTHONPATH=app xvfb-run -a .venv/bin/python docs/shots/vision.py

The model's weights are random: the reply is nonsense, the path (projector planned and
passed, /props vision, the picture sent as image_url, tokens back) is real.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter, QPolygonF

from draftwise.testing import projectors
from draftwise.testing import tinyarchs as ta

TEMPLATE = ("{% for m in messages %}<start_of_turn>{{ m['role'] }}\n{{ m['content'] }}<end_of_turn>\n"
            "{% endfor %}<start_of_turn>model\n")


def picture(path: Path) -> Path:
    """A sun over the sea, drawn with QImage."""
    _app = QGuiApplication.instance() or QGuiApplication(sys.argv)
    image = QImage(320, 200, QImage.Format.Format_RGB32)
    image.fill(QColor("#8fd3ff"))
    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(QColor("#ffcc33"))
    p.drawEllipse(QPointF(220, 70), 36, 36)
    p.setBrush(QColor("#1f6fb2"))
    p.drawRect(0, 130, 320, 70)
    p.setBrush(QColor("#ffffff"))
    p.drawPolygon(QPolygonF([QPointF(70, 128), QPointF(110, 128), QPointF(90, 70)]))
    p.end()
    image.save(str(path), "PNG")
    return path


def main() -> int:
    folder = Path(tempfile.mkdtemp(prefix="draftwise-vision-")) / "tiny-gemma3-vision"
    m = ta.gemma3_model(extra_kv={"tokenizer.chat_template": TEMPLATE})
    model = ta.write_arch(folder / "gemma3-tiny-vision.gguf", m)[0]
    projectors.write_gemma3_projector(folder / "mmproj-gemma3-tiny-F16.gguf", m.n_embd)
    pic = picture(folder.parent / "sunset.png")
    return subprocess.call([sys.executable, "-m", "draftwise.gui", "--screenshot", "docs/vision.png",
                            "--model", str(model), "--launch", "--chat", "What is in this picture?",
                            "--picture", str(pic), "--size", "1280x820"])  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
