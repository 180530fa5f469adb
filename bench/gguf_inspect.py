"""Time draftwise's GGUF header reader against gguf-py's GGUFReader on a Qwen-size header.

Writes (in a temp dir) a header-heavy file like Qwen2.5/Qwen3: 151,936 token strings,
~151k merges, score and token-type arrays and ~700 tensors with tiny data, then prints the
median of `read_header`/`read_model` over several runs and of GGUFReader over at least
three (it takes seconds a run; one run is one sample, not a median). Target: reader <= 50 ms
median and >= 300x faster; exits 1 when missed.

    .venv/bin/python bench/gguf_inspect.py [--gguf-runs N] [--runs N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "app"))

from draftwise.core.gguf.reader import clear_header_cache, read_header, read_model  # noqa: E402

N_VOCAB = 151_936
N_MERGES = 151_387
N_LAYERS = 64  # 64 layers x 11 tensors + 3 = 707 tensors
MIN_GGUF_RUNS = 3


def _tokens(rng: random.Random) -> list[str]:
    alphabet = "abcdefghijklmnopqrstuvwxyzĠĊ0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZéüñ中文的"
    seen: set[str] = set()
    tokens: list[str] = []
    while len(tokens) < N_VOCAB - 22:
        t = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        if t not in seen:
            seen.add(t)
            tokens.append(t)
    tokens += [f"<|special_{i}|>" for i in range(22)]
    return tokens


def write_qwen_like(path: Path) -> None:
    import gguf

    rng = random.Random(1234)
    tokens = _tokens(rng)
    merges = [f"{rng.choice(tokens[:5000])} {rng.choice(tokens[:5000])}" for _ in range(N_MERGES)]
    w = gguf.GGUFWriter(path, "qwen2")
    w.add_name("Qwen-size header benchmark")
    w.add_file_type(15)
    w.add_block_count(N_LAYERS)
    w.add_context_length(32768)
    w.add_embedding_length(5120)
    w.add_feed_forward_length(27648)
    w.add_head_count(40)
    w.add_head_count_kv(8)
    w.add_rope_freq_base(1_000_000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(tokens)
    w.add_token_types([1] * (N_VOCAB - 22) + [3] * 22)
    w.add_token_scores([0.0] * N_VOCAB)
    w.add_token_merges(merges)
    w.add_bos_token_id(151643)
    w.add_eos_token_id(151645)
    w.add_chat_template("{% for m in messages %}{{ m['content'] }}{% endfor %}" * 40)
    tiny = np.zeros(32, dtype=np.float32)
    w.add_tensor("token_embd.weight", tiny)
    w.add_tensor("output_norm.weight", tiny)
    w.add_tensor("output.weight", tiny)
    for i in range(N_LAYERS):
        for part in (
            "attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "attn_q.bias",
            "attn_k.bias", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down",
        ):  # fmt: skip
            name = f"blk.{i}.{part}" + ("" if part.endswith(".bias") else ".weight")
            w.add_tensor(name, tiny)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def _time(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15, help="runs of our reader (median)")
    ap.add_argument("--gguf-runs", type=int, default=MIN_GGUF_RUNS,
                    help=f"runs of gguf.GGUFReader (median; at least {MIN_GGUF_RUNS})")
    ap.add_argument("--keep", type=Path, help="write the file here and keep it")
    args = ap.parse_args()
    if args.gguf_runs < MIN_GGUF_RUNS or args.runs < MIN_GGUF_RUNS:
        ap.error(f"--runs and --gguf-runs must be at least {MIN_GGUF_RUNS}: the ratio is of medians")

    with tempfile.TemporaryDirectory() as tmp:
        path = (args.keep or Path(tmp)) / "qwen-like.gguf"
        path.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        write_qwen_like(path)
        print(
            f"wrote {path.name}: {path.stat().st_size / 1e6:.1f} MB in {time.perf_counter() - t0:.1f} s"
        )

        h = read_header(path)
        print(
            f"  {len(h.kv)} keys, {len(h.arrays)} long arrays "
            f"({', '.join(f'{k}[{a.length}]' for k, a in h.arrays.items())}), "
            f"{len(h.tensors)} tensors, data at byte {h.data_offset}"
        )
        # Parsed every run: the reader's cache would answer an unchanged file from memory.
        ours = _time(lambda: (clear_header_cache(), read_header(path)), args.runs)
        model = _time(lambda: (clear_header_cache(), read_model(path)), args.runs)

        import gguf

        theirs = _time(lambda: gguf.GGUFReader(path), args.gguf_runs)

    med, med_model, med_theirs = (statistics.median(x) for x in (ours, model, theirs))
    print(f"read_header {med * 1e3:.1f} ms median of {args.runs} (min {min(ours) * 1e3:.1f} ms)")
    print(f"read_model  {med_model * 1e3:.1f} ms median of {args.runs}")
    print(
        f"reader {med * 1e3:.1f} ms median, GGUFReader {med_theirs:.1f} s "
        f"(median of {args.gguf_runs}), {med_theirs / med:.0f}x faster"
    )
    ok = med <= 0.050 and med_theirs / med >= 300
    print("target (<= 50 ms, >= 300x):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
