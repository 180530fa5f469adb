"""Time the pairing check where it runs: the library scan and the plan, on Qwen-size headers.

Writes (in a temp dir) a Qwen2.5-7B-like target header (151,936 BPE tokens padded with 128
UNUSED `[PADn]` entries to 152,064, ~151k merges, ~700 tiny tensors) and a 0.5B-like draft
header (the same 151,936 tokens, no padding), plus a target with the draft's exact
vocabulary. Prints the median of:

- scan: `read_model(target)`, what the library scan does per file (no token list kept);
- plan: `resolve(target, draft=...)`, which reads the draft's header once and pairs it.

Run it against another checkout with DRAFTWISE_APP=/path/to/app to compare before/after
(an older resolver refuses the padded pair: that case then times the refusal).

    .venv/bin/python bench/pairing.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.environ.get("DRAFTWISE_APP") or str(Path(__file__).resolve().parents[1] / "app"))

from draftwise.core.engines.capabilities import pinned_caps  # noqa: E402
from draftwise.core.gguf.reader import clear_header_cache, read_model  # noqa: E402
from draftwise.core.speculation import draft_check, resolver  # noqa: E402

try:
    from draftwise.core.speculation import pairing  # noqa: E402
except ImportError:  # an older checkout
    pairing = None

N_VOCAB = 151_936
N_PAD = 128
N_MERGES = 151_387


def _tokens(rng: random.Random) -> list[str]:
    alphabet = "abcdefghijklmnopqrstuvwxyzĠĊ0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZéüñ中文的"
    seen: set[str] = set()
    tokens: list[str] = []
    while len(tokens) < N_VOCAB - 22:
        t = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        if t not in seen:
            seen.add(t)
            tokens.append(t)
    return tokens + [f"<|special_{i}|>" for i in range(22)]


def write(path: Path, tokens: list[str], merges: list[str], *, pad: int, layers: int, embd: int) -> None:
    import gguf

    types = [1] * (N_VOCAB - 22) + [3] * 22
    tokens = tokens + [f"[PAD{i}]" for i in range(N_VOCAB, N_VOCAB + pad)]
    types += [5] * pad  # UNUSED, as convert_hf_to_gguf.py writes padding
    w = gguf.GGUFWriter(path, "qwen2")
    w.add_name(path.stem)
    w.add_file_type(15)
    w.add_block_count(layers)
    w.add_context_length(32768)
    w.add_embedding_length(embd)
    w.add_feed_forward_length(embd * 5)
    w.add_head_count(embd // 128)
    w.add_head_count_kv(4)
    w.add_rope_freq_base(1_000_000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(151643)
    w.add_eos_token_id(151645)
    w.add_add_bos_token(False)
    tiny = np.zeros(32, dtype=np.float32)
    w.add_tensor("token_embd.weight", tiny)
    w.add_tensor("output_norm.weight", tiny)
    for i in range(layers):
        for part in ("attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "attn_q.bias",
                     "attn_k.bias", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down"):
            w.add_tensor(f"blk.{i}.{part}" + ("" if part.endswith(".bias") else ".weight"), tiny)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def _ms(fn, runs: int) -> str:
    """Median and minimum (the minimum is what a busy machine cannot inflate)."""
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return f"{statistics.median(out) * 1e3:.1f} ms (min {min(out) * 1e3:.1f})"


def _plan(target, draft: Path) -> str:
    try:
        d = resolver.resolve(target, resolver.SpecOptions(draft=draft), pinned_caps())
        return f"accepted ({d.spec_type})"
    except resolver.ResolveError as exc:
        return f"refused: {str(exc)[:90]}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    rng = random.Random(1234)
    tokens = _tokens(rng)
    merges = [f"{rng.choice(tokens[:5000])} {rng.choice(tokens[:5000])}" for _ in range(N_MERGES)]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        padded, same, draft = folder / "Qwen-7B-padded.gguf", folder / "Qwen-7B-same.gguf", folder / "Qwen-0.5B.gguf"
        t0 = time.perf_counter()
        write(padded, tokens, merges, pad=N_PAD, layers=28, embd=3584)
        write(same, tokens, merges, pad=0, layers=28, embd=3584)
        write(draft, tokens, merges, pad=0, layers=24, embd=896)
        print(f"wrote 3 headers ({padded.stat().st_size / 1e6:.1f} MB each) in {time.perf_counter() - t0:.1f} s")
        print(f"app: {resolver.__file__}")
        for name, target_path in (("padded target 152,064 / draft 151,936", padded),
                                  ("same vocabulary 151,936 / 151,936", same)):
            target = read_model(target_path)
            # Each run parses the headers again (a first plan): the reader's cache would answer
            # an unchanged file from memory.
            scan = _ms(lambda p=target_path: (clear_header_cache(), read_model(p)), args.runs)
            plan = _ms(lambda t=target: (clear_header_cache(), _plan(t, draft)), args.runs)
            print(f"{name}: {_plan(target, draft)}")
            print(f"  scan {scan}, plan {plan}, median of {args.runs}")
            if pairing is not None:
                kept = draft_check.read_draft(draft)
                check = _ms(lambda t=target, k=kept: pairing.check(t, k), args.runs)
                print(f"  the pairing check alone: {check} -> {pairing.check(target, kept)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
