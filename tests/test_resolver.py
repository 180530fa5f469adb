"""The speculative decision, rule by rule, on real GGUF files written with gguf-py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from draftwise.core.engines.capabilities import parse_help, pinned_caps
from draftwise.core.gguf import reader as gguf
from draftwise.core.speculation import companions, decision_types, draft_check, resolver
from draftwise.core.speculation.resolver import ResolveError, SpecOptions, resolve
from draftwise.testing.tinymodels import TinyModel, write_tiny_model
from draftwise.testing.tinytensors import llama_tensors

CAPS = pinned_caps()


def _write(path: Path, model: TinyModel | None = None, **kw) -> Path:
    return write_tiny_model(path, model or TinyModel(), **kw)[0]


def _with_mtp_head(model: TinyModel, *, head: bool = True, trunk: bool = True) -> dict[str, np.ndarray]:
    """llama-shaped tensors plus the nextn tensors of the last block (reader-level fixture)."""
    trunk_layers = model.n_layer - model.nextn_predict_layers
    tensors = llama_tensors(model) if trunk else {}
    if not trunk:
        tensors = {k: v for k, v in llama_tensors(model).items() if k.startswith(f"blk.{trunk_layers}.")}
    if head:
        e = model.n_embd
        tensors[f"blk.{trunk_layers}.nextn.eh_proj.weight"] = np.zeros((e, 2 * e), np.float32)
        tensors[f"blk.{trunk_layers}.nextn.enorm.weight"] = np.ones(e, np.float32)
        tensors[f"blk.{trunk_layers}.nextn.hnorm.weight"] = np.ones(e, np.float32)
    else:
        tensors = {k: v for k, v in tensors.items() if not k.startswith(f"blk.{trunk_layers}.")}
    return tensors


MTP_MODEL = TinyModel(arch="glm4moe", name="GLM-tiny", n_layer=3, nextn_predict_layers=1)


def _mtp(path: Path, **kw) -> Path:
    return _write(path, MTP_MODEL, tensors=_with_mtp_head(MTP_MODEL, **kw))


def _read(path: Path) -> gguf.ModelInfo:
    return gguf.read_model(path)


@pytest.fixture
def target(tmp_path: Path) -> Path:
    # Wide enough that a 1-layer draft is well under half its size.
    return _write(tmp_path / "Tiny-7B-Q8_0.gguf", TinyModel(n_layer=6, n_embd=128, n_ff=256))


def _small(**kw) -> TinyModel:
    return TinyModel(**{"n_layer": 1, "n_embd": 32, "n_ff": 64, **kw})


# ----------------------------------------------------------------- rule 7: extra arguments
@pytest.mark.parametrize("args", [
    ["-m", "x.gguf"], ["--model", "x.gguf"], ["--model=x.gguf"],
    ["-md", "d.gguf"], ["--model-draft", "d.gguf"], ["--model-draft=d.gguf"],
    ["--spec-draft-model", "d.gguf"], ["--spec-draft-model=d.gguf"],
    # The engine reads `_` as `-` in long names: these are the same options.
    ["--model_draft", "d.gguf"], ["--spec_draft_model=d.gguf"],
])
def test_extra_args_may_not_respecify_model_or_draft(target, args):
    with pytest.raises(ResolveError) as err:
        resolve(_read(target), SpecOptions(extra_args=tuple(args)), CAPS)
    assert err.value.field == "extra_args"
    # Each flag sends the user to its own field (an `or` of the two would pass either way).
    sets_draft = args[0].startswith(("-md", "--model-draft", "--model_draft", "--spec"))
    assert ("Draft model field" in str(err.value)) == sets_draft
    assert ("Model field" in str(err.value)) == (not sets_draft)


def test_forbidden_args_are_refused_even_when_off(target):
    with pytest.raises(ResolveError):
        resolve(_read(target), SpecOptions(mtp="off", extra_args=("-md", "d.gguf")), CAPS)


# ----------------------------------------------------------------- rule 1: backend
def test_other_backend_gets_no_flags(target):
    d = resolve(_read(target), SpecOptions(backend="vllm"), CAPS)
    assert d.source == "none" and d.argv == () and "only for llama.cpp" in d.notes[0]


def test_other_backend_with_draft_or_off_is_an_error(target, tmp_path):
    draft = _write(tmp_path / "draft.gguf", _small())
    with pytest.raises(ResolveError, match="only with llama.cpp") as err:
        resolve(_read(target), SpecOptions(backend="mlx", draft=draft), CAPS)
    assert err.value.field == "draft"
    with pytest.raises(ResolveError, match="applies only to llama.cpp") as err:
        resolve(_read(target), SpecOptions(backend="vllm", mtp="off"), CAPS)
    assert err.value.field == "mtp"


# ----------------------------------------------------------------- rule 2: off
def test_off_means_no_flags_even_with_a_companion(target, tmp_path):
    _write(tmp_path / "Tiny-draft.gguf", _small())
    d = resolve(_read(target), SpecOptions(mtp="off"), CAPS)
    assert (d.source, d.argv, d.fallback_eligible) == ("off", (), False)


def test_off_with_a_draft_is_a_conflict(target, tmp_path):
    draft = _write(tmp_path / "Tiny-draft.gguf", _small())
    with pytest.raises(ResolveError, match="off but a draft model is set"):
        resolve(_read(target), SpecOptions(mtp="off", draft=draft), CAPS)


# ----------------------------------------------------------------- rule 3: user --spec-type
@pytest.mark.parametrize("args", [("--spec-type", "ngram-mod"), ("--spec-type=ngram-mod",),
                                  ("--spec_type", "ngram-mod")])
def test_users_spec_type_adds_nothing(target, tmp_path, args):
    _write(tmp_path / "Tiny-draft.gguf", _small())  # would be chosen by auto
    d = resolve(_read(target), SpecOptions(extra_args=args), CAPS)
    assert d.source == "user-args" and d.argv == () and not d.fallback_eligible
    assert "automatic detection was skipped" in d.notes[0]


def test_users_spec_type_with_the_draft_field(target, tmp_path):
    draft = _write(tmp_path / "mine.gguf", _small())
    d = resolve(_read(target), SpecOptions(draft=draft, extra_args=("--spec-type", "draft-simple")), CAPS)
    assert d.argv == ("--spec-draft-model", str(draft))


def test_users_unknown_spec_type_is_refused(target):
    with pytest.raises(ResolveError, match="no speculative type 'draft-magic'"):
        resolve(_read(target), SpecOptions(extra_args=("--spec-type", "draft-magic")), CAPS)


# ----------------------------------------------------------------- rule 4: explicit draft
def test_explicit_draft(target, tmp_path):
    draft = _write(tmp_path / "any-name-mtp.gguf", _small())  # the name says mtp; tensors don't
    d = resolve(_read(target), SpecOptions(draft=draft), CAPS)
    assert d.spec_type == "draft-simple" and d.source == "explicit" and not d.fallback_eligible
    assert d.argv == ("--spec-type", "draft-simple", "--spec-draft-model", str(draft))


def test_explicit_draft_errors(target, tmp_path):
    """The one draft check: each bad draft gets its state and sentence, and resolve raises that
    verdict (the window shows the error's `draft` under the field)."""
    model = _read(target)
    bad = tmp_path / "notes.gguf"
    bad.write_text("these are my notes, not a model")
    other = _write(tmp_path / "other.gguf", _small(vocab="other"))
    cases = {
        tmp_path / "missing.gguf": (decision_types.DraftState.MISSING, "does not exist"),
        tmp_path: (decision_types.DraftState.FOLDER, "is a folder"),
        target: (decision_types.DraftState.SAME_FILE, "is the model itself"),
        bad: (decision_types.DraftState.NOT_GGUF, "cannot be used"),
        other: (decision_types.DraftState.VOCAB, "cannot draft for this model: token 259 differs"),
    }
    for path, (state, message) in cases.items():
        verdict = draft_check.check_draft(model, path, CAPS)
        assert (verdict.state, verdict.ok) == (state, False), path
        assert message in str(verdict.reason)
        with pytest.raises(ResolveError, match=message) as err:
            resolve(model, SpecOptions(draft=path), CAPS)
        assert err.value.field == "draft" and err.value.draft == verdict


def test_the_draft_check_of_a_good_draft_is_the_decisions(target, tmp_path):
    draft = _write(tmp_path / "d.gguf", _small())
    verdict = draft_check.check_draft(_read(target), draft, CAPS)
    assert verdict.ok and verdict.state == decision_types.DraftState.OK and verdict.spec_type == "draft-simple"
    assert verdict.reason is None and verdict.info is not None and verdict.info.path == draft
    d = resolve(_read(target), SpecOptions(draft=draft), CAPS)
    assert d.draft_check == verdict and d.draft_info is d.draft_check.info
    # The user's own --spec-type says how the draft drafts: its type is not checked, the file is.
    users = resolve(_read(target), SpecOptions(draft=draft, extra_args=("--spec-type", "draft-simple")), CAPS)
    assert users.source == resolver.USER_ARGS and users.draft_check is not None and users.draft_check.ok


@pytest.mark.parametrize("draft_model, field", [
    (_small(vocab="other"), r"token 259 differs \('▁\w+' in the draft, '▁\w+' in the model\)"),
    (_small(n_pieces=40), r"token 299 \('▁\w+'\) exists only in the model and is text it writes"),
    (_small(n_pieces=40 + 200), "vocabulary size differs by 176 tokens"),
])
def test_explicit_draft_of_another_vocabulary_is_refused(target, tmp_path, draft_model, field):
    draft = _write(tmp_path / "draft.gguf", draft_model)
    with pytest.raises(ResolveError, match=field):
        resolve(_read(target), SpecOptions(draft=draft), CAPS)


def test_explicit_draft_type_comes_from_tensors(tmp_path):
    trunk = _mtp(tmp_path / "GLM-tiny-trunk.gguf", head=False)
    sidecar = _mtp(tmp_path / "whatever.gguf", trunk=False)
    d = resolve(_read(trunk), SpecOptions(draft=sidecar), CAPS)
    assert d.spec_type == "draft-mtp" and d.source == "explicit"


def test_engine_without_the_type_refuses_explicit(target, tmp_path):
    draft = _write(tmp_path / "d.gguf", _small())
    old = parse_help("--spec-type none,ngram-mod  types\n-md, --model-draft FNAME  draft\n")
    with pytest.raises(ResolveError, match="cannot run a draft model") as err:
        resolve(_read(target), SpecOptions(draft=draft), old)
    assert err.value.draft is not None and err.value.draft.state == decision_types.DraftState.UNSUITABLE


# ----------------------------------------------------------------- rule 5: auto
def test_auto_embedded_mtp(tmp_path):
    model = _mtp(tmp_path / "GLM-tiny.gguf")
    d = resolve(_read(model), SpecOptions(), CAPS)
    assert d.spec_type == "draft-mtp" and d.source == "auto-mtp" and d.fallback_eligible
    assert d.argv == ("--spec-type", "draft-mtp") and d.draft is None


def test_an_embedded_mtp_head_carries_the_suitable_companions_as_alternatives(tmp_path):
    """The head is chosen; the companions the search keeps ride along as whole decisions (the
    sweep measures them), each header read once, and nothing of the search is in the notes."""
    model = _mtp(tmp_path / "GLM-tiny.gguf")
    draft = _write(tmp_path / "GLM-tiny-draft.gguf", _small(name="GLM-tiny-draft"))
    _write(tmp_path / "GLM-tiny-other-draft.gguf", _small(vocab="other"))  # another vocabulary: refused
    reads: list[str] = []
    d = resolve(_read(model), SpecOptions(), CAPS, read=lambda p: reads.append(p.name) or draft_check.read_draft(p))
    assert (d.source, d.spec_type, d.draft) == ("auto-mtp", "draft-mtp", None)
    assert [str(n) for n in d.notes] == ["MTP head found in the model: speculation is on."]
    assert sorted(reads) == ["GLM-tiny-draft.gguf", "GLM-tiny-other-draft.gguf"]
    (alt,) = d.alternatives
    assert (alt.source, alt.spec_type, alt.draft) == ("auto-companion", "draft-simple", draft)
    assert alt.argv == ("--spec-type", "draft-simple", "--spec-draft-model", str(draft))
    # The drafter's identity as the records keep it: how it is used, its file, size and mtime.
    st = draft.stat()
    assert alt.drafter_key == f"draft-simple|{draft.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    assert alt.draft_info is not None
    assert d.drafter_for(alt.drafter_key) is alt and d.drafter_for(None) is d and d.drafter_for("x|y") is None
    # A broken companion is no alternative either.
    assert resolve(_read(model), SpecOptions(broken=frozenset({alt.drafter_key})), CAPS).alternatives == ()


def test_a_companion_carries_the_ones_ranked_below_it(target, tmp_path):
    _write(tmp_path / "b-draft.gguf", _small(n_layer=1))
    _write(tmp_path / "a-draft.gguf", _small(n_layer=1))
    d = resolve(_read(target), SpecOptions(), CAPS)
    assert d.draft == tmp_path / "a-draft.gguf" and "Also suitable, not chosen: b-draft.gguf." in map(str, d.notes)
    assert [a.draft for a in d.alternatives] == [tmp_path / "b-draft.gguf"]
    assert all(a.alternatives == () and a.source == "auto-companion" for a in d.alternatives)


def test_only_auto_has_alternatives(target, tmp_path):
    draft = _write(tmp_path / "a-draft.gguf", _small())
    _write(tmp_path / "b-draft.gguf", _small())
    model = _read(target)
    for options in (SpecOptions(draft=draft), SpecOptions(mtp="off"),
                    SpecOptions(extra_args=("--spec-type", "ngram-mod")),
                    SpecOptions(draft=draft, extra_args=("--spec-type", "draft-simple"))):
        assert resolve(model, options, CAPS).alternatives == (), options
    assert len(resolve(model, SpecOptions(), CAPS).alternatives) == 1


def test_auto_mtp_needs_the_head_not_just_the_key(tmp_path):
    trunk = _mtp(tmp_path / "GLM-tiny.gguf", head=False)
    d = resolve(_read(trunk), SpecOptions(), CAPS)
    assert d.spec_type is None and d.source == "none"
    assert any("does not contain it" in n for n in d.notes)


def test_auto_mtp_not_for_an_architecture_the_engine_does_not_run(tmp_path):
    dense = TinyModel(arch="glm4", n_layer=3, nextn_predict_layers=1)
    path = _write(tmp_path / "GLM4-dense.gguf", dense, tensors=_with_mtp_head(dense))
    d = resolve(_read(path), SpecOptions(), CAPS)
    assert d.source == "none"
    assert any("does not run MTP for glm4" in n for n in d.notes)


def test_auto_trunk_only_with_mtp_only_sidecar(tmp_path):
    trunk = _mtp(tmp_path / "GLM-tiny-Q8_0.gguf", head=False)
    sidecar = _mtp(tmp_path / "GLM-tiny-MTP.gguf", trunk=False)
    d = resolve(_read(trunk), SpecOptions(), CAPS)
    assert (d.spec_type, d.draft, d.source) == ("draft-mtp", sidecar, "auto-companion")


def test_mtp_sidecar_is_not_a_drafter_for_a_model_with_its_own_head(tmp_path):
    full = _mtp(tmp_path / "GLM-tiny.gguf")
    _mtp(tmp_path / "GLM-tiny-MTP.gguf", trunk=False)
    d = resolve(_read(full), SpecOptions(), CAPS)
    assert d.source == "auto-mtp" and d.draft is None


def test_auto_companion_ranking(target, tmp_path):
    _write(tmp_path / "Tiny-7B-tiny.gguf", _small(n_layer=1))      # prefix only
    _write(tmp_path / "helper-draft.gguf", _small(n_layer=2))      # draft word
    _write(tmp_path / "x-mtp-small.gguf", _small(n_layer=2))       # mtp word wins
    _write(tmp_path / "unrelated.gguf", _small())                  # no hint: ignored
    d = resolve(_read(target), SpecOptions(), CAPS)
    assert d.draft == tmp_path / "x-mtp-small.gguf" and d.source == "auto-companion"
    assert d.spec_type == "draft-simple" and d.fallback_eligible
    assert "unrelated.gguf" not in " ".join(map(str, d.notes))


def test_ranking_tie_goes_to_the_smaller_then_the_name(target, tmp_path):
    _write(tmp_path / "b-draft.gguf", _small(n_layer=1))
    _write(tmp_path / "a-draft.gguf", _small(n_layer=1))
    _write(tmp_path / "0-draft.gguf", _small(n_layer=2))
    d = resolve(_read(target), SpecOptions(), CAPS)
    assert d.draft == tmp_path / "a-draft.gguf"


def test_companion_of_another_vocabulary_is_skipped(target, tmp_path):
    _write(tmp_path / "Tiny-draft.gguf", _small(vocab="other"))
    d = resolve(_read(target), SpecOptions(), CAPS)
    assert d.source == "none"
    assert any(n.startswith("Skipped Tiny-draft.gguf: token 259 differs") for n in d.notes)


def test_companion_too_big_or_unreadable_or_projector_is_skipped(target, tmp_path):
    _write(tmp_path / "Tiny-7B-F32.gguf", TinyModel(n_layer=6, n_embd=128, n_ff=256))  # same size
    (tmp_path / "Tiny-draft.gguf").write_bytes(b"GGUF\x03\x00\x00\x00")                 # truncated
    _write(tmp_path / "mmproj-Tiny-draft.gguf", _small())
    d = resolve(_read(target), SpecOptions(), CAPS)
    assert d.source == "none"
    assert any("Skipped Tiny-draft.gguf" in n for n in d.notes)


def test_the_model_at_another_quantization_is_no_drafter(target, tmp_path):
    # The target's own geometry in Q4_0 (4.5 bits a weight against F32's 32): well under half
    # its size, the same architecture, blocks, width and parameters. A hub repository of
    # quantizations holds such files beside each other; none drafts for another.
    other = _write(tmp_path / "Tiny-7B-Q4_0.gguf", TinyModel(n_layer=6, n_embd=128, n_ff=256, dtype="Q4_0"))
    assert other.stat().st_size < target.stat().st_size / 2
    d = resolve(_read(target), SpecOptions(), CAPS)
    assert (d.source, d.draft) == ("none", None)
    # A smaller model of the family beside it still drafts: only the model's own copy is out.
    small = _write(tmp_path / "Tiny-1B-Q8_0.gguf", _small())
    d = resolve(_read(target), SpecOptions(), CAPS)
    assert (d.source, d.draft) == ("auto-companion", small)


def test_shards_of_the_model_are_never_companions(tmp_path):
    files = write_tiny_model(tmp_path / "Tiny-draft.gguf", TinyModel(n_layer=6, n_embd=128), split_max_tensors=8)
    assert len(files) >= 3
    d = resolve(_read(files[0]), SpecOptions(), CAPS)
    assert d.source == "none" and d.draft is None


def test_broken_drafter_is_skipped_saying_so(target, tmp_path):
    draft = _write(tmp_path / "Tiny-draft.gguf", _small())
    key = resolver.drafter_key(draft, "draft-simple")
    d = resolve(_read(target), SpecOptions(broken=frozenset({key})), CAPS)
    assert d.source == "none" and d.left_out == (key,)
    assert any("made this engine fail before" in n for n in d.notes)


def test_broken_embedded_mtp_is_skipped(tmp_path):
    model = _mtp(tmp_path / "GLM-tiny.gguf")
    key = resolver.drafter_key(model, "draft-mtp")
    d = resolve(_read(model), SpecOptions(broken=frozenset({key})), CAPS)
    assert d.source == "none" and any("fail before" in n for n in d.notes) and d.left_out == (key,)


def test_ngram_only_when_asked_and_nothing_else(target):
    assert resolve(_read(target), SpecOptions(), CAPS).source == "none"
    d = resolve(_read(target), SpecOptions(ngram_when_no_drafter=True), CAPS)
    assert (d.source, d.spec_type, d.fallback_eligible) == ("auto-ngram", "ngram-mod", True)
    # A crashed n-gram start is remembered by the model's identity, and then left out.
    again = resolve(_read(target), SpecOptions(ngram_when_no_drafter=True, broken={d.drafter_key}), CAPS)
    assert again.source == "none" and any("fail before" in n for n in again.notes)


# ----------------------------------------------------------------- rule 6: split-mode tensor
def test_split_mode_tensor_warns_but_does_not_block(target, tmp_path):
    _write(tmp_path / "Tiny-draft.gguf", _small())
    for args in (("-sm", "tensor"), ("--split-mode=tensor",)):
        d = resolve(_read(target), SpecOptions(extra_args=args), CAPS)
        assert d.spec_type == "draft-simple" and d.warnings
    plain = resolve(_read(target), SpecOptions(extra_args=("-sm", "layer")), CAPS)
    assert not plain.warnings


@pytest.mark.parametrize("name, prefix", [
    ("Qwen3-8B-Q4_K_M.gguf", "Qwen3-8B"),
    ("Qwen3-8B.IQ3_XXS.gguf", "Qwen3-8B"),
    ("GLM-4.5-Air-BF16-00001-of-00003.gguf", "GLM-4.5-Air"),
    ("llama-F16.gguf", "llama"),
    ("model.gguf", "model"),
])
def test_family_prefix(name, prefix):
    assert companions.family_prefix(Path(name)) == prefix


def test_explicit_mtp_head_of_another_architecture_is_refused(target, tmp_path):
    """Same vocabulary, but an MTP head only drafts for the model it was trained with."""
    head = _mtp(tmp_path / "GLM-tiny-MTP.gguf", trunk=False)
    with pytest.raises(ResolveError, match="MTP head of a glm4moe model") as err:
        resolve(_read(target), SpecOptions(draft=head), CAPS)
    assert err.value.field == "draft"


def test_family_name_pairs_a_publishers_small_model_with_its_big_one():
    """Qwen publishes its 0.5B beside the 7B under its own name, not as a 'draft'."""
    from draftwise.core.speculation.companions import family_name

    assert family_name(Path("qwen2.5-0.5b-instruct-q8_0.gguf")) == "qwen2.5"
    assert family_name(Path("Qwen2.5-7B-Instruct-Q4_K_M-00001-of-00002.gguf")) == "qwen2.5"
    assert family_name(Path("gemma-3-270m-it-Q8_0.gguf")) == family_name(Path("gemma-3-4b-it-Q4_K_M.gguf"))
    assert family_name(Path("Qwen3-8B-Q4_K_M.gguf")) != family_name(Path("qwen2.5-0.5b-instruct-q8_0.gguf"))
    assert family_name(Path("tiny-llama-F32.gguf")) == ""
