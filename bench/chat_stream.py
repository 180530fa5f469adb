"""The chat pane while a reply streams: the largest UI-thread stall over 2,000 tokens.

A 5 ms heartbeat runs on the UI thread while the chat pane (shown, offscreen) receives a
2,000-token reply; the longest gap between beats is the worst stall. Target <= 50 ms; the
script exits 1 when it is missed.

By default the reply comes from a local server that speaks llama-server's streaming format
(one chunk per token with per-token timings, paced at --rate tokens/s, default 400: faster
than a CPU engine writes, so the pane re-renders a long, growing Markdown reply often) and
carries Markdown with code blocks. `--engine` streams
from the real llama-server with a tiny model instead (`ignore_eos`, so it really writes
2,000 tokens).

Run: .venv/bin/python bench/chat_stream.py [--tokens 2000] [--rate 400] [--engine [--warm]]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
SCRATCH = Path(tempfile.mkdtemp(prefix="draftwise-bench-chat-"))

TARGET_S = 0.050
WORDS = ("The", " draft", " model", " guesses", " ahead", ",", " and", " the", " target", " checks", ".")


def token_text(i: int) -> str:
    """Markdown in pieces: prose, a list, and a fenced code block every 200 tokens."""
    k = i % 200
    if k == 0:
        return f"\n\n## Part {i // 200 + 1}\n\n"
    if k == 120:
        return "\n\n```python\n"
    if 120 < k < 150:
        return f"x_{k} = {k} * 2\n" if k % 3 == 0 else " "
    if k == 150:
        return "```\n\n- "
    return WORDS[i % len(WORDS)]


def chunk(obj: dict) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


class _Handler(BaseHTTPRequestHandler):
    tokens = 2000
    rate = 400.0

    def log_message(self, *args) -> None:  # quiet
        return

    def do_POST(self) -> None:  # noqa: N802 — http.server API
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        start = time.perf_counter()
        self.wfile.write(chunk({"choices": [{"index": 0, "delta": {"role": "assistant", "content": None}}]}))
        for i in range(self.tokens):
            delay = start + (i + 1) / self.rate - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            ms = (time.perf_counter() - start) * 1000
            timings = {"prompt_n": 12, "prompt_ms": 5.0, "predicted_n": i + 1, "predicted_ms": ms,
                       "predicted_per_second": (i + 1) * 1000 / max(ms, 1e-3), "draft_n": i, "draft_n_accepted": i // 2}
            self.wfile.write(chunk({"choices": [{"index": 0, "finish_reason": None,
                                                 "delta": {"content": token_text(i)}}], "timings": timings}))
        self.wfile.write(chunk({"choices": [{"index": 0, "finish_reason": "stop", "delta": {}}], "timings": timings}))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def serve(tokens: int, rate: float) -> None:
    """--serve: the local server in its own process (a thread would share the UI's GIL)."""
    _Handler.tokens = tokens
    _Handler.rate = rate
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


def synthetic_launch(tokens: int, rate: float):
    proc = subprocess.Popen([sys.executable, __file__, "--serve", "--tokens", str(tokens), "--rate", str(rate)],
                            stdout=subprocess.PIPE, text=True)
    port = int(proc.stdout.readline())
    url = f"http://127.0.0.1:{port}"
    spec = SimpleNamespace(url=url, api_key="bench", spec=SimpleNamespace(spec_type="draft-simple", argv=("x",)))

    def stop() -> None:
        proc.terminate()
        proc.wait(10)

    return spec, stop


def engine_launch():
    from draftwise.core.engines import provision
    from draftwise.core.launch import headless
    from draftwise.testing import tinymodels as tm

    build = provision.installed("cpu")
    if build is None:
        sys.exit("llama-server is not installed; run `draftwise engine install`")
    model = tm.write_tiny_model(SCRATCH / "tiny-F32.gguf", tm.TinyModel())[0]
    server = headless.start_server(build.binary, model, ctx=4096, extra_args=["-t", "1"], log_dir=SCRATCH)
    server.wait_ready(timeout=120)
    spec = SimpleNamespace(url=server.base_url, api_key=server.api_key, spec=SimpleNamespace(spec_type=None, argv=()))
    return spec, server.stop


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=2000)
    ap.add_argument("--rate", type=float, default=400.0, help="tokens/s of the local server")
    ap.add_argument("--engine", action="store_true", help="stream from the real llama-server")
    ap.add_argument("--warm", action="store_true",
                    help="stream one reply first, unmeasured (Qt's font fallback lookups for scripts seen the "
                         "first time are a one-off cost; a random tiny model writes many scripts)")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(args.tokens, args.rate)
        return 0

    from PySide6.QtCore import QElapsedTimer, QEventLoop, QObject, QTimer, Signal
    from PySide6.QtWidgets import QApplication

    from draftwise.ui.chat_panel import ChatPanel
    from draftwise.viewmodels.chat import ChatViewModel

    app = QApplication.instance() or QApplication([])
    spec, stop = engine_launch() if args.engine else synthetic_launch(args.tokens, args.rate)

    class Ready(QObject):
        """A launch that is ready at `spec` (the bench measures the pane, not the launcher)."""

        state_changed = Signal(str)
        state, cause, fallback_reason, running = "ready", None, None, True

    launch = Ready()
    launch.spec = spec
    vm = ChatViewModel(launch)
    vm.max_tokens = args.tokens
    if args.engine:
        vm.extra_body = {"ignore_eos": True}
    panel = ChatPanel(vm)
    panel.resize(760, 900)
    panel.show()
    app.processEvents()

    beat = QTimer()
    beat.setInterval(5)
    clock = QElapsedTimer()
    worst, last = [0.0], [0.0]

    def on_beat() -> None:
        now = clock.nsecsElapsed() / 1e9
        worst[0] = max(worst[0], now - last[0])
        last[0] = now

    done = QEventLoop()
    if args.warm:
        vm.send("Warm up.")
        vm.changed.connect(lambda: done.quit() if not vm.busy else None)
        done.exec()
        vm.new_chat()
        done = QEventLoop()
    vm.changed.connect(lambda: done.quit() if not vm.busy else None)
    beat.timeout.connect(on_beat)
    clock.start()
    beat.start()
    t0 = time.perf_counter()
    vm.send("Explain speculative decoding.")
    QTimer.singleShot(300_000, done.quit)
    done.exec()
    took = time.perf_counter() - t0
    beat.stop()
    stop()
    reply = vm.turns[-1]
    tokens = reply.figures.tokens if reply.figures else 0
    ok = worst[0] <= TARGET_S and tokens >= args.tokens
    print(f"chat stream: {tokens} tokens in {took:.2f} s, {len(reply.content)} characters of Markdown; "
          f"worst UI stall {worst[0] * 1000:.1f} ms (target <= {TARGET_S * 1000:.0f} ms) — "
          f"{'ok' if ok else 'MISSED'}")
    print(f"figures line: {vm.figures_text(reply)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
