"""A loopback model hub serving the starters' real geometries, for the window's screenshots:

    .venv/bin/python docs/shots/demo_hub.py [PORT]      # then HF_ENDPOINT=http://127.0.0.1:PORT

Each file is the corpus's sparse copy of the published model (testing/corpus: the exact
header, the tensor data a hole), served at its real size under the name its publisher uses,
so Get models judges it from its header, and a download lands a file the engine loads. The
Qwen3.5-0.8B that is downloaded in the screenshots is the agreeing copy
(testing/corpus/agreeing.py): a few tensors written so that the model and its MTP head agree
on one word, so the window shows real drafting (its replies are " faster faster ...": they
mean nothing). Families the corpus has no geometry for are not served: the window then says
they were not found. Runs until stopped; bound to 127.0.0.1.
"""

from __future__ import annotations

import sys
import time

from draftwise.testing.corpus import agreeing, build, registry
from draftwise.testing.hubstub import HubStub

# (repository, file, corpus model): what a publisher's listing holds for each starter.
SERVED = (
    ("unsloth/Qwen3.5-0.8B-GGUF", "Qwen3.5-0.8B-Q4_K_M.gguf", "Qwen3.5-0.8B"),
    ("unsloth/Qwen3.6-35B-A3B-GGUF", "Qwen3.6-35B-A3B-Q4_K_M.gguf", "Qwen3.6-35B-A3B"),
    ("unsloth/gemma-4-26B-A4B-it-GGUF", "gemma-4-26B-A4B-it-Q4_K_M.gguf", "gemma-4-26B-A4B-it"),
    ("unsloth/gemma-4-26B-A4B-it-GGUF", "gemma-4-26B-A4B-it-assistant-Q4_K_M.gguf", "gemma-4-26B-A4B-it-assistant"),
    ("ggml-org/gpt-oss-20b-GGUF", "gpt-oss-20b-mxfp4.gguf", "gpt-oss-20b"),
    ("unsloth/gemma-3-4b-it-GGUF", "gemma-3-4b-it-Q4_K_M.gguf", "gemma-3-4b-it"),
    ("unsloth/gemma-3-270m-it-GGUF", "gemma-3-270m-it-Q4_K_M.gguf", "gemma-3-270m-it"),
)
# Only these are downloaded in the screenshots: their listing carries the real sha256.
DOWNLOADED = {"Qwen3.5-0.8B-Q4_K_M.gguf"}


def serve(port: int = 0) -> HubStub:
    hub = HubStub(port=port)
    for repo, name, model in SERVED:
        path = build.generate(registry.get(model))
        if name in DOWNLOADED:
            drafting = path.parent / "agreeing" / path.name
            if not drafting.is_file():
                drafting.parent.mkdir(exist_ok=True)
                agreeing.write_agreeing(path, drafting)
            path = drafting
        hub.add_sparse(repo, name, path, **({} if name in DOWNLOADED else {"sha256": "0" * 64}))
        hub.repos[repo].downloads = 1000
    return hub


def main() -> int:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
    with serve(port) as hub:
        print(f"HF_ENDPOINT={hub.url}", flush=True)
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    raise SystemExit(main())
