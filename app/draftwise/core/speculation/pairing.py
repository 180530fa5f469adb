"""Whether a drafter may draft for a model: the engine's own vocabulary rule, plus what the
engine does not check but needs.

The engine (common/speculative.cpp, `common_speculative_are_compatible`, in the pinned
source) accepts a draft when, in this order:

1. the vocabulary types match (SPM, BPE, ...);
2. `add_bos` matches and, when it is set, the BOS ids match;
3. `add_eos` matches and, when it is set, the EOS ids match;
4. the sizes differ by at most SPEC_VOCAB_MAX_SIZE_DIFFERENCE (128) tokens;
5. every token's text is equal from SPEC_VOCAB_CHECK_START_TOKEN_ID (5) up to the smaller
   size.

Otherwise it logs "the target and draft vocabs are not compatible" and serves without
speculation. It never looks at the architecture: a Qwen3 dense draft for a Qwen3 MoE model
passes. The values compared are the ones the engine loads (src/llama-vocab.cpp,
`llama_vocab::impl::load`): `tokenizer.ggml.add_bos_token` when written, else the default
of the tokenizer type and pre-tokenizer; BOS/EOS ids from the metadata when in range, else
the type's defaults. `EngineVocab` mirrors that.

What the engine does not check: an id only one side has. The engine aborts mid-reply the
first time the model emits a token the draft lacks, or the draft proposes one the model lacks
(`get_sub_batch: failed to add token N`), long after it reported ready. So:

- ids only the model has are *banned* on the model (`-l ID-inf`, `Verdict.bans`) when a
  reply never needs them: UNUSED padding (`[PADn]`), and special tokens (CONTROL) that do
  not end a reply and that the chat template does not write (Gemma 3 4B's
  `<image_soft_token>`). A banned id is never sampled, so the draft never meets it;
- an id only the model has that ends a reply (EOS, `<|end|>`, `<end_of_turn>`, as the engine
  finds them by id and by text) or that is text the model writes: refused, since banning it
  would change the answers (Phi-3's `<|end|>` beside a 32,000-id draft);
- ids only the draft has must be UNUSED padding (its proposals come from its own head).

Cost: header fields decide 1-4. For 5 the token lists are compared as stored bytes
(length-prefixed strings: equal bytes from token 5 on are equal texts), one memcmp; a model
summarized by the library scan carries only where its list lies (gguf.VocabPlace), so its
list is read here once per check, while the draft's comes from the resolver's one read of
its header (`read_model(..., keep_vocab=True)`). Equal token digests and sizes skip the
comparison altogether.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from draftwise.core.gguf import reader as gguf
from draftwise.core.messages import Message, msg

# common/speculative.cpp, pinned source.
SPEC_VOCAB_MAX_SIZE_DIFFERENCE = 128
SPEC_VOCAB_CHECK_START_TOKEN_ID = 5
# include/llama.h, enum llama_token_type.
TOKEN_TYPE_CONTROL, TOKEN_TYPE_UNUSED = 3, 5
LLAMA_TOKEN_NULL = -1
# Token texts the engine treats as ending a reply whatever their id (src/llama-vocab.cpp:
# the special_eog_ids list, and the FIM pad/repo/separator tokens it also counts).
EOG_TEXTS = frozenset({
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<\uff5cend\u2581of\u2581sentence\uff5c>", "[e~[",
    "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]",
    "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>", "<|file_sep|>",
})

# The condition that failed, for tests and the JSON output.
VOCAB_TYPE, BOS, EOS, SIZE, TOKEN_TEXT, NOT_PADDING, NO_VOCAB, UNREADABLE = (
    "vocab-type", "bos", "eos", "size", "token-text", "not-padding", "no-vocab", "unreadable",
)
# An id only the model has that a reply needs: it ends a reply, or it is text.
MODEL_ONLY = "model-only"
# The conditions the engine itself checks: a pair failing one of them is served without
# speculation by the engine; the others we refuse although the engine would start with them.
ENGINE_CONDITIONS = frozenset({VOCAB_TYPE, BOS, EOS, SIZE, TOKEN_TEXT})

# enum llama_vocab_type (include/llama.h) and the tokenizer.ggml.model names that pick it.
_TYPE_NAMES = ("none", "SPM", "BPE", "WPM", "UGM", "RWKV", "PLaMo-2", "test")
_VOCAB_TYPE = {
    "no_vocab": 0, "none": 0, "llama": 1, "gpt2": 2, "hybriddna": 2, "whitespace": 2, "gemma4": 2,
    "bert": 3, "t5": 4, "rwkv": 5, "plamo2": 6, "test": 7,
}  # fmt: skip
# Default special ids per tokenizer model (BOS, EOS), before the metadata overrides them.
_N = LLAMA_TOKEN_NULL
_DEFAULT_IDS = {
    "llama": (1, 2), "bert": (101, _N), "gpt2": (11, 11), "hybriddna": (11, 11), "whitespace": (11, 11),
    "t5": (_N, 1), "rwkv": (_N, _N), "test": (_N, _N), "plamo2": (1, 2), "gemma4": (_N, _N),
}  # fmt: skip
# Default (add_bos, add_eos) per vocabulary type where the loader sets one (SPM, WPM, UGM,
# RWKV); BPE keeps the member defaults (false, false) unless its pre-tokenizer says otherwise.
_DEFAULT_ADD = {1: (True, False), 3: (True, False), 4: (False, True), 5: (False, False)}
_BPE_PRE_ADD_BOS = frozenset({
    "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
    "jina-v5-nano", "tekken", "chameleon",
})
_BPE_PRE_NO_BOS = frozenset({"chatglm-bpe", "glm4", "glm5"})
_BPE_PRE_GEMMA4 = frozenset({"gemma4", "granite-embed-multi-311m"})  # add_bos forced on

_U64 = struct.Struct("<Q")


@dataclass(frozen=True)
class EngineVocab:
    """What the engine loads from a header's tokenizer, as far as pairing goes."""

    type: int | None  # enum llama_vocab_type; None: a tokenizer the engine does not know
    add_bos: bool
    add_eos: bool
    bos: int
    eos: int
    n_tokens: int

    @property
    def type_name(self) -> str:
        return _TYPE_NAMES[self.type] if self.type is not None and 0 <= self.type < len(_TYPE_NAMES) else "unknown"


def engine_vocab(tok: gguf.TokenizerId) -> EngineVocab:
    """The vocabulary as `llama_vocab::impl::load` sets it up from these header fields."""
    model = tok.model or ""
    vtype = _VOCAB_TYPE.get(model)
    n = tok.vocab_size or 0
    if vtype == 0:
        # The loader returns early: no special tokens, no add_bos/add_eos handling.
        return EngineVocab(0, False, False, LLAMA_TOKEN_NULL, LLAMA_TOKEN_NULL, n)
    bos, eos = _DEFAULT_IDS.get(model, (LLAMA_TOKEN_NULL, LLAMA_TOKEN_NULL))
    add_bos, add_eos = _DEFAULT_ADD.get(vtype or -1, (False, False))
    pre = "gemma4" if model == "gemma4" else (tok.pre or "")
    if vtype == 2:
        if pre in _BPE_PRE_ADD_BOS:
            add_bos = True
        if pre in _BPE_PRE_NO_BOS:
            bos = LLAMA_TOKEN_NULL
    # Defaults out of range are disabled; metadata ids out of range keep the default.
    bos, eos = (i if 0 <= i < n else LLAMA_TOKEN_NULL for i in (bos, eos))
    if tok.bos_id is not None and 0 <= tok.bos_id < n:
        bos = tok.bos_id
    if tok.eos_id is not None and 0 <= tok.eos_id < n:
        eos = tok.eos_id
    if tok.add_bos is not None:
        add_bos = tok.add_bos
    if tok.add_eos is not None:
        add_eos = tok.add_eos
    if vtype == 2 and pre in _BPE_PRE_GEMMA4:
        add_bos = True
    return EngineVocab(vtype, add_bos, add_eos, bos, eos, n)


@dataclass(frozen=True)
class Verdict:
    """Whether the draft may draft for the model, and if not the condition and why."""

    condition: str | None = None  # None: compatible
    reason: Message | None = None  # what failed, as a phrase about the draft
    # Ids only the model has, none of which a reply needs: the launch bans each on the
    # model (`-l ID-inf`), so the draft never meets one. Only on a compatible verdict.
    bans: tuple[int, ...] = ()

    @property
    def ok(self) -> bool:
        return self.condition is None

    @property
    def engine_accepts(self) -> bool:
        """What the engine's own check would say (it does not check ids only one side has)."""
        return self.condition not in ENGINE_CONDITIONS

    def ban_note(self) -> Message | None:
        """The bans in words, for the decision's notes (None without bans)."""
        if not self.bans:
            return None
        first, last = self.bans[0], self.bans[-1]
        ids = str(first) if first == last else f"{first}–{last}"
        return msg("{count} token ids only the model has ({ids}) are banned on the model (-l ID-inf): "
                   "no reply needs them, and the draft cannot take them.", count=len(self.bans), ids=ids)

    def __str__(self) -> str:
        return str(self.reason) if self.reason is not None else "compatible"


COMPATIBLE = Verdict()


def check(target: gguf.ModelInfo, draft: gguf.ModelInfo) -> Verdict:
    """The engine's rule and the padding condition, for `draft` drafting for `target`.

    Reads the target's token list from its file when the two lists must be compared and it
    is not kept (`ModelInfo.vocab`); the draft's is expected kept by the caller's read.
    """
    t, d = engine_vocab(target.tokenizer), engine_vocab(draft.tokenizer)
    if t.type is None or d.type is None or t.type == 0 or d.type == 0:
        which = draft.tokenizer.model if d.type in (None, 0) else target.tokenizer.model
        side = msg("the draft") if d.type in (None, 0) else msg("the model")
        return Verdict(NO_VOCAB, msg("{side} has no vocabulary the engine can compare (tokenizer {tokenizer})",
                                     side=side, tokenizer=which or "missing"))
    if t.type != d.type:
        return Verdict(VOCAB_TYPE, msg("its tokenizer type differs ({draft} in the draft, {target} in the model)",
                                       draft=d.type_name, target=t.type_name))
    if t.add_bos != d.add_bos:
        return Verdict(BOS, msg("it adds a BOS token differently (add_bos {draft} in the draft, {target} in the model)",
                                draft=_yes(d.add_bos), target=_yes(t.add_bos)))
    if t.add_bos and t.bos != d.bos:
        return Verdict(BOS, msg("its BOS token differs (id {draft} in the draft, {target} in the model)",
                                draft=d.bos, target=t.bos))
    if t.add_eos != d.add_eos:
        return Verdict(EOS, msg("it adds an EOS token differently (add_eos {draft} in the draft, {target} in the model)",
                                draft=_yes(d.add_eos), target=_yes(t.add_eos)))
    if t.add_eos and t.eos != d.eos:
        return Verdict(EOS, msg("its EOS token differs (id {draft} in the draft, {target} in the model)",
                                draft=d.eos, target=t.eos))
    diff = abs(t.n_tokens - d.n_tokens)
    if diff > SPEC_VOCAB_MAX_SIZE_DIFFERENCE:
        return Verdict(SIZE, msg("its vocabulary size differs by {diff} tokens ({draft} in the draft, {target} in "
                                 "the model; the engine allows {limit})",
                                 diff=diff, draft=d.n_tokens, target=t.n_tokens, limit=SPEC_VOCAB_MAX_SIZE_DIFFERENCE))
    if diff == 0 and target.tokenizer.tokens_sha256 and target.tokenizer.tokens_sha256 == draft.tokenizer.tokens_sha256:
        return COMPATIBLE  # the same token list: nothing to compare, nothing only in one
    try:
        tv, dv = gguf.read_vocab(target), gguf.read_vocab(draft)
    except gguf.GGUFError as exc:
        return Verdict(UNREADABLE, msg("its token list could not be compared ({error})", error=exc.reason))
    ends = frozenset(i for i in (t.eos, *target.tokenizer.end_ids) if i != LLAMA_TOKEN_NULL)
    return compare_tokens(tv, dv, end_ids=ends, chat_template=target.chat_template or "")


def compare_tokens(target: gguf.Vocab, draft: gguf.Vocab, *, end_ids: frozenset[int] = frozenset(),
                   chat_template: str = "") -> Verdict:
    """Condition 5 and the ids only one side has, on two stored token lists (sizes already
    within range). `end_ids`: the model's ids that end a reply by its header (EOS, EOT, ...);
    `chat_template`: the model's, which must not write an id to be banned."""
    m = min(target.count, draft.count)
    start = min(SPEC_VOCAB_CHECK_START_TOKEN_ID, m)
    try:
        pt = gguf.skip_strings(target.tokens, 0, start)
        pd = gguf.skip_strings(draft.tokens, 0, start)
        small, large = (draft, target) if draft.count <= target.count else (target, draft)
        p_small, p_large = (pd, pt) if small is draft else (pt, pd)
        # One memcmp over the megabytes, no copies (startswith takes a view and an offset).
        if not large.tokens.startswith(memoryview(small.tokens)[p_small:], p_large):
            return _first_difference(target, draft, pt, pd, start, m)
    except ValueError:
        return Verdict(UNREADABLE, msg("its token list could not be compared ({error})", error="the list is damaged"))
    if large is draft:
        for token_id in range(m, large.count):
            if large.type_of(token_id) != TOKEN_TYPE_UNUSED:
                return Verdict(NOT_PADDING, msg(
                    "token {id} exists only in the draft and is not padding: the engine would stop mid-reply "
                    "the first time the draft proposes it (the model's vocabulary ends at {size})",
                    id=token_id, size=target.count))
        return COMPATIBLE
    # The draft's list matched the model's byte for byte from token `start`: the model's
    # token `m` begins right after that run (no second walk over the list).
    at_m = p_large + len(small.tokens) - p_small
    try:
        return _model_only(target, m, at_m, draft.count, end_ids, chat_template)
    except (ValueError, struct.error):
        return Verdict(UNREADABLE, msg("its token list could not be compared ({error})", error="the list is damaged"))


def _model_only(target: gguf.Vocab, m: int, pos: int, draft_size: int, end_ids: frozenset[int],
                chat_template: str) -> Verdict:
    """Ids `m`.. that only the model has (token `m` at byte `pos` of its list): bans for
    those no reply needs, or a refusal naming the first one a reply needs (it ends a reply,
    it is text, or the template writes it)."""
    bans: list[int] = []
    for token_id in range(m, target.count):
        n = _U64.unpack_from(target.tokens, pos)[0]
        text = bytes(target.tokens[pos + 8 : pos + 8 + n]).decode("utf-8", "replace")
        pos += 8 + n
        kind = target.type_of(token_id)
        if kind == TOKEN_TYPE_UNUSED:
            bans.append(token_id)
            continue
        if token_id in end_ids or text in EOG_TEXTS:
            return Verdict(MODEL_ONLY, msg(
                "token {id} ({text}) exists only in the model and ends a reply: the engine would stop mid-reply "
                "when the model writes it, and banning it would change the answers (the draft's vocabulary ends "
                "at {size})", id=token_id, text=repr(text), size=draft_size))
        if kind != TOKEN_TYPE_CONTROL:
            return Verdict(MODEL_ONLY, msg(
                "token {id} ({text}) exists only in the model and is text it writes: the engine would stop "
                "mid-reply when the model writes it, and banning it would change the answers (the draft's "
                "vocabulary ends at {size})", id=token_id, text=repr(text), size=draft_size))
        if text and text in chat_template:
            return Verdict(MODEL_ONLY, msg(
                "token {id} ({text}) exists only in the model and its chat template writes it: the engine "
                "would stop mid-reply, and banning it would change the answers (the draft's vocabulary ends "
                "at {size})", id=token_id, text=repr(text), size=draft_size))
        bans.append(token_id)
    return Verdict(bans=tuple(bans))


def _first_difference(target: gguf.Vocab, draft: gguf.Vocab, pt: int, pd: int, start: int, m: int) -> Verdict:
    """The first token from `start` whose text differs (the lists are known to differ)."""
    a, b = target.tokens, draft.tokens
    for token_id in range(start, m):
        na = 8 + _U64.unpack_from(a, pt)[0]
        nb = 8 + _U64.unpack_from(b, pd)[0]
        if a[pt : pt + na] != b[pd : pd + nb]:
            return Verdict(TOKEN_TEXT, msg("token {id} differs ({draft} in the draft, {target} in the model)",
                                           id=token_id, draft=_text(b, pd, nb), target=_text(a, pt, na)))
        pt, pd = pt + na, pd + nb
    raise ValueError("token lists differ but no token does")


def _text(buf: bytes, pos: int, n: int) -> str:
    text = bytes(buf[pos + 8 : pos + n]).decode("utf-8", "replace")
    return repr(text if len(text) <= 40 else text[:40] + "…")


def _yes(flag: bool) -> Message:
    return msg("on") if flag else msg("off")
